/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util/cxl.h - the CXL type-3 memory devices of the machine (through
 * libcxl): memdevs, their health, the CXL regions they back and the
 * decoders and host bridges on the way.  util/ndctl.c uses it to say which
 * persistent memory namespaces are CXL-backed; daxtrackctl prints it.
 *
 * dt_cxl_scan() copies what libcxl reports into plain structs; no libcxl
 * type leaves cxl.c.  Without libcxl at build time (cxl-none.c) a scan is
 * empty, @available is false and @note says why.  A machine without CXL
 * devices has zero memdevs, which is not an error.
 */
#ifndef DT_UTIL_CXL_H
#define DT_UTIL_CXL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DT_CXL_NAME_MAX		32
#define DT_CXL_MAX_WAYS		16	/* interleave ways the kernel allows */

/* Health status bits (CXL 2.0 Get Health Info, byte 0). */
#define DT_CXL_HEALTH_MAINTENANCE	(1U << 0)	/* maintenance needed */
#define DT_CXL_HEALTH_DEGRADED		(1U << 1)	/* performance degraded */
#define DT_CXL_HEALTH_REPLACE		(1U << 2)	/* hardware replacement needed */

/* Media status (byte 1) and the additional status (byte 2), as bits. */
#define DT_CXL_MEDIA_NOT_READY		(1U << 0)
#define DT_CXL_MEDIA_PERSISTENCE_LOST	(1U << 1)
#define DT_CXL_MEDIA_DATA_LOST		(1U << 2)
#define DT_CXL_MEDIA_LOSS_IMMINENT	(1U << 3)	/* persistence or data loss imminent */
#define DT_CXL_LIFE_WARNING		(1U << 4)
#define DT_CXL_LIFE_CRITICAL		(1U << 5)
#define DT_CXL_TEMP_WARNING		(1U << 6)
#define DT_CXL_TEMP_CRITICAL		(1U << 7)

#define DT_CXL_UNKNOWN		(-1)	/* life_used, temperature: not reported */

/**
 * struct dt_cxl_health - A memdev's Get Health Info answer.
 * @err: 0 when the fields are valid; else why there are none (negative
 *	 errno: -ENOTTY the device does not implement the command, -EACCES
 *	 no permission for the memdev's mailbox, -EOPNOTSUPP built without
 *	 libcxl, -EIO a mailbox error).
 * @health: DT_CXL_HEALTH_* bits; 0 is healthy.
 * @media: DT_CXL_MEDIA_*, DT_CXL_LIFE_*, DT_CXL_TEMP_* bits; 0 is normal.
 * @life_used: Percent of the rated life used, or DT_CXL_UNKNOWN.
 * @temperature: Degrees Celsius, or DT_CXL_UNKNOWN.
 * @dirty_shutdowns: Shutdowns without the device's persistence flush
 *		     (Global Persistent Flush) completing, over its life.
 * @pmem_errors: Corrected persistent memory errors.
 */
struct dt_cxl_health {
	int err;
	uint32_t health;
	uint32_t media;
	int life_used;
	int temperature;
	uint32_t dirty_shutdowns;
	uint32_t pmem_errors;
};

/**
 * struct dt_cxl_memdev - One CXL memory device.
 * @name: "mem0".
 * @host: Its PCI device, "0000:0d:00.0".
 * @firmware: Firmware revision, "" when the device reports none.
 * @host_bridge: The host bridge it hangs under ("pci0000:0c"), "" unknown.
 * @port: The CXL port of that host bridge ("port1"), "" unknown.
 * @region: The CXL region it backs ("region2"), "" none.
 * @decoder: Its endpoint decoder of @region ("decoder5.0"), "" none.
 * @serial: Device serial number.
 * @pmem_size: Persistent capacity, bytes.
 * @position: Its position in @region's interleave, -1 if none.
 * @health: Filled only when the scan asked for it.
 */
struct dt_cxl_memdev {
	char name[DT_CXL_NAME_MAX];
	char host[DT_CXL_NAME_MAX];
	char firmware[DT_CXL_NAME_MAX];
	char host_bridge[DT_CXL_NAME_MAX];
	char port[DT_CXL_NAME_MAX];
	char region[DT_CXL_NAME_MAX];
	char decoder[DT_CXL_NAME_MAX];
	uint64_t serial;
	uint64_t pmem_size;
	int position;
	struct dt_cxl_health health;
};

/**
 * struct dt_cxl_region - One CXL region.
 * @name: "region2".
 * @decoder: The root decoder (CXL window) it lies in, "decoder0.0".
 * @start: Host physical address (the nvdimm region on it starts there).
 * @size: Bytes.
 * @ways: Interleave ways.
 * @granularity: Interleave granularity, bytes.
 * @pmem: A persistent memory region (else RAM).
 * @committed: Its decoders are committed (the region decodes).
 * @nmemdevs: Entries of @memdev.
 * @memdev: Indices in the scan's memdevs, in interleave position order.
 */
struct dt_cxl_region {
	char name[DT_CXL_NAME_MAX];
	char decoder[DT_CXL_NAME_MAX];
	uint64_t start;
	uint64_t size;
	unsigned ways;
	unsigned granularity;
	bool pmem;
	bool committed;
	unsigned nmemdevs;
	unsigned memdev[DT_CXL_MAX_WAYS];
};

/**
 * struct dt_cxl - The result of a scan.
 * @available: Built with libcxl and libcxl could be used.
 * @no_libcxl: Built without libcxl.
 * @nmemdevs: Entries of @memdevs, in memdev id order.
 * @nregions: Entries of @regions.
 * @note: A line for the log: "2 CXL memdevs, 2 CXL regions", "no CXL
 *	  memdevs found", "built without libcxl: CXL devices not described".
 */
struct dt_cxl {
	bool available;
	bool no_libcxl;
	unsigned nmemdevs;
	struct dt_cxl_memdev *memdevs;
	unsigned nregions;
	struct dt_cxl_region *regions;
	char note[128];
};

/**
 * dt_cxl_scan() - Enumerate memdevs and regions.
 * @out: Receives the scan; free it with dt_cxl_free().
 * @health: Also send each memdev Get Health Info (a mailbox command on
 *	    /dev/cxl/memN: root, or read-write access to it).
 *
 * libcxl failing (no cxl bus, cxl_new() failing) is not an error: the scan
 * is empty and @note says why.
 *
 * Context: Any thread.  Allocates; reads sysfs; with @health, ioctls.
 * Return: 0, or -ENOMEM.
 */
int dt_cxl_scan(struct dt_cxl **out, bool health);

/**
 * dt_cxl_free() - Free a scan.
 * @cx: The scan, or NULL.
 */
void dt_cxl_free(struct dt_cxl *cx);

/**
 * dt_cxl_region_at() - The CXL region holding a host physical address.
 * @cx: The scan, or NULL.
 * @phys: The address (an nvdimm region's start).
 *
 * Return: Its index in @cx->regions, or -ENOENT.
 */
int dt_cxl_region_at(const struct dt_cxl *cx, uint64_t phys);

/**
 * dt_cxl_fmt_memdevs() - The memdevs of a region, "mem0" or "mem0,mem1".
 * @cx: The scan.
 * @region: Index in @cx->regions.
 * @buf: Receives the text ("" for none).
 * @len: Size of @buf.
 *
 * Return: @buf.
 */
char *dt_cxl_fmt_memdevs(const struct dt_cxl *cx, unsigned region, char *buf, size_t len);

/**
 * dt_cxl_fmt_health() - A memdev's health in one line.
 * @h: The health.
 * @buf: Receives "ok, media normal, life used 3%, 25 C, dirty shutdowns 0"
 *	 or "not reported: <reason>".
 * @len: Size of @buf.
 *
 * Return: @buf.
 */
char *dt_cxl_fmt_health(const struct dt_cxl_health *h, char *buf, size_t len);

/**
 * dt_cxl_health_status() - The health status bits as words.
 * @health: DT_CXL_HEALTH_* bits.
 *
 * Return: "ok", "maintenance-needed", "performance-degraded",
 * "replacement-needed" (the most severe bit set); static.
 */
const char *dt_cxl_health_status(uint32_t health);

/**
 * dt_cxl_media_status() - The media status bits as words.
 * @media: DT_CXL_MEDIA_* bits (the life and temperature bits are ignored).
 *
 * Return: "normal", "not-ready", "persistence-lost", "data-lost",
 * "loss-imminent" (the most severe); static.
 */
const char *dt_cxl_media_status(uint32_t media);

/**
 * dt_cxl_health_reason() - Why a memdev's health is not known.
 * @err: dt_cxl_health.err (negative).
 *
 * Return: A short phrase; static.
 */
const char *dt_cxl_health_reason(int err);

#endif /* DT_UTIL_CXL_H */
