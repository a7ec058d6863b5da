// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/fsync.c - `fsync`: flush a region or a range of it;
 * `dirty`: mark a range of it dirty, as an application that stored to it.
 *
 * FSYNC and DIRTY need write rights: root has them; anyone else proves them by
 * attaching with an fd of the region's file or device opened O_RDWR (see
 * "Authorisation" in docs/protocol.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "ctl.h"
#include "json.h"
#include "util.h"

struct fsync_args {
	const char *region;
	bool whole;
	bool deep;
	uint64_t offset;
	uint64_t length;
};

static void fsync_text(const struct fsync_args *a, const char *name,
		       const struct dt_proto_fsync_rep *r)
{
	char sz[CTL_FMT_LEN], t[CTL_FMT_LEN];

	printf("region \"%s\": flushed %" PRIu64 " %s (%s) in %" PRIu64 " %s%s, %s\n", name,
	       r->entries, ctl_plural(r->entries, "entry", "entries"), ctl_fmt_bytes(r->bytes, sz),
	       r->ranges, ctl_plural(r->ranges, "range", "ranges"),
	       a->deep ? " and a deep flush" : "", ctl_fmt_time_ns(r->time_ns, t));
}

/* Bad ranges shown by `fsync` (the reply names up to DT_PROTO_MAX_BAD). */
#define FSYNC_BAD_SHOWN	DT_PROTO_MAX_BAD

/*
 * An fsync answered -EIO for bad blocks: the good pages were flushed (the
 * usual line), then the bad ranges, not flushed, on standard error.
 */
static int fsync_bad_text(const struct fsync_args *a, const char *name,
			  const struct dt_proto_fsync_rep *r, const struct dt_proto_range *bad)
{
	char off[CTL_FMT_LEN], len[CTL_FMT_LEN];
	uint32_t i, n = r->count < FSYNC_BAD_SHOWN ? r->count : FSYNC_BAD_SHOWN;

	fsync_text(a, name, r);
	ctl_err("region \"%s\": fsync: %s: %u bad block %s not flushed%s:", name, strerror(EIO),
		(unsigned)r->count, ctl_plural(r->count, "range", "ranges"),
		(r->flags & DT_FSYNC_BAD_MORE) ? " (and more)" : "");
	for (i = 0; i < n; i++)
		fprintf(stderr, "  %s at %s\n", ctl_fmt_bytes(bad[i].length, len),
			ctl_fmt_offset(bad[i].offset, off));
	return CTL_EXIT_FAIL;
}

static int fsync_print(struct ctl *ctl, const struct fsync_args *a, const struct ctl_region *rg,
		       const struct dt_proto_fsync_rep *rep, const struct dt_proto_range *bad)
{
	uint64_t length = a->whole ? rg->info.size : a->length;
	int ret;

	if (ctl->json) {
		ret = ctl_json_print(ctl_json_fsync(rg->info.name, a->offset, length, a->deep, rep,
						    bad, FSYNC_BAD_SHOWN),
				     true);
		return bad ? CTL_EXIT_FAIL : ret;
	}
	if (bad)
		return fsync_bad_text(a, rg->info.name, rep, bad);
	fsync_text(a, rg->info.name, rep);
	return 0;
}

static int fsync_run(struct ctl *ctl, const struct fsync_args *a)
{
	unsigned flags = (a->whole ? DT_FSYNC_WHOLE : 0) | (a->deep ? DT_FSYNC_DEEP : 0);
	static struct dt_proto_range bad[FSYNC_BAD_SHOWN];
	char path[DT_PROTO_PATH_MAX];
	struct dt_proto_fsync_rep rep;
	struct ctl_region region;
	struct dt_client *c;
	int err, ret = 0;

	if (ctl_connect(ctl, &c))
		return CTL_EXIT_FAIL;
	err = ctl_attach_for_write(c, a->region, path, &region);
	if (err) {
		ret = ctl_region_error(a->region, "attach", err);
		goto out;
	}
	err = dt_client_fsync_bad(region.r, a->offset, a->length, flags, &rep, bad,
				  FSYNC_BAD_SHOWN);
	if (err == -EPERM) {
		ctl_err("region \"%s\": fsync: %s (needs root or write access to %s)",
			region.info.name, strerror(EPERM), path);
		ret = CTL_EXIT_FAIL;
	} else if (err == -EIO && rep.count) {
		ret = fsync_print(ctl, a, &region, &rep, bad);
	} else if (err) {
		ret = ctl_region_error(region.info.name, "fsync", err);
	} else {
		ret = fsync_print(ctl, a, &region, &rep, NULL);
	}
out:
	dt_client_close(c);
	return ret;
}

int cmd_fsync(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "range", required_argument, NULL, 'R' },
		{ "deep", no_argument, NULL, 'D' },
		CTL_GLOBAL_OPTIONS
	};
	struct fsync_args a = { .whole = true };
	int opt;

	while ((opt = ctl_getopt(ctl, argc, argv, "", longopts)) >= 0) {
		if (opt == 'D') {
			a.deep = true;
		} else if (opt == 'R') {
			if (ctl_arg_range(ctl, optarg, &a.offset, &a.length))
				return CTL_EXIT_USAGE;
			a.whole = false;
		}
	}
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 1, 1))
		return CTL_EXIT_USAGE;
	a.region = argv[optind];
	return fsync_run(ctl, &a);
}

/* What a DIRTY of [@offset, @offset + @length) left dirty: the entries of
 * `list --dirty --range`, counted. */
static int dirty_marked(struct ctl_region *region, uint64_t offset, uint64_t length,
			uint64_t *entries, uint64_t *bytes)
{
	struct dt_client_list l = { .offset = offset, .length = length, .flags = DT_LIST_DIRTY };
	struct dt_proto_entry e[64];
	uint32_t i, n;
	int err;

	*entries = *bytes = 0;
	while (!l.done) {
		err = dt_client_list(region->r, &l, e, 64, &n);
		if (err)
			return err;
		for (i = 0; i < n; i++)
			*bytes += (uint64_t)DT_PROTO_PAGE_SIZE << e[i].order;
		*entries += n;
	}
	return 0;
}

static int dirty_report(struct ctl *ctl, struct ctl_region *region, uint64_t offset,
			uint64_t length)
{
	char off[CTL_FMT_LEN], len[CTL_FMT_LEN], sz[CTL_FMT_LEN];
	uint64_t entries, bytes;
	int err;

	err = dirty_marked(region, offset, length, &entries, &bytes);
	if (err)
		return ctl_region_error(region->info.name, "list", err);
	if (ctl->json)
		return ctl_json_print(
			ctl_json_dirty(region->info.name, offset, length, entries, bytes), true);
	printf("region \"%s\": marked %s at %s dirty; %" PRIu64 " dirty %s (%s) in that range\n",
	       region->info.name, ctl_fmt_bytes(length, len), ctl_fmt_offset(offset, off), entries,
	       ctl_plural(entries, "entry", "entries"), ctl_fmt_bytes(bytes, sz));
	return 0;
}

static int dirty_run(struct ctl *ctl, const char *name, uint64_t offset, uint64_t length)
{
	char path[DT_PROTO_PATH_MAX];
	struct ctl_region region;
	struct dt_client *c;
	int err, ret;

	if (ctl_connect(ctl, &c))
		return CTL_EXIT_FAIL;
	err = ctl_attach_for_write(c, name, path, &region);
	if (err) {
		ret = ctl_region_error(name, "attach", err);
		goto out;
	}
	err = dt_client_dirty(region.r, offset, length);
	if (!err)
		err = dt_client_flush_dirty(c);
	if (err == -EPERM) {
		ctl_err("region \"%s\": dirty: %s (needs root or write access to %s)",
			region.info.name, strerror(EPERM), path);
		ret = CTL_EXIT_FAIL;
	} else if (err == -ERANGE) {
		char off[CTL_FMT_LEN], len[CTL_FMT_LEN], sz[CTL_FMT_LEN];

		ctl_err("region \"%s\": dirty: %s at %s goes past its end (%s)", region.info.name,
			ctl_fmt_bytes(length, len), ctl_fmt_offset(offset, off),
			ctl_fmt_bytes(region.info.size, sz));
		ret = CTL_EXIT_FAIL;
	} else if (err) {
		ret = ctl_region_error(region.info.name, "dirty", err);
	} else {
		ret = dirty_report(ctl, &region, offset, length);
	}
out:
	dt_client_close(c);
	return ret;
}

int cmd_dirty(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	uint64_t offset, length;
	int opt;

	opt = ctl_getopt(ctl, argc, argv, "", longopts);
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 3, 3))
		return CTL_EXIT_USAGE;
	if (ctl_arg_size(ctl, "offset", argv[optind + 1], &offset) ||
	    ctl_arg_size(ctl, "length", argv[optind + 2], &length))
		return CTL_EXIT_USAGE;
	if (!length)
		return ctl_usage_error(ctl, "bad length '%s': empty range", argv[optind + 2]);
	return dirty_run(ctl, argv[optind], offset, length);
}
