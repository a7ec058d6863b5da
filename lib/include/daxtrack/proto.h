/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daxtrack/proto.h - the wire protocol between daxtrackd and its clients.
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socket (default DT_PROTO_SOCKET_PATH);
 * one message is one packet.  Every message is a 24-byte header followed by
 * a payload whose layout depends on the opcode and on whether the message is
 * a request or a reply.  docs/protocol.md describes every byte; this header
 * gives the host-side representation:
 *
 *   - struct dt_msg: the header fields plus a union of one request or reply
 *     body per opcode (DT_PROTO_F_REPLY in @flags selects which);
 *   - dt_proto_encode(): struct dt_msg -> bytes, field by field, little
 *     endian (never a memcpy of a host struct);
 *   - dt_proto_decode(): bytes -> struct dt_msg, validating everything.  It
 *     never allocates and never reads past the given length.  A variable
 *     part (ranges, region records, entries...) is not copied: the decoded
 *     body points into the buffer (@raw) and the dt_proto_*_at() accessors
 *     decode record i on demand, so a 4096-range DIRTY costs no malloc.  The
 *     buffer must outlive the use of the decoded message.
 *
 * Encoding a variable part: set @count and point the host array (@ranges,
 * @regions, @entries, @namespaces) at count records; @raw is ignored.
 *
 * Versions: a message is encoded and decoded in its @version.  The encoder
 * leaves out what an older version lacks (version 1: the SPARSE region flag,
 * the deep flush counters of a STATS record, the bad ranges of an FSYNC
 * reply, which then has no payload; versions 1 and 2: the tracking counts
 * of STATS; versions 1 to 3: the truncation counters of a STATS record),
 * so a server fills in the newest body and answers every
 * version; the decoder rejects in a message what its version does not have
 * (an unknown flag bit is -EINVAL as always; the LOG and TRACK opcodes in a
 * version before 3 are unknown opcodes, -EPROTO).
 *
 * Errors of the decoder (and of the encoder, which validates what it wrote
 * by decoding it, so it never produces what a peer would reject):
 *   -EBADMSG    malformed: shorter than the header, bad magic, payload length
 *               not the packet's, wrong payload size for the opcode, record
 *               count not matching the bytes, a reserved field or header flag
 *               not zero, a string not NUL-terminated and NUL-padded, a
 *               request with a status, a reply status > 0 or < -4095, an
 *               error reply with a payload (but a version-2 FSYNC -EIO).
 *   -EPROTO     a protocol version this library does not speak, or an
 *               unknown opcode (also LOG or TRACK in version 1 or 2).
 *   -E2BIG      the packet is longer than DT_PROTO_MAX_MSG, or a count is
 *               over its DT_PROTO_MAX_* limit.
 *   -EINVAL     a field out of its domain: an unknown flag bit or mode, a
 *               fault order other than 0 or 9, a zero length, a misaligned
 *               entry, fields that must be zero for the chosen mode.
 *   -EOVERFLOW  offset + length (or base + entry size) reaches 2^64 or more.
 * The encoder also returns -EMSGSIZE when @cap is too small.
 *
 * Units: offsets and lengths are bytes from the start of a region; orders
 * are tree orders of 4KiB pages (an entry of order N covers 4096 << N bytes).
 *
 * Threads: every function is reentrant and keeps no state.
 */
#ifndef DAXTRACK_PROTO_H
#define DAXTRACK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The daemon's socket when neither configured nor given (DAXTRACK_SOCKET). */
#define DT_PROTO_SOCKET_PATH	"/run/daxtrack/daxtrackd.sock"

/* Header magic: the bytes 'D' 'X' 'T' 'K' on the wire. */
#define DT_PROTO_MAGIC		0x4b545844U
/*
 * The protocol versions this library speaks; HELLO headers always carry 1.
 * Version 2 adds the SPARSE region flag, the deep flush counters of the STATS
 * region record and the bad ranges of an FSYNC reply; version 3 adds the LOG
 * opcode, the shared dirty log of the fast path, the TRACK opcode and the
 * tracking counts of STATS; version 4 adds the truncation counters of the
 * STATS region record; version 5 adds the GROWS region flag and the span of
 * the REGIONS record and of the ATTACH reply, the FAILED opcode and the
 * CXL opcode (docs/protocol.md).
 */
#define DT_PROTO_VERSION_MIN	1
#define DT_PROTO_VERSION	5
/* The first version with the LOG opcode. */
#define DT_PROTO_VERSION_LOG	3
/* The first version with the TRACK opcode and the tracking counts of STATS. */
#define DT_PROTO_VERSION_TRACK	3
/* The first version with the truncation counters of the STATS region record. */
#define DT_PROTO_VERSION_TRUNC	4
/* The first version with regions that follow their files (GROWS, spans) and FAILED. */
#define DT_PROTO_VERSION_GROW	5
/* The first version with the CXL opcode. */
#define DT_PROTO_VERSION_CXL	5
#define DT_PROTO_HELLO_VERSION	1

#define DT_PROTO_HDR_SIZE	24
/* Hard limit of a packet; a daemon advertises its own (lower) in HELLO. */
#define DT_PROTO_MAX_MSG	(1U << 20)
/* The default limits of daxtrackd; every message then fits in 128KiB. */
#define DT_PROTO_DEFAULT_MSG	(128U << 10)
#define DT_PROTO_DEFAULT_RANGES	4096U
#define DT_PROTO_DEFAULT_LIST	4096U

/* Limits of the counts of variable messages (checked by the decoder). */
#define DT_PROTO_MAX_RANGES	32768U	/* ranges of one DIRTY */
#define DT_PROTO_MAX_LIST	8192U	/* entries of one LIST reply */
#define DT_PROTO_MAX_REGIONS	256U	/* records of REGIONS and STATS */
#define DT_PROTO_MAX_NAMESPACES	256U	/* records of NAMESPACES */
#define DT_PROTO_MAX_CXL	256U	/* memdev and region records of CXL, each */
#define DT_PROTO_MAX_DUMP	(64U << 10)	/* text bytes of one DUMP reply */
#define DT_PROTO_MAX_BAD	256U	/* bad ranges of one FSYNC reply (version 2) */

/* Fixed string fields: NUL-terminated, NUL-padded, so at most size - 1 chars. */
#define DT_PROTO_NAME_MAX	64	/* region names */
#define DT_PROTO_PATH_MAX	256	/* region paths */
#define DT_PROTO_SOFTWARE_MAX	32	/* the daemon's version string */
#define DT_PROTO_DEVNAME_MAX	32	/* ndctl bus, region, namespace, device names */

#define DT_PROTO_PAGE_SIZE	4096U
#define DT_PROTO_PMD_ORDER	9
#define DT_PROTO_MAX_ORDER	51	/* largest entry order accepted (2^63 bytes) */

/* Region id meaning "every region" (STATS); never a real region's id. */
#define DT_PROTO_ALL_REGIONS	0xffffffffU

/* Header flags. */
#define DT_PROTO_F_REPLY	(1U << 0)

/* Opcodes. */
enum dt_proto_op {
	DT_OP_HELLO = 1,
	DT_OP_REGIONS = 2,
	DT_OP_ATTACH = 3,
	DT_OP_FAULT = 4,
	DT_OP_DIRTY = 5,
	DT_OP_FSYNC = 6,
	DT_OP_PUNCH = 7,
	DT_OP_QUERY = 8,
	DT_OP_LIST = 9,
	DT_OP_STATS = 10,
	DT_OP_NAMESPACES = 11,
	DT_OP_DUMP = 12,
	DT_OP_LOG = 13,		/* version 3 */
	DT_OP_TRACK = 14,	/* version 3 */
	DT_OP_FAILED = 15,	/* version 5 */
	DT_OP_CXL = 16,		/* version 5 */
};
/* The states of TRACK: how a client tracks its stores to a region. */
#define DT_TRACK_NONE		0	/* explicit marks only */
#define DT_TRACK_ON		1	/* tracked by the kernel (userfaultfd write-protect) */
#define DT_TRACK_REFUSED	2	/* refused: its msyncs persist whole ranges */
#define DT_TRACK_LAST		DT_TRACK_REFUSED

#define DT_OP_FIRST		DT_OP_HELLO
#define DT_OP_LAST		DT_OP_CXL
/*
 * Slots of dt_proto_stats_rep.requests_by_op: indexed by opcode.  Versions
 * 1 to 4 carry the first DT_PROTO_STATS_OPS_V4 of them.
 */
#define DT_PROTO_STATS_OPS	32
#define DT_PROTO_STATS_OPS_V4	16

/* Payload sizes of the fixed messages and fixed parts (see docs/protocol.md). */
#define DT_PROTO_HELLO_REQ_SIZE		8
#define DT_PROTO_HELLO_REP_SIZE		72
#define DT_PROTO_REGIONS_REQ_SIZE	0
#define DT_PROTO_REGIONS_REP_SIZE	8	/* + count * DT_PROTO_REGION_REC_SIZE */
#define DT_PROTO_REGION_REC_SIZE	480	/* version 5: + span */
#define DT_PROTO_REGION_REC4_SIZE	472	/* versions 1 to 4 */
#define DT_PROTO_ATTACH_REQ_SIZE	72
#define DT_PROTO_ATTACH_REP_SIZE	96	/* version 5: + span */
#define DT_PROTO_ATTACH_REP4_SIZE	88	/* versions 1 to 4 */
#define DT_PROTO_FAULT_REQ_SIZE		16
#define DT_PROTO_FAULT_REP_SIZE		32
#define DT_PROTO_DIRTY_REQ_SIZE		8	/* + count * DT_PROTO_RANGE_REC_SIZE */
#define DT_PROTO_RANGE_REC_SIZE		16
#define DT_PROTO_DIRTY_REP_SIZE		16
#define DT_PROTO_FSYNC_REQ_SIZE		24
#define DT_PROTO_FSYNC_REP_SIZE		32	/* version 1 */
#define DT_PROTO_FSYNC_REP2_SIZE	40	/* version 2: + count * DT_PROTO_RANGE_REC_SIZE */
#define DT_PROTO_PUNCH_REQ_SIZE		24
#define DT_PROTO_PUNCH_REP_SIZE		0
#define DT_PROTO_QUERY_REQ_SIZE		16
#define DT_PROTO_QUERY_REP_SIZE		32
#define DT_PROTO_ENTRY_REC_SIZE		24
#define DT_PROTO_LIST_REQ_SIZE		40
#define DT_PROTO_LIST_REP_SIZE		16	/* + count * DT_PROTO_ENTRY_REC_SIZE */
#define DT_PROTO_STATS_REQ_SIZE		8
#define DT_PROTO_STATS_REP_SIZE		192	/* versions 1, 2: + count * the record size */
#define DT_PROTO_STATS_REP3_SIZE	200	/* versions 3, 4: + the tracking counts */
#define DT_PROTO_STATS_REP5_SIZE	328	/* version 5: + requests_by_op[16..31] */
#define DT_PROTO_RSTATS_REC_SIZE	248	/* version 2 */
#define DT_PROTO_RSTATS_REC1_SIZE	224	/* version 1: no deep flush counters */
#define DT_PROTO_RSTATS_REC3_SIZE	256	/* version 3: + the tracking counts */
#define DT_PROTO_RSTATS_REC4_SIZE	280	/* version 4: + the truncation counters */
#define DT_PROTO_NAMESPACES_REQ_SIZE	0
#define DT_PROTO_NAMESPACES_REP_SIZE	8	/* + count * DT_PROTO_NS_REC_SIZE */
#define DT_PROTO_NS_REC_SIZE		192
#define DT_PROTO_DUMP_REQ_SIZE		16
#define DT_PROTO_DUMP_REP_SIZE		24	/* + length text bytes */
#define DT_PROTO_LOG_REQ_SIZE		8	/* version 3 */
#define DT_PROTO_LOG_REP_SIZE		32	/* version 3; the log's fd rides with it */
#define DT_PROTO_TRACK_REQ_SIZE		16	/* version 3 */
#define DT_PROTO_TRACK_REP_SIZE		0	/* version 3 */
#define DT_PROTO_FAILED_REQ_SIZE	0	/* version 5 */
#define DT_PROTO_FAILED_REP_SIZE	8	/* version 5: + count * DT_PROTO_FAILED_REC_SIZE */
#define DT_PROTO_FAILED_REC_SIZE	488
#define DT_PROTO_REASON_MAX		160	/* a FAILED record's reason, its NUL included */
#define DT_PROTO_CXL_REQ_SIZE		0	/* version 5 */
#define DT_PROTO_CXL_REP_SIZE		8	/* + (memdevs + regions) * DT_PROTO_CXL_REC_SIZE */
#define DT_PROTO_CXL_REC_SIZE		320
/* LOG reply: npages is below this (the dirty log's own bound). */
#define DT_PROTO_LOG_MAX_PAGES		(1ULL << 52)

/* Region flags (REGIONS records, ATTACH reply). */
#define DT_REGION_PMEM		(1U << 0)	/* pmem_is_pmem(): real persistent memory */
#define DT_REGION_EADR		(1U << 1)	/* pmem_has_auto_flush(): caches are persistent */
#define DT_REGION_PMD		(1U << 2)	/* 2MiB entries possible */
#define DT_REGION_DEVDAX	(1U << 3)	/* a device-DAX character device */
#define DT_REGION_DEFAULT	(1U << 4)	/* the embedded default region */
#define DT_REGION_BADBLOCKS	(1U << 5)	/* overlaps known bad blocks */
#define DT_REGION_SPARSE	(1U << 6)	/* DAX file with holes or unwritten extents (v2) */
#define DT_REGION_GROWS		(1U << 7)	/* follows its file, up to its span (v5) */
#define DT_REGION_FLAGS_ALL	0xffU	/* version 5 */
#define DT_REGION_FLAGS_V4	0x7fU	/* versions 2 to 4: no GROWS */
#define DT_REGION_FLAGS_V1	0x3fU	/* version 1: no SPARSE */

/* The flush path a region uses. */
enum dt_proto_flush {
	DT_FLUSH_PMEM = 1,	/* pmem_flush() + pmem_drain() */
	DT_FLUSH_FENCE = 2,	/* eADR: a store fence only */
	DT_FLUSH_MSYNC = 3,	/* pmem_msync(): not persistent memory */
};

/* ATTACH modes. */
enum dt_proto_attach_mode {
	DT_ATTACH_NAME = 1,	/* by region name */
	DT_ATTACH_FD = 2,	/* by the fd passed with the packet (SCM_RIGHTS) */
};
/* ATTACH reply access bits. */
#define DT_ACCESS_WRITE		(1U << 0)	/* FAULT, DIRTY, FSYNC, PUNCH allowed */

/* FAULT request flags. */
#define DT_FAULT_REQ_WRITE	(1U << 0)

/* FAULT reply flags: the values of DT_FAULT_* in daxtrack/mapping.h. */
#define DT_PROTO_FAULT_FALLBACK		(1U << 0)
#define DT_PROTO_FAULT_ZERO		(1U << 1)
#define DT_PROTO_FAULT_EMPTY		(1U << 2)
#define DT_PROTO_FAULT_NEW		(1U << 3)
#define DT_PROTO_FAULT_DIRTY		(1U << 4)
#define DT_PROTO_FAULT_DOWNGRADE	(1U << 5)
#define DT_PROTO_FAULT_ALL		0x3fU

/* Entry flags (FAULT, QUERY, LIST): the low bits of a mapping entry. */
#define DT_PROTO_ENTRY_LOCKED	(1U << 0)
#define DT_PROTO_ENTRY_PMD	(1U << 1)
#define DT_PROTO_ENTRY_ZERO	(1U << 2)
#define DT_PROTO_ENTRY_EMPTY	(1U << 3)
#define DT_PROTO_ENTRY_ALL	0x0fU

/* Entry tags (QUERY, LIST): bit n is tree tag n. */
#define DT_PROTO_TAG_DIRTY	(1U << 0)
#define DT_PROTO_TAG_TOWRITE	(1U << 1)
#define DT_PROTO_TAG_LOGGED	(1U << 2)	/* tree tag 2: set in a client's dirty log */
#define DT_PROTO_TAG_ALL	0x07U

/* FSYNC request flags. */
#define DT_FSYNC_WHOLE		(1U << 0)	/* the whole region; offset, length 0 */
#define DT_FSYNC_DEEP		(1U << 1)	/* also a deep flush of the region */
/* FSYNC reply flags (version 2). */
#define DT_FSYNC_BAD_MORE	(1U << 0)	/* more bad ranges than DT_PROTO_MAX_BAD */

/* LIST request flags. */
#define DT_LIST_DIRTY		(1U << 0)	/* only entries tagged DIRTY */
#define DT_LIST_WHOLE		(1U << 1)	/* the whole region; offset, length 0 */
/* LIST reply flags. */
#define DT_LIST_DONE		(1U << 0)	/* no entry after these; next_cursor 0 */

/* DUMP reply flags. */
#define DT_DUMP_DONE		(1U << 0)	/* this chunk ends the text */

/*
 * LOG reply flags: how the client makes its own stores durable.  Neither:
 * it must not flush them itself, it persists through the socket's FSYNC.
 */
#define DT_LOG_PMEM		(1U << 0)	/* persistent memory: pmem_flush + pmem_drain */
#define DT_LOG_EADR		(1U << 1)	/* the CPU caches are persistent: pmem_drain */
#define DT_LOG_FLAGS_ALL	0x03U

/* NAMESPACES reply flags. */
#define DT_NS_NO_NDCTL		(1U << 0)	/* the daemon cannot enumerate (no libndctl) */

/* CXL reply flags. */
#define DT_CXL_NO_LIBCXL	(1U << 0)	/* the daemon was built without libcxl */

/*
 * CXL memdev status bits: the device's Get Health Info, health status in
 * bits 0-2, media and additional status in bits 8-15.  0 is healthy.
 */
#define DT_CXL_ST_MAINTENANCE		(1U << 0)	/* maintenance needed */
#define DT_CXL_ST_DEGRADED		(1U << 1)	/* performance degraded */
#define DT_CXL_ST_REPLACE		(1U << 2)	/* hardware replacement needed */
#define DT_CXL_ST_NOT_READY		(1U << 8)	/* media not ready */
#define DT_CXL_ST_PERSISTENCE_LOST	(1U << 9)
#define DT_CXL_ST_DATA_LOST		(1U << 10)
#define DT_CXL_ST_LOSS_IMMINENT		(1U << 11)	/* persistence or data loss imminent */
#define DT_CXL_ST_LIFE_WARNING		(1U << 12)
#define DT_CXL_ST_LIFE_CRITICAL		(1U << 13)
#define DT_CXL_ST_TEMP_WARNING		(1U << 14)
#define DT_CXL_ST_TEMP_CRITICAL		(1U << 15)
#define DT_CXL_ST_ALL			0xff07U

/* Namespace modes. */
enum dt_proto_ns_mode {
	DT_NS_UNKNOWN = 0,
	DT_NS_FSDAX = 1,
	DT_NS_DEVDAX = 2,
	DT_NS_RAW = 3,
	DT_NS_SECTOR = 4,
};

/* How a region was matched to its namespace (REGIONS records). */
enum dt_proto_ns_match {
	DT_NS_MATCH_NONE = 1,		/* no namespace has the region's device */
	DT_NS_MATCH_NO_NAMESPACES = 2,	/* the daemon knows no NVDIMM namespace */
	DT_NS_MATCH_DAX = 3,		/* st_rdev of the device-DAX region is the namespace's */
	DT_NS_MATCH_BLOCK = 4,		/* the file's st_dev is the namespace's block device */
	DT_NS_MATCH_PARTITION = 5,	/* ... a partition of the namespace's block device */
};

struct dt_proto_hello_req {
	uint16_t min_version;		/* 1 <= min <= max */
	uint16_t max_version;
};

struct dt_proto_hello_rep {
	uint16_t version;		/* chosen: the highest both speak */
	uint32_t max_message;		/* bytes, >= DT_PROTO_HDR_SIZE, <= DT_PROTO_MAX_MSG */
	uint32_t max_ranges;		/* ranges per DIRTY, 1..DT_PROTO_MAX_RANGES */
	uint32_t max_list;		/* entries per LIST reply, 1..DT_PROTO_MAX_LIST */
	uint32_t pid;			/* the daemon's pid */
	uint64_t start_time_ns;		/* CLOCK_REALTIME of the daemon's start, ns */
	uint64_t uptime_ns;		/* CLOCK_MONOTONIC since the start, ns */
	char software[DT_PROTO_SOFTWARE_MAX];	/* e.g. "0.1.0" */
};

/* A region record. */
struct dt_proto_region {
	uint32_t id;			/* not DT_PROTO_ALL_REGIONS */
	uint32_t flags;			/* DT_REGION_* */
	uint64_t size;			/* bytes: of the file now (GROWS), else fixed */
	uint8_t flush;			/* enum dt_proto_flush */
	uint32_t badblocks;		/* known bad ranges inside the region */
	int32_t numa_node;		/* -1 if unknown */
	char name[DT_PROTO_NAME_MAX];
	char path[DT_PROTO_PATH_MAX];
	uint64_t bad_bytes;		/* bytes in those ranges (0 iff @badblocks is 0) */
	uint8_t ns_match;		/* enum dt_proto_ns_match */
	uint8_t ns_mode;		/* enum dt_proto_ns_mode; 0 unless matched */
	uint32_t dev_major;		/* the device looked for: st_rdev (devdax) */
	uint32_t dev_minor;		/* or st_dev (a file) */
	char ns_name[DT_PROTO_DEVNAME_MAX];	/* "namespace0.0"; "" unless matched */
	char ns_region[DT_PROTO_DEVNAME_MAX];	/* "region0"; "" unless matched */
	char ns_device[DT_PROTO_DEVNAME_MAX];	/* "pmem0" or "dax0.0"; "" unless matched */
	uint64_t span;			/* v5: offsets served are below it; >= size (v1-4: size) */
};

/* Variable parts: host array for encoding, raw records after decoding. */
struct dt_proto_regions_rep {
	uint32_t count;			/* <= DT_PROTO_MAX_REGIONS */
	uint16_t version;		/* decode: the message's (record layout) */
	const struct dt_proto_region *regions;	/* encode */
	const void *raw;		/* decode: use dt_proto_region_at() */
};

struct dt_proto_attach_req {
	uint8_t mode;			/* enum dt_proto_attach_mode */
	char name[DT_PROTO_NAME_MAX];	/* DT_ATTACH_NAME: non-empty; DT_ATTACH_FD: empty */
};

struct dt_proto_attach_rep {
	uint32_t region;		/* id */
	uint32_t flags;			/* DT_REGION_* */
	uint64_t size;			/* bytes: of the file now (GROWS), else fixed */
	uint32_t access;		/* DT_ACCESS_* of this connection */
	char name[DT_PROTO_NAME_MAX];	/* the region attached */
	uint64_t span;			/* v5: offsets served are below it; >= size (v1-4: size) */
};

struct dt_proto_fault_req {
	uint32_t region;
	uint8_t order;			/* 0 (PTE) or 9 (PMD) */
	uint8_t flags;			/* DT_FAULT_REQ_* */
	uint64_t offset;		/* any byte of the faulting page */
};

struct dt_proto_fault_rep {
	uint64_t base;			/* first byte of the entry */
	uint64_t sector;		/* device sector of @base; 0 for ZERO entries */
	uint64_t size;			/* bytes actually used: 4096 << @order */
	uint8_t order;			/* 0 or 9 (9 asked, 0 got: FALLBACK) */
	uint32_t fault_flags;		/* DT_PROTO_FAULT_* */
	uint8_t entry_flags;		/* DT_PROTO_ENTRY_* */
};

struct dt_proto_range {
	uint64_t offset;		/* bytes */
	uint64_t length;		/* bytes, >= 1, offset + length < 2^64 */
};

struct dt_proto_dirty_req {
	uint32_t region;
	uint32_t count;			/* 1..DT_PROTO_MAX_RANGES */
	const struct dt_proto_range *ranges;	/* encode */
	const void *raw;		/* decode: use dt_proto_range_at() */
};

struct dt_proto_dirty_rep {
	uint64_t pages;			/* 4KiB pages marked */
	uint32_t ranges;		/* ranges processed */
};

struct dt_proto_fsync_req {
	uint32_t region;
	uint32_t flags;			/* DT_FSYNC_* */
	uint64_t offset;		/* bytes; 0 with DT_FSYNC_WHOLE */
	uint64_t length;		/* bytes, >= 1; 0 with DT_FSYNC_WHOLE */
};

/*
 * An FSYNC reply: status 0, or (version 2) -EIO with @count >= 1 bad ranges
 * of the request's range (region offsets) whose pages were not flushed, every
 * good dirty page having been; version 1 sends neither the ranges nor the
 * counts with -EIO.
 */
struct dt_proto_fsync_rep {
	uint64_t entries;		/* entries flushed */
	uint64_t bytes;			/* bytes flushed (whole entries) */
	uint64_t ranges;		/* flush calls (adjacent entries coalesced) */
	uint64_t time_ns;		/* time the daemon spent flushing */
	uint32_t count;			/* v2: bad ranges, <= DT_PROTO_MAX_BAD; 0 with status 0 */
	uint32_t flags;			/* v2: DT_FSYNC_BAD_MORE */
	const struct dt_proto_range *bad;	/* encode */
	const void *raw;		/* decode: use dt_proto_fsync_bad_at() */
};

struct dt_proto_punch_req {
	uint32_t region;
	uint64_t offset;		/* bytes */
	uint64_t length;		/* bytes, >= 1 */
};

struct dt_proto_query_req {
	uint32_t region;
	uint64_t offset;		/* any byte of the entry */
};

struct dt_proto_entry {
	uint64_t base;			/* first byte; aligned to 4096 << @order */
	uint64_t sector;		/* device sector of @base */
	uint8_t order;			/* 0..DT_PROTO_MAX_ORDER */
	uint8_t flags;			/* DT_PROTO_ENTRY_*; locked = flags & LOCKED */
	uint8_t tags;			/* DT_PROTO_TAG_* */
};

struct dt_proto_query_rep {
	bool found;			/* false: @entry is all zero */
	struct dt_proto_entry entry;
};

struct dt_proto_list_req {
	uint32_t region;
	uint32_t flags;			/* DT_LIST_* */
	uint64_t offset;		/* bytes; 0 with DT_LIST_WHOLE */
	uint64_t length;		/* bytes, >= 1; 0 with DT_LIST_WHOLE */
	uint64_t cursor;		/* 0 for the first page, then next_cursor */
	uint32_t max_count;		/* 1..DT_PROTO_MAX_LIST */
};

struct dt_proto_list_rep {
	uint64_t next_cursor;		/* opaque, non-zero unless DONE */
	uint32_t flags;			/* DT_LIST_DONE */
	uint32_t count;			/* <= DT_PROTO_MAX_LIST */
	const struct dt_proto_entry *entries;	/* encode */
	const void *raw;		/* decode: use dt_proto_entry_at() */
};

struct dt_proto_stats_req {
	uint32_t region;		/* an id, or DT_PROTO_ALL_REGIONS */
};

struct dt_proto_region_stats {
	uint32_t id;
	char name[DT_PROTO_NAME_MAX];
	uint64_t entries;		/* all entries */
	uint64_t entries_pte;		/* 4KiB entries (order 0) */
	uint64_t entries_pmd;		/* 2MiB entries (order 9) */
	uint64_t dirty;			/* entries tagged DIRTY or LOGGED (each once) */
	uint64_t towrite;		/* entries tagged TOWRITE */
	uint64_t tree_nodes;
	uint64_t tree_bytes;
	uint32_t tree_height;
	uint64_t faults;		/* FAULT requests served */
	uint64_t fsyncs;		/* FSYNC requests served */
	uint64_t flushed_entries;
	uint64_t flushed_bytes;
	uint64_t grabs;			/* entry locks taken */
	uint64_t contended;		/* waits for an entry lock */
	uint64_t wakeups;
	uint64_t dirty_pages;		/* pages of the dirty entries */
	uint32_t badblocks;		/* known bad ranges inside the region */
	uint64_t bad_bytes;		/* bytes in them */
	uint64_t bad_hits;		/* FAULT and FSYNC requests refused for one (-EIO) */
	uint64_t deep_flush_ndctl;	/* deep flushes by ndctl_region_deep_flush() */
	uint64_t deep_flush_pmem;	/* deep flushes by libpmem's pmem_deep_drain() */
	uint64_t deep_flush_failed;	/* deep flushes neither could do (FSYNC: -EIO) */
	uint32_t clients_tracked;	/* v3: connections whose stores to it are tracked */
	uint32_t clients_refused;	/* v3: connections whose tracking there was refused */
	uint64_t sigbus;		/* v4: flushes a SIGBUS stopped (past EOF, poisoned) */
	uint64_t truncations;		/* v4: times the file was found shorter than before */
	uint64_t truncated_dirty;	/* v4: dirty pages lost past a new end of file */
};	/* fields a version lacks are 0 when decoded (v1: deep flush, v1-2: tracking,
	 * v1-3: truncation) */

struct dt_proto_stats_rep {
	uint64_t uptime_ns;
	uint32_t clients;		/* connected now */
	uint64_t clients_total;		/* accepted since the start */
	uint64_t requests;		/* requests decoded */
	uint64_t errors;		/* replies with a status < 0 */
	uint64_t bad_messages;		/* undecodable packets */
	uint64_t fsyncs;
	uint64_t bytes_flushed;
	uint64_t requests_by_op[DT_PROTO_STATS_OPS];	/* [opcode]; [0]: unknown */
	uint32_t count;			/* region records, <= DT_PROTO_MAX_REGIONS */
	const struct dt_proto_region_stats *regions;	/* encode */
	const void *raw;		/* decode: use dt_proto_region_stats_at() */
	uint8_t version;		/* decode: the message's (its record size) */
	uint32_t clients_tracked;	/* v3: connections tracking some region */
	uint32_t clients_refused;	/* v3: connections refused tracking of some region */
};

struct dt_proto_namespace {
	char bus[DT_PROTO_DEVNAME_MAX];		/* "ndbus0" */
	char region[DT_PROTO_DEVNAME_MAX];	/* "region0" */
	char name[DT_PROTO_DEVNAME_MAX];	/* "namespace0.0" */
	char blockdev[DT_PROTO_DEVNAME_MAX];	/* "pmem0" or "" */
	char chardev[DT_PROTO_DEVNAME_MAX];	/* "dax0.0" or "" */
	uint8_t mode;				/* enum dt_proto_ns_mode */
	int32_t numa_node;			/* -1 if unknown */
	uint64_t size;
	uint64_t align;
	uint64_t badblocks;
};

struct dt_proto_namespaces_rep {
	uint32_t flags;			/* DT_NS_* */
	uint32_t count;			/* <= DT_PROTO_MAX_NAMESPACES */
	const struct dt_proto_namespace *namespaces;	/* encode */
	const void *raw;		/* decode: use dt_proto_namespace_at() */
};

/* A configured region the daemon could not open, and why (FAILED, version 5). */
struct dt_proto_failed {
	char name[DT_PROTO_NAME_MAX];	/* not empty */
	char path[DT_PROTO_PATH_MAX];
	int32_t error;			/* the negative errno of the open, < 0 */
	char reason[DT_PROTO_REASON_MAX];	/* as logged: "is 4096 bytes, the configured ..." */
};

/* Variable parts: host array for encoding, raw records after decoding. */
struct dt_proto_failed_rep {
	uint32_t count;			/* <= DT_PROTO_MAX_REGIONS */
	const struct dt_proto_failed *failed;	/* encode */
	const void *raw;		/* decode: use dt_proto_failed_at() */
};

/*
 * CXL: the CXL memdevs of the host and the daemon's regions on CXL memory.
 * Strings are "" when unknown or not applicable.
 */
struct dt_proto_cxl_memdev {
	char name[DT_PROTO_DEVNAME_MAX];	/* "mem0" */
	char host[DT_PROTO_DEVNAME_MAX];	/* PCI device "0000:0d:00.0" */
	char firmware[DT_PROTO_DEVNAME_MAX];	/* firmware revision */
	char host_bridge[DT_PROTO_DEVNAME_MAX];	/* "pci0000:0c" */
	char region[DT_PROTO_DEVNAME_MAX];	/* CXL region it backs, "region2" */
	char decoder[DT_PROTO_DEVNAME_MAX];	/* its endpoint decoder of @region */
	char root_decoder[DT_PROTO_DEVNAME_MAX];	/* @region's CXL window */
	char nd_region[DT_PROTO_DEVNAME_MAX];	/* the nvdimm region on @region */
	uint64_t serial;
	uint64_t pmem_size;			/* bytes */
	int32_t health_err;			/* 0: health valid; else -errno why not */
	uint32_t status;			/* DT_CXL_ST_* */
	int32_t life_used;			/* percent, -1 not reported */
	int32_t temperature;			/* Celsius, -1 not reported */
	uint32_t dirty_shutdowns;
	uint32_t pmem_errors;			/* corrected persistent memory errors */
	int32_t position;			/* in @region's interleave, -1 if none */
	uint32_t ways;				/* @region's interleave ways, 0 if none */
	uint32_t granularity;			/* bytes, 0 if none */
};

struct dt_proto_cxl_region {
	uint32_t id;				/* region id */
	uint64_t deep_flush_cxl;		/* DEEP fsyncs answered by the CXL path */
	char name[DT_PROTO_NAME_MAX];
	char cxl_region[DT_PROTO_DEVNAME_MAX];	/* "" when libcxl does not show it */
	char nd_region[DT_PROTO_DEVNAME_MAX];	/* the matched namespace's region */
};

struct dt_proto_cxl_rep {
	uint32_t flags;				/* DT_CXL_* */
	uint16_t nmemdevs;			/* <= DT_PROTO_MAX_CXL */
	uint16_t nregions;			/* <= DT_PROTO_MAX_CXL */
	const struct dt_proto_cxl_memdev *memdevs;	/* encode */
	const struct dt_proto_cxl_region *regions;	/* encode */
	const void *raw;			/* decode: use dt_proto_cxl_*_at() */
};

struct dt_proto_dump_req {
	uint32_t region;
	uint64_t offset;		/* byte of the text to start at */
};

struct dt_proto_dump_rep {
	uint64_t offset;		/* of this chunk in the text */
	uint64_t total;			/* length of the whole text */
	uint32_t length;		/* of this chunk, <= DT_PROTO_MAX_DUMP */
	uint32_t flags;			/* DT_DUMP_DONE iff offset + length == total */
	const char *text;		/* @length bytes, no NUL, not terminated */
};

/*
 * LOG (version 3): ask for the shared dirty log of an attached region
 * (its format is private to the daemon and libdaxtrack-client, which
 * agree on its version).  Needs write rights.  The reply comes with the
 * log file's fd (SCM_RIGHTS, exactly one), of @file_size bytes, for
 * @npages pages.
 */
struct dt_proto_log_req {
	uint32_t region;
	uint32_t flags;			/* reserved: 0 */
};

struct dt_proto_log_rep {
	uint64_t npages;		/* 4KiB pages of the region, >= 1 */
	uint64_t file_size;		/* bytes of the log file, a non-zero multiple of 4096 */
	uint32_t flags;			/* DT_LOG_* */
	uint32_t log_id;		/* the daemon's serial of the log (diagnostics) */
};

/*
 * TRACK (version 3): how the connection's client tracks its stores to an
 * attached region (dt_client_track()), for the daemon's counts (STATS).
 * Needs write rights.  The reply has no payload.
 */
struct dt_proto_track_req {
	uint32_t region;
	uint32_t state;			/* DT_TRACK_* */
	int32_t reason;			/* DT_TRACK_REFUSED: -errno (-1..-4095); else 0 */
};

/**
 * struct dt_msg - One message, header and body.
 * @op: Opcode, enum dt_proto_op.
 * @version: Protocol version of the header (DT_PROTO_HELLO_VERSION for HELLO).
 * @flags: DT_PROTO_F_REPLY for a reply.
 * @id: Request id, chosen by the client, echoed by the reply.
 * @status: Replies: 0 or a negative errno (then the body is empty); requests: 0.
 *
 * The body is the member named after @op with _req or _rep; requests with an
 * empty payload (REGIONS, NAMESPACES, CXL) and PUNCH and TRACK replies have none.
 */
struct dt_msg {
	uint16_t op;
	uint8_t version;
	uint8_t flags;
	uint32_t id;
	int32_t status;
	union {
		struct dt_proto_hello_req hello_req;
		struct dt_proto_hello_rep hello_rep;
		struct dt_proto_regions_rep regions_rep;
		struct dt_proto_attach_req attach_req;
		struct dt_proto_attach_rep attach_rep;
		struct dt_proto_fault_req fault_req;
		struct dt_proto_fault_rep fault_rep;
		struct dt_proto_dirty_req dirty_req;
		struct dt_proto_dirty_rep dirty_rep;
		struct dt_proto_fsync_req fsync_req;
		struct dt_proto_fsync_rep fsync_rep;
		struct dt_proto_punch_req punch_req;
		struct dt_proto_query_req query_req;
		struct dt_proto_query_rep query_rep;
		struct dt_proto_list_req list_req;
		struct dt_proto_list_rep list_rep;
		struct dt_proto_stats_req stats_req;
		struct dt_proto_stats_rep stats_rep;
		struct dt_proto_namespaces_rep namespaces_rep;
		struct dt_proto_dump_req dump_req;
		struct dt_proto_dump_rep dump_rep;
		struct dt_proto_log_req log_req;
		struct dt_proto_log_rep log_rep;
		struct dt_proto_track_req track_req;
		struct dt_proto_failed_rep failed_rep;
		struct dt_proto_cxl_rep cxl_rep;
	};
};

/**
 * dt_proto_init_request() - Start a request.
 * @m: Zeroed and given the header of a request.
 * @op: The opcode.
 * @id: The request id.
 *
 * Sets the version: DT_PROTO_HELLO_VERSION for HELLO, DT_PROTO_VERSION
 * otherwise (a client that negotiated a lower version sets @m->version).
 *
 * Context: Any thread.
 */
void dt_proto_init_request(struct dt_msg *m, uint16_t op, uint32_t id);

/**
 * dt_proto_init_reply() - Start the reply to a request.
 * @m: Zeroed and given the header of the reply.
 * @req: The request (only its header is read: op, version, id).
 * @status: 0, or the negative errno of a failed request.
 *
 * Context: Any thread.
 */
void dt_proto_init_reply(struct dt_msg *m, const struct dt_msg *req, int status);

/**
 * dt_proto_encode() - Encode a message.
 * @m: The message.
 * @buf: Where to write it.
 * @cap: Bytes available at @buf.
 * @len: Set to the length of the message on success.
 *
 * Writes the header and payload byte by byte, then validates the result with
 * dt_proto_decode(): what the encoder accepts, every decoder accepts.  @buf
 * holds garbage after an error.
 *
 * Context: Any thread.  Never allocates.
 * Return: 0; -EMSGSIZE if @cap is too small; -E2BIG if the message would be
 * longer than DT_PROTO_MAX_MSG or a count is over its limit; -EPROTO for an
 * unknown @m->op or version; -EINVAL or -EOVERFLOW for a bad field, -EBADMSG
 * for a string without NUL in its array or an error reply... as the decoder
 * (see the top of this header).
 */
int dt_proto_encode(const struct dt_msg *m, void *buf, size_t cap, size_t *len);

/**
 * dt_proto_decode() - Decode and validate a message.
 * @buf: The packet.
 * @len: Its length.
 * @m: Filled in.
 *
 * Validates the header and the whole payload, every record of a variable
 * part included; the variable part is not copied (@raw points into @buf).
 * Never reads past @buf + @len.  On failure, if @len >= DT_PROTO_HDR_SIZE and
 * the magic matched, @m->op, @m->version, @m->flags and @m->id hold the
 * header's values (so that a server can answer the request id) and the rest
 * of @m is zero; otherwise @m is all zero.
 *
 * Context: Any thread.  Never allocates.
 * Return: 0, or -EBADMSG, -EPROTO, -E2BIG, -EINVAL, -EOVERFLOW as described
 * at the top of this header.
 */
int dt_proto_decode(const void *buf, size_t len, struct dt_msg *m);

/**
 * dt_proto_peek() - Read the header of a packet, nothing more.
 * @buf: The packet (a request or a reply).
 * @len: Its length.
 * @m: Given the header's op, version, flags, id and status (whatever their
 *     values); the rest is zero.
 *
 * For a server that must know what a packet is before (or without)
 * decoding it: whether a request that failed to decode can be answered at
 * all, or which request a reply it encoded answers.  Nothing but the magic
 * is checked: dt_proto_decode() validates.
 *
 * Context: Any thread.  Never allocates.
 * Return: 0; -EBADMSG, with @m all zero, for a packet shorter than a header
 * or of a bad magic (nothing of it can be trusted: close the connection).
 */
int dt_proto_peek(const void *buf, size_t len, struct dt_msg *m);

/**
 * dt_proto_encode_error() - Encode the error reply to a request header.
 * @req: The request's header (op, version, id), as dt_proto_decode() or
 *	 dt_proto_peek() left it, also one of an unknown opcode or version.
 * @status: The negative errno, -4095 .. -1.
 * @buf: Where to write the reply.
 * @cap: Bytes available at @buf.
 * @len: Set to the length of the reply (DT_PROTO_HDR_SIZE).
 *
 * Unlike dt_proto_encode(), which refuses opcodes and versions it does not
 * know, this answers any request whose header could be read: a header-only
 * reply with DT_PROTO_F_REPLY, @req's op, version and id, and @status.
 *
 * Context: Any thread.  Never allocates.
 * Return: 0; -EINVAL for a @status out of range; -EMSGSIZE if @cap is
 * smaller than a header.
 */
int dt_proto_encode_error(const struct dt_msg *req, int status, void *buf, size_t cap,
			  size_t *len);

/**
 * dt_proto_range_at() - Record @i of a DIRTY request.
 * @d: The request (decoded, or built for encoding).
 * @i: Below @d->count.
 * @r: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_range_at(const struct dt_proto_dirty_req *d, uint32_t i, struct dt_proto_range *r);

/**
 * dt_proto_region_at() - Record @i of a REGIONS reply.
 * @r: The reply.
 * @i: Below @r->count.
 * @out: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_region_at(const struct dt_proto_regions_rep *r, uint32_t i,
			struct dt_proto_region *out);

/**
 * dt_proto_entry_at() - Entry @i of a LIST reply.
 * @l: The reply.
 * @i: Below @l->count.
 * @e: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_entry_at(const struct dt_proto_list_rep *l, uint32_t i, struct dt_proto_entry *e);

/**
 * dt_proto_region_stats_at() - Region record @i of a STATS reply.
 * @s: The reply.
 * @i: Below @s->count.
 * @out: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_region_stats_at(const struct dt_proto_stats_rep *s, uint32_t i,
			      struct dt_proto_region_stats *out);

/**
 * dt_proto_fsync_bad_at() - Bad range @i of an FSYNC reply (version 2).
 * @f: The reply.
 * @i: Below @f->count.
 * @out: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_fsync_bad_at(const struct dt_proto_fsync_rep *f, uint32_t i,
			   struct dt_proto_range *out);

/**
 * dt_proto_namespace_at() - Record @i of a NAMESPACES reply.
 * @n: The reply.
 * @i: Below @n->count.
 * @out: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_namespace_at(const struct dt_proto_namespaces_rep *n, uint32_t i,
			   struct dt_proto_namespace *out);

/**
 * dt_proto_failed_at() - Record @i of a FAILED reply.
 * @f: The reply.
 * @i: Below @f->count.
 * @out: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_failed_at(const struct dt_proto_failed_rep *f, uint32_t i,
			struct dt_proto_failed *out);

/**
 * dt_proto_cxl_memdev_at() - Memdev record @i of a CXL reply.
 * @c: The reply.
 * @i: Below @c->nmemdevs.
 * @out: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_cxl_memdev_at(const struct dt_proto_cxl_rep *c, uint32_t i,
			    struct dt_proto_cxl_memdev *out);

/**
 * dt_proto_cxl_region_at() - Region record @i of a CXL reply.
 * @c: The reply.
 * @i: Below @c->nregions.
 * @out: Filled in; zeroed if @i is out of range.
 *
 * Context: Any thread.
 */
void dt_proto_cxl_region_at(const struct dt_proto_cxl_rep *c, uint32_t i,
			    struct dt_proto_cxl_region *out);

/**
 * dt_proto_op_name() - The name of an opcode.
 * @op: The opcode.
 *
 * Return: "HELLO", "REGIONS", ... or "UNKNOWN"; a static string.
 */
const char *dt_proto_op_name(unsigned op);

/**
 * dt_proto_status_name() - The symbolic name of a reply status.
 * @status: 0 or a negative errno.
 *
 * Return: "OK", "EPERM", "EINVAL", ... (as in <errno.h>), or "EUNKNOWN" for a
 * value it does not know; a static string.  For JSON and logs.
 */
const char *dt_proto_status_name(int status);

/**
 * dt_proto_strerror() - The description of a reply status.
 * @status: 0 or a negative errno.
 *
 * Context: Any thread (no shared buffer).
 * Return: "Success", or strerror(-@status)'s text, or "Unknown error"; a
 * static string.
 */
const char *dt_proto_strerror(int status);

/**
 * dt_proto_flush_name() - The name of a flush path.
 * @flush: enum dt_proto_flush.
 *
 * The names daxtrackctl prints and its JSON carries, and daxtrackd logs:
 * "pmem_flush" (pmem_flush(), then one pmem_drain()), "fence" (eADR: the
 * stores are persistent once fenced), "msync" (pmem_msync(): not pmem).
 *
 * Return: "pmem_flush", "fence", "msync" or "unknown".
 */
const char *dt_proto_flush_name(unsigned flush);

/**
 * dt_proto_ns_mode_name() - The name of a namespace mode.
 * @mode: enum dt_proto_ns_mode.
 *
 * Return: "fsdax", "devdax", "raw", "sector" or "unknown" (ndctl's words).
 */
const char *dt_proto_ns_mode_name(unsigned mode);

/**
 * dt_proto_ns_match_name() - The name of a region-to-namespace match.
 * @match: enum dt_proto_ns_match.
 *
 * Return: "none", "no-namespaces", "dax", "block", "partition" or "unknown";
 * a static string.
 */
const char *dt_proto_ns_match_name(unsigned match);

/**
 * dt_proto_send() - Send one message, optionally with one fd.
 * @sock: A connected SOCK_SEQPACKET socket.
 * @buf: The encoded message.
 * @len: Its length.
 * @fd: A file descriptor to pass with SCM_RIGHTS, or -1.
 *
 * Uses MSG_NOSIGNAL (a dead peer gives -EPIPE, no SIGPIPE) and retries on
 * EINTR.  A packet is sent whole or not at all: messages longer than the
 * socket's SO_SNDBUF allows give -EMSGSIZE.
 *
 * Context: Blocks unless @sock is non-blocking (then -EAGAIN).
 * Return: @len, or a negative errno of sendmsg().
 */
ssize_t dt_proto_send(int sock, const void *buf, size_t len, int fd);

/**
 * dt_proto_recv() - Receive one message, and an fd if one came with it.
 * @sock: A connected SOCK_SEQPACKET socket.
 * @buf: Where to put the packet.
 * @cap: Bytes available at @buf.
 * @fd: If not NULL, set to the first fd received (O_CLOEXEC) or -1; the
 *	caller owns it.  If NULL, a received fd is closed.
 *
 * Retries on EINTR.  A packet longer than @cap is consumed and reported as
 * -EMSGSIZE: the stream stays in sync.  Every fd that came with a packet is
 * closed before the call returns except the one handed out in *@fd: all of
 * them for an empty or an oversized packet, every one but the first
 * otherwise (also when the control data was truncated, MSG_CTRUNC).  A peer
 * cannot make the caller leak descriptors.
 *
 * Context: Blocks unless @sock is non-blocking (then -EAGAIN).
 * Return: The length of the packet (> 0); 0 at end of stream (the peer
 * closed; an empty packet, which the protocol never sends, reads the same);
 * -EMSGSIZE for an oversized packet; another negative errno of recvmsg().
 */
ssize_t dt_proto_recv(int sock, void *buf, size_t cap, int *fd);

/**
 * dt_proto_recv_fds() - dt_proto_recv(), telling how many fds came.
 * @sock: As dt_proto_recv().
 * @buf: As dt_proto_recv().
 * @cap: As dt_proto_recv().
 * @fd: As dt_proto_recv().
 * @nfds: If not NULL, set to the number of fds that came with a packet
 *	  returned (at least 2 when more came than there was room for); 0
 *	  otherwise.
 *
 * For a receiver that must refuse a packet with several fds (ATTACH by fd
 * needs exactly one): it closes *@fd when *@nfds > 1.
 *
 * Context: As dt_proto_recv().
 * Return: As dt_proto_recv().
 */
ssize_t dt_proto_recv_fds(int sock, void *buf, size_t cap, int *fd, unsigned *nfds);

#ifdef __cplusplus
}
#endif

#endif /* DAXTRACK_PROTO_H */
