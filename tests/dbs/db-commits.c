// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * db-commits.c - the workload, stamp, page diff and record checks of the
 * unmodified database programs of the shim's tests (db-commits.h).  Nothing
 * of daxtrack is included.
 */
#include "db-commits.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define PATH_LEN 4096

static const struct db_ops *ops;

/* The page diff: a copy of the file as it was after the last commit. */
struct diff {
	FILE *log;
	int fd;
	unsigned char *copy;
	size_t size;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail_errno(const char *what)
{
	fprintf(stderr, "FAIL %s: %s: %s\n", ops->name, what, strerror(errno));
	return 1;
}

/* The value of key @k as transaction @t writes it: text, then a hash stream. */
static void make_value(uint32_t t, uint32_t k, char *v)
{
	uint64_t x = ((uint64_t)t << 32 | k) * 0x9e3779b97f4a7c15ULL;
	int n = snprintf(v, DB_VALUE_LEN, "t=%" PRIu32 " k=%" PRIu32 " ", t, k);

	for (unsigned i = (unsigned)n; i < DB_VALUE_LEN; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		v[i] = (char)('a' + (x >> 59));
	}
}

/* The count of committed transactions (DB_TXN_KEY), 0 in a new database. */
static int read_count(void *db, uint32_t *count)
{
	size_t len;
	void *val;

	*count = 0;
	if (ops->get(db, DB_TXN_KEY, &val, &len))
		return 1;
	if (val && len == sizeof(*count))
		memcpy(count, val, sizeof(*count));
	free(val);
	if (!val || len == sizeof(*count))
		return 0;
	fprintf(stderr, "FAIL %s: %s holds %zu bytes\n", ops->name, DB_TXN_KEY, len);
	return 1;
}

/* Write zeroes over every page of @path that reads as zeroes (holes included). */
static int fill_holes(const char *path)
{
	static const char zero[PAGE];
	char buf[PAGE];
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		goto err;
	for (off_t off = 0; off + PAGE <= st.st_size; off += PAGE) {
		if (pread(fd, buf, PAGE, off) != PAGE)
			goto err;
		if (!memcmp(buf, zero, PAGE) && pwrite(fd, zero, PAGE, off) != PAGE)
			goto err;
	}
	if (fsync(fd))
		goto err;
	close(fd);
	if (st.st_size && !(st.st_size % PAGE))
		return 0;
	fprintf(stderr, "FAIL %s: %s: %lld bytes, not a non-zero multiple of %u\n", ops->name,
		path, (long long)st.st_size, PAGE);
	return 1;
err:
	fail_errno(path);
	if (fd >= 0)
		close(fd);
	return 1;
}

/* The file the data of the database at @path lives in, in @buf. */
static const char *data_file(const char *path, char *buf)
{
	if (!ops->data_file)
		return path;
	ops->data_file(path, buf, PATH_LEN);
	return buf;
}

static int cmd_create(const char *path)
{
	char buf[PATH_LEN];
	const char *file = data_file(path, buf);
	struct stat st;

	if (ops->create(path) || fill_holes(file) || stat(file, &st))
		return 1;
	printf("%s: created %s (%lld bytes)\n", ops->name, file, (long long)st.st_size);
	return 0;
}

/* Grow the copy to @size bytes, the new part zeroes (a page past the file's end). */
static int grow_copy(struct diff *d, size_t size)
{
	unsigned char *copy = realloc(d->copy, size);

	if (!copy)
		return -ENOMEM;
	if (size > d->size)
		memset(copy + d->size, 0, size - d->size);
	d->copy = copy;
	return 0;
}

static int diff_open(struct diff *d, const char *path, const char *logpath)
{
	struct stat st;
	size_t done = 0;

	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	d->log = fopen(logpath, "ae");
	if (d->fd < 0 || !d->log || fstat(d->fd, &st))
		return fail_errno(d->fd < 0 ? path : logpath);
	if (grow_copy(d, (size_t)st.st_size))
		return fail_errno("diff copy");
	while (done < (size_t)st.st_size) {
		ssize_t n = pread(d->fd, d->copy + done, (size_t)st.st_size - done, (off_t)done);

		if (n <= 0)
			return fail_errno(path);
		done += (size_t)n;
	}
	d->size = (size_t)st.st_size;
	return 0;
}

/* One line "C t page..." of the pages that changed since the last call. */
static int diff_commit(struct diff *d, uint32_t t)
{
	unsigned char buf[PAGE];
	struct stat st;
	size_t size;

	if (fstat(d->fd, &st))
		return fail_errno("fstat");
	size = (size_t)st.st_size & ~(size_t)(PAGE - 1);
	if (size > d->size && grow_copy(d, size))
		return fail_errno("diff copy");
	d->size = size > d->size ? size : d->size;
	fprintf(d->log, "C %" PRIu32, t);
	for (size_t off = 0; off < size; off += PAGE) {
		if (pread(d->fd, buf, PAGE, (off_t)off) != PAGE)
			return fail_errno("pread");
		if (!memcmp(d->copy + off, buf, PAGE))
			continue;
		memcpy(d->copy + off, buf, PAGE);
		fprintf(d->log, " %zu", off / PAGE);
	}
	fputc('\n', d->log);
	fflush(d->log);
	return 0;
}

static int put_txn(void *db, uint32_t t)
{
	char kbuf[16], vbuf[DB_VALUE_LEN];
	uint32_t count = t + 1;

	if (ops->begin(db))
		return 1;
	for (unsigned i = 0; i < DB_KEYS_PER_TXN; i++) {
		uint32_t k = (t * DB_KEYS_PER_TXN + i) % ops->nkeys;

		snprintf(kbuf, sizeof(kbuf), "key%06" PRIu32, k);	/* DB_KEY_LEN: k < 10^6 */
		make_value(t, k, vbuf);
		if (ops->put(db, kbuf, DB_KEY_LEN, vbuf, DB_VALUE_LEN))
			return 1;
	}
	if (ops->put(db, DB_TXN_KEY, sizeof(DB_TXN_KEY) - 1, &count, sizeof(count)))
		return 1;
	return ops->commit(db);
}

static int write_stamp(int fd, uint32_t count)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%10" PRIu32 "\n", count);

	return pwrite(fd, buf, (size_t)n, 0) == n ? 0 : -errno;
}

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int run_commits(void *db, uint32_t start, uint32_t n, int sfd, struct diff *d,
		       unsigned pause)
{
	for (uint32_t t = start; t < start + n; t++) {
		if (put_txn(db, t)) {
			fprintf(stderr, "FAIL %s: transaction %" PRIu32 "\n", ops->name, t);
			return 1;
		}
		if (d->log && diff_commit(d, t))
			return 1;
		if (sfd >= 0 && write_stamp(sfd, t + 1))
			return fail_errno("stamp");
		pause_ms(pause);
	}
	return 0;
}

static int cmd_run(const char *path, uint32_t n, const char *stamp, const char *difflog,
		   unsigned pause)
{
	struct diff d = { .fd = -1 };
	char buf[PATH_LEN];
	int sfd = -1, ret = 1;
	uint32_t start;
	void *db;
	double t0;

	if (ops->open(path, 0, &db))
		return 1;
	if (read_count(db, &start))
		goto out;
	if (stamp) {
		sfd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (sfd < 0 || write_stamp(sfd, start)) {
			fail_errno(stamp);
			goto out;
		}
	}
	if (difflog && diff_open(&d, data_file(path, buf), difflog))
		goto out;
	t0 = now();
	if (run_commits(db, start, n, sfd, &d, pause))
		goto out;
	t0 = now() - t0;
	printf("%s: %" PRIu32 " commits in %.3f s: %.0f commits/s (transactions %" PRIu32
	       "..%" PRIu32 "%s)\n",
	       ops->name, n, t0, n / t0, start, start + n - 1, d.log ? ", page diff on" : "");
	ret = 0;
out:
	if (d.log && fclose(d.log))
		ret = fail_errno(difflog);
	if (d.fd >= 0)
		close(d.fd);
	free(d.copy);
	if (sfd >= 0)
		close(sfd);
	ops->close(db);
	return ret;
}

struct check {
	int64_t writer[DB_MAX_KEYS];	/* which transaction last wrote each key; -1: none */
	unsigned seen;
	unsigned bad;
};

static int check_record(const void *key, size_t klen, const void *val, size_t vlen, void *arg)
{
	char kbuf[DB_KEY_LEN + 1], vbuf[DB_VALUE_LEN];
	struct check *c = arg;
	unsigned k;
	int n = 0;

	if (klen == sizeof(DB_TXN_KEY) - 1 && !memcmp(key, DB_TXN_KEY, klen))
		return 0;
	if (klen == DB_KEY_LEN) {
		memcpy(kbuf, key, klen);
		kbuf[klen] = 0;
	}
	if (klen != DB_KEY_LEN || sscanf(kbuf, "key%6u%n", &k, &n) != 1 || n != DB_KEY_LEN ||
	    k >= ops->nkeys || c->writer[k] < 0) {
		fprintf(stderr, "FAIL %s: verify: unexpected key \"%.*s\"\n", ops->name, (int)klen,
			(const char *)key);
		c->bad++;
		return 0;
	}
	make_value((uint32_t)c->writer[k], k, vbuf);
	c->seen++;
	if (vlen == DB_VALUE_LEN && !memcmp(val, vbuf, DB_VALUE_LEN))
		return 0;
	fprintf(stderr, "FAIL %s: verify: %s: expected the value of transaction %" PRId64
		", found \"%.*s\"\n", ops->name, kbuf, c->writer[k], (int)vlen, (const char *)val);
	c->bad++;
	return 0;
}

static int check_records(void *db, uint32_t count)
{
	static struct check c;
	unsigned want = 0;

	for (unsigned k = 0; k < ops->nkeys; k++)
		c.writer[k] = -1;
	for (uint32_t t = 0; t < count; t++)
		for (unsigned i = 0; i < DB_KEYS_PER_TXN; i++)
			c.writer[(t * DB_KEYS_PER_TXN + i) % ops->nkeys] = t;
	for (unsigned k = 0; k < ops->nkeys; k++)
		want += c.writer[k] >= 0;
	if (ops->each(db, check_record, &c))
		return 1;
	if (c.seen != want) {
		fprintf(stderr, "FAIL %s: verify: %u keys, expected %u\n", ops->name, c.seen, want);
		c.bad++;
	}
	if (!c.bad)
		printf("%s: verify: %" PRIu32 " transactions, %u keys, all as written\n", ops->name,
		       count, c.seen);
	return c.bad ? 1 : 0;
}

static int read_stamp(const char *stamp, uint32_t *val)
{
	FILE *f = fopen(stamp, "re");
	int ok = f && fscanf(f, "%" SCNu32, val) == 1;

	if (f)
		fclose(f);
	if (ok)
		return 0;
	fprintf(stderr, "FAIL %s: %s: no count in it\n", ops->name, stamp);
	return 1;
}

static int cmd_verify(const char *path, const char *stamp)
{
	uint32_t count, stamped;
	int ret = 1;
	void *db;

	if (ops->open(path, 1, &db))
		return 1;
	if (read_count(db, &count))
		goto out;
	if (stamp) {
		if (read_stamp(stamp, &stamped))
			goto out;
		if (count != stamped && count != stamped + 1) {
			fprintf(stderr, "FAIL %s: verify: %" PRIu32
				" transactions in the database, the stamp says %" PRIu32 "\n",
				ops->name, count, stamped);
			goto out;
		}
	}
	ret = check_records(db, count);
out:
	ops->close(db);
	return ret;
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s create DB\n"
		"       %s run [-s STAMP] [-d DIFFLOG] [-p MS] DB N\n"
		"       %s verify [-s STAMP] DB\n",
		prog, prog, prog);
	return 2;
}

int db_main(int argc, char **argv, const struct db_ops *db_ops)
{
	const char *stamp = NULL, *difflog = NULL, *cmd;
	unsigned long n, pause = 0;
	char *end;
	int opt;

	ops = db_ops;
	if (argc < 2 || !ops->nkeys || ops->nkeys > DB_MAX_KEYS)
		return usage(argv[0]);
	cmd = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "s:d:p:")) != -1) {
		if (opt == 's')
			stamp = optarg;
		else if (opt == 'd')
			difflog = optarg;
		else if (opt == 'p' && (pause = strtoul(optarg, &end, 10)) <= 10000 && !*end)
			continue;
		else
			return usage(argv[0]);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "create") && optind == argc - 1 && !stamp && !difflog && !pause)
		return cmd_create(argv[optind]);
	if (!strcmp(cmd, "verify") && optind == argc - 1 && !difflog && !pause)
		return cmd_verify(argv[optind], stamp);
	if (strcmp(cmd, "run") || optind != argc - 2)
		return usage(argv[0]);
	errno = 0;
	n = strtoul(argv[optind + 1], &end, 10);
	if (errno || *end || !n || n > UINT32_MAX / 2)
		return usage(argv[0]);
	return cmd_run(argv[optind], (uint32_t)n, stamp, difflog, (unsigned)pause);
}
