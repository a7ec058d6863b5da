// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/regions.c - `regions` (the daemon's configured regions
 * and the namespace each lies on) and `namespaces` (what libndctl finds on
 * the host, whether or not a region uses it, NVDIMM- or CXL-backed, and with
 * --cxl the CXL memdevs and their health).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "ctl.h"
#include "cxl-view.h"
#include "json.h"
#include "local.h"
#include "table.h"
#include "util.h"

/* `regions` without -v fits this many columns (the path is cut at its head). */
#define REGIONS_WIDTH	100

static char *fmt_numa(int node, char *buf)
{
	if (node < 0)
		snprintf(buf, CTL_FMT_LEN, "-");
	else
		snprintf(buf, CTL_FMT_LEN, "%d", node);
	return buf;
}

/* The regions served, then those not ("failed": true). */
static int regions_json(const struct dt_proto_region *r, uint32_t n,
			const struct dt_proto_failed *f, uint32_t nf, const struct ctl_cxl *cx)
{
	struct json_object *a = json_object_new_array();
	struct json_object *o;
	uint32_t i;

	for (i = 0; a && i < n; i++) {
		o = ctl_json_region(&r[i]);
		if (o)
			ctl_json_add_backing(o, cx, r[i].ns_region);
		json_object_array_add(a, o);
	}
	for (i = 0; a && i < nf; i++)
		json_object_array_add(a, ctl_json_failed(&f[i]));
	return ctl_json_print(a, true);
}

/* The columns of -v: every field of the region. */
static int regions_wide(struct ctl_table *t, const struct dt_proto_region *r, uint32_t n,
			const struct ctl_cxl *cx)
{
	uint32_t i;
	int err;

	ctl_table_init(t, 18);
	err = ctl_table_add(t, "NAME", "TYPE", "SIZE", "SPAN", "PMEM", "EADR", "PMD", "FLUSH",
			    "NUMA", "BADBLOCKS", "BAD_BYTES", "MATCH", "NAMESPACE", "DEVICE",
			    "BACKING", "CXL_REGION", "MEMDEVS", "PATH");
	for (i = 0; i < n && !err; i++) {
		char sz[CTL_FMT_LEN], span[CTL_FMT_LEN], numa[CTL_FMT_LEN], bad[CTL_FMT_LEN],
			bb[CTL_FMT_LEN];
		char cxl_region[DT_PROTO_DEVNAME_MAX], memdevs[128];
		const char *backing = ctl_cxl_backing(cx, r[i].ns_region, cxl_region, memdevs,
						      sizeof(cxl_region));

		snprintf(bad, sizeof(bad), "%u", r[i].badblocks);
		err = ctl_table_add(t, r[i].name, ctl_region_type(r[i].flags),
				    ctl_fmt_bytes(r[i].size, sz), ctl_fmt_bytes(r[i].span, span),
				    ctl_yes_no(r[i].flags & DT_REGION_PMEM),
				    ctl_yes_no(r[i].flags & DT_REGION_EADR),
				    ctl_yes_no(r[i].flags & DT_REGION_PMD),
				    dt_proto_flush_name(r[i].flush),
				    fmt_numa(r[i].numa_node, numa), bad,
				    ctl_fmt_bytes(r[i].bad_bytes, bb),
				    dt_proto_ns_match_name(r[i].ns_match),
				    r[i].ns_name[0] ? r[i].ns_name : "-",
				    r[i].ns_device[0] ? r[i].ns_device : "-", backing,
				    cxl_region[0] ? cxl_region : "-", memdevs[0] ? memdevs : "-",
				    r[i].path);
	}
	return err;
}

/* The default columns, for a terminal of REGIONS_WIDTH columns. */
static int regions_narrow(struct ctl_table *t, const struct dt_proto_region *r, uint32_t n)
{
	uint32_t i;
	int err;

	ctl_table_init(t, 9);
	err = ctl_table_add(t, "NAME", "TYPE", "SIZE", "PMEM", "PMD", "FLUSH", "BADBLOCKS",
			    "NAMESPACE", "PATH");
	for (i = 0; i < n && !err; i++) {
		char sz[CTL_FMT_LEN], bad[CTL_FMT_LEN];

		snprintf(bad, sizeof(bad), "%u", r[i].badblocks);
		err = ctl_table_add(t, r[i].name, ctl_region_type(r[i].flags),
				    ctl_fmt_bytes(r[i].size, sz),
				    ctl_yes_no(r[i].flags & DT_REGION_PMEM),
				    ctl_yes_no(r[i].flags & DT_REGION_PMD),
				    dt_proto_flush_name(r[i].flush), bad,
				    r[i].ns_name[0] ? r[i].ns_name : "-", r[i].path);
	}
	return err;
}

static int regions_table(const struct dt_proto_region *r, uint32_t n, bool verbose,
			 const struct ctl_cxl *cx)
{
	struct ctl_table t;
	uint32_t i;
	int err;

	if (!n) {
		printf("no regions\n");
		return 0;
	}
	err = verbose ? regions_wide(&t, r, n, cx) : regions_narrow(&t, r, n);
	if (!err)
		ctl_table_print_fit(&t, stdout, verbose ? 0 : REGIONS_WIDTH);
	ctl_table_free(&t);
	if (err)
		ctl_err("out of memory");
	for (i = 0; i < n && !err; i++)
		if (r[i].flags & DT_REGION_SPARSE)
			printf("%s: sparse: holes or unwritten extents on a DAX file system: the first "
			       "store to each of their blocks commits the file system's journal\n",
			       r[i].name);
	return err ? CTL_EXIT_FAIL : 0;
}

int cmd_regions(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		CTL_GLOBAL_OPTIONS
	};
	struct dt_proto_region *regions = NULL;
	struct dt_proto_failed *failed = NULL;
	struct ctl_cxl cx = { .known = false };
	struct dt_client *c;
	bool verbose = false;
	uint32_t n = 0, nf = 0;
	int opt, err, ret;

	while ((opt = ctl_getopt(ctl, argc, argv, "v", longopts)) == 'v')
		verbose = true;
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 0, 0))
		return CTL_EXIT_USAGE;
	if (ctl_connect(ctl, &c))
		return CTL_EXIT_FAIL;
	err = dt_client_regions(c, &regions, &n);
	if (err)
		ctl_err("regions: %s", strerror(-err));
	else
		err = ctl_failed_get(c, &failed, &nf);
	if (!err) {
		err = ctl_cxl_daemon(c, &cx);
		if (err)
			ctl_err("regions: %s", strerror(-err));
	}
	dt_client_close(c);
	if (err) {
		free(failed);
		free(regions);
		return CTL_EXIT_FAIL;
	}
	if (ctl->json) {
		ret = regions_json(regions, n, failed, nf, &cx);
	} else {
		ret = regions_table(regions, n, verbose, &cx);
		ctl_failed_print(failed, nf);
	}
	ctl_cxl_free(&cx);
	free(failed);
	free(regions);
	return ret;
}

/* The namespaces, from either source, in the protocol's record. */
struct ns_list {
	const char *source;
	bool ndctl;
	char note[256];
	uint32_t count;
	struct dt_proto_namespace *ns;
	struct ctl_cxl cxl;
};

static unsigned mode_of(const char *name)
{
	unsigned m;

	for (m = DT_NS_FSDAX; m <= DT_NS_SECTOR; m++)
		if (!strcmp(dt_proto_ns_mode_name(m), name))
			return m;
	return DT_NS_UNKNOWN;
}

static int ns_local(struct ns_list *l)
{
	struct ctl_local_ns *loc;
	uint32_t i;
	int err;

	l->source = "local";
	l->ndctl = true;
	err = ctl_cxl_local(&l->cxl);
	if (!err)
		err = ctl_local_namespaces(&loc, &l->count, l->note, sizeof(l->note));
	if (err) {
		ctl_err("namespaces: libndctl: %s", strerror(-err));
		return CTL_EXIT_FAIL;
	}
	l->ns = calloc(l->count ? l->count : 1, sizeof(*l->ns));
	if (!l->ns) {
		free(loc);
		ctl_err("out of memory");
		return CTL_EXIT_FAIL;
	}
	for (i = 0; i < l->count; i++) {
		struct dt_proto_namespace *ns = &l->ns[i];

		memcpy(ns->bus, loc[i].bus, sizeof(ns->bus));
		memcpy(ns->region, loc[i].region, sizeof(ns->region));
		memcpy(ns->name, loc[i].name, sizeof(ns->name));
		memcpy(ns->blockdev, loc[i].blockdev, sizeof(ns->blockdev));
		memcpy(ns->chardev, loc[i].chardev, sizeof(ns->chardev));
		ns->mode = (uint8_t)mode_of(loc[i].mode);
		ns->numa_node = loc[i].numa_node;
		ns->size = loc[i].size;
		ns->align = loc[i].align;
		ns->badblocks = loc[i].badblocks;
	}
	free(loc);
	return 0;
}

static int ns_daemon(struct ctl *ctl, struct ns_list *l)
{
	struct dt_client *c;
	uint32_t flags = 0;
	int err;

	l->source = "daemon";
	if (ctl_connect(ctl, &c))
		return CTL_EXIT_FAIL;
	err = dt_client_namespaces(c, &l->ns, &l->count, &flags);
	if (!err)
		err = ctl_cxl_daemon(c, &l->cxl);
	dt_client_close(c);
	if (err) {
		ctl_err("namespaces: %s", strerror(-err));
		return CTL_EXIT_FAIL;
	}
	l->ndctl = !(flags & DT_NS_NO_NDCTL);
	snprintf(l->note, sizeof(l->note), "%s",
		 l->ndctl ? "no persistent memory namespaces found" :
			    "daxtrackd was built without libndctl: no persistent memory "
			    "namespaces known");
	return 0;
}

static int ns_json(const struct ns_list *l)
{
	struct json_object *o = ctl_json_namespaces(l->source, l->ndctl);
	struct json_object *a;
	uint32_t i;

	struct json_object *n;

	if (o && json_object_object_get_ex(o, "namespaces", &a))
		for (i = 0; i < l->count; i++) {
			n = ctl_json_namespace(&l->ns[i]);
			if (n)
				ctl_json_add_backing(n, &l->cxl, l->ns[i].region);
			json_object_array_add(a, n);
		}
	return ctl_json_print(o, true);
}

static int ns_table(const struct ns_list *l)
{
	struct ctl_table t;
	uint32_t i;
	int err;

	if (!l->count) {
		printf("%s\n", l->note);
		return 0;
	}
	ctl_table_init(&t, 11);
	err = ctl_table_add(&t, "BUS", "REGION", "NAMESPACE", "MODE", "SIZE", "ALIGN", "NUMA",
			    "DEVICE", "BADBLOCKS", "BACKING", "CXL");
	for (i = 0; i < l->count && !err; i++) {
		const struct dt_proto_namespace *ns = &l->ns[i];
		char sz[CTL_FMT_LEN], al[CTL_FMT_LEN], numa[CTL_FMT_LEN], bad[CTL_FMT_LEN];
		const char *dev = ns->chardev[0] ? ns->chardev : ns->blockdev;
		char cxl_region[DT_PROTO_DEVNAME_MAX], memdevs[128], cxl[192];
		const char *backing = ctl_cxl_backing(&l->cxl, ns->region, cxl_region, memdevs,
						      sizeof(cxl_region));

		snprintf(cxl, sizeof(cxl), "%s on %s", cxl_region, memdevs);
		snprintf(bad, sizeof(bad), "%" PRIu64, ns->badblocks);
		err = ctl_table_add(&t, ns->bus, ns->region, ns->name,
				    dt_proto_ns_mode_name(ns->mode), ctl_fmt_bytes(ns->size, sz),
				    ns->align ? ctl_fmt_bytes(ns->align, al) : "-",
				    fmt_numa(ns->numa_node, numa), dev[0] ? dev : "-", bad, backing,
				    cxl_region[0] ? cxl : "-");
	}
	return ctl_table_done(&t, err);
}

int cmd_namespaces(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "local", no_argument, NULL, 'L' },
		{ "cxl", no_argument, NULL, 'C' },
		CTL_GLOBAL_OPTIONS
	};
	struct ns_list l = { .source = NULL };
	bool local = false, cxl = false;
	int opt, ret;

	while ((opt = ctl_getopt(ctl, argc, argv, "", longopts)) == 'L' || opt == 'C') {
		if (opt == 'L')
			local = true;
		else
			cxl = true;
	}
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 0, 0))
		return CTL_EXIT_USAGE;
	ret = local ? ns_local(&l) : ns_daemon(ctl, &l);
	if (!ret && cxl)
		ret = ctl_cxl_print(&l.cxl, l.source, ctl->json);
	else if (!ret)
		ret = ctl->json ? ns_json(&l) : ns_table(&l);
	ctl_cxl_free(&l.cxl);
	free(l.ns);
	return ret;
}
