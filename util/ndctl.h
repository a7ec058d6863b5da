/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util/ndctl.h - the persistent memory namespaces of the machine (through
 * libndctl), NVDIMM- or CXL-backed, and which of them a region lives on.
 * Shared by daxtrackd (region matching, deep flushes, NAMESPACES) and
 * daxtrackctl (namespaces, regions, memdevs), so that both report the same.
 *
 * dt_ndctl_scan() copies what libndctl reports into plain structs; no
 * libndctl type leaves ndctl.c.  A machine without persistent memory has
 * zero namespaces, which is not an error.  A namespace on the nvdimm bus
 * whose provider is "CXL" lies on a CXL region: the scan includes a libcxl
 * scan (util/cxl.h) and links each such namespace to its CXL region by the
 * host physical address where the nvdimm region starts.
 */
#ifndef DT_UTIL_NDCTL_H
#define DT_UTIL_NDCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <daxtrack/proto.h>

#include "cxl.h"

enum dt_ns_mode { DT_NS_MODE_FSDAX, DT_NS_MODE_DEVDAX, DT_NS_MODE_RAW, DT_NS_MODE_SECTOR, DT_NS_MODE_UNKNOWN };

/* A bad range in bytes, relative to the start of a device or a region. */
struct dt_badblock {
	uint64_t offset;
	uint64_t len;
};

/**
 * struct dt_namespace - One namespace.
 * @bus: The bus device ("ndbus0") and @bus_provider ("ACPI.NFIT").
 * @region: The region device ("region0").
 * @name: The namespace device ("namespace0.0").
 * @mode: fsdax, devdax, raw, sector or unknown.
 * @size: Bytes usable through the device (@devname).
 * @align: The device's mapping alignment (pfn/dax align), 0 if unknown.
 * @numa_node: NUMA node, -1 if unknown.
 * @devname: "pmem0" (fsdax/raw), "pmem0s" (sector), "dax1.0" (devdax), or
 *	     "" when the namespace is disabled.
 * @devt: Device number of /dev/@devname (0 if unknown).
 * @is_chr: @devt is a character device (devdax); else a block device.
 * @deep_flush: Its region has a deep_flush control (flush hint addresses).
 * @cxl: Its bus is the CXL nvdimm bus (provider "CXL").
 * @region_start: Host physical address of its nvdimm region.
 * @cxl_region: Index in the scan's cxl->regions of the CXL region under it,
 *		-1 (not CXL-backed, or libcxl does not show it).
 * @enabled: The namespace is active (it, or the pfn, dax or btt device on
 *	     it, is enabled).
 * @nbad: Entries of @bad.
 * @bad: Bad byte ranges relative to offset 0 of /dev/@devname, sorted: the
 *	  region's (libndctl) and, for a block device, its own badblocks file's
 *	  (which may overlap them).
 */
struct dt_namespace {
	char bus[32];
	char bus_provider[64];
	char region[32];
	char name[32];
	enum dt_ns_mode mode;
	uint64_t size;
	uint64_t align;
	int numa_node;
	char devname[32];
	dev_t devt;
	bool is_chr;
	bool deep_flush;
	bool cxl;
	uint64_t region_start;
	int cxl_region;
	bool enabled;
	unsigned nbad;
	struct dt_badblock *bad;
};

struct dt_ndctl_private;

/**
 * struct dt_ndctl - The result of a scan.
 * @nns: Entries of @ns.
 * @ns: The namespaces, in bus, region, namespace order.
 * @ncxl: Namespaces of @ns that are CXL-backed.
 * @note: A line for the log: "3 persistent memory namespaces found (1 on
 *	  CXL)", "no persistent memory namespaces found", or why libndctl
 *	  could not be used.
 * @cxl: The libcxl scan, with each memdev's health; never NULL after a
 *	 successful dt_ndctl_scan().
 * @priv: libndctl's context and regions (for deep flushes).
 */
struct dt_ndctl {
	unsigned nns;
	struct dt_namespace *ns;
	unsigned ncxl;
	char note[256];
	struct dt_cxl *cxl;
	struct dt_ndctl_private *priv;
};

/**
 * dt_ndctl_scan() - Enumerate buses, regions and namespaces, and the CXL
 * memdevs and regions with their health.
 * @out: Receives the scan; free it with dt_ndctl_free().
 *
 * A failure of libndctl itself (no sysfs, ndctl_new() failing) is not an
 * error either: the scan has no namespaces and @note says why.
 *
 * Context: Any thread.  Allocates; reads sysfs; sends each CXL memdev Get
 * Health Info.
 * Return: 0, or -ENOMEM.
 */
int dt_ndctl_scan(struct dt_ndctl **out);

/**
 * dt_ndctl_free() - Free a scan.
 * @nd: The scan, or NULL.
 */
void dt_ndctl_free(struct dt_ndctl *nd);

/**
 * dt_ndctl_match() - The namespace a region's memory lives on.
 * @nd: The scan.
 * @is_chr: The region is a character device (devdax) mapped whole.
 * @dev: For devdax, st_rdev of the device; for a file, st_dev of the file
 *	 (the block device, or a partition of it, under the file system).
 *
 * Return: The namespace's index in @nd->ns, or -ENOENT (no namespace: a
 * file on a disk or tmpfs, a file system on device-mapper, ...).
 */
int dt_ndctl_match(const struct dt_ndctl *nd, bool is_chr, dev_t dev);

/**
 * dt_ndctl_deep_flush() - Flush the write-pending queues of a namespace's
 * region (ndctl_region_deep_flush()).
 * @nd: The scan.
 * @index: The namespace's index.
 *
 * Context: Any thread; one write to sysfs.
 * Return: 0; -ENOENT for a bad @index; -EOPNOTSUPP when the region has no
 * deep_flush control (e.g. emulated NVDIMMs without flush hints); libndctl's
 * negative errno.
 */
int dt_ndctl_deep_flush(struct dt_ndctl *nd, unsigned index);

/**
 * dt_ns_wire_mode() - A namespace mode as the protocol says it.
 * @mode: The mode.
 *
 * Return: Its DT_NS_* value; dt_proto_ns_mode_name() names it.
 */
uint8_t dt_ns_wire_mode(enum dt_ns_mode mode);

/**
 * dt_ns_backing() - What a namespace's memory is.
 * @ns: The namespace.
 *
 * Return: "CXL" or "NVDIMM"; static.
 */
const char *dt_ns_backing(const struct dt_namespace *ns);

/**
 * dt_ndctl_fmt_cxl() - A namespace's CXL region in a few words.
 * @nd: The scan.
 * @ns: One of its namespaces.
 * @buf: Receives "CXL region2 on mem0 (decoder0.0, 1 way)", "CXL" when
 *	 libcxl does not show the region, or "" for an NVDIMM namespace.
 * @len: Size of @buf.
 *
 * Return: @buf.
 */
char *dt_ndctl_fmt_cxl(const struct dt_ndctl *nd, const struct dt_namespace *ns, char *buf,
		       size_t len);

/**
 * dt_ndctl_nd_region_of() - The nvdimm region on a CXL region.
 * @nd: A scan, or NULL.
 * @cxl_region: The CXL region's name ("region2"), or "".
 *
 * Return: The nvdimm region's name (of one of its namespaces), or "".
 */
const char *dt_ndctl_nd_region_of(const struct dt_ndctl *nd, const char *cxl_region);

/**
 * dt_ndctl_cxl_memdev() - A CXL memdev as the protocol's record.
 * @nd: The namespace scan that names the nvdimm region on its CXL region,
 *	or NULL.
 * @cx: The CXL scan holding the memdev (may be @nd->cxl or a fresher one).
 * @i: Index in @cx->memdevs.
 * @out: Filled in.
 */
void dt_ndctl_cxl_memdev(const struct dt_ndctl *nd, const struct dt_cxl *cx, unsigned i,
			 struct dt_proto_cxl_memdev *out);

#endif /* DT_UTIL_NDCTL_H */
