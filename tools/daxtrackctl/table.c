// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/table.c - aligned human-readable tables.  See table.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "table.h"

void ctl_table_init(struct ctl_table *t, unsigned ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
}

int ctl_table_add(struct ctl_table *t, ...)
{
	va_list ap;
	unsigned i;
	int err = 0;

	if (t->ncells + t->ncols > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16 * t->ncols;
		char **cells = realloc(t->cells, cap * sizeof(*cells));

		if (!cells)
			return -ENOMEM;
		t->cells = cells;
		t->cap = cap;
	}
	va_start(ap, t);
	for (i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);

		t->cells[t->ncells + i] = strdup(s ? s : "-");
		if (!t->cells[t->ncells + i])
			err = -ENOMEM;
	}
	va_end(ap);
	t->ncells += t->ncols;
	return err;
}

/* The last cell of a row, its head cut to @room columns ("...TAIL") if longer. */
static void print_last(const char *s, size_t room, FILE *f)
{
	size_t len = strlen(s);

	if (!room || len <= room || room < 8)
		fprintf(f, "%s\n", s);
	else
		fprintf(f, "...%s\n", s + len - (room - 3));
}

void ctl_table_print_fit(const struct ctl_table *t, FILE *f, size_t max_width)
{
	size_t width[16] = { 0 }, before_last = 0, room = 0;
	size_t i;
	unsigned c;

	for (i = 0; i < t->ncells; i++) {
		size_t len = t->cells[i] ? strlen(t->cells[i]) : 0;

		c = (unsigned)(i % t->ncols);
		if (c < 16 && len > width[c])
			width[c] = len;
	}
	for (c = 0; c + 1 < t->ncols; c++)
		before_last += (c < 16 ? width[c] : 0) + 2;
	if (max_width)
		room = max_width > before_last ? max_width - before_last : 1;
	for (i = 0; i < t->ncells; i += t->ncols) {
		for (c = 0; c < t->ncols; c++) {
			const char *s = t->cells[i + c] ? t->cells[i + c] : "";

			if (c + 1 == t->ncols)
				print_last(s, room, f);
			else
				fprintf(f, "%-*s  ", (int)(c < 16 ? width[c] : 0), s);
		}
	}
}

void ctl_table_print(const struct ctl_table *t, FILE *f)
{
	ctl_table_print_fit(t, f, 0);
}

void ctl_table_free(struct ctl_table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

int ctl_table_done(struct ctl_table *t, int err)
{
	if (!err)
		ctl_table_print(t, stdout);
	ctl_table_free(t);
	if (err)
		fprintf(stderr, "daxtrackctl: out of memory\n");
	return err ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}
