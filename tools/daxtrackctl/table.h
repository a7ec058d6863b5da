/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/table.h - the human-readable tables: a header line in
 * capitals, columns separated by two blanks, each as wide as its widest
 * cell (the last one not padded).  For short tables that are collected
 * before printing; `list` streams with fixed widths instead.
 */
#ifndef DAXTRACKCTL_TABLE_H
#define DAXTRACKCTL_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct ctl_table {
	unsigned ncols;
	size_t ncells;
	size_t cap;
	char **cells;
};

/* Start a table with @ncols columns; the first row added is the header. */
void ctl_table_init(struct ctl_table *t, unsigned ncols);

/**
 * ctl_table_add() - Add a row of ncols strings (copied).
 * @t: The table.
 *
 * Return: 0, or -ENOMEM.
 */
int ctl_table_add(struct ctl_table *t, ...);

/* Print the table to @f. */
void ctl_table_print(const struct ctl_table *t, FILE *f);

/**
 * ctl_table_print_fit() - Print the table in at most @max_width columns by
 * cutting the head of the last column's long cells: "...pmem/db.pool" (the
 * tail of a path says more than its head).
 * @t: The table.
 * @f: Where to.
 * @max_width: Columns; 0: no limit.  The other columns are never cut: a row
 *	leaving the last one fewer than 8 columns is printed whole.
 */
void ctl_table_print_fit(const struct ctl_table *t, FILE *f, size_t max_width);

/* Free the table's cells. */
void ctl_table_free(struct ctl_table *t);

/*
 * Print the table unless @err (a failed ctl_table_add()), free it, say "out
 * of memory" if @err.  Return: an exit status, 0 or CTL_EXIT_FAIL.
 */
int ctl_table_done(struct ctl_table *t, int err);

#endif /* DAXTRACKCTL_TABLE_H */
