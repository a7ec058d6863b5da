// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-batch.c - sets of byte ranges: the client's dirty batches and its
 * record of acknowledged ranges not yet covered by an fsync.
 *
 * A set is a sorted array of disjoint ranges; touching ranges are merged, so
 * the usual pattern of a writer (appending, or rewriting the same pages)
 * keeps the set small and an insertion at the end costs no memmove.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client-private.h"

static uint64_t range_end(const struct dt_proto_range *r)
{
	return r->offset + r->length;
}

/* The first range whose end is at or after @pos (touching counts). */
static uint32_t first_reaching(const struct dt_rset *s, uint64_t pos)
{
	uint32_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (range_end(&s->r[mid]) < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int grow(struct dt_rset *s, uint32_t want)
{
	struct dt_proto_range *r;
	uint32_t cap;

	if (want <= s->cap)
		return 0;
	cap = s->cap ? s->cap : 16;
	while (cap < want)
		cap *= 2;
	r = realloc(s->r, (size_t)cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

int dt_rset_add(struct dt_rset *s, uint64_t start, uint64_t end)
{
	uint32_t i, j;
	int err;

	if (end <= start)
		return 0;
	/* The common case: past the last range. */
	if (s->n && range_end(&s->r[s->n - 1]) < start)
		i = j = s->n;
	else
		i = j = first_reaching(s, start);
	while (j < s->n && s->r[j].offset <= end) {
		if (s->r[j].offset < start)
			start = s->r[j].offset;
		if (range_end(&s->r[j]) > end)
			end = range_end(&s->r[j]);
		j++;
	}
	if (j == i) {
		err = grow(s, s->n + 1);
		if (err)
			return err;
		memmove(&s->r[i + 1], &s->r[i], (size_t)(s->n - i) * sizeof(*s->r));
		s->n++;
	} else if (j > i + 1) {
		memmove(&s->r[i + 1], &s->r[j], (size_t)(s->n - j) * sizeof(*s->r));
		s->n -= j - i - 1;
	}
	s->r[i].offset = start;
	s->r[i].length = end - start;
	return 0;
}

int dt_rset_add_set(struct dt_rset *s, const struct dt_rset *from, uint32_t count)
{
	int err;

	if (count > from->n)
		count = from->n;
	for (uint32_t i = 0; i < count; i++) {
		err = dt_rset_add(s, from->r[i].offset, range_end(&from->r[i]));
		if (err)
			return err;
	}
	return 0;
}

/*
 * Remove [start, end).  Cutting a hole in one range needs one more slot; if
 * that allocation fails the range is kept whole: the set then says more is
 * dirty than is, which costs a flush, never a loss.
 */
void dt_rset_sub(struct dt_rset *s, uint64_t start, uint64_t end)
{
	uint32_t i, out;

	if (end <= start)
		return;
	i = first_reaching(s, start + 1);
	out = i;
	for (; i < s->n; i++) {
		struct dt_proto_range r = s->r[i];
		uint64_t r_end = range_end(&r);

		if (r.offset >= end)
			break;
		if (r.offset < start && r_end > end) {
			if (grow(s, s->n + 1)) {
				out = ++i;
				break;
			}
			memmove(&s->r[i + 1], &s->r[i], (size_t)(s->n - i) * sizeof(*s->r));
			s->n++;
			s->r[i].length = start - r.offset;
			s->r[i + 1].offset = end;
			s->r[i + 1].length = r_end - end;
			return;
		}
		if (r.offset < start) {
			s->r[out].offset = r.offset;
			s->r[out++].length = start - r.offset;
		} else if (r_end > end) {
			s->r[out].offset = end;
			s->r[out++].length = r_end - end;
		}
	}
	if (out != i) {
		memmove(&s->r[out], &s->r[i], (size_t)(s->n - i) * sizeof(*s->r));
		s->n -= i - out;
	}
}

bool dt_rset_overlaps(const struct dt_rset *s, uint64_t start, uint64_t end)
{
	uint32_t i;

	if (end <= start)
		return false;
	i = first_reaching(s, start + 1);
	return i < s->n && s->r[i].offset < end;
}

void dt_rset_drop_first(struct dt_rset *s, uint32_t count)
{
	if (count >= s->n) {
		s->n = 0;
		return;
	}
	memmove(&s->r[0], &s->r[count], (size_t)(s->n - count) * sizeof(*s->r));
	s->n -= count;
}

void dt_rset_collapse(struct dt_rset *s)
{
	if (s->n < 2)
		return;
	s->r[0].length = range_end(&s->r[s->n - 1]) - s->r[0].offset;
	s->n = 1;
}

void dt_rset_clear(struct dt_rset *s)
{
	s->n = 0;
}

void dt_rset_free(struct dt_rset *s)
{
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}
