/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/cxl-view.h - the CXL view of daxtrackctl: the memdevs and
 * the regions on CXL memory, from the daemon (CXL) or found locally
 * (libcxl, --local), and what `namespaces`, `regions`, `stats` and
 * `namespaces --cxl` print of them.
 */
#ifndef DAXTRACKCTL_CXL_H
#define DAXTRACKCTL_CXL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <daxtrack/client.h>

/**
 * struct ctl_cxl - What is known of CXL.
 * @known: The source describes CXL devices (the daemon answered CXL and has
 *	   libcxl; or, locally, libcxl works).  Else @note says why.
 * @note: Why not, or the local scan's note.
 * @answered: The daemon answered CXL (its region records, @d.regions, are
 *	      valid even without libcxl); false locally.
 * @d: The memdevs, and the daemon's regions on CXL memory (none locally).
 */
struct ctl_cxl {
	bool known;
	bool answered;
	char note[160];
	struct dt_client_cxl d;
};

/* Ask the daemon (an older one leaves @out unknown); 0 or a negative errno. */
int ctl_cxl_daemon(struct dt_client *c, struct ctl_cxl *out);

/* Scan locally with libcxl and libndctl (local.c); 0 or -ENOMEM. */
int ctl_cxl_local(struct ctl_cxl *out);

void ctl_cxl_free(struct ctl_cxl *cx);

/**
 * ctl_cxl_backing() - What an nvdimm region lies on.
 * @cx: The CXL view.
 * @nd_region: The nvdimm region ("region2"); "" for none.
 * @cxl_region: Receives the CXL region ("region2"), or "" (@len bytes).
 * @memdevs: Receives its memdevs ("mem0,mem1"), or "" (@len bytes).
 * @len: Size of both buffers.
 *
 * Return: "CXL", "NVDIMM", or "-" (unknown: no namespace, or no CXL view).
 */
const char *ctl_cxl_backing(const struct ctl_cxl *cx, const char *nd_region, char *cxl_region,
			    char *memdevs, size_t len);

/* The daemon's CXL record of region @id, or NULL. */
const struct dt_proto_cxl_region *ctl_cxl_region(const struct ctl_cxl *cx, uint32_t id);

/* The worst health status bit of DT_CXL_ST_* as a word: "ok", ... */
const char *ctl_cxl_health_status(uint32_t status);

/* The worst media status bit of DT_CXL_ST_* as a word: "normal", ... */
const char *ctl_cxl_media_status(uint32_t status);

/* One line of a memdev's health: "ok, media normal, ..." or "not reported: ...". */
char *ctl_cxl_health_text(const struct dt_proto_cxl_memdev *m, char *buf, size_t len);

/* `namespaces --cxl`: the memdevs as a table or JSON; an exit status. */
int ctl_cxl_print(const struct ctl_cxl *cx, const char *source, bool json);

#endif /* DAXTRACKCTL_CXL_H */
