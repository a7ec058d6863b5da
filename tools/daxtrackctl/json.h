/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/json.h - every JSON value daxtrackctl prints, built with
 * json-c.  The schema is the one of daxtrackctl(8), "JSON OUTPUT": fields
 * are only ever added here, never renamed or retyped.
 *
 * Builders return a new object (the caller owns one reference) or NULL when
 * out of memory; ctl_json_print() prints one and drops the reference.
 */
#ifndef DAXTRACKCTL_JSON_H
#define DAXTRACKCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include <daxtrack/proto.h>

struct dt_client_stats;
struct ctl_cxl;

/* A region object. */
struct json_object *ctl_json_region(const struct dt_proto_region *r);

/* A configured region the daemon does not serve: name, path, "failed": true, error, reason. */
struct json_object *ctl_json_failed(const struct dt_proto_failed *f);

/* An entry object. */
struct json_object *ctl_json_entry(const struct dt_proto_entry *e);

/* A namespace object. */
struct json_object *ctl_json_namespace(const struct dt_proto_namespace *ns);

/* {"source", "ndctl", "namespaces": []}: the namespaces are added by the caller. */
struct json_object *ctl_json_namespaces(const char *source, bool ndctl);

/*
 * Add to @o what the nvdimm region @nd_region lies on: "backing" ("CXL",
 * "NVDIMM" or null: unknown), "cxl_region" (or null) and "memdevs" (an array).
 */
void ctl_json_add_backing(struct json_object *o, const struct ctl_cxl *cx, const char *nd_region);

/* {"source", "cxl", "note", "memdevs": []}: the memdevs are added by the caller. */
struct json_object *ctl_json_cxl(const char *source, bool known, const char *note);

/* A CXL memdev object, with its "health" object (or null and "health_error"). */
struct json_object *ctl_json_cxl_memdev(const struct dt_proto_cxl_memdev *m);

/**
 * ctl_json_status() - The status object.
 * @hello: The daemon's HELLO reply.
 * @socket: The socket connected to.
 * @regions: The regions.
 * @nregions: How many.
 * @stats: STATS of every region.
 */
struct json_object *ctl_json_status(const struct dt_proto_hello_rep *hello, const char *socket,
				    const struct dt_proto_region *regions, uint32_t nregions,
				    const struct dt_client_stats *stats);

/* The stats object; @cx adds each region's deep_flush_cxl. */
struct json_object *ctl_json_stats(const struct dt_client_stats *stats, const struct ctl_cxl *cx);

/* The lookup object; @e NULL when no entry covers @offset. */
struct json_object *ctl_json_lookup(const char *region, uint64_t offset,
				    const struct dt_proto_entry *e);

/* The dirty object: the range marked, and the dirty entries in it after. */
struct json_object *ctl_json_dirty(const char *region, uint64_t offset, uint64_t length,
				   uint64_t dirty_entries, uint64_t dirty_bytes);

/*
 * The fsync object; @bad (@rep->count ranges, at most @nbad of them listed),
 * NULL after a success: an fsync answered -EIO for bad blocks also has
 * "error": "EIO", "bad_ranges" [{"offset", "length"}] and "bad_more".
 */
struct json_object *ctl_json_fsync(const char *region, uint64_t offset, uint64_t length,
				   bool deep, const struct dt_proto_fsync_rep *rep,
				   const struct dt_proto_range *bad, uint32_t nbad);

/* The dump object. */
struct json_object *ctl_json_dump(const char *region, const char *text, size_t len);

/* The version object; @hello NULL when the daemon does not answer. */
struct json_object *ctl_json_version(const char *version, const struct dt_proto_hello_rep *hello);

/**
 * struct ctl_rates - What watch shows of one region at one refresh.
 */
struct ctl_rates {
	const char *name;
	uint64_t dirty_entries;
	uint64_t dirty_bytes;
	double fsyncs_per_second;
	double flushed_bytes_per_second;
	double faults_per_second;
};

/* One watch refresh. */
struct json_object *ctl_json_watch(uint64_t time_ms, uint64_t interval_ms,
				   const struct ctl_rates *rates, uint32_t count);

/**
 * ctl_json_print() - Print a value and a newline, and drop the reference.
 * @o: The value; NULL (out of memory) prints an error.
 * @pretty: Indent it over several lines; otherwise print it on one line.
 *
 * Return: 0, or CTL_EXIT_FAIL after a message.
 */
int ctl_json_print(struct json_object *o, bool pretty);

#endif /* DAXTRACKCTL_JSON_H */
