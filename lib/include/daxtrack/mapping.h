/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daxtrack/mapping.h - the DAX mapping layer of libdaxtrack.
 *
 * A mapping tracks one DAX region of npages 4KiB pages the way the kernel's
 * fs/dax.c tracks a DAX file: one multi-order tree (daxtrack/tree.h) whose
 * entries say where each faulted page lives, whether a fault is in progress
 * on it, and (through the tree's tags) whether it is dirty.
 *
 * Entries: each is a tree value entry, dt_value(v), with v laid out as
 *
 *   bit 0      DT_ENTRY_LOCKED  the entry lock (see "Entry locks")
 *   bit 1      DT_ENTRY_PMD     a 2MiB entry: one order-9 tree entry at a
 *                               2MiB-aligned page offset; clear: a 4KiB
 *                               entry, order 0
 *   bit 2      DT_ENTRY_ZERO    a hole mapped to the zero page: no sector
 *   bit 3      DT_ENTRY_EMPTY   a placeholder, only ever seen locked, while
 *                               its holder faults the page in
 *   bits 4-62  sector           the device sector (512-byte units) of the
 *                               first byte of the entry; 0 for ZERO/EMPTY
 *
 * A "real" entry has neither ZERO nor EMPTY set.  Dirty state is never kept
 * in the entry but in the tree's tags, once per entry whatever its size:
 *
 *   tag 0  DT_TAG_DIRTY     written since it was last flushed
 *   tag 1  DT_TAG_TOWRITE   to be flushed by a writeback in progress
 *   tag 2  DT_TAG_LOGGED    set in a client's shared dirty log (lib/log/
 *                           dirtylog.h), as its reader last saw it: the
 *                           reader sets and clears it
 *                           (dt_mapping_mark_logged(),
 *                           dt_mapping_clear_logged()); nothing else of the
 *                           mapping touches it, and it never touches DIRTY
 *                           or TOWRITE
 *
 * Entry locks: whoever holds an entry's lock (bit 0, taken with
 * dt_tree_cmpxchg()) is the only thread that may replace, delete or split
 * the entry or clear its DIRTY tag.  Threads that find an entry locked sleep
 * in a hashed table of wait queues keyed by (mapping, first index of the
 * entry), so no memory is spent per entry on waiting.  No lock of any kind is
 * held while sleeping, except the entry locks a caller of dt_mapping_grab()
 * chose to keep.
 *
 * Threads: every thread calling into a mapping must be registered with
 * urcu-memb (see daxtrack/tree.h).  Every function is safe from any number
 * of threads at once.
 */
#ifndef DAXTRACK_MAPPING_H
#define DAXTRACK_MAPPING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <daxtrack/tree.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dt_mapping;

/* The bits of an entry's value (dt_to_value() of the tree entry). */
#define DT_ENTRY_LOCKED		(1ULL << 0)
#define DT_ENTRY_PMD		(1ULL << 1)
#define DT_ENTRY_ZERO		(1ULL << 2)
#define DT_ENTRY_EMPTY		(1ULL << 3)
#define DT_ENTRY_SECTOR_SHIFT	4
/* Sectors are below 2^59 so that an entry value stays below 2^63. */
#define DT_ENTRY_MAX_SECTOR	((1ULL << (63 - DT_ENTRY_SECTOR_SHIFT)) - 1)

/* The tree tags a mapping uses. */
#define DT_TAG_DIRTY		0
#define DT_TAG_TOWRITE		1
#define DT_TAG_LOGGED		2

/* Pages are 4KiB; a PMD entry covers 2^9 of them; a sector is 512 bytes. */
#define DT_PAGE_SHIFT		12
#define DT_PMD_ORDER		9
#define DT_SECTORS_PER_PAGE	8

/**
 * typedef dt_sector_fn - The region's geometry.
 * @arg: The argument given to dt_mapping_new().
 * @pgoff: First page of a run, aligned to 2^@order.
 * @order: 0 for a 4KiB page, 9 for a 2MiB page.
 * @sector: Set to the device sector (512-byte units) of the run's first byte;
 *	    the run is contiguous on the device.  At most DT_ENTRY_MAX_SECTOR.
 *
 * Called without any lock of the mapping held, with the run's EMPTY or ZERO
 * entry locked, when a write fault or dt_mapping_mark_dirty() needs a real
 * entry; or, when dt_mapping_mark_dirty() meets a hole, with nothing at the
 * run yet (the entry goes in after, DIRTY; if another came meanwhile, the
 * answer is dropped and the ordinary fault path runs).  It must not call
 * back into the mapping for that run.
 *
 * Return: 0, or a negative errno that the fault returns.
 */
typedef int (*dt_sector_fn)(void *arg, uint64_t pgoff, unsigned order, uint64_t *sector);

/**
 * struct dt_flush_ops - How a writeback makes data durable.
 * @flush: Write back @len bytes at @offset from the region's start (e.g.
 *	   pmem_flush()).  Called with the locks of the entries being flushed
 *	   held (a batch of up to 512 entries of the writeback's range): it must
 *	   not fault, grab, mark dirty, punch or write back the dirty pages of
 *	   that range.
 * @drain: Wait for the flushes to complete (e.g. pmem_drain()); called once
 *	   at the end of a writeback that flushed anything.  May be NULL.
 * @flags: DT_FLUSH_* bits; 0 for none.
 * @prefetch: Start loading the translations of @len bytes at @offset, which
 *	   @flush will be given next (e.g. a prefetch instruction per 4KiB
 *	   page).  May be NULL.  The writeback calls it for its ranges in
 *	   groups of 8, each range some ranges before @flush gets it (at the
 *	   end, the rest, then their flushes).  A write-back that misses the
 *	   TLB waits for its page walk, so @flush alone meets one walk per page
 *	   in turn; the prefetches start a group's walks together.  Called
 *	   where @flush is, under the same rules; it must not fault (a prefetch
 *	   instruction never does).
 *
 * DT_FLUSH_NONBLOCKING: @flush only issues cache-line write-backs (clwb,
 * clflushopt: pmem_flush() on pmem, nothing on eADR): it never sleeps, never
 * makes a system call and never calls the mapping.  The writeback may then
 * call it with the tree's mutex held, as it locks each entry, so that the
 * search for the next entry runs while the write-backs of the previous ones
 * are in flight.  On x86 it also lets the writeback skip the entry locks:
 * it flushes and cleans the entries under the mutex and issues a full
 * fence (mfence, which orders clwb and clflushopt) before releasing it, so
 * @flush's write-backs must be ones such a fence orders.  Never set it for
 * pmem_msync() or anything that can block: every writer of the mapping
 * would wait for it.
 */
struct dt_flush_ops {
	void (*flush)(void *arg, uint64_t offset, uint64_t len);
	void (*drain)(void *arg);
	unsigned flags;
	void (*prefetch)(void *arg, uint64_t offset, uint64_t len);
};

#define DT_FLUSH_NONBLOCKING	(1u << 0)

/**
 * dt_mapping_new() - Create the mapping of a region.
 * @npages: Size of the region in 4KiB pages, 1 .. 2^52 - 1.
 * @pmd_capable: Whether 2MiB entries may be used (the region is 2MiB-aligned
 *		 on the device and in the address space).
 * @sector: The region's geometry; not NULL.
 * @arg: Passed to @sector.
 *
 * Context: Any registered thread.  Allocates.
 * Return: The mapping (free it with dt_mapping_free()), or NULL with errno
 * EINVAL for bad arguments or ENOMEM.
 */
struct dt_mapping *dt_mapping_new(uint64_t npages, bool pmd_capable, dt_sector_fn sector,
				  void *arg);

/**
 * dt_mapping_free() - Free a mapping and its tree.
 * @m: The mapping, or NULL.
 *
 * No other thread may use @m during or after the call; no entry may be
 * locked.
 *
 * Context: A registered thread, outside any read-side critical section.
 */
void dt_mapping_free(struct dt_mapping *m);

/**
 * dt_mapping_tree() - The tree of a mapping.
 * @m: The mapping.
 *
 * For embedders and tests that want the tree itself, for reading only:
 * changing the tree directly breaks the mapping's rules.  Readers of
 * entries need not see the tree: dt_mapping_lookup(), dt_mapping_next(),
 * dt_mapping_stats() and dt_mapping_dump() decode them (daxtrackd uses only
 * those).
 *
 * Return: The tree, owned by @m.
 */
struct dt_tree *dt_mapping_tree(struct dt_mapping *m);

/**
 * dt_mapping_npages() - The size of a mapping's region.
 * @m: The mapping.
 *
 * Return: The number of 4KiB pages given to dt_mapping_new().
 */
uint64_t dt_mapping_npages(const struct dt_mapping *m);

/* The size of a fault: the tree order of its entry. */
enum dt_size { DT_PTE = 0, DT_PMD = 9 };

/* Flags of struct dt_fault. */
#define DT_FAULT_FALLBACK	(1U << 0)	/* a PMD fault was done as a PTE fault */
#define DT_FAULT_ZERO		(1U << 1)	/* the entry maps the zero page (no sector) */
#define DT_FAULT_EMPTY		(1U << 2)	/* grab only: the entry is a locked placeholder */
#define DT_FAULT_NEW		(1U << 3)	/* this call created the entry or gave it a sector */
#define DT_FAULT_DIRTY		(1U << 4)	/* the entry is tagged DIRTY (a write not logged) */
#define DT_FAULT_DOWNGRADE	(1U << 5)	/* a PMD ZERO entry was removed for a PTE entry */

/**
 * struct dt_fault - What a fault or a grab found or made.
 * @base: First page of the entry.
 * @order: Its order: DT_PTE or DT_PMD, the size actually used.
 * @sector: Device sector of page @base; 0 for ZERO and EMPTY entries.
 * @flags: DT_FAULT_* flags.
 */
struct dt_fault {
	uint64_t base;
	unsigned order;
	uint64_t sector;
	unsigned flags;
};

/**
 * dt_mapping_fault() - Record a page fault.
 * @m: The mapping.
 * @pgoff: The faulting page.
 * @size: DT_PTE or DT_PMD.
 * @write: A write fault (the entry gets a sector and is tagged DIRTY) or a
 *	   read fault (a hole gets a ZERO entry).
 * @out: Filled in on success; may be NULL.
 *
 * A PMD fault is done as a PTE fault (DT_FAULT_FALLBACK) when the mapping is
 * not PMD-capable, when the 2MiB range is not wholly inside the region, or
 * when it already holds PTE entries.  A PTE fault inside a PMD ZERO entry
 * removes that entry and makes a PTE entry (DT_FAULT_DOWNGRADE); inside a
 * real PMD entry it uses the PMD entry.  A write fault on a ZERO entry gives
 * it a sector from the geometry callback.
 *
 * Context: May sleep waiting for an entry lock and call the geometry
 * callback.  Allocates.
 * Return: 0; -ERANGE if @pgoff is past the region's end; -EINVAL for a bad
 * @size; -ENOMEM; the geometry callback's error.  Nothing changes on error.
 */
int dt_mapping_fault(struct dt_mapping *m, uint64_t pgoff, enum dt_size size, bool write,
		     struct dt_fault *out);

/**
 * dt_mapping_fault_logged() - Record a write fault whose stores a log records.
 * @m: The mapping.
 * @pgoff: The faulting page.
 * @size: DT_PTE or DT_PMD, with the rules of dt_mapping_fault().
 * @out: Filled in on success; may be NULL.
 *
 * dt_mapping_fault() with @write, but the entry is not tagged DIRTY: the
 * writer marks what it stores in a shared dirty log, which is the record of
 * its dirty pages (the daemon's LOGGED tag), and persists them itself.  A
 * hole or a ZERO entry gets its sector (DT_FAULT_NEW); DT_FAULT_DIRTY is
 * never set.  As the kernel maps a page writable at once, without a
 * write-notify fault, where nobody needs to learn that it gets dirty.
 *
 * Context: As dt_mapping_fault().
 * Return: As dt_mapping_fault().
 */
int dt_mapping_fault_logged(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
			    struct dt_fault *out);

/**
 * dt_mapping_grab() - Find or create the entry of a page and lock it.
 * @m: The mapping.
 * @pgoff: The page.
 * @size: DT_PTE or DT_PMD, with the rules of dt_mapping_fault().
 * @out: Filled in (base, order, sector, flags); may be NULL.
 *
 * Where no entry exists, a locked EMPTY placeholder is inserted
 * (DT_FAULT_EMPTY); dt_mapping_put() removes it again.
 *
 * Context: May sleep waiting for the entry lock.  Allocates.
 * Return: 0 with the entry locked; -ERANGE, -EINVAL, -ENOMEM with nothing
 * locked.
 */
int dt_mapping_grab(struct dt_mapping *m, uint64_t pgoff, enum dt_size size,
		    struct dt_fault *out);

/**
 * dt_mapping_put() - Unlock the entry of a page.
 * @m: The mapping.
 * @pgoff: Any page of the entry locked with dt_mapping_grab().
 *
 * Clears the lock bit and wakes one thread waiting for the entry; an EMPTY
 * placeholder is deleted instead, waking every waiter.  Does nothing if the
 * entry covering @pgoff is not locked.
 *
 * Context: Called by the thread that holds the lock.  Never sleeps.
 */
void dt_mapping_put(struct dt_mapping *m, uint64_t pgoff);

/**
 * dt_mapping_mark_dirty() - Tag every page of a range DIRTY.
 * @m: The mapping.
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Each page gets its entry tagged DIRTY as a write fault would: an entry is
 * created where none exists (an aligned 2MiB range wholly inside [@first,
 * @last] on a PMD-capable mapping gets one PMD entry) and ZERO entries get a
 * sector.
 *
 * Context: May sleep waiting for entry locks and call the geometry callback.
 * Allocates.
 * Return: 0; -EINVAL if @first > @last; -ERANGE if @last is past the end,
 * with nothing changed.  -ENOMEM or the geometry callback's error stops the
 * walk: the pages before the failing one stay dirty.
 */
int dt_mapping_mark_dirty(struct dt_mapping *m, uint64_t first, uint64_t last);

/**
 * struct dt_page_range - A range of pages.
 * @first: First page.
 * @last: Last page (inclusive).
 */
struct dt_page_range {
	uint64_t first, last;
};

/**
 * dt_mapping_mark_dirty_ranges() - dt_mapping_mark_dirty() of many ranges.
 * @m: The mapping.
 * @ranges: The ranges, in any order; they may overlap.
 * @n: How many.
 *
 * Every range is checked before any is marked.  Then each is marked in
 * turn, as dt_mapping_mark_dirty() would, while the tree nodes of ranges
 * further on are prefetched (dt_tree_prefetch(), a few ranges ahead, each
 * bottom node once for a run of ranges in it): scattered pages take their
 * cache misses together, not one after the other.
 *
 * Context: As dt_mapping_mark_dirty().
 * Return: 0; -EINVAL if a range has @first > @last, -ERANGE if one ends
 * past the region, with nothing changed.  -ENOMEM or the geometry
 * callback's error stops the walk: the ranges before the failing one, and
 * the pages of that one before the failing page, stay dirty.
 */
int dt_mapping_mark_dirty_ranges(struct dt_mapping *m, const struct dt_page_range *ranges,
				 size_t n);

/**
 * dt_mapping_mark_logged() - Tag every page of a range LOGGED.
 * @m: The mapping.
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Each page gets its entry tagged LOGGED (the page is set in a client's
 * shared dirty log), with the entries dt_mapping_mark_dirty() would make: a
 * real entry is tagged as it is (without its lock); a hole gets a real
 * entry (one PMD entry for an aligned 2MiB range wholly inside [@first,
 * @last] on a PMD-capable mapping, else a PTE entry), a ZERO or EMPTY entry
 * its sector, as a write fault would.  DIRTY and TOWRITE are never touched:
 * the page is not queued for a writeback by this.  A tag is per entry: a
 * page of a 2MiB entry tags all of it.
 *
 * Context: Takes the tree's mutex per entry; may sleep waiting for the lock
 * of a ZERO or EMPTY entry, and call the geometry callback.  Allocates.
 * Return: 0; -EINVAL if @first > @last; -ERANGE if @last is past the end,
 * with nothing changed.  -ENOMEM or the geometry callback's error stops the
 * walk: the pages before the failing one stay tagged.
 */
int dt_mapping_mark_logged(struct dt_mapping *m, uint64_t first, uint64_t last);

/**
 * dt_mapping_clear_logged() - Clear the LOGGED tag of the entries of a range.
 * @m: The mapping.
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Clears LOGGED on every entry lying wholly inside [@first, @last]; an
 * entry that sticks out of the range (a 2MiB entry partly covered) keeps it,
 * since its other pages may still be logged: the caller clears such an
 * entry by its whole span once none of its pages is.  DIRTY and TOWRITE are
 * never touched; no entry is removed.
 *
 * Context: Takes the tree's mutex per tagged entry; never waits for an
 * entry lock.
 * Return: 0; -EINVAL if @first > @last; -ERANGE if @last is past the end.
 */
int dt_mapping_clear_logged(struct dt_mapping *m, uint64_t first, uint64_t last);

/**
 * dt_mapping_mark_logged_ranges() - dt_mapping_mark_logged() of many ranges.
 * @m: The mapping.
 * @ranges: The ranges, in any order (ascending is cheapest).
 * @n: How many.
 *
 * Every range is checked before any is tagged.  The entries already there
 * are tagged under one hold of the tree's mutex (let go every 512 entries,
 * and around each entry made), not one each.
 *
 * Context: As dt_mapping_mark_logged().
 * Return: As dt_mapping_mark_logged(); a failure stops the walk.
 */
int dt_mapping_mark_logged_ranges(struct dt_mapping *m, const struct dt_page_range *ranges,
				  size_t n);

/**
 * dt_mapping_clear_logged_ranges() - dt_mapping_clear_logged() of many ranges.
 * @m: The mapping.
 * @ranges: The ranges, in any order.
 * @n: How many.
 *
 * Every range is checked before any is cleared; then one hold of the tree's
 * mutex (let go every 512 entries) clears them all.
 *
 * Context: As dt_mapping_clear_logged().
 * Return: As dt_mapping_clear_logged().
 */
int dt_mapping_clear_logged_ranges(struct dt_mapping *m, const struct dt_page_range *ranges,
				   size_t n);
/**
 * dt_mapping_punch() - Remove the entries of a range.
 * @m: The mapping.
 * @first: First page.
 * @last: Last page (inclusive).
 *
 * Waits for each entry's lock, then deletes it with its tags.  A PMD entry
 * partly inside the range is split first: the pages outside keep 4KiB
 * entries with their sectors and tags.
 *
 * Context: May sleep waiting for entry locks.  Allocates (splits).
 * Return: 0; -EINVAL if @first > @last; -ERANGE if @last is past the end,
 * with nothing changed; -ENOMEM if a split fails, with the entries before it
 * removed.
 */
int dt_mapping_punch(struct dt_mapping *m, uint64_t first, uint64_t last);

/**
 * dt_mapping_punch_flush() - Remove the entries of a range, writing back the dirty ones first.
 * @m: The mapping.
 * @first: First page.
 * @last: Last page (inclusive).
 * @ops: How to flush (as for dt_mapping_writeback()); NULL to flush nothing,
 *	 which is dt_mapping_punch().
 * @arg: Passed to @ops.
 *
 * As dt_mapping_punch(), but an entry tagged dirty or towrite is written back
 * (@ops->flush of the whole entry, then @ops->drain) while its lock is held,
 * before it is deleted or split: a store another user dirtied and has not
 * yet written back is durable before its record goes, and nobody can dirty
 * the entry between its flush and its removal.  @ops->flush is called with
 * one entry lock held, under the rules of struct dt_flush_ops.  The bytes
 * stay where they are: the mapping deallocates nothing.
 *
 * Context: May sleep waiting for entry locks and in @ops.  Allocates (splits).
 * Return: as dt_mapping_punch().
 */
int dt_mapping_punch_flush(struct dt_mapping *m, uint64_t first, uint64_t last,
			   const struct dt_flush_ops *ops, void *arg);

/**
 * struct dt_writeback_report - What a writeback flushed.
 * @entries: Entries flushed.
 * @bytes: Bytes flushed (whole entries).
 * @ranges: Calls of ops->flush (adjacent entries are coalesced).
 */
struct dt_writeback_report {
	uint64_t entries, bytes, ranges;
};

/**
 * dt_mapping_writeback() - Flush the dirty entries of a range (fsync).
 * @m: The mapping.
 * @first: First page.
 * @last: Last page (inclusive).
 * @ops: The flush operations; @ops->flush must not be NULL.
 * @arg: Passed to @ops.
 * @rep: Filled in; may be NULL.
 *
 * The kernel's algorithm: the DIRTY entries intersecting the range are tagged
 * TOWRITE (in batches), then the TOWRITE entries are visited once each in
 * ascending order; each is locked, flushed whole at its own offset (a 2MiB
 * entry is flushed from its start even if @first is inside it), cleared of
 * TOWRITE and DIRTY, and unlocked.  Entries are locked in batches of up to
 * 512; adjacent entries of a batch are flushed by one @ops->flush call; one
 * @ops->drain ends a writeback that flushed anything.
 * Every page tagged DIRTY before the call is flushed before it returns (by
 * this or by a concurrent writeback it waits for); a page dirtied during the
 * call is flushed or left DIRTY.
 *
 * Context: May sleep waiting for entry locks.  Calls @ops with entry locks
 * held.
 * Return: 0; -EINVAL if @first > @last or @ops is bad; -ERANGE if @last is
 * past the end, with nothing flushed.
 */
int dt_mapping_writeback(struct dt_mapping *m, uint64_t first, uint64_t last,
			 const struct dt_flush_ops *ops, void *arg,
			 struct dt_writeback_report *rep);

/**
 * dt_mapping_page_dirty() - Whether a page is dirty.
 * @m: The mapping.
 * @pgoff: The page.
 *
 * Context: Lock-free RCU reader.
 * Return: true if the entry covering @pgoff is tagged DIRTY; false otherwise,
 * also past the end.
 */
bool dt_mapping_page_dirty(struct dt_mapping *m, uint64_t pgoff);

/* Flags of struct dt_mapping_entry (what the entry is; not its encoding). */
#define DT_MAPPING_ENTRY_LOCKED	(1U << 0)	/* a fault, writeback or punch holds it */
#define DT_MAPPING_ENTRY_PMD	(1U << 1)	/* a 2MiB entry (order DT_PMD_ORDER) */
#define DT_MAPPING_ENTRY_ZERO	(1U << 2)	/* a hole mapped to the zero page */
#define DT_MAPPING_ENTRY_EMPTY	(1U << 3)	/* a placeholder being faulted in */

/**
 * struct dt_mapping_entry - One entry of a mapping, decoded.
 * @index: Its first page.
 * @order: Its order: 0, or DT_PMD_ORDER for a 2MiB entry.
 * @flags: DT_MAPPING_ENTRY_* flags.
 * @sector: The device sector of page @index; 0 for ZERO and EMPTY entries.
 * @tags: Its tags, bits (1 << DT_TAG_DIRTY), (1 << DT_TAG_TOWRITE) and
 *	  (1 << DT_TAG_LOGGED).
 *
 * A snapshot: the entry and each tag are read atomically, not all at once.
 */
struct dt_mapping_entry {
	uint64_t index;
	unsigned order;
	unsigned flags;
	uint64_t sector;
	unsigned tags;
};

/**
 * dt_mapping_lookup() - The entry covering a page.
 * @m: The mapping.
 * @pgoff: The page.
 * @e: Filled in when an entry covers @pgoff.
 *
 * Context: Lock-free RCU reader.
 * Return: true if an entry covers @pgoff; false otherwise, also past the
 * end.
 */
bool dt_mapping_lookup(struct dt_mapping *m, uint64_t pgoff, struct dt_mapping_entry *e);

/**
 * dt_mapping_entry_span() - The pages of the entry covering a page.
 * @m: The mapping.
 * @pgoff: The page.
 * @first: Set to the entry's first page when an entry covers @pgoff.
 * @last: Set to its last page (inclusive), likewise.
 *
 * What a caller needs to widen a range of pages to whole entries (a tag,
 * a flush, a lock is per entry): dt_mapping_lookup() without the decoding.
 *
 * Context: Lock-free RCU reader.
 * Return: true if an entry covers @pgoff; false otherwise, also past the
 * end, with @first and @last untouched.
 */
bool dt_mapping_entry_span(struct dt_mapping *m, uint64_t pgoff, uint64_t *first,
			   uint64_t *last);

/* Flags of dt_mapping_iter_init(). */
#define DT_MAPPING_ITER_DIRTY	(1U << 0)	/* only entries tagged DIRTY */
/* Only entries tagged LOGGED; with DT_MAPPING_ITER_DIRTY: tagged DIRTY or LOGGED. */
#define DT_MAPPING_ITER_LOGGED	(1U << 1)

/**
 * struct dt_mapping_iter - Where an iteration over entries stands.
 *
 * Set up with dt_mapping_iter_init(); its fields are private.
 */
struct dt_mapping_iter {
	struct dt_iter it;
	uint64_t last;
	unsigned flags;
	bool done;
};

/**
 * dt_mapping_iter_init() - Start an iteration over the entries of a range.
 * @it: The iteration.
 * @first: First page.
 * @last: Last page (inclusive); an empty range (@first > @last) gives no
 *	  entry.
 * @flags: 0, or DT_MAPPING_ITER_DIRTY and/or DT_MAPPING_ITER_LOGGED.
 *
 * Context: Any thread; touches only @it.
 */
void dt_mapping_iter_init(struct dt_mapping_iter *it, uint64_t first, uint64_t last,
			  unsigned flags);

/**
 * dt_mapping_next() - The next entry of an iteration.
 * @m: The mapping.
 * @it: The iteration.
 * @e: Filled in with the entry.
 *
 * Entries come in ascending order of index, each once; the first may start
 * before the range's first page (a 2MiB entry covering it).  Entries
 * inserted or removed meanwhile may or may not be seen.
 *
 * Context: Lock-free RCU reader.
 * Return: true with @e filled in; false at the end of the range.
 */
bool dt_mapping_next(struct dt_mapping *m, struct dt_mapping_iter *it,
		     struct dt_mapping_entry *e);

/**
 * struct dt_mapping_stats - The size of a mapping's tree and its dirt.
 * @entries: Entries.
 * @entries_pte: 4KiB entries.
 * @entries_pmd: 2MiB entries.
 * @dirty: Entries tagged DIRTY.
 * @towrite: Entries tagged TOWRITE.
 * @dirty_pages: Pages of the entries tagged DIRTY.
 * @nodes: Tree nodes.
 * @bytes: Memory of the tree.
 * @height: Levels of tree nodes, 0 when empty.
 * @logged: Entries tagged LOGGED.
 * @logged_pages: Pages of the entries tagged LOGGED.
 * @dirty_or_logged: Entries tagged DIRTY or LOGGED, each once: what may be
 *		     dirty, by a mark or in a client's shared dirty log.
 * @dirty_or_logged_pages: Pages of those entries.
 */
struct dt_mapping_stats {
	uint64_t entries, entries_pte, entries_pmd;
	uint64_t dirty, towrite, dirty_pages;
	uint64_t nodes, bytes;
	unsigned height;
	uint64_t logged, logged_pages;
	uint64_t dirty_or_logged, dirty_or_logged_pages;
};

/**
 * dt_mapping_stats() - Snapshot the size of a mapping.
 * @m: The mapping.
 * @s: Filled in.
 *
 * Context: Takes the tree's mutex for the counters, then walks the DIRTY
 * and the LOGGED entries as an RCU reader (@dirty_pages, @logged_pages,
 * and with LOGGED entries their union): O(dirty + logged entries).
 */
void dt_mapping_stats(struct dt_mapping *m, struct dt_mapping_stats *s);

/**
 * dt_mapping_dump() - Print the mapping's tree, for debugging.
 * @m: The mapping.
 * @out: Where to print (the text of dt_tree_dump()).
 *
 * Context: As dt_tree_dump().
 */
void dt_mapping_dump(struct dt_mapping *m, FILE *out);

/**
 * struct dt_mapping_counters - Event counters of a mapping.
 * @grabs: Entry locks taken (by faults, grabs, mark_dirty, punch, writeback).
 * @contended: Times a thread slept waiting for an entry lock.
 * @waiting: Threads asleep on an entry lock of this mapping right now.
 * @wakeups: Sleepers woken by an unlock, delete, replace or split.
 * @wb_visits: TOWRITE entries visited by writebacks.
 */
struct dt_mapping_counters {
	uint64_t grabs;
	uint64_t contended;
	uint64_t waiting;
	uint64_t wakeups;
	uint64_t wb_visits;
};

/**
 * dt_mapping_counters() - Snapshot a mapping's counters.
 * @m: The mapping.
 * @c: Filled in.
 *
 * Context: Any thread; each counter is read atomically, not all at once.
 */
void dt_mapping_counters(const struct dt_mapping *m, struct dt_mapping_counters *c);

#ifdef __cplusplus
}
#endif

#endif /* DAXTRACK_MAPPING_H */
