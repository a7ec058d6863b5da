// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/json.c - the JSON values of daxtrackctl, built with
 * json-c.  See json.h and daxtrackctl(8).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "connect.h"
#include "ctl.h"
#include "cxl-view.h"
#include "json.h"
#include "util.h"

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_i64(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static void add_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

/* An empty string is null: "no such thing". */
static void add_str_or_null(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s[0] ? json_object_new_string(s) : NULL);
}

static void add_bool(struct json_object *o, const char *key, bool b)
{
	json_object_object_add(o, key, json_object_new_boolean(b));
}

static void add_double(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

static struct json_object *names_array(unsigned bits, const char *const *names,
				       const unsigned *masks)
{
	struct json_object *a = json_object_new_array();
	int i;

	if (!a)
		return NULL;
	for (i = 0; names[i]; i++)
		if (bits & masks[i])
			json_object_array_add(a, json_object_new_string(names[i]));
	return a;
}

struct json_object *ctl_json_region(const struct dt_proto_region *r)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "name", r->name);
	add_str(o, "path", r->path);
	add_str(o, "type", ctl_region_type(r->flags));
	add_u64(o, "size", r->size);
	add_u64(o, "span", r->span);
	add_bool(o, "grows", r->flags & DT_REGION_GROWS);
	add_bool(o, "pmem", r->flags & DT_REGION_PMEM);
	add_bool(o, "eadr", r->flags & DT_REGION_EADR);
	add_bool(o, "pmd", r->flags & DT_REGION_PMD);
	add_str(o, "flush", dt_proto_flush_name(r->flush));
	add_bool(o, "default", r->flags & DT_REGION_DEFAULT);
	add_i64(o, "numa_node", r->numa_node);
	add_u64(o, "badblocks", r->badblocks);
	add_u64(o, "bad_bytes", r->bad_bytes);
	add_str(o, "ns_match", dt_proto_ns_match_name(r->ns_match));
	add_str_or_null(o, "namespace", r->ns_name);
	add_str_or_null(o, "ns_region", r->ns_region);
	add_str_or_null(o, "ns_device", r->ns_device);
	json_object_object_add(o, "ns_mode", r->ns_match >= DT_NS_MATCH_DAX ?
				json_object_new_string(dt_proto_ns_mode_name(r->ns_mode)) : NULL);
	add_u64(o, "dev_major", r->dev_major);
	add_u64(o, "dev_minor", r->dev_minor);
	add_bool(o, "sparse", r->flags & DT_REGION_SPARSE);
	add_bool(o, "failed", false);
	return o;
}

struct json_object *ctl_json_failed(const struct dt_proto_failed *f)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "name", f->name);
	add_str(o, "path", f->path);
	add_bool(o, "failed", true);
	add_str(o, "error", strerrorname_np(-f->error) ? strerrorname_np(-f->error) : "?");
	add_str(o, "reason", f->reason);
	return o;
}

struct json_object *ctl_json_entry(const struct dt_proto_entry *e)
{
	struct json_object *o = json_object_new_object();
	bool no_sector = e->flags & (DT_PROTO_ENTRY_ZERO | DT_PROTO_ENTRY_EMPTY);

	if (!o)
		return NULL;
	add_u64(o, "offset", e->base);
	add_u64(o, "size", (uint64_t)DT_PROTO_PAGE_SIZE << e->order);
	add_u64(o, "order", e->order);
	json_object_object_add(o, "sector", no_sector ? NULL : json_object_new_uint64(e->sector));
	json_object_object_add(o, "flags", names_array(e->flags, ctl_entry_flag_names,
							ctl_entry_flag_bits));
	json_object_object_add(o, "tags", names_array(e->tags, ctl_tag_names, ctl_tag_bits));
	add_bool(o, "locked", e->flags & DT_PROTO_ENTRY_LOCKED);
	return o;
}

struct json_object *ctl_json_namespace(const struct dt_proto_namespace *ns)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "bus", ns->bus);
	add_str(o, "region", ns->region);
	add_str(o, "dev", ns->name);
	add_str(o, "mode", dt_proto_ns_mode_name(ns->mode));
	add_u64(o, "size", ns->size);
	add_u64(o, "align", ns->align);
	add_i64(o, "numa_node", ns->numa_node);
	if (ns->blockdev[0])
		add_str(o, "blockdev", ns->blockdev);
	if (ns->chardev[0])
		add_str(o, "chardev", ns->chardev);
	add_u64(o, "badblock_count", ns->badblocks);
	return o;
}

struct json_object *ctl_json_namespaces(const char *source, bool ndctl)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "source", source);
	add_bool(o, "ndctl", ndctl);
	json_object_object_add(o, "namespaces", json_object_new_array());
	return o;
}

void ctl_json_add_backing(struct json_object *o, const struct ctl_cxl *cx, const char *nd_region)
{
	char cxl_region[DT_PROTO_DEVNAME_MAX], memdevs[256], *save = NULL, *m;
	const char *backing = ctl_cxl_backing(cx, nd_region, cxl_region, memdevs, sizeof(memdevs));
	struct json_object *a = json_object_new_array();

	json_object_object_add(o, "backing", strcmp(backing, "-") ?
				json_object_new_string(backing) : NULL);
	add_str_or_null(o, "cxl_region", cxl_region);
	for (m = strtok_r(memdevs, ",", &save); a && m; m = strtok_r(NULL, ",", &save))
		json_object_array_add(a, json_object_new_string(m));
	json_object_object_add(o, "memdevs", a);
}

struct json_object *ctl_json_cxl(const char *source, bool known, const char *note)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "source", source);
	add_bool(o, "cxl", known);
	add_str_or_null(o, "note", known ? "" : note);
	json_object_object_add(o, "memdevs", json_object_new_array());
	return o;
}

static struct json_object *cxl_health(const struct dt_proto_cxl_memdev *m)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "health_status", ctl_cxl_health_status(m->status));
	add_str(o, "media_status", ctl_cxl_media_status(m->status));
	add_bool(o, "maintenance_needed", m->status & DT_CXL_ST_MAINTENANCE);
	add_bool(o, "performance_degraded", m->status & DT_CXL_ST_DEGRADED);
	add_bool(o, "hw_replacement_needed", m->status & DT_CXL_ST_REPLACE);
	add_bool(o, "media_not_ready", m->status & DT_CXL_ST_NOT_READY);
	add_bool(o, "media_persistence_lost", m->status & DT_CXL_ST_PERSISTENCE_LOST);
	add_bool(o, "media_data_lost", m->status & DT_CXL_ST_DATA_LOST);
	add_bool(o, "media_loss_imminent", m->status & DT_CXL_ST_LOSS_IMMINENT);
	add_bool(o, "life_used_warning", m->status & DT_CXL_ST_LIFE_WARNING);
	add_bool(o, "life_used_critical", m->status & DT_CXL_ST_LIFE_CRITICAL);
	add_bool(o, "temperature_warning", m->status & DT_CXL_ST_TEMP_WARNING);
	add_bool(o, "temperature_critical", m->status & DT_CXL_ST_TEMP_CRITICAL);
	json_object_object_add(o, "life_used_percent", m->life_used >= 0 ?
				json_object_new_int(m->life_used) : NULL);
	json_object_object_add(o, "temperature", m->temperature != -1 ?
				json_object_new_int(m->temperature) : NULL);
	add_u64(o, "dirty_shutdowns", m->dirty_shutdowns);
	add_u64(o, "pmem_errors", m->pmem_errors);
	return o;
}

struct json_object *ctl_json_cxl_memdev(const struct dt_proto_cxl_memdev *m)
{
	struct json_object *o = json_object_new_object();
	char serial[CTL_FMT_LEN];

	if (!o)
		return NULL;
	snprintf(serial, sizeof(serial), "0x%" PRIx64, m->serial);
	add_str(o, "memdev", m->name);
	add_str(o, "serial", serial);
	add_str_or_null(o, "firmware_version", m->firmware);
	add_str_or_null(o, "host", m->host);
	add_str_or_null(o, "host_bridge", m->host_bridge);
	add_u64(o, "pmem_size", m->pmem_size);
	add_str_or_null(o, "region", m->region);
	add_str_or_null(o, "decoder", m->decoder);
	add_str_or_null(o, "root_decoder", m->root_decoder);
	add_str_or_null(o, "nd_region", m->nd_region);
	json_object_object_add(o, "interleave_ways", m->ways ?
				json_object_new_int64(m->ways) : NULL);
	json_object_object_add(o, "interleave_granularity", m->ways ?
				json_object_new_int64(m->granularity) : NULL);
	json_object_object_add(o, "position", m->position >= 0 ?
				json_object_new_int(m->position) : NULL);
	json_object_object_add(o, "health", m->health_err ? NULL : cxl_health(m));
	if (m->health_err)
		add_str(o, "health_error", dt_proto_status_name(m->health_err));
	return o;
}

/* The region's file shrunk under the daemon (@s NULL: none known, 0). */
static void add_truncation(struct json_object *o, const struct dt_proto_region_stats *s)
{
	add_u64(o, "truncations", s ? s->truncations : 0);
	add_u64(o, "truncated_dirty_bytes", s ? s->truncated_dirty * DT_PROTO_PAGE_SIZE : 0);
	add_u64(o, "sigbus", s ? s->sigbus : 0);
}

static struct json_object *status_totals(const struct dt_proto_region *regions, uint32_t n,
					 const struct dt_client_stats *stats)
{
	struct json_object *o = json_object_new_object();
	uint64_t size = 0, entries = 0, dirty = 0, dirty_bytes = 0;
	uint32_t i;

	if (!o)
		return NULL;
	for (i = 0; i < n; i++)
		size += regions[i].size;
	for (i = 0; i < stats->count; i++) {
		entries += stats->regions[i].entries;
		dirty += stats->regions[i].dirty;
		dirty_bytes += stats->regions[i].dirty_pages * DT_PROTO_PAGE_SIZE;
	}
	add_u64(o, "regions", n);
	add_u64(o, "size", size);
	add_u64(o, "entries", entries);
	add_u64(o, "dirty_entries", dirty);
	add_u64(o, "dirty_bytes", dirty_bytes);
	add_u64(o, "fsyncs", stats->total.fsyncs);
	add_u64(o, "flushed_bytes", stats->total.bytes_flushed);
	return o;
}

struct json_object *ctl_json_status(const struct dt_proto_hello_rep *hello, const char *socket,
				    const struct dt_proto_region *regions, uint32_t nregions,
				    const struct dt_client_stats *stats)
{
	struct json_object *o = json_object_new_object();
	struct json_object *a = json_object_new_array();
	uint32_t i;

	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	add_str(o, "version", hello->software);
	add_u64(o, "protocol", hello->version);
	add_u64(o, "pid", hello->pid);
	add_u64(o, "start_time_seconds", hello->start_time_ns / 1000000000);
	add_u64(o, "uptime_seconds", hello->uptime_ns / 1000000000);
	add_str(o, "socket", socket);
	add_u64(o, "clients", stats->total.clients);
	add_u64(o, "clients_total", stats->total.clients_total);
	add_u64(o, "requests", stats->total.requests);
	add_u64(o, "errors", stats->total.errors);
	add_u64(o, "clients_tracked", stats->total.clients_tracked);
	add_u64(o, "clients_refused", stats->total.clients_refused);
	for (i = 0; i < nregions; i++) {
		const struct dt_proto_region_stats *rs =
			dt_client_stats_region(stats, regions[i].id);
		struct json_object *r = ctl_json_region(&regions[i]);

		if (!r)
			continue;
		add_u64(r, "entries", rs ? rs->entries : 0);
		add_u64(r, "dirty_entries", rs ? rs->dirty : 0);
		add_u64(r, "dirty_bytes", rs ? rs->dirty_pages * DT_PROTO_PAGE_SIZE : 0);
		add_u64(r, "clients_tracked", rs ? rs->clients_tracked : 0);
		add_u64(r, "clients_refused", rs ? rs->clients_refused : 0);
		add_truncation(r, rs);
		json_object_array_add(a, r);
	}
	json_object_object_add(o, "regions", a);
	json_object_object_add(o, "totals", status_totals(regions, nregions, stats));
	return o;
}

static struct json_object *region_stats(const struct dt_proto_region_stats *s)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "name", s->name);
	add_u64(o, "entries", s->entries);
	add_u64(o, "entries_pte", s->entries_pte);
	add_u64(o, "entries_pmd", s->entries_pmd);
	add_u64(o, "dirty_entries", s->dirty);
	add_u64(o, "dirty_bytes", s->dirty_pages * DT_PROTO_PAGE_SIZE);
	add_u64(o, "towrite_entries", s->towrite);
	add_u64(o, "tree_nodes", s->tree_nodes);
	add_u64(o, "tree_bytes", s->tree_bytes);
	add_u64(o, "tree_height", s->tree_height);
	add_u64(o, "faults", s->faults);
	add_u64(o, "fsyncs", s->fsyncs);
	add_u64(o, "flushed_entries", s->flushed_entries);
	add_u64(o, "flushed_bytes", s->flushed_bytes);
	add_u64(o, "lock_grabs", s->grabs);
	add_u64(o, "lock_contended", s->contended);
	add_u64(o, "lock_wakeups", s->wakeups);
	add_u64(o, "badblocks", s->badblocks);
	add_u64(o, "bad_bytes", s->bad_bytes);
	add_u64(o, "bad_hits", s->bad_hits);
	add_u64(o, "deep_flush_ndctl", s->deep_flush_ndctl);
	add_u64(o, "deep_flush_pmem", s->deep_flush_pmem);
	add_u64(o, "deep_flush_failed", s->deep_flush_failed);
	add_u64(o, "clients_tracked", s->clients_tracked);
	add_u64(o, "clients_refused", s->clients_refused);
	add_truncation(o, s);
	return o;
}

static struct json_object *daemon_stats(const struct dt_proto_stats_rep *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *ops = json_object_new_object();
	unsigned op;

	if (!o || !ops) {
		json_object_put(o);
		json_object_put(ops);
		return NULL;
	}
	add_u64(o, "uptime_seconds", s->uptime_ns / 1000000000);
	add_u64(o, "clients", s->clients);
	add_u64(o, "clients_total", s->clients_total);
	add_u64(o, "requests", s->requests);
	add_u64(o, "errors", s->errors);
	add_u64(o, "bad_messages", s->bad_messages);
	add_u64(o, "fsyncs", s->fsyncs);
	add_u64(o, "flushed_bytes", s->bytes_flushed);
	add_u64(o, "clients_tracked", s->clients_tracked);
	add_u64(o, "clients_refused", s->clients_refused);
	for (op = DT_OP_FIRST; op <= DT_OP_LAST; op++)
		add_u64(ops, dt_proto_op_name(op), s->requests_by_op[op]);
	add_u64(ops, "UNKNOWN", s->requests_by_op[0]);
	json_object_object_add(o, "requests_by_op", ops);
	return o;
}

/* "deep_flush_cxl": 0 for a region not on CXL, null if the daemon does not say. */
static void add_deep_flush_cxl(struct json_object *o, const struct ctl_cxl *cx, uint32_t id)
{
	const struct dt_proto_cxl_region *c = ctl_cxl_region(cx, id);

	json_object_object_add(o, "deep_flush_cxl", !cx->answered ? NULL :
				json_object_new_uint64(c ? c->deep_flush_cxl : 0));
}

struct json_object *ctl_json_stats(const struct dt_client_stats *stats, const struct ctl_cxl *cx)
{
	struct json_object *r;
	struct json_object *o = json_object_new_object();
	struct json_object *a = json_object_new_array();
	uint32_t i;

	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	json_object_object_add(o, "daemon", daemon_stats(&stats->total));
	for (i = 0; i < stats->count; i++) {
		r = region_stats(&stats->regions[i]);
		if (r)
			add_deep_flush_cxl(r, cx, stats->regions[i].id);
		json_object_array_add(a, r);
	}
	json_object_object_add(o, "regions", a);
	return o;
}

struct json_object *ctl_json_lookup(const char *region, uint64_t offset,
				    const struct dt_proto_entry *e)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "region", region);
	add_u64(o, "offset", offset);
	json_object_object_add(o, "entry", e ? ctl_json_entry(e) : NULL);
	return o;
}

/* {"region", "offset", "length"}: the start of the fsync and dirty objects. */
static struct json_object *range_object(const char *region, uint64_t offset, uint64_t length)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "region", region);
	add_u64(o, "offset", offset);
	add_u64(o, "length", length);
	return o;
}

static void add_bad_ranges(struct json_object *o, const struct dt_proto_range *bad, uint32_t n,
			   bool more)
{
	struct json_object *a = json_object_new_array();

	for (uint32_t i = 0; a && i < n; i++) {
		struct json_object *r = json_object_new_object();

		if (!r)
			break;
		add_u64(r, "offset", bad[i].offset);
		add_u64(r, "length", bad[i].length);
		json_object_array_add(a, r);
	}
	add_str(o, "error", "EIO");
	json_object_object_add(o, "bad_ranges", a);
	add_bool(o, "bad_more", more);
}

struct json_object *ctl_json_fsync(const char *region, uint64_t offset, uint64_t length,
				   bool deep, const struct dt_proto_fsync_rep *rep,
				   const struct dt_proto_range *bad, uint32_t nbad)
{
	struct json_object *o = range_object(region, offset, length);

	if (!o)
		return NULL;
	add_bool(o, "deep", deep);
	add_u64(o, "entries", rep->entries);
	add_u64(o, "bytes", rep->bytes);
	add_u64(o, "ranges", rep->ranges);
	add_u64(o, "time_ns", rep->time_ns);
	if (bad)
		add_bad_ranges(o, bad, rep->count < nbad ? rep->count : nbad,
			       rep->count > nbad || (rep->flags & DT_FSYNC_BAD_MORE));
	return o;
}

struct json_object *ctl_json_dirty(const char *region, uint64_t offset, uint64_t length,
				   uint64_t dirty_entries, uint64_t dirty_bytes)
{
	struct json_object *o = range_object(region, offset, length);

	if (!o)
		return NULL;
	add_u64(o, "dirty_entries", dirty_entries);
	add_u64(o, "dirty_bytes", dirty_bytes);
	return o;
}

struct json_object *ctl_json_dump(const char *region, const char *text, size_t len)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "region", region);
	json_object_object_add(o, "text", json_object_new_string_len(text, (int)len));
	return o;
}

struct json_object *ctl_json_version(const char *version, const struct dt_proto_hello_rep *hello)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "daxtrackctl", version);
	json_object_object_add(o, "daxtrackd", hello ? json_object_new_string(hello->software)
						     : NULL);
	json_object_object_add(o, "protocol", hello ? json_object_new_uint64(hello->version)
						    : NULL);
	return o;
}

struct json_object *ctl_json_watch(uint64_t time_ms, uint64_t interval_ms,
				   const struct ctl_rates *rates, uint32_t count)
{
	struct json_object *o = json_object_new_object();
	struct json_object *a = json_object_new_array();
	uint32_t i;

	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	add_u64(o, "time_ms", time_ms);
	add_u64(o, "interval_ms", interval_ms);
	for (i = 0; i < count; i++) {
		struct json_object *r = json_object_new_object();

		if (!r)
			continue;
		add_str(r, "name", rates[i].name);
		add_u64(r, "dirty_entries", rates[i].dirty_entries);
		add_u64(r, "dirty_bytes", rates[i].dirty_bytes);
		add_double(r, "fsyncs_per_second", rates[i].fsyncs_per_second);
		add_double(r, "flushed_bytes_per_second", rates[i].flushed_bytes_per_second);
		add_double(r, "faults_per_second", rates[i].faults_per_second);
		json_object_array_add(a, r);
	}
	json_object_object_add(o, "regions", a);
	return o;
}

int ctl_json_print(struct json_object *o, bool pretty)
{
	int flags = pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
			   : JSON_C_TO_STRING_PLAIN;

	if (!o) {
		ctl_err("out of memory");
		return CTL_EXIT_FAIL;
	}
	puts(json_object_to_json_string_ext(o, flags | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}
