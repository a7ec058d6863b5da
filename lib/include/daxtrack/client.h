/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daxtrack/client.h - the client of daxtrackd.
 *
 * A struct dt_client is one connection to the daemon; a struct
 * dt_client_region is one region attached through it.  Every function
 * returns 0 (or a count) or a negative errno, never exits and never prints.
 * There is no global state: connections are independent.
 *
 * Connecting: dt_client_connect() connects to the socket given, else to
 * $DAXTRACK_SOCKET (if set and not empty), else to DT_PROTO_SOCKET_PATH, and
 * performs the HELLO handshake.  The first connection is tried once (unless
 * DT_CLIENT_WAIT): a daemon that is not running gives the connect(2) error at
 * once (-ENOENT, -ECONNREFUSED, -EACCES...).
 *
 * Write rights: FAULT, DIRTY, FSYNC and PUNCH need them.  The daemon grants
 * them to root, or to a connection that attached the region by an fd of that
 * very file or device opened O_RDWR.  dt_client_attach_fd() does that;
 * dt_client_map() of a region attached by name opens the region's path and,
 * if it could open it O_RDWR, upgrades the attachment by fd.
 *
 * Dirty batching: dt_client_dirty() only records the range in the handle (at
 * 4KiB page granularity: a range stands for every page it touches; adjacent
 * and overlapping ranges are merged).  The batch of a region goes to the
 * daemon as one DIRTY message when it holds the threshold number of ranges
 * (batch_ranges of the options, by default DT_CLIENT_BATCH_RANGES, at most
 * the daemon's max_ranges from HELLO), on dt_client_flush_dirty(), before any fsync of a range it
 * overlaps (pipelined with the FSYNC: still one round trip), before a punch,
 * query, list, stats or dump of the region (so they see the marks), and at
 * detach and close.  A dirty() call that does not reach the threshold costs
 * no system call.
 *
 * Surviving a daemon restart (unless DT_CLIENT_NO_RECONNECT): when the
 * connection is lost (EPIPE, ECONNRESET, ENOTCONN, end of stream, or a reply
 * of -EBUSY/-ESHUTDOWN from a daemon shutting down), the library reconnects
 * to the same path, trying @retries times with an exponential backoff from
 * @backoff_min_ms to @backoff_max_ms (defaults: 50 tries, 10 ms doubling to
 * 200 ms, about 10 s in all); it redoes HELLO, re-attaches every region (by
 * name, or by sending again the fd it keeps), and then resends
 *   - every range not acknowledged by a DIRTY reply (a range leaves the batch
 *     only when its DIRTY reply arrived), and
 *   - if the daemon is another process than before (its pid or start time in
 *     HELLO changed: a restart), every range acknowledged since the last
 *     completed fsync covering it (the new daemon's recovery flush already
 *     wrote back what the old one knew; re-marking is the safe contract);
 * then it retries the interrupted request.  Guarantee: when dt_client_fsync()
 * or dt_client_persist() returns 0, every byte passed to dt_client_dirty()
 * (or persist) on this handle before the call and inside its range has been
 * flushed by a daemon after it was marked, whatever restarts happened in
 * between.  The application sees an error only when the daemon stays away
 * (the last connect error, e.g. -ECONNREFUSED or -ENOENT) or a region is gone
 * after the restart (the ATTACH error, e.g. -ENOENT, for that region only).
 * A request is retried over at most DT_CLIENT_MAX_REPLAYS reconnections.
 * The set of acknowledged-but-not-fsynced ranges is bounded: past
 * DT_CLIENT_LOG_MAX ranges a region's set is collapsed into one covering
 * range (more is re-marked, never less).
 *
 * A batch that reaches the threshold in dt_client_dirty() is sent ahead: the
 * call returns without waiting for the DIRTY reply, so that the daemon marks
 * one batch while the application fills the next.  At most
 * DT_CLIENT_DIRTY_WINDOW (4) DIRTYs are in flight per handle; the oldest
 * reply is read when the window is full, and every one before any other
 * exchange (an FSYNC sent behind them is answered after them: the daemon
 * serves a connection in order).  A range in flight is not acknowledged:
 * after a lost connection it is resent like the batch.
 *
 * Errors of refused dirty marks: when the daemon refuses a DIRTY batch for a
 * reason other than a lost connection, the call that read the refusal
 * returns the error (the dt_client_dirty() or dt_client_flush_dirty() that
 * sent or waited for the batch) and the region remembers it: its next
 * dt_client_fsync() or dt_client_persist() returns it once (-EPERM,
 * -ERANGE...), so an fsync never succeeds over marks that were dropped.
 *
 * The fast path (protocol version 3; off with DT_CLIENT_NO_FAST_PATH or
 * DAXTRACK_FAST_PATH=0): a region attached with write rights gets its shared
 * dirty log from the daemon (LOG): a file in the
 * daemon's runtime directory, mapped read-write into the application, one
 * bit per 4KiB page.  Then:
 *   - dt_client_dirty() sets the pages' bits: a few atomic instructions, no
 *     lock, no system call, no message (no batch, no DIRTY, no window: the
 *     daemon reads the log every 5 ms and before any request on the region,
 *     so its answers, fsyncs of other clients included, see the marks);
 *   - dt_client_persist() and dt_client_fsync() of a range flush in-process
 *     when the daemon said the region is persistent memory (or eADR) and the
 *     client's own mapping (dt_client_map()) is MAP_SYNC, of a device DAX, or
 *     on eADR: the marked pages of the range are taken from the log,
 *     pmem_flush()ed from the client's mapping, one pmem_drain(), and
 *     cleared; no lock of the handle, no message.  A DEEP or WHOLE fsync, a
 *     region not mapped or not pmem goes to the daemon (FSYNC), the pages
 *     held in the log until it answered;
 *   - while the region has bad blocks (the daemon sets DT_DLOG_F_SOCKET in
 *     the log's header), marks go to the DIRTY batch and persists to FSYNC,
 *     as without a log, so that bad pages are refused and named (-EIO);
 *   - when the client dies, the daemon writes back every page still set in
 *     its logs; after a daemon restart the client gets a new log and marks
 *     into it every page of the old one.
 * A refused LOG (the daemon's fast path off, -EOPNOTSUPP) leaves the region
 * on the socket path described above, silently (dt_client_counters() counts
 * it).  What the application must not do with the log's memory: nothing
 * (it is the library's); the log is the client's own write-intent record:
 * a page it leaves marked is flushed by the daemon later, a page it never
 * marked is not flushed by anyone.  An application that writes the region
 * through another mapping marks and persists by offset
 * (dt_client_dirty(), dt_client_persist_range()) as before.
 *
 * Transparent tracking (dt_client_track(), Linux >= 6.7): instead of
 * marking, an application may have the library track its stores to a
 * mapping of the region: the kernel write-protects the pages (userfaultfd
 * in asynchronous write-protect mode), a store un-protects its page inside
 * the kernel (no signal, no message), and every persist or fsync of a
 * range first collects the written pages of the range (PAGEMAP_SCAN, which
 * write-protects them again) and marks them as dt_client_dirty() would.
 * Not covered: writes through write(2) to the file, other processes'
 * mappings, MAP_PRIVATE mappings.  A page written but not yet collected
 * when the client dies is unknown to the daemon, like a store never marked.
 *
 * Threads: a handle is locked inside.  One mutex per struct dt_client guards
 * its socket, every request/reply exchange, its regions and their batches,
 * so a handle (and its regions) may be shared by any number of threads;
 * their calls are serialised (a long fsync delays the other threads' calls
 * on the same handle: for parallel requests, open one handle per thread).
 * With a dirty log, marks take no lock at all, and in-process persists only
 * a per-region spinlock that serialises the persists of that region.
 * dt_client_close() and dt_client_detach() must not race with other calls on
 * what they free.  The client does not use RCU: its threads need not
 * register with urcu.  Calls block (on the socket, and sleep while
 * reconnecting); none may be called from a signal handler.
 */
#ifndef DAXTRACK_CLIENT_H
#define DAXTRACK_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <daxtrack/proto.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dt_client;
struct dt_client_region;

/* The environment variable naming the daemon's socket. */
#define DT_CLIENT_SOCKET_ENV	"DAXTRACK_SOCKET"

/* Defaults of struct dt_client_options. */
#define DT_CLIENT_RETRIES	50
#define DT_CLIENT_BACKOFF_MIN_MS	10
#define DT_CLIENT_BACKOFF_MAX_MS	200
/* Reconnections one request may go through before its error is returned. */
#define DT_CLIENT_MAX_REPLAYS	4
/*
 * The default threshold of a dirty batch, in ranges: small enough that the
 * batches of an application dirtying many pages go ahead while it writes
 * (an fsync then carries at most this many ranges in line), large enough
 * that a DIRTY costs the daemon far more marking than messaging.
 */
#define DT_CLIENT_BATCH_RANGES	256
/* DIRTY messages sent ahead, replies unread, at most (per handle). */
#define DT_CLIENT_DIRTY_WINDOW	4
/* Acknowledged, not yet fsynced ranges kept per region before collapsing. */
#define DT_CLIENT_LOG_MAX	65536

/* Flags of struct dt_client_options. */
/* A lost connection is an error (-EPIPE...): no reconnection. */
#define DT_CLIENT_NO_RECONNECT	(1U << 0)
/* Retry the first connect too, like a reconnection. */
#define DT_CLIENT_WAIT		(1U << 1)
/* No shared dirty log: every mark and persist goes through the socket. */
#define DT_CLIENT_NO_FAST_PATH	(1U << 2)

/* The environment variable that turns the fast path off when "0" (or "off"). */
#define DT_CLIENT_FAST_PATH_ENV	"DAXTRACK_FAST_PATH"

/**
 * struct dt_client_options - How to connect.
 * @socket: Socket path; NULL: $DAXTRACK_SOCKET if set and not empty, else
 *	DT_PROTO_SOCKET_PATH.  Copied.
 * @flags: DT_CLIENT_NO_RECONNECT, DT_CLIENT_WAIT, DT_CLIENT_NO_FAST_PATH.
 * @batch_ranges: Ranges per DIRTY message; 0: DT_CLIENT_BATCH_RANGES.  Never
 *	more than the daemon's max_ranges (nor what fits in its max_message).
 * @retries: Connection attempts after a loss; 0: DT_CLIENT_RETRIES.
 * @backoff_min_ms: Sleep before the second attempt; doubled after each
 *	failure; 0: DT_CLIENT_BACKOFF_MIN_MS.  The first attempt is immediate.
 * @backoff_max_ms: Bound of the sleep; 0: DT_CLIENT_BACKOFF_MAX_MS.
 *
 * Start from dt_client_options_init(): fields added later default to zero.
 */
struct dt_client_options {
	const char *socket;
	unsigned flags;
	uint32_t batch_ranges;
	unsigned retries;
	unsigned backoff_min_ms;
	unsigned backoff_max_ms;
};

/**
 * struct dt_client_region_info - What the client knows of an attached region.
 * @id: The daemon's id of the region (may change after a reconnect).
 * @flags: DT_REGION_* (PMEM, EADR, PMD, DEVDAX, DEFAULT, BADBLOCKS).
 * @size: Bytes: the region's size; for a region that follows its file
 *	   (DT_REGION_GROWS), the file's size when last seen (at attach, at
 *	   dt_client_map()); offsets are accepted up to its span (@map_len
 *	   once mapped), the daemon refusing those past the file's end.
 * @writable: This connection may FAULT, DIRTY, FSYNC and PUNCH it.
 * @by_fd: Attached by fd (dt_client_attach_fd(), or upgraded by map).
 * @name: The region's name.
 * @addr: The mapping made by dt_client_map(), or the application's own
 *	tracked mapping adopted by dt_client_track(), or NULL.
 * @map_len: Its length in bytes (the region's span: its size, or for
 *	      DT_REGION_GROWS the most its file may grow to), or 0.
 * @map_sync: The mapping was made with MAP_SHARED_VALIDATE | MAP_SYNC (the
 *	file system supports it); false: plain MAP_SHARED.
 * @map_writable: The mapping is PROT_WRITE (the file or device was opened
 *	O_RDWR).
 * @pending: Ranges in the batch, not yet sent.
 * @log: The region has a shared dirty log (the fast path): dt_client_dirty()
 *	marks it, with no lock and no message (but while the region has bad
 *	blocks: then the batch).
 * @log_flags: DT_LOG_PMEM, DT_LOG_EADR: what the daemon said of the region.
 * @log_id: The daemon's serial of the log (its file name), 0 without one.
 * @persist_in_process: dt_client_persist() and dt_client_fsync() of a range
 *	flush from the client's own mapping (no message): the region has a
 *	log, the daemon said PMEM or EADR and knows no bad block in the region
 *	(DT_DLOG_F_SOCKET clear), and the mapping is MAP_SYNC, of a device DAX,
 *	or on eADR (or PMEM_IS_PMEM_FORCE=1, libpmem's override).
 */
struct dt_client_region_info {
	uint32_t id;
	uint32_t flags;
	uint64_t size;
	bool writable;
	bool by_fd;
	char name[DT_PROTO_NAME_MAX];
	void *addr;
	size_t map_len;
	bool map_sync;
	bool map_writable;
	uint32_t pending;
	bool log;
	uint32_t log_flags;
	uint32_t log_id;
	bool persist_in_process;
};

/**
 * struct dt_client_counters - What a handle did, for tests and tools.
 * @sent_by_op: Messages sent, by opcode (resends included).
 * @sent: All messages sent.
 * @reconnects: Connections re-established after a loss.
 * @restarts: Of those, to a different daemon process (pid or start time).
 * @dirty_calls: dt_client_dirty() calls (persist's included) that went
 *	through the socket path's batch; marks into a dirty log are not counted
 *	(they take no lock).
 * @dirty_ranges: Ranges carried by DIRTY messages (after merging).
 * @resent_ranges: Ranges sent again after a reconnect.
 * @replays: Requests retried after a reconnect.
 * @logs: Dirty logs obtained (LOG), the new ones after reconnects included.
 * @log_refused: LOG requests refused or failed (then the region keeps to
 *	the socket path; -EOPNOTSUPP: the daemon's fast path is off).
 * @persists_in_process: Persists and fsyncs of a range flushed from the
 *	client's own mapping, without a message.
 * @persists_log_socket: Persists and fsyncs of a region with a log that
 *	went to the daemon (FSYNC): DEEP, WHOLE, not mapped, not pmem, bad
 *	blocks...
 * @remarked_pages: Pages of an old log marked into the new one after a
 *	reconnect (or put into the batch when the new daemon gave no log);
 *	none after a recovery that flushed them.
 */
struct dt_client_counters {
	uint64_t sent_by_op[DT_PROTO_STATS_OPS];
	uint64_t sent;
	uint64_t reconnects;
	uint64_t restarts;
	uint64_t dirty_calls;
	uint64_t dirty_ranges;
	uint64_t resent_ranges;
	uint64_t replays;
	uint64_t logs;
	uint64_t log_refused;
	uint64_t persists_in_process;
	uint64_t persists_log_socket;
	uint64_t remarked_pages;
};

/**
 * struct dt_client_stats - A STATS reply.
 * @total: The daemon-wide counters (@total.regions and @total.raw are NULL).
 * @count: Region records in @regions.
 * @regions: The per-region counters.
 */
struct dt_client_stats {
	struct dt_proto_stats_rep total;
	uint32_t count;
	struct dt_proto_region_stats regions[];
};

/**
 * struct dt_client_list - A paged walk of a region's entries.
 * @offset: First byte of the range (ignored with DT_LIST_WHOLE).
 * @length: Bytes of the range, >= 1 (ignored with DT_LIST_WHOLE).
 * @flags: DT_LIST_DIRTY (only dirty entries), DT_LIST_WHOLE (the whole region).
 * @cursor: 0 to start; updated by each dt_client_list() call.
 * @done: Set once the last page was returned.
 */
struct dt_client_list {
	uint64_t offset;
	uint64_t length;
	uint32_t flags;
	uint64_t cursor;
	bool done;
};

/**
 * dt_client_options_init() - Fill options with the defaults.
 * @o: The options: socket NULL, flags 0, batch_ranges 0 (DT_CLIENT_BATCH_RANGES),
 *	retries DT_CLIENT_RETRIES, backoff DT_CLIENT_BACKOFF_MIN_MS to
 *	DT_CLIENT_BACKOFF_MAX_MS.
 *
 * Context: Any thread.
 */
void dt_client_options_init(struct dt_client_options *o);

/**
 * dt_client_socket_default() - The socket path dt_client_connect(NULL) uses.
 *
 * Context: Any thread (reads the environment).
 * Return: $DAXTRACK_SOCKET if set and not empty, else DT_PROTO_SOCKET_PATH.
 */
const char *dt_client_socket_default(void);

/**
 * dt_client_connect() - Connect to the daemon with the default options.
 * @path: Socket path, or NULL (see dt_client_socket_default()).
 * @cp: Set to the new handle on success, NULL on failure.
 *
 * Same as dt_client_connect_opts() with options from dt_client_options_init()
 * and @path as @socket.
 *
 * Context: Any thread.  Blocks for the connection and the handshake.
 * Return: As dt_client_connect_opts().
 */
int dt_client_connect(const char *path, struct dt_client **cp);

/**
 * dt_client_connect_opts() - Connect to the daemon.
 * @o: Options, or NULL for the defaults.
 * @cp: Set to the new handle on success, NULL on failure.
 *
 * Connects (once, or like a reconnect with DT_CLIENT_WAIT) and performs the
 * HELLO handshake for protocol versions DT_PROTO_VERSION_MIN..DT_PROTO_VERSION.
 *
 * Context: Any thread.  Allocates; blocks.
 * Return: 0; -ENAMETOOLONG for a path that does not fit a sockaddr_un; the
 * socket(2)/connect(2) error when the daemon cannot be reached (-ENOENT: no
 * socket there, -ECONNREFUSED: nobody listening, -EACCES); -EPROTONOSUPPORT
 * if no protocol version is common; -EPROTO or -EBADMSG for an answer that
 * is not a valid HELLO reply; -EPIPE/-ECONNRESET if the daemon closed the
 * connection; -ENOMEM.
 */
int dt_client_connect_opts(const struct dt_client_options *o, struct dt_client **cp);

/**
 * dt_client_close() - Send the pending dirty ranges and close the handle.
 * @c: The handle, or NULL (nothing happens).
 *
 * Sends every region's batch (without reconnecting: a lost connection at
 * this point loses those marks, and the error says so), unmaps the regions'
 * mappings, closes their fds and the socket, and frees @c and its regions.
 *
 * Context: Any thread, with no other call on @c or its regions running or
 * to come.
 * Return: 0, or the error of sending the last batches (the handle is freed
 * in every case).
 */
int dt_client_close(struct dt_client *c);

/**
 * dt_client_socket() - The socket path of a handle.
 * @c: The handle.
 *
 * Context: Any thread.
 * Return: The path it connects (and reconnects) to; owned by @c.
 */
const char *dt_client_socket(const struct dt_client *c);

/**
 * dt_client_daemon() - The daemon's HELLO reply.
 * @c: The handle.
 * @out: Filled with the reply of the latest handshake: version, limits,
 *	pid, start time, uptime at the handshake, software version.
 *
 * Context: Any thread.  Takes the handle's lock.
 * Return: 0.
 */
int dt_client_daemon(struct dt_client *c, struct dt_proto_hello_rep *out);

/**
 * dt_client_counters() - The handle's counters.
 * @c: The handle.
 * @out: Filled in.
 *
 * Context: Any thread.  Takes the handle's lock.
 */
void dt_client_counters(struct dt_client *c, struct dt_client_counters *out);

/**
 * dt_client_regions() - The daemon's regions (REGIONS).
 * @c: The handle.
 * @out: Set to a malloc()ed array of @count records (free() it); NULL if
 *	there are none.
 * @count: Set to the number of records.
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -ENOMEM; a connection error when the daemon stays away.
 */
int dt_client_regions(struct dt_client *c, struct dt_proto_region **out, uint32_t *count);

/**
 * dt_client_failed() - The configured regions the daemon could not open
 * (FAILED, protocol version 5), with the reason it logged.
 * @c: The handle.
 * @out: Set to a malloc()ed array of @count records (free() it), or NULL.
 * @count: Set to the number of records (0: every region is served).
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -EOPNOTSUPP from a daemon that speaks version 4 or older (it
 * serves every region it has, or did not start); -ENOMEM; a connection
 * error when the daemon stays away.
 */
int dt_client_failed(struct dt_client *c, struct dt_proto_failed **out, uint32_t *count);

/**
 * dt_client_namespaces() - The daemon's view of the NVDIMM namespaces.
 * @c: The handle.
 * @out: Set to a malloc()ed array of @count records (free() it), or NULL.
 * @count: Set to the number of records (0: no namespaces on the machine).
 * @flags: If not NULL, set to the reply's DT_NS_* flags (DT_NS_NO_NDCTL: the
 *	daemon cannot enumerate).
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -ENOMEM; a connection error when the daemon stays away.
 */
int dt_client_namespaces(struct dt_client *c, struct dt_proto_namespace **out, uint32_t *count,
			 uint32_t *flags);

/**
 * struct dt_client_cxl - The daemon's answer to CXL.
 * @flags: DT_CXL_* (DT_CXL_NO_LIBCXL: the daemon cannot describe CXL devices).
 * @nmemdevs: Entries of @memdevs: the host's CXL memdevs, with their health
 *	      as the daemon read it for this answer.
 * @memdevs: Allocated by dt_client_cxl().
 * @nregions: Entries of @regions: the daemon's regions on CXL memory.
 * @regions: Allocated by dt_client_cxl().
 */
struct dt_client_cxl {
	uint32_t flags;
	uint32_t nmemdevs;
	struct dt_proto_cxl_memdev *memdevs;
	uint32_t nregions;
	struct dt_proto_cxl_region *regions;
};

/**
 * dt_client_cxl() - The daemon's CXL memdevs and its regions on CXL (CXL).
 * @c: The handle.
 * @out: Filled in; free it with dt_client_cxl_free() after a success.
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -EPROTO from a daemon that predates CXL (protocol version 5);
 * -ENOMEM; a connection error when the daemon stays away.
 */
int dt_client_cxl(struct dt_client *c, struct dt_client_cxl *out);

/**
 * dt_client_cxl_free() - Free what dt_client_cxl() allocated.
 * @cx: The answer; zeroed.
 */
void dt_client_cxl_free(struct dt_client_cxl *cx);

/**
 * dt_client_stats() - Counters of the daemon and of its regions (STATS).
 * @c: The handle.
 * @region: A region id (dt_client_region_info(), dt_client_regions()), or
 *	DT_PROTO_ALL_REGIONS.
 * @out: Set to a malloc()ed struct dt_client_stats (free() it).
 *
 * Sends every pending dirty batch first, so that the counters include them.
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -ENOENT for an unknown id; -ENOMEM; a connection error.
 */
int dt_client_stats(struct dt_client *c, uint32_t region, struct dt_client_stats **out);

/**
 * dt_client_stats_region() - The record of one region in a STATS reply.
 * @s: The reply, from dt_client_stats().
 * @id: The region's id (dt_client_region_info(), dt_client_regions()).
 *
 * Context: Any thread; no lock, no allocation, no message.
 * Return: The record of region @id, owned by @s; NULL if @s has none (a
 * region attached after the reply, or a reply about another region).
 */
const struct dt_proto_region_stats *dt_client_stats_region(const struct dt_client_stats *s,
							   uint32_t id);

/**
 * dt_client_attach() - Attach a region by name.
 * @c: The handle.
 * @name: The region's name (1..DT_PROTO_NAME_MAX - 1 characters).
 * @rp: Set to the region handle (owned by @c), NULL on failure.
 *
 * Gives read rights (write rights too if the caller is root); dt_client_map()
 * upgrades to write rights when it can open the region's path O_RDWR.
 * Attaching the same region twice gives two handles with separate batches.
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -EINVAL for an empty name, -ENAMETOOLONG for a long one;
 * -ENOENT: no such region; -ENOMEM; a connection error.
 */
int dt_client_attach(struct dt_client *c, const char *name, struct dt_client_region **rp);

/**
 * dt_client_attach_fd() - Attach the region whose file or device @fd is.
 * @c: The handle.
 * @fd: An fd of the region's file or device, opened by the application.
 *	O_RDWR gives write rights.  The client keeps a dup of it (to map and
 *	to re-attach after a reconnect); the caller may close @fd.
 * @rp: Set to the region handle (owned by @c), NULL on failure.
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -EBADF for a bad @fd; -ENOENT: @fd is no region's file or
 * device; -ENOMEM, -EMFILE; a connection error.
 */
int dt_client_attach_fd(struct dt_client *c, int fd, struct dt_client_region **rp);

/**
 * dt_client_detach() - Send the region's batch, unmap it and free its handle.
 * @r: The region handle, or NULL (nothing happens).
 *
 * The daemon keeps the attachment (and its rights) until the connection
 * closes; the batch is sent (reconnecting if needed) before @r is freed.
 *
 * Context: Any thread, with no other call on @r running or to come.  Takes
 * the handle's lock; blocks.
 * Return: 0, or the error of sending the batch (@r is freed in every case).
 */
int dt_client_detach(struct dt_client_region *r);

/**
 * dt_client_region_info() - What the client knows of a region.
 * @r: The region handle.
 * @info: Filled in.
 *
 * Context: Any thread.  Takes the handle's lock; never blocks on the daemon.
 */
void dt_client_region_info(struct dt_client_region *r, struct dt_client_region_info *info);

/**
 * dt_client_map() - Map the attached region into the application.
 * @r: The region handle.
 * @addr: Set to the start of the mapping.
 * @len: Set to the region's size: the mapping's length, or for a region that
 *	 follows its file (DT_REGION_GROWS) its file's size now; the mapping
 *	 then covers the span, and the pages past the file's end fault
 *	 (SIGBUS) until the file grows over them, as any mapping past the end
 *	 of a file does.
 *
 * Maps the whole region, shared, at offset 0: with the attach fd for a region
 * attached by fd, else with the region's path (from REGIONS) opened O_RDWR,
 * or O_RDONLY if that is refused (EACCES, EPERM, EROFS: a read-only mapping).
 * It tries MAP_SHARED_VALIDATE | MAP_SYNC first and falls back to MAP_SHARED
 * when the file system refuses it (EOPNOTSUPP or EINVAL);
 * dt_client_region_info() tells which (@map_sync) and whether the mapping is
 * writable.  A region attached by name without write rights whose path
 * opened O_RDWR is then attached again by that fd, which gives write rights
 * (a refusal leaves the rights as they were; the mapping stands).  A second
 * call returns the same mapping.  The mapping lives until detach or close.
 * A mapping of the application's adopted by dt_client_track() is not
 * returned: the library makes its own, which replaces it.
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: 0; the open(2) or mmap(2) error of the path; -ENAMETOOLONG; -ENOMEM;
 * a connection error.
 */
int dt_client_map(struct dt_client_region *r, void **addr, size_t *len);

/**
 * dt_client_fault() - Tell the daemon about a page fault (FAULT).
 * @r: The region handle.
 * @offset: Any byte of the faulting page.
 * @order: 0 (a 4KiB PTE) or DT_PROTO_PMD_ORDER (a 2MiB PMD).
 * @flags: DT_FAULT_REQ_WRITE for a write fault.
 * @out: If not NULL, filled with the reply (base, sector, size, order, flags).
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: 0; -EPERM without write rights; -ERANGE past the end; -EINVAL for
 * a bad order or flag; -EIO for a bad block; a connection error.
 */
int dt_client_fault(struct dt_client_region *r, uint64_t offset, unsigned order, unsigned flags,
		    struct dt_proto_fault_rep *out);

/**
 * dt_client_dirty() - Mark a byte range dirty (batched).
 * @r: The region handle.
 * @offset: First byte.
 * @length: Bytes, >= 1.
 *
 * With a dirty log (the fast path): sets the pages' bits in it, nothing
 * else.  Otherwise: adds the pages of the range to the region's batch
 * (merging), and sends the batch ahead as one DIRTY message if it reached
 * the threshold (waiting for the oldest reply when DT_CLIENT_DIRTY_WINDOW
 * are in flight).
 *
 * Context: Any thread.  With a dirty log: lock-free, never blocks.  Else
 * takes the handle's lock; blocks only when it sends.
 * Return: 0; -EINVAL for a zero @length; -ERANGE past the region's end;
 * -EPERM without write rights; -ENOMEM; when it sent a batch, the daemon's
 * refusal of one whose reply it read, or a connection error.
 */
int dt_client_dirty(struct dt_client_region *r, uint64_t offset, uint64_t length);

/**
 * dt_client_dirty_addr() - Mark dirty a range of the region's mapping.
 * @r: The region handle, mapped by dt_client_map().
 * @addr: First byte, inside the mapping.
 * @length: Bytes, >= 1.
 *
 * dt_client_dirty() of @addr - the mapping's start.
 *
 * Context: As dt_client_dirty().
 * Return: As dt_client_dirty(); -EINVAL if @r is not mapped or the range is
 * not inside the mapping.
 */
int dt_client_dirty_addr(struct dt_client_region *r, const void *addr, size_t length);

/**
 * dt_client_flush_dirty() - Send every pending dirty batch of the handle now.
 * @c: The handle.
 *
 * Returns once the daemon has answered every DIRTY, those sent ahead too.
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: 0 (also with nothing to send); the first refusal or connection
 * error (the other regions' batches are still sent).
 */
int dt_client_flush_dirty(struct dt_client *c);

/**
 * dt_client_fsync() - Make the dirty pages of a range persistent (FSYNC).
 * @r: The region handle.
 * @offset: First byte (0 with DT_FSYNC_WHOLE).
 * @length: Bytes, >= 1 (0 with DT_FSYNC_WHOLE).
 * @flags: DT_FSYNC_WHOLE (the whole region), DT_FSYNC_DEEP (also a deep
 *	flush of the region).
 * @out: If not NULL, filled with the reply (entries, bytes, flush calls and
 *	the daemon's flush time).
 *
 * If the batch overlaps the range, it is sent first, pipelined with the
 * FSYNC (one round trip).  Returns once every page marked dirty in the range
 * (through any connection) before the request is flushed and drained;
 * across a daemon restart as described at the top of this header.  With a
 * dirty log and a mapping that may be flushed in-process (see the top of
 * this header), and no flag: the pages this handle marked in the range are
 * flushed from the client's mapping, no message (@out: the pages flushed as
 * entries and bytes, the runs as ranges, the time taken); pages other
 * clients marked are theirs to persist.
 *
 * Context: Any thread.  Takes the handle's lock (in-process: only the
 * region's persist spinlock); blocks.
 * Return: 0; -EPERM without write rights; -ERANGE past the end; -EINVAL for
 * bad flags or a zero length; -EIO for a bad block (after the good pages were
 * flushed: dt_client_fsync_bad() tells the ranges) or a failed flush; a
 * remembered refusal of an earlier DIRTY batch of the region; a connection
 * error when the daemon stays away.
 */
int dt_client_fsync(struct dt_client_region *r, uint64_t offset, uint64_t length, unsigned flags,
		    struct dt_proto_fsync_rep *out);

/**
 * dt_client_fsync_bad() - dt_client_fsync(), and the bad ranges of an -EIO.
 * @r: The region handle.
 * @offset: As dt_client_fsync().
 * @length: As dt_client_fsync().
 * @flags: As dt_client_fsync().
 * @out: If not NULL, filled with the reply on success, and also on -EIO
 *	for bad blocks (protocol version 2): then the counts say what was
 *	flushed (every good dirty page of the range), @out->count how many
 *	bad ranges the daemon named (DT_FSYNC_BAD_MORE in @out->flags: there
 *	were more).  @out->bad and @out->raw are NULL: the ranges are in @bad.
 * @bad: If not NULL, receives the first min(@out->count, @max) bad ranges
 *	(region offsets, clipped to the pages of the range).
 * @max: Room at @bad.
 *
 * With any other -EIO (a failed flush, or a daemon speaking protocol
 * version 1, which names no range) @out is all zero.
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: As dt_client_fsync().
 */
int dt_client_fsync_bad(struct dt_client_region *r, uint64_t offset, uint64_t length,
			unsigned flags, struct dt_proto_fsync_rep *out, struct dt_proto_range *bad,
			uint32_t max);

/**
 * dt_client_persist() - Dirty then fsync exactly a range of the mapping.
 * @r: The region handle, mapped by dt_client_map().
 * @addr: First byte written, inside the mapping, or inside a mapping of the
 *	application's tracked by dt_client_track() (the range inside it).
 * @length: Bytes, >= 1.
 *
 * dt_client_dirty_addr() then dt_client_fsync() of that range: one DIRTY and
 * one FSYNC pipelined, one round trip (plus the batch, if it overlaps); with
 * the fast path, in-process: pmem_flush() of the whole range from the
 * client's mapping (the pages marked in it before are taken from the log),
 * one pmem_drain(), no message, no mark of the range itself (it is durable
 * when the call returns).  Tracked pages written in the range are collected
 * first (dt_client_track()).
 *
 * Context: Any thread.  Takes the handle's lock, but in-process (the
 * region's persist spinlock only, and the handle's lock to collect when
 * the region tracks a mapping); blocks.
 * Return: As dt_client_dirty_addr() and dt_client_fsync(); -EINVAL if
 * @addr is in no mapping of the region the library knows.
 */
int dt_client_persist(struct dt_client_region *r, const void *addr, size_t length);

/**
 * dt_client_persist_range() - Dirty then fsync a byte range of the region.
 * @r: The region handle.
 * @offset: First byte.
 * @length: Bytes, >= 1.
 * @out: If not NULL, the FSYNC reply.
 *
 * dt_client_persist() by offset; the region need not be mapped.
 *
 * Context: As dt_client_persist().
 * Return: As dt_client_dirty() and dt_client_fsync().
 */
int dt_client_persist_range(struct dt_client_region *r, uint64_t offset, uint64_t length,
			    struct dt_proto_fsync_rep *out);

/* Flags of dt_client_track(). */
#define DT_CLIENT_TRACK_SYNC	(1u << 0)	/* @addr is a MAP_SYNC (or devdax) mapping */

/* The environment variable that sets the patience of dt_client_track()'s probe, in ms. */
#define DT_CLIENT_PROBE_MS_ENV	"DAXTRACK_PROBE_MS"

/* Room for the reason of a refused dt_client_track(), with its NUL. */
#define DT_CLIENT_TRACK_REASON_MAX	160

/**
 * dt_client_track() - Track the application's stores to a mapping of the region.
 * @r: The region handle, attached with write rights.
 * @addr: The first byte of a shared mapping of the region's file or device,
 *	page aligned: the library's own (from dt_client_map()), or one the
 *	application made itself; NULL: the library's own mapping at @offset.
 * @length: Bytes, a multiple of 4KiB, >= 1.
 * @offset: The region offset that @addr maps (page aligned).
 * @flags: DT_CLIENT_TRACK_SYNC if the application's own mapping was made
 *	with MAP_SYNC or is of a device-DAX device (the library may then flush
 *	from it); 0 otherwise.  Ignored for the library's own mapping.
 * @reason: If not NULL, on -EOPNOTSUPP receives why, as one line of text
 *	(DT_CLIENT_TRACK_REASON_MAX bytes room); else the empty string.
 *
 * Checks that the range is a shared, writable mapping of a file (of the
 * region's own file or device when the library holds its fd), probes in a
 * child process that a store to its first page is seen (the child maps the
 * page with a 4KiB entry, write-protects it with a userfaultfd of its own,
 * stores an atomic OR of zero, and is killed if the store hangs: after
 * $DAXTRACK_PROBE_MS milliseconds if set, else 2 s, 20 s with $DAX_VM set),
 * then lets no 2MiB page-table entry map the range (MADV_NOHUGEPAGE;
 * MADV_DONTNEED where 2MiB entries map it, the data staying in the file:
 * the kernel cannot track stores to pages mapped by 2MiB entries, and on
 * some kernels such a store hangs), registers it with userfaultfd in
 * asynchronous write-protect mode and write-protects the pages mapped (a
 * page not mapped yet is not written; its first touch maps it with a 4KiB
 * entry, and the next collection counts it written once).  It maps nothing.
 * A refusal leaves the application's mapping as it was.  From then on every
 * dt_client_persist(), dt_client_persist_range() and dt_client_fsync() whose
 * range meets a tracked range first collects the pages written in it since
 * the last collection (PAGEMAP_SCAN, which write-protects them again) and
 * marks them dirty, as dt_client_dirty() would (in the shared dirty log where
 * there is one); dt_client_track_collect() does only that.  It scans only the
 * 2MiB extents where the process faulted since (its page faults are recorded
 * with perf_event_open(2) where allowed; when a fault may have gone
 * unrecorded, the whole range).  An extent found dense (n pages or more
 * written, or a run of n/2, n measured at the first dt_client_track() of
 * the process: where n write faults and a scan of the extent cost a flush
 * of 2MiB) leaves write-protect tracking and every collection meeting it
 * marks its part whole, until a probe (8 of its pages write-protected
 * every 8th collection, twice as late after each probe that found it
 * dense, up to every 256th) finds it quiet.  $DAXTRACK_DENSE_PAGES sets
 * n.  $DAXTRACK_SCAN_ALL=1 (scan whole ranges) and $DAXTRACK_DENSE=0 (no
 * dense extent), read at the first dt_client_track() of the region, turn
 * either off.  Explicit marks keep working beside it.  A tracked mapping
 * of the whole region from offset 0 made with DT_CLIENT_TRACK_SYNC serves
 * the in-process persist when the library has no mapping of its own (it is
 * adopted: dt_client_region_info() shows it; the library never unmaps it;
 * untracking it gives it back).  The mapping must stay mapped, and its
 * pages must not be discarded (MADV_DONTNEED, hole punching), until
 * dt_client_untrack(),
 * dt_client_detach() or dt_client_close(); those collect what was written
 * first.  dt_client_track_report() tells the daemon (TRACK) that the region
 * is tracked, or that tracking was refused.
 *
 * Context: Any thread.  Takes the handle's lock; blocks (the probe forks;
 * the first call of the process times a flush and a scan of 2MiB).
 * Return: 0; -EOPNOTSUPP where tracking cannot work here (kernel without
 * UFFD_FEATURE_WP_ASYNC or PAGEMAP_SCAN, userfaultfd refused, a mapping the
 * kernel maps with 2MiB entries such as a 2MiB-aligned device DAX, a probe
 * that failed or hung; a private, read-only or anonymous mapping), with
 * @reason; -EINVAL for a misaligned or empty range, unknown flags, a NULL
 * @addr without a mapping of the library's, or a mapping of another file;
 * -EFAULT if part of the range is not mapped; -EBUSY if part of it is
 * tracked already (by this handle, or registered with userfaultfd by another
 * handle or by the application); -ERANGE past the region's end (or the
 * library's mapping); -EPERM without write rights; -ENOMEM; the region's
 * ATTACH error after a reconnect.
 */
int dt_client_track(struct dt_client_region *r, void *addr, size_t length, uint64_t offset,
		    unsigned flags, char *reason);

/**
 * dt_client_untrack() - Stop tracking a mapping tracked by dt_client_track().
 * @r: The region handle.
 * @addr: The @addr given to dt_client_track() (NULL: the library's own
 *	mapping, with @offset).
 * @offset: As given to dt_client_track().
 *
 * Collects and marks dirty what was written in it first (nothing written is
 * forgotten), then unregisters it (also when the collection failed).  An
 * adopted mapping stops serving the in-process persists.  The caller may
 * unmap it afterwards.  The daemon is not told: the region's TRACK state
 * stays DT_TRACK_ON until it is detached (a program that maps its file
 * afresh at each transaction costs no message a transaction).
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: 0; -ENOENT if no tracked mapping starts there; a collection error.
 */
int dt_client_untrack(struct dt_client_region *r, void *addr, uint64_t offset);

/**
 * dt_client_track_collect() - Mark dirty the tracked pages written in a range.
 * @r: The region handle.
 * @offset: First byte (region offset).
 * @length: Bytes, >= 1.
 *
 * Only the part of the tracked mappings inside the range is scanned.
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: The number of pages collected (>= 0); -EINVAL for a zero @length;
 * the PAGEMAP_SCAN error; a marking error as dt_client_dirty() (the pages
 * are write-protected again either way: a mark lost for want of memory makes
 * the region's next fsync fail with -ENOMEM).
 */
long dt_client_track_collect(struct dt_client_region *r, uint64_t offset, uint64_t length);

/**
 * dt_client_track_addr() - The region a tracked address belongs to.
 * @c: The connection.
 * @addr: Any address.
 * @offset: Set to the region offset of @addr when found.
 *
 * Context: Any thread.  Takes the handle's lock.
 * Return: The region handle whose tracked mapping holds @addr, or NULL.
 */
struct dt_client_region *dt_client_track_addr(struct dt_client *c, const void *addr,
					       uint64_t *offset);

/**
 * dt_client_punch() - Forget the entries of a range (PUNCH).
 * @r: The region handle.
 * @offset: First byte.
 * @length: Bytes, >= 1.
 *
 * Sends the region's batch first (pipelined) if it overlaps the range.
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: 0; -EPERM without write rights; -ERANGE; -EINVAL; a connection
 * error.
 */
int dt_client_punch(struct dt_client_region *r, uint64_t offset, uint64_t length);

/**
 * dt_client_query() - The entry covering a byte (QUERY).
 * @r: The region handle.
 * @offset: Any byte.
 * @out: Filled with the reply: found, and the entry (base, sector, order,
 *	flags: locked is DT_PROTO_ENTRY_LOCKED, tags).
 *
 * Sends the region's batch first (pipelined), so the reply sees its marks.
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: 0 (also when no entry covers @offset: @out->found is false);
 * -ERANGE past the end; a connection error.
 */
int dt_client_query(struct dt_client_region *r, uint64_t offset, struct dt_proto_query_rep *out);

/**
 * dt_client_list() - One page of the entries of a range (LIST).
 * @r: The region handle.
 * @l: The walk: set @offset, @length, @flags, @cursor = 0, @done = false;
 *	each call advances @cursor and sets @done after the last page.
 * @entries: Room for @max entries, ascending by base, disjoint.
 * @max: 1..DT_PROTO_MAX_LIST (capped to the daemon's max_list).
 * @count: Set to the number of entries stored (may be 0 before @done).
 *
 * Call until @l->done.  The first call sends the region's batch.  The walk
 * is not a snapshot (see docs/protocol.md); it survives a reconnect.
 *
 * Context: Any thread.  Takes the handle's lock; blocks.
 * Return: 0; -EINVAL for @max 0, a walk already done or bad flags; -ERANGE;
 * a connection error.
 */
int dt_client_list(struct dt_client_region *r, struct dt_client_list *l,
		   struct dt_proto_entry *entries, uint32_t max, uint32_t *count);

/**
 * dt_client_dump() - The text of the region's tree (DUMP, every chunk).
 * @r: The region handle.
 * @text: Set to a malloc()ed, NUL-terminated copy of the dump (free() it).
 * @len: If not NULL, set to its length (without the NUL).
 *
 * Restarts from the first chunk if the connection was re-established in the
 * middle, so the chunks always belong to one dump.
 *
 * Context: Any thread.  Takes the handle's lock; allocates; blocks.
 * Return: 0; -ENOMEM; -EBADMSG if the chunks do not fit together; a
 * connection error.
 */
int dt_client_dump(struct dt_client_region *r, char **text, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* DAXTRACK_CLIENT_H */
