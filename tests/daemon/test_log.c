// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_log.c - log lines: priority prefixes, the threshold, one line per
 * call, and lines of concurrent threads that never mix.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "dt_test.h"
#include "log.h"

DT_TEST_DEFINE("test_log");

#define THREADS 4
#define LINES 2000

static char *buf;
static size_t buflen;

static FILE *capture(enum dt_log_prefix prefix)
{
	FILE *f = open_memstream(&buf, &buflen);

	dt_log_set_output(f, prefix);
	return f;
}

static void release(FILE *f)
{
	dt_log_set_output(NULL, DT_LOG_PREFIX_AUTO);
	fclose(f);
	free(buf);
	buf = NULL;
}

static void test_lines(void)
{
	FILE *f = capture(DT_LOG_PREFIX_PRIO);
	char big[2000];

	dt_test_ctx("prefixes and threshold");
	CHECK_EQ(dt_log_get_level(), LOG_INFO);
	errno = EXDEV;
	dt_log(LOG_ERR, "region \"%s\": %s: open: %s", "db", "/dev/dax0.0", "Permission denied");
	CHECK_EQ(errno, EXDEV);
	dt_log(LOG_INFO, "info %d", 6);
	dt_log(LOG_DEBUG, "hidden");
	dt_log_set_level(LOG_DEBUG);
	dt_log(LOG_DEBUG, "two\nlines");
	dt_log_set_level(LOG_WARNING);
	dt_log(LOG_NOTICE, "hidden");
	dt_log(LOG_WARNING, "warn");
	dt_log_set_level(LOG_INFO);
	fflush(f);
	CHECK(!strcmp(buf, "<3>region \"db\": /dev/dax0.0: open: Permission denied\n"
		      "<6>info 6\n<7>two lines\n<4>warn\n"));
	release(f);

	dt_test_ctx("ident prefix, long line");
	f = capture(DT_LOG_PREFIX_IDENT);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	dt_log(LOG_ERR, "%s", big);
	fflush(f);
	CHECK(!strncmp(buf, "daxtrackd: xxx", 14));
	CHECK_EQ(buflen, 1024);
	CHECK_EQ(buf[1023], '\n');
	release(f);

	dt_test_ctx("level names");
	CHECK_EQ(dt_log_level_parse("err"), LOG_ERR);
	CHECK_EQ(dt_log_level_parse("warning"), LOG_WARNING);
	CHECK_EQ(dt_log_level_parse("notice"), LOG_NOTICE);
	CHECK_EQ(dt_log_level_parse("info"), LOG_INFO);
	CHECK_EQ(dt_log_level_parse("debug"), LOG_DEBUG);
	CHECK_EQ(dt_log_level_parse("crit"), -EINVAL);
	CHECK_EQ(dt_log_level_parse("INFO"), -EINVAL);
	CHECK(!strcmp(dt_log_level_name(LOG_NOTICE), "notice"));
	CHECK(!strcmp(dt_log_level_name(99), "unknown"));
}

static void *writer(void *arg)
{
	long id = (long)arg;
	int i;

	for (i = 0; i < LINES; i++)
		dt_log(LOG_INFO, "thread %ld line %d %s", id, i,
		       "padding padding padding padding padding padding padding");
	return NULL;
}

static void test_threads(void)
{
	FILE *f = tmpfile();
	pthread_t t[THREADS];
	int next[THREADS] = { 0 };
	char line[256];
	long id;
	int n, bad = 0, total = 0;

	dt_test_ctx("concurrent lines");
	dt_log_set_output(f, DT_LOG_PREFIX_PRIO);
	for (id = 0; id < THREADS; id++)
		pthread_create(&t[id], NULL, writer, (void *)id);
	for (id = 0; id < THREADS; id++)
		pthread_join(t[id], NULL);
	dt_log_set_output(NULL, DT_LOG_PREFIX_AUTO);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		total++;
		if (sscanf(line, "<6>thread %ld line %d padding", &id, &n) != 2 || id < 0 ||
		    id >= THREADS || n != next[id] ||
		    strcmp(strchr(line, 'p'), "padding padding padding padding padding padding "
			   "padding\n")) {
			bad++;
			continue;
		}
		next[id]++;
	}
	fclose(f);
	CHECK_EQ(bad, 0);
	CHECK_EQ(total, THREADS * LINES);
}

int main(void)
{
	test_lines();
	test_threads();
	return dt_test_done();
}
