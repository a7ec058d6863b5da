// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lmdb_commits.c - a plain LMDB program, written as any LMDB user would: it
 * includes nothing of daxtrack.  The LMDB test runs it unmodified
 * under the LD_PRELOAD shim (libdaxtrack-preload.so) and without it (the
 * kernel's msync), on an ext4 -o dax file in the dax-vm guest
 * (tests/lmdb/test_lmdb_guest.sh).  The workload, its commands (create,
 * run, verify), the stamp and the page diff are tests/dbs/db-commits.h's;
 * here is LMDB's part of it.
 *
 * The environment is DIR/data.mdb (and DIR/lock.mdb), opened with
 * MDB_WRITEMAP and a map of 4 MiB: a commit stores in place and ends in
 * msync(2) of the whole map and then of the meta page.  1024 keys
 * (data.mdb is 4 MiB from its creation, written in full by create: LMDB
 * refuses a zero-filled file, so the environment is made before a daemon
 * takes it).
 */
#include "db-commits.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAPSIZE (4u << 20)

struct lmdb {
	MDB_env *env;
	MDB_dbi dbi;
	MDB_txn *txn;		/* the open write transaction, or NULL */
	unsigned flags;		/* 0 or MDB_RDONLY */
};

static int fail(const char *what, int rc)
{
	fprintf(stderr, "FAIL lmdb_commits: %s: %s\n", what, mdb_strerror(rc));
	return 1;
}

static void l_data_file(const char *dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/data.mdb", dir);
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

static int l_create(const char *dir)
{
	MDB_env *env;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "FAIL lmdb_commits: %s: mkdir: %s\n", dir, strerror(errno));
		return 1;
	}
	if (open_env(dir, 0, &env))
		return 1;
	mdb_env_close(env);
	return 0;
}

static int l_open(const char *dir, int rdonly, void **db)
{
	struct lmdb *l = calloc(1, sizeof(*l));
	MDB_txn *txn;
	int rc;

	if (!l)
		return fail("calloc", ENOMEM);
	l->flags = rdonly ? MDB_RDONLY : 0;
	if (open_env(dir, l->flags, &l->env)) {
		free(l);
		return 1;
	}
	rc = mdb_txn_begin(l->env, NULL, l->flags, &txn);
	if (!rc) {
		rc = mdb_dbi_open(txn, NULL, 0, &l->dbi);
		rc = rc ? (mdb_txn_abort(txn), rc) : mdb_txn_commit(txn);
	}
	*db = l;
	return rc ? fail("mdb_dbi_open", rc) : 0;
}

static void l_close(void *db)
{
	struct lmdb *l = db;

	if (l->txn)
		mdb_txn_abort(l->txn);
	mdb_env_close(l->env);
	free(l);
}

static int l_begin(void *db)
{
	struct lmdb *l = db;
	int rc = mdb_txn_begin(l->env, NULL, 0, &l->txn);

	return rc ? fail("mdb_txn_begin", rc) : 0;
}

static int l_put(void *db, const void *key, size_t klen, const void *val, size_t vlen)
{
	struct lmdb *l = db;
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };
	int rc = mdb_put(l->txn, l->dbi, &k, &v, 0);

	return rc ? fail("mdb_put", rc) : 0;
}

static int l_commit(void *db)
{
	struct lmdb *l = db;
	int rc = mdb_txn_commit(l->txn);

	l->txn = NULL;
	return rc ? fail("mdb_txn_commit", rc) : 0;
}

static int l_get(void *db, const char *key, void **val, size_t *vlen)
{
	struct lmdb *l = db;
	MDB_val k = { strlen(key), (void *)key }, v;
	MDB_txn *txn;
	int rc = mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn);

	*val = NULL;
	*vlen = 0;
	if (rc)
		return fail("mdb_txn_begin", rc);
	rc = mdb_get(txn, l->dbi, &k, &v);
	if (!rc) {
		*val = malloc(v.mv_size ? v.mv_size : 1);
		if (*val) {
			memcpy(*val, v.mv_data, v.mv_size);
			*vlen = v.mv_size;
		}
		rc = *val ? 0 : ENOMEM;
	}
	mdb_txn_abort(txn);
	return rc && rc != MDB_NOTFOUND ? fail("mdb_get", rc) : 0;
}

static int l_each(void *db, int (*fn)(const void *, size_t, const void *, size_t, void *),
		  void *arg)
{
	struct lmdb *l = db;
	MDB_cursor *cur;
	MDB_val k, v;
	MDB_txn *txn;
	int rc = mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn), ret = 0;

	if (rc)
		return fail("mdb_txn_begin", rc);
	rc = mdb_cursor_open(txn, l->dbi, &cur);
	if (rc) {
		mdb_txn_abort(txn);
		return fail("mdb_cursor_open", rc);
	}
	while (!ret && !(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)))
		ret = fn(k.mv_data, k.mv_size, v.mv_data, v.mv_size, arg);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (!ret && rc != MDB_NOTFOUND)
		return fail("mdb_cursor_get", rc);
	return ret;
}

static const struct db_ops lmdb_ops = {
	.name = "lmdb_commits",
	.nkeys = 1024,
	.data_file = l_data_file,
	.create = l_create,
	.open = l_open,
	.close = l_close,
	.put = l_put,
	.begin = l_begin,
	.commit = l_commit,
	.get = l_get,
	.each = l_each,
};

int main(int argc, char **argv)
{
	return db_main(argc, argv, &lmdb_ops);
}
