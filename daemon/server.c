// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/server.c - connections and the worker threads of daxtrackd (see
 * service.h for the model); the listening socket is in server-listen.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>

#include <urcu/urcu-memb.h>

#include "dispatch.h"
#include "fastlog.h"
#include "log.h"
#include "server.h"

int srv_init(struct dt_server *srv)
{
	struct timespec ts;

	memset(srv, 0, sizeof(*srv));
	regions_init(&srv->regions);
	fastlog_init(srv);
	pthread_mutex_init(&srv->conns_lock, NULL);
	pthread_mutex_init(&srv->slices_lock, NULL);
	srv->listen_fd = -1;
	srv->stop_fd = -1;
	srv->slice_fd = -1;
	srv->refusals.last = -1;
	srv->uid_refusals.last = -1;
	srv->accept_errors.last = -1;
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	clock_gettime(CLOCK_REALTIME, &ts);
	srv->start_realtime_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	srv->start_mono_ns = srv_now_ns();
	srv->ep = epoll_create1(EPOLL_CLOEXEC);
	if (srv->ep < 0)
		return -errno;
	return 0;
}

void srv_destroy(struct dt_server *srv)
{
	if (srv->ep >= 0)
		close(srv->ep);
	if (srv->stop_fd >= 0)
		close(srv->stop_fd);
	if (srv->slice_fd >= 0)
		close(srv->slice_fd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	fastlog_close(srv);
	regions_destroy(&srv->regions);
	pthread_mutex_destroy(&srv->conns_lock);
	pthread_mutex_destroy(&srv->slices_lock);
}

/* ---- connections ---- */

/* The count of @uid's connections; NULL if it has none.  Under conns_lock. */
static struct srv_uid **uid_slot(struct dt_server *srv, uid_t uid)
{
	struct srv_uid **u = &srv->uids[uid % DT_SRV_UID_BUCKETS];

	while (*u && (*u)->uid != uid)
		u = &(*u)->next;
	return u;
}

/*
 * Count a new connection of @uid.  Under conns_lock.  Return: 0; -EUSERS
 * when the uid (root excepted) has max_clients_per_uid already; -ENOMEM.
 */
static int uid_get(struct dt_server *srv, uid_t uid)
{
	struct srv_uid **slot = uid_slot(srv, uid);

	if (*slot && uid && (*slot)->n >= srv->max_clients_per_uid)
		return -EUSERS;
	if (!*slot) {
		*slot = calloc(1, sizeof(**slot));
		if (!*slot)
			return -ENOMEM;
		(*slot)->uid = uid;
	}
	(*slot)->n++;
	return 0;
}

/* A connection of @uid is gone.  Under conns_lock. */
static void uid_put(struct dt_server *srv, uid_t uid)
{
	struct srv_uid **slot = uid_slot(srv, uid), *u = *slot;

	if (!u || --u->n)
		return;
	*slot = u->next;
	free(u);
}

static void uid_free_all(struct dt_server *srv)
{
	for (unsigned i = 0; i < DT_SRV_UID_BUCKETS; i++) {
		while (srv->uids[i]) {
			struct srv_uid *u = srv->uids[i];

			srv->uids[i] = u->next;
			free(u);
		}
	}
}

/*
 * Take a connection off the list, its state (the DUMP text) given back
 * first: a client that sees it gone from STATS finds its bytes free.
 */
static void conn_unlink(struct dt_server *srv, struct dt_conn *c)
{
	dt_conn_free_state(srv, c);
	pthread_mutex_lock(&srv->conns_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	uid_put(srv, c->cred.uid);
	__atomic_store_n(&srv->nconns, srv->nconns - 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&srv->conns_lock);
}

static void conn_free(struct dt_conn *c)
{
	close(c->fd);
	free(c);
}

static void conn_close(struct dt_server *srv, struct dt_conn *c, const char *why)
{
	dt_log(LOG_DEBUG, "client %llu (uid %u, pid %d): disconnected%s%s",
	       (unsigned long long)c->id, (unsigned)c->cred.uid, (int)c->cred.pid,
	       why ? ": " : "", why ? why : "");
	epoll_ctl(srv->ep, EPOLL_CTL_DEL, c->fd, NULL);
	conn_unlink(srv, c);
	conn_free(c);
}

/* Count an event; true at most once a second: time to log it. */
static bool ratelimit(struct srv_ratelimit *rl)
{
	long now = (long)(srv_now_ns() / 1000000000ULL);

	rl->count++;
	if (now == rl->last)
		return false;
	rl->last = now;
	return true;
}

static void log_refusal(struct dt_server *srv)
{
	if (ratelimit(&srv->refusals))
		dt_log(LOG_WARNING, "max_clients (%u) reached: refused a connection (%llu so far)",
		       srv->max_clients, (unsigned long long)srv->refusals.count);
}

static void log_uid_refusal(struct dt_server *srv, const struct ucred *cr, int err)
{
	if (err != -EUSERS) {
		dt_log(LOG_ERR, "accept: uid %u (pid %d): %s", (unsigned)cr->uid, (int)cr->pid,
		       strerror(-err));
		return;
	}
	if (ratelimit(&srv->uid_refusals))
		dt_log(LOG_WARNING, "max_clients_per_uid (%u) reached by uid %u: refused a "
		       "connection of pid %d (%llu so far)", srv->max_clients_per_uid,
		       (unsigned)cr->uid, (int)cr->pid, (unsigned long long)srv->uid_refusals.count);
}

/* Put @c on the list, counted for its uid.  Return: 0, or uid_get()'s error. */
static int conn_link(struct dt_server *srv, struct dt_conn *c)
{
	int ret;

	pthread_mutex_lock(&srv->conns_lock);
	ret = uid_get(srv, c->cred.uid);
	if (!ret) {
		c->next = srv->conns;
		if (c->next)
			c->next->prev = c;
		srv->conns = c;
		__atomic_store_n(&srv->nconns, srv->nconns + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&srv->conns_lock);
	return ret;
}

static void accept_one(struct dt_server *srv, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT };
	socklen_t len = sizeof(struct ucred);
	struct dt_conn *c;
	int ret;

	if (__atomic_load_n(&srv->nconns, __ATOMIC_RELAXED) >= srv->max_clients) {
		log_refusal(srv);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		dt_log(LOG_ERR, "accept: %s", strerror(ENOMEM));
		close(fd);
		return;
	}
	c->fd = fd;
	c->id = ++srv->next_conn;
	c->max_message = srv->max_message;
	c->max_ranges = srv->max_ranges;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len)) {
		dt_log(LOG_WARNING, "accept: SO_PEERCRED: %s", strerror(errno));
		free(c);
		close(fd);
		return;
	}
	ret = conn_link(srv, c);
	if (ret) {
		log_uid_refusal(srv, &c->cred, ret);
		free(c);
		close(fd);
		return;
	}
	__atomic_fetch_add(&srv->stats.clients_total, 1, __ATOMIC_RELAXED);
	dt_log(LOG_DEBUG, "client %llu (uid %u, gid %u, pid %d): connected",
	       (unsigned long long)c->id, (unsigned)c->cred.uid, (unsigned)c->cred.gid,
	       (int)c->cred.pid);
	ev.data.ptr = c;
	/* From here on a worker owns it. */
	if (epoll_ctl(srv->ep, EPOLL_CTL_ADD, fd, &ev)) {
		dt_log(LOG_ERR, "epoll_ctl: %s", strerror(errno));
		conn_unlink(srv, c);
		conn_free(c);
	}
}

/*
 * Out of descriptors (EMFILE, ENFILE): a connection left in the backlog
 * keeps the listening socket readable, and the main loop would spin on it.
 * The spare descriptor, kept for this, is given up for one accept that
 * closes the connection at once (its client reads the end of the stream and
 * may retry), then taken back.  Return: whether a connection was shed.
 */
static bool shed_connection(struct dt_server *srv)
{
	int fd;

	if (srv->spare_fd < 0)
		srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (srv->spare_fd < 0)
		return false;
	close(srv->spare_fd);
	fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

/*
 * accept4() failed for want of a resource: log it at most once a second,
 * and either shed the connection waiting (descriptors) or, when that is
 * not possible (no spare, ENOBUFS, ENOMEM), pause the main thread briefly
 * so that it polls the listener a few times a second, not in a busy loop.
 * Return: whether to go on accepting.
 */
static bool accept_failed(struct dt_server *srv, int err)
{
	const struct timespec pause = { .tv_nsec = DT_SRV_ACCEPT_PAUSE_MS * 1000000L };

	if (ratelimit(&srv->accept_errors))
		dt_log(LOG_ERR, "accept: %s: connections are refused (%llu so far)", strerror(err),
		       (unsigned long long)srv->accept_errors.count);
	if ((err == EMFILE || err == ENFILE) && shed_connection(srv))
		return true;
	nanosleep(&pause, NULL);
	return false;
}

void srv_accept(struct dt_server *srv)
{
	int fd, i;

	/* A bounded batch, so that signals are seen even under a flood. */
	for (i = 0; i < 64; i++) {
		fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			accept_one(srv, fd);
			continue;
		}
		if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM)
			return;
		if (!accept_failed(srv, errno))
			return;
	}
}

/*
 * Send a reply, with @fd (SCM_RIGHTS) unless it is -1; wait a bounded time
 * for a client that does not read.
 */
static int send_reply(struct dt_conn *c, const void *buf, size_t len, int fd)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	uint64_t deadline = srv_now_ns() + DT_SRV_SEND_TIMEOUT_MS * 1000000ULL;
	ssize_t n;
	int ms;

	for (;;) {
		n = dt_proto_send(c->fd, buf, len, fd);	/* the socket is non-blocking */
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0)
			return -EIO;
		if (n != -EAGAIN)
			return (int)n;
		ms = (int)(((int64_t)(deadline - srv_now_ns())) / 1000000);
		if ((int64_t)(deadline - srv_now_ns()) <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, ms > 0 ? ms : 1) < 0 && errno != EINTR)
			return -errno;
	}
}

/* Send the reply in @w->out (with @w->reply_fd).  Return: 0, or why to close. */
static int answer(struct dt_worker *w, struct dt_conn *c, size_t out_len, const char **why)
{
	int ret = send_reply(c, w->out, out_len, w->reply_fd);

	w->reply_fd = -1;
	if (ret == -ETIMEDOUT) {
		dt_log(LOG_NOTICE, "client %llu (uid %u, pid %d): does not read its replies: closing",
		       (unsigned long long)c->id, (unsigned)c->cred.uid, (int)c->cred.pid);
		*why = "reply timeout";
	} else if (ret) {
		*why = strerror(-ret);
	}
	return ret;
}

/*
 * Requests served in a row on one connection before it goes back to epoll:
 * bounds what one pipelining client takes from the others.
 */
#define SERVE_BURST	16

/*
 * Whether the reply just encoded answers a DIRTY.  Clients send their dirty
 * batches ahead of the next request without waiting (an FSYNC, or the next
 * batch), so after a DIRTY the next request is usually queued already: it is
 * read at once, by this worker, rather than through epoll and the wake-up of
 * another worker (a context switch of 14-20 us here).  After any other
 * request the connection is re-armed at once, sparing a recvmsg(2) that
 * would find nothing.
 */
static bool dirty_reply(const uint8_t *out, size_t len)
{
	struct dt_msg hdr;

	return !dt_proto_peek(out, len, &hdr) && hdr.op == DT_OP_DIRTY;
}

/*
 * Serve one request.  @more is set when the next one may be queued already.
 * Return: 0 to re-arm (or to go on with @more), or why to close.
 */
static int serve(struct dt_worker *w, struct dt_conn *c, const char **why, bool *more,
		 bool *pending)
{
	unsigned nfds = 0;
	size_t out_len;
	ssize_t n;
	int fd = -1, ret;

	*more = false;
	n = dt_proto_recv_fds(c->fd, w->in, c->max_message, &fd, &nfds);
	if (n == -EAGAIN || n == -EINTR)
		return 0;
	if (n == 0) {
		*why = NULL;
		return -ECONNRESET;
	}
	if (n == -EMSGSIZE) {
		__atomic_fetch_add(&w->srv->stats.bad_messages, 1, __ATOMIC_RELAXED);
		dt_log(LOG_INFO, "client %llu (uid %u, pid %d): message over max_message (%u): closing",
		       (unsigned long long)c->id, (unsigned)c->cred.uid, (int)c->cred.pid,
		       c->max_message);
		*why = "oversized message";
		return -EMSGSIZE;
	}
	if (n < 0) {
		*why = strerror((int)-n);
		return (int)n;
	}
	/* Several fds prove nothing: ATTACH by fd then finds none (-EBADF). */
	if (nfds > 1) {
		close(fd);
		fd = -1;
	}
	ret = dt_dispatch(w, c, (size_t)n, fd, &out_len);
	if (ret == DT_DISPATCH_PENDING) {
		*pending = true;
		return 0;
	}
	if (ret) {
		*why = "undecodable message";
		return ret;
	}
	ret = answer(w, c, out_len, why);
	*more = !ret && dirty_reply(w->out, out_len);
	return ret;
}

/*
 * Hand-over between workers.  Once a worker re-arms a connection
 * (EPOLL_CTL_MOD), another may get its next event before the first has
 * returned from epoll_ctl().  The flag makes the new owner wait for that
 * return, so that it may close the fd and free the connection, and gives
 * the happens-before edge that the kernel gives but ThreadSanitizer does not
 * see (it models EPOLL_CTL_ADD, not MOD, as a release).
 */
static int rearm(struct dt_server *srv, struct dt_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c };
	int ret;

	__atomic_store_n(&c->rearming, 1, __ATOMIC_RELAXED);
	ret = epoll_ctl(srv->ep, EPOLL_CTL_MOD, c->fd, &ev);
	__atomic_store_n(&c->rearming, 0, __ATOMIC_RELEASE);
	return ret;
}

static void take_over(struct dt_conn *c)
{
	while (__atomic_load_n(&c->rearming, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* A connection whose FSYNC has slices left waits its turn behind the others. */
static void slice_push(struct dt_server *srv, struct dt_conn *c)
{
	uint64_t one = 1;

	c->slice_next = NULL;
	pthread_mutex_lock(&srv->slices_lock);
	if (srv->slices_tail)
		srv->slices_tail->slice_next = c;
	else
		srv->slices_head = c;
	srv->slices_tail = c;
	pthread_mutex_unlock(&srv->slices_lock);
	if (write(srv->slice_fd, &one, sizeof(one)) != sizeof(one))
		dt_log(LOG_ERR, "client %llu: fsync slice: eventfd: %s", (unsigned long long)c->id,
		       strerror(errno));
}

static struct dt_conn *slice_pop(struct dt_server *srv)
{
	struct dt_conn *c;

	pthread_mutex_lock(&srv->slices_lock);
	c = srv->slices_head;
	if (c) {
		srv->slices_head = c->slice_next;
		if (!srv->slices_head)
			srv->slices_tail = NULL;
	}
	pthread_mutex_unlock(&srv->slices_lock);
	return c;
}

/* Re-arm a connection whose request is answered, or close it. */
static void done_with(struct dt_server *srv, struct dt_conn *c, int ret, const char *why)
{
	if (!ret && rearm(srv, c)) {
		ret = -errno;
		why = "epoll_ctl";
	}
	if (ret)
		conn_close(srv, c, why);
}

/* The next slice of @c's FSYNC (all of them with @to_end); the reply, or its turn again. */
static void resume(struct dt_worker *w, struct dt_conn *c, bool to_end)
{
	const char *why = NULL;
	size_t out_len;
	int ret;

	do
		ret = dt_dispatch_resume(w, c, &out_len);
	while (to_end && ret == DT_DISPATCH_PENDING);
	if (ret == DT_DISPATCH_PENDING) {
		slice_push(w->srv, c);
		return;
	}
	if (ret)
		why = "undecodable message";
	else
		ret = answer(w, c, out_len, &why);
	done_with(w->srv, c, ret, why);
}

/* A slice for the first connection waiting: the count of slice_fd is taken for it. */
static void serve_slice(struct dt_worker *w)
{
	struct dt_conn *c;
	uint64_t v;

	if (read(w->srv->slice_fd, &v, sizeof(v)) != sizeof(v))
		return;	/* another worker took it */
	c = slice_pop(w->srv);
	if (c)
		resume(w, c, false);
}

/*
 * At the stop, the FSYNCs still in slices are written back to their end
 * and answered, as a whole FSYNC in progress would be.  Each worker does it
 * on its way out, after the slice it may have been running.
 */
static void finish_slices(struct dt_worker *w)
{
	struct dt_conn *c;

	while ((c = slice_pop(w->srv)))
		resume(w, c, true);
}

static void *worker_main(void *arg)
{
	struct dt_worker *w = arg;
	struct dt_server *srv = w->srv;
	struct epoll_event ev;
	struct dt_conn *c;
	const char *why;
	unsigned k;
	bool more, pending;
	int n, ret;

	urcu_memb_register_thread();
	for (;;) {
		n = epoll_wait(srv->ep, &ev, 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			dt_log(LOG_ERR, "worker %u: epoll_wait: %s", w->index, strerror(errno));
			break;
		}
		if (n == 0)
			continue;
		if (ev.data.ptr == &srv->stop_fd) {
			finish_slices(w);
			break;
		}
		if (ev.data.ptr == &srv->slice_fd) {
			serve_slice(w);
			continue;
		}
		c = ev.data.ptr;
		take_over(c);
		why = NULL;
		k = 0;
		pending = false;
		do
			ret = serve(w, c, &why, &more, &pending);
		while (!ret && more && !pending && ++k < SERVE_BURST);
		if (!ret && pending)
			slice_push(srv, c);
		else
			done_with(srv, c, ret, why);
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static void worker_free(struct dt_worker *w)
{
	free(w->in);
	free(w->out);
	free(w->entries);
	free(w->regions);
	free(w->rstats);
	free(w->ns);
	free(w->failed);
	free(w->cxl_memdevs);
	free(w->cxl_regions);
	free(w->pages);
}

static int worker_alloc(struct dt_worker *w)
{
	w->in = malloc(DT_PROTO_MAX_MSG);
	w->out = malloc(DT_PROTO_MAX_MSG);
	w->entries = calloc(DT_SRV_MAX_LIST, sizeof(*w->entries));
	w->regions = calloc(DT_PROTO_MAX_REGIONS, sizeof(*w->regions));
	w->rstats = calloc(DT_PROTO_MAX_REGIONS, sizeof(*w->rstats));
	w->ns = calloc(DT_PROTO_MAX_NAMESPACES, sizeof(*w->ns));
	w->failed = calloc(DT_PROTO_MAX_REGIONS, sizeof(*w->failed));
	w->cxl_memdevs = calloc(DT_PROTO_MAX_CXL, sizeof(*w->cxl_memdevs));
	w->cxl_regions = calloc(DT_PROTO_MAX_CXL, sizeof(*w->cxl_regions));
	w->pages = calloc(DT_PROTO_MAX_RANGES, sizeof(*w->pages));
	w->reply_fd = -1;
	if (!w->in || !w->out || !w->entries || !w->regions || !w->rstats || !w->ns || !w->failed ||
	    !w->pages || !w->cxl_memdevs || !w->cxl_regions)
		return -ENOMEM;
	return 0;
}

/*
 * Room for max_clients connections: the soft RLIMIT_NOFILE is raised up to
 * the hard one when it is lower than they need (the daemon uses no
 * select(2), so large descriptors are fine); when even the hard limit is
 * short, the log says so, since clients past it are shed (srv_accept()).
 */
void srv_fit_nofile(const struct dt_server *srv, unsigned workers)
{
	rlim_t need = (rlim_t)srv->max_clients + workers + DT_SRV_NOFILE_RESERVE;
	struct rlimit rl;
	rlim_t was;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	was = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ? rl.rlim_max : need;
	if (rl.rlim_cur > was && !setrlimit(RLIMIT_NOFILE, &rl))
		dt_log(LOG_INFO, "RLIMIT_NOFILE raised from %llu to %llu for max_clients (%u)",
		       (unsigned long long)was, (unsigned long long)rl.rlim_cur, srv->max_clients);
	else
		rl.rlim_cur = was;
	if (rl.rlim_cur < need)
		dt_log(LOG_WARNING, "RLIMIT_NOFILE is %llu, max_clients (%u) needs about %llu: "
		       "clients past the limit are refused (raise LimitNOFILE= or ulimit -n)",
		       (unsigned long long)rl.rlim_cur, srv->max_clients, (unsigned long long)need);
}

int srv_start_workers(struct dt_server *srv, unsigned n)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &srv->stop_fd };
	unsigned i;
	int ret;

	srv->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv->stop_fd < 0)
		return -errno;
	/* Level-triggered and never read: once written, every worker sees it. */
	if (epoll_ctl(srv->ep, EPOLL_CTL_ADD, srv->stop_fd, &ev))
		return -errno;
	/* Level-triggered too: ready while any connection waits for its next slice. */
	srv->slice_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	ev.data.ptr = &srv->slice_fd;
	if (srv->slice_fd < 0 || epoll_ctl(srv->ep, EPOLL_CTL_ADD, srv->slice_fd, &ev))
		return -errno;
	srv->workers = calloc(n, sizeof(*srv->workers));
	if (!srv->workers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct dt_worker *w = &srv->workers[i];

		w->srv = srv;
		w->index = i;
		ret = worker_alloc(w);
		if (!ret)
			ret = -pthread_create(&w->thread, NULL, worker_main, w);
		if (ret) {
			worker_free(w);
			srv->nworkers = i;
			srv_stop_workers(srv);
			return ret;
		}
	}
	srv->nworkers = n;
	ret = fastlog_start(srv);
	if (ret)
		srv_stop_workers(srv);
	return ret;
}

void srv_stop_workers(struct dt_server *srv)
{
	uint64_t one = 1;
	unsigned i;

	if (srv->stop_fd >= 0 && write(srv->stop_fd, &one, sizeof(one)) < 0)
		dt_log(LOG_ERR, "stopping the workers: %s", strerror(errno));
	for (i = 0; i < srv->nworkers; i++) {
		pthread_join(srv->workers[i].thread, NULL);
		worker_free(&srv->workers[i]);
	}
	fastlog_stop(srv);
	free(srv->workers);
	srv->workers = NULL;
	srv->nworkers = 0;
}

void srv_close_all(struct dt_server *srv)
{
	struct dt_conn *c;

	pthread_mutex_lock(&srv->conns_lock);
	while ((c = srv->conns)) {
		srv->conns = c->next;
		dt_conn_free_state(srv, c);
		conn_free(c);
	}
	srv->nconns = 0;
	uid_free_all(srv);
	pthread_mutex_unlock(&srv->conns_lock);
	srv->slices_head = srv->slices_tail = NULL;	/* they were connections */
}
