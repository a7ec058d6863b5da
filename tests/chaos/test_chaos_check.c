// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_chaos_check: the chaos test's checker must be able to fail.  Small
 * synthetic client and flush logs, each with a known outcome: a flush
 * before the write, after the ack, of another page, a partial one, a
 * missing drain on a drained flush path, a write after the flush, a failed
 * fsync that proves nothing, a violation that stays due, the recovery's
 * full flush, and malformed or inconsistent logs; then the same through
 * files, as the chaos test loads them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos_check.h"
#include "dt_test.h"

DT_TEST_DEFINE("test_chaos_check");

#define MB (1ULL << 20)

/* Feed "\n"-separated lines: the flush log, then client 0's and 1's logs. */
static void feed(struct cc_world *w, const char *flush, const char *c0, const char *c1)
{
	const char *logs[3] = { flush, c0, c1 };

	for (int k = 0; k < 3; k++) {
		char *copy, *line, *save = NULL;
		unsigned n = 0;

		if (!logs[k])
			continue;
		copy = strdup(logs[k]);
		if (!copy)
			exit(2);
		for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (!k)
				cc_flush_line(w, line, ++n);
			else
				cc_client_line(w, (unsigned)k - 1, line, ++n);
		}
		free(copy);
	}
}

/* Run one scenario on regions a (8M, msync: no drain) and p (4M, pmem: drains). */
static void run(struct cc_result *res, const char *flush, const char *c0, const char *c1,
		unsigned *errors)
{
	struct cc_world w;

	cc_init(&w);
	cc_add_region(&w, "a", 8 * MB, false);
	cc_add_region(&w, "p", 4 * MB, true);
	feed(&w, flush, c0, c1);
	cc_check(&w, res);
	if (errors)
		*errors = w.parse_errors;
	if (res->violations && getenv("DT_TEST_VERBOSE"))
		cc_print(&w, res, stderr);
	cc_free(&w);
}

static uint64_t violations(const char *flush, const char *c0)
{
	struct cc_result res;
	unsigned errors;

	run(&res, flush, c0, NULL, &errors);
	CHECK_EQ(errors, 0);
	return res.violations;
}

static void test_clean(void)
{
	struct cc_result res;
	unsigned errors;

	dt_test_ctx("covered");
	run(&res, "a 0 4096 range 30\n",
	    "W a 100 50 7 10\nS a 0 4096 20\nA a 0 4096 40\n", NULL, &errors);
	CHECK_EQ(errors, 0);
	CHECK_EQ(res.writes, 1);
	CHECK_EQ(res.acked, 1);
	CHECK_EQ(res.ranges_checked, 1);
	CHECK_EQ(res.bytes_checked, 50);
	CHECK_EQ(res.violations, 0);
	CHECK_EQ(res.range_flushes, 1);
}

static void test_known_violation(void)
{
	struct cc_result res;
	unsigned errors;

	dt_test_ctx("flush before the write");
	run(&res, "a 0 4096 range 5\n",
	    "W a 100 50 7 10\nS a 0 4096 20\nA a 0 4096 40\n", NULL, &errors);
	CHECK_EQ(errors, 0);
	CHECK_EQ(res.violations, 1);
	CHECK_EQ(res.violated_bytes, 50);
	if (CHECK_EQ(res.reported, 1)) {
		CHECK_EQ(res.v[0].client, 0);
		CHECK_EQ(res.v[0].region, 0);
		CHECK_EQ(res.v[0].off, 100);
		CHECK_EQ(res.v[0].len, 50);
		CHECK_EQ(res.v[0].stamp, 7);
		CHECK_EQ(res.v[0].t_write, 10);
		CHECK_EQ(res.v[0].t_sent, 20);
		CHECK_EQ(res.v[0].t_ack, 40);
		CHECK_EQ(res.v[0].ack_line, 3);
		CHECK_EQ(res.v[0].t_last_flush, 5);
	}

	dt_test_ctx("flush after the ack, of another page, of another region");
	CHECK_EQ(violations("a 0 4096 range 50\n", "W a 100 50 7 10\nS a 0 8192 20\n"
						   "A a 0 8192 40\n"), 1);
	CHECK_EQ(violations("a 4096 4096 range 30\n", "W a 100 50 7 10\nS a 0 8192 20\n"
						      "A a 0 8192 40\n"), 1);
	CHECK_EQ(violations("p 0 4096 range 30\np 0 0 drain 31\n",
			    "W a 100 50 7 10\nS a 0 8192 20\nA a 0 8192 40\n"), 1);
	CHECK_EQ(violations("a 0 4096 range 40\n", "W a 100 50 7 10\nS a 0 8192 20\n"
						   "A a 0 8192 40\n"), 1);	/* not before */
	CHECK_EQ(violations("a 0 4096 range 10\n", "W a 100 50 7 10\nS a 0 8192 20\n"
						   "A a 0 8192 40\n"), 1);	/* not after */
	CHECK_EQ(violations("a 0 4096 deep 30\n", "W a 100 50 7 10\nS a 0 8192 20\n"
						  "A a 0 8192 40\n"), 1);
}

static void test_partial(void)
{
	struct cc_result res;

	dt_test_ctx("partial coverage: the exact bytes");
	run(&res, "a 0 4096 range 30\na 8192 4096 range 31\n",
	    "W a 4000 5000 9 10\nS a 0 12288 20\nA a 0 12288 40\n", NULL, NULL);
	CHECK_EQ(res.violations, 1);
	if (CHECK_EQ(res.reported, 1)) {
		CHECK_EQ(res.v[0].off, 4096);
		CHECK_EQ(res.v[0].len, 4096);
	}
	/* A range flush counts only for the pages it covers whole. */
	CHECK_EQ(violations("a 1 8191 range 30\n", "W a 100 50 7 10\nS a 0 4096 20\n"
						   "A a 0 4096 40\n"), 1);
	/* Bytes outside the fsync's range are not its business. */
	run(&res, "", "W a 20480 10 7 10\nS a 0 4096 20\nA a 0 4096 40\n", NULL, NULL);
	CHECK_EQ(res.ranges_checked, 0);
	CHECK_EQ(res.violations, 0);
	/* An fsync range cutting a write checks only its part. */
	run(&res, "", "W a 4000 200 7 10\nS a 4096 4096 20\nA a 4096 4096 40\n", NULL, NULL);
	CHECK_EQ(res.bytes_checked, 104);
	CHECK_EQ(res.violations, 1);
}

static void test_drain(void)
{
	dt_test_ctx("drain");
	CHECK_EQ(violations("p 0 4096 range 30\n", "W p 0 10 7 10\nS p 0 4096 20\n"
						   "A p 0 4096 40\n"), 1);
	CHECK_EQ(violations("p 0 4096 range 30\np 0 0 drain 35\n",
			    "W p 0 10 7 10\nS p 0 4096 20\nA p 0 4096 40\n"), 0);
	CHECK_EQ(violations("p 0 4096 range 30\np 0 0 drain 45\n",
			    "W p 0 10 7 10\nS p 0 4096 20\nA p 0 4096 40\n"), 1);
	CHECK_EQ(violations("p 0 4096 range 30\np 0 0 drain 25\n",
			    "W p 0 10 7 10\nS p 0 4096 20\nA p 0 4096 40\n"), 1);
	/* A full flush needs no drain of its own (pmem_persist drains). */
	CHECK_EQ(violations("p 0 4194304 full 30\n", "W p 0 10 7 10\nS p 0 4096 20\n"
						     "A p 0 4096 40\n"), 0);
}

/* The fast path: a client flushes from its own mapping and drains itself. */
static void test_client_flush(void)
{
	struct cc_result res;
	unsigned errors;

	dt_test_ctx("client's own flush and drain");
	run(&res, NULL, "W p 0 10 7 10\nS p 0 4096 20\nF p 0 4096 25\nD p 26\nA p 0 4096 40\n",
	    NULL, &errors);
	CHECK_EQ(errors, 0);
	CHECK_EQ(res.violations, 0);
	CHECK_EQ(res.client_flushes, 1);
	dt_test_ctx("client's flush, no drain of its own");
	CHECK_EQ(violations("p 0 0 drain 30\n",
			    "W p 0 10 7 10\nS p 0 4096 20\nF p 0 4096 25\nA p 0 4096 40\n"), 1);
	dt_test_ctx("client's flush, another client's drain");
	run(&res, NULL, "W p 0 10 7 10\nS p 0 4096 20\nF p 0 4096 25\nA p 0 4096 40\n",
	    "D p 30\n", &errors);
	CHECK_EQ(errors, 0);
	CHECK_EQ(res.violations, 1);
	dt_test_ctx("another client's flush and drain cover the page");
	run(&res, NULL, "W p 0 10 7 10\nS p 0 4096 20\nA p 0 4096 40\n",
	    "F p 0 4096 25\nD p 26\n", &errors);
	CHECK_EQ(errors, 0);
	CHECK_EQ(res.violations, 0);
	dt_test_ctx("client's flush before the write");
	CHECK_EQ(violations(NULL, "F p 0 4096 5\nD p 6\nW p 0 10 7 10\nS p 0 4096 20\n"
				  "A p 0 4096 40\n"), 1);
	dt_test_ctx("a late drain of the client, an early one of the daemon after its flush");
	CHECK_EQ(violations("p 0 4096 range 27\np 0 0 drain 28\n",
			    "W p 0 10 7 10\nS p 0 4096 20\nF p 0 4096 25\nA p 0 4096 40\n"
			    "D p 50\n"), 0);
	dt_test_ctx("malformed flush lines");
	run(&res, NULL, "F p 0 4096\nD p\nF q 0 4096 5\nF p 0 0 5\nD p 5 6\n", NULL, &errors);
	CHECK_EQ(errors, 5);
}

static void test_full(void)
{
	dt_test_ctx("recovery flush");
	CHECK_EQ(violations("a 0 8388608 full 15\n", "W a 5000 10 7 10\nS a 0 8192 20\n"
						     "A a 0 8192 40\n"), 0);
	CHECK_EQ(violations("a 0 8388608 full 5\n", "W a 5000 10 7 10\nS a 0 8192 20\n"
						    "A a 0 8192 40\n"), 1);
	CHECK_EQ(violations("a 0 8388608 full 45\n", "W a 5000 10 7 10\nS a 0 8192 20\n"
						     "A a 0 8192 40\n"), 1);
}

static void test_rewrites(void)
{
	struct cc_result res;

	dt_test_ctx("last write");
	/* The same bytes written again after the flush. */
	CHECK_EQ(violations("a 0 4096 range 15\n",
			    "W a 0 10 1 10\nW a 0 10 2 20\nS a 0 4096 25\nA a 0 4096 40\n"), 1);
	/* Other bytes of the page written after the flush: only those fail. */
	run(&res, "a 0 4096 range 15\n",
	    "W a 0 10 1 10\nW a 100 10 2 20\nS a 0 4096 25\nA a 0 4096 40\n", NULL, NULL);
	CHECK_EQ(res.violations, 1);
	if (CHECK_EQ(res.reported, 1)) {
		CHECK_EQ(res.v[0].off, 100);
		CHECK_EQ(res.v[0].len, 10);
		CHECK_EQ(res.v[0].stamp, 2);
	}
	/* Overlapping writes: the older one's uncovered tail is checked with its own time. */
	CHECK_EQ(violations("a 0 4096 range 15\na 4096 4096 range 25\n",
			    "W a 4000 200 1 10\nW a 4090 100 2 20\nS a 0 8192 30\nA a 0 8192 40\n"),
		 1);
}

static void test_outcomes(void)
{
	struct cc_result res;

	dt_test_ctx("failed, proven, still due");
	run(&res, "", "W a 0 10 1 10\nS a 0 4096 20\nX a 0 4096 32 30\n", NULL, NULL);
	CHECK_EQ(res.failed, 1);
	CHECK_EQ(res.acked, 0);
	CHECK_EQ(res.violations, 0);
	/* What a failed fsync did not prove, the next ack must. */
	CHECK_EQ(violations("", "W a 0 10 1 10\nS a 0 4096 20\nX a 0 4096 32 30\n"
				"S a 0 4096 40\nA a 0 4096 50\n"), 1);
	/* Proven once is proven: the later ack needs no new flush. */
	CHECK_EQ(violations("a 0 4096 range 30\n", "W a 0 10 1 10\nS a 0 4096 20\n"
						   "A a 0 4096 40\nS a 0 4096 50\nA a 0 4096 60\n"), 0);
	/* Unproven bytes stay due: reported once more if still not flushed... */
	CHECK_EQ(violations("", "W a 0 10 1 10\nS a 0 4096 20\nA a 0 4096 30\n"
				"S a 0 4096 40\nA a 0 4096 50\n"), 2);
	/* ... and not once flushed. */
	CHECK_EQ(violations("a 0 4096 range 45\n", "W a 0 10 1 10\nS a 0 4096 20\n"
						   "A a 0 4096 30\nS a 0 4096 40\nA a 0 4096 50\n"), 1);

	dt_test_ctx("clients are separate");
	run(&res, "a 0 4096 range 30\n", "W a 0 10 1 10\nS a 0 4096 20\nA a 0 4096 40\n",
	    "W a 0 10 2 35\nS a 0 4096 36\nA a 0 4096 50\n", NULL);
	CHECK_EQ(res.acked, 2);
	CHECK_EQ(res.violations, 1);
	if (CHECK_EQ(res.reported, 1))
		CHECK_EQ(res.v[0].client, 1);
}

static void test_bad_logs(void)
{
	struct cc_result res;
	unsigned errors;

	dt_test_ctx("malformed logs");
	run(&res, "a 0 4096 range\n", NULL, NULL, &errors);	/* no time: old format */
	CHECK_EQ(errors, 1);
	run(&res, "zz 0 4096 range 3\na 0 4096 bogus 3\na 5 4096 full 3\n", NULL, NULL, &errors);
	CHECK_EQ(errors, 3);
	run(&res, "", "A a 0 4096 40\n", NULL, &errors);	/* ack of nothing */
	CHECK_EQ(errors, 1);
	run(&res, "", "S a 0 4096 40\nA a 0 8192 50\n", NULL, &errors);	/* another range */
	CHECK_EQ(errors, 1);
	run(&res, "", "S a 0 4096 40\nA a 0 4096 30\n", NULL, &errors);	/* before it */
	CHECK_EQ(errors, 1);
	run(&res, "", "S a 0 4096 40\nW a 0 1 1 45\nA a 0 4096 50\n", NULL, &errors);
	CHECK_EQ(errors, 1);
	run(&res, "", "S a 0 4096 40\n", NULL, &errors);	/* no outcome */
	CHECK_EQ(errors, 1);
	run(&res, "", "W a 8388600 100 1 1\nW b 0 1 1 1\nW a 0 0 1 1\nQ a 0 1 1\nW a 1\n", NULL,
	    &errors);
	CHECK_EQ(errors, 5);

	dt_test_ctx("a line torn by a kill");
	/* The killed daemon's fragment, then the next one's recovery flush: that counts. */
	CHECK_EQ(violations("a 4096 40a 0 8388608 full 30\n",
			    "W a 100 50 7 10\nS a 0 4096 20\nA a 0 4096 40\n"), 0);
	/* Its fragment is dropped, never counted as a flush. */
	CHECK_EQ(violations("a 0 4096 range 25a 0 8388608 full 45\n",
			    "W a 100 50 7 10\nS a 0 4096 20\nA a 0 4096 40\n"), 1);
	/* A recovery of the write-intent log starts with the ranges it names. */
	CHECK_EQ(violations("a 4096 40a 0 4096 range 30\n",
			    "W a 100 50 7 10\nS a 0 4096 20\nA a 0 4096 40\n"), 0);
	/* A fragment followed by no event is an error. */
	run(&res, "a 4096 40a 0 4096 rang\n", NULL, NULL, &errors);
	CHECK_EQ(errors, 1);
}

static void test_files(void)
{
	char dir[] = "/tmp/dt-chaos-check-XXXXXX", flush[64], client[64];
	struct cc_result res;
	struct cc_world w;
	FILE *f;

	dt_test_ctx("files");
	if (!CHECK(mkdtemp(dir)))
		return;
	snprintf(flush, sizeof(flush), "%s/flush.log", dir);
	snprintf(client, sizeof(client), "%s/client.log", dir);
	f = fopen(flush, "w");
	if (CHECK(f)) {
		fputs("a 0 8388608 full 100\na 8192 8192 range 300\np 0 4096 range 300\n", f);
		fclose(f);
	}
	f = fopen(client, "w");
	if (CHECK(f)) {
		fputs("W a 8192 20 1 50\nW a 12288 20 2 200\nS a 0 16384 250\nA a 0 16384 400\n"
		      "W a 12288 20 3 500\nS a 8192 8192 600\nA a 8192 8192 700\n", f);
		fclose(f);
	}
	cc_init(&w);
	cc_add_region(&w, "a", 8 * MB, false);
	cc_add_region(&w, "p", 4 * MB, true);
	cc_load_flush_log(&w, flush);
	cc_load_client_log(&w, 0, client);
	cc_check(&w, &res);
	CHECK_EQ(w.parse_errors, 0);
	CHECK_EQ(w.flush_lines, 3);
	CHECK_EQ(res.acked, 2);
	CHECK_EQ(res.full_flushes, 1);
	CHECK_EQ(res.violations, 1);	/* stamp 3: written after the last flush */
	if (CHECK_EQ(res.reported, 1)) {
		CHECK_EQ(res.v[0].stamp, 3);
		CHECK_EQ(res.v[0].off, 12288);
		CHECK_EQ(res.v[0].t_last_flush, 300);
	}
	cc_print(&w, &res, stdout);
	cc_load_client_log(&w, 1, "/nonexistent/client.log");
	CHECK_EQ(w.parse_errors, 1);
	cc_free(&w);
	unlink(flush);
	unlink(client);
	rmdir(dir);
}

int main(void)
{
	test_clean();
	test_known_violation();
	test_partial();
	test_drain();
	test_client_flush();
	test_full();
	test_rewrites();
	test_outcomes();
	test_bad_logs();
	test_files();
	return dt_test_done();
}
