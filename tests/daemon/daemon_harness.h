/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon_harness.h - the daemon tests' side of tests/harness/harness.h:
 * one daxtrackd (the global dh) on a private socket in a temporary
 * directory, started, stopped and always killed by the harness (at exit, on
 * the SIGALRM watchdog, with the test); talk to it with the protocol
 * encoder/decoder, read its log and its flush log.
 *
 * The daemon's path is argv[1] (meson passes daxtrackd.full_path()).
 */
#ifndef DAEMON_HARNESS_H
#define DAEMON_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "dt_dlog_test.h"
#include <daxtrack/proto.h>

#include "dt_test.h"
#include "harness.h"

static struct dth dh;

struct dh_conn {
	int fd;
	uint32_t id;
	uint8_t buf[DT_PROTO_MAX_MSG];
	uint8_t out[DT_PROTO_MAX_MSG];
};

static inline void dh_kill(void)
{
	dth_kill(&dh);
}

static inline void dh_on_alarm(int sig)
{
	dth_on_alarm(sig);
}

static inline void dh_path(char *buf, const char *name)
{
	dth_path(&dh, buf, name);
}

/* Set up the directory; @timeout seconds for the whole test. */
static inline void dh_init(int argc, char **argv, unsigned timeout)
{
	const struct dth_options o = { .exe = argv[1], .tag = "srv", .dir_mode = 0755 };
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-OF-DAXTRACKD\n", argv[0]);
		exit(2);
	}
	ret = dth_init(&dh, &o);
	if (ret) {
		fprintf(stderr, "daemon harness: %s: %s\n", dh.dir, strerror(-ret));
		exit(2);
	}
	signal(SIGPIPE, SIG_IGN);
	dth_watchdog(timeout);
}

/* Write the configuration: [daemon] lines + the regions a (8M) and b (4M). */
static inline void dh_config(const char *daemon_extra, const char *regions)
{
	static const struct dth_region ab[] = { { .name = "a", .size = "8M" },
						{ .name = "b", .size = "4M" } };
	char lines[1024];
	int ret;

	snprintf(lines, sizeof(lines), "socket_mode = 0666\n%s", daemon_extra ? daemon_extra : "");
	if (regions)
		ret = dth_config(&dh, lines, NULL, 0, regions);
	else
		ret = dth_config(&dh, lines, ab, 2, NULL);
	if (ret) {
		fprintf(stderr, "%s: %s\n", dh.conf, strerror(-ret));
		exit(2);
	}
}

/* A connection to @path: the fd, or a negative errno. */
static inline int dh_try_connect(const char *path)
{
	return dth_connect(path);
}

static inline void dh_sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Spawn argv (NULL-terminated) with stdout/stderr appended to the log. */
static inline pid_t dh_spawn(char *const argv[])
{
	return dth_spawn(&dh, argv);
}

/* Wait until the socket accepts a connection; return 0, or -1 if the daemon exited. */
static inline int dh_wait_ready(pid_t pid, int *status)
{
	return dth_wait_ready(&dh, pid, status) ? -1 : 0;
}

/*
 * Start the daemon with the standard options plus @extra (NULL-terminated):
 * 0 once it serves; -1 if it did not start (dh.start_status: how it exited).
 */
static inline int dh_start_args(const char *const *extra)
{
	int ret = dth_start(&dh, extra);

	if (ret) {
		fprintf(stderr, "daemon did not start (status %d): %s\n", dh.start_status,
			strerror(-ret));
		return -1;
	}
	return 0;
}

static inline int dh_start(void)
{
	return dh_start_args(NULL);
}

/* Run the daemon with exactly these arguments (NULL-terminated) to completion: its exit status. */
static inline int dh_run_wait(const char *const *args)
{
	int ret = dth_run(&dh, args);

	return ret < 0 ? -1 : ret;
}

/* Send @sig (0: none) and reap: the exit status (or 128 + signal). */
static inline int dh_stop(int sig)
{
	return dth_stop(&dh, sig);
}

/* ---- files ---- */

static inline char *dh_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap + 1);

	if (!buf)
		exit(2);
	if (!f) {
		buf[0] = '\0';
		return buf;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				exit(2);
		}
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static inline bool dh_log_has(const char *needle)
{
	char *s = dh_read_file(dh.log);
	bool found = strstr(s, needle) != NULL;

	free(s);
	return found;
}

static inline unsigned dh_log_count(const char *needle)
{
	char *s = dh_read_file(dh.log), *p = s;
	unsigned n = 0;

	while ((p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	free(s);
	return n;
}

static inline void dh_flush_clear(void)
{
	if (truncate(dh.flush_log, 0) && errno != ENOENT)
		perror("truncate");
}

/* Count flush-log lines "REGION OFF LEN KIND" matching (NULL/-1 = any). */
static inline unsigned dh_flush_count(const char *region, int64_t off, int64_t len,
				      const char *kind)
{
	char *s = dh_read_file(dh.flush_log), *line, *save = NULL;
	unsigned n = 0;

	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], k[16];
		unsigned long long o, l;

		if (sscanf(line, "%127s %llu %llu %15s", name, &o, &l, k) != 4)
			continue;
		if ((!region || !strcmp(region, name)) && (off < 0 || (uint64_t)off == o) &&
		    (len < 0 || (uint64_t)len == l) && (!kind || !strcmp(kind, k)))
			n++;
	}
	free(s);
	return n;
}

/* LOG of @region: the client's shared dirty log, mapped at *@base (*@len bytes) and attached. */
static inline int dh_log_of(struct dh_conn *c, uint32_t region, struct dt_dlog *l, void **base,
			    size_t *len)
{
	struct dt_msg req, rep;
	size_t n;
	ssize_t got;
	int fd = -1;

	dt_proto_init_request(&req, DT_OP_LOG, ++c->id);
	req.log_req.region = region;
	if (dt_proto_encode(&req, c->out, sizeof(c->out), &n) ||
	    dt_proto_send(c->fd, c->out, n, -1) < 0)
		return -1;
	got = dt_proto_recv(c->fd, c->buf, sizeof(c->buf), &fd);
	if (got <= 0 || dt_proto_decode(c->buf, (size_t)got, &rep) || rep.status || fd < 0)
		return -1;
	*len = rep.log_rep.file_size;
	*base = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (*base == MAP_FAILED)
		return -1;
	return dt_dlog_attach(l, *base, *len, rep.log_rep.npages);
}

/*
 * Pages [0, @npages) of @region the flush log shows flushed (range lines,
 * or a full flush): @flushed[p] set to 1.
 */
static inline void dh_flushed_pages(const char *region, uint8_t *flushed, unsigned npages)
{
	char *s = dh_read_file(dh.flush_log), *line, *save = NULL;

	memset(flushed, 0, npages);
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], k[16];
		unsigned long long o, n;

		if (sscanf(line, "%127s %llu %llu %15s", name, &o, &n, k) != 4 ||
		    strcmp(name, region))
			continue;
		if (!strcmp(k, "full"))
			memset(flushed, 1, npages);
		else if (!strcmp(k, "range"))
			for (uint64_t p = o / 4096; p < (o + n + 4095) / 4096 && p < npages; p++)
				flushed[p] = 1;
	}
	free(s);
}

/* The clients' shared dirty logs (not the daemon's own) in <run>/logs. */
static inline unsigned dh_client_logs(void)
{
	char dir[PATH_MAX];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/logs", dh.run);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strchr(de->d_name, '@') && !strstr(de->d_name, "@daemon.log");
	closedir(d);
	return n;
}

/* Wait (up to 2 s) until no client log is left (their ends written back): how many are. */
static inline unsigned dh_wait_no_client_logs(void)
{
	for (unsigned i = 0; i < 2000 && dh_client_logs(); i++)
		dh_sleep_ms(1);
	return dh_client_logs();
}

/* ---- protocol ---- */

static inline struct dh_conn *dh_connect(void)
{
	struct dh_conn *c = calloc(1, sizeof(*c));

	if (!c)
		exit(2);
	c->fd = dh_try_connect(dh.sock);
	if (c->fd < 0) {
		fprintf(stderr, "connect %s: %s\n", dh.sock, strerror(-c->fd));
		free(c);
		return NULL;
	}
	return c;
}

static inline void dh_close(struct dh_conn *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

/* Receive one reply into c->buf and decode it; a negative errno on failure. */
static inline int dh_recv(struct dh_conn *c, struct dt_msg *rep)
{
	ssize_t n = dt_proto_recv(c->fd, c->buf, sizeof(c->buf), NULL);

	if (n <= 0)
		return n ? (int)n : -ECONNRESET;
	return dt_proto_decode(c->buf, (size_t)n, rep);
}

/* Send a request (with an fd, or -1), wait for the reply: its status, or a transport error. */
static inline int dh_call_fd(struct dh_conn *c, struct dt_msg *req, struct dt_msg *rep, int fd)
{
	size_t len;
	int ret;

	req->id = ++c->id;
	ret = dt_proto_encode(req, c->out, sizeof(c->out), &len);
	if (ret)
		return ret;
	if (dt_proto_send(c->fd, c->out, len, fd) < 0)
		return -EPIPE;
	ret = dh_recv(c, rep);
	if (ret)
		return -1000 + ret; /* transport/decoding errors are < -1000 */
	if (rep->id != req->id || rep->op != req->op || !(rep->flags & DT_PROTO_F_REPLY))
		return -2000;
	return rep->status;
}

static inline int dh_call(struct dh_conn *c, struct dt_msg *req, struct dt_msg *rep)
{
	return dh_call_fd(c, req, rep, -1);
}

static inline int dh_hello(struct dh_conn *c, struct dt_msg *rep)
{
	struct dt_msg req, tmp;

	dt_proto_init_request(&req, DT_OP_HELLO, 0);
	req.hello_req.min_version = 1;
	req.hello_req.max_version = DT_PROTO_VERSION;
	return dh_call(c, &req, rep ? rep : &tmp);
}

static inline struct dh_conn *dh_open(void)
{
	struct dh_conn *c = dh_connect();

	if (c && dh_hello(c, NULL)) {
		dh_close(c);
		return NULL;
	}
	return c;
}

static inline int dh_attach(struct dh_conn *c, const char *name, int fd, struct dt_msg *rep)
{
	struct dt_msg req, tmp;

	dt_proto_init_request(&req, DT_OP_ATTACH, 0);
	req.attach_req.mode = fd >= 0 ? DT_ATTACH_FD : DT_ATTACH_NAME;
	if (fd < 0)
		snprintf(req.attach_req.name, sizeof(req.attach_req.name), "%s", name);
	return dh_call_fd(c, &req, rep ? rep : &tmp, fd);
}

/*
 * The STATS record of region @id, asked in @version (0: the newest the
 * harness speaks), in @out.  Return: 0, a negative errno, or -EBADMSG for a
 * reply that is not that region's one record.
 */
static inline int dh_stats(struct dh_conn *c, uint32_t id, unsigned version,
			   struct dt_proto_region_stats *out)
{
	struct dt_msg req, rep;
	int ret;

	dt_proto_init_request(&req, DT_OP_STATS, 0);
	if (version)
		req.version = (uint8_t)version;
	req.stats_req.region = id;
	ret = dh_call(c, &req, &rep);
	if (ret)
		return ret;
	if (rep.stats_rep.count != 1 || rep.stats_rep.version != req.version)
		return -EBADMSG;
	dt_proto_region_stats_at(&rep.stats_rep, 0, out);
	return out->id == id ? 0 : -EBADMSG;
}

/* The id of a region by name (REGIONS), or 0. */
static inline uint32_t dh_region_id(struct dh_conn *c, const char *name)
{
	struct dt_msg req, rep;
	struct dt_proto_region r;
	uint32_t i;

	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	if (dh_call(c, &req, &rep))
		return 0;
	for (i = 0; i < rep.regions_rep.count; i++) {
		dt_proto_region_at(&rep.regions_rep, i, &r);
		if (!strcmp(r.name, name))
			return r.id;
	}
	return 0;
}

static inline int dh_fault(struct dh_conn *c, uint32_t region, uint64_t off, unsigned order,
			   bool write, struct dt_msg *rep)
{
	struct dt_msg req, tmp;

	dt_proto_init_request(&req, DT_OP_FAULT, 0);
	req.fault_req.region = region;
	req.fault_req.order = (uint8_t)order;
	req.fault_req.flags = write ? DT_FAULT_REQ_WRITE : 0;
	req.fault_req.offset = off;
	return dh_call(c, &req, rep ? rep : &tmp);
}

static inline int dh_dirty(struct dh_conn *c, uint32_t region, const struct dt_proto_range *r,
			   uint32_t n, struct dt_msg *rep)
{
	struct dt_msg req, tmp;

	dt_proto_init_request(&req, DT_OP_DIRTY, 0);
	req.dirty_req.region = region;
	req.dirty_req.count = n;
	req.dirty_req.ranges = r;
	return dh_call(c, &req, rep ? rep : &tmp);
}

static inline int dh_dirty1(struct dh_conn *c, uint32_t region, uint64_t off, uint64_t len)
{
	struct dt_proto_range r = { .offset = off, .length = len };

	return dh_dirty(c, region, &r, 1, NULL);
}

static inline int dh_fsync(struct dh_conn *c, uint32_t region, uint32_t flags, uint64_t off,
			   uint64_t len, struct dt_msg *rep)
{
	struct dt_msg req, tmp;

	dt_proto_init_request(&req, DT_OP_FSYNC, 0);
	req.fsync_req.region = region;
	req.fsync_req.flags = flags;
	req.fsync_req.offset = off;
	req.fsync_req.length = len;
	return dh_call(c, &req, rep ? rep : &tmp);
}

static inline int dh_punch(struct dh_conn *c, uint32_t region, uint64_t off, uint64_t len)
{
	struct dt_msg req, rep;

	dt_proto_init_request(&req, DT_OP_PUNCH, 0);
	req.punch_req.region = region;
	req.punch_req.offset = off;
	req.punch_req.length = len;
	return dh_call(c, &req, &rep);
}

/* TRACK: @state (DT_TRACK_*) of @region on @c, @reason the errno of a refusal. */
static inline int dh_track(struct dh_conn *c, uint32_t region, uint32_t state, int32_t reason)
{
	struct dt_msg req, rep;

	dt_proto_init_request(&req, DT_OP_TRACK, 0);
	req.track_req.region = region;
	req.track_req.state = state;
	req.track_req.reason = reason;
	return dh_call(c, &req, &rep);
}

static inline int dh_query(struct dh_conn *c, uint32_t region, uint64_t off, struct dt_msg *rep)
{
	struct dt_msg req;

	dt_proto_init_request(&req, DT_OP_QUERY, 0);
	req.query_req.region = region;
	req.query_req.offset = off;
	return dh_call(c, &req, rep);
}

/* Whether the page at @off is tagged DIRTY (QUERY); -1 on error. */
static inline int dh_is_dirty(struct dh_conn *c, uint32_t region, uint64_t off)
{
	struct dt_msg rep;

	if (dh_query(c, region, off, &rep))
		return -1;
	return rep.query_rep.found && (rep.query_rep.entry.tags & DT_PROTO_TAG_DIRTY);
}

static inline double dh_scale(void)
{
	const char *s = getenv("DT_TEST_SCALE");
	double v = s ? atof(s) : 1.0;

	return v > 0 ? v : 1.0;
}

#endif /* DAEMON_HARNESS_H */
