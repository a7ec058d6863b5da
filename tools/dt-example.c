// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dt-example - an application of the daxtrack client library.
 *
 * Attaches a region of daxtrackd (by default the embedded "default" one) by
 * name, maps it, writes records at random 4 KiB- and 2 MiB-aligned offsets,
 * makes each one durable with dt_client_persist(), and prints what it
 * persisted and how long each persist (dirty + fsync round trip) took, then
 * the median and 99th percentile.  Before writing a record at a 2 MiB
 * boundary of a region that allows PMD entries (DT_REGION_PMD), it faults
 * the 2 MiB there as one entry (dt_client_fault() of order 9), as a DAX
 * page fault on a PMD would; elsewhere persist makes a 4 KiB entry.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <daxtrack/client.h>

#define PAGE_4K		4096ULL
#define PAGE_2M		(2ULL << 20)

/* One record: 64 bytes, self-describing, so that a dump of the region shows them. */
struct record {
	char magic[8];			/* "DTEXAMPL" */
	uint64_t seq;
	uint64_t offset;
	uint64_t time_ns;		/* CLOCK_REALTIME */
	uint32_t pid;
	uint32_t reserved;
	char text[24];
};

struct opts {
	const char *socket;
	const char *region;
	unsigned long count;
	uint64_t seed;
	bool quiet;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dt-example [OPTIONS]\n"
		"Write records into a daxtrack region and persist each one through daxtrackd.\n\n"
		"  -s, --socket PATH   daemon socket (default $" DT_CLIENT_SOCKET_ENV " or "
		DT_PROTO_SOCKET_PATH ")\n"
		"  -r, --region NAME   region to attach (default \"default\")\n"
		"  -n, --count N       records to write (default 16, at most 1000000)\n"
		"      --seed N        seed of the random offsets (default: time)\n"
		"  -q, --quiet         print only the summary\n"
		"  -h, --help          show this help\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "region", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*o = (struct opts){ .region = "default", .count = 16, .seed = (uint64_t)time(NULL) };
	while ((c = getopt_long(argc, argv, "s:r:n:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 's': o->socket = optarg; break;
		case 'r': o->region = optarg; break;
		case 'q': o->quiet = true; break;
		case 'n':
			errno = 0;
			o->count = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || !o->count || o->count > 1000000) {
				fprintf(stderr, "dt-example: -n %s: expected 1..1000000\n", optarg);
				return 2;
			}
			break;
		case 'S':
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg) {
				fprintf(stderr, "dt-example: --seed %s: not a number\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dt-example: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: reproducible with --seed. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Even records at a random 4 KiB page, odd ones at a random 2 MiB boundary. */
static uint64_t pick_offset(uint64_t size, unsigned long i, uint64_t *rng, bool *at_2m)
{
	uint64_t align = (i & 1) && size >= PAGE_2M ? PAGE_2M : PAGE_4K;

	*at_2m = align == PAGE_2M;
	return next_rand(rng) % (size / align) * align;
}

/* A record at a 2 MiB boundary of a PMD-capable region: fault its 2 MiB entry.
 * Sets *@pmd to whether the daemon made one (it falls back to 4 KiB where
 * smaller entries are in the way, as the kernel does). */
static int fault_pmd(struct dt_client_region *r, const struct opts *o, uint64_t off, bool *pmd)
{
	struct dt_proto_fault_rep rep;
	int err;

	err = dt_client_fault(r, off, DT_PROTO_PMD_ORDER, DT_FAULT_REQ_WRITE, &rep);
	if (err) {
		fprintf(stderr, "dt-example: region \"%s\": 2M fault at 0x%" PRIx64 ": %s\n",
			o->region, off, strerror(-err));
		return err;
	}
	*pmd = rep.order == DT_PROTO_PMD_ORDER;
	return 0;
}

static const char *entry_kind(bool at_2m, bool pmd)
{
	if (pmd)
		return "in a 2M entry";
	return at_2m ? "in a 4K entry, 2M-aligned" : "in a 4K entry";
}

static int run(struct dt_client_region *r, const struct opts *o, void *base, size_t size,
	       uint64_t *lat)
{
	struct dt_client_region_info info;
	uint64_t rng = o->seed ? o->seed : 1;
	struct record rec;

	dt_client_region_info(r, &info);
	for (unsigned long i = 0; i < o->count; i++) {
		bool at_2m;
		uint64_t off = pick_offset(size, i, &rng, &at_2m), t0, t1;
		bool pmd = false;
		int err;

		if (at_2m && (info.flags & DT_REGION_PMD)) {
			err = fault_pmd(r, o, off, &pmd);
			if (err)
				return err;
		}

		memset(&rec, 0, sizeof(rec));
		memcpy(rec.magic, "DTEXAMPL", 8);
		rec.seq = i;
		rec.offset = off;
		rec.time_ns = now_ns(CLOCK_REALTIME);
		rec.pid = (uint32_t)getpid();
		snprintf(rec.text, sizeof(rec.text), "record %lu", i % 1000000);
		memcpy((char *)base + off, &rec, sizeof(rec));
		t0 = now_ns(CLOCK_MONOTONIC);
		err = dt_client_persist(r, (char *)base + off, sizeof(rec));
		t1 = now_ns(CLOCK_MONOTONIC);
		if (err) {
			fprintf(stderr, "dt-example: region \"%s\": persist of record %lu at 0x%"
				PRIx64 ": %s\n", o->region, i, off, strerror(-err));
			return err;
		}
		lat[i] = t1 - t0;
		if (!o->quiet)
			printf("persisted record %lu: %zu bytes at 0x%09" PRIx64 " (%s), "
			       "fsync %.1f us\n",
			       i, sizeof(rec), off, entry_kind(at_2m, pmd), (double)lat[i] / 1e3);
	}
	return 0;
}

static void summary(const struct opts *o, uint64_t *lat)
{
	unsigned long n = o->count, p99 = (n * 99 + 99) / 100 - 1;

	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("%lu record%s persisted in region \"%s\": fsync p50 %.1f us, p99 %.1f us, "
	       "max %.1f us\n", n, n == 1 ? "" : "s", o->region, (double)lat[(n - 1) / 2] / 1e3,
	       (double)lat[p99 < n ? p99 : n - 1] / 1e3, (double)lat[n - 1] / 1e3);
}

static int open_region(struct dt_client *c, const struct opts *o, struct dt_client_region **rp,
		       void **base, size_t *size)
{
	struct dt_client_region_info info;
	int err;

	err = dt_client_attach(c, o->region, rp);
	if (err) {
		fprintf(stderr, "dt-example: region \"%s\": attach: %s\n", o->region,
			strerror(-err));
		return err;
	}
	err = dt_client_map(*rp, base, size);
	if (err) {
		fprintf(stderr, "dt-example: region \"%s\": map: %s\n", o->region, strerror(-err));
		return err;
	}
	dt_client_region_info(*rp, &info);
	if (!info.map_writable || !info.writable) {
		fprintf(stderr, "dt-example: region \"%s\": %s: %s\n", o->region,
			info.map_writable ? "no write rights from daxtrackd"
					  : "its file cannot be opened for writing",
			strerror(EPERM));
		return -EPERM;
	}
	if (*size < sizeof(struct record)) {
		fprintf(stderr, "dt-example: region \"%s\": too small\n", o->region);
		return -ENOSPC;
	}
	if (!o->quiet)
		printf("region \"%s\": %zu %s mapped at %p (%s)\n", o->region,
		       *size % (1 << 20) ? *size : *size >> 20, *size % (1 << 20) ? "bytes" : "MiB",
		       *base,
		       info.map_sync ? "MAP_SYNC" : "MAP_SHARED, no MAP_SYNC on this file system");
	return 0;
}

/* As daxtrackctl says it: what to do about a refusal, else whether it runs. */
static void connect_error(const char *path, int err)
{
	if (err == -EACCES || err == -EPERM)
		fprintf(stderr, "dt-example: socket %s: permission denied: are you in group "
			"daxtrack?\n", path);
	else
		fprintf(stderr, "dt-example: is daxtrackd running? socket %s: %s\n", path,
			strerror(-err));
}

int main(int argc, char **argv)
{
	struct dt_client_region *r = NULL;
	struct dt_client *c = NULL;
	uint64_t *lat = NULL;
	struct opts o;
	size_t size;
	void *base;
	int ret, err;

	ret = parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	err = dt_client_connect(o.socket, &c);
	if (err) {
		connect_error(o.socket ? o.socket : dt_client_socket_default(), err);
		return 1;
	}
	lat = calloc(o.count, sizeof(*lat));
	err = lat ? open_region(c, &o, &r, &base, &size) : -ENOMEM;
	if (!err)
		err = run(r, &o, base, size, lat);
	if (!err)
		summary(&o, lat);
	else if (!lat)
		fprintf(stderr, "dt-example: %s\n", strerror(ENOMEM));
	free(lat);
	if (dt_client_close(c) && !err)
		err = -EIO;
	return err ? 1 : 0;
}
