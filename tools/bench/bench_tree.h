/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench_tree.h - what the files of the "tree" section share: query sets and
 * their checked, timed lookups, and tree helpers that report failures.
 */
#ifndef DT_BENCH_TREE_H
#define DT_BENCH_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <daxtrack/tree.h>

#include "bench.h"

#define BT_ONE_M	(1ULL << 20)	/* the default entry and query count */

/* The mixed workload: a 2MiB page is 512 4KiB pages. */
#define BT_PMD_ORDER	9
#define BT_PMD_PAGES	((uint64_t)1 << BT_PMD_ORDER)
#define BT_PMD_FLAG	1ULL		/* in the value of a mixed-workload entry */

/* A set of lookups and the entry each must find. */
struct queries {
	uint64_t n;
	uint64_t *idx;
	void **want;
	uint64_t want_sum;	/* the sum of the wanted entries' bits */
};

/* A timed pass of lookups over a query set, for bench_measure_jobs(). */
struct lookup_arg {
	const char *what;	/* for messages: the tree */
	const char *set;	/* for messages: the query set */
	const struct dt_tree *t;
	const struct queries *q;
	bool twice;		/* the double lookup instead of dt_tree_lookup() */
};

/* Allocates @n queries; returns 0 or -1 after a message. */
int bt_queries_alloc(struct queries *q, uint64_t n, const char *what);

/* Computes want_sum once idx[] and want[] are filled in. */
void bt_queries_seal(struct queries *q);

void bt_queries_free(struct queries *q);

/* Describes an entry for a message: "NULL", "dt_value(0x..)", "pointer 0x..". */
const char *bt_entry_str(char *buf, size_t len, const void *e);

/*
 * The double lookup the multi-order tree replaces: a 2MiB page is an order-0
 * entry at its aligned index whose dt_value carries BT_PMD_FLAG; look there
 * first, then at @index.
 */
void *bt_double_lookup(const struct dt_tree *t, uint64_t index);

/* Checks every query one by one, untimed; 0, or -1 after naming the wrong ones. */
int bt_verify_lookups(const struct lookup_arg *a);

/* bench_rep_fn: one timed pass over a->q; @arg is a struct lookup_arg. */
int bt_rep_lookup(void *arg, uint64_t *ns, uint64_t *ops);

/* These return 0, or -1 after a message naming @what and the call. */
int bt_tree_new(struct dt_tree **t, const char *what);
int bt_tree_insert(struct dt_tree *t, const char *what, uint64_t index, unsigned order,
		   void *entry);
/* dt_tree_check() and the entry count. */
int bt_tree_check(const struct dt_tree *t, const char *what, uint64_t entries);

uint64_t bt_tree_nodes(const struct dt_tree *t);

/* The mixed 4KiB / 2MiB part of the section. */
int bench_tree_mixed(const struct bench_opts *o);

#endif /* DT_BENCH_TREE_H */
