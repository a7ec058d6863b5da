// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tdb_commits.c - a plain TDB program, written as any TDB user would: it
 * includes nothing of daxtrack.  The TDB test (tests/dbs/test_db.sh) runs it
 * unmodified under the LD_PRELOAD shim and without it.  The workload and its
 * commands are db-commits.h's; here is TDB's part of it.
 *
 * Samba's TDB 1.4 maps its file (MAP_SHARED, read-write).  A commit here is
 * tdb_transaction_start(), DB_KEYS_PER_TXN + 1 tdb_store() calls and
 * tdb_transaction_commit(), which writes the recovery area, then the
 * transaction's blocks, through the mapping, with fdatasync(2) and msync(2)
 * of the written range after each step (four of each a commit).  The file
 * grows by fallocate(2) (ftruncate where that fails) to a multiple of the
 * page size and is mapped again, whole; a new database is 696 bytes until
 * its first transaction: create ends with one (the count, 0), so that the
 * file is a multiple of 4096 bytes.
 */
#include "db-commits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <tdb.h>

static int fail(struct tdb_context *tdb, const char *what)
{
	fprintf(stderr, "FAIL tdb_commits: %s: %s\n", what,
		tdb ? tdb_errorstr(tdb) : strerror(errno));
	return 1;
}

static int t_open(const char *path, int rdonly, void **db)
{
	*db = tdb_open(path, 0, TDB_DEFAULT, rdonly ? O_RDONLY : O_RDWR, 0);
	return *db ? 0 : fail(NULL, path);
}

static void t_close(void *db)
{
	if (tdb_close(db))
		fprintf(stderr, "FAIL tdb_commits: tdb_close\n");
}

static int t_put(void *db, const void *key, size_t klen, const void *val, size_t vlen)
{
	TDB_DATA k = { (unsigned char *)key, klen }, v = { (unsigned char *)val, vlen };

	return tdb_store(db, k, v, TDB_REPLACE) ? fail(db, "tdb_store") : 0;
}

static int t_begin(void *db)
{
	return tdb_transaction_start(db) ? fail(db, "tdb_transaction_start") : 0;
}

static int t_commit(void *db)
{
	return tdb_transaction_commit(db) ? fail(db, "tdb_transaction_commit") : 0;
}

static int t_create(const char *path)
{
	struct tdb_context *tdb = tdb_open(path, 0, TDB_DEFAULT, O_RDWR | O_CREAT | O_TRUNC,
					   0644);
	uint32_t zero = 0;
	int rc;

	if (!tdb)
		return fail(NULL, path);
	rc = t_begin(tdb);
	if (!rc)
		rc = t_put(tdb, DB_TXN_KEY, sizeof(DB_TXN_KEY) - 1, &zero, sizeof(zero));
	if (!rc)
		rc = t_commit(tdb);
	t_close(tdb);
	return rc;
}

static int t_get(void *db, const char *key, void **val, size_t *vlen)
{
	TDB_DATA k = { (unsigned char *)key, strlen(key) }, v = tdb_fetch(db, k);

	*val = v.dptr;
	*vlen = v.dptr ? v.dsize : 0;
	if (v.dptr || tdb_error(db) == TDB_ERR_NOEXIST)
		return 0;
	return fail(db, "tdb_fetch");
}

struct each {
	int (*fn)(const void *, size_t, const void *, size_t, void *);
	void *arg;
	int rc;
};

static int t_each_one(struct tdb_context *tdb, TDB_DATA k, TDB_DATA v, void *arg)
{
	struct each *e = arg;

	(void)tdb;
	e->rc = e->fn(k.dptr, k.dsize, v.dptr, v.dsize, e->arg);
	return e->rc;
}

static int t_each(void *db, int (*fn)(const void *, size_t, const void *, size_t, void *),
		  void *arg)
{
	struct each e = { fn, arg, 0 };

	if (tdb_traverse_read(db, t_each_one, &e) < 0 && !e.rc)
		return fail(db, "tdb_traverse_read");
	return e.rc;
}

static const struct db_ops tdb_ops = {
	.name = "tdb_commits",
	.nkeys = DB_MAX_KEYS,
	.create = t_create,
	.open = t_open,
	.close = t_close,
	.put = t_put,
	.begin = t_begin,
	.commit = t_commit,
	.get = t_get,
	.each = t_each,
};

int main(int argc, char **argv)
{
	return db_main(argc, argv, &tdb_ops);
}
