/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * realdax_cxl.h - the CXL checks of test_realdax_daemon, run when it serves
 * the CXL fsdax file and devdax device of `dax-vm/run --cxl`
 * (DT_REALDAX_CXL=1): the daemon's CXL answer against the guest's setup
 * (DAX_VM_CXL_* variables), and its DEEP fsync counters.
 */
#ifndef REALDAX_CXL_H
#define REALDAX_CXL_H

#include <stdbool.h>
#include <stdint.h>

#include <daxtrack/client.h>

/*
 * The daemon's CXL answer: the memdevs of both regions' CXL regions, tied to
 * the nvdimm regions REGIONS named (@fs, @dx), with their health or why not;
 * both regions listed as on CXL (also after a rescan).  @log: the daemon's
 * log, which names the CXL region, memdev and health of each region.
 */
void realdax_check_cxl(struct dt_client *c, const struct dt_proto_region *fs,
		       const struct dt_proto_region *dx, const char *log);

/* The deep flushes of a region: [0] deep_flush_cxl (CXL), [1] _pmem, [2] _ndctl, [3] _failed. */
bool realdax_deep_counts(struct dt_client *c, uint32_t id, uint64_t out[4]);

#endif /* REALDAX_CXL_H */
