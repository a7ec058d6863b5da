// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_cxl.c - util/cxl.h and the CXL side of util/ndctl.h on the host:
 * a scan (no CXL devices here: empty, or why libcxl cannot be used), and
 * the text, lookups and protocol records of hand-made scans.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cxl.h"
#include "dt_test.h"
#include "ndctl.h"

DT_TEST_DEFINE("test_cxl");

static struct dt_cxl_memdev memdevs[2];
static struct dt_cxl_region regions[1];
static struct dt_cxl cx = { .available = true, .nmemdevs = 2, .memdevs = memdevs,
			    .nregions = 1, .regions = regions };

static void setup(void)
{
	memset(memdevs, 0, sizeof(memdevs));
	snprintf(memdevs[0].name, DT_CXL_NAME_MAX, "mem0");
	snprintf(memdevs[0].region, DT_CXL_NAME_MAX, "region2");
	snprintf(memdevs[0].decoder, DT_CXL_NAME_MAX, "decoder5.0");
	memdevs[0].position = 0;
	memdevs[0].serial = 0xabc;
	memdevs[0].health.life_used = 3;
	memdevs[0].health.temperature = 25;
	snprintf(memdevs[1].name, DT_CXL_NAME_MAX, "mem1");
	snprintf(memdevs[1].region, DT_CXL_NAME_MAX, "region2");
	memdevs[1].position = 1;
	memdevs[1].health.err = -ENOTTY;
	memset(regions, 0, sizeof(regions));
	snprintf(regions[0].name, DT_CXL_NAME_MAX, "region2");
	snprintf(regions[0].decoder, DT_CXL_NAME_MAX, "decoder0.0");
	regions[0].start = 0x1000000000ULL;
	regions[0].size = 256 << 20;
	regions[0].ways = 2;
	regions[0].granularity = 256;
	regions[0].nmemdevs = 2;
	regions[0].memdev[0] = 0;
	regions[0].memdev[1] = 1;
}

static void test_text(void)
{
	char buf[256];

	dt_test_ctx("health text");
	setup();
	dt_cxl_fmt_health(&memdevs[0].health, buf, sizeof(buf));
	CHECK(!strcmp(buf, "ok, media normal, life used 3%, temperature 25 C, dirty shutdowns 0"));
	memdevs[0].health.health = DT_CXL_HEALTH_MAINTENANCE | DT_CXL_HEALTH_REPLACE;
	memdevs[0].health.media = DT_CXL_MEDIA_PERSISTENCE_LOST | DT_CXL_MEDIA_NOT_READY;
	memdevs[0].health.life_used = DT_CXL_UNKNOWN;
	memdevs[0].health.temperature = DT_CXL_UNKNOWN;
	memdevs[0].health.dirty_shutdowns = 2;
	dt_cxl_fmt_health(&memdevs[0].health, buf, sizeof(buf));
	CHECK(!strcmp(buf, "replacement-needed, media persistence-lost, life used -, "
			   "temperature -, dirty shutdowns 2"));
	dt_cxl_fmt_health(&memdevs[1].health, buf, sizeof(buf));
	CHECK(!strcmp(buf, "not reported: the device does not implement Get Health Info"));
	CHECK(!strcmp(dt_cxl_health_reason(-EACCES),
		      "no access to the memdev's mailbox (needs root)"));
	CHECK(!strcmp(dt_cxl_media_status(DT_CXL_MEDIA_DATA_LOST | DT_CXL_MEDIA_NOT_READY),
		      "data-lost"));
	CHECK(!strcmp(dt_cxl_media_status(DT_CXL_LIFE_CRITICAL), "normal"));
	CHECK(!strcmp(dt_cxl_health_status(0), "ok"));

	dt_test_ctx("memdevs and lookup");
	CHECK(!strcmp(dt_cxl_fmt_memdevs(&cx, 0, buf, sizeof(buf)), "mem0,mem1"));
	CHECK(!strcmp(dt_cxl_fmt_memdevs(&cx, 0, buf, 6), "mem0,"));
	CHECK_EQ(dt_cxl_region_at(&cx, 0x1000000000ULL), 0);
	CHECK_EQ(dt_cxl_region_at(&cx, 0x1000000000ULL + (256 << 20) - 1), 0);
	CHECK_EQ(dt_cxl_region_at(&cx, 0x1000000000ULL + (256 << 20)), -ENOENT);
	CHECK_EQ(dt_cxl_region_at(&cx, 0xfffffffffULL), -ENOENT);
	CHECK_EQ(dt_cxl_region_at(NULL, 0), -ENOENT);
}

static void test_namespaces(void)
{
	struct dt_namespace ns[2];
	struct dt_ndctl nd = { .nns = 2, .ns = ns, .ncxl = 1, .cxl = &cx };
	struct dt_proto_cxl_memdev rec;
	char buf[256];

	dt_test_ctx("namespace backing");
	setup();
	memset(ns, 0, sizeof(ns));
	snprintf(ns[0].region, sizeof(ns[0].region), "region0");
	ns[0].cxl_region = -1;
	snprintf(ns[1].region, sizeof(ns[1].region), "region3");
	ns[1].cxl = true;
	ns[1].cxl_region = 0;
	CHECK(!strcmp(dt_ns_backing(&ns[0]), "NVDIMM"));
	CHECK(!strcmp(dt_ns_backing(&ns[1]), "CXL"));
	CHECK(!strcmp(dt_ndctl_fmt_cxl(&nd, &ns[0], buf, sizeof(buf)), ""));
	CHECK(!strcmp(dt_ndctl_fmt_cxl(&nd, &ns[1], buf, sizeof(buf)),
		      "CXL region2 on mem0,mem1 (decoder0.0, 2 ways)"));
	ns[1].cxl_region = -1;	/* libcxl does not show it */
	CHECK(!strcmp(dt_ndctl_fmt_cxl(&nd, &ns[1], buf, sizeof(buf)), "CXL"));
	ns[1].cxl_region = 0;
	CHECK(!strcmp(dt_ndctl_nd_region_of(&nd, "region2"), "region3"));
	CHECK(!strcmp(dt_ndctl_nd_region_of(&nd, "region9"), ""));
	CHECK(!strcmp(dt_ndctl_nd_region_of(NULL, "region2"), ""));

	dt_test_ctx("memdev record");
	dt_ndctl_cxl_memdev(&nd, &cx, 0, &rec);
	CHECK(!strcmp(rec.name, "mem0") && !strcmp(rec.nd_region, "region3"));
	CHECK(!strcmp(rec.root_decoder, "decoder0.0") && !strcmp(rec.decoder, "decoder5.0"));
	CHECK_EQ(rec.ways, 2);
	CHECK_EQ(rec.granularity, 256);
	CHECK_EQ(rec.position, 0);
	CHECK_EQ(rec.serial, 0xabc);
	CHECK_EQ(rec.health_err, 0);
	CHECK_EQ(rec.life_used, 3);
	CHECK_EQ(rec.temperature, 25);
	memdevs[0].health.media = DT_CXL_LIFE_WARNING;
	dt_ndctl_cxl_memdev(&nd, &cx, 0, &rec);
	CHECK_EQ(rec.status, DT_CXL_ST_LIFE_WARNING);
	dt_ndctl_cxl_memdev(&nd, &cx, 1, &rec);
	CHECK_EQ(rec.health_err, -ENOTTY);
	CHECK_EQ(rec.life_used, -1);
	CHECK_EQ(rec.temperature, -1);
	CHECK_EQ(rec.status, 0);
	CHECK_EQ(rec.position, 1);
}

/* The bits of util/cxl.h are those of the protocol, shifted. */
static void test_bits(void)
{
	dt_test_ctx("status bits");
	CHECK_EQ(DT_CXL_HEALTH_MAINTENANCE, DT_CXL_ST_MAINTENANCE);
	CHECK_EQ(DT_CXL_HEALTH_DEGRADED, DT_CXL_ST_DEGRADED);
	CHECK_EQ(DT_CXL_HEALTH_REPLACE, DT_CXL_ST_REPLACE);
	CHECK_EQ(DT_CXL_MEDIA_NOT_READY << 8, DT_CXL_ST_NOT_READY);
	CHECK_EQ(DT_CXL_MEDIA_PERSISTENCE_LOST << 8, DT_CXL_ST_PERSISTENCE_LOST);
	CHECK_EQ(DT_CXL_MEDIA_DATA_LOST << 8, DT_CXL_ST_DATA_LOST);
	CHECK_EQ(DT_CXL_MEDIA_LOSS_IMMINENT << 8, DT_CXL_ST_LOSS_IMMINENT);
	CHECK_EQ(DT_CXL_LIFE_WARNING << 8, DT_CXL_ST_LIFE_WARNING);
	CHECK_EQ(DT_CXL_LIFE_CRITICAL << 8, DT_CXL_ST_LIFE_CRITICAL);
	CHECK_EQ(DT_CXL_TEMP_WARNING << 8, DT_CXL_ST_TEMP_WARNING);
	CHECK_EQ(DT_CXL_TEMP_CRITICAL << 8, DT_CXL_ST_TEMP_CRITICAL);
}

/* The host has no CXL devices: an empty scan with a note, never an error. */
static void test_scan(void)
{
	struct dt_cxl *s;

	dt_test_ctx("scan");
	CHECK_EQ(dt_cxl_scan(&s, true), 0);
	if (!CHECK(s != NULL))
		return;
	printf("test_cxl: %s\n", s->note);
	CHECK(s->note[0] != '\0');
	if (!s->nmemdevs)
		CHECK(!strcmp(s->note, "no CXL memdevs found") ||
		      !strncmp(s->note, "libcxl: ", 8) || !strncmp(s->note, "built without", 13));
	CHECK_EQ(s->no_libcxl, !DT_HAVE_LIBCXL);
	dt_cxl_free(s);
	dt_cxl_free(NULL);
}

int main(void)
{
	test_text();
	test_namespaces();
	test_bits();
	test_scan();
	return dt_test_done();
}
