// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fake_server.c - a tiny daxtrackd stand-in for the client tests (see
 * fake_server.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake_server.h"

#define PAGE 4096ULL

struct fake_conn {
	int fd;
	int reply_fd;			/* sent with the reply (LOG), or -1 */
	bool hello;
	uint32_t access[FAKE_REGIONS];
	uint8_t in[DT_PROTO_MAX_MSG];
	uint8_t out[DT_PROTO_MAX_MSG];
	struct dt_proto_entry entries[FAKE_PAGES_MAX];
};

void fake_lock(struct fake_server *f)
{
	pthread_mutex_lock(&f->lock);
}

void fake_unlock(struct fake_server *f)
{
	pthread_mutex_unlock(&f->lock);
}

static int listen_on(struct fake_server *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	if (strlen(f->sock) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, f->sock, strlen(f->sock) + 1);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	unlink(f->sock);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 16)) {
		int err = -errno;

		close(s);
		return err;
	}
	return s;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void region_rec(struct fake_server *f, unsigned i, struct dt_proto_region *r)
{
	memset(r, 0, sizeof(*r));
	r->id = 10 + i + (f->pid & 0xff) * 100;	/* ids change across restarts */
	r->flags = 0;
	r->size = f->regions[i].size;
	r->flush = DT_FLUSH_MSYNC;
	r->numa_node = -1;
	r->ns_match = DT_NS_MATCH_NO_NAMESPACES;
	strcpy(r->name, f->regions[i].name);
	strcpy(r->path, f->regions[i].path);
}

static int region_index(struct fake_server *f, uint32_t id)
{
	for (unsigned i = 0; i < FAKE_REGIONS; i++) {
		struct dt_proto_region r;

		region_rec(f, i, &r);
		if (r.id == id)
			return (int)i;
	}
	return -1;
}

/* Pages touched by [off, off + len), checked against the region. */
static int page_span(struct fake_region *fr, uint64_t off, uint64_t len, uint64_t *first,
		     uint64_t *last)
{
	if (off >= fr->size || len > fr->size - off)
		return -ERANGE;
	*first = off / PAGE;
	*last = (off + len - 1) / PAGE;
	return 0;
}

static int do_attach(struct fake_server *f, struct fake_conn *c, const struct dt_msg *req,
		     int fd, struct dt_msg *rep)
{
	struct dt_proto_region rec;
	struct stat st, rst;
	int idx = -1;

	if (req->attach_req.mode == DT_ATTACH_NAME) {
		for (unsigned i = 0; i < FAKE_REGIONS; i++)
			if (!strcmp(req->attach_req.name, f->regions[i].name))
				idx = (int)i;
		if (idx < 0)
			return -ENOENT;
		if (f->name_write)
			c->access[idx] = DT_ACCESS_WRITE;
	} else {
		if (fd < 0)
			return -EBADF;
		if (fstat(fd, &st))
			return -EBADF;
		for (unsigned i = 0; i < FAKE_REGIONS; i++)
			if (!stat(f->regions[i].path, &rst) && rst.st_ino == st.st_ino &&
			    rst.st_dev == st.st_dev)
				idx = (int)i;
		if (idx < 0)
			return -ENOENT;
		if ((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR)
			c->access[idx] = DT_ACCESS_WRITE;
	}
	region_rec(f, (unsigned)idx, &rec);
	rep->attach_rep.region = rec.id;
	rep->attach_rep.size = rec.size;
	rep->attach_rep.access = c->access[idx];
	strcpy(rep->attach_rep.name, rec.name);
	return 0;
}

static int do_dirty(struct fake_server *f, struct fake_conn *c, const struct dt_msg *req,
		    struct dt_msg *rep, int idx)
{
	struct fake_region *fr = &f->regions[idx];
	struct dt_proto_range r;
	uint64_t first = 0, last = 0;

	if (f->dirty_status && f->dirty_status_count) {
		f->dirty_status_count--;
		return f->dirty_status;
	}
	if (req->dirty_req.count > f->max_ranges)
		return -E2BIG;
	for (uint32_t i = 0; i < req->dirty_req.count; i++) {
		dt_proto_range_at(&req->dirty_req, i, &r);
		if (page_span(fr, r.offset, r.length, &first, &last))
			return -ERANGE;
	}
	f->dirty_ranges += req->dirty_req.count;
	if (req->dirty_req.count > f->max_dirty_count)
		f->max_dirty_count = req->dirty_req.count;
	for (uint32_t i = 0; i < req->dirty_req.count; i++) {
		dt_proto_range_at(&req->dirty_req, i, &r);
		page_span(fr, r.offset, r.length, &first, &last);
		for (uint64_t p = first; p <= last; p++) {
			fr->dirty[p] = 1;
			fr->marked[p]++;
			rep->dirty_rep.pages++;
		}
	}
	rep->dirty_rep.ranges = req->dirty_req.count;
	return 0;
}

/* What a daemon does with a log at FSYNC: every page set in it counts as DIRTY. */
static int log_run(void *arg, uint64_t first, uint64_t last)
{
	struct fake_region *fr = arg;

	for (uint64_t p = first; p <= last && p < FAKE_PAGES_MAX; p++)
		fr->dirty[p] = 1;
	return 0;
}

static int do_fsync(struct fake_server *f, const struct dt_msg *req, struct dt_msg *rep, int idx)
{
	struct fake_region *fr = &f->regions[idx];
	uint64_t first = 0, last = fr->size / PAGE - 1;
	struct dt_dlog_scan_stats st = { 0 };

	if (!(req->fsync_req.flags & DT_FSYNC_WHOLE) &&
	    page_span(fr, req->fsync_req.offset, req->fsync_req.length, &first, &last))
		return -ERANGE;
	if (f->fsync_status)
		return f->fsync_status;
	if (f->has_log[idx]) {
		dt_dlog_for_each(&f->log[idx], first, last, true, log_run, fr, &st);
		f->log_pages_flushed += st.set_pages;
	}
	for (uint64_t p = first; p <= last; p++) {
		if (!fr->dirty[p])
			continue;
		fr->dirty[p] = 0;
		fr->flushed[p]++;
		rep->fsync_rep.entries++;
		rep->fsync_rep.bytes += PAGE;
	}
	rep->fsync_rep.ranges = rep->fsync_rep.entries ? 1 : 0;
	return 0;
}

static int do_list(struct fake_server *f, struct fake_conn *c, const struct dt_msg *req,
		   struct dt_msg *rep, int idx)
{
	struct fake_region *fr = &f->regions[idx];
	uint64_t first = 0, last = fr->size / PAGE - 1, p;
	uint32_t n = 0, max = req->list_req.max_count;

	if (!(req->list_req.flags & DT_LIST_WHOLE) &&
	    page_span(fr, req->list_req.offset, req->list_req.length, &first, &last))
		return -ERANGE;
	if (max > f->max_list)
		max = f->max_list;
	p = req->list_req.cursor ? req->list_req.cursor / PAGE : first;
	for (; p <= last && n < max; p++) {
		if (!fr->dirty[p] && (req->list_req.flags & DT_LIST_DIRTY))
			continue;
		if (!fr->dirty[p] && !fr->marked[p])
			continue;
		memset(&c->entries[n], 0, sizeof(c->entries[n]));
		c->entries[n].base = p * PAGE;
		c->entries[n].sector = p * 8;
		c->entries[n].tags = fr->dirty[p] ? DT_PROTO_TAG_DIRTY : 0;
		n++;
	}
	rep->list_rep.count = n;
	rep->list_rep.entries = c->entries;
	if (p > last) {
		rep->list_rep.flags = DT_LIST_DONE;
	} else {
		rep->list_rep.next_cursor = p * PAGE;
	}
	return 0;
}

static void log_close(struct fake_server *f)
{
	for (unsigned i = 0; i < FAKE_REGIONS; i++) {
		if (f->has_log[i])
			munmap(f->log[i].base, f->log[i].g.file_size);
		f->has_log[i] = false;
	}
}

/* A client log of region @idx: a file, formatted, mapped; its fd for the reply. */
static int do_log(struct fake_server *f, struct fake_conn *c, struct dt_msg *rep, int idx)
{
	struct dt_dlog_header h = { .kind = DT_DLOG_CLIENT };
	struct fake_region *fr = &f->regions[idx];
	struct dt_dlog *l = &f->log[idx];
	char path[320];
	void *base;
	int fd;

	if (f->log_status)
		return f->log_status;
	if (f->has_log[idx])
		return -EEXIST;
	h.npages = (fr->size + PAGE - 1) / PAGE;
	h.region_size = fr->size;
	strcpy(h.region_name, fr->name);
	snprintf(path, sizeof(path), "%s/%s@%u.log", f->dir, fr->name, f->pid);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (dt_dlog_geometry(h.npages, &l->g) || ftruncate(fd, (off_t)l->g.file_size)) {
		close(fd);
		return -ENOSPC;
	}
	base = mmap(NULL, l->g.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED || dt_dlog_format(base, l->g.file_size, &h) ||
	    dt_dlog_attach(l, base, l->g.file_size, h.npages)) {
		close(fd);
		return -ENOMEM;
	}
	f->has_log[idx] = true;
	rep->log_rep.npages = h.npages;
	rep->log_rep.file_size = h.file_size;
	rep->log_rep.flags = f->log_flags;
	rep->log_rep.log_id = f->pid;
	if (f->log_no_fd)
		close(fd);
	else
		c->reply_fd = fd;
	return 0;
}

static const char dump_text[] = "fake dump: one line\nanother line of the fake tree dump\n";

static int do_region_op(struct fake_server *f, struct fake_conn *c, const struct dt_msg *req,
			struct dt_msg *rep, uint32_t id)
{
	int idx = region_index(f, id);
	bool mut = req->op == DT_OP_FAULT || req->op == DT_OP_DIRTY || req->op == DT_OP_FSYNC ||
		   req->op == DT_OP_PUNCH || req->op == DT_OP_LOG;

	if (idx < 0)
		return -ENOENT;
	if (mut && !(c->access[idx] & DT_ACCESS_WRITE))
		return -EPERM;
	switch (req->op) {
	case DT_OP_DIRTY:
		return do_dirty(f, c, req, rep, idx);
	case DT_OP_FSYNC:
		return do_fsync(f, req, rep, idx);
	case DT_OP_LIST:
		return do_list(f, c, req, rep, idx);
	case DT_OP_LOG:
		return do_log(f, c, rep, idx);
	case DT_OP_FAULT:
		rep->fault_rep.base = req->fault_req.offset & ~(PAGE - 1);
		rep->fault_rep.size = PAGE;
		return 0;
	case DT_OP_PUNCH:
		return 0;
	case DT_OP_QUERY: {
		uint64_t p = req->query_req.offset / PAGE;

		if (req->query_req.offset >= f->regions[idx].size)
			return -ERANGE;
		rep->query_rep.found = f->regions[idx].dirty[p];
		if (rep->query_rep.found) {
			rep->query_rep.entry.base = p * PAGE;
			rep->query_rep.entry.tags = DT_PROTO_TAG_DIRTY;
		}
		return 0;
	}
	case DT_OP_DUMP: {
		uint64_t off = req->dump_req.offset, total = sizeof(dump_text) - 1;

		if (off > total)
			return -EINVAL;
		rep->dump_rep.offset = off;
		rep->dump_rep.total = total;
		rep->dump_rep.length = (uint32_t)(total - off < 16 ? total - off : 16);
		rep->dump_rep.text = dump_text + off;
		rep->dump_rep.flags = off + rep->dump_rep.length == total ? DT_DUMP_DONE : 0;
		return 0;
	}
	}
	return -EPROTO;
}

static int do_stats(struct fake_server *f, const struct dt_msg *req, struct dt_msg *rep)
{
	static struct dt_proto_region_stats rs[FAKE_REGIONS];
	unsigned n = 0;

	for (unsigned i = 0; i < FAKE_REGIONS; i++) {
		struct dt_proto_region rec;

		region_rec(f, i, &rec);
		if (req->stats_req.region != DT_PROTO_ALL_REGIONS &&
		    req->stats_req.region != rec.id)
			continue;
		memset(&rs[n], 0, sizeof(rs[n]));
		rs[n].id = rec.id;
		strcpy(rs[n].name, rec.name);
		for (unsigned p = 0; p < FAKE_PAGES_MAX; p++)
			rs[n].dirty += f->regions[i].dirty[p];
		n++;
	}
	if (!n)
		return -ENOENT;
	for (unsigned op = 0; op < DT_PROTO_STATS_OPS; op++)
		rep->stats_rep.requests_by_op[op] = f->by_op[op];
	rep->stats_rep.count = n;
	rep->stats_rep.regions = rs;
	return 0;
}

static int dispatch(struct fake_server *f, struct fake_conn *c, const struct dt_msg *req, int fd,
		    struct dt_msg *rep)
{
	static struct dt_proto_region recs[FAKE_REGIONS];

	if (req->op != DT_OP_HELLO && !c->hello)
		return -EPROTO;
	switch (req->op) {
	case DT_OP_HELLO:
		c->hello = true;
		rep->hello_rep.version = (uint16_t)(f->version ? f->version : 1);
		if (rep->hello_rep.version > req->hello_req.max_version)
			rep->hello_rep.version = req->hello_req.max_version;
		rep->hello_rep.max_message = DT_PROTO_DEFAULT_MSG;
		rep->hello_rep.max_ranges = f->max_ranges;
		rep->hello_rep.max_list = f->max_list;
		rep->hello_rep.pid = f->pid;
		rep->hello_rep.start_time_ns = f->start_time_ns;
		strcpy(rep->hello_rep.software, "fake");
		return 0;
	case DT_OP_REGIONS:
		for (unsigned i = 0; i < FAKE_REGIONS; i++)
			region_rec(f, i, &recs[i]);
		rep->regions_rep.count = FAKE_REGIONS;
		rep->regions_rep.regions = recs;
		return 0;
	case DT_OP_ATTACH:
		return do_attach(f, c, req, fd, rep);
	case DT_OP_STATS:
		return do_stats(f, req, rep);
	case DT_OP_NAMESPACES:
		rep->namespaces_rep.flags = DT_NS_NO_NDCTL;
		return 0;
	case DT_OP_FAULT: return do_region_op(f, c, req, rep, req->fault_req.region);
	case DT_OP_DIRTY: return do_region_op(f, c, req, rep, req->dirty_req.region);
	case DT_OP_FSYNC: return do_region_op(f, c, req, rep, req->fsync_req.region);
	case DT_OP_PUNCH: return do_region_op(f, c, req, rep, req->punch_req.region);
	case DT_OP_QUERY: return do_region_op(f, c, req, rep, req->query_req.region);
	case DT_OP_LIST: return do_region_op(f, c, req, rep, req->list_req.region);
	case DT_OP_DUMP: return do_region_op(f, c, req, rep, req->dump_req.region);
	case DT_OP_LOG: return do_region_op(f, c, req, rep, req->log_req.region);
	}
	return -EPROTO;
}

/* A crash: the connection and the listener go; maybe a new daemon later. */
static void crash(struct fake_server *f, struct fake_conn *c)
{
	unsigned ms;
	bool forever;

	close(c->fd);
	c->fd = -1;
	log_close(f);
	close(f->listen_fd);
	unlink(f->sock);
	f->listen_fd = -1;
	f->drop_op = 0;
	if (f->restart) {
		f->pid++;
		f->start_time_ns = now_ns();
		for (unsigned i = 0; i < FAKE_REGIONS; i++) {
			struct fake_region *fr = &f->regions[i];

			for (unsigned p = 0; p < FAKE_PAGES_MAX; p++) {
				/* The recovery flush, unless the test wants it forgotten. */
				if (fr->dirty[p] && !f->forget)
					fr->flushed[p]++;
				fr->dirty[p] = 0;
			}
		}
	}
	ms = f->down_ms;
	forever = f->down_forever;
	fake_unlock(f);
	if (forever)
		return;
	usleep(ms * 1000);
	fake_lock(f);
	f->listen_fd = listen_on(f);
	fake_unlock(f);
}

static void serve(struct fake_server *f, struct fake_conn *c)
{
	struct dt_msg req, rep;
	size_t len;
	ssize_t n;
	int fd, st;

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };

		if (poll(&p, 1, 50) == 0) {
			if (__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE))
				break;
			continue;
		}
		fd = -1;
		n = dt_proto_recv(c->fd, c->in, sizeof(c->in), &fd);
		if (n <= 0)
			break;
		fake_lock(f);
		st = dt_proto_decode(c->in, (size_t)n, &req);
		if (st) {
			fake_unlock(f);
			if (fd >= 0)
				close(fd);
			break;
		}
		if (req.op < DT_PROTO_STATS_OPS)
			f->by_op[req.op]++;
		if (f->drop_op == req.op && --f->drop_nth == 0) {
			if (fd >= 0)
				close(fd);
			crash(f, c);	/* unlocks */
			return;
		}
		memset(&rep, 0, sizeof(rep));
		dt_proto_init_reply(&rep, &req, 0);
		c->reply_fd = -1;
		st = dispatch(f, c, &req, fd, &rep);
		if (st) {
			memset(&rep, 0, sizeof(rep));
			dt_proto_init_reply(&rep, &req, st);
		}
		fake_unlock(f);
		if (fd >= 0)
			close(fd);
		st = dt_proto_encode(&rep, c->out, sizeof(c->out), &len);
		if (!st && dt_proto_send(c->fd, c->out, len, c->reply_fd) < 0)
			st = -1;
		if (c->reply_fd >= 0)
			close(c->reply_fd);
		if (st)
			break;
	}
	close(c->fd);
	c->fd = -1;
	fake_lock(f);
	log_close(f);
	fake_unlock(f);
}

static void *fake_main(void *arg)
{
	struct fake_server *f = arg;
	struct fake_conn *c = calloc(1, sizeof(*c));
	int lfd;

	while (c && !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		fake_lock(f);
		lfd = f->listen_fd;
		fake_unlock(f);
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (lfd < 0 || poll(&p, 1, 50) <= 0) {
			if (lfd < 0)
				usleep(10000);
			continue;
		}
		memset(c->access, 0, sizeof(c->access));
		c->hello = false;
		c->fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c->fd < 0)
			continue;
		fake_lock(f);
		f->connections++;
		fake_unlock(f);
		serve(f, c);
	}
	free(c);
	return NULL;
}

static int make_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

int fake_start(struct fake_server *f)
{
	static const char *names[FAKE_REGIONS] = { "alpha", "beta" };
	static const uint64_t sizes[FAKE_REGIONS] = { 4ULL << 20, 2ULL << 20 };
	int err;

	pthread_mutex_init(&f->lock, NULL);
	strcpy(f->dir, "/tmp/dt-client-fake-XXXXXX");
	if (!mkdtemp(f->dir))
		return -errno;
	snprintf(f->sock, sizeof(f->sock), "%s/sock", f->dir);
	f->pid = 1000;
	f->start_time_ns = now_ns();
	if (!f->max_ranges)
		f->max_ranges = DT_PROTO_DEFAULT_RANGES;
	if (!f->max_list)
		f->max_list = 64;
	for (unsigned i = 0; i < FAKE_REGIONS; i++) {
		struct fake_region *fr = &f->regions[i];

		strcpy(fr->name, names[i]);
		snprintf(fr->path, sizeof(fr->path), "%s/%s.region", f->dir, names[i]);
		fr->size = sizes[i];
		err = make_file(fr->path, fr->size);
		if (err)
			return err;
	}
	f->listen_fd = listen_on(f);
	if (f->listen_fd < 0)
		return f->listen_fd;
	return -pthread_create(&f->thread, NULL, fake_main, f);
}

void fake_stop(struct fake_server *f)
{
	__atomic_store_n(&f->stop, true, __ATOMIC_RELEASE);
	pthread_join(f->thread, NULL);
	if (f->listen_fd >= 0)
		close(f->listen_fd);
	unlink(f->sock);
	for (unsigned i = 0; i < FAKE_REGIONS; i++)
		unlink(f->regions[i].path);
	rmdir(f->dir);
	pthread_mutex_destroy(&f->lock);
}

bool fake_dirty(struct fake_server *f, unsigned ri, uint64_t first, uint64_t n)
{
	bool ok = true;

	fake_lock(f);
	for (uint64_t p = first; p < first + n; p++)
		ok = ok && f->regions[ri].dirty[p];
	fake_unlock(f);
	return ok;
}

bool fake_clean(struct fake_server *f, unsigned ri, uint64_t first, uint64_t n)
{
	bool ok = true;

	fake_lock(f);
	for (uint64_t p = first; p < first + n; p++)
		ok = ok && !f->regions[ri].dirty[p];
	fake_unlock(f);
	return ok;
}

uint64_t fake_dirty_count(struct fake_server *f, unsigned ri)
{
	uint64_t n = 0;

	fake_lock(f);
	for (unsigned p = 0; p < FAKE_PAGES_MAX; p++)
		n += f->regions[ri].dirty[p];
	fake_unlock(f);
	return n;
}

void fake_arm_drop(struct fake_server *f, unsigned op, uint64_t nth, unsigned down_ms,
		   bool restart, bool forget)
{
	fake_lock(f);
	f->drop_op = op;
	f->drop_nth = nth;
	f->down_ms = down_ms;
	f->restart = restart;
	f->forget = forget;
	fake_unlock(f);
}
