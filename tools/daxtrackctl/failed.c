// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/failed.c - the configured regions the daemon does not
 * serve (FAILED), for `regions` and `status`: fetched, and printed below
 * their tables, one line each with the daemon's reason.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <daxtrack/client.h>

#include "ctl.h"

int ctl_failed_get(struct dt_client *c, struct dt_proto_failed **out, uint32_t *count)
{
	int err = dt_client_failed(c, out, count);

	if (err == -EOPNOTSUPP)	/* an older daemon: it serves all it has */
		return 0;
	if (err)
		ctl_err("failed regions: %s", strerror(-err));
	return err;
}

void ctl_failed_print(const struct dt_proto_failed *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		printf("%s: not served: %s: %s (the daemon's log has it; a reload tries again)\n",
		       f[i].name, f[i].path, f[i].reason[0] ? f[i].reason : strerror(-f[i].error));
}
