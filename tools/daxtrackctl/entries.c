// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/entries.c - `list` (paged through LIST's cursor by
 * dt_client_list() and printed as the pages arrive) and `lookup`
 * (dt_client_query()).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "ctl.h"
#include "json.h"
#include "util.h"

/* `list` streams: fixed widths, wide enough for 256 TiB regions. */
#define LIST_FORMAT "%-14s  %-5s  %-12s  %-10s  %-13s  %s\n"

struct list_out {
	bool json;
	uint64_t printed;
};

static void print_header(const struct list_out *o)
{
	if (o->json)
		fputs("[", stdout);
	else
		printf(LIST_FORMAT, "OFFSET", "SIZE", "SECTOR", "FLAGS", "TAGS", "LOCKED");
}

static void print_footer(const struct list_out *o)
{
	if (o->json)
		fputs(o->printed ? "\n]\n" : "]\n", stdout);
}

static int print_entry(struct list_out *o, const struct dt_proto_entry *e)
{
	char off[CTL_FMT_LEN], sz[CTL_FMT_LEN], sec[CTL_FMT_LEN], fl[CTL_FMT_LEN];
	char tags[CTL_FMT_LEN];

	if (o->json) {
		struct json_object *j = ctl_json_entry(e);

		if (!j) {
			ctl_err("out of memory");
			return CTL_EXIT_FAIL;
		}
		printf("%s\n  %s", o->printed ? "," : "",
		       json_object_to_json_string_ext(j, JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
		o->printed++;
		return 0;
	}
	if (e->flags & (DT_PROTO_ENTRY_ZERO | DT_PROTO_ENTRY_EMPTY))
		strcpy(sec, "-");
	else
		snprintf(sec, sizeof(sec), "%" PRIu64, e->sector);
	printf(LIST_FORMAT, ctl_fmt_offset(e->base, off),
	       ctl_fmt_size((uint64_t)DT_PROTO_PAGE_SIZE << e->order, sz), sec,
	       ctl_fmt_names(e->flags, ctl_entry_flag_names, ctl_entry_flag_bits, fl),
	       ctl_fmt_names(e->tags, ctl_tag_names, ctl_tag_bits, tags),
	       ctl_yes_no(e->flags & DT_PROTO_ENTRY_LOCKED));
	o->printed++;
	return 0;
}

/* Walk the pages of LIST until DONE or @limit entries (0: no limit). */
static int list_walk(struct dt_client *c, const struct ctl_region *region, struct dt_client_list *l,
		     uint64_t limit, struct list_out *o)
{
	struct dt_proto_hello_rep hello;
	struct dt_proto_entry *e;
	uint32_t i, n, page;
	int err, ret = 0;

	dt_client_daemon(c, &hello);
	page = hello.max_list < DT_PROTO_MAX_LIST ? hello.max_list : DT_PROTO_MAX_LIST;
	e = calloc(page ? page : 1, sizeof(*e));
	if (!e) {
		ctl_err("out of memory");
		return CTL_EXIT_FAIL;
	}
	while (!l->done && !ret) {
		uint32_t max = page;

		if (limit && limit - o->printed < max)
			max = (uint32_t)(limit - o->printed);
		err = dt_client_list(region->r, l, e, max, &n);
		if (err) {
			ret = ctl_region_error(region->info.name, "list", err);
			break;
		}
		for (i = 0; i < n && !ret; i++) {
			if (print_entry(o, &e[i]))
				ret = CTL_EXIT_FAIL;
			else if (limit && o->printed == limit)
				l->done = true;
		}
	}
	free(e);
	return ret;
}

int cmd_list(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dirty", no_argument, NULL, 'D' },
		{ "range", required_argument, NULL, 'R' },
		{ "limit", required_argument, NULL, 'N' },
		CTL_GLOBAL_OPTIONS
	};
	struct dt_client_list l = { .flags = DT_LIST_WHOLE };
	struct list_out out = { .json = false };
	struct ctl_region region;
	struct dt_client *c;
	uint64_t limit = 0;
	int opt, ret;

	while ((opt = ctl_getopt(ctl, argc, argv, "", longopts)) >= 0) {
		if (opt == 'D')
			l.flags |= DT_LIST_DIRTY;
		else if (opt == 'R' && ctl_arg_range(ctl, optarg, &l.offset, &l.length))
			return CTL_EXIT_USAGE;
		else if (opt == 'R')
			l.flags &= ~DT_LIST_WHOLE;
		else if (opt == 'N' && ctl_arg_count(ctl, "limit", optarg, &limit))
			return CTL_EXIT_USAGE;
	}
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 1, 1))
		return CTL_EXIT_USAGE;
	if (ctl_open_region(ctl, &c, argv[optind], &region))
		return CTL_EXIT_FAIL;
	out.json = ctl->json;
	print_header(&out);
	ret = list_walk(c, &region, &l, limit, &out);
	if (!ret)
		print_footer(&out);
	dt_client_close(c);
	return ret;
}

int cmd_lookup(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	struct dt_proto_query_rep rep;
	struct ctl_region region;
	struct dt_client *c;
	uint64_t offset;
	int opt, err, ret = 0;

	opt = ctl_getopt(ctl, argc, argv, "", longopts);
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 2, 2))
		return CTL_EXIT_USAGE;
	if (ctl_arg_size(ctl, "offset", argv[optind + 1], &offset))
		return CTL_EXIT_USAGE;
	if (ctl_open_region(ctl, &c, argv[optind], &region))
		return CTL_EXIT_FAIL;
	err = dt_client_query(region.r, offset, &rep);
	if (err) {
		ret = ctl_region_error(region.info.name, "lookup", err);
	} else if (ctl->json) {
		ret = ctl_json_print(ctl_json_lookup(region.info.name, offset,
						     rep.found ? &rep.entry : NULL),
				     true);
	} else if (!rep.found) {
		char off[CTL_FMT_LEN];

		printf("region \"%s\": %s: no entry\n", region.info.name,
		       ctl_fmt_offset(offset, off));
	} else {
		struct list_out o = { .json = false };

		print_header(&o);
		print_entry(&o, &rep.entry);
	}
	dt_client_close(c);
	return ret;
}
