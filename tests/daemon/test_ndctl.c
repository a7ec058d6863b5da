// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_ndctl.c - namespace enumeration: it runs, its results are sane, and
 * a machine without NVDIMMs (like the CI machines) reports none, clearly.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "dt_test.h"
#include "ndctl.h"

DT_TEST_DEFINE("test_ndctl");

static void check_namespace(const struct dt_namespace *ns)
{
	unsigned i;

	dt_test_ctx("namespace %s", ns->name);
	CHECK(!strncmp(ns->name, "namespace", 9));
	CHECK(!strncmp(ns->region, "region", 6));
	CHECK(ns->bus[0] != '\0');
	CHECK(ns->mode <= DT_NS_MODE_UNKNOWN);
	CHECK(dt_ns_wire_mode(ns->mode) <= DT_NS_UNKNOWN);
	if (ns->enabled && ns->mode == DT_NS_MODE_DEVDAX)
		CHECK(ns->is_chr && !strncmp(ns->devname, "dax", 3));
	if (ns->enabled && ns->mode == DT_NS_MODE_FSDAX)
		CHECK(!ns->is_chr && !strncmp(ns->devname, "pmem", 4));
	for (i = 0; i < ns->nbad; i++) {
		CHECK(ns->bad[i].len > 0);
		CHECK(ns->bad[i].offset + ns->bad[i].len <= ns->size);
		if (i)
			CHECK(ns->bad[i - 1].offset <= ns->bad[i].offset);
	}
}

int main(void)
{
	struct dt_ndctl *nd = NULL;
	struct stat st;
	unsigned i;

	dt_test_ctx("scan");
	CHECK_EQ(dt_ndctl_scan(&nd), 0);
	if (!CHECK(nd != NULL))
		return dt_test_done();
	printf("test_ndctl: %s\n", nd->note);
	CHECK(nd->note[0] != '\0');
	for (i = 0; i < nd->nns; i++)
		check_namespace(&nd->ns[i]);

	dt_test_ctx("no namespaces");
	if (!nd->nns) {
		CHECK(!strncmp(nd->note, "no persistent memory namespaces found", 37) ||
		      !strncmp(nd->note, "libndctl: ", 10));
		CHECK(nd->ns == NULL);
		CHECK_EQ(dt_ndctl_deep_flush(nd, 0), -ENOENT);
		CHECK(!stat("/tmp", &st));
		CHECK_EQ(dt_ndctl_match(nd, false, st.st_dev), -ENOENT);
		CHECK_EQ(dt_ndctl_match(nd, true, st.st_dev), -ENOENT);
	}
	CHECK_EQ(dt_ndctl_deep_flush(nd, nd->nns), -ENOENT);

	dt_test_ctx("modes on the wire");
	CHECK_EQ(dt_ns_wire_mode(DT_NS_MODE_FSDAX), DT_NS_FSDAX);
	CHECK_EQ(dt_ns_wire_mode(DT_NS_MODE_DEVDAX), DT_NS_DEVDAX);
	CHECK_EQ(dt_ns_wire_mode(DT_NS_MODE_RAW), DT_NS_RAW);
	CHECK_EQ(dt_ns_wire_mode(DT_NS_MODE_SECTOR), DT_NS_SECTOR);
	CHECK_EQ(dt_ns_wire_mode(DT_NS_MODE_UNKNOWN), DT_NS_UNKNOWN);
	CHECK(!strcmp(dt_proto_ns_mode_name(dt_ns_wire_mode(DT_NS_MODE_FSDAX)), "fsdax"));

	dt_ndctl_free(nd);
	dt_ndctl_free(NULL);
	return dt_test_done();
}
