// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/stats.c - `stats`: the daemon's and the regions'
 * counters, as text, JSON or the Prometheus text exposition format (for
 * node_exporter's textfile collector), with the DEEP fsyncs of regions on
 * CXL memory and the health of the CXL memdevs (CXL).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "ctl.h"
#include "cxl-view.h"
#include "json.h"
#include "util.h"

/* The clients tracking their stores (TRACK), and those refused: whole-range msyncs. */
static void stats_track_text(uint32_t tracked, uint32_t refused)
{
	printf("  tracking        %u %s tracked, %u refused\n", tracked,
	       ctl_plural(tracked, "client", "clients"), refused);
}

static void stats_daemon_text(const struct dt_proto_stats_rep *s)
{
	char up[CTL_FMT_LEN], fl[CTL_FMT_LEN];
	unsigned op;

	printf("daemon:\n");
	printf("  uptime          %s\n", ctl_fmt_uptime(s->uptime_ns / 1000000000, up));
	printf("  clients         %u now, %" PRIu64 " since the start\n", s->clients,
	       s->clients_total);
	printf("  requests        %" PRIu64 " (%" PRIu64 " %s, %" PRIu64 " bad %s)\n", s->requests,
	       s->errors, ctl_plural(s->errors, "error", "errors"), s->bad_messages,
	       ctl_plural(s->bad_messages, "message", "messages"));
	printf("  fsyncs          %" PRIu64 ", %s flushed\n", s->fsyncs,
	       ctl_fmt_bytes(s->bytes_flushed, fl));
	stats_track_text(s->clients_tracked, s->clients_refused);
	printf("  requests by op ");
	for (op = DT_OP_FIRST; op <= DT_OP_LAST; op++)
		printf(" %s=%" PRIu64, dt_proto_op_name(op), s->requests_by_op[op]);
	if (s->requests_by_op[0])
		printf(" UNKNOWN=%" PRIu64, s->requests_by_op[0]);
	printf("\n");
}

/* The file shrunk under the daemon: the dirty pages lost with it, the SIGBUS its flushes met. */
static void stats_truncation_text(const struct dt_proto_region_stats *r)
{
	char lb[CTL_FMT_LEN];

	printf("  truncations     %" PRIu64 ", %" PRIu64 " dirty %s lost (%s), %" PRIu64
	       " SIGBUS in flushes\n", r->truncations, r->truncated_dirty,
	       ctl_plural(r->truncated_dirty, "page", "pages"),
	       ctl_fmt_bytes(r->truncated_dirty * DT_PROTO_PAGE_SIZE, lb), r->sigbus);
}

static void stats_region_text(const struct dt_proto_region_stats *r, const struct ctl_cxl *cx)
{
	const struct dt_proto_cxl_region *c = ctl_cxl_region(cx, r->id);

	char db[CTL_FMT_LEN], tb[CTL_FMT_LEN], fb[CTL_FMT_LEN], bb[CTL_FMT_LEN];

	printf("region \"%s\":\n", r->name);
	printf("  entries         %" PRIu64 " (%" PRIu64 " 4K, %" PRIu64 " 2M)\n", r->entries,
	       r->entries_pte, r->entries_pmd);
	printf("  dirty           %" PRIu64 " %s, %s; %" PRIu64 " being flushed\n", r->dirty,
	       ctl_plural(r->dirty, "entry", "entries"),
	       ctl_fmt_bytes(r->dirty_pages * DT_PROTO_PAGE_SIZE, db), r->towrite);
	printf("  tree            %" PRIu64 " %s, %s, height %u\n", r->tree_nodes,
	       ctl_plural(r->tree_nodes, "node", "nodes"), ctl_fmt_bytes(r->tree_bytes, tb),
	       r->tree_height);
	printf("  faults          %" PRIu64 "\n", r->faults);
	printf("  fsyncs          %" PRIu64 ", %" PRIu64 " %s, %s flushed\n", r->fsyncs,
	       r->flushed_entries, ctl_plural(r->flushed_entries, "entry", "entries"),
	       ctl_fmt_bytes(r->flushed_bytes, fb));
	printf("  entry locks     %" PRIu64 " taken, %" PRIu64 " contended, %" PRIu64 " %s\n",
	       r->grabs, r->contended, r->wakeups, ctl_plural(r->wakeups, "wakeup", "wakeups"));
	printf("  bad blocks      %u %s, %s; %" PRIu64 " %s refused (EIO)\n", r->badblocks,
	       ctl_plural(r->badblocks, "range", "ranges"), ctl_fmt_bytes(r->bad_bytes, bb),
	       r->bad_hits, ctl_plural(r->bad_hits, "request", "requests"));
	printf("  deep flushes    %" PRIu64 " by libndctl, %" PRIu64 " by libpmem, %" PRIu64
	       " on CXL (a drain), %" PRIu64 " failed\n", r->deep_flush_ndctl, r->deep_flush_pmem,
	       c ? c->deep_flush_cxl : 0, r->deep_flush_failed);
	if (c)
		printf("  CXL             %s on %s\n", c->cxl_region[0] ? c->cxl_region : "-",
		       c->nd_region);
	stats_truncation_text(r);
	stats_track_text(r->clients_tracked, r->clients_refused);
}

/* A label value with \, " and newline escaped, as the exposition format wants. */
static void prom_label(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else
			putchar(*s);
	}
}

static void prom_meta(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_plain(const char *name, const char *type, const char *help, uint64_t v)
{
	prom_meta(name, type, help);
	printf("%s %" PRIu64 "\n", name, v);
}

/* One metric per region: @off and @size locate an unsigned field of the record. */
struct prom_region_metric {
	const char *name;
	const char *type;
	const char *help;
	size_t off;
	size_t size;
	uint64_t mult;
};

#define RS_FIELD(f) offsetof(struct dt_proto_region_stats, f), \
		    sizeof(((struct dt_proto_region_stats *)NULL)->f)

static const struct prom_region_metric region_metrics[] = {
	{ "daxtrack_region_dirty_entries", "gauge", "Entries tagged dirty.",
	  RS_FIELD(dirty), 1 },
	{ "daxtrack_region_dirty_bytes", "gauge", "Bytes of the dirty entries.",
	  RS_FIELD(dirty_pages), DT_PROTO_PAGE_SIZE },
	{ "daxtrack_region_tree_nodes", "gauge", "Radix tree nodes.", RS_FIELD(tree_nodes), 1 },
	{ "daxtrack_region_tree_bytes", "gauge", "Memory of the radix tree in bytes.",
	  RS_FIELD(tree_bytes), 1 },
	{ "daxtrack_region_faults_total", "counter", "FAULT requests served.",
	  RS_FIELD(faults), 1 },
	{ "daxtrack_region_fsyncs_total", "counter", "FSYNC requests served.",
	  RS_FIELD(fsyncs), 1 },
	{ "daxtrack_region_flushed_entries_total", "counter", "Entries flushed.",
	  RS_FIELD(flushed_entries), 1 },
	{ "daxtrack_region_flushed_bytes_total", "counter", "Bytes flushed.",
	  RS_FIELD(flushed_bytes), 1 },
	{ "daxtrack_region_lock_contended_total", "counter", "Waits for an entry lock.",
	  RS_FIELD(contended), 1 },
	{ "daxtrack_region_badblocks", "gauge", "Known bad block ranges inside the region.",
	  RS_FIELD(badblocks), 1 },
	{ "daxtrack_region_bad_bytes", "gauge", "Bytes in the known bad block ranges.",
	  RS_FIELD(bad_bytes), 1 },
	{ "daxtrack_region_bad_hits_total", "counter",
	  "FAULT and FSYNC requests refused with EIO for a bad block.", RS_FIELD(bad_hits), 1 },
	{ "daxtrack_region_deep_flush_ndctl_total", "counter",
	  "Deep flushes done by ndctl_region_deep_flush().", RS_FIELD(deep_flush_ndctl), 1 },
	{ "daxtrack_region_deep_flush_pmem_total", "counter",
	  "Deep flushes done by libpmem's pmem_deep_drain().", RS_FIELD(deep_flush_pmem), 1 },
	{ "daxtrack_region_deep_flush_failed_total", "counter",
	  "Deep flushes that failed (the FSYNC got EIO).", RS_FIELD(deep_flush_failed), 1 },
	{ "daxtrack_region_clients_tracked", "gauge",
	  "Clients whose stores to the region are tracked.", RS_FIELD(clients_tracked), 1 },
	{ "daxtrack_region_clients_refused", "gauge",
	  "Clients refused tracking there: their msyncs persist whole ranges.",
	  RS_FIELD(clients_refused), 1 },
	{ "daxtrack_region_truncations_total", "counter",
	  "Times the region's file was found shorter than before.", RS_FIELD(truncations), 1 },
	{ "daxtrack_region_truncated_dirty_bytes_total", "counter",
	  "Bytes of dirty pages lost past a new end of the file, unflushed.",
	  RS_FIELD(truncated_dirty), DT_PROTO_PAGE_SIZE },
	{ "daxtrack_region_sigbus_total", "counter",
	  "SIGBUS met by the daemon's flushes: a page past the end of the file, or poisoned.",
	  RS_FIELD(sigbus), 1 },
};

/* The value of @pm in @rs. */
static uint64_t prom_field(const struct dt_proto_region_stats *rs,
			   const struct prom_region_metric *pm)
{
	const char *p = (const char *)rs + pm->off;
	uint32_t v32;
	uint64_t v;

	if (pm->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v, p, sizeof(v));
	return v;
}

static void prom_daemon(const struct dt_proto_hello_rep *h, const struct dt_proto_stats_rep *s)
{
	unsigned op;

	prom_plain("daxtrack_up", "gauge", "Whether daxtrackd answered.", 1);
	prom_meta("daxtrack_info", "gauge", "The daemon's version and protocol version.");
	printf("daxtrack_info{version=\"");
	prom_label(h->software);
	printf("\",protocol=\"%u\"} 1\n", h->version);
	prom_plain("daxtrack_uptime_seconds", "gauge", "Seconds since the daemon started.",
		   s->uptime_ns / 1000000000);
	prom_plain("daxtrack_clients", "gauge", "Clients connected now.", s->clients);
	prom_plain("daxtrack_clients_total", "counter", "Connections accepted.", s->clients_total);
	prom_plain("daxtrack_clients_tracked", "gauge", "Clients tracking a region's stores.",
		   s->clients_tracked);
	prom_plain("daxtrack_clients_refused", "gauge",
		   "Clients refused tracking of a region: their msyncs persist whole ranges.",
		   s->clients_refused);
	prom_meta("daxtrack_requests_total", "counter", "Requests served, by opcode.");
	for (op = DT_OP_FIRST; op <= DT_OP_LAST; op++)
		printf("daxtrack_requests_total{op=\"%s\"} %" PRIu64 "\n", dt_proto_op_name(op),
		       s->requests_by_op[op]);
	printf("daxtrack_requests_total{op=\"UNKNOWN\"} %" PRIu64 "\n", s->requests_by_op[0]);
	prom_plain("daxtrack_request_errors_total", "counter", "Requests answered with an error.",
		   s->errors);
	prom_plain("daxtrack_bad_messages_total", "counter", "Packets that did not decode.",
		   s->bad_messages);
}

static void prom_region_line(const char *metric, const char *region, const char *extra,
			     uint64_t v)
{
	printf("%s{region=\"", metric);
	prom_label(region);
	printf("\"%s} %" PRIu64 "\n", extra, v);
}

static void prom_regions(const struct dt_proto_region *r, uint32_t n,
			 const struct dt_client_stats *st)
{
	const struct dt_proto_region_stats *rs;
	size_t m;
	uint32_t i;

	prom_meta("daxtrack_region_size_bytes", "gauge", "Size of the region in bytes.");
	for (i = 0; i < n; i++)
		if (dt_client_stats_region(st, r[i].id))
			prom_region_line("daxtrack_region_size_bytes", r[i].name, "", r[i].size);
	prom_meta("daxtrack_region_pmem", "gauge", "1 if the region is persistent memory.");
	for (i = 0; i < n; i++)
		if (dt_client_stats_region(st, r[i].id))
			prom_region_line("daxtrack_region_pmem", r[i].name, "",
					 !!(r[i].flags & DT_REGION_PMEM));
	prom_meta("daxtrack_region_entries", "gauge", "Tracked entries, by size.");
	for (i = 0; i < st->count; i++) {
		rs = &st->regions[i];
		prom_region_line("daxtrack_region_entries", rs->name, ",size=\"4K\"",
				 rs->entries_pte);
		prom_region_line("daxtrack_region_entries", rs->name, ",size=\"2M\"",
				 rs->entries_pmd);
	}
	for (m = 0; m < sizeof(region_metrics) / sizeof(region_metrics[0]); m++) {
		const struct prom_region_metric *pm = &region_metrics[m];

		prom_meta(pm->name, pm->type, pm->help);
		for (i = 0; i < st->count; i++) {
			rs = &st->regions[i];
			prom_region_line(pm->name, rs->name, "", prom_field(rs, pm) * pm->mult);
		}
	}
}

static void prom_memdev_line(const char *metric, const struct dt_proto_cxl_memdev *m,
			     int64_t v)
{
	printf("%s{memdev=\"", metric);
	prom_label(m->name);
	printf("\"} %" PRId64 "\n", v);
}

/* The health figures of a memdev, in the order of memdev_gauges[]. */
static int64_t memdev_value(const struct dt_proto_cxl_memdev *m, size_t g)
{
	switch (g) {
	case 0: return m->status;
	case 1: return m->life_used;
	case 2: return m->temperature;
	case 3: return m->dirty_shutdowns;
	default: return m->pmem_errors;
	}
}

static const char *const memdev_gauges[][2] = {
	{ "daxtrack_cxl_memdev_status",
	  "Health and media status bits (0: healthy; DT_CXL_ST_* of daxtrack/proto.h)." },
	{ "daxtrack_cxl_memdev_life_used_percent", "Rated life used, percent (-1: not reported)." },
	{ "daxtrack_cxl_memdev_temperature_celsius", "Device temperature (-1: not reported)." },
	{ "daxtrack_cxl_memdev_dirty_shutdowns",
	  "Shutdowns whose persistence flush (GPF) did not complete, over the device's life." },
	{ "daxtrack_cxl_memdev_pmem_errors", "Corrected persistent memory errors." },
};

static void prom_memdev_info(const struct dt_proto_cxl_memdev *m)
{
	printf("daxtrack_cxl_memdev_info{memdev=\"");
	prom_label(m->name);
	printf("\",serial=\"0x%" PRIx64 "\",firmware=\"", m->serial);
	prom_label(m->firmware);
	printf("\",host_bridge=\"");
	prom_label(m->host_bridge);
	printf("\",region=\"");
	prom_label(m->region);
	printf("\",nd_region=\"");
	prom_label(m->nd_region);
	printf("\"} 1\n");
}

/* The memdevs: one info line each, and their health where they answer. */
static void prom_cxl_health(const struct ctl_cxl *cx)
{
	uint32_t i;
	size_t g;

	prom_meta("daxtrack_cxl_memdev_info", "gauge", "A CXL memdev and where it is.");
	for (i = 0; i < cx->d.nmemdevs; i++)
		prom_memdev_info(&cx->d.memdevs[i]);
	prom_meta("daxtrack_cxl_memdev_health_reported", "gauge",
		  "1 if the memdev answered Get Health Info.");
	for (i = 0; i < cx->d.nmemdevs; i++)
		prom_memdev_line("daxtrack_cxl_memdev_health_reported", &cx->d.memdevs[i],
				 !cx->d.memdevs[i].health_err);
	for (g = 0; g < sizeof(memdev_gauges) / sizeof(memdev_gauges[0]); g++) {
		prom_meta(memdev_gauges[g][0], "gauge", memdev_gauges[g][1]);
		for (i = 0; i < cx->d.nmemdevs; i++)
			if (!cx->d.memdevs[i].health_err)
				prom_memdev_line(memdev_gauges[g][0], &cx->d.memdevs[i],
						 memdev_value(&cx->d.memdevs[i], g));
	}
}

static void prom_cxl(const struct ctl_cxl *cx, const struct dt_client_stats *st)
{
	const struct dt_proto_cxl_region *c;
	uint32_t i;

	prom_meta("daxtrack_region_deep_flush_cxl_total", "counter",
		  "Deep flushes of a region on CXL memory: a drain (GPF covers the rest).");
	for (i = 0; i < st->count; i++) {
		c = ctl_cxl_region(cx, st->regions[i].id);
		prom_region_line("daxtrack_region_deep_flush_cxl_total", st->regions[i].name, "",
				 c ? c->deep_flush_cxl : 0);
	}
	prom_cxl_health(cx);
}

static int stats_prometheus_down(struct ctl *ctl, int err)
{
	prom_plain("daxtrack_up", "gauge", "Whether daxtrackd answered.", 0);
	ctl_not_running(ctl->socket, err);
	return CTL_EXIT_FAIL;
}

struct stats_args {
	bool prometheus;
	const char *region;
};

static int stats_run(struct ctl *ctl, const struct stats_args *a)
{
	struct dt_proto_region *regions = NULL;
	struct dt_client_stats *st = NULL;
	struct dt_proto_hello_rep hello;
	uint32_t id = DT_PROTO_ALL_REGIONS, n = 0, i;
	struct ctl_region att;
	struct ctl_cxl cx = { .known = false };
	struct dt_client *c;
	int err, ret = 0;

	err = ctl_connect_quiet(ctl, &c);
	if (err && a->prometheus)
		return stats_prometheus_down(ctl, err);
	if (err) {
		ctl_not_running(ctl->socket, err);
		return CTL_EXIT_FAIL;
	}
	if (a->region) {
		err = ctl_attach(c, a->region, &att);
		if (err) {
			ret = ctl_region_error(a->region, "attach", err);
			goto out;
		}
		id = att.info.id;
	}
	err = dt_client_stats(c, id, &st);
	if (!err)
		err = ctl_cxl_daemon(c, &cx);
	if (!err && a->prometheus)
		err = dt_client_regions(c, &regions, &n);
	if (err) {
		ret = CTL_EXIT_FAIL;
		ctl_err("stats: %s", strerror(-err));
		goto out;
	}
	if (a->prometheus) {
		dt_client_daemon(c, &hello);
		prom_daemon(&hello, &st->total);
		prom_regions(regions, n, st);
		prom_cxl(&cx, st);
	} else if (ctl->json) {
		ret = ctl_json_print(ctl_json_stats(st, &cx), true);
	} else {
		stats_daemon_text(&st->total);
		for (i = 0; i < st->count; i++)
			stats_region_text(&st->regions[i], &cx);
	}
out:
	ctl_cxl_free(&cx);
	free(regions);
	free(st);
	dt_client_close(c);
	return ret;
}

int cmd_stats(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "prometheus", no_argument, NULL, 'P' },
		CTL_GLOBAL_OPTIONS
	};
	struct stats_args a = { .prometheus = false };
	int opt;

	while ((opt = ctl_getopt(ctl, argc, argv, "", longopts)) == 'P')
		a.prometheus = true;
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 0, 1))
		return CTL_EXIT_USAGE;
	if (optind < argc)
		a.region = argv[optind];
	if (a.prometheus && ctl->json)
		return ctl_usage_error(ctl, "--prometheus and --json exclude each other");
	return stats_run(ctl, &a);
}
