// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/dump.c - `dump`: the region's radix tree as
 * dt_tree_dump() prints it, fetched in DUMP chunks by dt_client_dump().
 */
#include <stdio.h>
#include <stdlib.h>

#include "connect.h"
#include "ctl.h"
#include "json.h"
#include "util.h"

int cmd_dump(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	struct ctl_region region;
	struct dt_client *c;
	char *text = NULL;
	size_t len = 0;
	int opt, err, ret = 0;

	opt = ctl_getopt(ctl, argc, argv, "", longopts);
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 1, 1))
		return CTL_EXIT_USAGE;
	if (ctl_open_region(ctl, &c, argv[optind], &region))
		return CTL_EXIT_FAIL;
	err = dt_client_dump(region.r, &text, &len);
	if (err)
		ret = ctl_region_error(region.info.name, "dump", err);
	else if (ctl->json)
		ret = ctl_json_print(ctl_json_dump(region.info.name, text, len), true);
	else
		fwrite(text, 1, len, stdout);
	free(text);
	dt_client_close(c);
	return ret;
}
