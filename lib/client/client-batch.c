// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-batch.c - sets of byte ranges: the client's dirty batches and its
 * record of acknowledged ranges not yet covered by an fsync.
 *
 * A set is a sorted array of disjoint ranges; touching ranges are merged, so
 * the usual pattern of a writer (appending, or rewriting the same pages)
 * keeps the set small and an insertion at the end costs no memmove.
 * Adding a set (an acknowledged batch) to another moves no range for those
 * patterns, and costs one pass over both, not one memmove a range, when its
 * ranges fall between or join others (every even page, then every odd one).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client-private.h"

static uint64_t range_end(const struct dt_proto_range *r)
{
	return r->offset + r->length;
}

/* The first range of [@lo, @hi) whose end is at or after @pos (touching counts). */
static uint32_t search_reaching(const struct dt_rset *s, uint32_t lo, uint32_t hi, uint64_t pos)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (range_end(&s->r[mid]) < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t first_reaching(const struct dt_rset *s, uint64_t pos)
{
	return search_reaching(s, 0, s->n, pos);
}

/*
 * The same, knowing that no range before @lo reaches @pos: a galloping
 * search from @lo, which costs the log of the distance to the answer, not
 * of the set (a sorted set added to a large one lands near its last place).
 */
static uint32_t first_reaching_from(const struct dt_rset *s, uint32_t lo, uint64_t pos)
{
	uint64_t step = 1;

	if (lo >= s->n || range_end(&s->r[lo]) >= pos)
		return lo;
	/* r[lo] ends before @pos; double the step until a range reaches it. */
	while (lo + step < s->n && range_end(&s->r[lo + step]) < pos) {
		lo += (uint32_t)step;
		step *= 2;
	}
	return search_reaching(s, lo + 1, lo + step < s->n ? lo + (uint32_t)step : s->n, pos);
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
	/* The common case, past the last range, without a search. */
	if (s->n && range_end(&s->r[s->n - 1]) >= start)
		i = first_reaching(s, start);
	else
		i = s->n;
	for (j = i; j < s->n && s->r[j].offset <= end; j++) {
		if (s->r[j].offset < start)
			start = s->r[j].offset;
		if (range_end(&s->r[j]) > end)
			end = range_end(&s->r[j]);
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

/* Append [@start, @end) to the sorted @out of *@n ranges, merging what it touches. */
static void merge_push(struct dt_proto_range *out, uint32_t *n, uint64_t start, uint64_t end)
{
	struct dt_proto_range *last = *n ? &out[*n - 1] : NULL;

	if (last && range_end(last) >= start) {
		if (end > range_end(last))
			last->length = end - last->offset;
		return;
	}
	out[*n].offset = start;
	out[(*n)++].length = end - start;
}

/*
 * Merge @count sorted, apart ranges of @b into @s in one pass: a new array
 * of the union, so that every range of @s moves once however many of them
 * the ranges of @b join or fall between.
 */
static int rset_merge(struct dt_rset *s, const struct dt_proto_range *b, uint32_t count)
{
	struct dt_proto_range *out;
	uint32_t i = 0, j = 0, n = 0, cap = s->n + count;

	out = malloc((size_t)cap * sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (i < s->n || j < count) {
		const struct dt_proto_range *r;

		if (j == count || (i < s->n && s->r[i].offset <= b[j].offset))
			r = &s->r[i++];
		else
			r = &b[j++];
		merge_push(out, &n, r->offset, range_end(r));
	}
	free(s->r);
	s->r = out;
	s->n = n;
	s->cap = cap;
	return 0;
}

/*
 * Add [@start, @end) if that moves no other range: it lies in, or extends,
 * exactly one range at or after @from, or goes past the last.  Return: 0
 * (*@at: where it is), 1 when it would insert or join ranges in the middle.
 */
static int rset_add_in_place(struct dt_rset *s, uint32_t from, uint64_t start, uint64_t end,
			     uint32_t *at)
{
	uint32_t i;

	if (s->n && range_end(&s->r[s->n - 1]) < start)
		i = s->n;
	else
		i = first_reaching_from(s, from, start);
	if (i < s->n && s->r[i].offset <= end) {
		if (i + 1 < s->n && s->r[i + 1].offset <= end)
			return 1;
	} else if (i < s->n) {
		return 1;
	}
	if (i == s->n) {
		if (grow(s, s->n + 1))
			return -ENOMEM;
		s->r[s->n].offset = start;
		s->r[s->n++].length = end - start;
	} else {
		start = start < s->r[i].offset ? start : s->r[i].offset;
		end = end > range_end(&s->r[i]) ? end : range_end(&s->r[i]);
		s->r[i].offset = start;
		s->r[i].length = end - start;
	}
	*at = i;
	return 0;
}

/*
 * The ranges of @from are sorted and apart, so each one's place is at or
 * after the last one's: into an empty set they are copied; into another,
 * each search starts where the last one ended, and those that fall in,
 * extend one range or go past the end are added in place.  At the first
 * that would move ranges (insert between two, join two), the rest is merged
 * in one pass: adding a set costs at most one copy of @s, never one memmove
 * per range (which was quadratic for marks between earlier ones, e.g. every
 * even page and then every odd one).
 */
int dt_rset_add_set(struct dt_rset *s, const struct dt_rset *from, uint32_t count)
{
	uint32_t at = 0;
	int err;

	if (count > from->n)
		count = from->n;
	if (!count)
		return 0;
	if (!s->n) {
		err = grow(s, count);
		if (err)
			return err;
		memcpy(s->r, from->r, (size_t)count * sizeof(*s->r));
		s->n = count;
		return 0;
	}
	for (uint32_t i = 0; i < count; i++) {
		err = rset_add_in_place(s, at, from->r[i].offset, range_end(&from->r[i]), &at);
		if (err < 0)
			return err;
		if (err)
			return rset_merge(s, &from->r[i], count - i);
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
