// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * realdax_cxl.c - the CXL checks of test_realdax_daemon (see realdax_cxl.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_test.h"
#include "realdax_cxl.h"

static const struct dt_proto_cxl_memdev *find_memdev(const struct dt_client_cxl *cx,
						      const char *name)
{
	for (uint32_t i = 0; name && i < cx->nmemdevs; i++)
		if (!strcmp(cx->memdevs[i].name, name))
			return &cx->memdevs[i];
	return NULL;
}

static const struct dt_proto_cxl_region *find_region(const struct dt_client_cxl *cx, uint32_t id)
{
	for (uint32_t i = 0; i < cx->nregions; i++)
		if (cx->regions[i].id == id)
			return &cx->regions[i];
	return NULL;
}

static void print_memdev(const struct dt_proto_cxl_memdev *m)
{
	printf("CXL: %s serial 0x%llx fw \"%s\" host %s bridge %s region %s decoder %s root %s "
	       "nd %s ways %u pos %d health_err %d status 0x%x life %d temp %d dirty %u\n",
	       m->name, (unsigned long long)m->serial, m->firmware, m->host, m->host_bridge,
	       m->region, m->decoder, m->root_decoder, m->nd_region, m->ways, m->position,
	       m->health_err, m->status, m->life_used, m->temperature, m->dirty_shutdowns);
}

/* A memdev of the guest's setup: its CXL region and the nvdimm region on it. */
static void check_memdev(const struct dt_client_cxl *cx, const char *what, const char *memdev,
			 const char *region, const struct dt_proto_region *rec)
{
	const struct dt_proto_cxl_memdev *m = find_memdev(cx, memdev);

	dt_test_ctx("CXL memdev %s (%s)", memdev ? memdev : "?", what);
	if (!CHECK(m != NULL))
		return;
	CHECK(region && !strcmp(m->region, region));
	CHECK(!strcmp(m->nd_region, rec->ns_region));
	CHECK(!strcmp(m->nd_region, region ? region : ""));	/* the same name in the VM */
	CHECK_EQ(m->ways, 1);
	CHECK_EQ(m->position, 0);
	CHECK(!strncmp(m->decoder, "decoder", 7) && !strncmp(m->root_decoder, "decoder", 7));
	CHECK(m->host_bridge[0] != '\0');	/* the host bridge's firmware node, ACPI0016:NN */
	CHECK(m->pmem_size >= 256ULL << 20);
	/* QEMU 7.2 answers Get Health Info or not: either is fine, but it is said. */
	if (m->health_err)
		CHECK(m->status == 0 && m->life_used == -1 && m->dirty_shutdowns == 0);
}

static bool log_has(const char *log, const char *a, const char *b)
{
	char line[1024];
	FILE *f = fopen(log, "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, a) && (!b || strstr(line, b));
	if (f)
		fclose(f);
	return found;
}

static void check_log(const char *log, const char *name, const char *region, const char *memdev)
{
	char a[128], b[64];

	dt_test_ctx("CXL log %s", name);
	snprintf(a, sizeof(a), "region \"%s\": CXL %s: %s (serial ", name, region, memdev);
	CHECK(log_has(log, a, NULL));
	snprintf(a, sizeof(a), "region \"%s\": ", name);
	snprintf(b, sizeof(b), ", CXL %s on %s (", region, memdev);
	CHECK(log_has(log, a, b));
	CHECK(log_has(log, "persistent memory namespaces found (2 on CXL)", NULL));
}

void realdax_check_cxl(struct dt_client *c, const struct dt_proto_region *fs,
		       const struct dt_proto_region *dx, const char *log)
{
	const char *fs_region = getenv("DAX_VM_CXL_REGION");
	const char *dx_region = getenv("DAX_VM_CXL_DEVDAX_REGION");
	const char *fs_memdev = getenv("DAX_VM_CXL_MEMDEV");
	const char *dx_memdev = getenv("DAX_VM_CXL_DEVDAX_MEMDEV");
	const struct dt_proto_cxl_region *r;
	struct dt_client_cxl cx;

	dt_test_ctx("CXL request");
	if (!CHECK_EQ(dt_client_cxl(c, &cx), 0))
		return;
	CHECK_EQ(cx.flags, 0);
	CHECK_EQ(cx.nmemdevs, 2);
	for (uint32_t i = 0; i < cx.nmemdevs; i++)
		print_memdev(&cx.memdevs[i]);
	check_memdev(&cx, "fsdax", fs_memdev, fs_region, fs);
	check_memdev(&cx, "devdax", dx_memdev, dx_region, dx);
	dt_test_ctx("CXL regions");
	CHECK_EQ(cx.nregions, 2);
	r = find_region(&cx, fs->id);
	if (CHECK(r != NULL))
		CHECK(fs_region && !strcmp(r->cxl_region, fs_region) &&
		      !strcmp(r->nd_region, fs->ns_region));
	r = find_region(&cx, dx->id);
	if (CHECK(r != NULL))
		CHECK(dx_region && !strcmp(r->cxl_region, dx_region));
	dt_client_cxl_free(&cx);
	if (fs_region && fs_memdev)
		check_log(log, "fsdax", fs_region, fs_memdev);
	if (dx_region && dx_memdev)
		check_log(log, "devdax", dx_region, dx_memdev);
}

bool realdax_deep_counts(struct dt_client *c, uint32_t id, uint64_t out[4])
{
	struct dt_client_stats *st = NULL;
	const struct dt_proto_cxl_region *r;
	struct dt_client_cxl cx;
	bool ok;

	memset(out, 0, 4 * sizeof(*out));
	if (!CHECK_EQ(dt_client_cxl(c, &cx), 0))
		return false;
	r = find_region(&cx, id);
	out[0] = r ? r->deep_flush_cxl : 0;
	dt_client_cxl_free(&cx);
	if (!CHECK_EQ(dt_client_stats(c, id, &st), 0))
		return false;
	ok = CHECK_EQ(st->count, 1);
	if (ok) {
		out[1] = st->regions[0].deep_flush_pmem;
		out[2] = st->regions[0].deep_flush_ndctl;
		out[3] = st->regions[0].deep_flush_failed;
	}
	free(st);
	return ok;
}
