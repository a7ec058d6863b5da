/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daxtrack/dirtylog.h - the shared dirty log: a write-intent bitmap of one
 * region, in shared memory, written by one side and read by the other.
 *
 * A log is a file (in the daemon's runtime directory, so that it outlives
 * the daemon but not a reboot) of DT_DLOG_HEADER_SIZE bytes of header and
 * four arrays of little-endian 64-bit words, each starting on a 4 KiB page:
 *
 *   dirty     one bit per 4 KiB page of the region: set by a mark, before or
 *             after the store it covers, and before the persist that must
 *             cover it;
 *   dirty_sum one bit per word of dirty: set after a bit of that word;
 *   flush     one bit per page: the pages a persist took out of dirty and is
 *             flushing now, cleared only after its pmem_drain();
 *   flush_sum one bit per word of flush.
 *
 * A page "may be dirty" while its bit is set in dirty or in flush: at every
 * instant a marked page is in one of the two until a drain made it durable.
 * That is the write-intent record of md's bitmap: bits are set before the
 * flush that covers them and cleared lazily after it.
 *
 * Who writes what:
 *   - The header is written by the daemon (dt_dlog_format()); afterwards
 *     only its @daemon_flags word changes, written by the daemon alone
 *     (dt_dlog_set_daemon_flags()).  A reader never trusts the header of a mapped
 *     log for its geometry: it passes the geometry it knows
 *     (dt_dlog_attach()); dt_dlog_check() compares a header with what is
 *     expected, for the recovery of logs left by a previous daemon.
 *   - The owner (the client of a client log, the daemon of its own log)
 *     marks from any number of threads (dt_dlog_mark(), lock-free) and
 *     persists ranges through a cursor (dt_dlog_cursor_init(),
 *     dt_dlog_next(), dt_dlog_cursor_done()), one persist of a log at a
 *     time.
 *   - The other side only reads (dt_dlog_scan(), dt_dlog_for_each()), and
 *     treats every word as hostile input: bits past the region's last page
 *     are ignored and counted, a summary bit missing over a non-zero word
 *     only delays a scan (a full scan ignores the summaries).
 *
 * A bitmap has no records to tear or wrap: every word is whole, a mark is
 * idempotent and the log never fills, so there is no doorbell to ring.
 *
 * The single writer's ring (struct dt_dlog_ring, in the header page): while
 * one thread alone writes a log (@single), a mark of at most
 * DT_DLOG_RING_PAGES pages is a record appended to a ring of
 * DT_DLOG_RING_SLOTS, not bits in dirty: two stores to lines the writer
 * keeps hot, where a bit of a scattered page is a store to a cold line that
 * the persist's drain then waits for.  The pages of the records in
 * [@clean, @head) may be dirty, as the bits of dirty and flush are; a full
 * ring is folded into dirty (dt_dlog_ring_fold()), and a persist that
 * flushed the records' pages moves @clean to @head after its drain
 * (dt_dlog_cursor_done()).  The reader adds them to every read, after
 * bounding @head - @clean and every record by the region.
 */
#ifndef DAXTRACK_DIRTYLOG_H
#define DAXTRACK_DIRTYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DT_DLOG_MAGIC		0x31474f4c4b545844ULL	/* "DXTKLOG1", little endian */
#define DT_DLOG_VERSION		2	/* 2: the single writer's ring */
#define DT_DLOG_HEADER_SIZE	4096u
#define DT_DLOG_NAME_MAX	64

/*
 * The single writer's ring: at DT_DLOG_RING_OFF of the header page.  A
 * record is one little-endian word: the first page << 12 | (pages - 1).
 */
#define DT_DLOG_RING_OFF	2048u
#define DT_DLOG_RING_SLOTS	64u
#define DT_DLOG_RING_PAGES	64u	/* the most pages the writer puts in a record */
#define DT_DLOG_REC_SHIFT	12
#define DT_DLOG_REC(first, last) ((uint64_t)(first) << DT_DLOG_REC_SHIFT | ((last) - (first)))

/**
 * struct dt_dlog_ring - The single writer's records, in the header page.
 * @head: Records appended so far (free-running); stored after the record.
 * @clean: Records whose pages are durable, or folded into dirty (before
 *	it is stored); @head - @clean <= DT_DLOG_RING_SLOTS.
 * @rec: Record i is in slot i % DT_DLOG_RING_SLOTS; a record in
 *	[@clean, @head) may only grow (the writer merging the next mark into
 *	its last record), a slot is reused only after @clean passed it.
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
						 * new one recovered it and removed it; its
						 * owner must reconnect (through the socket
						 * path) for its marks to reach a daemon */
#define DT_DLOG_F_FLUSHED	(1U << 2)	/* with ORPHAN: every page marked before
						 * the owner could see ORPHAN is durable (the
						 * new daemon set ORPHAN, made every thread
						 * pass a barrier, then flushed the log's
						 * pages): the owner carries no mark over */

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
 * @file_size: Bytes of the whole file, dt_dlog_file_size(@npages).
 * @npages: Pages of the region (4 KiB each, the last one maybe partial).
 * @region_size: Bytes of the region.
 * @region_dev: st_dev of the region's file, st_rdev of a device-DAX device.
 * @region_ino: st_ino of the region's file or device.
 * @boot_id: /proc/sys/kernel/random/boot_id of the boot the log was made in,
 *	as 16 bytes: a log of another boot is never recovered from.
 * @region_id: The region's id in the daemon that made the log.
 * @owner_pid: The client's pid (SO_PEERCRED), the daemon's for its own log.
 * @owner_uid: The client's uid.
 * @daemon_pid: The daemon that made the log.
 * @created_ns: CLOCK_REALTIME at creation.
 * @region_name: The region's name, NUL-terminated and NUL-padded.
 * @daemon_flags: DT_DLOG_F_*, set by the daemon while the log lives; an
 *	owner reads it before each mark and persist (dt_dlog_daemon_flags()).  A client
 *	that scribbles over it only changes its own way to the flush.
 *
 * The offsets of the arrays follow from @npages (dt_dlog_geometry()), so
 * they are not stored.  The rest of the header is zero.
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

/**
 * dt_dlog_word_mask() - The bits of bitmap word @w that are pages of [@first, @last].
 * @w: The word (pages 64 @w .. 64 @w + 63).
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Return: The mask; 0 bits outside the range, never 0 for a word the range
 * touches.
 */
static inline uint64_t dt_dlog_word_mask(uint64_t w, uint64_t first, uint64_t last)
{
	uint64_t lo = w * 64, hi = lo + 63, m = ~0ULL;

	if (first > lo)
		m &= ~0ULL << (first - lo);
	if (last < hi)
		m &= ~0ULL >> (hi - last);
	return m;
}

/**
 * dt_dlog_own_set() - Set @bits in a word that has one writer, the caller.
 * @p: The word, in the shared file.
 * @bits: The bits.
 *
 * A plain load and, if a bit is missing, a release store: no locked
 * instruction.  For a single writer's log (dt_dlog.single) and the flush
 * words, which only their writer sets.
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
 * Return: 0, or -EINVAL for an @npages out of range.
 */
int dt_dlog_geometry(uint64_t npages, struct dt_dlog_geometry *g);

/**
 * struct dt_dlog - A mapped log, as one side sees it.
 * @g: The geometry this side trusts (never read back from the header).
 * @base: The mapping, @g.file_size bytes; owned by the caller.
 * @dirty, @dirty_sum, @flush, @flush_sum: Into @base.
 * @top: The owner's third level, in its private memory (never shared):
 *	one bit per word of dirty_sum, set by a mark after the summary bit,
 *	cleared by a take that leaves the summary word empty.  NULL (the
 *	reader, the daemon's own log) until dt_dlog_owner_init().  A take walks
 *	by it: a one-page persist of a 1 GiB range reads 3 words, not 64.
 * @single: Set by the owner while one thread alone writes the log (its own
 *	guarantee, see dt_dlog_owner_init()): marks, takes and clears then
 *	use plain loads and stores, no locked instruction, and small marks
 *	go to the ring (after dt_dlog_owner_init()).
 * @ring: The owner's: dt_dlog_owner_init() done, the ring may be written.
 * @ring_off: The owner's: a mark found the ring full and folded it; marks
 *	go to dirty until the next persist's dt_dlog_cursor_done().
 * @ring_head, @ring_clean: The owner's copies of the ring's indices (the
 *	shared ones are only ever stored from them).
 *
 * Fill it with dt_dlog_attach(); the caller maps and unmaps @base.
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

/**
 * dt_dlog_own_mark() - Mark pages within one bitmap word of a single writer's log.
 * @l: The log (the writer's handle), with @l->single.
 * @first: First page, below the region's pages.
 * @last: Last page (inclusive), in the same word as @first.
 *
 * The dirty word, its summary bit and its top bit, each with
 * dt_dlog_own_set().  Checks nothing: dt_dlog_mark_word() is the checked
 * way in.  Locks nothing; the caller is the log's only writer.
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
 * The mark of pages within one bitmap word, in a log with one writer whose
 * ring is off or absent: dt_dlog_own_mark(), no call and no locked
 * instruction.  It does what dt_dlog_mark() does for such a mark.  Locks
 * nothing; the caller is the log's only writer, as for dt_dlog_mark().
 *
 * Return: true if the pages are marked; false if the mark needs
 * dt_dlog_mark() (the log is shared, its ring takes marks, or the pages
 * span more than one word), with nothing written.
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
 * @l: Filled in.
 * @base: The mapping of the whole file.
 * @len: Bytes mapped.
 * @npages: The region's pages, as this side knows them.
 *
 * Reads nothing from @base.
 *
 * Return: 0; -EINVAL for a bad @npages; -EFBIG if @len is smaller than the
 * file the geometry needs.
 */
int dt_dlog_attach(struct dt_dlog *l, void *base, size_t len, uint64_t npages);

/**
 * dt_dlog_format() - Write the header of a new log (the daemon).
 * @base: The mapping of the whole file, all zero (a new file).
 * @len: Bytes mapped, at least @h->file_size.
 * @h: The header: magic, version and file_size are filled in here from
 *	@h->npages; the caller fills every other field.
 *
 * Return: 0; -EINVAL for a bad @h->npages or @h->kind, -EFBIG if @len is
 * too small.
 */
int dt_dlog_format(void *base, size_t len, struct dt_dlog_header *h);

/**
 * dt_dlog_check() - Check a log left by another process against what is expected.
 * @base: The mapping of the file.
 * @len: Its size (st_size).
 * @expect: The header expected: every field but owner_pid, owner_uid,
 *	daemon_pid, region_id, created_ns and daemon_flags is compared (magic,
 *	version, kind, file_size, npages, region size, dev, ino, boot id, name).
 * @why: Set to a static string naming the first mismatch.
 *
 * Return: 0 if the log may be trusted for @expect's region; -EINVAL (with
 * @why) otherwise.  Only the header is read.
 */
int dt_dlog_check(const void *base, size_t len, const struct dt_dlog_header *expect,
		  const char **why);

/**
 * dt_dlog_daemon_flags() - The daemon's flags of a log (an atomic load).
 * @l: The log.
 *
 * Inline: the owner reads it before each mark and persist.
 *
 * Return: DT_DLOG_F_* of the header.
 */
static inline uint32_t dt_dlog_daemon_flags(const struct dt_dlog *l)
{
	return __atomic_load_n(&((const struct dt_dlog_header *)l->base)->daemon_flags,
			       __ATOMIC_ACQUIRE);
}

/**
 * dt_dlog_set_daemon_flags() - Set the daemon's flags of a log (the daemon).
 * @l: The log.
 * @flags: DT_DLOG_F_*.
 *
 * An atomic store (none if the word holds @flags already), seen by the
 * owner's next mark or persist.
 */
void dt_dlog_set_daemon_flags(struct dt_dlog *l, uint32_t flags);

/* ---- the owner ---- */

/**
 * dt_dlog_owner_init() - Give the owner's handle its private top level.
 * @l: The attached log, before any mark through this handle.
 *
 * Allocates @l->top (freed by dt_dlog_owner_free()) and sets a bit for each
 * summary word that is not zero, so a log already marked is walked whole.
 * The owner may then set @l->single while one thread alone writes: a mark
 * becomes plain stores, and so do a take and a release.  Whoever hands the
 * log from one thread to another, or to many, must make the switch a
 * synchronisation point (all of the previous writer's stores visible, none
 * of its operations still running) before changing @l->single.
 *
 * Also takes the ring's indices from the file (a fresh log: 0), @clean
 * bounded to @head - DT_DLOG_RING_SLOTS and stored back if it was not,
 * for the single writer's ring; whoever clears @l->single must first
 * dt_dlog_ring_fold() (the other writers' operations do not read the ring).
 *
 * Return: 0, or -ENOMEM (the handle stays usable without a top level).
 */
int dt_dlog_owner_init(struct dt_dlog *l);

/**
 * dt_dlog_owner_free() - Free what dt_dlog_owner_init() allocated.
 * @l: The handle; @l->top becomes NULL.
 */
void dt_dlog_owner_free(struct dt_dlog *l);

/**
 * dt_dlog_mark() - Mark pages dirty.
 * @l: The log.
 * @first: First page.
 * @last: Last page (inclusive), < @l->g.npages.
 *
 * Sets the dirty bits, one atomic operation a word: a release store of all
 * ones for a word marked whole, else a read-modify-write (which writes even
 * over bits already set: it is the barrier that makes the caller's earlier
 * stores visible before another thread's take may flush them), then the
 * summary bits, then the top bits (if @l->top).  Lock-free, from any thread.
 * With @l->single, plain stores where a bit is missing: the one writer's
 * take follows its stores in program order; and with @l->ring, a range of
 * at most DT_DLOG_RING_PAGES pages is merged into the ring's last record
 * where it overlaps or touches it, else appended: no store to dirty.  A
 * mark that finds the ring full folds it and goes to dirty, as every mark
 * does until the next persist ends.  The caller checks the range.
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
 * @l: The log, with @l->single (and @l->ring, else nothing to do).
 *
 * Marks each record's pages in dirty (plain stores, the single writer's),
 * then stores @clean: at every instant the pages are in the ring or in
 * dirty.  Called by a mark that finds the ring full, a persist of a range
 * that does not hold every record, and before @l->single is cleared.
 */
void dt_dlog_ring_fold(struct dt_dlog *l);

/**
 * typedef dt_dlog_run_fn - One run of consecutive pages.
 * @arg: The caller's.
 * @first: First page.
 * @last: Last page (inclusive).
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
 * For the daemon's own log, whose pages it flushes by its tree: the
 * caller makes sure no mark of the range is racing (the daemon: the
 * region's sweep lock).  Summary words left empty lose their top bits.
 */
void dt_dlog_clear(struct dt_dlog *l, uint64_t first, uint64_t last);

/**
 * struct dt_dlog_cursor - A persist of a range of a log, in progress.
 * @l: The log (the owner's handle).
 * @first, @last: The range, pages.
 * @w0, @w1, @s0, @s1: Its first and last bitmap and summary words.
 * @snext, @xnext: The next summary word, the next top word to read.
 * @xbits, @sbits, @wbits: What is left of the top word, the summary word
 *	@s and the bitmap word @w being walked.
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
 * @l: The log (the owner's handle); persists of a log are serialised by
 *	its owner.
 * @first: First page.
 * @last: Last page (inclusive), < @l->g.npages.
 *
 * With @l->single, the ring's records go to the cursor if they all lie in
 * the range, else they are folded into dirty first.
 *
 * Context: The owner's, between its enter and exit of the log.  Locks and
 * allocates nothing.
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
 * The caller flushes them, and calls again until it gets fewer than @max
 * (it may call again then: it gets 0).  A shared
 * log's pages are moved into flush as they are given out (a racing mark
 * lands in dirty again); a single writer's are only read.
 *
 * Context: As dt_dlog_cursor_init().
 * Return: The number of runs given; fewer than @max: the persist has them
 * all.
 */
int dt_dlog_next(struct dt_dlog_cursor *c, struct dt_dlog_run *runs, unsigned max);

/**
 * dt_dlog_cursor_done() - End a persist whose pages are durable.
 * @c: The cursor (pages not given out yet are walked first).
 *
 * After the drain that followed the flushes: the pages found leave the
 * log (a single writer's dirty bits, a shared log's flush bits, of the
 * extent the walk found) and the ring's records are settled.
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

/* ---- the reader ---- */

/**
 * struct dt_dlog_scan_stats - What reading a log met (accumulated).
 * @words: Words read.
 * @set_pages: Pages found newly set (dt_dlog_scan()) or set (for_each).
 * @cleared_pages: Pages found newly cleared (dt_dlog_scan()).
 * @bad_bits: Bits set past the region's last page (ignored), and ring
 *	records with pages past it (those pages ignored) or more pending
 *	than the ring holds (each slot then read).
 * @bad_summary: Non-zero words whose summary bit was clear (a full scan).
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
 * @l: The log (read only).
 * @first: First page.
 * @last: Last page (inclusive); clamped to the region.
 * @full: Read every word, not only those the summaries name (a dead
 *	owner's log, a recovery).
 * @run: Called for each run of pages set in dirty | flush or in a ring
 *	record not settled, ascending.
 * @arg: For @run.
 * @st: Accumulated into; may be NULL.
 *
 * Return: 0 or @run's error.
 */
int dt_dlog_for_each(const struct dt_dlog *l, uint64_t first, uint64_t last, bool full,
		     dt_dlog_run_fn run, void *arg, struct dt_dlog_scan_stats *st);

/**
 * struct dt_dlog_shadow - The reader's private copy of a log as last scanned.
 * @words: One word per log word: dirty | flush as last seen.
 * @sum: One bit per word of @words that is not zero.
 * @nwords: As the log's.
 *
 * Allocated by dt_dlog_shadow_init() (which reads only @l->g: a set of
 * pages of a region's geometry serves too), freed by dt_dlog_shadow_free().
 */
struct dt_dlog_shadow {
	uint64_t *words;
	uint64_t *sum;
	uint64_t nwords;
};

int dt_dlog_shadow_init(struct dt_dlog_shadow *s, const struct dt_dlog *l);
void dt_dlog_shadow_free(struct dt_dlog_shadow *s);

/**
 * dt_dlog_shadow_test() - Whether a page was set in a log at its last scan.
 * @s: The shadow.
 * @page: The page; false past the end.
 */
bool dt_dlog_shadow_test(const struct dt_dlog_shadow *s, uint64_t page);

/**
 * dt_dlog_shadow_set() - Set pages of a shadow (a set of pages of its own).
 * @s: The shadow.
 * @first: First page.
 * @last: Last page (inclusive); clamped to the shadow.
 */
void dt_dlog_shadow_set(struct dt_dlog_shadow *s, uint64_t first, uint64_t last);

/**
 * dt_dlog_shadow_clear() - Forget pages of a shadow.
 * @s: The shadow.
 * @first: First page.
 * @last: Last page (inclusive); clamped to the shadow.
 *
 * The next dt_dlog_scan() reports those still set in the log as newly set.
 */
void dt_dlog_shadow_clear(struct dt_dlog_shadow *s, uint64_t first, uint64_t last);

/**
 * dt_dlog_shadow_for_each() - Every run of pages set in a shadow.
 * @s: The shadow (only pages of the region: a scan never keeps others).
 * @run: Called for each run, ascending.
 * @arg: For @run.
 *
 * Return: 0 or @run's error.
 */
int dt_dlog_shadow_for_each(const struct dt_dlog_shadow *s, dt_dlog_run_fn run, void *arg);

/**
 * dt_dlog_scan() - What changed in a log since the last scan.
 * @l: The log (read only).
 * @s: Its shadow, updated.
 * @full: As for dt_dlog_for_each().
 * @set: Called for each run of pages set now and not in @s, ascending.
 * @cleared: Called for each run of pages in @s and not set now.
 * @arg: For both.
 * @st: Accumulated into; may be NULL.
 *
 * Each word is read once (dirty | flush, acquire loads, after the summary
 * words that name it; with the pages of the ring records not settled, read
 * first), compared with @s, and @s takes the new value.
 * Runs are gathered across words, so a callback may report pages of many.
 *
 * Return: 0 or the first callback error.  Then the run that failed and the
 * other kind's run not yet reported are put back into @s as they were, and
 * the words after are not read: a later scan reports all of them again.
 */
int dt_dlog_scan(const struct dt_dlog *l, struct dt_dlog_shadow *s, bool full, dt_dlog_run_fn set,
		 dt_dlog_run_fn cleared, void *arg, struct dt_dlog_scan_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* DAXTRACK_DIRTYLOG_H */
