// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/recovery.c - the unclean-exit recovery: set the marker in the state
 * directory before serving; if the previous daemon left it, it died with
 * dirty pages possibly unflushed.  Then, for each region:
 *   - its own write-intent log <name>@daemon.log (intent.h) and every client
 *     log <name>@<pid>-<serial>.log check against the region (kind, size,
 *     device, inode, this boot, name): only the pages set in them (dirty or
 *     flush, every word read) are flushed;
 *   - anything else (no runtime directory, fast_path = off, no own log, a
 *     log that fails its check, another boot): the whole region is flushed.
 * The old client logs are orphaned (DT_DLOG_F_ORPHAN) before they are read,
 * behind a system-wide barrier, so that a mark the recovery misses is one
 * its client sends through the socket; they are removed only once every
 * region is flushed (a crash of the recovery itself leaves them for the
 * next start), marked DT_DLOG_F_FLUSHED first, and fresh own logs are made
 * before the socket listens.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daxtrackd.h"
#include "intent.h"
#include "log.h"

/* The 4 KiB page of the logs and of the tree. */
#define DT_DLOG_PAGE 4096ULL

/* What a region's recovery found in the logs directory. */
struct plan {
	struct dt_region *r;
	struct dt_dlog_shadow pages; /* the pages to flush */
	unsigned nlogs; /* logs read (the own log and the client logs) */
	char why[192]; /* why the whole region, when not from the logs */
};

/* The header a log of @r of @kind must have, geometry included. */
static void expect_header(struct daemon *d, struct dt_region *r, uint32_t kind,
			  struct dt_dlog_header *h)
{
	struct dt_dlog_geometry g = { 0 };

	intent_header(r, kind, d->boot_id, h);
	dt_dlog_geometry(r->npages, &g);
	h->magic = DT_DLOG_MAGIC;
	h->version = DT_DLOG_VERSION;
	h->file_size = g.file_size;
}

/*
 * Only the daemon that left the marker may have made the log: one left by
 * an earlier daemon (whose successor could not remove it) misses the pages
 * dirtied since.
 */
static int check_maker(struct daemon *d, const void *base, const char **why)
{
	struct dt_dlog_header h;

	memcpy(&h, base, sizeof(h));
	if (d->state.prev_pid && h.daemon_pid == (uint64_t)d->state.prev_pid)
		return 0;
	*why = "not made by the daemon that left the unclean-exit marker";
	return -EINVAL;
}

static int plan_set(void *arg, uint64_t first, uint64_t last)
{
	struct plan *p = arg;

	dt_dlog_shadow_set(&p->pages, first, last);
	return 0;
}

/* Map the log @name, check it against @r and add its pages; 1: no such file. */
static int plan_add_log(struct daemon *d, struct plan *p, const char *name, uint32_t kind)
{
	struct dt_dlog_header h;
	const char *why = "unreadable";
	struct dt_dlog l;
	struct stat st;
	void *base;
	int fd, ret;

	fd = openat(d->log_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < DT_DLOG_HEADER_SIZE) {
		why = fd < 0 ? strerror(errno) :
			       "not a regular file of the daemon's of a log's size";
		ret = -EINVAL;
		goto out;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		why = strerror(errno);
		ret = -errno;
		goto out;
	}
	expect_header(d, p->r, kind, &h);
	ret = dt_dlog_check(base, (size_t)st.st_size, &h, &why);
	if (!ret)
		ret = check_maker(d, base, &why);
	if (!ret)
		ret = dt_dlog_attach(&l, base, (size_t)st.st_size, p->r->npages);
	if (!ret)
		ret = dt_dlog_for_each(&l, 0, p->r->npages - 1, true, plan_set, p, NULL);
	munmap(base, (size_t)st.st_size);
	if (!ret)
		p->nlogs++;
out:
	if (fd >= 0)
		close(fd);
	if (ret)
		snprintf(p->why, sizeof(p->why), "log %s: %s", name, why);
	return ret;
}

/* A client log of region @rname: "<rname>@<pid>-<serial>.log". */
static bool is_client_log(const char *file, const char *rname)
{
	size_t n = strlen(rname), len = strlen(file);
	const char *s = DT_LOGFILE_SUFFIX;

	return !strncmp(file, rname, n) && file[n] == '@' && len > n + 1 + strlen(s) &&
	       !strcmp(file + len - strlen(s), s) && strcmp(file + n, DT_LOGFILE_DAEMON);
}

/* The logs directory for a walk of its own (its own offset: not a dup()). */
static DIR *open_logs(struct daemon *d)
{
	int fd = openat(d->log_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir && fd >= 0)
		close(fd);
	return dir;
}

/* Every client log of the region; stops at the first that fails its check. */
static int plan_client_logs(struct daemon *d, struct plan *p)
{
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	dir = open_logs(d);
	if (!dir) {
		snprintf(p->why, sizeof(p->why), "logs directory: %s", strerror(errno));
		return -errno;
	}
	while (!ret && (de = readdir(dir)))
		if (is_client_log(de->d_name, p->r->name))
			ret = plan_add_log(d, p, de->d_name, DT_DLOG_CLIENT);
	closedir(dir);
	return ret < 0 ? ret : 0;
}

/* 0: flush p->pages; otherwise the whole region, p->why says why. */
static int plan_region(struct daemon *d, struct plan *p)
{
	char own[sizeof(((struct logfile *)0)->name)];
	struct dt_dlog geometry;
	int ret;

	if (!d->cfg.fast_path) {
		snprintf(p->why, sizeof(p->why), "fast_path = off");
		return -ENOENT;
	}
	if (d->log_dirfd < 0) {
		snprintf(p->why, sizeof(p->why), "no usable runtime directory");
		return -ENOENT;
	}
	ret = dt_dlog_geometry(p->r->npages, &geometry.g);
	if (!ret)
		ret = dt_dlog_shadow_init(&p->pages, &geometry);
	if (ret) {
		snprintf(p->why, sizeof(p->why), "%s", strerror(-ret));
		return ret;
	}
	snprintf(own, sizeof(own), "%s%s", p->r->name, DT_LOGFILE_DAEMON);
	ret = plan_add_log(d, p, own, DT_DLOG_DAEMON);
	if (ret > 0)
		snprintf(p->why, sizeof(p->why), "no write-intent log %s", own);
	if (ret)
		return -ENOENT;
	return plan_client_logs(d, p);
}

/* Runs flushed together (8 KiB on the stack): a window's worth (region-scatter.c). */
#define FLUSH_BATCH 512

/* Flushing the planned pages, a batch of runs at a time. */
struct plan_flush {
	struct dt_region *r;
	uint64_t pages, runs;
	uint64_t windowed; /* runs flushed through a window */
	uint64_t bad; /* pages left alone: in bad ranges */
	struct dt_region_range batch[FLUSH_BATCH];
	unsigned n;
	int refusal; /* the kernel's refusal to prefault, or 0 */
};

/*
 * The pages of a crash are scattered, and each first touch of one by the
 * fresh daemon would fault: dt_region_flush_scattered() maps a batch at a
 * time before flushing it.
 */
static void flush_batch(struct plan_flush *f)
{
	int refusal;

	f->windowed += dt_region_flush_scattered(f->r, f->batch, f->n, &refusal);
	if (refusal && !f->refusal)
		f->refusal = refusal;
	f->n = 0;
}

static int flush_good(void *arg, uint64_t first, uint64_t last)
{
	struct plan_flush *f = arg;

	f->batch[f->n++] =
		(struct dt_region_range){ first * DT_DLOG_PAGE, (last - first + 1) * DT_DLOG_PAGE };
	if (f->n == FLUSH_BATCH)
		flush_batch(f);
	f->pages += last - first + 1;
	f->runs++;
	return 0;
}

/* A run to flush, but for its pages in bad ranges: poisoned, never touched. */
static int flush_run(void *arg, uint64_t first, uint64_t last)
{
	struct plan_flush *f = arg;
	uint64_t before = f->pages;

	dt_region_good_runs(f->r, first, last, flush_good, f);
	f->bad += last - first + 1 - (f->pages - before);
	return 0;
}

/* Flush every run of @p's pages (@whole: every page of the region), then one drain. */
static void flush_planned(struct plan *p, bool whole, struct plan_flush *f)
{
	const struct dt_flush_ops *ops = dt_region_flush_ops(p->r);

	f->r = p->r;
	if (whole)
		flush_run(f, 0, p->r->npages - 1);
	else
		dt_dlog_shadow_for_each(&p->pages, flush_run, f);
	flush_batch(f);
	if (f->refusal)
		dt_log(LOG_DEBUG,
		       "region \"%s\": recovery flush: no prefault (%s): a page fault a page",
		       p->r->name, strerror(-f->refusal));
	if (f->runs && ops->drain)
		ops->drain(p->r);
	if (f->bad)
		dt_log(LOG_WARNING,
		       "region \"%s\": recovery flush: %llu pages in bad blocks left alone "
		       "(poisoned: what they held is lost)",
		       p->r->name, (unsigned long long)f->bad);
}

/* The whole region; with bad blocks, every page but theirs. */
static int flush_whole(struct dt_region *r)
{
	struct plan p = { .r = r };
	struct plan_flush f = { 0 };

	if (!dt_region_next_bad(r, 0, r->size, NULL))
		return dt_region_flush_all(r);
	flush_planned(&p, true, &f);
	return dt_region_take_flush_error(r);
}

static int recover_whole(struct dt_region *r, const char *why)
{
	uint64_t t0 = srv_now_ns();
	char size[32];
	int err;

	dt_log(LOG_NOTICE, "region \"%s\": no usable write-intent record (%s): flushing it whole",
	       r->name, why);
	err = flush_whole(r);
	fmt_size(size, sizeof(size), dt_region_bytes(r));
	if (err) {
		dt_log(LOG_ERR, "region \"%s\": recovery flush: %s", r->name, strerror(-err));
		return err;
	}
	dt_log(LOG_NOTICE, "region \"%s\": recovery flush: %s in %.2f s", r->name, size,
	       (double)(srv_now_ns() - t0) / 1e9);
	return 0;
}

static int recover_region(struct daemon *d, struct dt_region *r)
{
	struct plan p = { .r = r };
	uint64_t t0 = srv_now_ns();
	struct plan_flush f = { 0 };
	int err;

	notify("EXTEND_TIMEOUT_USEC=%llu", 120000000ULL);
	if (plan_region(d, &p)) {
		dt_dlog_shadow_free(&p.pages);
		return recover_whole(r, p.why);
	}
	flush_planned(&p, false, &f);
	dt_dlog_shadow_free(&p.pages);
	err = dt_region_take_flush_error(r);
	if (err) {
		dt_log(LOG_ERR, "region \"%s\": recovery flush: %s", r->name, strerror(-err));
		return err;
	}
	dt_log(LOG_NOTICE,
	       "region \"%s\": recovery flush: %llu pages in %llu runs, from %u "
	       "write-intent logs, in %.3f ms (%llu runs through a window)",
	       r->name, (unsigned long long)f.pages, (unsigned long long)f.runs, p.nlogs,
	       (double)(srv_now_ns() - t0) / 1e6, (unsigned long long)f.windowed);
	return 0;
}

static int recovery_flush(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	unsigned n, i;
	int ret = 0, err;

	dt_log(LOG_WARNING,
	       "unclean exit detected (%s/%s): flushing what may be dirty before "
	       "serving",
	       d->state.path, DT_STATE_MARKER);
	notify("STATUS=recovery after an unclean exit: flushing what may be dirty");
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		err = recover_region(d, list[i]->r);
		if (err)
			ret = err;
		srv_region_put(&d->srv, list[i]);
	}
	return ret;
}

/* ---- the logs directory ---- */

static void open_logdir(struct daemon *d)
{
	char err[512] = "";
	int ret;

	ret = logdir_open(d->cfg.runtime_dir, &d->log_dirfd, err, sizeof(err));
	if (!ret) {
		ret = logdir_boot_id(d->boot_id);
		if (ret)
			snprintf(err, sizeof(err), "boot id: %s", strerror(-ret));
	}
	if (!ret)
		return;
	if (d->log_dirfd >= 0)
		close(d->log_dirfd);
	d->log_dirfd = -1;
	if (d->cfg.fast_path)
		dt_log(LOG_WARNING,
		       "%s: serving without shared dirty logs (a crash will cost "
		       "whole-region flushes)",
		       err);
}

/*
 * Tell the owner of a log a previous daemon left that no daemon reads it any
 * more (DT_DLOG_F_ORPHAN in its header): a client flushing in-process never
 * talks to the daemon, so without it the client would go on marking a log
 * that no daemon reads, and its crash or another client's fsync would miss
 * its pages.  Seeing the flag, it takes the socket path, which reconnects.
 * DT_DLOG_F_FLUSHED, set after the recovery flushed the log's pages, tells
 * it that it need not carry its marks over to its new log.
 */
static void log_set_flags(struct daemon *d, const char *name, uint32_t flags)
{
	struct stat st;
	void *base;
	int fd;

	fd = openat(d->log_dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < DT_DLOG_HEADER_SIZE)
		goto out;
	base = mmap(NULL, DT_DLOG_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		goto out;
	if (((struct dt_dlog_header *)base)->magic == DT_DLOG_MAGIC)
		__atomic_fetch_or(&((struct dt_dlog_header *)base)->daemon_flags, flags,
				  __ATOMIC_SEQ_CST);
	munmap(base, DT_DLOG_HEADER_SIZE);
out:
	close(fd);
}

static bool is_old_log(const char *name)
{
	size_t len = strlen(name);

	return strchr(name, '@') && len >= 5 && !strcmp(name + len - 4, ".log");
}

/*
 * Set @flags in every log a previous daemon left ("<region>@<anything>.log");
 * with @remove, remove them.  Return: how many were removed.
 */
static unsigned old_logs(struct daemon *d, uint32_t flags, bool remove)
{
	struct dirent *de;
	unsigned n = 0;
	DIR *dir;

	dir = open_logs(d);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (!is_old_log(de->d_name))
			continue;
		log_set_flags(d, de->d_name, flags);
		if (remove && !unlinkat(d->log_dirfd, de->d_name, 0))
			n++;
	}
	closedir(dir);
	return n;
}

/*
 * Orphan the old logs before the recovery reads them, then make every
 * thread of the system pass a full barrier: a client's mark re-reads the
 * flags after its store (dt_client_log_still()), so either it sees ORPHAN
 * and sends the mark the socket way too, or the recovery sees its bits.
 * Return: whether the barrier was made (then a recovery that flushed may
 * say so with DT_DLOG_F_FLUSHED).
 */
static bool orphan_old_logs(struct daemon *d)
{
	old_logs(d, DT_DLOG_F_ORPHAN, false);
	/*
	 * The clients register for the expedited barrier (a few IPIs); one
	 * that could not re-marks its old log whatever the flag says.  The
	 * global one (a grace period, 8-16 ms here) where the kernel has no
	 * expedited one.
	 */
	if (!syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0))
		return true;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
}

/* Remove every log a previous daemon left, @flags set in them first. */
static void remove_old_logs(struct daemon *d, uint32_t flags)
{
	unsigned n = old_logs(d, DT_DLOG_F_ORPHAN | flags, true);

	if (n)
		dt_log(LOG_INFO, "removed %u shared dirty log%s of the previous daemon", n,
		       n == 1 ? "" : "s");
}

/* A fresh own log for every region, and the sweeper. */
static void start_intents(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	unsigned n, i;

	if (d->log_dirfd < 0 || !d->cfg.fast_path)
		return;
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		intent_create(list[i]->r, d->log_dirfd, d->boot_id);
		srv_region_put(&d->srv, list[i]);
	}
	d->intents = !intent_start_sweeper(&d->srv.regions);
}

int recovery_begin(struct daemon *d)
{
	char err[512] = "";
	bool unclean = false, barrier = false;
	int ret;

	ret = dt_state_begin(&d->state, &unclean, err, sizeof(err));
	if (ret) {
		dt_log(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	d->marker = true;
	open_logdir(d);
	if (unclean) {
		barrier = d->log_dirfd >= 0 && orphan_old_logs(d);
		ret = recovery_flush(d);
		if (ret) {
			dt_log(LOG_ERR, "recovery flush failed: refusing to serve");
			d->marker = false; /* keep it: the next start flushes again */
			return ret;
		}
	}
	if (d->log_dirfd >= 0)
		remove_old_logs(d, barrier ? DT_DLOG_F_FLUSHED : 0);
	start_intents(d);
	return 0;
}

void recovery_add_region(struct daemon *d, struct dt_region *r)
{
	if (d->intents)
		intent_create(r, d->log_dirfd, d->boot_id);
}

void recovery_end(struct daemon *d, bool clean)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	unsigned n, i;

	intent_stop_sweeper();
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		intent_destroy(list[i]->r, clean);
		srv_region_put(&d->srv, list[i]);
	}
	d->intents = false;
	if (d->log_dirfd >= 0)
		close(d->log_dirfd);
	d->log_dirfd = -1;
}
