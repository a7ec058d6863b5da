// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto.c - encoding and decoding of daxtrack protocol messages: the header,
 * the dispatch to the payload codecs of proto-msg.c, the record accessors
 * and the names.
 *
 * Fixed payloads have their exact size checked before any read, variable
 * ones their count against the limit and the remaining bytes, so no read can
 * run past the packet (the cursors of proto-wire.h guard it once more).  The
 * encoder validates its output with the decoder.
 */
#include <errno.h>
#include <string.h>

#include <daxtrack/proto.h>

#include "proto-wire.h"

_Static_assert(DT_OP_LAST < DT_PROTO_STATS_OPS, "every opcode has a STATS slot");

static const struct op_desc *op_desc(unsigned op)
{
	if (op < DT_OP_FIRST || op > DT_OP_LAST)
		return NULL;
	return &dt_proto_ops[op];
}

/* The opcode as its message's version knows it: NULL if unknown there. */
static const struct op_desc *op_desc_of(const struct dt_msg *m)
{
	const struct op_desc *d = op_desc(m->op);

	if (!d || m->version < d->min_version)
		return NULL;
	return d;
}

/* The payload layout of @m in its version. */
static const struct body_desc *body_desc(const struct dt_msg *m)
{
	const struct op_desc *d = op_desc_of(m);

	if (!d)
		return NULL;
	if (!(m->flags & DT_PROTO_F_REPLY))
		return &d->req;
	if (m->version < 2 && d->rep_v1.enc)
		return &d->rep_v1;
	if (m->version < 3 && d->rep_v2.enc)
		return &d->rep_v2;
	if (m->version < 4 && d->rep_v3.enc)
		return &d->rep_v3;
	if (m->version < 5 && d->rep_v4.enc)
		return &d->rep_v4;
	return &d->rep;
}

/*
 * An error reply carries no payload, except (version 2) an FSYNC answered
 * -EIO for bad ranges: it lists them.
 */
static bool error_may_carry(const struct dt_msg *m)
{
	return m->op == DT_OP_FSYNC && (m->flags & DT_PROTO_F_REPLY) && m->version >= 2 &&
	       m->status == -EIO;
}

/* Whether the encoder writes a payload for @m. */
static bool has_payload(const struct dt_msg *m)
{
	return !m->status || (error_may_carry(m) && m->fsync_rep.count);
}

/* The host array of a variable part, or NULL; its element count. */
static const void *var_array(const struct dt_msg *m, uint32_t *count)
{
	bool reply = m->flags & DT_PROTO_F_REPLY;

	switch (m->op) {
	case DT_OP_REGIONS:
		*count = m->regions_rep.count;
		return reply ? m->regions_rep.regions : NULL;
	case DT_OP_DIRTY:
		*count = m->dirty_req.count;
		return reply ? NULL : m->dirty_req.ranges;
	case DT_OP_LIST:
		*count = m->list_rep.count;
		return reply ? m->list_rep.entries : NULL;
	case DT_OP_STATS:
		*count = m->stats_rep.count;
		return reply ? m->stats_rep.regions : NULL;
	case DT_OP_NAMESPACES:
		*count = m->namespaces_rep.count;
		return reply ? m->namespaces_rep.namespaces : NULL;
	case DT_OP_FAILED:
		*count = m->failed_rep.count;
		return reply ? m->failed_rep.failed : NULL;
	case DT_OP_DUMP:
		*count = m->dump_rep.length;
		return reply ? m->dump_rep.text : NULL;
	case DT_OP_FSYNC:
		*count = reply ? m->fsync_rep.count : 0;
		return reply ? m->fsync_rep.bad : NULL;
	case DT_OP_CXL:
		*count = (uint32_t)m->cxl_rep.nmemdevs + m->cxl_rep.nregions;
		if (!reply)
			return NULL;
		if (m->cxl_rep.nmemdevs && !m->cxl_rep.memdevs)
			return NULL;
		return m->cxl_rep.nregions && !m->cxl_rep.regions ? NULL : (const void *)m;
	}
	*count = 0;
	return NULL;
}

/* Point the decoded variable part at its records in the packet. */
static void set_raw(struct dt_msg *m, const uint8_t *raw)
{
	switch (m->op) {
	case DT_OP_REGIONS:
		m->regions_rep.raw = raw;
		break;
	case DT_OP_DIRTY:
		m->dirty_req.raw = raw;
		break;
	case DT_OP_LIST:
		m->list_rep.raw = raw;
		break;
	case DT_OP_STATS:
		m->stats_rep.raw = raw;
		break;
	case DT_OP_NAMESPACES:
		m->namespaces_rep.raw = raw;
		break;
	case DT_OP_FAILED:
		m->failed_rep.raw = raw;
		break;
	case DT_OP_DUMP:
		m->dump_rep.text = (const char *)raw;
		break;
	case DT_OP_FSYNC:
		m->fsync_rep.raw = raw;
		break;
	case DT_OP_CXL:
		m->cxl_rep.raw = raw;
		break;
	}
}

/* Check every record of a variable part (which starts at r->p). */
static void dec_records(struct rcur *r, const struct dt_msg *m, uint32_t count)
{
	struct dt_proto_entry e, prev = { 0 };

	for (uint32_t i = 0; i < count && !r->err; i++) {
		union {
			struct dt_proto_range range;
			struct dt_proto_region region;
			struct dt_proto_region_stats rstats;
			struct dt_proto_namespace ns;
			struct dt_proto_failed failed;
		} u;

		switch (m->op) {
		case DT_OP_REGIONS:
			dt_proto_dec_region(r, &u.region, m->version);
			break;
		case DT_OP_DIRTY:
		case DT_OP_FSYNC:
			dt_proto_dec_range(r, &u.range);
			break;
		case DT_OP_LIST:
			dt_proto_dec_entry(r, &e);
			/* Ascending and disjoint: a cursor never repeats an entry. */
			if (i && !r->err)
				check(r, e.base > prev.base &&
					 e.base - prev.base >= (uint64_t)DT_PROTO_PAGE_SIZE
								<< prev.order, -EINVAL);
			prev = e;
			break;
		case DT_OP_STATS:
			dt_proto_dec_rstats(r, &u.rstats, m->version);
			break;
		case DT_OP_NAMESPACES:
			dt_proto_dec_ns(r, &u.ns);
			break;
		case DT_OP_FAILED:
			dt_proto_dec_failed(r, &u.failed);
			break;
		case DT_OP_DUMP:
			check(r, get_u8(r) != 0, -EINVAL);
			break;
		case DT_OP_CXL:
			dt_proto_dec_cxl_record(r, m, i);
			break;
		}
	}
}

static int dec_payload(struct rcur *r, struct dt_msg *m, const struct body_desc *b)
{
	size_t plen = (size_t)(r->end - r->p);
	uint32_t count = 0;

	if (!b->rec_size) {
		if (plen != b->size)
			return -EBADMSG;
		if (b->dec)
			b->dec(r, m);
		return r->err;
	}
	if (plen < b->size)
		return -EBADMSG;
	b->dec_var(r, m, &count);
	if (r->err)
		return r->err;
	if (count > b->max_count)
		return -E2BIG;
	if ((plen - b->size) % b->rec_size || (plen - b->size) / b->rec_size != count)
		return -EBADMSG;
	set_raw(m, r->p);
	dec_records(r, m, count);
	return r->err;
}

/* HELLO is always carried with version 1, so that any two versions negotiate. */
static bool version_ok(const struct dt_msg *m)
{
	if (m->op == DT_OP_HELLO)
		return m->version == DT_PROTO_HELLO_VERSION;
	return m->version >= DT_PROTO_VERSION_MIN && m->version <= DT_PROTO_VERSION;
}

static int dec_header(struct rcur *r, struct dt_msg *m, uint32_t *plen)
{
	uint32_t reserved;

	m->version = get_u8(r);
	m->flags = get_u8(r);
	m->op = get_u16(r);
	m->id = get_u32(r);
	m->status = (int32_t)get_u32(r);
	*plen = get_u32(r);
	reserved = get_u32(r);
	if (!version_ok(m))
		return -EPROTO;
	if (m->flags & ~DT_PROTO_F_REPLY || reserved)
		return -EBADMSG;
	if (*plen != (size_t)(r->end - r->p))
		return -EBADMSG;
	if (!op_desc_of(m))
		return -EPROTO;
	if (!(m->flags & DT_PROTO_F_REPLY))
		return m->status ? -EBADMSG : 0;
	if (m->status > 0 || m->status < -4095)
		return -EBADMSG;
	if (m->status < 0 && *plen && !error_may_carry(m))
		return -EBADMSG;
	return 0;
}

int dt_proto_decode(const void *buf, size_t len, struct dt_msg *m)
{
	struct rcur r = { .p = buf, .end = (const uint8_t *)buf + len };
	struct dt_msg hdr;
	uint32_t plen;
	int err;

	memset(m, 0, sizeof(*m));
	if (len < DT_PROTO_HDR_SIZE)
		return -EBADMSG;
	if (get_u32(&r) != DT_PROTO_MAGIC)
		return -EBADMSG;
	err = dec_header(&r, m, &plen);
	if (len > DT_PROTO_MAX_MSG)
		err = -E2BIG;
	if (!err && (m->status == 0 || plen))
		err = dec_payload(&r, m, body_desc(m));
	if (err) {
		hdr = (struct dt_msg){ .op = m->op, .version = m->version, .flags = m->flags,
				       .id = m->id };
		*m = hdr;
	}
	return err;
}

int dt_proto_peek(const void *buf, size_t len, struct dt_msg *m)
{
	struct rcur r = { .p = buf, .end = (const uint8_t *)buf + len };
	uint32_t plen;

	memset(m, 0, sizeof(*m));
	if (len < DT_PROTO_HDR_SIZE || get_u32(&r) != DT_PROTO_MAGIC)
		return -EBADMSG;
	dec_header(&r, m, &plen);
	return 0;
}

static uint64_t payload_size(const struct dt_msg *m, const struct body_desc *b)
{
	uint32_t count;

	if (!has_payload(m))
		return 0;
	var_array(m, &count);
	return b->size + (b->rec_size ? (uint64_t)count * b->rec_size : 0);
}

static void enc_header(struct wcur *w, const struct dt_msg *m, uint32_t plen)
{
	put_u32(w, DT_PROTO_MAGIC);
	put_u8(w, m->version);
	put_u8(w, m->flags);
	put_u16(w, m->op);
	put_u32(w, m->id);
	put_u32(w, (uint32_t)m->status);
	put_u32(w, plen);
	put_zero(w, 4);
}

int dt_proto_encode(const struct dt_msg *m, void *buf, size_t cap, size_t *len)
{
	const struct body_desc *b = body_desc(m);
	struct wcur w = { .p = buf, .end = (uint8_t *)buf + cap };
	struct dt_msg check_msg;
	uint64_t plen, total;
	uint32_t count;
	int err;

	if (!b)
		return -EPROTO;
	plen = payload_size(m, b);
	total = DT_PROTO_HDR_SIZE + plen;
	if (total > DT_PROTO_MAX_MSG || (b->rec_size && has_payload(m) &&
					 plen - b->size > (uint64_t)b->max_count * b->rec_size))
		return -E2BIG;
	if (total > cap)
		return -EMSGSIZE;
	if (b->rec_size && has_payload(m) && !var_array(m, &count) && count)
		return -EINVAL;
	enc_header(&w, m, (uint32_t)plen);
	if (has_payload(m) && b->enc)
		b->enc(&w, m);
	if (w.p != (uint8_t *)buf + total)
		return -EMSGSIZE;	/* cannot happen: sizes are checked above */
	err = dt_proto_decode(buf, total, &check_msg);
	if (err)
		return err;
	*len = total;
	return 0;
}

int dt_proto_encode_error(const struct dt_msg *req, int status, void *buf, size_t cap,
			  size_t *len)
{
	struct wcur w = { .p = buf, .end = (uint8_t *)buf + cap };
	struct dt_msg m;

	if (status >= 0 || status < -4095)
		return -EINVAL;
	if (cap < DT_PROTO_HDR_SIZE)
		return -EMSGSIZE;
	dt_proto_init_reply(&m, req, status);
	enc_header(&w, &m, 0);
	*len = DT_PROTO_HDR_SIZE;
	return 0;
}

void dt_proto_init_request(struct dt_msg *m, uint16_t op, uint32_t id)
{
	memset(m, 0, sizeof(*m));
	m->op = op;
	m->id = id;
	m->version = op == DT_OP_HELLO ? DT_PROTO_HELLO_VERSION : DT_PROTO_VERSION;
}

void dt_proto_init_reply(struct dt_msg *m, const struct dt_msg *req, int status)
{
	memset(m, 0, sizeof(*m));
	m->op = req->op;
	m->version = req->version;
	m->id = req->id;
	m->flags = DT_PROTO_F_REPLY;
	m->status = status;
}

/* Accessors: record @i from the packet after decoding, or the host array. */
static bool rec_cursor(const void *raw, uint32_t i, uint32_t count, size_t size, struct rcur *r)
{
	if (!raw || i >= count)
		return false;
	r->p = (const uint8_t *)raw + (size_t)i * size;
	r->end = r->p + size;
	r->err = 0;
	return true;
}

void dt_proto_range_at(const struct dt_proto_dirty_req *d, uint32_t i, struct dt_proto_range *x)
{
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(d->raw, i, d->count, DT_PROTO_RANGE_REC_SIZE, &r))
		dt_proto_dec_range(&r, x);
	else if (d->ranges && i < d->count)
		*x = d->ranges[i];
}

void dt_proto_region_at(const struct dt_proto_regions_rep *rr, uint32_t i,
			struct dt_proto_region *x)
{
	struct rcur r;

	unsigned version = rr->version ? rr->version : DT_PROTO_VERSION;
	size_t size = version < DT_PROTO_VERSION_GROW ? DT_PROTO_REGION_REC4_SIZE
						      : DT_PROTO_REGION_REC_SIZE;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(rr->raw, i, rr->count, size, &r))
		dt_proto_dec_region(&r, x, version);
	else if (rr->regions && i < rr->count)
		*x = rr->regions[i];
}

void dt_proto_entry_at(const struct dt_proto_list_rep *l, uint32_t i, struct dt_proto_entry *x)
{
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(l->raw, i, l->count, DT_PROTO_ENTRY_REC_SIZE, &r))
		dt_proto_dec_entry(&r, x);
	else if (l->entries && i < l->count)
		*x = l->entries[i];
}

void dt_proto_region_stats_at(const struct dt_proto_stats_rep *s, uint32_t i,
			      struct dt_proto_region_stats *x)
{
	unsigned version = s->version ? s->version : DT_PROTO_VERSION;
	size_t size = dt_proto_rstats_size(version);
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(s->raw, i, s->count, size, &r))
		dt_proto_dec_rstats(&r, x, version);
	else if (s->regions && i < s->count)
		*x = s->regions[i];
}

void dt_proto_fsync_bad_at(const struct dt_proto_fsync_rep *f, uint32_t i,
			   struct dt_proto_range *x)
{
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(f->raw, i, f->count, DT_PROTO_RANGE_REC_SIZE, &r))
		dt_proto_dec_range(&r, x);
	else if (f->bad && i < f->count)
		*x = f->bad[i];
}

void dt_proto_failed_at(const struct dt_proto_failed_rep *f, uint32_t i,
			struct dt_proto_failed *x)
{
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(f->raw, i, f->count, DT_PROTO_FAILED_REC_SIZE, &r))
		dt_proto_dec_failed(&r, x);
	else if (f->failed && i < f->count)
		*x = f->failed[i];
}

void dt_proto_namespace_at(const struct dt_proto_namespaces_rep *n, uint32_t i,
			   struct dt_proto_namespace *x)
{
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(n->raw, i, n->count, DT_PROTO_NS_REC_SIZE, &r))
		dt_proto_dec_ns(&r, x);
	else if (n->namespaces && i < n->count)
		*x = n->namespaces[i];
}

void dt_proto_cxl_memdev_at(const struct dt_proto_cxl_rep *c, uint32_t i,
			    struct dt_proto_cxl_memdev *x)
{
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(c->raw, i, c->nmemdevs, DT_PROTO_CXL_REC_SIZE, &r))
		dt_proto_dec_cxl_memdev(&r, x);
	else if (c->memdevs && i < c->nmemdevs)
		*x = c->memdevs[i];
}

void dt_proto_cxl_region_at(const struct dt_proto_cxl_rep *c, uint32_t i,
			    struct dt_proto_cxl_region *x)
{
	struct rcur r;

	memset(x, 0, sizeof(*x));
	if (rec_cursor(c->raw, c->nmemdevs + i, c->nmemdevs + (uint32_t)c->nregions,
		       DT_PROTO_CXL_REC_SIZE, &r) && i < c->nregions)
		dt_proto_dec_cxl_region(&r, x);
	else if (c->regions && i < c->nregions)
		*x = c->regions[i];
}

/* Names. */
const char *dt_proto_op_name(unsigned op)
{
	const struct op_desc *d = op_desc(op);

	return d ? d->name : "UNKNOWN";
}

#define ERRNO_NAME(e) [e] = #e
static const char *const errno_names[] = {
	ERRNO_NAME(EPERM), ERRNO_NAME(ENOENT), ERRNO_NAME(EINTR), ERRNO_NAME(EIO),
	ERRNO_NAME(EBADF), ERRNO_NAME(EAGAIN), ERRNO_NAME(ENOMEM), ERRNO_NAME(EACCES),
	ERRNO_NAME(EFAULT), ERRNO_NAME(EBUSY), ERRNO_NAME(EEXIST), ERRNO_NAME(ENODEV),
	ERRNO_NAME(EINVAL), ERRNO_NAME(ENFILE), ERRNO_NAME(EMFILE), ERRNO_NAME(ENOSPC),
	ERRNO_NAME(EPIPE), ERRNO_NAME(ERANGE), ERRNO_NAME(E2BIG), ERRNO_NAME(ENOSYS),
	ERRNO_NAME(EBADMSG), ERRNO_NAME(EPROTO), ERRNO_NAME(EOVERFLOW), ERRNO_NAME(EMSGSIZE),
	ERRNO_NAME(EPROTONOSUPPORT), ERRNO_NAME(EOPNOTSUPP), ERRNO_NAME(ECONNRESET),
	ERRNO_NAME(ENOBUFS), ERRNO_NAME(ENOTCONN), ERRNO_NAME(ESHUTDOWN), ERRNO_NAME(ETIMEDOUT),
	ERRNO_NAME(ECONNREFUSED), ERRNO_NAME(EALREADY), ERRNO_NAME(EINPROGRESS),
	ERRNO_NAME(ECANCELED), ERRNO_NAME(ENXIO), ERRNO_NAME(EROFS),
	ERRNO_NAME(EUCLEAN), ERRNO_NAME(ESTALE), ERRNO_NAME(ENOTTY), ERRNO_NAME(ETXTBSY),
	ERRNO_NAME(EFBIG), ERRNO_NAME(ENAMETOOLONG), ERRNO_NAME(ELOOP), ERRNO_NAME(ENODATA),
	ERRNO_NAME(EDQUOT),
};

const char *dt_proto_status_name(int status)
{
	if (status == 0)
		return "OK";
	if (status < 0 && -(long)status < (long)(sizeof(errno_names) / sizeof(errno_names[0])) &&
	    errno_names[-status])
		return errno_names[-status];
	return "EUNKNOWN";
}

const char *dt_proto_strerror(int status)
{
	const char *s;

	if (status == 0)
		return "Success";
	if (status < 0 && status >= -4095) {
		s = strerrordesc_np(-status);
		if (s)
			return s;
	}
	return "Unknown error";
}

const char *dt_proto_flush_name(unsigned flush)
{
	switch (flush) {
	case DT_FLUSH_PMEM:
		return "pmem_flush";
	case DT_FLUSH_FENCE:
		return "fence";
	case DT_FLUSH_MSYNC:
		return "msync";
	}
	return "unknown";
}

const char *dt_proto_ns_mode_name(unsigned mode)
{
	switch (mode) {
	case DT_NS_FSDAX:
		return "fsdax";
	case DT_NS_DEVDAX:
		return "devdax";
	case DT_NS_RAW:
		return "raw";
	case DT_NS_SECTOR:
		return "sector";
	}
	return "unknown";
}

const char *dt_proto_ns_match_name(unsigned match)
{
	switch (match) {
	case DT_NS_MATCH_NONE:
		return "none";
	case DT_NS_MATCH_NO_NAMESPACES:
		return "no-namespaces";
	case DT_NS_MATCH_DAX:
		return "dax";
	case DT_NS_MATCH_BLOCK:
		return "block";
	case DT_NS_MATCH_PARTITION:
		return "partition";
	}
	return "unknown";
}
