/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/log/dirtylog.h - the shared dirty log: a write-intent bitmap of one
 * region in a shared file, written by its owner (a client, or the daemon for
 * its own marks) and read by the other side.  Private to the project: the
 * daemon and libdaxtrack-client agree on DT_DLOG_VERSION.  The format, its
 * invariant and its memory order are described in docs/design.md, "The
 * shared dirty log".
 *
 * A file is DT_DLOG_HEADER_SIZE bytes of header, then four arrays of
 * little-endian 64-bit words, each on its own pages: dirty (a bit a 4 KiB
 * page), dirty_sum (a bit a word of dirty), flush (a bit a page: what a
 * persist took out of dirty and is flushing) and flush_sum.  A page may be
 * dirty while its bit is set in dirty or flush or a ring record not settled
 * covers it: from its mark to the drain after its flush it is in one of the
 * three, so a log left by a dead owner names every page that may be dirty.
 *
 * The daemon writes the header once (dt_dlog_format()), then only its
 * @daemon_flags.  Neither side takes the geometry from the file: each passes
 * the one it knows (dt_dlog_attach()).  The reader trusts no word: bits past
 * the region are ignored and counted, a missing summary bit only delays a
 * scan (a full scan ignores the summaries), ring records are bounded.
 */
#ifndef DAXTRACK_DIRTYLOG_H
#define DAXTRACK_DIRTYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DT_DLOG_MAGIC		0x31474f4c4b545844ULL	/* "DXTKLOG1", little endian */
#define DT_DLOG_VERSION		2	/* 2: the single writer's ring */
#define DT_DLOG_HEADER_SIZE	4096u
#define DT_DLOG_NAME_MAX	64

/*
 * The single writer's ring, at DT_DLOG_RING_OFF of the header page: while
 * one thread alone writes a log, its marks of at most DT_DLOG_RING_PAGES
 * pages are records (first page << 12 | pages - 1) in lines it keeps hot,
 * not bits in cold bitmap words that the persist's drain would wait for.
 */
#define DT_DLOG_RING_OFF	2048u
#define DT_DLOG_RING_SLOTS	64u
#define DT_DLOG_RING_PAGES	64u
#define DT_DLOG_REC_SHIFT	12
#define DT_DLOG_REC(first, last) ((uint64_t)(first) << DT_DLOG_REC_SHIFT | ((last) - (first)))

/**
 * struct dt_dlog_ring - The single writer's records, in the header page.
 * @head: Records appended (free-running); stored after the record.
 * @clean: Records whose pages are durable, or folded into dirty (stored
 *	after the drain or the bits); @head - @clean <= DT_DLOG_RING_SLOTS.
 * @rec: Record i is in slot i % DT_DLOG_RING_SLOTS; a record not settled
 *	may only grow (a mark merged into the last one).
 */
struct dt_dlog_ring {
	uint64_t head;
	uint64_t clean;
	uint64_t pad[6];
	uint64_t rec[DT_DLOG_RING_SLOTS];
};

/* struct dt_dlog_header.daemon_flags */
#define DT_DLOG_F_SOCKET	(1U << 0)	/* persist and mark through the socket: the
						 * region has bad blocks, which only the daemon
						 * may answer for (-EIO naming them) */
#define DT_DLOG_F_ORPHAN	(1U << 1)	/* the daemon that made the log is gone: a
						 * new one recovered and removed it; its owner
						 * must reconnect for its marks to count */
#define DT_DLOG_F_FLUSHED	(1U << 2)	/* with ORPHAN: every page marked before the
						 * owner could see ORPHAN is durable (the new
						 * daemon set ORPHAN, made every thread pass a
						 * barrier, then flushed the log's pages) */

/* struct dt_dlog_header.kind */
enum dt_dlog_kind {
	DT_DLOG_CLIENT = 1,	/* one client connection's log of one region */
	DT_DLOG_DAEMON = 2,	/* the daemon's own log of a region (socket DIRTY marks) */
};

/**
 * struct dt_dlog_header - The first DT_DLOG_HEADER_SIZE bytes of a log file.
 * @magic: DT_DLOG_MAGIC.
 * @version: DT_DLOG_VERSION.
 * @kind: enum dt_dlog_kind.
 * @file_size: Bytes of the whole file (struct dt_dlog_geometry.file_size).
 * @npages: Pages of the region (4 KiB each, the last one maybe partial).
 * @region_size: Bytes of the region.
 * @region_dev: st_dev of the region's file, st_rdev of a device-DAX device.
 * @region_ino: st_ino of the region's file or device.
 * @boot_id: /proc/sys/kernel/random/boot_id, 16 bytes: a log of another
 *	boot is never recovered from.
 * @region_id: The region's id in the daemon that made the log.
 * @owner_pid: The client's pid (SO_PEERCRED), the daemon's for its own log.
 * @owner_uid: The client's uid.
 * @daemon_pid: The daemon that made the log.
 * @created_ns: CLOCK_REALTIME at creation.
 * @region_name: The region's name, NUL-terminated and NUL-padded.
 * @daemon_flags: DT_DLOG_F_*, written by the daemon only, read by the owner
 *	before each mark and persist; a client scribbling over it only changes
 *	its own way to the flush.
 *
 * The rest of the header page is zero, but the ring.
 */
struct dt_dlog_header {
	uint64_t magic;
	uint32_t version;
	uint32_t kind;
	uint64_t file_size;
	uint64_t npages;
	uint64_t region_size;
	uint64_t region_dev;
	uint64_t region_ino;
	uint8_t boot_id[16];
	uint32_t region_id;
	uint32_t owner_pid;
	uint32_t owner_uid;
	uint32_t daemon_pid;
	uint64_t created_ns;
	char region_name[DT_DLOG_NAME_MAX];
	uint32_t daemon_flags;
};

/* The bits of bitmap word @w (pages 64 @w .. 64 @w + 63) that are pages of [@first, @last]. */
static inline uint64_t dt_dlog_word_mask(uint64_t w, uint64_t first, uint64_t last)
{
	uint64_t lo = w * 64, hi = lo + 63, m = ~0ULL;

	if (first > lo)
		m &= ~0ULL << (first - lo);
	if (last < hi)
		m &= ~0ULL >> (hi - last);
	return m;
}

/*
 * Set @bits in a word whose one writer is the caller (a single writer's log,
 * the flush words): a plain load and, if a bit is missing, a release store.
 */
static inline __attribute__((always_inline)) void dt_dlog_own_set(uint64_t *p, uint64_t bits)
{
	uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);

	if ((v & bits) != bits)
		__atomic_store_n(p, v | bits, __ATOMIC_RELEASE);
}

/**
 * struct dt_dlog_geometry - Where the arrays of a log of @npages pages lie.
 * @npages: Pages tracked.
 * @nwords: Words of dirty and of flush: ceil(@npages / 64).
 * @nsum: Words of dirty_sum and of flush_sum: ceil(@nwords / 64).
 * @dirty_off, @dirty_sum_off, @flush_off, @flush_sum_off: Byte offsets in
 *	the file, each a multiple of 4096.
 * @file_size: Bytes of the file, a multiple of 4096.
 */
struct dt_dlog_geometry {
	uint64_t npages;
	uint64_t nwords;
	uint64_t nsum;
	uint64_t dirty_off, dirty_sum_off, flush_off, flush_sum_off;
	uint64_t file_size;
};

/**
 * dt_dlog_geometry() - Compute the layout of a log.
 * @npages: Pages of the region, >= 1 and < 2^52.
 * @g: Filled in.
 *
 * Context: Any.
 * Return: 0, or -EINVAL for an @npages out of range.
 */
int dt_dlog_geometry(uint64_t npages, struct dt_dlog_geometry *g);

/**
 * struct dt_dlog - A mapped log, as one side sees it.
 * @g: The geometry this side trusts (never read back from the header).
 * @base: The mapping, @g.file_size bytes; mapped and unmapped by the caller.
 * @dirty, @dirty_sum, @flush, @flush_sum: Into @base.
 * @top: The owner's third level, in its private memory: a bit a word of
 *	dirty_sum, set by a mark after the summary bit, cleared by a persist
 *	that empties the summary word; a one-page persist of a 1 GiB range
 *	reads 3 words, not 64.  NULL until dt_dlog_owner_init().
 * @single: Set by the owner while one thread alone writes the log: marks
 *	and persists then use plain loads and stores, and small marks go to
 *	the ring.  Whoever hands the log to other threads makes the switch a
 *	synchronisation point and calls dt_dlog_ring_fold() before clearing it.
 * @ring: dt_dlog_owner_init() done: the ring may be written.
 * @ring_off: A mark found the ring full and folded it: marks go to dirty
 *	until the next persist ends.
 * @ring_head, @ring_clean: The owner's copies of the ring's indices (the
 *	shared ones are only ever stored from them).
 */
struct dt_dlog {
	struct dt_dlog_geometry g;
	void *base;
	uint64_t *dirty;
	uint64_t *dirty_sum;
	uint64_t *flush;
	uint64_t *flush_sum;
	uint64_t *top;
	bool single;
	bool ring;
	bool ring_off;
	uint64_t ring_head, ring_clean;
};

/*
 * dt_dlog_own_mark() - Mark pages [@first, @last], in one bitmap word, of a
 * single writer's log: the word, its summary bit and its top bit, each with
 * dt_dlog_own_set().  Checks nothing (see dt_dlog_mark_word()).
 */
static inline void dt_dlog_own_mark(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	uint64_t w = first / 64, s = w / 64;

	dt_dlog_own_set(&l->dirty[w], (~0ULL >> (63 - (last - first))) << (first % 64));
	dt_dlog_own_set(&l->dirty_sum[s], 1ULL << (w % 64));
	if (l->top)
		dt_dlog_own_set(&l->top[s / 64], 1ULL << (s % 64));
}

/**
 * dt_dlog_mark_word() - The single writer's common mark, inline.
 * @l: The log (the writer's handle).
 * @first: First page, below the region's pages.
 * @last: Last page (inclusive), below the region's pages.
 *
 * What dt_dlog_mark() does for a mark within one bitmap word of a log with
 * one writer whose ring is off or absent, with no call.
 *
 * Context: The log's only writer.  Locks nothing.
 * Return: true if the pages are marked; false, with nothing written, if the
 * mark needs dt_dlog_mark() (a shared log, a ring taking marks, or pages in
 * more than one word).
 */
static inline bool dt_dlog_mark_word(struct dt_dlog *l, uint64_t first, uint64_t last)
{
	if (!l->single || (l->ring && !l->ring_off) || first / 64 != last / 64)
		return false;
	dt_dlog_own_mark(l, first, last);
	return true;
}

/**
 * dt_dlog_attach() - Point a handle at a mapped log.
 * @l: Filled in (no top level, not single, no ring).
 * @base: The mapping of the whole file; nothing is read from it.
 * @len: Bytes mapped.
 * @npages: The region's pages, as this side knows them.
 *
 * Context: Any.  Allocates nothing.
 * Return: 0; -EINVAL for a bad @npages; -EFBIG if @len is smaller than the
 * file the geometry needs.
 */
int dt_dlog_attach(struct dt_dlog *l, void *base, size_t len, uint64_t npages);

/**
 * dt_dlog_format() - Write the header of a new log (the daemon).
 * @base: The mapping of the whole file, all zero (a new file).
 * @len: Bytes mapped.
 * @h: The header: magic, version and file_size are filled in here from
 *	@h->npages; the caller fills every other field.
 *
 * Context: Any.
 * Return: 0; -EINVAL for a bad @h->npages or @h->kind, -EFBIG if @len is
 * smaller than the file.
 */
int dt_dlog_format(void *base, size_t len, struct dt_dlog_header *h);

/**
 * dt_dlog_check() - Check a log left by another process against what is expected.
 * @base: The mapping of the file; only the header is read.
 * @len: Its size (st_size).
 * @expect: The header expected: every field but owner_pid, owner_uid,
 *	daemon_pid, region_id, created_ns and daemon_flags is compared.
 * @why: Set to a static string naming the first mismatch (NULL on 0).
 *
 * Context: Any.
 * Return: 0 if the log may be trusted for @expect's region, else -EINVAL.
 */
int dt_dlog_check(const void *base, size_t len, const struct dt_dlog_header *expect,
		  const char **why);

/**
 * dt_dlog_daemon_flags() - The daemon's flags of a log (an acquire load).
 * @l: The log.
 *
 * Context: Any; the owner reads them before each mark and persist.
 * Return: DT_DLOG_F_* of the header.
 */
static inline uint32_t dt_dlog_daemon_flags(const struct dt_dlog *l)
{
	return __atomic_load_n(&((const struct dt_dlog_header *)l->base)->daemon_flags,
			       __ATOMIC_ACQUIRE);
}

/**
 * dt_dlog_set_daemon_flags() - Set the daemon's flags of a log.
 * @l: The log.
 * @flags: DT_DLOG_F_*.
 *
 * A release store (none if the word holds @flags already), seen by the
 * owner's next mark or persist.
 *
 * Context: The daemon.
 */
void dt_dlog_set_daemon_flags(struct dt_dlog *l, uint32_t flags);

/* ---- the owner ---- */

/**
 * dt_dlog_owner_init() - Make an attached handle the owner's.
 * @l: The log, before any mark through this handle.
 *
 * Allocates @l->top (a bit for each summary word not zero, so a log already
 * marked is walked whole) and takes the ring's indices from the file, @clean
 * bounded to @head - DT_DLOG_RING_SLOTS (and stored back if it was not).
 *
 * Context: The owner, before the log is shared between its threads.
 * Return: 0, or -ENOMEM (the handle stays usable without a top level).
 */
int dt_dlog_owner_init(struct dt_dlog *l);

/**
 * dt_dlog_owner_free() - Free what dt_dlog_owner_init() allocated.
 * @l: The handle; @l->top becomes NULL, the ring is no longer written.
 *
 * Context: The owner, no operation on @l running.
 */
void dt_dlog_owner_free(struct dt_dlog *l);

/**
 * dt_dlog_mark() - Mark pages dirty.
 * @l: The log.
 * @first: First page.
 * @last: Last page (inclusive), < @l->g.npages; the caller checks the range.
 *
 * Sets the dirty bits (a word marked whole by a release store of all ones,
 * else a release read-modify-write, even over bits already set: it is the
 * barrier that makes the caller's earlier stores visible before another
 * thread's persist may take and flush them), then the summary bits, then
 * the top bits.  With @l->single, plain stores; and with @l->ring, a mark
 * of at most DT_DLOG_RING_PAGES pages is merged into the ring's last record
 * or appended; a full ring is folded, and marks go to dirty until the next
 * persist ends.
 *
 * Context: Lock-free, from any thread of the owner (with @l->single, from
 * the one writer only).
 */
void dt_dlog_mark(struct dt_dlog *l, uint64_t first, uint64_t last);

/**
 * struct dt_dlog_run - A run of pages [@first, @last].
 */
struct dt_dlog_run {
	uint64_t first, last;
};

/**
 * dt_dlog_ring_fold() - Move the ring's records into dirty.
 * @l: The log, with @l->single (without @l->ring, nothing to do).
 *
 * Marks each record's pages in dirty, then stores @clean: at every instant
 * the pages are in the ring or in dirty.
 *
 * Context: The log's single writer.
 */
void dt_dlog_ring_fold(struct dt_dlog *l);

/**
 * typedef dt_dlog_run_fn - One run of consecutive pages [@first, @last].
 *
 * Return: 0 to go on, or a negative errno that stops the walk and is
 * returned by it.
 */
typedef int (*dt_dlog_run_fn)(void *arg, uint64_t first, uint64_t last);

/**
 * dt_dlog_clear() - Clear dirty bits of pages known to be durable.
 * @l: The log.
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Summary words left empty lose their top bits.
 *
 * Context: No mark of the range racing (the daemon's own log: the region's
 * sweep lock).
 */
void dt_dlog_clear(struct dt_dlog *l, uint64_t first, uint64_t last);

/**
 * struct dt_dlog_cursor - A persist of a range of a log, in progress.
 * @l: The log (the owner's handle).
 * @first, @last: The range, pages.
 * @w0, @w1, @s0, @s1: Its first and last bitmap and summary words.
 * @snext, @xnext: The next summary word, the next top word to read.
 * @xbits, @sbits, @wbits: What is left of the top word, of summary word
 *	@s and of bitmap word @w.
 * @s, @w: The summary word and the bitmap word being walked.
 * @in_sum: @s is being walked.
 * @walked: The bitmap walk is over.
 * @found, @lo, @hi: The extent of the pages the walk found (or took).
 * @ring, @nring, @iring: A single writer's ring records, as sorted runs,
 *	and the next one to give out.
 * @open, @run: The run being gathered.
 *
 * On the caller's stack; dt_dlog_cursor_init() fills it.
 */
struct dt_dlog_cursor {
	struct dt_dlog *l;
	uint64_t first, last;
	uint64_t w0, w1, s0, s1;
	uint64_t snext, xnext;
	uint64_t xbits, sbits, wbits;
	uint64_t s, w;
	bool in_sum, walked, found, open;
	uint64_t lo, hi;
	unsigned nring, iring;
	struct dt_dlog_run run;
	struct dt_dlog_run ring[DT_DLOG_RING_SLOTS];
};

/**
 * dt_dlog_cursor_init() - Begin a persist of pages [@first, @last] of a log.
 * @c: The cursor, filled in.
 * @l: The log (the owner's handle).
 * @first: First page.
 * @last: Last page (inclusive), < @l->g.npages.
 *
 * With @l->single, the ring's records become the cursor's if they all lie
 * in the range, else they are folded into dirty first.
 *
 * Context: The owner, persists of @l serialised by it (between its enter
 * and exit of the log).  Locks and allocates nothing.
 */
void dt_dlog_cursor_init(struct dt_dlog_cursor *c, struct dt_dlog *l, uint64_t first,
			 uint64_t last);

/**
 * dt_dlog_next() - The next runs of marked pages of a persist.
 * @c: The cursor.
 * @runs: Filled with up to @max runs, ascending, none overlapping or
 *	touching another (of this call or of the others).
 * @max: Room in @runs, >= 1.
 *
 * The caller flushes them and calls again until it gets fewer than @max.
 * A shared log's pages move into flush as they are given out (a racing
 * mark lands in dirty again); a single writer's are only read.
 *
 * Context: As dt_dlog_cursor_init().
 * Return: The number of runs given; fewer than @max: the persist has them all.
 */
int dt_dlog_next(struct dt_dlog_cursor *c, struct dt_dlog_run *runs, unsigned max);

/**
 * dt_dlog_cursor_done() - End a persist whose pages are durable.
 * @c: The cursor (pages not given out yet are walked first).
 *
 * After the drain: the pages found leave the log (a single writer's dirty
 * bits, a shared log's flush bits, of the extent found) and the ring's
 * records are settled.
 *
 * Context: As dt_dlog_cursor_init().
 */
void dt_dlog_cursor_done(struct dt_dlog_cursor *c);

/**
 * dt_dlog_cursor_abort() - End a persist whose pages did not become durable.
 * @c: The cursor.
 *
 * The pages stay marked: a shared log's taken pages go back into dirty
 * before they leave flush; a single writer's never left dirty or the ring.
 *
 * Context: As dt_dlog_cursor_init().
 */
void dt_dlog_cursor_abort(struct dt_dlog_cursor *c);

/* ---- the reader: read only, from any thread, serialised by the caller per shadow ---- */

/**
 * struct dt_dlog_scan_stats - What reading a log met (accumulated).
 * @words: Words read.
 * @set_pages: Pages found newly set (dt_dlog_scan()) or set (for_each).
 * @cleared_pages: Pages found newly cleared (dt_dlog_scan()).
 * @bad_bits: Bits set past the region's last page (ignored), ring records
 *	with pages past it (those pages ignored), more records pending than
 *	the ring holds (each slot then read).
 * @bad_summary: Non-zero words whose summary bit was clear (a full read).
 */
struct dt_dlog_scan_stats {
	uint64_t words;
	uint64_t set_pages;
	uint64_t cleared_pages;
	uint64_t bad_bits;
	uint64_t bad_summary;
};

/**
 * dt_dlog_for_each() - Every page that may be dirty in a range.
 * @l: The log.
 * @first: First page.
 * @last: Last page (inclusive); clamped to the region.
 * @full: Read every word, not only those the summaries name (a dead
 *	owner's log, a recovery).
 * @run: Called for each run of pages in dirty | flush or in a ring record
 *	not settled, ascending.
 * @arg: For @run.
 * @st: Accumulated into; may be NULL.
 *
 * Return: 0 or @run's error.
 */
int dt_dlog_for_each(const struct dt_dlog *l, uint64_t first, uint64_t last, bool full,
		     dt_dlog_run_fn run, void *arg, struct dt_dlog_scan_stats *st);

/**
 * struct dt_dlog_shadow - The reader's private copy of a log as last scanned.
 * @words: A word a log word: dirty | flush as last seen.
 * @sum: A bit a word of @words that is not zero.
 * @nwords: As the log's.
 *
 * dt_dlog_shadow_init() allocates it from @l->g only (so a shadow also
 * serves as a set of pages of a region); dt_dlog_shadow_free() frees it.
 * Init returns 0 or -ENOMEM.
 */
struct dt_dlog_shadow {
	uint64_t *words;
	uint64_t *sum;
	uint64_t nwords;
};

int dt_dlog_shadow_init(struct dt_dlog_shadow *s, const struct dt_dlog *l);
void dt_dlog_shadow_free(struct dt_dlog_shadow *s);

/* Whether @page was set in the shadow (false past its end). */
bool dt_dlog_shadow_test(const struct dt_dlog_shadow *s, uint64_t page);

/*
 * Set, or forget, pages [@first, @last] of a shadow (clamped to it); a page
 * forgotten and still set in the log is reported as newly set by the next
 * dt_dlog_scan().
 */
void dt_dlog_shadow_set(struct dt_dlog_shadow *s, uint64_t first, uint64_t last);
void dt_dlog_shadow_clear(struct dt_dlog_shadow *s, uint64_t first, uint64_t last);

/**
 * dt_dlog_shadow_for_each() - Every run of pages set in a shadow.
 * @s: The shadow.
 * @run: Called for each run, ascending.
 * @arg: For @run.
 *
 * Return: 0 or @run's error.
 */
int dt_dlog_shadow_for_each(const struct dt_dlog_shadow *s, dt_dlog_run_fn run, void *arg);

/**
 * dt_dlog_scan() - What changed in a log since the last scan.
 * @l: The log.
 * @s: Its shadow, updated.
 * @full: As for dt_dlog_for_each().
 * @set: Called for each run of pages set now and not in @s, ascending.
 * @cleared: Called for each run of pages in @s and not set now.
 * @arg: For both.
 * @st: Accumulated into; may be NULL.
 *
 * Each word is read once (dirty | flush and the ring's pages, acquire
 * loads, after the summary words that name it), compared with @s, and @s
 * takes the new value; runs are gathered across words.
 *
 * Return: 0 or the first callback error.  Then the runs not reported are
 * put back into @s as they were, and the words after are not read: a later
 * scan reports them again.
 */
int dt_dlog_scan(const struct dt_dlog *l, struct dt_dlog_shadow *s, bool full, dt_dlog_run_fn set,
		 dt_dlog_run_fn cleared, void *arg, struct dt_dlog_scan_stats *st);

#endif /* DAXTRACK_DIRTYLOG_H */
