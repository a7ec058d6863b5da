// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_ctl_util.c - daxtrackctl's parsing of sizes, offsets, ranges, counts
 * and intervals (with their errors), its human formatting and its tables.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dt_test.h"
#include "table.h"
#include "util.h"

DT_TEST_DEFINE("test_ctl_util");

static void size_ok(const char *s, uint64_t want)
{
	const char *why = NULL;
	uint64_t v = ~0ULL;

	dt_test_ctx("size \"%s\"", s);
	CHECK_EQ(ctl_parse_size(s, &v, &why), 0);
	CHECK_EQ(v, want);
}

static void size_bad(const char *s, int err, const char *why_want)
{
	const char *why = NULL;
	uint64_t v = 12345;

	dt_test_ctx("bad size \"%s\"", s ? s : "(null)");
	CHECK_EQ(ctl_parse_size(s, &v, &why), err);
	CHECK(why && strstr(why, why_want));
	CHECK_EQ(v, 12345);	/* untouched on error */
}

static void test_sizes(void)
{
	size_ok("0", 0);
	size_ok("4096", 4096);
	size_ok("0x200000", 0x200000);
	size_ok("0X1f", 31);
	size_ok("0xabcDEF", 0xabcdef);
	size_ok("64K", 64 << 10);
	size_ok("64k", 64 << 10);
	size_ok("2M", 2 << 20);
	size_ok("2m", 2 << 20);
	size_ok("1G", 1ULL << 30);
	size_ok("1GiB", 1ULL << 30);
	size_ok("1gib", 1ULL << 30);
	size_ok("3T", 3ULL << 40);
	size_ok("1TiB", 1ULL << 40);
	size_ok("0x10M", 16ULL << 20);
	size_ok("1536K", 1536 << 10);
	size_ok("18446744073709551615", UINT64_MAX);
	size_ok("0xffffffffffffffff", UINT64_MAX);
	size_ok("16777215T", 16777215ULL << 40);
	size_ok("007", 7);

	size_bad("", -EINVAL, "empty");
	size_bad(NULL, -EINVAL, "empty");
	size_bad("abc", -EINVAL, "not a number");
	size_bad("-1", -EINVAL, "not a number");
	size_bad(" 1", -EINVAL, "not a number");
	size_bad("0x", -EINVAL, "not a number");
	size_bad("0xg", -EINVAL, "not a number");
	size_bad("1.5M", -EINVAL, "not a number");
	size_bad("1 M", -EINVAL, "not a number");
	size_bad("12Q", -EINVAL, "unknown suffix");
	size_bad("4KB", -EINVAL, "unknown suffix");
	size_bad("4Ki", -EINVAL, "unknown suffix");
	size_bad("4KiBx", -EINVAL, "unknown suffix");
	size_bad("4MM", -EINVAL, "unknown suffix");
	size_bad("1B", -EINVAL, "unknown suffix");
	size_bad("18446744073709551616", -ERANGE, "too large");
	size_bad("0x10000000000000000", -ERANGE, "too large");
	size_bad("16777216T", -ERANGE, "too large");
	size_bad("17179869184G", -ERANGE, "too large");
}

static void range_ok(const char *s, uint64_t off, uint64_t len)
{
	uint64_t o = 0, l = 0;
	const char *why = NULL;

	dt_test_ctx("range \"%s\"", s);
	CHECK_EQ(ctl_parse_range(s, &o, &l, &why), 0);
	CHECK_EQ(o, off);
	CHECK_EQ(l, len);
}

static void range_bad(const char *s, int err, const char *why_want)
{
	uint64_t o = 0, l = 0;
	const char *why = NULL;

	dt_test_ctx("bad range \"%s\"", s);
	CHECK_EQ(ctl_parse_range(s, &o, &l, &why), err);
	CHECK(why && strstr(why, why_want));
}

static void test_ranges(void)
{
	range_ok("0-2M", 0, 2 << 20);
	range_ok("4K-8K", 4096, 4096);
	range_ok("0x200000-0x400000", 0x200000, 0x200000);
	range_ok("1M+4K", 1 << 20, 4096);
	range_ok("0+1", 0, 1);
	range_ok("0-18446744073709551615", 0, UINT64_MAX);
	range_ok("1+18446744073709551614", 1, UINT64_MAX - 1);

	range_bad("4K", -EINVAL, "A-B");
	range_bad("", -EINVAL, "A-B");
	range_bad("-4K", -EINVAL, "empty");
	range_bad("4K-", -EINVAL, "empty");
	range_bad("4K-4K", -EINVAL, "empty range");
	range_bad("8K-4K", -EINVAL, "end below start");
	range_bad("4K+0", -EINVAL, "empty range");
	range_bad("1-2-3", -EINVAL, "not a number");
	range_bad("0-2Q", -EINVAL, "unknown suffix");
	range_bad("x-2M", -EINVAL, "not a number");
	range_bad("1+18446744073709551615", -ERANGE, "2^64");
	range_bad("0-18446744073709551616", -ERANGE, "too large");
}

static void test_counts_intervals(void)
{
	const char *why = NULL;
	uint64_t v = 0;

	dt_test_ctx("counts");
	CHECK_EQ(ctl_parse_count("1", &v, &why), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(ctl_parse_count("4200", &v, &why), 0);
	CHECK_EQ(v, 4200);
	CHECK_EQ(ctl_parse_count("0", &v, &why), -EINVAL);
	CHECK(why && strstr(why, "at least 1"));
	CHECK_EQ(ctl_parse_count("2K", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_count("", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_count("-3", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_count("99999999999999999999", &v, &why), -ERANGE);

	dt_test_ctx("intervals");
	CHECK_EQ(ctl_parse_interval("1", &v, &why), 0);
	CHECK_EQ(v, 1000);
	CHECK_EQ(ctl_parse_interval("0.1", &v, &why), 0);
	CHECK_EQ(v, 100);
	CHECK_EQ(ctl_parse_interval("2.5", &v, &why), 0);
	CHECK_EQ(v, 2500);
	CHECK_EQ(ctl_parse_interval(".5", &v, &why), 0);
	CHECK_EQ(v, 500);
	CHECK_EQ(ctl_parse_interval("0.05", &v, &why), -EINVAL);
	CHECK(why && strstr(why, "at least 0.1"));
	CHECK_EQ(ctl_parse_interval("0", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_interval("1s", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_interval("-1", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_interval("nan", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_interval("", &v, &why), -EINVAL);
	CHECK_EQ(ctl_parse_interval("100000", &v, &why), -ERANGE);
}

static void fmt_is(const char *got, const char *want)
{
	dt_test_ctx("format: got \"%s\", want \"%s\"", got, want);
	CHECK(!strcmp(got, want));
}

static void test_formatting(void)
{
	char b[CTL_FMT_LEN];

	fmt_is(ctl_fmt_size(0, b), "0");
	fmt_is(ctl_fmt_size(512, b), "512");
	fmt_is(ctl_fmt_size(1000, b), "1000");
	fmt_is(ctl_fmt_size(1023, b), "1023");
	fmt_is(ctl_fmt_size(1024, b), "1K");
	fmt_is(ctl_fmt_size(1025, b), "1025");
	fmt_is(ctl_fmt_size(4096, b), "4K");
	fmt_is(ctl_fmt_size(1536 << 10, b), "1536K");
	fmt_is(ctl_fmt_size(2052 << 10, b), "2052K");
	fmt_is(ctl_fmt_size(2 << 20, b), "2M");
	fmt_is(ctl_fmt_size(64 << 20, b), "64M");
	fmt_is(ctl_fmt_size(3ULL << 29, b), "1536M");
	fmt_is(ctl_fmt_size(1ULL << 30, b), "1G");
	fmt_is(ctl_fmt_size(5ULL << 40, b), "5T");
	fmt_is(ctl_fmt_size(1ULL << 50, b), "1024T");
	fmt_is(ctl_fmt_size(UINT64_MAX, b), "18446744073709551615");

	fmt_is(ctl_fmt_bytes(0, b), "0 B");
	fmt_is(ctl_fmt_bytes(1, b), "1 B");
	fmt_is(ctl_fmt_bytes(1023, b), "1023 B");
	fmt_is(ctl_fmt_bytes(1024, b), "1 KiB");
	fmt_is(ctl_fmt_bytes(1025, b), "1.0 KiB");
	fmt_is(ctl_fmt_bytes(4096, b), "4 KiB");
	fmt_is(ctl_fmt_bytes(7680, b), "7.5 KiB");
	fmt_is(ctl_fmt_bytes(2052 << 10, b), "2052 KiB");
	fmt_is(ctl_fmt_bytes(2 << 20, b), "2 MiB");
	fmt_is(ctl_fmt_bytes(10000 << 10, b), "9.8 MiB");	/* 10000 KiB: too long exact */
	fmt_is(ctl_fmt_bytes(64 << 20, b), "64 MiB");
	fmt_is(ctl_fmt_bytes(3ULL << 29, b), "1536 MiB");
	fmt_is(ctl_fmt_bytes(1ULL << 30, b), "1 GiB");
	fmt_is(ctl_fmt_bytes(5ULL << 40, b), "5 TiB");
	fmt_is(ctl_fmt_bytes(1ULL << 50, b), "1024 TiB");
	fmt_is(ctl_fmt_bytes(UINT64_MAX, b), "16777216.0 TiB");

	fmt_is(ctl_plural(0, "entry", "entries"), "entries");
	fmt_is(ctl_plural(1, "entry", "entries"), "entry");
	fmt_is(ctl_plural(2, "entry", "entries"), "entries");

	fmt_is(ctl_fmt_offset(0, b), "0x0");
	fmt_is(ctl_fmt_offset(0x200000, b), "0x200000");
	fmt_is(ctl_fmt_offset(UINT64_MAX, b), "0xffffffffffffffff");

	fmt_is(ctl_fmt_uptime(0, b), "0s");
	fmt_is(ctl_fmt_uptime(59, b), "59s");
	fmt_is(ctl_fmt_uptime(303, b), "5m 3s");
	fmt_is(ctl_fmt_uptime(2 * 3600 + 13 * 60 + 7, b), "2h 13m");
	fmt_is(ctl_fmt_uptime(3 * 86400 + 4 * 3600 + 5, b), "3d 4h");

	fmt_is(ctl_fmt_time_ns(850, b), "850 ns");
	fmt_is(ctl_fmt_time_ns(12500, b), "12.5 us");
	fmt_is(ctl_fmt_time_ns(300000, b), "0.3 ms");
	fmt_is(ctl_fmt_time_ns(1250000000, b), "1.25 s");

	fmt_is(ctl_fmt_rate(0, b), "0B/s");
	fmt_is(ctl_fmt_rate(512, b), "512B/s");
	fmt_is(ctl_fmt_rate(1536, b), "1.5K/s");
	fmt_is(ctl_fmt_rate(200.0 * 1048576, b), "200.0M/s");
	fmt_is(ctl_fmt_rate(-1, b), "0B/s");

	fmt_is(ctl_fmt_names(0, ctl_tag_names, ctl_tag_bits, b), "-");
	fmt_is(ctl_fmt_names(3, ctl_tag_names, ctl_tag_bits, b), "dirty,towrite");
	fmt_is(ctl_fmt_names(2, ctl_tag_names, ctl_tag_bits, b), "towrite");
	fmt_is(ctl_fmt_names(0x0f, ctl_entry_flag_names, ctl_entry_flag_bits, b),
	       "pmd,zero,empty");
	fmt_is(ctl_fmt_names(1, ctl_entry_flag_names, ctl_entry_flag_bits, b), "-");

	fmt_is(ctl_region_type(1U << 3), "devdax");
	fmt_is(ctl_region_type(0), "file");
}

/* @t printed by ctl_table_print_fit() into a string must be @want. */
static void table_is(const struct ctl_table *t, size_t max_width, const char *want)
{
	char buf[512] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	if (!CHECK(f))
		return;
	ctl_table_print_fit(t, f, max_width);
	fclose(f);
	dt_test_ctx("table (max %zu): got\n%s, want\n%s", max_width, buf, want);
	CHECK(!strcmp(buf, want));
}

static void test_table(void)
{
	struct ctl_table t;

	ctl_table_init(&t, 3);
	CHECK_EQ(ctl_table_add(&t, "NAME", "SIZE", "PATH"), 0);
	CHECK_EQ(ctl_table_add(&t, "db", "64 MiB", "/mnt/pmem/some/where/db.pool"), 0);
	CHECK_EQ(ctl_table_add(&t, "log", NULL, "/l"), 0);
	table_is(&t, 0, "NAME  SIZE    PATH\n"
			"db    64 MiB  /mnt/pmem/some/where/db.pool\n"
			"log   -       /l\n");
	/* 14 columns before the path: 16 for it, its head cut. */
	table_is(&t, 30, "NAME  SIZE    PATH\n"
			 "db    64 MiB  ...where/db.pool\n"
			 "log   -       /l\n");
	table_is(&t, 42, "NAME  SIZE    PATH\n"
			 "db    64 MiB  /mnt/pmem/some/where/db.pool\n"
			 "log   -       /l\n");
	/* Fewer than 8 columns left: printed whole. */
	table_is(&t, 20, "NAME  SIZE    PATH\n"
			 "db    64 MiB  /mnt/pmem/some/where/db.pool\n"
			 "log   -       /l\n");
	ctl_table_free(&t);
}

int main(void)
{
	test_sizes();
	test_ranges();
	test_counts_intervals();
	test_formatting();
	test_table();
	return dt_test_done();
}
