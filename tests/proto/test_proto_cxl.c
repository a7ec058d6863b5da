// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto_cxl.c - the CXL reply: its layout byte by byte, a round trip
 * through the accessors, and the records the decoder refuses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <daxtrack/proto.h>

#include "dt_test.h"
#include "proto_util.h"

DT_TEST_DEFINE("test_proto_cxl");

static uint8_t buf[DT_PROTO_MAX_MSG];
static struct dt_proto_cxl_memdev memdevs[2];
static struct dt_proto_cxl_region regions[1];

static void fill(struct dt_msg *m)
{
	struct dt_msg req;

	memset(memdevs, 0, sizeof(memdevs));
	memset(regions, 0, sizeof(regions));
	snprintf(memdevs[0].name, sizeof(memdevs[0].name), "mem0");
	snprintf(memdevs[0].host, sizeof(memdevs[0].host), "0000:0d:00.0");
	snprintf(memdevs[0].firmware, sizeof(memdevs[0].firmware), "BWFW VERSION 00");
	snprintf(memdevs[0].host_bridge, sizeof(memdevs[0].host_bridge), "pci0000:0c");
	snprintf(memdevs[0].region, sizeof(memdevs[0].region), "region2");
	snprintf(memdevs[0].decoder, sizeof(memdevs[0].decoder), "decoder5.0");
	snprintf(memdevs[0].root_decoder, sizeof(memdevs[0].root_decoder), "decoder0.0");
	snprintf(memdevs[0].nd_region, sizeof(memdevs[0].nd_region), "region2");
	memdevs[0].serial = 0x1234;
	memdevs[0].pmem_size = 256 << 20;
	memdevs[0].status = DT_CXL_ST_LIFE_WARNING;
	memdevs[0].life_used = 91;
	memdevs[0].temperature = 42;
	memdevs[0].dirty_shutdowns = 3;
	memdevs[0].pmem_errors = 1;
	memdevs[0].position = 0;
	memdevs[0].ways = 1;
	memdevs[0].granularity = 4096;
	snprintf(memdevs[1].name, sizeof(memdevs[1].name), "mem1");
	memdevs[1].health_err = -ENOTTY;
	memdevs[1].life_used = memdevs[1].temperature = -1;
	memdevs[1].position = -1;
	regions[0].id = 7;
	regions[0].deep_flush_cxl = 5;
	snprintf(regions[0].name, sizeof(regions[0].name), "db");
	snprintf(regions[0].cxl_region, sizeof(regions[0].cxl_region), "region2");
	snprintf(regions[0].nd_region, sizeof(regions[0].nd_region), "region2");
	dt_proto_init_request(&req, DT_OP_CXL, 9);
	dt_proto_init_reply(m, &req, 0);
	m->cxl_rep.nmemdevs = 2;
	m->cxl_rep.memdevs = memdevs;
	m->cxl_rep.nregions = 1;
	m->cxl_rep.regions = regions;
}

static void test_layout(void)
{
	const size_t rec = DT_PROTO_HDR_SIZE + DT_PROTO_CXL_REP_SIZE;
	struct dt_msg m;
	size_t len;

	dt_test_ctx("layout");
	fill(&m);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, rec + 3 * DT_PROTO_CXL_REC_SIZE);
	CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 4, 2), 2);	/* nmemdevs */
	CHECK_EQ(get_le(buf, DT_PROTO_HDR_SIZE + 6, 2), 1);	/* nregions */
	CHECK(!strcmp((const char *)buf + rec, "mem0"));
	CHECK(!strcmp((const char *)buf + rec + 96, "pci0000:0c"));
	CHECK(!strcmp((const char *)buf + rec + 224, "region2"));
	CHECK_EQ(get_le(buf, rec + 256, 8), 0x1234);
	CHECK_EQ(get_le(buf, rec + 276, 4), DT_CXL_ST_LIFE_WARNING);
	CHECK_EQ(get_le(buf, rec + 280, 4), 91);
	CHECK_EQ(get_le(buf, rec + 288, 4), 3);
	CHECK_EQ(get_le(buf, rec + 300, 4), 1);
	CHECK_EQ((int32_t)get_le(buf, rec + DT_PROTO_CXL_REC_SIZE + 272, 4), -ENOTTY);
	CHECK_EQ(get_le(buf, rec + 2 * DT_PROTO_CXL_REC_SIZE, 4), 7);
	CHECK_EQ(get_le(buf, rec + 2 * DT_PROTO_CXL_REC_SIZE + 8, 8), 5);
	CHECK(!strcmp((const char *)buf + rec + 2 * DT_PROTO_CXL_REC_SIZE + 16, "db"));
	CHECK(!strcmp((const char *)buf + rec + 2 * DT_PROTO_CXL_REC_SIZE + 80, "region2"));
}

static void test_round_trip(void)
{
	struct dt_proto_cxl_memdev md;
	struct dt_proto_cxl_region rg;
	struct dt_msg m, d;
	size_t len;

	dt_test_ctx("round trip");
	fill(&m);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	CHECK_EQ(dt_proto_decode(buf, len, &d), 0);
	CHECK_EQ(d.cxl_rep.nmemdevs, 2);
	CHECK_EQ(d.cxl_rep.nregions, 1);
	dt_proto_cxl_memdev_at(&d.cxl_rep, 0, &md);
	CHECK(!memcmp(&md, &memdevs[0], sizeof(md)));
	dt_proto_cxl_memdev_at(&d.cxl_rep, 1, &md);
	CHECK(!memcmp(&md, &memdevs[1], sizeof(md)));
	dt_proto_cxl_region_at(&d.cxl_rep, 0, &rg);
	CHECK(!memcmp(&rg, &regions[0], sizeof(rg)));
	dt_proto_cxl_region_at(&d.cxl_rep, 1, &rg);
	CHECK_EQ(rg.id, 0);	/* out of range: zeroed */
	dt_proto_cxl_memdev_at(&d.cxl_rep, 2, &md);
	CHECK(!md.name[0]);
	CHECK(!strcmp(dt_proto_op_name(DT_OP_CXL), "CXL"));
}

/* Each of these makes the reply invalid. */
static void test_refused(void)
{
	struct dt_msg m;
	size_t len;

	dt_test_ctx("refused");
	fill(&m);
	memdevs[1].status = DT_CXL_ST_REPLACE;	/* health fields without health */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	fill(&m);
	memdevs[0].status = 1U << 20;		/* an undefined bit */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	fill(&m);
	memdevs[0].position = 1;		/* past its ways */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	fill(&m);
	memdevs[0].ways = 0;			/* in a region without ways */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	fill(&m);
	memdevs[0].name[0] = '\0';
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	fill(&m);
	regions[0].id = DT_PROTO_ALL_REGIONS;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	fill(&m);
	m.cxl_rep.flags = DT_CXL_NO_LIBCXL;	/* no libcxl, yet memdevs */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.cxl_rep.nmemdevs = 0;
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	fill(&m);
	m.cxl_rep.regions = NULL;		/* records without their array */
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), -EINVAL);

	dt_test_ctx("refused on the wire");
	fill(&m);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	buf[DT_PROTO_HDR_SIZE + 8 + 310] = 1;	/* a reserved byte of a memdev */
	CHECK(dt_proto_decode(buf, len, &m) < 0);
	fill(&m);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	put_le(buf, 16, 4, len - 1 - DT_PROTO_HDR_SIZE);	/* a record cut short */
	CHECK_EQ(dt_proto_decode(buf, len - 1, &m), -EBADMSG);
	fill(&m);
	CHECK_EQ(dt_proto_encode(&m, buf, sizeof(buf), &len), 0);
	put_le(buf, DT_PROTO_HDR_SIZE + 6, 2, DT_PROTO_MAX_CXL + 1);
	CHECK(dt_proto_decode(buf, len, &m) < 0);
}

int main(void)
{
	test_layout();
	test_round_trip();
	test_refused();
	return dt_test_done();
}
