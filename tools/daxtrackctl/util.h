/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/util.h - parsing and formatting of sizes, offsets,
 * ranges, intervals and times for daxtrackctl.
 *
 * Parsers never print: they return 0 or a negative errno and, on error, a
 * static string saying why, for the caller to put in its message.  The
 * formatters write into a caller's buffer of at least CTL_FMT_LEN bytes and
 * return it, so they can be used as printf() arguments.
 */
#ifndef DAXTRACKCTL_UTIL_H
#define DAXTRACKCTL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_FMT_LEN	32

/**
 * ctl_parse_size() - Parse a size or an offset.
 * @s: Decimal ("4096") or hexadecimal with 0x ("0x200000"), optionally
 *     followed by K, M, G or T (either case, optionally then "iB"), each a
 *     power of 1024: "64K", "2M", "1GiB", "0x10M".
 * @out: Receives the value in bytes.
 * @why: On error, receives the reason ("not a number", "unknown suffix",
 *	 "too large"); may be NULL.
 *
 * Context: Any thread.
 * Return: 0; -EINVAL for a malformed string; -ERANGE if the value does not
 * fit in 64 bits.
 */
int ctl_parse_size(const char *s, uint64_t *out, const char **why);

/**
 * ctl_parse_range() - Parse a byte range.
 * @s: "A-B" (the bytes from A up to but not including B) or "A+LEN".
 * @offset: Receives A.
 * @length: Receives the length, >= 1.
 * @why: On error, the reason; may be NULL.
 *
 * Context: Any thread.
 * Return: 0; -EINVAL for a malformed number or separator, an empty range or
 * an end below the start; -ERANGE for a number or an end past 2^64 - 1.
 */
int ctl_parse_range(const char *s, uint64_t *offset, uint64_t *length, const char **why);

/**
 * ctl_parse_count() - Parse a decimal count (no suffix), >= 1.
 * @s: The string.
 * @out: Receives the count.
 * @why: On error, the reason; may be NULL.
 *
 * Return: 0, or -EINVAL / -ERANGE.
 */
int ctl_parse_count(const char *s, uint64_t *out, const char **why);

/**
 * ctl_parse_interval() - Parse an interval in seconds, fractions allowed.
 * @s: "1", "0.5"; at least 0.1, at most one day.
 * @ms: Receives the interval in milliseconds.
 * @why: On error, the reason; may be NULL.
 *
 * Return: 0, or -EINVAL / -ERANGE.
 */
int ctl_parse_interval(const char *s, uint64_t *ms, const char **why);

/**
 * ctl_fmt_size() - Format a size with the largest of K, M, G, T that divides
 * it exactly: "4K", "2M", "1G", "1536K"; plain bytes below 1K or when no
 * unit divides it ("1000", "1025").
 * @v: Bytes.
 * @buf: At least CTL_FMT_LEN bytes.
 *
 * Return: @buf.
 */
char *ctl_fmt_size(uint64_t v, char *buf);

/**
 * ctl_fmt_bytes() - Format an amount of bytes for people, always with a unit:
 * "0 B", "1023 B", "4 KiB", "2052 KiB", "64 MiB"; exact in the largest of
 * KiB, MiB, GiB, TiB that divides it (below 10000 of it), else to one
 * decimal of the largest unit not above it: "7.5 KiB", "1.0 KiB" (1025).
 * @v: Bytes.
 * @buf: At least CTL_FMT_LEN bytes.
 *
 * Return: @buf.
 */
char *ctl_fmt_bytes(uint64_t v, char *buf);

/* @one if @n is 1, else @many: "1 entry", "2 entries". */
const char *ctl_plural(uint64_t n, const char *one, const char *many);

/**
 * ctl_fmt_offset() - Format an offset in hexadecimal: "0x0", "0x200000".
 * @v: The offset.
 * @buf: At least CTL_FMT_LEN bytes.
 *
 * Return: @buf.
 */
char *ctl_fmt_offset(uint64_t v, char *buf);

/**
 * ctl_fmt_uptime() - Format a duration in seconds for people: "42s",
 * "5m 3s", "2h 13m", "3d 4h".
 * @seconds: The duration.
 * @buf: At least CTL_FMT_LEN bytes.
 *
 * Return: @buf.
 */
char *ctl_fmt_uptime(uint64_t seconds, char *buf);

/**
 * ctl_fmt_time_ns() - Format a short duration: "850 ns", "12.5 us",
 * "0.3 ms", "1.25 s".
 * @ns: Nanoseconds.
 * @buf: At least CTL_FMT_LEN bytes.
 *
 * Return: @buf.
 */
char *ctl_fmt_time_ns(uint64_t ns, char *buf);

/**
 * ctl_fmt_rate() - Format a rate in bytes per second with a binary unit of
 * one decimal: "0B/s", "512B/s", "1.5K/s", "200.0M/s".
 * @bytes_per_second: The rate.
 * @buf: At least CTL_FMT_LEN bytes.
 *
 * Return: @buf.
 */
char *ctl_fmt_rate(double bytes_per_second, char *buf);

/* Names of protocol values, as the man page and the JSON schema spell them. */

/* "devdax" or "file", from DT_REGION_* flags. */
const char *ctl_region_type(uint32_t region_flags);

/* "yes" or "no". */
const char *ctl_yes_no(bool b);

/* The names of the entry flags (DT_PROTO_ENTRY_* but LOCKED): "pmd", "zero",
 * "empty"; of the tags (DT_PROTO_TAG_*): "dirty", "towrite".  NULL-terminated. */
extern const char *const ctl_entry_flag_names[];
extern const unsigned ctl_entry_flag_bits[];
extern const char *const ctl_tag_names[];
extern const unsigned ctl_tag_bits[];

/**
 * ctl_fmt_names() - Join the names of the bits set: "pmd,zero", or "-".
 * @bits: The value.
 * @names: NULL-terminated names.
 * @masks: The bit of each name.
 * @buf: At least CTL_FMT_LEN bytes.
 *
 * Return: @buf.
 */
char *ctl_fmt_names(unsigned bits, const char *const *names, const unsigned *masks, char *buf);

#endif /* DAXTRACKCTL_UTIL_H */
