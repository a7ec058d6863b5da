/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * db-commits.h - the workload and the checks shared by the unmodified
 * database programs of the shim's tests (tests/lmdb/lmdb_commits,
 * tests/dbs/gdbm_commits, tests/dbs/tdb_commits): each includes nothing of
 * daxtrack and drives its database as any user of it would; this part runs
 * the commits, keeps the stamp and the page diff, and checks the records.
 *
 *   PROG create DB
 *   PROG run [-s STAMP] [-d DIFFLOG] [-p MS] DB N
 *   PROG verify [-s STAMP] DB
 *
 * DB is the database's path (a file; for LMDB its directory), FILE below
 * the file its data lives in (the backend's data_file: for LMDB
 * DB/data.mdb).  The database holds NKEYS keys "key%06u" (the backend's
 * nkeys) and the count of committed transactions under DB_TXN_KEY.
 * Transaction t puts DB_KEYS_PER_TXN keys, key k being (t * DB_KEYS_PER_TXN
 * + i) % NKEYS, with a value derived from (t, k), and the count t + 1, then
 * makes them durable the database's own way (the backend's commit).  The
 * first NKEYS / DB_KEYS_PER_TXN transactions add keys: a file that grows
 * with its records grows.
 *
 * create: makes the database (the backend), writes zeroes over every page
 *   of FILE that reads as zeroes (the same content, blocks allocated: on a
 *   DAX file system the first store to a hole costs a journal commit), and
 *   fails if FILE is not a non-zero multiple of 4096 bytes (what a
 *   daxtrackd region file must be when the daemon starts).
 * run: N transactions after the last one committed.  Prints "PROG: N
 *   commits in S s: C commits/s (...)".  -s STAMP: after each commit, STAMP
 *   holds the count of committed transactions.  -d DIFFLOG: after each
 *   commit, one line "C t P..." appended to DIFFLOG (one write a line) naming
 *   the 4 KiB pages of FILE whose content changed in that commit (a copy
 *   of FILE is compared with pread(2); a page past the copy's end is
 *   compared with zeroes), for tests/preload-trace-check.py: given the
 *   shim's trace file as DIFFLOG, the lines land between its own in the
 *   order of events.  Slows the commits down.
 *   -p MS: sleep MS milliseconds after each commit (and its stamp).
 * verify: opens the database read-only and checks every record against
 *   what the committed transactions put; with -s, that the count is the
 *   stamp's or one more (killed between the commit and the stamp).
 *
 * Exit status: 0 on success, 1 on a failed check or a database error (said
 * on stderr with "FAIL"), 2 on a usage error.
 */
#ifndef DT_TESTS_DB_COMMITS_H
#define DT_TESTS_DB_COMMITS_H

#include <stddef.h>
#include <stdint.h>

#define DB_KEYS_PER_TXN 8u
#define DB_MAX_KEYS 4096u
#define DB_VALUE_LEN 100u
#define DB_KEY_LEN 9u
#define DB_TXN_KEY "#txn"

/* One database.  Every function returns 0 or 1 (a failure, said on stderr). */
struct db_ops {
	const char *name;
	unsigned nkeys;			/* at most DB_MAX_KEYS */
	/* FILE of the database at @path, in @buf (NULL: @path itself). */
	void (*data_file)(const char *path, char *buf, size_t len);
	/* Make an empty database at @path (its count then reads 0, or is absent). */
	int (*create)(const char *path);
	/* Open @path, read-write or read-only; *@db is the handle. */
	int (*open)(const char *path, int rdonly, void **db);
	void (*close)(void *db);
	/* Store @klen bytes of @key -> @vlen bytes of @val in the open transaction. */
	int (*put)(void *db, const void *key, size_t klen, const void *val, size_t vlen);
	/* Begin a transaction; end it durably (the backend's sync). */
	int (*begin)(void *db);
	int (*commit)(void *db);
	/* The value of @key (NULL, 0: none); *@val is the backend's, freed by free(). */
	int (*get)(void *db, const char *key, void **val, size_t *vlen);
	/* Call @fn for every record; stop at its first non-zero return, and return it. */
	int (*each)(void *db, int (*fn)(const void *key, size_t klen, const void *val,
					size_t vlen, void *arg),
		    void *arg);
};

/* The program: parse @argv and run its command with @ops; returns the exit status. */
int db_main(int argc, char **argv, const struct db_ops *ops);

#endif /* DT_TESTS_DB_COMMITS_H */
