// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/fsync.c - `fsync`: flush a region or a range of it.
 *
 * FSYNC needs write rights: root has them; anyone else proves them by
 * attaching with an fd of the region's file or device opened O_RDWR (see
 * "Authorisation" in docs/protocol.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The path of region @name, or "" (@path has DT_PROTO_PATH_MAX bytes). */
static int region_path(struct dt_client *c, const char *name, char *path)
{
	struct dt_proto_region *r;
	uint32_t n, i;
	int err;

	path[0] = '\0';
	err = dt_client_regions(c, &r, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (i = 0; i < n; i++) {
		if (!strcmp(r[i].name, name)) {
			memcpy(path, r[i].path, DT_PROTO_PATH_MAX);
			err = 0;
		}
	}
	free(r);
	return err;
}

/* Attach with write rights if this process can have them; see the top. */
static int attach_for_write(struct dt_client *c, const char *name, char *path,
			    struct ctl_region *out)
{
	int err, fd;

	err = region_path(c, name, path);
	if (err)
		return err;
	if (geteuid() == 0)
		return ctl_attach(c, name, out);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)	/* no proof: attach read-only, the daemon will refuse */
		return ctl_attach(c, name, out);
	err = ctl_attach_fd(c, fd, out);
	close(fd);
	if (!err && strcmp(out->info.name, name))
		err = -ENOENT;
	return err;
}

static void fsync_text(const struct fsync_args *a, const char *name,
		       const struct dt_proto_fsync_rep *r)
{
	char sz[CTL_FMT_LEN], t[CTL_FMT_LEN];

	printf("region \"%s\": flushed %" PRIu64 " entr%s (%s) in %" PRIu64 " range%s%s, %s\n",
	       name, r->entries, r->entries == 1 ? "y" : "ies", ctl_fmt_size(r->bytes, sz),
	       r->ranges, r->ranges == 1 ? "" : "s", a->deep ? " and a deep flush" : "",
	       ctl_fmt_time_ns(r->time_ns, t));
}

static int fsync_run(struct ctl *ctl, const struct fsync_args *a)
{
	unsigned flags = (a->whole ? DT_FSYNC_WHOLE : 0) | (a->deep ? DT_FSYNC_DEEP : 0);
	char path[DT_PROTO_PATH_MAX];
	struct dt_proto_fsync_rep rep;
	struct ctl_region region;
	struct dt_client *c;
	int err, ret = 0;

	if (ctl_connect(ctl, &c))
		return CTL_EXIT_FAIL;
	err = attach_for_write(c, a->region, path, &region);
	if (err) {
		ret = ctl_region_error(a->region, "attach", err);
		goto out;
	}
	err = dt_client_fsync(region.r, a->offset, a->length, flags, &rep);
	if (err == -EPERM) {
		ctl_err("region \"%s\": fsync: %s (needs root or write access to %s)",
			region.info.name, strerror(EPERM), path);
		ret = CTL_EXIT_FAIL;
	} else if (err) {
		ret = ctl_region_error(region.info.name, "fsync", err);
	} else if (ctl->json) {
		ret = ctl_json_print(ctl_json_fsync(region.info.name, a->offset,
						    a->whole ? region.info.size : a->length,
						    a->deep, &rep),
				     true);
	} else {
		fsync_text(a, region.info.name, &rep);
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
