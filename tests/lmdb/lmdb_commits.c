// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lmdb_commits.c - a plain LMDB program, written as any LMDB user would: it
 * includes nothing of daxtrack.  The LMDB test runs it unmodified
 * under the LD_PRELOAD shim (libdaxtrack-preload.so) and without it (the
 * kernel's msync), on an ext4 -o dax file in the dax-vm guest
 * (tests/lmdb/test_lmdb_guest.sh).
 *
 *   lmdb_commits create DIR
 *   lmdb_commits run [-s STAMP] [-d DIFFLOG] [-p MS] DIR N
 *   lmdb_commits verify [-s STAMP] DIR
 *
 * The environment is DIR/data.mdb (and DIR/lock.mdb), opened with
 * MDB_WRITEMAP and a map of 4 MiB: a commit stores in place and ends in
 * msync(2) of the whole map and then of the meta page.
 *
 * create: makes the environment, then writes every page of data.mdb that is
 *   still a hole with zeroes (the same content, blocks allocated: on a DAX
 *   file system the first store to a hole costs a journal commit), so that
 *   the file exists, is valid for LMDB and is written in full before a
 *   daemon takes it as a region.
 * run: N transactions after the last one committed (the "#txn" record says
 *   how many were); transaction t puts KEYS_PER_TXN keys, key k being
 *   (t * KEYS_PER_TXN + i) % NKEYS, with a value derived from (t, k), and
 *   "#txn" = t + 1.  Prints "lmdb_commits: N commits in S s: C commits/s".
 *   -s STAMP: after each commit, STAMP holds the count of committed
 *   transactions (what must be there after a crash).  -d DIFFLOG: after each
 *   commit, one line "C t P..." appended to DIFFLOG (O_APPEND, one write a
 *   line) naming the 4 KiB pages of data.mdb whose content changed in that
 *   commit (a copy of the map is compared), for the trace checker
 *   (lmdb-trace-check.py): given the shim's trace file, the lines land
 *   between its own in the order of events.  Slows the commits down.
 *   -p MS: sleep MS milliseconds after each commit (a run long enough for a
 *   test to do something in the middle of it).
 * verify: opens the environment read-only and checks every record against
 *   what the committed transactions put; with -s, that the count of
 *   committed transactions is the stamp's or one more (killed between the
 *   commit and the stamp).
 *
 * Exit status: 0 on success, 1 on a failed check or LMDB error (said on
 * stderr with "FAIL"), 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define MAPSIZE (4u << 20)
#define PAGE 4096u
#define KEYS_PER_TXN 8u
#define NKEYS 1024u
#define VALUE_LEN 100u
#define TXN_KEY "#txn"

struct diff {
	FILE *log;
	const unsigned char *map;
	unsigned char *copy;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "FAIL lmdb_commits: %s: %s\n", what, mdb_strerror(rc));
	return 1;
}

/* The value of key @k as transaction @t writes it: text, then a hash stream. */
static void make_value(uint32_t t, uint32_t k, char *v)
{
	uint64_t x = ((uint64_t)t << 32 | k) * 0x9e3779b97f4a7c15ULL;
	int n = snprintf(v, VALUE_LEN, "t=%" PRIu32 " k=%" PRIu32 " ", t, k);

	for (unsigned i = (unsigned)n; i < VALUE_LEN; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		v[i] = (char)('a' + (x >> 59));
	}
}

static int open_env(const char *dir, unsigned flags, MDB_env **env)
{
	int rc = mdb_env_create(env);

	if (rc)
		return fail("mdb_env_create", rc);
	rc = mdb_env_set_mapsize(*env, MAPSIZE);
	if (!rc)
		rc = mdb_env_open(*env, dir, flags | MDB_WRITEMAP, 0644);
	if (rc) {
		fprintf(stderr, "FAIL lmdb_commits: %s: mdb_env_open: %s\n", dir, mdb_strerror(rc));
		mdb_env_close(*env);
		return 1;
	}
	return 0;
}

/* The count of committed transactions ("#txn"), 0 in a new environment. */
static int read_count(MDB_txn *txn, MDB_dbi dbi, uint32_t *count)
{
	MDB_val key = { sizeof(TXN_KEY) - 1, TXN_KEY }, val;
	int rc = mdb_get(txn, dbi, &key, &val);

	*count = 0;
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (val.mv_size != sizeof(*count))
		return MDB_CORRUPTED;
	memcpy(count, val.mv_data, sizeof(*count));
	return 0;
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
	for (off_t off = 0; off < st.st_size; off += PAGE) {
		if (pread(fd, buf, PAGE, off) != PAGE)
			goto err;
		if (!memcmp(buf, zero, PAGE) && pwrite(fd, zero, PAGE, off) != PAGE)
			goto err;
	}
	if (fsync(fd))
		goto err;
	close(fd);
	return 0;
err:
	fprintf(stderr, "FAIL lmdb_commits: %s: write zeroes: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return 1;
}

static int cmd_create(const char *dir)
{
	char path[4096];
	MDB_env *env;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "FAIL lmdb_commits: %s: mkdir: %s\n", dir, strerror(errno));
		return 1;
	}
	if (open_env(dir, 0, &env))
		return 1;
	mdb_env_close(env);
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	if (fill_holes(path))
		return 1;
	printf("lmdb_commits: created %s (%u KiB map)\n", path, MAPSIZE >> 10);
	return 0;
}

/* The address of the mapping of @path's file in /proc/self/maps, or NULL. */
static const unsigned char *find_map(const char *path)
{
	unsigned long start, end, ino, off;
	unsigned int maj, min;
	const unsigned char *found = NULL;
	char line[4608];
	struct stat st;
	FILE *f;

	if (stat(path, &st))
		return NULL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &start, &end, &off, &maj, &min,
			   &ino) != 6)
			continue;
		if (ino == st.st_ino && makedev(maj, min) == st.st_dev && !off &&
		    end - start >= MAPSIZE)
			found = (const unsigned char *)start;
	}
	fclose(f);
	return found;
}

static int diff_open(struct diff *d, const char *dir, const char *logpath)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	d->map = find_map(path);
	if (!d->map) {
		fprintf(stderr, "FAIL lmdb_commits: %s: no mapping of it in /proc/self/maps\n",
			path);
		return 1;
	}
	d->copy = malloc(MAPSIZE);
	d->log = fopen(logpath, "ae");
	if (!d->copy || !d->log) {
		fprintf(stderr, "FAIL lmdb_commits: %s: %s\n", logpath, strerror(errno));
		return 1;
	}
	memcpy(d->copy, d->map, MAPSIZE);
	return 0;
}

/* One line "C t page..." of the pages that changed since the last call. */
static void diff_commit(struct diff *d, uint32_t t)
{
	fprintf(d->log, "C %" PRIu32, t);
	for (unsigned p = 0; p < MAPSIZE / PAGE; p++) {
		size_t off = (size_t)p * PAGE;

		if (!memcmp(d->copy + off, d->map + off, PAGE))
			continue;
		memcpy(d->copy + off, d->map + off, PAGE);
		fprintf(d->log, " %u", p);
	}
	fputc('\n', d->log);
	fflush(d->log);
}

static int put_txn(MDB_env *env, MDB_dbi dbi, uint32_t t)
{
	MDB_val key, val;
	char kbuf[16], vbuf[VALUE_LEN];
	uint32_t count = t + 1;
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);

	if (rc)
		return rc;
	for (unsigned i = 0; i < KEYS_PER_TXN && !rc; i++) {
		uint32_t k = (t * KEYS_PER_TXN + i) % NKEYS;

		key.mv_size = (size_t)snprintf(kbuf, sizeof(kbuf), "key%06" PRIu32, k);
		key.mv_data = kbuf;
		make_value(t, k, vbuf);
		val.mv_size = VALUE_LEN;
		val.mv_data = vbuf;
		rc = mdb_put(txn, dbi, &key, &val, 0);
	}
	key.mv_size = sizeof(TXN_KEY) - 1;
	key.mv_data = TXN_KEY;
	val.mv_size = sizeof(count);
	val.mv_data = &count;
	if (!rc)
		rc = mdb_put(txn, dbi, &key, &val, 0);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

static int write_stamp(int fd, uint32_t count)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%10" PRIu32 "\n", count);

	return pwrite(fd, buf, (size_t)n, 0) == n ? 0 : -errno;
}

static int begin_run(MDB_env *env, MDB_dbi *dbi, uint32_t *start)
{
	MDB_txn *txn = NULL;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);

	if (!rc)
		rc = mdb_dbi_open(txn, NULL, 0, dbi);
	if (!rc)
		rc = read_count(txn, *dbi, start);
	if (rc) {
		if (txn)
			mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmd_run(const char *dir, uint32_t n, const char *stamp, const char *difflog,
		   unsigned pause)
{
	struct diff d = { 0 };
	int sfd = -1, rc, ret = 1;
	uint32_t start, t;
	MDB_env *env;
	MDB_dbi dbi;
	double t0;

	if (open_env(dir, 0, &env))
		return 1;
	rc = begin_run(env, &dbi, &start);
	if (rc) {
		fail("read #txn", rc);
		goto out;
	}
	if (stamp) {
		sfd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (sfd < 0 || write_stamp(sfd, start)) {
			fprintf(stderr, "FAIL lmdb_commits: %s: %s\n", stamp, strerror(errno));
			goto out;
		}
	}
	if (difflog && diff_open(&d, dir, difflog))
		goto out;
	t0 = now();
	for (t = start; t < start + n; t++) {
		rc = put_txn(env, dbi, t);
		if (rc) {
			fprintf(stderr, "FAIL lmdb_commits: transaction %" PRIu32 ": %s\n", t,
				mdb_strerror(rc));
			goto out;
		}
		if (d.log)
			diff_commit(&d, t);
		if (sfd >= 0 && write_stamp(sfd, t + 1)) {
			fprintf(stderr, "FAIL lmdb_commits: %s: %s\n", stamp, strerror(errno));
			goto out;
		}
		pause_ms(pause);
	}
	t0 = now() - t0;
	printf("lmdb_commits: %" PRIu32 " commits in %.3f s: %.0f commits/s (transactions %" PRIu32
	       "..%" PRIu32 "%s)\n",
	       n, t0, n / t0, start, start + n - 1, d.log ? ", page diff on" : "");
	ret = 0;
out:
	if (d.log && fclose(d.log)) {
		fprintf(stderr, "FAIL lmdb_commits: %s: %s\n", difflog, strerror(errno));
		ret = 1;
	}
	free(d.copy);
	if (sfd >= 0)
		close(sfd);
	mdb_env_close(env);
	return ret;
}

/* Which transaction last wrote each key, of the first @count; -1: none. */
static void expected_writers(uint32_t count, int64_t *writer)
{
	for (unsigned k = 0; k < NKEYS; k++)
		writer[k] = -1;
	for (uint32_t t = 0; t < count; t++)
		for (unsigned i = 0; i < KEYS_PER_TXN; i++)
			writer[(t * KEYS_PER_TXN + i) % NKEYS] = t;
}

static int check_record(const MDB_val *key, const MDB_val *val, const int64_t *writer,
			unsigned *seen)
{
	char kbuf[16], vbuf[VALUE_LEN];
	unsigned k;
	int n = 0;

	if (key->mv_size == sizeof(TXN_KEY) - 1 && !memcmp(key->mv_data, TXN_KEY, key->mv_size))
		return 0;
	if (key->mv_size < sizeof(kbuf)) {
		memcpy(kbuf, key->mv_data, key->mv_size);
		kbuf[key->mv_size] = 0;
	}
	if (key->mv_size != 9 || sscanf(kbuf, "key%6u%n", &k, &n) != 1 || n != 9 || k >= NKEYS ||
	    writer[k] < 0) {
		fprintf(stderr, "FAIL lmdb_commits: verify: unexpected key \"%.*s\"\n",
			(int)key->mv_size, (const char *)key->mv_data);
		return 1;
	}
	make_value((uint32_t)writer[k], k, vbuf);
	(*seen)++;
	if (val->mv_size == VALUE_LEN && !memcmp(val->mv_data, vbuf, VALUE_LEN))
		return 0;
	fprintf(stderr,
		"FAIL lmdb_commits: verify: %s: expected the value of transaction %" PRId64
		", found \"%.*s\"\n",
		kbuf, writer[k], (int)val->mv_size, (const char *)val->mv_data);
	return 1;
}

static int check_records(MDB_txn *txn, MDB_dbi dbi, uint32_t count)
{
	static int64_t writer[NKEYS];
	unsigned seen = 0, want = 0, bad = 0;
	MDB_cursor *cur;
	MDB_val key, val;
	int rc;

	expected_writers(count, writer);
	for (unsigned k = 0; k < NKEYS; k++)
		want += writer[k] >= 0;
	rc = mdb_cursor_open(txn, dbi, &cur);
	if (rc)
		return fail("mdb_cursor_open", rc);
	while (!(rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)))
		bad += check_record(&key, &val, writer, &seen);
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return fail("mdb_cursor_get", rc);
	if (seen != want) {
		fprintf(stderr, "FAIL lmdb_commits: verify: %u keys, expected %u\n", seen, want);
		bad++;
	}
	if (!bad)
		printf("lmdb_commits: verify: %" PRIu32 " transactions, %u keys, all as written\n",
		       count, seen);
	return bad ? 1 : 0;
}

static int read_stamp(const char *stamp, uint32_t *val)
{
	FILE *f = fopen(stamp, "re");
	int ok = f && fscanf(f, "%" SCNu32, val) == 1;

	if (f)
		fclose(f);
	if (ok)
		return 0;
	fprintf(stderr, "FAIL lmdb_commits: %s: no count in it\n", stamp);
	return 1;
}

static int cmd_verify(const char *dir, const char *stamp)
{
	uint32_t count, stamped;
	MDB_txn *txn = NULL;
	MDB_env *env;
	MDB_dbi dbi;
	int rc, ret = 1;

	if (open_env(dir, MDB_RDONLY, &env))
		return 1;
	rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (!rc)
		rc = mdb_dbi_open(txn, NULL, 0, &dbi);
	if (!rc)
		rc = read_count(txn, dbi, &count);
	if (rc) {
		fail("read #txn", rc);
		goto out;
	}
	if (stamp) {
		if (read_stamp(stamp, &stamped))
			goto out;
		if (count != stamped && count != stamped + 1) {
			fprintf(stderr,
				"FAIL lmdb_commits: verify: %" PRIu32
				" transactions in the database, the stamp says %" PRIu32 "\n",
				count, stamped);
			goto out;
		}
	}
	ret = check_records(txn, dbi, count);
out:
	if (txn)
		mdb_txn_abort(txn);
	mdb_env_close(env);
	return ret;
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s create DIR\n"
		"       %s run [-s STAMP] [-d DIFFLOG] [-p MS] DIR N\n"
		"       %s verify [-s STAMP] DIR\n",
		prog, prog, prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *stamp = NULL, *difflog = NULL, *cmd;
	unsigned long n, pause = 0;
	char *end;
	int opt;

	if (argc < 2)
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
