// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/dump.c - `dump`: the region's radix tree as
 * dt_tree_dump() prints it, fetched in DUMP chunks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "ctl.h"
#include "json.h"
#include "util.h"

/* Fetch the chunks; print them, or collect them into @text for JSON. */
static int dump_fetch(struct ctl_conn *c, const struct dt_proto_attach_rep *region,
		      char **text, size_t *len)
{
	struct dt_msg req, rep;
	uint64_t offset = 0;
	int err;

	for (;;) {
		const struct dt_proto_dump_rep *d = &rep.dump_rep;

		dt_proto_init_request(&req, DT_OP_DUMP, 0);
		req.dump_req.region = region->region;
		req.dump_req.offset = offset;
		err = ctl_call(c, &req, -1, &rep);
		if (err)
			return err;
		if (d->offset != offset)
			return -EBADMSG;
		if (text) {
			char *t = realloc(*text, *len + d->length + 1);

			if (!t)
				return -ENOMEM;
			memcpy(t + *len, d->text, d->length);
			*len += d->length;
			t[*len] = '\0';
			*text = t;
		} else {
			fwrite(d->text, 1, d->length, stdout);
		}
		offset += d->length;
		if (d->flags & DT_DUMP_DONE)
			return 0;
		if (!d->length)
			return -EBADMSG;
	}
}

int cmd_dump(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	struct dt_proto_attach_rep region;
	struct ctl_conn c;
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
	err = dump_fetch(&c, &region, ctl->json ? &text : NULL, &len);
	if (err)
		ret = ctl_region_error(region.name, "dump", err);
	else if (ctl->json)
		ret = ctl_json_print(ctl_json_dump(region.name, text ? text : "", len), true);
	free(text);
	ctl_conn_close(&c);
	return ret;
}
