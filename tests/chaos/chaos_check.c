// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * chaos_check.c - the checker of the chaos test (see chaos_check.h).
 *
 * Loading keeps each region's flush events; cc_check() sorts them and
 * indexes the range flushes by page, then replays each client's log in its
 * own order.  A client's written-but-not-yet-proven bytes are a sorted set
 * of segments (start, end, time and stamp of their last write); a write
 * replaces what it overlaps, an ack checks the segments inside its range
 * page by page and keeps only what failed.  A byte proven flushed for one
 * ack needs no check for a later one: that flush came before the later ack
 * too.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_check.h"

struct cc_seg {
	uint64_t start;
	uint64_t end;
	uint64_t t;
	uint64_t stamp;
};

struct cc_segs {
	struct cc_seg *s;
	size_t n;
	size_t cap;
};

/* Room for one more element; the test cannot go on without memory. */
static void *room(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "chaos check: out of memory\n");
		exit(2);
	}
	return p;
}

static void cc_error(struct cc_world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void cc_error(struct cc_world *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->parse_errors++) {
		va_start(ap, fmt);
		vsnprintf(w->first_error, sizeof(w->first_error), fmt, ap);
		va_end(ap);
	}
}

void cc_init(struct cc_world *w)
{
	memset(w, 0, sizeof(*w));
}

void cc_free(struct cc_world *w)
{
	unsigned i;

	for (i = 0; i < w->nregions; i++) {
		free(w->regions[i].ranges);
		free(w->regions[i].fulls);
		for (unsigned k = 0; k < CC_SOURCES; k++)
			free(w->regions[i].drains[k].t);
		free(w->regions[i].page_start);
		free(w->regions[i].page_flush);
	}
	for (i = 0; i < CC_MAX_CLIENTS; i++)
		free(w->clients[i].ops);
	memset(w, 0, sizeof(*w));
}

int cc_add_region(struct cc_world *w, const char *name, uint64_t size, bool has_drain)
{
	struct cc_region *r;

	if (w->nregions == CC_MAX_REGIONS || strlen(name) >= sizeof(r->name))
		return -1;
	r = &w->regions[w->nregions];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->size = size;
	r->has_drain = has_drain;
	return (int)w->nregions++;
}

static int region_index(const struct cc_world *w, const char *name)
{
	for (unsigned i = 0; i < w->nregions; i++)
		if (!strcmp(w->regions[i].name, name))
			return (int)i;
	return -1;
}

static void add_time(uint64_t **a, size_t *n, size_t *cap, uint64_t t)
{
	*a = room(*a, cap, *n, sizeof(**a));
	(*a)[(*n)++] = t;
}

/* A range flush by @src counts for the pages it covers whole. */
static void add_range(struct cc_region *r, uint64_t off, uint64_t len, uint64_t t, unsigned src)
{
	uint64_t first = (off + CC_PAGE - 1) / CC_PAGE, end = (off + len) / CC_PAGE;

	if (end <= first)
		return;
	r->ranges = room(r->ranges, &r->cap_ranges, r->nranges, sizeof(*r->ranges));
	r->ranges[r->nranges++] = (struct cc_range_ev){ .t = t, .first = first,
							.pages = end - first, .src = src };
}

/* One flush-log event; NULL, or why it is not one (@lineno for the message). */
static const char *flush_event(struct cc_world *w, const char *line, bool apply)
{
	unsigned long long off, len, t;
	char name[64], kind[16];
	struct cc_region *r;
	int ri, end = 0;

	if (sscanf(line, "%63s %llu %llu %15s %llu%n", name, &off, &len, kind, &t, &end) != 5 ||
	    line[end])
		return "not REGION OFF LEN KIND TIME";
	ri = region_index(w, name);
	if (ri < 0)
		return "unknown region";
	r = &w->regions[ri];
	if (strcmp(kind, "range") && strcmp(kind, "drain") && strcmp(kind, "deep") &&
	    (strcmp(kind, "full") || off != 0 || len != r->size))
		return "bad event";
	if (!apply)
		return NULL;
	w->flush_lines++;
	if (!strcmp(kind, "range"))
		add_range(r, off, len, t, CC_SRC_DAEMON);
	else if (!strcmp(kind, "drain"))
		add_time(&r->drains[CC_SRC_DAEMON].t, &r->drains[CC_SRC_DAEMON].n,
			 &r->drains[CC_SRC_DAEMON].cap, t);
	else if (!strcmp(kind, "full"))
		add_time(&r->fulls, &r->nfulls, &r->cap_fulls, t);
	else
		w->deep_flushes++;	/* below the CPU caches: proves nothing here */
	return NULL;
}

/*
 * A daemon killed in the middle of write(2) (a write to a file stops at a
 * page boundary when a fatal signal is pending) leaves the start of a line,
 * and the next daemon's first line, its recovery flush (a full flush, or
 * the ranges its write-intent log names), follows it on the same line.  The
 * longest suffix that is an event counts; the fragment is dropped, which
 * can only add violations, never hide one.
 */
static bool torn_line(struct cc_world *w, const char *line)
{
	for (size_t i = 1; line[i]; i++) {
		const char *rest = line + i;

		if (!flush_event(w, rest, false)) {
			flush_event(w, rest, true);
			w->torn_lines++;
			return true;
		}
	}
	return false;
}

bool cc_flush_line(struct cc_world *w, const char *line, unsigned lineno)
{
	const char *why = flush_event(w, line, true);

	if (!why || torn_line(w, line))
		return true;
	cc_error(w, "flush log line %u: %s: %s", lineno, why, line);
	return false;
}

static bool parse_op(const char *line, struct cc_op *op, char *name)
{
	unsigned long long off, len, x, t;
	int n;

	op->kind = line[0];
	switch (op->kind) {
	case 'W':
		n = sscanf(line, "W %63s %llu %llu %llu %llu", name, &off, &len, &x, &t);
		op->stamp = x;
		break;
	case 'S':
	case 'A':
		n = sscanf(line + 1, " %63s %llu %llu %llu", name, &off, &len, &t) + 1;
		break;
	case 'X':
		n = sscanf(line, "X %63s %llu %llu %d %llu", name, &off, &len, &op->err, &t);
		break;
	default:
		return false;
	}
	op->off = off;
	op->len = len;
	op->t = t;
	return n == 5;
}

/* A client's own flush ("F") or drain ("D"): a flush event of source client + 1. */
static bool client_flush_line(struct cc_world *w, unsigned client, const char *line)
{
	unsigned long long off = 0, len = 1, t;
	struct cc_times *d;
	struct cc_region *r;
	char name[64];
	int ri, end = 0;

	if (line[0] == 'F') {
		if (sscanf(line, "F %63s %llu %llu %llu%n", name, &off, &len, &t, &end) != 4)
			return false;
	} else if (sscanf(line, "D %63s %llu%n", name, &t, &end) != 2) {
		return false;
	}
	ri = region_index(w, name);
	if (line[end] || ri < 0 || !len || off > w->regions[ri].size ||
	    len > w->regions[ri].size - off)
		return false;
	r = &w->regions[ri];
	if (line[0] == 'F') {
		add_range(r, off, len, t, CC_SRC_CLIENT + client);
	} else {
		d = &r->drains[CC_SRC_CLIENT + client];
		add_time(&d->t, &d->n, &d->cap, t);
	}
	return true;
}

bool cc_client_line(struct cc_world *w, unsigned client, const char *line, unsigned lineno)
{
	struct cc_client *c;
	struct cc_op op = { .line = lineno };
	char name[64];
	int ri;

	if (client < CC_MAX_CLIENTS && (line[0] == 'F' || line[0] == 'D')) {
		if (client_flush_line(w, client, line))
			return true;
		cc_error(w, "client %u log line %u: malformed flush: %s", client, lineno, line);
		return false;
	}
	if (client >= CC_MAX_CLIENTS || !parse_op(line, &op, name)) {
		cc_error(w, "client %u log line %u: malformed: %s", client, lineno, line);
		return false;
	}
	ri = region_index(w, name);
	if (ri < 0 || !op.len || op.off > w->regions[ri].size ||
	    op.len > w->regions[ri].size - op.off) {
		cc_error(w, "client %u log line %u: bad region or range: %s", client, lineno, line);
		return false;
	}
	op.region = (uint8_t)ri;
	c = &w->clients[client];
	c->ops = room(c->ops, &c->cap, c->n, sizeof(*c->ops));
	c->ops[c->n++] = op;
	if (client >= w->nclients)
		w->nclients = client + 1;
	return true;
}

static void load(struct cc_world *w, const char *path, int client)
{
	char line[512];
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		cc_error(w, "%s: cannot open", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		lineno++;
		if (client < 0)
			cc_flush_line(w, line, lineno);
		else
			cc_client_line(w, (unsigned)client, line, lineno);
	}
	fclose(f);
}

void cc_load_flush_log(struct cc_world *w, const char *path)
{
	load(w, path, -1);
}

void cc_load_client_log(struct cc_world *w, unsigned client, const char *path)
{
	load(w, path, (int)client);
}

/* ---- the index ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_range(const void *a, const void *b)
{
	return cmp_u64(&((const struct cc_range_ev *)a)->t, &((const struct cc_range_ev *)b)->t);
}

/* The first index whose time is > @t. */
static size_t after(const uint64_t *a, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The time of the first drain by @src at or after @t; 0 if none is needed. */
static uint64_t drain_after(const struct cc_region *r, unsigned src, uint64_t t)
{
	const struct cc_times *d = &r->drains[src];
	size_t i;

	if (!r->has_drain)
		return 0;
	i = t ? after(d->t, d->n, t - 1) : 0;
	return i < d->n ? d->t[i] : UINT64_MAX;
}

static uint64_t region_pages(const struct cc_region *r)
{
	return (r->size + CC_PAGE - 1) / CC_PAGE;
}

static void *zalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "chaos check: out of memory\n");
		exit(2);
	}
	return p;
}

static void build_index(struct cc_region *r)
{
	uint64_t np = region_pages(r), p;
	size_t *fill, i;

	/* qsort() of an empty, never allocated array: NULL is not allowed. */
	for (unsigned k = 0; k < CC_SOURCES; k++)
		if (r->drains[k].n)
			qsort(r->drains[k].t, r->drains[k].n, sizeof(uint64_t), cmp_u64);
	if (r->nfulls)
		qsort(r->fulls, r->nfulls, sizeof(*r->fulls), cmp_u64);
	if (r->nranges)
		qsort(r->ranges, r->nranges, sizeof(*r->ranges), cmp_range);
	free(r->page_start);
	free(r->page_flush);
	r->page_start = zalloc(np + 1, sizeof(*r->page_start));
	for (i = 0; i < r->nranges; i++)
		for (p = r->ranges[i].first; p < r->ranges[i].first + r->ranges[i].pages && p < np;
		     p++)
			r->page_start[p + 1]++;
	for (p = 0; p < np; p++)
		r->page_start[p + 1] += r->page_start[p];
	r->page_flush = zalloc(r->page_start[np], sizeof(*r->page_flush));
	fill = zalloc(np, sizeof(*fill));
	memcpy(fill, r->page_start, np * sizeof(*fill));
	/* In time order, so each page's slice is sorted. */
	for (i = 0; i < r->nranges; i++) {
		struct cc_page_flush pf = { r->ranges[i].t,
					    drain_after(r, r->ranges[i].src, r->ranges[i].t) };

		for (p = r->ranges[i].first; p < r->ranges[i].first + r->ranges[i].pages && p < np;
		     p++)
			r->page_flush[fill[p]++] = pf;
	}
	free(fill);
}

/* The first flush of page @p after @t (in its slice), or the slice's end. */
static size_t page_after(const struct cc_region *r, uint64_t p, uint64_t t)
{
	size_t lo = r->page_start[p], hi = r->page_start[p + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->page_flush[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Was page @p flushed after @tw and, with its flusher's drain, before @ta?
 * Every range flush in (@tw, @ta) is looked at: with several flushers (the
 * daemon and clients flushing themselves) a later flush may have the
 * earlier drain.
 */
static bool page_covered(const struct cc_region *r, uint64_t p, uint64_t tw, uint64_t ta)
{
	size_t i = after(r->fulls, r->nfulls, tw);

	if (i < r->nfulls && r->fulls[i] < ta)
		return true;
	for (i = page_after(r, p, tw); i < r->page_start[p + 1] && r->page_flush[i].t < ta; i++)
		if (r->page_flush[i].drain < ta)
			return true;
	return false;
}

/* The last flush of page @p (range or full) before @ta, 0 if none: for the report. */
static uint64_t last_flush_before(const struct cc_region *r, uint64_t p, uint64_t ta)
{
	size_t i = after(r->fulls, r->nfulls, ta - 1), j = page_after(r, p, ta - 1);
	uint64_t last = i ? r->fulls[i - 1] : 0;

	if (j > r->page_start[p] && r->page_flush[j - 1].t > last)
		last = r->page_flush[j - 1].t;
	return last;
}

/* ---- replaying a client ---- */

static void seg_push(struct cc_segs *s, uint64_t start, uint64_t end, uint64_t t, uint64_t stamp)
{
	if (end <= start)
		return;
	s->s = room(s->s, &s->cap, s->n, sizeof(*s->s));
	s->s[s->n++] = (struct cc_seg){ start, end, t, stamp };
}

static void seg_swap(struct cc_segs *a, struct cc_segs *b)
{
	struct cc_segs t = *a;

	*a = *b;
	*b = t;
	b->n = 0;
}

/* A write: its bytes' last write is now @op. */
static void seg_write(struct cc_segs *set, struct cc_segs *tmp, const struct cc_op *op)
{
	uint64_t start = op->off, end = op->off + op->len;
	struct cc_seg right = { 0 };
	size_t i = 0;

	while (i < set->n && set->s[i].end <= start)
		i++;
	for (size_t k = 0; k < i; k++)
		seg_push(tmp, set->s[k].start, set->s[k].end, set->s[k].t, set->s[k].stamp);
	for (; i < set->n && set->s[i].start < end; i++) {
		seg_push(tmp, set->s[i].start, start, set->s[i].t, set->s[i].stamp);
		if (set->s[i].end > end)
			right = (struct cc_seg){ end, set->s[i].end, set->s[i].t, set->s[i].stamp };
	}
	seg_push(tmp, start, end, op->t, op->stamp);
	seg_push(tmp, right.start, right.end, right.t, right.stamp);
	for (; i < set->n; i++)
		seg_push(tmp, set->s[i].start, set->s[i].end, set->s[i].t, set->s[i].stamp);
	seg_swap(set, tmp);
}

struct ack_ctx {
	const struct cc_world *w;
	struct cc_result *res;
	unsigned client;
	const struct cc_op *sent;
	const struct cc_op *ack;
	struct cc_segs *out;
};

static void violation(struct ack_ctx *x, const struct cc_seg *s, uint64_t a, uint64_t b)
{
	const struct cc_region *r = &x->w->regions[x->ack->region];
	struct cc_violation *v;

	x->res->violations++;
	x->res->violated_bytes += b - a;
	seg_push(x->out, a, b, s->t, s->stamp);	/* still due */
	if (x->res->reported == CC_MAX_REPORTED)
		return;
	v = &x->res->v[x->res->reported++];
	*v = (struct cc_violation){
		.client = x->client, .region = x->ack->region, .off = a, .len = b - a,
		.stamp = s->stamp, .t_write = s->t, .t_sent = x->sent->t, .t_ack = x->ack->t,
		.ack_line = x->ack->line,
		.t_last_flush = last_flush_before(r, a / CC_PAGE, x->ack->t),
	};
}

/* Check bytes [a, b) of segment @s, page by page; what failed stays in x->out. */
static void check_bytes(struct ack_ctx *x, const struct cc_seg *s, uint64_t a, uint64_t b)
{
	const struct cc_region *r = &x->w->regions[x->ack->region];
	uint64_t p, run = 0;
	bool open = false;

	x->res->ranges_checked++;
	x->res->bytes_checked += b - a;
	for (p = a / CC_PAGE; p * CC_PAGE < b; p++) {
		uint64_t pa = p * CC_PAGE > a ? p * CC_PAGE : a;

		x->res->pages_checked++;
		if (!page_covered(r, p, s->t, x->ack->t)) {
			if (!open)
				run = pa;
			open = true;
		} else if (open) {
			violation(x, s, run, pa);
			open = false;
		}
	}
	if (open)
		violation(x, s, run, b);
}

static void check_ack(struct ack_ctx *x, struct cc_segs *set)
{
	uint64_t lo = x->ack->off, hi = x->ack->off + x->ack->len;

	for (size_t i = 0; i < set->n; i++) {
		const struct cc_seg *s = &set->s[i];
		uint64_t a = s->start > lo ? s->start : lo, b = s->end < hi ? s->end : hi;

		if (s->end <= lo || s->start >= hi) {
			seg_push(x->out, s->start, s->end, s->t, s->stamp);
			continue;
		}
		seg_push(x->out, s->start, a, s->t, s->stamp);
		check_bytes(x, s, a, b);
		seg_push(x->out, b, s->end, s->t, s->stamp);
	}
	seg_swap(set, x->out);
}

static bool same_range(const struct cc_op *a, const struct cc_op *b)
{
	return a->region == b->region && a->off == b->off && a->len == b->len;
}

/* An fsync's outcome (A or X) after its S. */
static void outcome(struct cc_world *w, struct cc_result *res, unsigned ci,
		    const struct cc_op *sent, const struct cc_op *op, struct cc_segs *sets,
		    struct cc_segs *tmp)
{
	struct ack_ctx x = { w, res, ci, sent, op, tmp };

	if (!sent || !same_range(sent, op) || op->t < sent->t) {
		cc_error(w, "client %u log line %u: outcome of no fsync sent", ci, op->line);
		return;
	}
	if (op->kind == 'X') {
		res->failed++;
		return;
	}
	res->acked++;
	check_ack(&x, &sets[op->region]);
}

static void replay(struct cc_world *w, struct cc_result *res, unsigned ci)
{
	struct cc_segs sets[CC_MAX_REGIONS] = { { 0 } }, tmp = { 0 };
	const struct cc_client *c = &w->clients[ci];
	const struct cc_op *sent = NULL;

	for (size_t i = 0; i < c->n; i++) {
		const struct cc_op *op = &c->ops[i];

		if (sent && (op->kind == 'W' || op->kind == 'S'))
			cc_error(w, "client %u log line %u: %c during an fsync", ci, op->line,
				 op->kind);
		switch (op->kind) {
		case 'W':
			res->writes++;
			res->bytes_written += op->len;
			seg_write(&sets[op->region], &tmp, op);
			break;
		case 'S':
			res->sent++;
			sent = op;
			break;
		default:
			outcome(w, res, ci, sent, op, sets, &tmp);
			sent = NULL;
			break;
		}
	}
	if (sent)
		cc_error(w, "client %u log line %u: fsync without an outcome", ci, sent->line);
	for (unsigned r = 0; r < CC_MAX_REGIONS; r++)
		free(sets[r].s);
	free(tmp.s);
}

void cc_check(struct cc_world *w, struct cc_result *res)
{
	unsigned i;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < w->nregions; i++) {
		build_index(&w->regions[i]);
		res->range_flushes += w->regions[i].nranges;
		res->full_flushes += w->regions[i].nfulls;
		for (unsigned k = 0; k < CC_SOURCES; k++)
			res->drains += w->regions[i].drains[k].n;
		for (size_t k = 0; k < w->regions[i].nranges; k++)
			res->client_flushes += w->regions[i].ranges[k].src != CC_SRC_DAEMON;
	}
	for (i = 0; i < w->nclients; i++)
		replay(w, res, i);
}

void cc_print(const struct cc_world *w, const struct cc_result *res, FILE *f)
{
	fprintf(f, "checker: %" PRIu64 " writes (%" PRIu64 " bytes), %" PRIu64 " fsyncs sent, %"
		PRIu64 " acknowledged, %" PRIu64 " failed; %" PRIu64 " written ranges (%" PRIu64
		" bytes, %" PRIu64 " pages) checked against %" PRIu64 " range flushes, %" PRIu64
		" full flushes, %" PRIu64 " drains (%" PRIu64 " range flushes by the clients"
		" themselves): %" PRIu64 " violations (%" PRIu64
		" bytes); %u log errors\n", res->writes, res->bytes_written, res->sent, res->acked,
		res->failed, res->ranges_checked, res->bytes_checked, res->pages_checked,
		res->range_flushes, res->full_flushes, res->drains, res->client_flushes,
		res->violations,
		res->violated_bytes, w->parse_errors);
	if (w->parse_errors)
		fprintf(f, "checker: first log error: %s\n", w->first_error);
	for (unsigned i = 0; i < res->reported; i++) {
		const struct cc_violation *v = &res->v[i];

		fprintf(f, "VIOLATION: client %u region \"%s\" bytes [%" PRIu64 ", %" PRIu64
			") (%" PRIu64 " bytes): last written at %" PRIu64 " ns (stamp 0x%" PRIx64
			"), fsync sent at %" PRIu64 ", acknowledged at %" PRIu64
			" (client log line %u); ", v->client, w->regions[v->region].name, v->off,
			v->off + v->len, v->len, v->t_write, v->stamp, v->t_sent, v->t_ack,
			v->ack_line);
		if (v->t_last_flush)
			fprintf(f, "last flush of its first page before the ack at %" PRIu64
				" ns (%+.3f ms from the write)\n", v->t_last_flush,
				((double)v->t_last_flush - (double)v->t_write) / 1e6);
		else
			fprintf(f, "no flush of its first page before the ack\n");
	}
	if (res->violations > res->reported)
		fprintf(f, "VIOLATION: ... and %" PRIu64 " more\n", res->violations - res->reported);
}
