// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_tree_util.c - what the files of dt-bench's "tree" section share
 * (bench_tree.h): query sets and their checked, timed lookups, and tree
 * helpers that report failures.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tree.h"

int bt_queries_alloc(struct queries *q, uint64_t n, const char *what)
{
	q->n = n;
	q->want_sum = 0;
	q->idx = bench_alloc(n, sizeof(*q->idx), what);
	q->want = bench_alloc(n, sizeof(*q->want), what);
	return q->idx && q->want ? 0 : -1;
}

void bt_queries_seal(struct queries *q)
{
	uint64_t i;

	q->want_sum = 0;
	for (i = 0; i < q->n; i++)
		q->want_sum += (uintptr_t)q->want[i];
}

void bt_queries_free(struct queries *q)
{
	free(q->idx);
	free(q->want);
	q->idx = NULL;
	q->want = NULL;
}

/* Describes an entry for a failure message. */
const char *bt_entry_str(char *buf, size_t len, const void *e)
{
	if (!e)
		snprintf(buf, len, "NULL");
	else if (dt_is_value(e))
		snprintf(buf, len, "dt_value(%#" PRIx64 ")", dt_to_value(e));
	else
		snprintf(buf, len, "pointer %p", e);
	return buf;
}

void *bt_double_lookup(const struct dt_tree *t, uint64_t index)
{
	void *e = dt_tree_lookup(t, index & ~(BT_PMD_PAGES - 1));

	if (e && dt_is_value(e) && (dt_to_value(e) & BT_PMD_FLAG))
		return e;
	return dt_tree_lookup(t, index);
}

static void *do_lookup(const struct lookup_arg *a, uint64_t index)
{
	return a->twice ? bt_double_lookup(a->t, index) : dt_tree_lookup(a->t, index);
}

/* Checks every query one by one; reports the first few wrong ones. */
int bt_verify_lookups(const struct lookup_arg *a)
{
	char got_s[64], want_s[64], order_s[64];
	uint64_t i, bad = 0;

	for (i = 0; i < a->q->n; i++) {
		uint64_t idx = a->q->idx[i], base = 0;
		unsigned order = 0;
		void *got = do_lookup(a, idx), *found;

		if (got == a->q->want[i])
			continue;
		if (bad++ >= 5)
			continue;
		found = dt_tree_lookup_order(a->t, idx, &base, &order);
		bench_fail("%s %s: %s(%#" PRIx64 ") found %s, want %s "
			   "(dt_tree_lookup_order: %s, base %#" PRIx64 " order %u)",
			   a->what, a->set, a->twice ? "double lookup" : "dt_tree_lookup", idx,
			   bt_entry_str(got_s, sizeof(got_s), got),
			   bt_entry_str(want_s, sizeof(want_s), a->q->want[i]),
			   bt_entry_str(order_s, sizeof(order_s), found), base, order);
	}
	if (bad)
		bench_fail("%s %s: %" PRIu64 " of %" PRIu64 " lookups wrong", a->what, a->set, bad,
			   a->q->n);
	return bad ? -1 : 0;
}

static uint64_t sum_single(const struct dt_tree *t, const uint64_t *idx, uint64_t n)
{
	uint64_t i, sum = 0;

	for (i = 0; i < n; i++)
		sum += (uintptr_t)dt_tree_lookup(t, idx[i]);
	return sum;
}

static uint64_t sum_double(const struct dt_tree *t, const uint64_t *idx, uint64_t n)
{
	uint64_t i, sum = 0;

	for (i = 0; i < n; i++)
		sum += (uintptr_t)bt_double_lookup(t, idx[i]);
	return sum;
}

int bt_rep_lookup(void *arg, uint64_t *ns, uint64_t *ops)
{
	const struct lookup_arg *a = arg;
	uint64_t t0 = bench_now_ns(), sum;

	if (a->twice)
		sum = sum_double(a->t, a->q->idx, a->q->n);
	else
		sum = sum_single(a->t, a->q->idx, a->q->n);
	*ns = bench_now_ns() - t0;
	*ops = a->q->n;
	bench_sink += sum;
	if (sum == a->q->want_sum)
		return 0;
	bench_fail("%s %s: a measured pass found other entries than the checked one", a->what,
		   a->set);
	bt_verify_lookups(a);
	return -1;
}

int bt_tree_insert(struct dt_tree *t, const char *what, uint64_t index, unsigned order,
		   void *entry)
{
	char buf[64];
	int err = dt_tree_insert(t, index, order, entry);

	if (err)
		bench_fail("%s: dt_tree_insert(%#" PRIx64 ", order %u, %s) = %d (%s)", what, index,
			   order, bt_entry_str(buf, sizeof(buf), entry), err, strerror(-err));
	return err ? -1 : 0;
}

int bt_tree_new(struct dt_tree **t, const char *what)
{
	*t = dt_tree_new();
	if (!*t)
		bench_fail("%s: dt_tree_new: %s", what, strerror(errno));
	return *t ? 0 : -1;
}

int bt_tree_check(const struct dt_tree *t, const char *what, uint64_t entries)
{
	struct dt_tree_stats s;

	if (dt_tree_check(t, stderr)) {
		bench_fail("%s: dt_tree_check failed", what);
		return -1;
	}
	dt_tree_stats(t, &s);
	if (s.entries != entries) {
		bench_fail("%s: stats.entries %" PRIu64 ", want %" PRIu64, what, s.entries,
			   entries);
		return -1;
	}
	return 0;
}

uint64_t bt_tree_nodes(const struct dt_tree *t)
{
	struct dt_tree_stats s;

	dt_tree_stats(t, &s);
	return s.nodes;
}
