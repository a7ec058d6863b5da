// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/connect.c - daxtrackctl's connection to daxtrackd
 * through libdaxtrack-client, and its failure messages.  See connect.h.
 */
#include <errno.h>
#include <string.h>

#include "connect.h"
#include "ctl.h"

int ctl_connect_quiet(struct ctl *ctl, struct dt_client **cp)
{
	struct dt_client_options o;

	dt_client_options_init(&o);
	o.socket = ctl->socket;
	o.flags = DT_CLIENT_NO_RECONNECT;
	return dt_client_connect_opts(&o, cp);
}

void ctl_not_running(const char *path, int err)
{
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
