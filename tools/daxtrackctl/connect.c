// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/connect.c - daxtrackctl's connection to daxtrackd
 * through libdaxtrack-client, and its failure messages.  See connect.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connect.h"
#include "ctl.h"

int ctl_connect_quiet(struct ctl *ctl, struct dt_client **cp)
{
	struct dt_client_options o;

	dt_client_options_init(&o);
	o.socket = ctl->socket;
	/*
	 * No dirty log: a one-shot command's marks must outlive it as DIRTY
	 * entries (the daemon writes a log back when its client exits).
	 */
	o.flags = DT_CLIENT_NO_RECONNECT | DT_CLIENT_NO_FAST_PATH;
	return dt_client_connect_opts(&o, cp);
}

void ctl_not_running(const char *path, int err)
{
	if (err == -EACCES || err == -EPERM)
		ctl_err("socket %s: permission denied: are you in group " CTL_GROUP "?", path);
	else
		ctl_err("is daxtrackd running? socket %s: %s", path, strerror(-err));
}

int ctl_connect(struct ctl *ctl, struct dt_client **cp)
{
	int err = ctl_connect_quiet(ctl, cp);

	if (err) {
		ctl_not_running(ctl->socket, err);
		return CTL_EXIT_FAIL;
	}
	return 0;
}

int ctl_attach(struct dt_client *c, const char *name, struct ctl_region *out)
{
	int err;

	/* No region has such a name: say so, as the daemon would. */
	if (!*name || strlen(name) >= DT_PROTO_NAME_MAX)
		return -ENOENT;
	err = dt_client_attach(c, name, &out->r);
	if (err)
		return err;
	dt_client_region_info(out->r, &out->info);
	return 0;
}

int ctl_attach_fd(struct dt_client *c, int fd, struct ctl_region *out)
{
	int err = dt_client_attach_fd(c, fd, &out->r);

	if (err)
		return err;
	dt_client_region_info(out->r, &out->info);
	return 0;
}

int ctl_region_error(const char *name, const char *op, int err)
{
	if (err == -ENOENT && !strcmp(op, "attach"))
		ctl_err("region \"%s\": no such region", name);
	else
		ctl_err("region \"%s\": %s: %s", name, op, strerror(-err));
	return CTL_EXIT_FAIL;
}

int ctl_open_region(struct ctl *ctl, struct dt_client **cp, const char *name,
		    struct ctl_region *out)
{
	int err;

	if (ctl_connect(ctl, cp))
		return CTL_EXIT_FAIL;
	err = ctl_attach(*cp, name, out);
	if (err) {
		dt_client_close(*cp);
		*cp = NULL;
		return ctl_region_error(name, "attach", err);
	}
	return 0;
}

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

int ctl_attach_for_write(struct dt_client *c, const char *name, char *path,
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
