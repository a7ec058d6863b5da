// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/watch.c - `watch`: dirty entries and, per second, the
 * fsyncs, bytes flushed and faults, from two STATS a refresh apart.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "connect.h"
#include "ctl.h"
#include "json.h"
#include "table.h"
#include "util.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = 1;
}

static uint64_t now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Sleep @ms unless SIGINT comes first. */
static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (!interrupted && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

struct watch_args {
	const char *region;
	uint64_t interval_ms;
	uint64_t count;		/* 0: until interrupted */
	bool tty;
};

static double per_second(uint64_t now, uint64_t before, uint64_t ms)
{
	return ms && now >= before ? (double)(now - before) * 1000.0 / (double)ms : 0.0;
}

/* Rates of every region of @cur against @prev; @out has cur->count slots. */
static void compute_rates(const struct dt_client_stats *cur, const struct dt_client_stats *prev,
			  uint64_t ms, struct ctl_rates *out)
{
	uint32_t i;

	for (i = 0; i < cur->count; i++) {
		const struct dt_proto_region_stats *r = &cur->regions[i];
		const struct dt_proto_region_stats *p = dt_client_stats_region(prev, r->id);

		out[i].name = r->name;
		out[i].dirty_entries = r->dirty;
		out[i].dirty_bytes = r->dirty_pages * DT_PROTO_PAGE_SIZE;
		out[i].fsyncs_per_second = p ? per_second(r->fsyncs, p->fsyncs, ms) : 0;
		out[i].flushed_bytes_per_second =
			p ? per_second(r->flushed_bytes, p->flushed_bytes, ms) : 0;
		out[i].faults_per_second = p ? per_second(r->faults, p->faults, ms) : 0;
	}
}

static void clock_text(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

static void watch_lines(const struct ctl_rates *r, uint32_t n)
{
	char now[16], db[CTL_FMT_LEN], fl[CTL_FMT_LEN];
	uint32_t i;

	clock_text(now, sizeof(now));
	for (i = 0; i < n; i++)
		printf("%s region \"%s\": dirty %" PRIu64 " %s (%s), %.1f fsyncs/s, %s "
		       "flushed, %.1f faults/s\n",
		       now, r[i].name, r[i].dirty_entries,
		       ctl_plural(r[i].dirty_entries, "entry", "entries"),
		       ctl_fmt_bytes(r[i].dirty_bytes, db), r[i].fsyncs_per_second,
		       ctl_fmt_rate(r[i].flushed_bytes_per_second, fl), r[i].faults_per_second);
}

static void watch_screen(const struct watch_args *a, struct dt_client *c, const struct ctl_rates *r,
			 uint32_t n)
{
	struct dt_proto_hello_rep hello;
	struct ctl_table t;
	char now[16];
	uint32_t i;

	dt_client_daemon(c, &hello);
	clock_text(now, sizeof(now));
	printf("\033[H\033[2J");
	printf("daxtrackd %s, %s, every %.1fs (Ctrl-C to stop)\n\n", hello.software, now,
	       (double)a->interval_ms / 1000.0);
	ctl_table_init(&t, 6);
	ctl_table_add(&t, "NAME", "DIRTY", "DIRTY_BYTES", "FSYNCS/S", "FLUSHED/S", "FAULTS/S");
	for (i = 0; i < n; i++) {
		char d[CTL_FMT_LEN], db[CTL_FMT_LEN], fs[CTL_FMT_LEN], fl[CTL_FMT_LEN];
		char fa[CTL_FMT_LEN];

		snprintf(d, sizeof(d), "%" PRIu64, r[i].dirty_entries);
		snprintf(fs, sizeof(fs), "%.1f", r[i].fsyncs_per_second);
		snprintf(fa, sizeof(fa), "%.1f", r[i].faults_per_second);
		ctl_table_add(&t, r[i].name, d, ctl_fmt_bytes(r[i].dirty_bytes, db), fs,
			      ctl_fmt_rate(r[i].flushed_bytes_per_second, fl), fa);
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

static int watch_print(struct ctl *ctl, const struct watch_args *a, struct dt_client *c,
		       const struct dt_client_stats *cur, const struct dt_client_stats *prev,
		       uint64_t ms)
{
	struct ctl_rates *rates = calloc(cur->count ? cur->count : 1, sizeof(*rates));
	int ret = 0;

	if (!rates) {
		ctl_err("out of memory");
		return CTL_EXIT_FAIL;
	}
	compute_rates(cur, prev, ms, rates);
	if (ctl->json)
		ret = ctl_json_print(ctl_json_watch(now_ms(CLOCK_REALTIME), ms, rates, cur->count),
				     false);
	else if (a->tty)
		watch_screen(a, c, rates, cur->count);
	else
		watch_lines(rates, cur->count);
	fflush(stdout);
	free(rates);
	return ret;
}

static int watch_loop(struct ctl *ctl, const struct watch_args *a, struct dt_client *c, uint32_t id)
{
	struct dt_client_stats *prev, *cur;
	uint64_t t0, t1, n;
	int err, ret = 0;

	err = dt_client_stats(c, id, &prev);
	if (err) {
		ctl_err("stats: %s", strerror(-err));
		return CTL_EXIT_FAIL;
	}
	t0 = now_ms(CLOCK_MONOTONIC);
	for (n = 0; !a->count || n < a->count; n++) {
		sleep_ms(a->interval_ms);
		if (interrupted)
			break;
		err = dt_client_stats(c, id, &cur);
		if (err) {
			ctl_err("stats: %s", strerror(-err));
			ret = CTL_EXIT_FAIL;
			break;
		}
		t1 = now_ms(CLOCK_MONOTONIC);
		ret = watch_print(ctl, a, c, cur, prev, t1 - t0);
		free(prev);
		prev = cur;
		t0 = t1;
		if (ret)
			break;
	}
	free(prev);
	return ret;
}

static int watch_run(struct ctl *ctl, struct watch_args *a)
{
	struct sigaction sa = { .sa_handler = on_sigint };
	uint32_t id = DT_PROTO_ALL_REGIONS;
	struct ctl_region att;
	struct dt_client *c;
	int ret;

	if (a->region) {
		if (ctl_open_region(ctl, &c, a->region, &att))
			return CTL_EXIT_FAIL;
		id = att.info.id;
	} else if (ctl_connect(ctl, &c)) {
		return CTL_EXIT_FAIL;
	}
	a->tty = !ctl->json && isatty(STDOUT_FILENO);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: wake the sleep */
	ret = watch_loop(ctl, a, c, id);
	dt_client_close(c);
	return ret;
}

int cmd_watch(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'I' },
		{ "count", required_argument, NULL, 'C' },
		CTL_GLOBAL_OPTIONS
	};
	struct watch_args a = { .interval_ms = 1000 };
	const char *why;
	int opt;

	while ((opt = ctl_getopt(ctl, argc, argv, "", longopts)) >= 0) {
		if (opt == 'I' && ctl_parse_interval(optarg, &a.interval_ms, &why))
			return ctl_usage_error(ctl, "bad interval '%s': %s", optarg, why);
		if (opt == 'C' && ctl_arg_count(ctl, "count", optarg, &a.count))
			return CTL_EXIT_USAGE;
	}
	if (opt != -1)
		return opt == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 0, 1))
		return CTL_EXIT_USAGE;
	if (optind < argc)
		a.region = argv[optind];
	return watch_run(ctl, &a);
}
