// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dt-bench - measure libdaxtrack, daxtrackd and the client library.
 *
 * Prints figures; never fails on slow numbers.  Exits 1 only when a section
 * found a functional error (a wrong entry, a wrong count), 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/tree.h>

#include "bench.h"

#ifndef DT_BENCH_BUILDTYPE
#define DT_BENCH_BUILDTYPE "unknown"
#endif

struct bench_section_def {
	const char *name;
	int (*run)(const struct bench_opts *o);
	const char *help;
};

static const struct bench_section_def sections[] = {
	{ "tree", bench_tree, "the multi-order radix tree: dense, sparse and mixed 4KiB/2MiB" },
	{ "tree-scale", bench_tree_judy, "tree's part against JudyL: sparse, dense, clustered" },
	{ "mapping", bench_mapping, "the DAX mapping layer: faults, locks, writeback against its floor" },
	{ "daemon", bench_daemon, "daxtrackd over its socket: fsync, DIRTY, requests, memory" },
	{ "load", bench_load, "daxtrackd under 64 clients: ops/s, p50/p99/max, status, RSS" },
	{ "recovery", bench_recovery, "daxtrackd kill -9 with 1000 dirty pages: exec -> accepting" },
	{ "track", bench_track, "write + persist per page: tracked, explicit marks, the kernel's msync" },
	{ "daemon-scale", bench_scale, "daxtrackd, 1M random dirty pages of a 1 TiB region: RSS, list" },
};

#define NR_SECTIONS (sizeof(sections) / sizeof(sections[0]))

volatile uint64_t bench_sink;

static const char *cur_section = "";

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_measure_jobs(const struct bench_opts *o, struct bench_job *jobs, unsigned n)
{
	double *samples = bench_alloc((size_t)n * o->reps, sizeof(*samples), "samples");
	unsigned r, j;
	int ret = -1;

	if (!samples)
		return -1;
	for (r = 0; r < o->reps; r++) {
		for (j = 0; j < n; j++) {
			uint64_t ns = 0, ops = 0;

			if (jobs[j].fn(jobs[j].arg, &ns, &ops))
				goto out;
			samples[(size_t)j * o->reps + r] = ops ? (double)ns / (double)ops : 0;
		}
	}
	for (j = 0; j < n; j++) {
		double *v = samples + (size_t)j * o->reps;

		jobs[j].ns_per_op = bench_median(v, o->reps);	/* sorts v */
		jobs[j].min = v[0];
		jobs[j].max = v[o->reps - 1];
	}
	ret = 0;
out:
	free(samples);
	return ret;
}

int bench_measure(const struct bench_opts *o, bench_rep_fn fn, void *arg, double *ns_per_op)
{
	struct bench_job job = { .fn = fn, .arg = arg };

	if (bench_measure_jobs(o, &job, 1))
		return -1;
	*ns_per_op = job.ns_per_op;
	return 0;
}

uint64_t bench_count(const struct bench_opts *o, uint64_t n, uint64_t min)
{
	double v = (double)n * o->scale + 0.5;

	if (v < (double)min)
		return min;
	return (uint64_t)v;
}

void bench_shuffle(uint64_t *v, uint64_t n, struct bench_rng *r)
{
	uint64_t i;

	for (i = n; i > 1; i--) {
		uint64_t j = bench_rand_below(r, i);
		uint64_t tmp = v[i - 1];

		v[i - 1] = v[j];
		v[j] = tmp;
	}
}

void *bench_alloc(size_t n, size_t size, const char *what)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		fprintf(stderr, "dt-bench: %s: %s: %zu x %zu bytes: %s\n", cur_section, what, n,
			size, strerror(errno));
	return p;
}

/* Writes @s as a JSON string, quotes included. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_head(const struct bench_opts *o, const char *name)
{
	fputs("{\"section\":", o->out);
	json_string(o->out, cur_section);
	if (name) {
		fputs(",\"name\":", o->out);
		json_string(o->out, name);
	}
}

/* Formats the optional extra column; empty when @fmt is NULL. */
static void format_extra(char *buf, size_t len, const char *fmt, va_list ap)
{
	buf[0] = '\0';
	if (fmt)
		vsnprintf(buf, len, fmt, ap);
}

static void print_result(const struct bench_opts *o, const char *name, double value,
			 const char *unit, const char *extra)
{
	if (o->json) {
		json_head(o, name);
		fprintf(o->out, ",\"value\":%.6g,\"unit\":", value);
		json_string(o->out, unit);
		if (extra[0]) {
			fputs(",\"extra\":", o->out);
			json_string(o->out, extra);
		}
		fputs("}\n", o->out);
		return;
	}
	/* ns with one decimal; counts as integers; other figures with three */
	if (!strcmp(unit, "ns/op"))
		fprintf(o->out, "  %-36s %12.1f %-8s %s\n", name, value, unit, extra);
	else if (value == (double)(int64_t)value)
		fprintf(o->out, "  %-36s %12.0f %-8s %s\n", name, value, unit, extra);
	else
		fprintf(o->out, "  %-36s %12.3f %-8s %s\n", name, value, unit, extra);
}

void bench_section(const struct bench_opts *o, const char *name)
{
	cur_section = name;
	if (o->json) {
		json_head(o, NULL);
		fputs(",\"begin\":true}\n", o->out);
	} else {
		fprintf(o->out, "== %s ==\n", name);
	}
	fflush(o->out);
}

void bench_note(const struct bench_opts *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (o->json) {
		json_head(o, NULL);
		fputs(",\"note\":", o->out);
		json_string(o->out, buf);
		fputs("}\n", o->out);
	} else {
		fprintf(o->out, "# %s\n", buf);
	}
	fflush(o->out);
}

void bench_row(const struct bench_opts *o, const char *name, double ns_per_op,
	       const char *fmt, ...)
{
	char extra[256];
	va_list ap;

	va_start(ap, fmt);
	format_extra(extra, sizeof(extra), fmt, ap);
	va_end(ap);
	print_result(o, name, ns_per_op, "ns/op", extra);
	fflush(o->out);
}

void bench_value(const struct bench_opts *o, const char *name, double value, const char *unit,
		 const char *fmt, ...)
{
	char extra[256];
	va_list ap;

	va_start(ap, fmt);
	format_extra(extra, sizeof(extra), fmt, ap);
	va_end(ap);
	print_result(o, name, value, unit, extra);
	fflush(o->out);
}

bool bench_target(const struct bench_opts *o, const char *name, double ratio, bool at_most,
		  double target)
{
	bool met = at_most ? ratio <= target : ratio >= target;
	const char *op = at_most ? "<=" : ">=";

	if (o->json) {
		json_head(o, name);
		fprintf(o->out, ",\"value\":%.6g,\"unit\":\"ratio\",\"target\":\"%s %g\","
			"\"status\":\"%s\"}\n", ratio, op, target, met ? "ok" : "MISSED");
	} else {
		fprintf(o->out, "  %-36s %12.3f target %s %-5g %s\n", name, ratio, op, target,
			met ? "ok" : "MISSED");
	}
	fflush(o->out);
	return met;
}

void bench_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "dt-bench: %s: ", cur_section);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: dt-bench [--scale F] [--reps N] [--json] [--dir DIR] [SECTION...]\n"
		"Measure libdaxtrack and print the figures; exit 1 only on a functional error.\n\n"
		"  -s, --scale F   multiply the default counts (1M entries) by F, e.g. 0.1\n"
		"  -r, --reps N    repetitions per figure, which is their median (default 3)\n"
		"  -j, --json      print JSON lines instead of a table\n"
		"  -d, --dir DIR   make the daemons' directories and region files in DIR\n"
		"                  (as $DT_BENCH_TMPDIR; default /dev/shm), e.g. a DAX mount\n"
		"  -h, --help      this text\n\n"
		"sections (default: all):\n");
	for (i = 0; i < NR_SECTIONS; i++)
		fprintf(f, "  %-8s %s\n", sections[i].name, sections[i].help);
	fprintf(f, "\nload: its own daxtrackd with 4 file regions of 256MiB (in /dev/shm, or\n"
		"$DT_BENCH_TMPDIR), warmed up untimed; 64 client threads, one connection\n"
		"each, for 10 s x F loop a random mix of FAULT 4KiB/2MiB, DIRTY, FSYNC, QUERY\n"
		"and LIST; every 20 ms an observer times the requests of `daxtrackctl status`,\n"
		"and the real daxtrackctl ($DT_BENCH_DAXTRACKCTL) is run and timed 5 times.\n"
		"Prints ops/s and p50/p99/max per request kind, the status latency (target:\n"
		"max <= 50 ms), the daemon's peak RSS (VmHWM) and RssAnon; any failed request\n"
		"is an error (exit 1).  --reps does not apply to it.  See docs/performance.md.\n"
		"\nrecovery: its own daxtrackd with one 2 GiB file region (2 GiB of /dev/shm, or\n"
		"$DT_BENCH_TMPDIR, for the run); 1000 random pages marked dirty, then kill -9\n"
		"and a timed start (exec -> accepting) with the write-intent log, without it\n"
		"(the whole-region flush) and after a clean stop, --reps runs of each;\n"
		"a page not flushed before the socket accepted is an error (exit 1).\n"
		"\ntrack: its own daxtrackd with one 256 MiB file region (in --dir); per page,\n"
		"the time from the first store to the answer of: the stores into a mapping\n"
		"tracked by dt_client_track() + dt_client_fsync(); the stores + dt_client_dirty()\n"
		"+ dt_client_fsync(); the stores into a plain shared mapping + msync (on\n"
		"/dev/shm msync means nothing); and the floor of the first: the stores alone,\n"
		"each a kernel write fault; 1, 64, 4096 pages, contiguous and scattered; p50\n"
		"and p99.  An fsync that flushed other pages than written is an error.\n");
}

static const struct bench_section_def *find_section(const char *name)
{
	size_t i;

	for (i = 0; i < NR_SECTIONS; i++)
		if (!strcmp(sections[i].name, name))
			return &sections[i];
	return NULL;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long reps;
	int c;

	while ((c = getopt_long(argc, argv, "s:r:jd:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			o->scale = strtod(optarg, &end);
			if (errno || *end || !(o->scale > 0) || o->scale > 1000) {
				fprintf(stderr, "dt-bench: --scale %s: not a number in (0, 1000]\n",
					optarg);
				return -1;
			}
			break;
		case 'r':
			errno = 0;
			reps = strtol(optarg, &end, 10);
			if (errno || *end || reps < 1 || reps > 1000) {
				fprintf(stderr, "dt-bench: --reps %s: not a number in 1..1000\n",
					optarg);
				return -1;
			}
			o->reps = (unsigned)reps;
			break;
		case 'j':
			o->json = true;
			break;
		case 'd':
			if (access(optarg, W_OK | X_OK)) {
				fprintf(stderr, "dt-bench: --dir %s: %s\n", optarg, strerror(errno));
				return -1;
			}
			setenv("DT_BENCH_TMPDIR", optarg, 1);	/* bench_dmn.c makes them there */
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

/* Checks the section names before anything runs; 0 or -1. */
static int check_sections(int argc, char **argv)
{
	int i;

	for (i = optind; i < argc; i++) {
		if (!find_section(argv[i])) {
			fprintf(stderr, "dt-bench: %s: no such section\n", argv[i]);
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

/* Runs the sections named (all by default); 0, or 1 if any failed. */
static int run_sections(const struct bench_opts *o, int argc, char **argv)
{
	int i, ret = 0;
	size_t j;

	if (optind == argc) {
		for (j = 0; j < NR_SECTIONS; j++)
			ret |= sections[j].run(o);
		return ret ? 1 : 0;
	}
	for (i = optind; i < argc; i++)
		ret |= find_section(argv[i])->run(o);
	return ret ? 1 : 0;
}

/* The 1-minute load average, to tell a quiet run from a noisy one; -1 if unknown. */
static double load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double load = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lf", &load) != 1)
		load = -1;
	fclose(f);
	return load;
}

int main(int argc, char **argv)
{
	struct bench_opts o = { .scale = 1.0, .reps = 3, .json = false, .out = stdout };
	int ret;

	if (parse_opts(argc, argv, &o) || check_sections(argc, argv))
		return 2;

	urcu_memb_register_thread();
	if (o.json)
		fprintf(o.out, "{\"dt_bench\":true,\"scale\":%g,\"reps\":%u,\"map_shift\":%u,"
			"\"buildtype\":\"%s\",\"loadavg\":%.2f}\n", o.scale, o.reps,
			dt_tree_map_shift(), DT_BENCH_BUILDTYPE, load_average());
	else
		fprintf(o.out, "dt-bench: scale %g, median of %u, map_shift %u, buildtype %s, "
			"load average %.2f\n"
			"# each figure is the median of the repetitions; [a..b]: fastest..slowest\n",
			o.scale, o.reps, dt_tree_map_shift(), DT_BENCH_BUILDTYPE, load_average());
	ret = run_sections(&o, argc, argv);
	urcu_memb_unregister_thread();
	if (ret)
		fprintf(stderr, "dt-bench: FAILED: a functional check failed (see above)\n");
	return ret;
}
