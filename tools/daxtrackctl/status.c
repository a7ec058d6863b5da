// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/status.c - `status` (HELLO + REGIONS + STATS: there is
 * no STATUS opcode) and `version`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "ctl.h"
#include "json.h"
#include "table.h"
#include "util.h"

#ifndef DT_VERSION
#define DT_VERSION "unknown"
#endif

static void status_header(const struct ctl *ctl, const struct dt_proto_hello_rep *hello,
			  const struct dt_client_stats *st)
{
	char up[CTL_FMT_LEN];

	printf("daxtrackd %s (protocol %u), pid %u, up %s, %u client%s\n", hello->software,
	       hello->version, hello->pid, ctl_fmt_uptime(hello->uptime_ns / 1000000000, up),
	       st->total.clients, ctl_plural(st->total.clients, "", "s"));
	printf("socket %s\n", ctl->socket);
	printf("requests %" PRIu64 " (%" PRIu64 " %s), %" PRIu64 " %s since the start\n",
	       st->total.requests, st->total.errors,
	       ctl_plural(st->total.errors, "error", "errors"), st->total.clients_total,
	       ctl_plural(st->total.clients_total, "client", "clients"));
	printf("tracking: %u %s tracked, %u refused%s\n", st->total.clients_tracked,
	       ctl_plural(st->total.clients_tracked, "client", "clients"),
	       st->total.clients_refused,
	       st->total.clients_refused ? " (their msyncs persist whole ranges)" : "");
}

/* The clients tracking their stores to a region, or refused (TRACK). */
static void status_track_note(const struct dt_proto_region *r,
			      const struct dt_proto_region_stats *rs)
{
	if (!rs || (!rs->clients_tracked && !rs->clients_refused))
		return;
	printf("region \"%s\": %u %s tracked, %u refused tracking%s\n", r->name,
	       rs->clients_tracked, ctl_plural(rs->clients_tracked, "client", "clients"),
	       rs->clients_refused, rs->clients_refused ? ": msyncs persist whole ranges" : "");
}

/* A region file shrunk under the daemon, and the dirty pages lost with it. */
static void status_truncation_note(const struct dt_proto_region *r,
				   const struct dt_proto_region_stats *rs)
{
	char lb[CTL_FMT_LEN];

	if (!rs || (!rs->truncations && !rs->sigbus))
		return;
	printf("region \"%s\": file truncated %" PRIu64 " %s under the daemon, %" PRIu64
	       " dirty %s lost (%s), %" PRIu64 " SIGBUS in flushes\n", r->name, rs->truncations,
	       ctl_plural(rs->truncations, "time", "times"), rs->truncated_dirty,
	       ctl_plural(rs->truncated_dirty, "page", "pages"),
	       ctl_fmt_bytes(rs->truncated_dirty * DT_PROTO_PAGE_SIZE, lb), rs->sigbus);
}

static void status_notes(const struct dt_proto_region *r, uint32_t n,
			 const struct dt_client_stats *st)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		status_track_note(&r[i], dt_client_stats_region(st, r[i].id));
		status_truncation_note(&r[i], dt_client_stats_region(st, r[i].id));
		if (!(r[i].flags & DT_REGION_PMEM))
			printf("region \"%s\": not persistent memory: flushing with msync\n",
			       r[i].name);
		if (r[i].badblocks)
			printf("region \"%s\": %u bad %s\n", r[i].name, r[i].badblocks,
			       ctl_plural(r[i].badblocks, "block", "blocks"));
	}
}

static int status_table(const struct dt_proto_region *r, uint32_t n,
			const struct dt_client_stats *st)
{
	struct ctl_table t;
	uint64_t size = 0, entries = 0, dirty = 0, dirty_bytes = 0;
	uint32_t i;
	int err;

	ctl_table_init(&t, 10);
	err = ctl_table_add(&t, "NAME", "TYPE", "SIZE", "PMEM", "EADR", "PMD", "FLUSH",
			    "ENTRIES", "DIRTY", "DIRTY_BYTES");
	for (i = 0; i < n && !err; i++) {
		const struct dt_proto_region_stats *rs = dt_client_stats_region(st, r[i].id);
		char sz[CTL_FMT_LEN], ent[CTL_FMT_LEN], dir[CTL_FMT_LEN], db[CTL_FMT_LEN];
		uint64_t e = rs ? rs->entries : 0, d = rs ? rs->dirty : 0;
		uint64_t b = rs ? rs->dirty_pages * DT_PROTO_PAGE_SIZE : 0;

		snprintf(ent, sizeof(ent), "%" PRIu64, e);
		snprintf(dir, sizeof(dir), "%" PRIu64, d);
		err = ctl_table_add(&t, r[i].name, ctl_region_type(r[i].flags),
				    ctl_fmt_bytes(r[i].size, sz),
				    ctl_yes_no(r[i].flags & DT_REGION_PMEM),
				    ctl_yes_no(r[i].flags & DT_REGION_EADR),
				    ctl_yes_no(r[i].flags & DT_REGION_PMD),
				    dt_proto_flush_name(r[i].flush), ent, dir,
				    ctl_fmt_bytes(b, db));
		size += r[i].size;
		entries += e;
		dirty += d;
		dirty_bytes += b;
	}
	if (!err) {
		char sz[CTL_FMT_LEN], db[CTL_FMT_LEN], fl[CTL_FMT_LEN];

		printf("\n");
		ctl_table_print(&t, stdout);
		printf("\ntotal: %u %s, %s, %" PRIu64 " %s, %" PRIu64 " dirty (%s); %" PRIu64
		       " %s, %s flushed\n",
		       n, ctl_plural(n, "region", "regions"), ctl_fmt_bytes(size, sz), entries,
		       ctl_plural(entries, "entry", "entries"), dirty,
		       ctl_fmt_bytes(dirty_bytes, db), st->total.fsyncs,
		       ctl_plural(st->total.fsyncs, "fsync", "fsyncs"),
		       ctl_fmt_bytes(st->total.bytes_flushed, fl));
	}
	ctl_table_free(&t);
	if (err)
		ctl_err("out of memory");
	return err ? CTL_EXIT_FAIL : 0;
}

/* ctl_json_status() and "failed_regions": the regions not served. */
static struct json_object *status_json(const struct dt_proto_hello_rep *hello, const char *socket,
				       const struct dt_proto_region *r, uint32_t n,
				       const struct dt_client_stats *st,
				       const struct dt_proto_failed *f, uint32_t nf)
{
	struct json_object *o = ctl_json_status(hello, socket, r, n, st);
	struct json_object *a = o ? json_object_new_array() : NULL;

	for (uint32_t i = 0; a && i < nf; i++)
		json_object_array_add(a, ctl_json_failed(&f[i]));
	if (a)
		json_object_object_add(o, "failed_regions", a);
	return o;
}

int cmd_status(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	struct dt_proto_region *regions = NULL;
	struct dt_proto_failed *failed = NULL;
	struct dt_client_stats *st = NULL;
	struct dt_proto_hello_rep hello;
	struct dt_client *c;
	uint32_t n = 0, nf = 0;
	int opt, err, ret = CTL_EXIT_FAIL;

	opt = ctl_getopt(ctl, argc, argv, "", longopts);
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 0, 0))
		return CTL_EXIT_USAGE;
	if (ctl_connect(ctl, &c))
		return CTL_EXIT_FAIL;
	dt_client_daemon(c, &hello);
	err = dt_client_regions(c, &regions, &n);
	if (err) {
		ctl_err("regions: %s", strerror(-err));
		goto out;
	}
	err = dt_client_stats(c, DT_PROTO_ALL_REGIONS, &st);
	if (err) {
		ctl_err("stats: %s", strerror(-err));
		goto out;
	}
	if (ctl_failed_get(c, &failed, &nf))
		goto out;
	if (ctl->json) {
		ret = ctl_json_print(status_json(&hello, ctl->socket, regions, n, st, failed, nf),
				     true);
		goto out;
	}
	status_header(ctl, &hello, st);
	status_notes(regions, n, st);
	ret = status_table(regions, n, st);
	ctl_failed_print(failed, nf);
out:
	free(failed);
	free(st);
	free(regions);
	dt_client_close(c);
	return ret;
}

int cmd_version(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	struct dt_proto_hello_rep hello;
	struct dt_client *c;
	int opt, err, ret = CTL_EXIT_OK;

	opt = ctl_getopt(ctl, argc, argv, "", longopts);
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 0, 0))
		return CTL_EXIT_USAGE;
	err = ctl_connect_quiet(ctl, &c);
	if (!err)
		dt_client_daemon(c, &hello);
	if (ctl->json) {
		ret = ctl_json_print(ctl_json_version(DT_VERSION, err ? NULL : &hello), true);
	} else {
		printf("daxtrackctl %s\n", DT_VERSION);
		if (err)
			printf("daxtrackd: not answering (socket %s: %s)\n", ctl->socket,
			       strerror(-err));
		else
			printf("daxtrackd %s (protocol %u)\n", hello.software, hello.version);
	}
	dt_client_close(c);
	return ret;
}
