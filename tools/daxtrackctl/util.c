// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/util.c - sizes, offsets, ranges and times, parsed and
 * formatted.  See util.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <daxtrack/proto.h>

#include "util.h"

static int fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

/* The shift of a suffix at @s ("", "K", "kiB", ...), or -1 if there is none. */
static int suffix_shift(const char *s)
{
	static const char units[] = "KMGT";
	const char *u;

	if (!*s)
		return 0;
	u = strchr(units, toupper((unsigned char)*s));
	if (!u)
		return -1;
	s++;
	if (*s && strcmp(s, "iB") && strcmp(s, "ib") && strcmp(s, "IB") && strcmp(s, "Ib"))
		return -1;
	return 10 * (int)(u - units + 1);
}

/* Digits of base @base at @s: the value and the end; -ERANGE past 64 bits. */
static int parse_digits(const char *s, unsigned base, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	int n = 0;

	for (; *s; s++, n++) {
		unsigned d;

		if (isdigit((unsigned char)*s))
			d = (unsigned)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*end = s;
	*out = v;
	return n ? 0 : -EINVAL;
}

int ctl_parse_size(const char *s, uint64_t *out, const char **why)
{
	const char *end;
	unsigned base = 10;
	uint64_t v;
	int shift, err;

	if (!s || !*s)
		return fail(why, "empty", -EINVAL);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s) || (base == 10 && !isdigit((unsigned char)*s)))
		return fail(why, "not a number", -EINVAL);
	err = parse_digits(s, base, &v, &end);
	if (err == -ERANGE)
		return fail(why, "too large", -ERANGE);
	if (err)
		return fail(why, "not a number", -EINVAL);
	if (*end && !isalpha((unsigned char)*end))
		return fail(why, "not a number", -EINVAL);
	shift = suffix_shift(end);
	if (shift < 0)
		return fail(why, "unknown suffix (K, M, G or T)", -EINVAL);
	if (shift && v > (UINT64_MAX >> shift))
		return fail(why, "too large", -ERANGE);
	*out = v << shift;
	return 0;
}

int ctl_parse_range(const char *s, uint64_t *offset, uint64_t *length, const char **why)
{
	char first[64];
	const char *sep;
	uint64_t a, b;
	size_t n;
	int err;

	sep = s ? strpbrk(s, "-+") : NULL;
	if (!sep)
		return fail(why, "expected A-B or A+LENGTH", -EINVAL);
	n = (size_t)(sep - s);
	if (n >= sizeof(first))
		return fail(why, "not a number", -EINVAL);
	memcpy(first, s, n);
	first[n] = '\0';
	err = ctl_parse_size(first, &a, why);
	if (err)
		return err;
	err = ctl_parse_size(sep + 1, &b, why);
	if (err)
		return err;
	if (*sep == '+') {
		if (!b)
			return fail(why, "empty range", -EINVAL);
		if (b > UINT64_MAX - a)
			return fail(why, "end past 2^64", -ERANGE);
		*offset = a;
		*length = b;
		return 0;
	}
	if (b == a)
		return fail(why, "empty range", -EINVAL);
	if (b < a)
		return fail(why, "end below start", -EINVAL);
	*offset = a;
	*length = b - a;
	return 0;
}

int ctl_parse_count(const char *s, uint64_t *out, const char **why)
{
	const char *end;
	uint64_t v;
	int err;

	if (!s || !isdigit((unsigned char)*s))
		return fail(why, "not a number", -EINVAL);
	err = parse_digits(s, 10, &v, &end);
	if (err == -ERANGE)
		return fail(why, "too large", -ERANGE);
	if (err || *end)
		return fail(why, "not a number", -EINVAL);
	if (!v)
		return fail(why, "must be at least 1", -EINVAL);
	*out = v;
	return 0;
}

int ctl_parse_interval(const char *s, uint64_t *ms, const char **why)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return fail(why, "not a number", -EINVAL);
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return fail(why, "not a number", -EINVAL);
	if (v < 0.1 - 1e-9)
		return fail(why, "must be at least 0.1 seconds", -EINVAL);
	if (v > 86400)
		return fail(why, "must be at most one day", -ERANGE);
	*ms = (uint64_t)(v * 1000 + 0.5);
	return 0;
}

char *ctl_fmt_size(uint64_t v, char *buf)
{
	static const char units[] = "KMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		unsigned shift = 10 * (unsigned)(i + 1);
		uint64_t mask = (UINT64_C(1) << shift) - 1;

		if (v && !(v & mask)) {
			snprintf(buf, CTL_FMT_LEN, "%" PRIu64 "%c", v >> shift, units[i]);
			return buf;
		}
	}
	snprintf(buf, CTL_FMT_LEN, "%" PRIu64, v);
	return buf;
}

char *ctl_fmt_bytes(uint64_t v, char *buf)
{
	static const char units[] = "KMGT";
	int top = -1, i;

	while (top < 3 && v >> (10 * (top + 2)))
		top++;
	if (top < 0) {
		snprintf(buf, CTL_FMT_LEN, "%" PRIu64 " B", v);
		return buf;
	}
	/* Exact in the largest unit that divides, while that reads short. */
	for (i = top; i >= 0; i--) {
		unsigned shift = 10 * (unsigned)(i + 1);

		if (!(v & ((UINT64_C(1) << shift) - 1)) && v >> shift < 10000) {
			snprintf(buf, CTL_FMT_LEN, "%" PRIu64 " %ciB", v >> shift, units[i]);
			return buf;
		}
	}
	snprintf(buf, CTL_FMT_LEN, "%.1f %ciB",
		 (double)v / (double)(UINT64_C(1) << (10 * (top + 1))), units[top]);
	return buf;
}

const char *ctl_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

char *ctl_fmt_offset(uint64_t v, char *buf)
{
	snprintf(buf, CTL_FMT_LEN, "0x%" PRIx64, v);
	return buf;
}

char *ctl_fmt_uptime(uint64_t s, char *buf)
{
	if (s < 60)
		snprintf(buf, CTL_FMT_LEN, "%" PRIu64 "s", s);
	else if (s < 3600)
		snprintf(buf, CTL_FMT_LEN, "%" PRIu64 "m %" PRIu64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, CTL_FMT_LEN, "%" PRIu64 "h %" PRIu64 "m", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, CTL_FMT_LEN, "%" PRIu64 "d %" PRIu64 "h", s / 86400, s % 86400 / 3600);
	return buf;
}

char *ctl_fmt_time_ns(uint64_t ns, char *buf)
{
	if (ns < 1000)
		snprintf(buf, CTL_FMT_LEN, "%" PRIu64 " ns", ns);
	else if (ns < 100000)
		snprintf(buf, CTL_FMT_LEN, "%.1f us", (double)ns / 1e3);
	else if (ns < UINT64_C(1000000000))
		snprintf(buf, CTL_FMT_LEN, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, CTL_FMT_LEN, "%.2f s", (double)ns / 1e9);
	return buf;
}

char *ctl_fmt_rate(double v, char *buf)
{
	static const char units[] = "KMGT";
	int i = -1;

	if (!(v >= 0) || v < 1024) {
		snprintf(buf, CTL_FMT_LEN, "%.0fB/s", v >= 0 ? v : 0);
		return buf;
	}
	while (v >= 1024 && i < 3) {
		v /= 1024;
		i++;
	}
	snprintf(buf, CTL_FMT_LEN, "%.1f%c/s", v, units[i]);
	return buf;
}

const char *const ctl_entry_flag_names[] = { "pmd", "zero", "empty", NULL };
const unsigned ctl_entry_flag_bits[] = { DT_PROTO_ENTRY_PMD, DT_PROTO_ENTRY_ZERO,
					 DT_PROTO_ENTRY_EMPTY, 0 };
const char *const ctl_tag_names[] = { "dirty", "towrite", "logged", NULL };
const unsigned ctl_tag_bits[] = { DT_PROTO_TAG_DIRTY, DT_PROTO_TAG_TOWRITE, DT_PROTO_TAG_LOGGED,
				  0 };

const char *ctl_region_type(uint32_t region_flags)
{
	return region_flags & DT_REGION_DEVDAX ? "devdax" : "file";
}

const char *ctl_yes_no(bool b)
{
	return b ? "yes" : "no";
}

char *ctl_fmt_names(unsigned bits, const char *const *names, const unsigned *masks, char *buf)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; names[i]; i++) {
		if (!(bits & masks[i]))
			continue;
		len += (size_t)snprintf(buf + len, CTL_FMT_LEN - len, "%s%s", len ? "," : "",
					names[i]);
		if (len >= CTL_FMT_LEN)
			break;
	}
	if (!buf[0])
		strcpy(buf, "-");
	return buf;
}
