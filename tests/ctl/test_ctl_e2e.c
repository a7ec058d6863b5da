// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_ctl_e2e.c - daxtrackctl end to end: starts the real daxtrackd on a
 * private socket with two file-backed regions in a mkdtemp() directory,
 * gives it entries (faults and dirty ranges, through the wire protocol),
 * then runs the real daxtrackctl and checks every subcommand's human and
 * JSON output (parsed with json-c), the exit codes, the not-running and
 * permission-denied messages, suffix errors, units, plurals, widths, the
 * `dirty` command and the Prometheus format; then once more with a
 * bad range injected into r2 (--inject-badblock), the bad blocks, bad bytes,
 * refused requests and namespace match of `regions` and `stats`.  The
 * daemon harness (tests/harness/) runs the daemon and always kills and
 * reaps it.
 *
 * Last, dt-example on the second daemon's r1: its records at 2 MiB boundaries
 * are 2 MiB entries where the region allows PMD, and it says which are; and
 * on a third daemon whose regions are pmem (PMEM_IS_PMEM_FORCE=1), through
 * the fast path and through the socket, it leaves nothing dirty.  On the
 * first daemon, pages marked in a client's shared dirty log are dirty to
 * status and stats as to list --dirty.
 *
 * usage: test_ctl_e2e DAXTRACKCTL DAXTRACKD DT_EXAMPLE
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include <daxtrack/client.h>
#include <daxtrack/proto.h>

#include "dt_test.h"
#include "harness.h"

DT_TEST_DEFINE("test_ctl_e2e");

#define MiB (1ULL << 20)
#define NOBODY 65534

static const char *ctl_bin, *example_bin, *dir, *sock;
static char r1_path[128], r2_path[128];
static struct dth harness; /* the daemon, its directory (dir) and socket (sock) */

/* ---- the daemon ---------------------------------------------------------- */

static void set_sun(struct sockaddr_un *sun, const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(sun->sun_path))
		n = sizeof(sun->sun_path) - 1;
	memcpy(sun->sun_path, path, n);
	sun->sun_path[n] = '\0';
}

static int conn_open(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	set_sun(&sun, path);
	if (s < 0 || connect(s, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

static unsigned char msgbuf[DT_PROTO_MAX_MSG];
static uint32_t next_id = 1;

/* One request and its reply; returns the status (or a transport error). */
static int call(int s, struct dt_msg *req, int fd, struct dt_msg *rep)
{
	size_t len;
	ssize_t n;
	int err;

	req->id = next_id++;
	err = dt_proto_encode(req, msgbuf, sizeof(msgbuf), &len);
	if (err)
		return err;
	n = dt_proto_send(s, msgbuf, len, fd);
	if (n < 0)
		return (int)n;
	n = dt_proto_recv(s, msgbuf, sizeof(msgbuf), NULL);
	if (n <= 0)
		return n ? (int)n : -ECONNRESET;
	err = dt_proto_decode(msgbuf, (size_t)n, rep);
	return err ? err : rep->status;
}

static int hello(int s)
{
	struct dt_msg req, rep;

	dt_proto_init_request(&req, DT_OP_HELLO, 0);
	req.hello_req.min_version = 1;
	req.hello_req.max_version = DT_PROTO_VERSION;
	return call(s, &req, -1, &rep);
}

/* Start the daemon; @inject: an --inject-badblock argument, or NULL. */
static void start_daemon(const char *inject)
{
	static const struct dth_region regions[] = {
		{ .name = "r1", .size = "64M", .path = r1_path },
		{ .name = "r2", .size = "32M", .path = r2_path },
	};
	const char *const extra[] = { "--inject-badblock", inject, NULL };
	int ret, s;

	ret = dth_config(&harness, "socket_mode = 0666\nlog_level = err\n", regions, 2, NULL);
	if (!ret)
		ret = dth_start(&harness, inject ? extra : NULL);
	/* It accepts connections: it must answer HELLO. */
	s = ret ? -1 : conn_open(sock);
	if (s < 0 || hello(s)) {
		fprintf(stderr, "daxtrackd did not start (%s); see %s\n",
			ret ? strerror(-ret) : "no HELLO", harness.log);
		exit(1);
	}
	close(s);
}

static void stop_daemon(void)
{
	dth_stop(&harness, SIGTERM);
}

/* ---- giving the daemon entries ------------------------------------------- */

static uint32_t attach_rw(int s, const char *path)
{
	struct dt_msg req, rep;
	int fd = open(path, O_RDWR | O_CLOEXEC), err;

	dt_proto_init_request(&req, DT_OP_ATTACH, 0);
	req.attach_req.mode = DT_ATTACH_FD;
	err = call(s, &req, fd, &rep);
	close(fd);
	dt_test_ctx("attach %s: %d", path, err);
	CHECK_EQ(err, 0);
	CHECK(rep.attach_rep.access & DT_ACCESS_WRITE);
	return rep.attach_rep.region;
}

/* A FAULT that must answer @want. */
static void fault_expect(int s, uint32_t region, uint64_t offset, unsigned order, bool write,
			 int want)
{
	struct dt_msg req, rep;
	int err;

	dt_proto_init_request(&req, DT_OP_FAULT, 0);
	req.fault_req.region = region;
	req.fault_req.order = (uint8_t)order;
	req.fault_req.flags = write ? DT_FAULT_REQ_WRITE : 0;
	req.fault_req.offset = offset;
	err = call(s, &req, -1, &rep);
	dt_test_ctx("fault %#llx order %u: %d", (unsigned long long)offset, order, err);
	CHECK_EQ(err, want);
}

static void fault(int s, uint32_t region, uint64_t offset, unsigned order, bool write)
{
	fault_expect(s, region, offset, order, write, 0);
}

/* How many persistent memory namespaces the daemon knows (NAMESPACES), or -1. */
static int daemon_namespaces(void)
{
	struct dt_msg req, rep;
	int s = conn_open(sock), n = -1;

	if (s >= 0 && !hello(s)) {
		dt_proto_init_request(&req, DT_OP_NAMESPACES, 0);
		if (!call(s, &req, -1, &rep))
			n = (int)rep.namespaces_rep.count;
	}
	if (s >= 0)
		close(s);
	return n;
}

static void dirty(int s, uint32_t region, uint64_t offset, uint64_t length)
{
	struct dt_proto_range r = { .offset = offset, .length = length };
	struct dt_msg req, rep;
	int err;

	dt_proto_init_request(&req, DT_OP_DIRTY, 0);
	req.dirty_req.region = region;
	req.dirty_req.count = 1;
	req.dirty_req.ranges = &r;
	err = call(s, &req, -1, &rep);
	dt_test_ctx("dirty %#llx+%llu: %d", (unsigned long long)offset,
		    (unsigned long long)length, err);
	CHECK_EQ(err, 0);
}

#define R2_ENTRIES 4500	/* more than one LIST page (the daemon's max_list: 4096) */

/* r1: 4K at 0 (dirty), 2M at 2M (dirty), 4K at 8K (clean); r2: R2_ENTRIES pages. */
static void populate(void)
{
	int s = conn_open(sock), i;
	uint32_t r1, r2;

	CHECK(s >= 0);
	CHECK_EQ(hello(s), 0);
	r1 = attach_rw(s, r1_path);
	fault(s, r1, 0, 0, true);
	fault(s, r1, 2 * MiB + 0x1234, 9, true);
	fault(s, r1, 8192, 0, false);
	dirty(s, r1, 0, 4096);
	dirty(s, r1, 2 * MiB, 4096);
	r2 = attach_rw(s, r2_path);
	for (i = 0; i < R2_ENTRIES; i++)
		fault(s, r2, (uint64_t)i * 4096, 0, false);
	close(s);
}

/* ---- running daxtrackctl ------------------------------------------------- */

struct run {
	int code;		/* exit status, or 128 + signal */
	char *out;
	char *err;
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, len = 0, n;
	char *buf = malloc(cap);

	while (f && buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	if (f)
		fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static void run_prog(struct run *r, const char *prog, int uid, const char *env_socket,
		     const char *const *args);

/* Run daxtrackctl ARGS... (NULL-terminated) as @uid (-1: ourselves), with
 * DAXTRACK_SOCKET set to @env_socket (NULL: unset). */
static void run_v(struct run *r, int uid, const char *env_socket, const char *const *args)
{
	run_prog(r, ctl_bin, uid, env_socket, args);
}

/* Run @prog ARGS... as run_v() does. */
static void run_prog(struct run *r, const char *prog, int uid, const char *env_socket,
		     const char *const *args)
{
	char outp[160], errp[160];
	const char *argv[32];
	int n = 0, status;
	pid_t pid;

	argv[n++] = prog;
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	snprintf(outp, sizeof(outp), "%s/out", dir);
	snprintf(errp, sizeof(errp), "%s/err", dir);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		if (env_socket)
			setenv("DAXTRACK_SOCKET", env_socket, 1);
		else
			unsetenv("DAXTRACK_SOCKET");
		if (uid >= 0 && (setgid((gid_t)uid) || setuid((uid_t)uid)))
			_exit(126);
		execv(prog, (char *const *)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->out = slurp(outp);
	r->err = slurp(errp);
}

#define RUN(r, ...) run_v((r), -1, NULL, (const char *const[]){ __VA_ARGS__, NULL })
/* With -s SOCKET first. */
#define CTL(r, ...) RUN((r), "-s", sock, __VA_ARGS__)

static bool has(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

/* @s has a match of the extended regular expression @re. */
static bool matches(const char *s, const char *re)
{
	regex_t r;
	bool ok;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return false;
	ok = s && !regexec(&r, s, 0, NULL, 0);
	regfree(&r);
	if (!ok)
		fprintf(stderr, "     no match of /%s/ in:\n%s\n", re, s);
	return ok;
}

#define CHECK_RUN(r, want_code) ({ \
	bool _run_ok = CHECK_EQ((r)->code, (want_code)); \
	if (!_run_ok) \
		fprintf(stderr, "     stdout: %s\n     stderr: %s\n", (r)->out, (r)->err); \
	_run_ok; })

/* ---- JSON helpers -------------------------------------------------------- */

static struct json_object *parse(const char *text)
{
	struct json_object *o = json_tokener_parse(text ? text : "");

	if (!CHECK(o))
		fprintf(stderr, "     not JSON: %s\n", text);
	return o;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static bool is_type(struct json_object *o, const char *key, json_type t)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return false;
	return json_object_is_type(v, t);
}

static uint64_t get_u64(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v ? json_object_get_uint64(v) : UINT64_MAX;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static bool array_has(struct json_object *a, const char *s)
{
	size_t i;

	if (!a || !json_object_is_type(a, json_type_array))
		return false;
	for (i = 0; i < json_object_array_length(a); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s))
			return true;
	return false;
}

static struct json_object *find_named(struct json_object *a, const char *name)
{
	size_t i;

	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *o = json_object_array_get_idx(a, i);

		if (!strcmp(get_str(o, "name"), name))
			return o;
	}
	return NULL;
}

/* ---- table rows ---------------------------------------------------------- */

/* The row of @text whose first cell is @first, its cells joined by one space. */
static bool table_row(const char *text, const char *first, char *out, size_t size)
{
	size_t flen = strlen(first), n = 0;
	const char *p = text;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, first, flen) || (p[flen] != ' ' && p[flen] != '\n'))
			continue;
		for (; *p && *p != '\n' && n + 1 < size; p++) {
			if (*p == ' ' && (!n || out[n - 1] == ' '))
				continue;
			out[n++] = *p;
		}
		while (n && out[n - 1] == ' ')
			n--;
		out[n] = '\0';
		return true;
	}
	return false;
}

static bool row_is(const char *text, const char *first, const char *want)
{
	char row[1024];

	if (!table_row(text, first, row, sizeof(row)))
		return false;
	if (strcmp(row, want))
		fprintf(stderr, "     row: \"%s\"\n     want \"%s\"\n", row, want);
	return !strcmp(row, want);
}

/* The columns BADBLOCKS .. PATH of a `regions -v` row of a file region. */
static void check_regions_row(const char *text, const char *name, const char *nbad,
			      const char *bad_bytes, const char *path)
{
	char row[1024], want[512];
	const char *p;
	int i;

	dt_test_ctx("regions row %s", name);
	if (!CHECK(table_row(text, name, row, sizeof(row))))
		return;
	for (i = 0, p = row; i < 11 && p; i++) /* NAME .. NUMA; SIZE, SPAN "64 MiB" */
		p = strchr(p, ' '), p = p ? p + 1 : NULL;
	snprintf(want, sizeof(want), "%s %s %s - - - - - %s", nbad, bad_bytes,
		 daemon_namespaces() ? "none" : "no-namespaces", path);
	if (!CHECK(p && !strcmp(p, want)))
		fprintf(stderr, "     row: \"%s\"\n     want ... \"%s\"\n", row, want);
}

/* Every line of @text fits @max columns. */
static void check_width(const char *text, size_t max)
{
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (!CHECK(len <= max))
			fprintf(stderr, "     %zu columns: \"%.*s\"\n", len, (int)len, p);
		p = nl ? nl + 1 : NULL;
	}
}

/* ---- the subcommands ----------------------------------------------------- */

/* The namespace and bad-block fields of a region object of a file without bad blocks. */
static void check_region_ns(struct json_object *r, const char *path, uint64_t nbad,
			    uint64_t bad_bytes)
{
	int nns = daemon_namespaces();
	struct stat st;

	CHECK_EQ(get_u64(r, "badblocks"), nbad);
	CHECK_EQ(get_u64(r, "bad_bytes"), bad_bytes);
	CHECK(nns >= 0);
	if (nns == 0)
		CHECK(!strcmp(get_str(r, "ns_match"), "no-namespaces"));
	else
		CHECK(has("none block partition", get_str(r, "ns_match")) &&
		      *get_str(r, "ns_match"));
	if (!strcmp(get_str(r, "ns_match"), "none") ||
	    !strcmp(get_str(r, "ns_match"), "no-namespaces")) {
		CHECK(is_type(r, "namespace", json_type_null));
		CHECK(is_type(r, "ns_region", json_type_null));
		CHECK(is_type(r, "ns_device", json_type_null));
		CHECK(is_type(r, "ns_mode", json_type_null));
	}
	if (CHECK(!stat(path, &st))) {
		CHECK_EQ(get_u64(r, "dev_major"), major(st.st_dev));
		CHECK_EQ(get_u64(r, "dev_minor"), minor(st.st_dev));
	}
}

static void check_region_object(struct json_object *r, const char *name, const char *path,
				uint64_t size)
{
	dt_test_ctx("region object %s", name);
	CHECK(r);
	CHECK(!strcmp(get_str(r, "name"), name));
	CHECK(!strcmp(get_str(r, "path"), path));
	CHECK(!strcmp(get_str(r, "type"), "file"));
	CHECK_EQ(get_u64(r, "size"), size);
	CHECK_EQ(get_u64(r, "span"), size);	/* a size = given: it stays that size */
	CHECK(is_type(r, "grows", json_type_boolean));
	CHECK(!json_object_get_boolean(get(r, "grows")));
	CHECK(is_type(r, "pmem", json_type_boolean));
	CHECK(is_type(r, "eadr", json_type_boolean));
	CHECK(is_type(r, "pmd", json_type_boolean));
	CHECK(is_type(r, "default", json_type_boolean));
	CHECK(!json_object_get_boolean(get(r, "default")));
	CHECK(has("pmem_flush fence msync", get_str(r, "flush")) && *get_str(r, "flush"));
	CHECK(is_type(r, "numa_node", json_type_int));
	check_region_ns(r, path, 0, 0);
}

static void test_status(void)
{
	struct json_object *o, *r1, *t;
	struct run r;

	dt_test_ctx("status");
	CTL(&r, "status");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "daxtrackd " DT_VERSION " (protocol 5), pid "));
	CHECK(has(r.out, "socket "));
	CHECK(has(r.out, sock));
	CHECK(row_is(r.out, "NAME",
		     "NAME TYPE SIZE PMEM EADR PMD FLUSH ENTRIES DIRTY DIRTY_BYTES"));
	CHECK(has(r.out, "\nr1    file  64 MiB"));
	CHECK(has(r.out, "\nr2    file  32 MiB"));
	/* Every size with its unit, plurals agreeing. */
	CHECK(has(r.out, "\ntotal: 2 regions, 96 MiB, 4503 entries, 2 dirty (2052 KiB); 0 fsyncs, "
			 "0 B flushed\n"));
	CHECK(has(r.out, " (0 errors), "));
	run_free(&r);

	CTL(&r, "status", "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	dt_test_ctx("status --json");
	CHECK(!strcmp(get_str(o, "version"), DT_VERSION));
	CHECK_EQ(get_u64(o, "protocol"), DT_PROTO_VERSION);
	CHECK_EQ(get_u64(o, "pid"), harness.pid);
	CHECK(!strcmp(get_str(o, "socket"), sock));
	CHECK(get_u64(o, "clients") >= 1);
	CHECK(get_u64(o, "requests") >= 1);
	CHECK(is_type(o, "start_time_seconds", json_type_int));
	CHECK(get_u64(o, "start_time_seconds") <= (uint64_t)time(NULL));
	CHECK(is_type(o, "uptime_seconds", json_type_int));
	CHECK_EQ(json_object_array_length(get(o, "regions")), 2);
	r1 = find_named(get(o, "regions"), "r1");
	check_region_object(r1, "r1", r1_path, 64 * MiB);
	dt_test_ctx("status --json r1 counters");
	CHECK_EQ(get_u64(r1, "entries"), 3);
	CHECK_EQ(get_u64(r1, "dirty_entries"), 2);
	CHECK_EQ(get_u64(r1, "dirty_bytes"), 4096 + 2 * MiB);
	t = get(o, "totals");
	CHECK_EQ(get_u64(t, "regions"), 2);
	CHECK_EQ(get_u64(t, "size"), 96 * MiB);
	CHECK_EQ(get_u64(t, "entries"), 3 + R2_ENTRIES);
	CHECK_EQ(get_u64(t, "dirty_entries"), 2);
	CHECK(is_type(t, "fsyncs", json_type_int));
	CHECK(is_type(t, "flushed_bytes", json_type_int));
	json_object_put(o);
	run_free(&r);
}

static void test_regions(void)
{
	struct json_object *o;
	struct run r;

	dt_test_ctx("regions -v");
	CTL(&r, "regions", "-v");
	CHECK_RUN(&r, 0);
	CHECK(row_is(r.out, "NAME", "NAME TYPE SIZE SPAN PMEM EADR PMD FLUSH NUMA BADBLOCKS BAD_BYTES "
		     "MATCH NAMESPACE DEVICE BACKING CXL_REGION MEMDEVS PATH"));
	check_regions_row(r.out, "r1", "0", "0 B", r1_path);
	check_regions_row(r.out, "r2", "0", "0 B", r2_path);
	CHECK(has(r.out, r1_path));
	CHECK(has(r.out, "\nr2    file  32 MiB"));
	run_free(&r);
	CTL(&r, "regions", "--verbose");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "BAD_BYTES"));
	run_free(&r);

	dt_test_ctx("regions");
	CTL(&r, "regions");
	CHECK_RUN(&r, 0);
	CHECK(row_is(r.out, "NAME", "NAME TYPE SIZE PMEM PMD FLUSH BADBLOCKS NAMESPACE PATH"));
	CHECK(has(r.out, r1_path));
	CHECK(has(r.out, "\nr2    file  32 MiB  no    "));
	check_width(r.out, 100);
	run_free(&r);

	RUN(&r, "regions", "--json", "--socket", sock);	/* global options after the command */
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(json_object_is_type(o, json_type_array));
	CHECK_EQ(json_object_array_length(o), 2);
	check_region_object(find_named(o, "r1"), "r1", r1_path, 64 * MiB);
	check_region_object(find_named(o, "r2"), "r2", r2_path, 32 * MiB);
	json_object_put(o);
	run_free(&r);
}

static void check_namespaces(const char *source, bool local)
{
	struct json_object *o, *a;
	struct run r;
	size_t n;

	dt_test_ctx("namespaces %s", source);
	if (local)
		RUN(&r, "-s", "/nonexistent/sock", "--json", "namespaces", "--local");
	else
		CTL(&r, "--json", "namespaces");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "source"), source));
	CHECK(is_type(o, "ndctl", json_type_boolean));
	a = get(o, "namespaces");
	CHECK(a && json_object_is_type(a, json_type_array));
	n = a ? json_object_array_length(a) : 0;
	if (n) {
		struct json_object *ns = json_object_array_get_idx(a, 0);

		CHECK(*get_str(ns, "bus") && *get_str(ns, "dev"));
		CHECK(is_type(ns, "size", json_type_int));
		CHECK(is_type(ns, "memdevs", json_type_array));
	}
	json_object_put(o);
	run_free(&r);

	if (local)
		RUN(&r, "-s", "/nonexistent/sock", "namespaces", "--local");
	else
		CTL(&r, "namespaces");
	CHECK_RUN(&r, 0);
	if (n)
		CHECK(has(r.out, "BUS  ") && has(r.out, "NAMESPACE"));
	else
		CHECK(has(r.out, "no persistent memory namespaces found") ||
		      has(r.out, "without libndctl"));
	run_free(&r);
}

/* `namespaces --cxl`: the memdevs, none on the build host (or why not). */
static void check_cxl(const char *source, bool local)
{
	struct json_object *o, *a;
	struct run r;

	dt_test_ctx("namespaces --cxl %s", source);
	if (local)
		RUN(&r, "-s", "/nonexistent/sock", "--json", "namespaces", "--local", "--cxl");
	else
		CTL(&r, "--json", "namespaces", "--cxl");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "source"), source));
	CHECK(is_type(o, "cxl", json_type_boolean));
	a = get(o, "memdevs");
	CHECK(a && json_object_is_type(a, json_type_array));
	if (a && !json_object_array_length(a) && !json_object_get_boolean(get(o, "cxl")))
		CHECK(*get_str(o, "note"));
	json_object_put(o);
	run_free(&r);

	if (local)
		RUN(&r, "-s", "/nonexistent/sock", "namespaces", "--cxl", "--local");
	else
		CTL(&r, "namespaces", "--cxl");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "MEMDEV ") || has(r.out, "no CXL memdevs found") || has(r.out, "libcxl"));
	run_free(&r);
}

static void test_namespaces(void)
{
	check_namespaces("daemon", false);
	check_namespaces("local", true);
	check_cxl("daemon", false);
	check_cxl("local", true);
}

/* `list --json` of @args: checks the schema; returns the entries (put them). */
static struct json_object *list_json(const char *const *args)
{
	const char *argv[16] = { "-s", sock, "--json", "list" };
	struct json_object *o;
	struct run r;
	size_t i, n = 4, lines = 0;

	while (*args)
		argv[n++] = *args++;
	argv[n] = NULL;
	run_v(&r, -1, NULL, argv);
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(o && json_object_is_type(o, json_type_array));
	n = o ? json_object_array_length(o) : 0;
	/* one entry on each line: "[", n lines, "]" */
	for (i = 0; r.out && r.out[i]; i++)
		lines += r.out[i] == '\n';
	CHECK_EQ(lines, n ? n + 2 : 1);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(o, i);

		CHECK(is_type(e, "offset", json_type_int) && is_type(e, "size", json_type_int));
		CHECK_EQ(get_u64(e, "size"), 4096ULL << get_u64(e, "order"));
		CHECK(is_type(e, "flags", json_type_array) && is_type(e, "tags", json_type_array));
		CHECK(is_type(e, "locked", json_type_boolean));
		CHECK(is_type(e, "sector", json_type_int) || is_type(e, "sector", json_type_null));
		if (i)
			CHECK(get_u64(e, "offset") > get_u64(json_object_array_get_idx(o, i - 1),
							     "offset"));
	}
	run_free(&r);
	return o;
}

static void test_list(void)
{
	struct json_object *o, *e;
	struct run r;
	size_t i;

	dt_test_ctx("list r1");
	o = list_json((const char *[]){ "r1", NULL });
	CHECK_EQ(json_object_array_length(o), 3);
	e = json_object_array_get_idx(o, 0);
	CHECK_EQ(get_u64(e, "offset"), 0);
	CHECK_EQ(get_u64(e, "size"), 4096);
	CHECK(array_has(get(e, "tags"), "dirty"));
	e = json_object_array_get_idx(o, 1);
	CHECK_EQ(get_u64(e, "offset"), 8192);
	CHECK(!array_has(get(e, "tags"), "dirty"));
	e = json_object_array_get_idx(o, 2);
	CHECK_EQ(get_u64(e, "offset"), 2 * MiB);
	CHECK_EQ(get_u64(e, "order"), 9);
	CHECK(array_has(get(e, "flags"), "pmd"));
	CHECK(array_has(get(e, "tags"), "dirty"));
	json_object_put(o);

	dt_test_ctx("list --dirty r1");
	o = list_json((const char *[]){ "--dirty", "r1", NULL });
	CHECK_EQ(json_object_array_length(o), 2);
	CHECK_EQ(get_u64(json_object_array_get_idx(o, 1), "offset"), 2 * MiB);
	json_object_put(o);

	dt_test_ctx("list --range");
	o = list_json((const char *[]){ "--range", "0x2000-2M", "r1", NULL });
	CHECK_EQ(json_object_array_length(o), 1);
	CHECK_EQ(get_u64(json_object_array_get_idx(o, 0), "offset"), 8192);
	json_object_put(o);
	o = list_json((const char *[]){ "--range", "3M+4K", "r1", NULL });	/* inside the 2M entry */
	CHECK_EQ(json_object_array_length(o), 1);
	CHECK_EQ(get_u64(json_object_array_get_idx(o, 0), "offset"), 2 * MiB);
	json_object_put(o);
	o = list_json((const char *[]){ "--range", "16M-32M", "r1", NULL });
	CHECK_EQ(json_object_array_length(o), 0);
	json_object_put(o);

	dt_test_ctx("list r2: several LIST pages");
	o = list_json((const char *[]){ "r2", NULL });
	CHECK_EQ(json_object_array_length(o), R2_ENTRIES);
	for (i = 0; i < json_object_array_length(o); i++)
		if (!CHECK_EQ(get_u64(json_object_array_get_idx(o, i), "offset"), i * 4096))
			break;
	json_object_put(o);
	o = list_json((const char *[]){ "--limit", "4200", "r2", NULL });
	CHECK_EQ(json_object_array_length(o), 4200);
	json_object_put(o);
	o = list_json((const char *[]){ "--limit", "1", "--dirty", "r2", NULL });
	CHECK_EQ(json_object_array_length(o), 0);
	json_object_put(o);

	dt_test_ctx("list r1 (human)");
	CTL(&r, "list", "r1");
	CHECK_RUN(&r, 0);
	CHECK(!strncmp(r.out, "OFFSET          SIZE   SECTOR        FLAGS       TAGS           LOCKED\n",
		       70));
	CHECK(has(r.out, "\n0x0             4K     "));
	CHECK(has(r.out, "\n0x200000        2M     "));
	CHECK(has(r.out, "pmd         dirty          no\n"));
	CHECK(has(r.out, "\n0x2000          4K     "));
	run_free(&r);
	CTL(&r, "list", "--dirty", "--range", "0-4M", "r1");
	CHECK_RUN(&r, 0);
	CHECK(!has(r.out, "0x2000 "));
	CHECK(has(r.out, "0x200000"));
	run_free(&r);

	dt_test_ctx("list errors");
	CTL(&r, "list", "nosuch");
	CHECK_RUN(&r, 1);
	CHECK(!strcmp(r.err, "daxtrackctl: region \"nosuch\": no such region\n"));
	run_free(&r);
	CTL(&r, "list", "--range", "1G-2G", "r1");
	CHECK_RUN(&r, 1);
	CHECK(has(r.err, "Numerical result out of range"));
	run_free(&r);
	CTL(&r, "list");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "daxtrackctl: list: missing argument"));
	run_free(&r);
	CTL(&r, "list", "r1", "r2");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "unexpected argument 'r2'"));
	run_free(&r);
	CTL(&r, "list", "--limit", "0", "r1");
	CHECK_RUN(&r, 2);
	run_free(&r);
}

static void test_lookup(void)
{
	struct json_object *o, *e;
	struct run r;

	dt_test_ctx("lookup --json");
	CTL(&r, "--json", "lookup", "r1", "0x201234");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "region"), "r1"));
	CHECK_EQ(get_u64(o, "offset"), 0x201234);
	e = get(o, "entry");
	CHECK_EQ(get_u64(e, "offset"), 2 * MiB);
	CHECK_EQ(get_u64(e, "size"), 2 * MiB);
	CHECK(array_has(get(e, "flags"), "pmd"));
	json_object_put(o);
	run_free(&r);

	CTL(&r, "--json", "lookup", "r1", "60M");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(is_type(o, "entry", json_type_null));
	CHECK(get(o, "entry") == NULL && o && json_object_object_get_ex(o, "entry", NULL));
	json_object_put(o);
	run_free(&r);

	dt_test_ctx("lookup (human)");
	CTL(&r, "lookup", "r1", "8K");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "OFFSET ") && has(r.out, "\n0x2000          4K"));
	run_free(&r);
	CTL(&r, "lookup", "r1", "60M");
	CHECK_RUN(&r, 0);
	CHECK(!strcmp(r.out, "region \"r1\": 0x3c00000: no entry\n"));
	run_free(&r);

	dt_test_ctx("lookup errors");
	CTL(&r, "lookup", "r1", "1G");
	CHECK_RUN(&r, 1);
	CHECK(!strcmp(r.err, "daxtrackctl: region \"r1\": lookup: Numerical result out of range\n"));
	run_free(&r);
	CTL(&r, "lookup", "r1");
	CHECK_RUN(&r, 2);
	run_free(&r);
}

static void test_stats(void)
{
	struct json_object *o, *d, *r1;
	struct run r;

	dt_test_ctx("stats --json");
	CTL(&r, "stats", "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	d = get(o, "daemon");
	CHECK(get_u64(d, "requests") > 0);
	CHECK(get_u64(d, "clients") >= 1);
	CHECK(get_u64(get(d, "requests_by_op"), "HELLO") >= 1);
	CHECK(get_u64(get(d, "requests_by_op"), "FAULT") >= 3 + R2_ENTRIES);
	CHECK(is_type(get(d, "requests_by_op"), "DUMP", json_type_int));
	CHECK(is_type(d, "bad_messages", json_type_int));
	CHECK(is_type(d, "uptime_seconds", json_type_int));
	CHECK_EQ(json_object_array_length(get(o, "regions")), 2);
	r1 = find_named(get(o, "regions"), "r1");
	CHECK_EQ(get_u64(r1, "entries"), 3);
	CHECK_EQ(get_u64(r1, "entries_pte"), 2);
	CHECK_EQ(get_u64(r1, "entries_pmd"), 1);
	CHECK_EQ(get_u64(r1, "dirty_entries"), 2);
	CHECK_EQ(get_u64(r1, "dirty_bytes"), 4096 + 2 * MiB);
	CHECK_EQ(get_u64(r1, "faults"), 3);
	CHECK(get_u64(r1, "tree_nodes") >= 1);
	CHECK(is_type(r1, "lock_contended", json_type_int));
	CHECK(is_type(r1, "towrite_entries", json_type_int));
	CHECK_EQ(get_u64(r1, "badblocks"), 0);
	CHECK_EQ(get_u64(r1, "bad_bytes"), 0);
	CHECK_EQ(get_u64(r1, "bad_hits"), 0);
	CHECK_EQ(get_u64(r1, "truncations"), 0);
	CHECK_EQ(get_u64(r1, "truncated_dirty_bytes"), 0);
	CHECK_EQ(get_u64(r1, "sigbus"), 0);
	json_object_put(o);
	run_free(&r);

	CTL(&r, "stats", "--json", "r2");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK_EQ(json_object_array_length(get(o, "regions")), 1);
	CHECK_EQ(get_u64(find_named(get(o, "regions"), "r2"), "entries"), R2_ENTRIES);
	json_object_put(o);
	run_free(&r);

	dt_test_ctx("stats (human)");
	CTL(&r, "stats");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "daemon:\n") && has(r.out, "region \"r1\":\n"));
	CHECK(has(r.out, "  entries         3 (2 4K, 1 2M)\n"));
	CHECK(has(r.out, "  bad blocks      0 ranges, 0 B; 0 requests refused (EIO)\n"));
	CHECK(has(r.out, "  dirty           2 entries, 2052 KiB; 0 being flushed\n"));
	CHECK(has(r.out, "  truncations     0, 0 dirty pages lost (0 B), 0 SIGBUS in flushes\n"));
	CHECK(matches(r.out,
		      "\n  tree            [0-9]+ nodes, [0-9.]+ (B|KiB|MiB), height [0-9]+\n"));
	CHECK(matches(r.out, "\n  fsyncs          [0-9]+, [0-9]+ entries, [0-9]+ B flushed\n"));
	run_free(&r);
	CTL(&r, "stats", "nosuch");
	CHECK_RUN(&r, 1);
	run_free(&r);
}

/* Every line is a HELP, a TYPE or a sample of a metric TYPEd before. */
static void check_prometheus(const char *text, int min_lines)
{
	regex_t help, type, sample;
	char seen[4096] = " ", line[1024];
	const char *p = text;
	int lines = 0;

	regcomp(&help, "^# HELP (daxtrack_[a-z_]+) [^ ].*$", REG_EXTENDED);
	regcomp(&type, "^# TYPE (daxtrack_[a-z_]+) (gauge|counter)$", REG_EXTENDED);
	regcomp(&sample, "^(daxtrack_[a-z_]+)(\\{[a-z_]+=\"[^\"]*\"(,[a-z_]+=\"[^\"]*\")*\\})? "
		"[0-9]+$", REG_EXTENDED);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		regmatch_t m[2];
		char name[128];

		CHECK(nl);	/* every line ends with a newline */
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (nl ? 1 : 0);
		lines++;
		dt_test_ctx("prometheus line \"%s\"", line);
		if (!regexec(&type, line, 2, m, 0)) {
			snprintf(name, sizeof(name), " %.*s ", (int)(m[1].rm_eo - m[1].rm_so),
				 line + m[1].rm_so);
			CHECK(!strstr(seen, name));	/* one TYPE per metric */
			strncat(seen, name + 1, sizeof(seen) - strlen(seen) - 1);
			continue;
		}
		if (!regexec(&help, line, 0, NULL, 0))
			continue;
		if (!CHECK(!regexec(&sample, line, 2, m, 0)))
			continue;
		snprintf(name, sizeof(name), " %.*s ", (int)(m[1].rm_eo - m[1].rm_so),
			 line + m[1].rm_so);
		CHECK(strstr(seen, name));
	}
	CHECK(lines >= min_lines);
	regfree(&help);
	regfree(&type);
	regfree(&sample);
}

/* TRACK of @region on @s: @state, @reason the errno of a refusal. */
static void track(int s, uint32_t region, uint32_t state, int32_t reason)
{
	struct dt_msg req, rep;

	dt_proto_init_request(&req, DT_OP_TRACK, 0);
	req.track_req.region = region;
	req.track_req.state = state;
	req.track_req.reason = reason;
	CHECK_EQ(call(s, &req, -1, &rep), 0);
}

/* The daemon's count of tracked + refused clients (STATS on a new connection), or -1. */
static int64_t track_counts(void)
{
	struct dt_msg req, rep;
	int s = conn_open(sock);
	int64_t n = -1;

	if (s >= 0 && !hello(s)) {
		dt_proto_init_request(&req, DT_OP_STATS, 0);
		req.stats_req.region = DT_PROTO_ALL_REGIONS;
		if (!call(s, &req, -1, &rep))
			n = rep.stats_rep.clients_tracked + rep.stats_rep.clients_refused;
	}
	if (s >= 0)
		close(s);
	return n;
}

static void check_tracking_json(void)
{
	struct json_object *o, *x;
	struct run r;

	dt_test_ctx("tracking: status --json");
	CTL(&r, "status", "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK_EQ(get_u64(o, "clients_tracked"), 1);
	CHECK_EQ(get_u64(o, "clients_refused"), 1);
	x = find_named(get(o, "regions"), "r1");
	CHECK_EQ(get_u64(x, "clients_tracked"), 1);
	CHECK_EQ(get_u64(x, "clients_refused"), 0);
	x = find_named(get(o, "regions"), "r2");
	CHECK_EQ(get_u64(x, "clients_tracked"), 0);
	CHECK_EQ(get_u64(x, "clients_refused"), 1);
	json_object_put(o);
	run_free(&r);

	dt_test_ctx("tracking: stats --json");
	CTL(&r, "stats", "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK_EQ(get_u64(get(o, "daemon"), "clients_tracked"), 1);
	CHECK_EQ(get_u64(get(o, "daemon"), "clients_refused"), 1);
	CHECK(get_u64(get(get(o, "daemon"), "requests_by_op"), "TRACK") >= 3);
	CHECK_EQ(get_u64(find_named(get(o, "regions"), "r2"), "clients_refused"), 1);
	json_object_put(o);
	run_free(&r);
}

/*
 * Clients that track their stores, or were refused (TRACK): one tracks r1,
 * another was refused on r2 and tracks nothing: status, stats and the
 * Prometheus format count them; gone with their connections.
 */
static void test_tracking(void)
{
	int s1 = conn_open(sock), s2 = conn_open(sock);
	uint32_t r1, r2;
	struct run r;

	dt_test_ctx("tracking");
	if (!CHECK(s1 >= 0 && s2 >= 0) || !CHECK_EQ(hello(s1), 0) || !CHECK_EQ(hello(s2), 0))
		goto out;
	r1 = attach_rw(s1, r1_path);
	track(s1, r1, DT_TRACK_ON, 0);
	r2 = attach_rw(s2, r2_path);
	track(s2, r2, DT_TRACK_ON, 0);
	track(s2, r2, DT_TRACK_REFUSED, -EOPNOTSUPP);

	dt_test_ctx("tracking: status");
	CTL(&r, "status");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "\ntracking: 1 client tracked, 1 refused (their msyncs persist whole "
			 "ranges)\n"));
	CHECK(has(r.out, "\nregion \"r1\": 1 client tracked, 0 refused tracking\n"));
	CHECK(has(r.out, "\nregion \"r2\": 0 clients tracked, 1 refused tracking: msyncs "
			 "persist whole ranges\n"));
	run_free(&r);
	check_tracking_json();

	dt_test_ctx("tracking: stats");
	CTL(&r, "stats");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "daemon:\n") && has(r.out, " TRACK=3"));
	CHECK(has(r.out, "\n  tracking        1 client tracked, 1 refused\n"));
	CHECK(has(r.out, "\n  tracking        0 clients tracked, 1 refused\n"));
	run_free(&r);
	CTL(&r, "stats", "--prometheus");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "\n# TYPE daxtrack_clients_tracked gauge\ndaxtrack_clients_tracked 1\n"));
	CHECK(has(r.out, "\ndaxtrack_clients_refused 1\n"));
	CHECK(has(r.out, "\ndaxtrack_region_clients_tracked{region=\"r1\"} 1\n"));
	CHECK(has(r.out, "\ndaxtrack_region_clients_refused{region=\"r2\"} 1\n"));
	CHECK(has(r.out, "\ndaxtrack_requests_total{op=\"TRACK\"} 3\n"));
	run_free(&r);
out:
	if (s1 >= 0)
		close(s1);
	if (s2 >= 0)
		close(s2);
	dt_test_ctx("tracking: forgotten with the connections");
	for (int i = 0; i < 1000 && track_counts() != 0; i++)
		usleep(2000);
	CHECK_EQ(track_counts(), 0);
	CTL(&r, "status");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "\ntracking: 0 clients tracked, 0 refused\n"));
	CHECK(!has(r.out, "refused tracking"));
	run_free(&r);
}

static void test_prometheus(void)
{
	struct run r;

	dt_test_ctx("stats --prometheus");
	CTL(&r, "stats", "--prometheus");
	CHECK_RUN(&r, 0);
	check_prometheus(r.out, 60);
	dt_test_ctx("stats --prometheus values");
	CHECK(has(r.out, "\ndaxtrack_up 1\n"));
	CHECK(has(r.out, "\ndaxtrack_info{version=\"" DT_VERSION "\",protocol=\"5\"} 1\n"));
	CHECK(has(r.out, "\ndaxtrack_region_size_bytes{region=\"r1\"} 67108864\n"));
	CHECK(has(r.out, "\ndaxtrack_region_entries{region=\"r1\",size=\"2M\"} 1\n"));
	CHECK(has(r.out, "\ndaxtrack_region_entries{region=\"r1\",size=\"4K\"} 2\n"));
	CHECK(has(r.out, "\ndaxtrack_region_dirty_bytes{region=\"r1\"} 2101248\n"));
	CHECK(has(r.out, "\ndaxtrack_region_faults_total{region=\"r1\"} 3\n"));
	CHECK(has(r.out, "\ndaxtrack_region_pmem{region=\"r2\"} 0\n"));
	CHECK(has(r.out, "\n# TYPE daxtrack_requests_total counter\n"));
	CHECK(has(r.out, "\ndaxtrack_requests_total{op=\"HELLO\"} "));
	CHECK(has(r.out, "\n# TYPE daxtrack_region_flushed_bytes_total counter\n"));
	CHECK(has(r.out, "\n# TYPE daxtrack_region_lock_contended_total counter\n"));
	CHECK(has(r.out, "\n# TYPE daxtrack_clients gauge\n"));
	CHECK(has(r.out, "\n# TYPE daxtrack_region_bad_hits_total counter\n"));
	CHECK(has(r.out, "\ndaxtrack_region_badblocks{region=\"r1\"} 0\n"));
	CHECK(has(r.out, "\ndaxtrack_region_bad_bytes{region=\"r1\"} 0\n"));
	CHECK(has(r.out, "\ndaxtrack_region_bad_hits_total{region=\"r1\"} 0\n"));
	CHECK(has(r.out, "\n# TYPE daxtrack_region_deep_flush_cxl_total counter\n"));
	CHECK(has(r.out, "\ndaxtrack_region_deep_flush_cxl_total{region=\"r1\"} 0\n"));
	CHECK(has(r.out, "\n# TYPE daxtrack_cxl_memdev_dirty_shutdowns gauge\n"));
	run_free(&r);

	CTL(&r, "stats", "--prometheus", "r2");
	CHECK_RUN(&r, 0);
	check_prometheus(r.out, 40);
	CHECK(!has(r.out, "region=\"r1\""));
	CHECK(has(r.out, "region=\"r2\""));
	run_free(&r);

	CTL(&r, "stats", "--prometheus", "--json");
	CHECK_RUN(&r, 2);
	run_free(&r);
}

static void test_fsync(void)
{
	struct json_object *o, *o2;
	struct run r;
	char want[512];

	dt_test_ctx("fsync --json --range");
	CTL(&r, "fsync", "--json", "--range", "0-4M", "r1");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "region"), "r1"));
	CHECK_EQ(get_u64(o, "offset"), 0);
	CHECK_EQ(get_u64(o, "length"), 4 * MiB);
	CHECK(is_type(o, "deep", json_type_boolean) && !json_object_get_boolean(get(o, "deep")));
	CHECK_EQ(get_u64(o, "entries"), 2);
	CHECK_EQ(get_u64(o, "bytes"), 4096 + 2 * MiB);
	CHECK(get_u64(o, "ranges") >= 1 && get_u64(o, "ranges") <= 2);
	CHECK(is_type(o, "time_ns", json_type_int));
	json_object_put(o);
	run_free(&r);
	o = list_json((const char *[]){ "--dirty", "r1", NULL });
	CHECK_EQ(json_object_array_length(o), 0);
	json_object_put(o);

	dt_test_ctx("fsync (human), whole region");
	CTL(&r, "fsync", "r1");
	CHECK_RUN(&r, 0);
	CHECK(!strncmp(r.out, "region \"r1\": flushed 0 entries (0 B) in 0 ranges, ", 50));
	run_free(&r);

	dt_test_ctx("fsync --deep");
	CTL(&r, "fsync", "--deep", "--json", "r2");
	if (r.code == 0) {
		o = parse(r.out);
		CHECK(json_object_get_boolean(get(o, "deep")));
		CHECK_EQ(get_u64(o, "length"), 32 * MiB);
		json_object_put(o);
	} else {
		CHECK_RUN(&r, 1);
		CHECK(!strncmp(r.err, "daxtrackctl: region \"r2\": fsync: ", 33));
	}
	run_free(&r);
	/* Whichever way it went, stats says how: done by libpmem here, or failed. */
	CTL(&r, "stats", "--json", "r2");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	o2 = find_named(get(o, "regions"), "r2");
	CHECK_EQ(get_u64(o2, "deep_flush_ndctl"), 0);
	CHECK_EQ(get_u64(o2, "deep_flush_pmem") + get_u64(o2, "deep_flush_failed"), 1);
	CHECK_EQ(get_u64(o2, "deep_flush_cxl"), 0);	/* not on CXL memory */
	json_object_put(o);
	run_free(&r);

	dt_test_ctx("fsync errors");
	CTL(&r, "fsync", "--range", "1G+4K", "r1");
	CHECK_RUN(&r, 1);
	CHECK(!strcmp(r.err, "daxtrackctl: region \"r1\": fsync: Numerical result out of range\n"));
	run_free(&r);
	CTL(&r, "fsync", "--range", "4K-4K", "r1");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "bad range '4K-4K': empty range"));
	run_free(&r);

	if (geteuid() != 0)
		return;
	/* Not root: write rights only through an O_RDWR fd of the region's file. */
	dt_test_ctx("fsync as uid %d", NOBODY);
	chmod(r1_path, 0644);
	run_v(&r, NOBODY, NULL, (const char *const[]){ "-s", sock, "fsync", "r1", NULL });
	CHECK_RUN(&r, 1);
	snprintf(want, sizeof(want), "daxtrackctl: region \"r1\": fsync: Operation not "
		 "permitted (needs root or write access to %s)\n", r1_path);
	CHECK(!strcmp(r.err, want));
	run_free(&r);
	chmod(r1_path, 0666);
	run_v(&r, NOBODY, NULL,
	      (const char *const[]){ "-s", sock, "fsync", "--json", "--range", "0+8K", "r1", NULL });
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK_EQ(get_u64(o, "length"), 8192);
	json_object_put(o);
	run_free(&r);
	chmod(r1_path, 0644);
}

/* `dirty`, on r2 (R2_ENTRIES clean 4K entries from 0, nothing dirty). */
static void test_dirty(void)
{
	struct json_object *o, *e;
	struct run r;
	char want[512];

	dt_test_ctx("dirty r2 4K");
	CTL(&r, "dirty", "r2", "0x3000", "4K");
	CHECK_RUN(&r, 0);
	CHECK(!strcmp(r.out, "region \"r2\": marked 4 KiB at 0x3000 dirty; 1 dirty entry (4 KiB) "
			     "in that range\n"));
	run_free(&r);
	o = list_json((const char *[]){ "--dirty", "r2", NULL });
	CHECK_EQ(json_object_array_length(o), 1);
	e = json_object_array_get_idx(o, 0);
	CHECK_EQ(get_u64(e, "offset"), 0x3000);
	CHECK_EQ(get_u64(e, "size"), 4096);
	json_object_put(o);
	CTL(&r, "list", "--dirty", "r2");
	CHECK_RUN(&r, 0);
	CHECK(table_row(r.out, "0x3000", want, sizeof(want)));
	CHECK(!strncmp(want, "0x3000 4K ", 10) && has(want, " - dirty no"));
	run_free(&r);

	dt_test_ctx("dirty: singular counts");
	CTL(&r, "stats", "r2");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "  dirty           1 entry, 4 KiB; 0 being flushed\n"));
	run_free(&r);

	dt_test_ctx("dirty --json, pages without entries");
	CTL(&r, "--json", "dirty", "r2", "20M", "8K");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "region"), "r2"));
	CHECK_EQ(get_u64(o, "offset"), 20 * MiB);
	CHECK_EQ(get_u64(o, "length"), 8192);
	CHECK_EQ(get_u64(o, "dirty_entries"), 2);
	CHECK_EQ(get_u64(o, "dirty_bytes"), 8192);
	json_object_put(o);
	run_free(&r);
	o = list_json((const char *[]){ "--dirty", "r2", NULL });
	CHECK_EQ(json_object_array_length(o), 3);
	json_object_put(o);

	dt_test_ctx("fsync: singular counts");
	CTL(&r, "fsync", "--range", "0+16K", "r2");
	CHECK_RUN(&r, 0);
	CHECK(!strncmp(r.out, "region \"r2\": flushed 1 entry (4 KiB) in 1 range, ", 49));
	run_free(&r);
	CTL(&r, "fsync", "r2");
	CHECK_RUN(&r, 0);
	CHECK(!strncmp(r.out, "region \"r2\": flushed 2 entries (8 KiB) in ", 42));
	run_free(&r);

	dt_test_ctx("dirty errors");
	CTL(&r, "dirty", "nosuch", "0", "4K");
	CHECK_RUN(&r, 1);
	CHECK(!strcmp(r.err, "daxtrackctl: region \"nosuch\": no such region\n"));
	run_free(&r);
	CTL(&r, "dirty", "r2", "32M", "4K");
	CHECK_RUN(&r, 1);
	CHECK(!strcmp(r.err, "daxtrackctl: region \"r2\": dirty: 4 KiB at 0x2000000 goes past "
			     "its end (32 MiB)\n"));
	CHECK(!*r.out);
	run_free(&r);
	CTL(&r, "dirty", "r2", "0", "0");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "daxtrackctl: dirty: bad length '0': empty range\n"));
	run_free(&r);
	CTL(&r, "dirty", "r2", "4Q", "4K");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "bad offset '4Q': unknown suffix"));
	run_free(&r);
	CTL(&r, "dirty", "r2", "0");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "missing argument"));
	run_free(&r);

	if (geteuid() != 0)
		return;
	/* Not root: write rights only through an O_RDWR fd of the region's file. */
	dt_test_ctx("dirty as uid %d", NOBODY);
	chmod(r2_path, 0644);
	run_v(&r, NOBODY, NULL,
	      (const char *const[]){ "-s", sock, "dirty", "r2", "0", "4K", NULL });
	CHECK_RUN(&r, 1);
	snprintf(want, sizeof(want),
		 "daxtrackctl: region \"r2\": dirty: Operation not "
		 "permitted (needs root or write access to %s)\n",
		 r2_path);
	CHECK(!strcmp(r.err, want));
	run_free(&r);
}

/* A socket this uid may not connect to: the message says what to do. */
static void test_permission(void)
{
	static const char *const cmds[][4] = {
		{ "status" }, { "regions" }, { "list", "r1" }, { "dirty", "r1", "0", "4K" },
		{ "fsync", "r1" }, { "stats" },
	};
	char want[512];
	struct run r;
	int uid = -1;
	size_t i;

	/* Root connects anywhere: as root, run daxtrackctl as nobody behind a
	 * closed directory; otherwise close the socket itself. */
	if (geteuid() == 0) {
		uid = NOBODY;
		CHECK(!chmod(dir, 0700));
	} else {
		CHECK(!chmod(sock, 0));
	}
	snprintf(want, sizeof(want),
		 "daxtrackctl: socket %s: permission denied: are you in group "
		 "daxtrack?\n",
		 sock);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *args[8] = { "-s", sock };
		int n = 2, j;

		for (j = 0; j < 4 && cmds[i][j]; j++)
			args[n++] = cmds[i][j];
		dt_test_ctx("permission denied: %s", cmds[i][0]);
		run_v(&r, uid, NULL, args);
		CHECK_RUN(&r, 1);
		CHECK(!strcmp(r.err, want));
		CHECK(!*r.out);
		run_free(&r);
	}
	dt_test_ctx("permission denied: stats --prometheus");
	run_v(&r, uid, NULL, (const char *const[]){ "-s", sock, "stats", "--prometheus", NULL });
	CHECK_RUN(&r, 1);
	CHECK(!strcmp(r.err, want));
	CHECK(has(r.out, "\ndaxtrack_up 0\n"));
	run_free(&r);
	if (uid >= 0)
		CHECK(!chmod(dir, 0755));
	else
		CHECK(!chmod(sock, 0666));
	CTL(&r, "status");
	CHECK_RUN(&r, 0);
	run_free(&r);
}

static void test_dump(void)
{
	struct json_object *o;
	struct run r;

	dt_test_ctx("dump");
	CTL(&r, "dump", "r1");
	CHECK_RUN(&r, 0);
	CHECK(strlen(r.out) > 10);
	CHECK(has(r.out, "tree"));
	run_free(&r);
	CTL(&r, "dump", "--json", "r2");	/* 4500 entries: several DUMP chunks */
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "region"), "r2"));
	CHECK(strlen(get_str(o, "text")) > 64 * 1024);
	json_object_put(o);
	run_free(&r);
	CTL(&r, "dump", "nosuch");
	CHECK_RUN(&r, 1);
	run_free(&r);
}

/* Start `watch` without --count, wait for its first refresh, interrupt it. */
static void check_watch_sigint(void)
{
	struct stat st = { .st_size = 0 };
	char outp[160];
	int i, status;
	pid_t pid;

	snprintf(outp, sizeof(outp), "%s/watch.out", dir);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		execl(ctl_bin, ctl_bin, "-s", sock, "watch", "--interval", "0.1", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 3000; i++) {	/* the handler is set before the first refresh */
		if (!stat(outp, &st) && st.st_size > 0)
			break;
		usleep(10000);
	}
	CHECK(st.st_size > 0);
	kill(pid, SIGINT);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
}

static void test_watch(void)
{
	struct json_object *o;
	struct run r;
	char *line, *save = NULL;
	int n = 0;

	dt_test_ctx("watch (not a terminal)");
	CTL(&r, "watch", "--interval", "0.1", "--count", "2", "r1");
	CHECK_RUN(&r, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		CHECK(has(line, "region \"r1\": dirty 2 entries (2052 KiB), "));
		CHECK(has(line, "fsyncs/s") && has(line, "faults/s"));
		n++;
	}
	CHECK_EQ(n, 2);
	CHECK(!has(r.out, "\033["));
	run_free(&r);

	dt_test_ctx("watch --json");
	CTL(&r, "watch", "--json", "--interval", "0.1", "--count", "3");
	CHECK_RUN(&r, 0);
	n = 0;
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct json_object *reg;

		o = parse(line);
		CHECK(get_u64(o, "time_ms") > 1000000000000ULL);
		CHECK(get_u64(o, "interval_ms") >= 90);
		CHECK_EQ(json_object_array_length(get(o, "regions")), 2);
		reg = find_named(get(o, "regions"), "r2");
		CHECK(is_type(reg, "dirty_entries", json_type_int));
		CHECK(is_type(reg, "dirty_bytes", json_type_int));
		CHECK(is_type(reg, "fsyncs_per_second", json_type_double));
		CHECK(is_type(reg, "flushed_bytes_per_second", json_type_double));
		CHECK(is_type(reg, "faults_per_second", json_type_double));
		json_object_put(o);
		n++;
	}
	CHECK_EQ(n, 3);
	run_free(&r);

	dt_test_ctx("watch: SIGINT exits 0");
	check_watch_sigint();

	dt_test_ctx("watch errors");
	CTL(&r, "watch", "--interval", "0.01", "--count", "1");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "bad interval '0.01': must be at least 0.1 seconds"));
	run_free(&r);
	CTL(&r, "watch", "--count", "x");
	CHECK_RUN(&r, 2);
	run_free(&r);
}

static void test_version(void)
{
	struct json_object *o;
	struct run r;

	dt_test_ctx("version");
	CTL(&r, "version");
	CHECK_RUN(&r, 0);
	CHECK(!strcmp(r.out, "daxtrackctl " DT_VERSION "\ndaxtrackd " DT_VERSION " (protocol 5)\n"));
	run_free(&r);
	CTL(&r, "version", "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "daxtrackctl"), DT_VERSION));
	CHECK(!strcmp(get_str(o, "daxtrackd"), DT_VERSION));
	CHECK_EQ(get_u64(o, "protocol"), DT_PROTO_VERSION);
	json_object_put(o);
	run_free(&r);
}

static void test_usage(void)
{
	static const char *const cmds[] = { "status", "regions", "namespaces", "list", "lookup",
					    "stats", "dirty", "fsync", "dump", "watch", "version",
					    "help", NULL };
	char want[64], line[64];
	struct run main_help;
	struct run r;
	int i;

	RUN(&main_help, "--help");
	CHECK_RUN(&main_help, 0);
	CHECK(!strncmp(main_help.out, "Usage: daxtrackctl ", 19));
	for (i = 0; cmds[i]; i++) {
		dt_test_ctx("%s --help", cmds[i]);
		/* `daxtrackctl --help`: the command and a description on one line. */
		snprintf(line, sizeof(line), "\n  %-12s ", cmds[i]);
		CHECK(matches(strstr(main_help.out, line), "^\n  [a-z]+ +[a-z][^\n]{10,}\n"));
		snprintf(want, sizeof(want), "Usage: daxtrackctl %s", cmds[i]);
		RUN(&r, cmds[i], "--help");
		CHECK_RUN(&r, 0);
		CHECK(!strncmp(r.out, want, strlen(want)));
		CHECK(has(r.out, "--socket") && !*r.err);
		run_free(&r);
		RUN(&r, "help", cmds[i]);
		CHECK_RUN(&r, 0);
		CHECK(!strncmp(r.out, want, strlen(want)));
		run_free(&r);
		RUN(&r, cmds[i], "--no-such-option");
		CHECK_RUN(&r, 2);
		CHECK(has(r.err, "unknown option '--no-such-option'"));
		run_free(&r);
	}
	run_free(&main_help);
	dt_test_ctx("usage errors");
	RUN(&r, "--help");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "Usage: daxtrackctl") && has(r.out, "watch"));
	run_free(&r);
	RUN(&r, "-h");
	CHECK_RUN(&r, 0);
	run_free(&r);
	RUN(&r, "help");
	CHECK_RUN(&r, 0);
	run_free(&r);
	RUN(&r, "");
	CHECK_RUN(&r, 2);
	run_free(&r);
	run_v(&r, -1, NULL, (const char *const[]){ NULL });
	CHECK_RUN(&r, 2);
	CHECK(!strncmp(r.err, "Usage: daxtrackctl", 18));
	run_free(&r);
	RUN(&r, "frobnicate");
	CHECK_RUN(&r, 2);
	CHECK(!strcmp(r.err, "daxtrackctl: unknown command 'frobnicate'\n"
			     "Try 'daxtrackctl --help'.\n"));
	run_free(&r);
	RUN(&r, "help", "frobnicate");
	CHECK_RUN(&r, 2);
	run_free(&r);
	RUN(&r, "-x", "status");
	CHECK_RUN(&r, 2);
	run_free(&r);
	RUN(&r, "status", "-s");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "needs an argument"));
	run_free(&r);
	CTL(&r, "status", "extra");
	CHECK_RUN(&r, 2);
	run_free(&r);

	dt_test_ctx("suffix errors");
	CTL(&r, "lookup", "r1", "12Q");
	CHECK_RUN(&r, 2);
	CHECK(!strcmp(r.err, "daxtrackctl: lookup: bad offset '12Q': unknown suffix (K, M, G "
			     "or T)\nTry 'daxtrackctl lookup --help'.\n"));
	run_free(&r);
	CTL(&r, "lookup", "r1", "0xZZ");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "bad offset '0xZZ': not a number"));
	run_free(&r);
	CTL(&r, "lookup", "r1", "99999999999999999999");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "too large"));
	run_free(&r);
	CTL(&r, "list", "--range", "0-2X", "r1");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "bad range '0-2X': unknown suffix"));
	run_free(&r);
	CTL(&r, "fsync", "--range", "8K-4K", "r1");
	CHECK_RUN(&r, 2);
	CHECK(has(r.err, "end below start"));
	run_free(&r);
}

/* Every command that needs the daemon, against @path: the message, exit 1. */
static void check_not_running(const char *path, const char *reason)
{
	static const char *const cmds[][3] = {
		{ "status" }, { "regions" }, { "namespaces" }, { "list", "r1" },
		{ "lookup", "r1", "0" }, { "stats" }, { "fsync", "r1" }, { "dump", "r1" },
		{ "watch", "r1" },
	};
	char want[512];
	struct json_object *o;
	struct run r;
	size_t i;

	snprintf(want, sizeof(want), "daxtrackctl: is daxtrackd running? socket %s: %s\n", path,
		 reason);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		dt_test_ctx("not running (%s): %s", reason, cmds[i][0]);
		RUN(&r, "-s", path, cmds[i][0], cmds[i][1] ? cmds[i][1] : "--json",
		    cmds[i][2] ? cmds[i][2] : "--json");
		CHECK_RUN(&r, 1);
		CHECK(!strcmp(r.err, want));
		CHECK(!*r.out);
		run_free(&r);
	}
	dt_test_ctx("not running (%s): stats --prometheus", reason);
	RUN(&r, "-s", path, "stats", "--prometheus");
	CHECK_RUN(&r, 1);
	CHECK(!strcmp(r.err, want));
	CHECK(!strcmp(r.out, "# HELP daxtrack_up Whether daxtrackd answered.\n"
			     "# TYPE daxtrack_up gauge\ndaxtrack_up 0\n"));
	check_prometheus(r.out, 3);
	run_free(&r);
	dt_test_ctx("not running (%s): version", reason);
	RUN(&r, "-s", path, "version");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "daxtrackctl " DT_VERSION "\ndaxtrackd: not answering"));
	run_free(&r);
	RUN(&r, "-s", path, "version", "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	CHECK(is_type(o, "daxtrackd", json_type_null) && is_type(o, "protocol", json_type_null));
	json_object_put(o);
	run_free(&r);
}

static void test_not_running(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[160];
	struct run r;
	int s;

	snprintf(path, sizeof(path), "%s/nosock", dir);
	check_not_running(path, "No such file or directory");
	/* a socket nobody listens on */
	snprintf(path, sizeof(path), "%s/deadsock", dir);
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	set_sun(&sun, path);
	CHECK(!bind(s, (struct sockaddr *)&sun, sizeof(sun)));
	check_not_running(path, "Connection refused");
	close(s);

	dt_test_ctx("DAXTRACK_SOCKET");
	run_v(&r, -1, sock, (const char *const[]){ "status", NULL });
	CHECK_RUN(&r, 0);
	run_free(&r);
	run_v(&r, -1, path, (const char *const[]){ "status", NULL });
	CHECK_RUN(&r, 1);
	CHECK(has(r.err, path));
	run_free(&r);
	run_v(&r, -1, path, (const char *const[]){ "-s", sock, "status", NULL });	/* -s wins */
	CHECK_RUN(&r, 0);
	run_free(&r);
	run_v(&r, -1, "", (const char *const[]){ "status", NULL });
	CHECK(has(r.err, DT_PROTO_SOCKET_PATH) || r.code == 0);
	run_free(&r);
}

/* fsync over the bad range of r2: the good pages flushed, the bad range named, exit 1. */
static void test_fsync_bad(void)
{
	struct json_object *o, *b;
	struct run r;

	dt_test_ctx("fsync, a bad range");
	CTL(&r, "fsync", "--range", "28M+4M", "r2");
	CHECK_RUN(&r, 1);
	CHECK(has(r.out, "region \"r2\": flushed "));
	CHECK(has(r.err, "region \"r2\": fsync: Input/output error: 1 bad block range not "
			 "flushed:\n  8 KiB at 0x1e00000\n"));
	run_free(&r);
	CTL(&r, "--json", "fsync", "r2");
	CHECK_RUN(&r, 1);
	o = parse(r.out);
	CHECK(!strcmp(get_str(o, "error"), "EIO"));
	b = json_object_array_get_idx(get(o, "bad_ranges"), 0);
	CHECK_EQ(get_u64(b, "offset"), 30 * MiB);
	CHECK_EQ(get_u64(b, "length"), 8192);
	CHECK(json_object_array_length(get(o, "bad_ranges")) == 1);
	json_object_put(o);
	run_free(&r);
}

/* The daemon again, with a bad range in r2: the new fields of regions and stats. */
static void test_badblocks(void)
{
	char row[256], want[512];
	struct json_object *o, *r2;
	struct run r;
	uint32_t id;
	int s;

	start_daemon("r2:30M:8K");
	s = conn_open(sock);
	CHECK(s >= 0);
	CHECK_EQ(hello(s), 0);
	id = attach_rw(s, r2_path);
	fault_expect(s, id, 30 * MiB + 4096, 0, false, -EIO);
	fault_expect(s, id, 31 * MiB, 9, true, -EIO);	/* the 2M run 30M..32M */
	fault_expect(s, id, 28 * MiB, 9, false, 0);	/* 28M..30M is clean */
	close(s);

	dt_test_ctx("regions, a bad range");
	CTL(&r, "regions", "-v");
	CHECK_RUN(&r, 0);
	check_regions_row(r.out, "r1", "0", "0 B", r1_path);
	check_regions_row(r.out, "r2", "1", "8 KiB", r2_path);
	run_free(&r);
	CTL(&r, "regions");
	CHECK_RUN(&r, 0);
	snprintf(row, sizeof(row), " 1 - %s", r2_path); /* BADBLOCKS NAMESPACE PATH */
	CHECK(table_row(r.out, "r2", want, sizeof(want)));
	CHECK(has(want, row) && !strcmp(want + strlen(want) - strlen(row), row));
	run_free(&r);
	CTL(&r, "--json", "regions");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	dt_test_ctx("regions --json, a bad range");
	r2 = find_named(o, "r2");
	check_region_ns(r2, r2_path, 1, 8192);
	check_region_ns(find_named(o, "r1"), r1_path, 0, 0);
	json_object_put(o);
	run_free(&r);

	dt_test_ctx("stats, a bad range");
	CTL(&r, "stats", "r2");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "region \"r2\":\n"));
	CHECK(has(r.out, "  bad blocks      1 range, 8 KiB; 2 requests refused (EIO)\n"));
	run_free(&r);
	CTL(&r, "stats", "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	r2 = find_named(get(o, "regions"), "r2");
	CHECK_EQ(get_u64(r2, "badblocks"), 1);
	CHECK_EQ(get_u64(r2, "bad_bytes"), 8192);
	CHECK_EQ(get_u64(r2, "bad_hits"), 2);
	CHECK_EQ(get_u64(find_named(get(o, "regions"), "r1"), "bad_hits"), 0);
	json_object_put(o);
	run_free(&r);
	CTL(&r, "stats", "--prometheus");
	CHECK_RUN(&r, 0);
	check_prometheus(r.out, 60);
	CHECK(has(r.out, "\ndaxtrack_region_badblocks{region=\"r2\"} 1\n"));
	CHECK(has(r.out, "\ndaxtrack_region_bad_bytes{region=\"r2\"} 8192\n"));
	CHECK(has(r.out, "\ndaxtrack_region_bad_hits_total{region=\"r2\"} 2\n"));
	CHECK(has(r.out, "\ndaxtrack_region_bad_hits_total{region=\"r1\"} 0\n"));
	run_free(&r);
	test_fsync_bad();
}

/* The lines of @text containing @needle. */
static int count_lines(const char *text, const char *needle)
{
	const char *p = text;
	int n = 0;

	while (p && (p = strstr(p, needle))) {
		n++;
		p = strchr(p, '\n');
	}
	return n;
}

/* ---- dirty counts: status, stats and list --dirty agree ------------------ */

/*
 * The entries `list --dirty r1` shows (their bytes in *@bytes) are those
 * status (table and JSON) and stats count dirty in r1.  Return: how many.
 */
static uint64_t check_dirty_counts(uint64_t *bytes)
{
	struct json_object *o, *r1;
	uint64_t n, b = 0, col = UINT64_MAX;
	char row[512];
	struct run r;
	size_t i;

	o = list_json((const char *[]){ "--dirty", "r1", NULL });
	n = json_object_array_length(o);
	for (i = 0; i < n; i++)
		b += get_u64(json_object_array_get_idx(o, i), "size");
	json_object_put(o);
	for (i = 0; i < 2; i++) {
		CTL(&r, "--json", i ? "stats" : "status");
		CHECK_RUN(&r, 0);
		o = parse(r.out);
		r1 = find_named(get(o, "regions"), "r1");
		CHECK_EQ(get_u64(r1, "dirty_entries"), n);
		CHECK_EQ(get_u64(r1, "dirty_bytes"), b);
		json_object_put(o);
		run_free(&r);
	}
	/* NAME TYPE SIZE (2 cells) PMEM EADR PMD FLUSH ENTRIES DIRTY DIRTY_BYTES */
	CTL(&r, "status");
	CHECK_RUN(&r, 0);
	CHECK(table_row(r.out, "r1", row, sizeof(row)));
	CHECK_EQ(sscanf(row, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %" SCNu64, &col), 1);
	CHECK_EQ(col, n);
	run_free(&r);
	*bytes = b;
	return n;
}

/*
 * Pages marked through the fast path (a client's shared dirty log: no
 * DIRTY message) are dirty to status and stats as to list --dirty, and a
 * page both logged and marked through the daemon counts once.
 */
static void test_dirty_logged(void)
{
	struct dt_client_region_info info;
	struct dt_client_region *reg;
	struct dt_client *c = NULL;
	uint64_t n0, n, b0, b;
	struct run r;
	int fd = open(r1_path, O_RDWR | O_CLOEXEC);

	dt_test_ctx("dirty counts: pages in a client's log");
	if (!CHECK(fd >= 0) || !CHECK_EQ(dt_client_connect(sock, &c), 0) ||
	    !CHECK_EQ(dt_client_attach_fd(c, fd, &reg), 0))
		goto out;
	dt_client_region_info(reg, &info);
	CHECK(info.log);
	n0 = check_dirty_counts(&b0);
	for (unsigned i = 0; i < 1000; i++)	/* 16 MiB on: no entries there */
		CHECK_EQ(dt_client_dirty(reg, 16 * MiB + i * 3 * 4096, 1), 0);
	n = check_dirty_counts(&b);
	CHECK_EQ(n, n0 + 1000);
	CHECK_EQ(b, b0 + 1000 * 4096);

	dt_test_ctx("dirty counts: logged and marked, once");
	CTL(&r, "dirty", "r1", "16M", "4K");
	CHECK_RUN(&r, 0);
	run_free(&r);
	CHECK_EQ(check_dirty_counts(&b), n);
	CHECK_EQ(b, b0 + 1000 * 4096);
out:
	if (c)
		CHECK_EQ(dt_client_close(c), 0);
	if (fd >= 0)
		close(fd);
}

/* r2's file cut to 8 MiB under 3 dirty pages at 16 MiB, then grown back. */
static void truncate_r2(void)
{
	int s = conn_open(sock), fd = open(r2_path, O_RDWR | O_CLOEXEC);
	uint32_t r2;

	if (!CHECK(s >= 0) || !CHECK(fd >= 0) || !CHECK_EQ(hello(s), 0))
		goto out;
	r2 = attach_rw(s, r2_path);
	dirty(s, r2, 16 * MiB, 3 * 4096);
	CHECK_EQ(ftruncate(fd, 8 * MiB), 0);
	dirty(s, r2, 0, 4096); /* a writer's request follows the truncation */
	CHECK_EQ(ftruncate(fd, 32 * MiB), 0);
out:
	if (fd >= 0)
		close(fd);
	if (s >= 0)
		close(s);
}

/* `daxtrackctl @cmd --json`: r2 truncated once, 3 dirty pages lost; r1 never. */
static void check_truncation_json(const char *cmd)
{
	struct json_object *o, *regions;
	struct run r;

	dt_test_ctx("truncation: %s --json", cmd);
	CTL(&r, cmd, "--json");
	CHECK_RUN(&r, 0);
	o = parse(r.out);
	regions = get(o, "regions");
	CHECK_EQ(get_u64(find_named(regions, "r2"), "truncations"), 1);
	CHECK_EQ(get_u64(find_named(regions, "r2"), "truncated_dirty_bytes"), 3 * 4096);
	CHECK_EQ(get_u64(find_named(regions, "r2"), "sigbus"), 0);
	CHECK_EQ(get_u64(find_named(regions, "r1"), "truncations"), 0);
	json_object_put(o);
	run_free(&r);
}

/* A region file shrunk under the daemon: stats, status, in text, JSON and Prometheus. */
static void test_truncation(void)
{
	static const char *const prom[] = {
		"\n# TYPE daxtrack_region_truncations_total counter\n",
		"\ndaxtrack_region_truncations_total{region=\"r2\"} 1\n",
		"\ndaxtrack_region_truncations_total{region=\"r1\"} 0\n",
		"\ndaxtrack_region_truncated_dirty_bytes_total{region=\"r2\"} 12288\n",
		"\ndaxtrack_region_sigbus_total{region=\"r2\"} 0\n",
	};
	struct run r;

	start_daemon(NULL);
	truncate_r2();
	dt_test_ctx("truncation: stats");
	CTL(&r, "stats", "r2");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "\n  truncations     1, 3 dirty pages lost (12 KiB), 0 SIGBUS in "
			 "flushes\n"));
	run_free(&r);
	check_truncation_json("stats");
	check_truncation_json("status");
	CTL(&r, "stats", "--prometheus");
	CHECK_RUN(&r, 0);
	check_prometheus(r.out, 60);
	for (size_t i = 0; i < sizeof(prom) / sizeof(prom[0]); i++)
		CHECK(has(r.out, prom[i]));
	run_free(&r);

	dt_test_ctx("truncation: status");
	CTL(&r, "status");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "\nregion \"r2\": file truncated 1 time under the daemon, 3 dirty pages "
			 "lost (12 KiB), 0 SIGBUS in flushes\n"));
	CHECK(!has(r.out, "region \"r1\": file truncated"));
	run_free(&r);
	stop_daemon();
}

/* dt-example on r1 of the second daemon (no entries yet): 2 MiB entries. */
static void test_example(void)
{
	struct json_object *o, *regions;
	size_t i, pmd_entries = 0;
	struct run r;
	int lines;
	bool pmd;

	dt_test_ctx("dt-example");
	CTL(&r, "--json", "regions");
	CHECK_RUN(&r, 0);
	regions = parse(r.out);
	pmd = json_object_get_boolean(get(find_named(regions, "r1"), "pmd"));
	json_object_put(regions);
	run_free(&r);
	run_prog(&r, example_bin, -1, NULL,
		 (const char *const[]){ "-s", sock, "-r", "r1", "-n", "8", "--seed", "7", NULL });
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "region \"r1\": 64 MiB mapped at "));
	CHECK(has(r.out, "\n8 records persisted in region \"r1\": "));
	CHECK_EQ(count_lines(r.out, "(in a 4K entry"), 8 - count_lines(r.out, "(in a 2M entry)"));
	o = list_json((const char *[]){ "r1", NULL });
	for (i = 0; i < json_object_array_length(o); i++)
		if (get_u64(json_object_array_get_idx(o, i), "order") == 9)
			pmd_entries++;
	json_object_put(o);
	/* Two records may share a 2 MiB entry. */
	lines = count_lines(r.out, "(in a 2M entry)");
	dt_test_ctx("dt-example: pmd %d, %zu 2M entries, %d records in them", pmd, pmd_entries,
		    lines);
	CHECK(pmd_entries <= (size_t)lines && !pmd_entries == !lines);
	if (pmd)
		CHECK(pmd_entries >= 1);
	else
		CHECK_EQ(pmd_entries, 0);
	run_free(&r);
}

/* dt-example on r1 with @fast_path ("1" or "0"): nothing left dirty by its persists. */
static void example_clean(const char *fast_path)
{
	uint64_t b;
	struct run r;

	dt_test_ctx("dt-example, pmem, DAXTRACK_FAST_PATH=%s: nothing left dirty", fast_path);
	setenv("DAXTRACK_FAST_PATH", fast_path, 1);
	run_prog(&r, example_bin, -1, NULL,
		 (const char *const[]){ "-s", sock, "-r", "r1", "-n", "8", "--seed", "7", NULL });
	unsetenv("DAXTRACK_FAST_PATH");
	CHECK_RUN(&r, 0);
	CHECK(has(r.out, "\n8 records persisted in region \"r1\": "));
	run_free(&r);
	CHECK_EQ(check_dirty_counts(&b), 0);	/* list --dirty, status, stats */
	CHECK_EQ(b, 0);
}

/*
 * dt-example on a daemon whose regions are pmem (PMEM_IS_PMEM_FORCE=1, in
 * the daemon's environment and dt-example's): through the fast path its
 * persists flush in its own process, and its write FAULTs of 2 MiB entries
 * must not leave them DIRTY; the socket path ends clean too.
 */
static void test_example_pmem(void)
{
	setenv("PMEM_IS_PMEM_FORCE", "1", 1);
	start_daemon(NULL);
	example_clean("1");
	example_clean("0");
	stop_daemon();
	unsetenv("PMEM_IS_PMEM_FORCE");
}

int main(int argc, char **argv)
{
	/* 0755: the non-root checks reach the socket; no --flush-log. */
	const struct dth_options opt = { .exe = argv[2], .tag = "ctl", .dir_mode = 0755,
					 .no_flush_log = true, .stop_timeout_ms = 10000 };
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DAXTRACKCTL DAXTRACKD DT_EXAMPLE\n", argv[0]);
		return 2;
	}
	ctl_bin = argv[1];
	example_bin = argv[3];
	ret = dth_init(&harness, &opt);
	if (ret) {
		fprintf(stderr, "test_ctl_e2e: %s: %s\n", harness.dir, strerror(-ret));
		return 1;
	}
	dir = harness.dir;
	dth_path(&harness, harness.sock, "daxtrackd.sock");
	sock = harness.sock;
	snprintf(r1_path, sizeof(r1_path), "%s/r1.pool", dir);
	snprintf(r2_path, sizeof(r2_path), "%s/r2.pool", dir);

	test_usage();
	start_daemon(NULL);
	populate();
	test_status();
	test_regions();
	test_namespaces();
	test_list();
	test_lookup();
	test_stats();
	test_prometheus();
	test_tracking();
	test_dump();
	test_watch();
	test_version();
	test_fsync();
	test_dirty();
	test_permission();
	test_not_running();
	test_dirty_logged();
	stop_daemon();
	test_badblocks();
	test_example();
	stop_daemon();
	test_example_pmem();
	test_truncation();
	if (dt_test_counts.failed)
		dth_show_log(&harness, stderr);
	dth_cleanup(&harness);
	return dt_test_done();
}
