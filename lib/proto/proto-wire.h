/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto-wire.h - private to lib/proto*.c: the byte cursors and field checks
 * of the protocol codec, and the message table.
 *
 * Every field is written and read on its own, little endian, through the
 * two cursors below (one bounds check and one fixed-size copy a field:
 * a DIRTY carries thousands of them); nothing ever copies a host struct to
 * or from the wire.  The reader cursor keeps the first error it meets; a
 * short read leaves it at the end, so every read after it gives zeros, and
 * a decoder is a straight list of field reads followed by checks.
 */
#ifndef DAXTRACK_PROTO_WIRE_H
#define DAXTRACK_PROTO_WIRE_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <daxtrack/proto.h>

/* The writer: the size is checked before writing, @end only guards. */
struct wcur {
	uint8_t *p;
	uint8_t *end;
};

static inline void put_u8(struct wcur *w, uint8_t v)
{
	if (w->p < w->end)
		*w->p++ = v;
}

/* @n bytes of @le, already little endian: one check, one copy. */
static inline void put_le(struct wcur *w, const void *le, size_t n)
{
	if ((size_t)(w->end - w->p) < n) {
		w->p = w->end;
		return;
	}
	memcpy(w->p, le, n);
	w->p += n;
}

static inline void put_u16(struct wcur *w, uint16_t v)
{
	v = htole16(v);
	put_le(w, &v, sizeof(v));
}

static inline void put_u32(struct wcur *w, uint32_t v)
{
	v = htole32(v);
	put_le(w, &v, sizeof(v));
}

static inline void put_u64(struct wcur *w, uint64_t v)
{
	v = htole64(v);
	put_le(w, &v, sizeof(v));
}

static inline void put_zero(struct wcur *w, size_t n)
{
	while (n--)
		put_u8(w, 0);
}

/* A fixed string field: the bytes up to the first NUL, then NUL padding. */
static inline void put_str(struct wcur *w, const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	for (size_t i = 0; i < n; i++)
		put_u8(w, (uint8_t)s[i]);
	put_zero(w, size - n);
}

/* The reader: after the first error, reads give zeros and change nothing. */
struct rcur {
	const uint8_t *p;
	const uint8_t *end;
	int err;
};

static inline void rfail(struct rcur *r, int err)
{
	if (!r->err)
		r->err = err;
}

static inline bool rhave(struct rcur *r, size_t n)
{
	if ((size_t)(r->end - r->p) >= n)
		return true;
	rfail(r, -EBADMSG);
	r->p = r->end;
	return false;
}

static inline uint8_t get_u8(struct rcur *r)
{
	if (!rhave(r, 1))
		return 0;
	return *r->p++;
}

/* @n little-endian bytes into @le, or zeros if fewer are left. */
static inline void get_le(struct rcur *r, void *le, size_t n)
{
	if (!rhave(r, n)) {
		memset(le, 0, n);
		return;
	}
	memcpy(le, r->p, n);
	r->p += n;
}

static inline uint16_t get_u16(struct rcur *r)
{
	uint16_t v;

	get_le(r, &v, sizeof(v));
	return le16toh(v);
}

static inline uint32_t get_u32(struct rcur *r)
{
	uint32_t v;

	get_le(r, &v, sizeof(v));
	return le32toh(v);
}

static inline uint64_t get_u64(struct rcur *r)
{
	uint64_t v;

	get_le(r, &v, sizeof(v));
	return le64toh(v);
}

/* Reserved bytes: must be zero. */
static inline void get_reserved(struct rcur *r, size_t n)
{
	while (n--)
		if (get_u8(r))
			rfail(r, -EBADMSG);
}

/* A fixed string field: NUL-terminated inside @size, NUL-padded after. */
static inline void get_str(struct rcur *r, char *dst, size_t size)
{
	bool ended = false;

	for (size_t i = 0; i < size; i++) {
		uint8_t c = get_u8(r);

		if (ended && c)
			rfail(r, -EBADMSG);
		if (!c)
			ended = true;
		dst[i] = (char)c;
	}
	if (!ended) {
		rfail(r, -EBADMSG);
		dst[size - 1] = '\0';
	}
}

/* Field checks: each records the first violation in the cursor. */
static inline void check(struct rcur *r, bool ok, int err)
{
	if (!ok)
		rfail(r, err);
}

static inline void check_range(struct rcur *r, uint64_t offset, uint64_t length)
{
	check(r, length != 0, -EINVAL);
	check(r, length <= UINT64_MAX - offset, -EOVERFLOW);
}

/* A range or, with @whole, the whole region (then both fields are zero). */
static inline void check_opt_range(struct rcur *r, bool whole, uint64_t offset, uint64_t length)
{
	if (whole)
		check(r, offset == 0 && length == 0, -EINVAL);
	else
		check_range(r, offset, length);
}

static inline void check_region_id(struct rcur *r, uint32_t id)
{
	check(r, id != DT_PROTO_ALL_REGIONS, -EINVAL);
}

/* An entry of @order at @base: aligned, and not past 2^64. */
static inline void check_entry_span(struct rcur *r, uint64_t base, unsigned order)
{
	uint64_t size;

	if (order > DT_PROTO_MAX_ORDER) {
		rfail(r, -EINVAL);
		return;
	}
	size = (uint64_t)DT_PROTO_PAGE_SIZE << order;
	check(r, (base & (size - 1)) == 0, -EINVAL);
	check(r, base <= UINT64_MAX - size, -EOVERFLOW);
}

/* The message table (proto-msg.c): payload layouts by opcode and direction. */
struct body_desc {
	uint32_t size;			/* fixed part */
	uint32_t rec_size;		/* records of the variable part, 0: none */
	uint32_t max_count;
	void (*enc)(struct wcur *w, const struct dt_msg *m);
	void (*dec)(struct rcur *r, struct dt_msg *m);
	void (*dec_var)(struct rcur *r, struct dt_msg *m, uint32_t *count);
};

/*
 * @rep_v1: the version-1 reply where it differs (its @enc set), else unused.
 * @rep_v2: the version-2 reply (and version 1 without @rep_v1) where it
 *	differs from the newest, else unused.
 * @rep_v3: the version-3 reply (and the older ones without their own) where
 *	it differs from the newest, else unused.
 * @rep_v4: the version-4 reply (and the older ones without their own) where
 *	it differs from the newest, else unused.
 * @min_version: the first version with the opcode (0: every version).
 */
struct op_desc {
	const char *name;
	unsigned min_version;
	struct body_desc req, rep;
	struct body_desc rep_v1, rep_v2, rep_v3, rep_v4;
};

/* The region flags a version has. */
static inline uint32_t region_flags_of(unsigned version)
{
	if (version >= DT_PROTO_VERSION_GROW)
		return DT_REGION_FLAGS_ALL;
	return version >= 2 ? DT_REGION_FLAGS_V4 : DT_REGION_FLAGS_V1;
}

/* Region flags as sent in @version: without the bits only later versions have. */
static inline uint32_t region_flags_for(uint32_t flags, unsigned version)
{
	if (version < 2)
		flags &= ~DT_REGION_SPARSE;
	return version < DT_PROTO_VERSION_GROW ? flags & ~DT_REGION_GROWS : flags;
}

/* Indexed by opcode; entries outside DT_OP_FIRST..DT_OP_LAST are empty. */
extern const struct op_desc dt_proto_ops[DT_OP_LAST + 1];

/* The records of the variable parts (proto-record.c). */
void dt_proto_enc_range(struct wcur *w, const struct dt_proto_range *x);
void dt_proto_dec_range(struct rcur *r, struct dt_proto_range *x);
void dt_proto_enc_region(struct wcur *w, const struct dt_proto_region *x, unsigned version);
void dt_proto_dec_region(struct rcur *r, struct dt_proto_region *x, unsigned version);
void dt_proto_enc_entry(struct wcur *w, const struct dt_proto_entry *x);
void dt_proto_dec_entry(struct rcur *r, struct dt_proto_entry *x);
void dt_proto_enc_rstats(struct wcur *w, const struct dt_proto_region_stats *x, unsigned version);
void dt_proto_dec_rstats(struct rcur *r, struct dt_proto_region_stats *x, unsigned version);
/* The size of a STATS region record in @version. */
size_t dt_proto_rstats_size(unsigned version);
void dt_proto_enc_ns(struct wcur *w, const struct dt_proto_namespace *x);
void dt_proto_dec_ns(struct rcur *r, struct dt_proto_namespace *x);
void dt_proto_enc_failed(struct wcur *w, const struct dt_proto_failed *x);
void dt_proto_dec_failed(struct rcur *r, struct dt_proto_failed *x);

/* The CXL reply and its records (proto-cxl.c); record @i of @m's variable part. */
void dt_proto_enc_cxl_rep(struct wcur *w, const struct dt_msg *m);
void dt_proto_dec_cxl_rep(struct rcur *r, struct dt_msg *m, uint32_t *count);
void dt_proto_dec_cxl_memdev(struct rcur *r, struct dt_proto_cxl_memdev *x);
void dt_proto_dec_cxl_region(struct rcur *r, struct dt_proto_cxl_region *x);
void dt_proto_dec_cxl_record(struct rcur *r, const struct dt_msg *m, uint32_t i);

#endif /* DAXTRACK_PROTO_WIRE_H */
