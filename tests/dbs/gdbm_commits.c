// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gdbm_commits.c - a plain GDBM program, written as any GDBM user would: it
 * includes nothing of daxtrack.  The GDBM test (tests/dbs/test_db.sh) runs it
 * unmodified under the LD_PRELOAD shim and without it.  The workload and its
 * commands are db-commits.h's; here is GDBM's part of it.
 *
 * GDBM 1.23 maps its file (MAP_SHARED, read-write) and stores through the
 * mapping; gdbm_store() writes the record, then the changed bucket, directory
 * and header.  A commit here is DB_KEYS_PER_TXN + 1 gdbm_store() calls and
 * gdbm_sync(), which is msync(MS_SYNC | MS_INVALIDATE) of the mapping.  The
 * file grows by write(2) of zeroes at its end, a block (4096 bytes) at a
 * time, and is mapped again, whole, after each growth.
 */
#include "db-commits.h"

#include <gdbm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
	fprintf(stderr, "FAIL gdbm_commits: %s: %s\n", what, gdbm_strerror(gdbm_errno));
	return 1;
}

static int g_open(const char *path, int rdonly, void **db)
{
	*db = gdbm_open(path, 0, rdonly ? GDBM_READER : GDBM_WRITER, 0644, NULL);
	return *db ? 0 : fail(path);
}

static int g_create(const char *path)
{
	GDBM_FILE f = gdbm_open(path, 0, GDBM_NEWDB, 0644, NULL);

	if (!f)
		return fail(path);
	return gdbm_close(f) ? fail("gdbm_close") : 0;
}

static void g_close(void *db)
{
	if (gdbm_close(db))
		fail("gdbm_close");
}

static int g_put(void *db, const void *key, size_t klen, const void *val, size_t vlen)
{
	datum k = { (char *)key, (int)klen }, v = { (char *)val, (int)vlen };

	return gdbm_store(db, k, v, GDBM_REPLACE) ? fail("gdbm_store") : 0;
}

static int g_begin(void *db)
{
	(void)db;
	return 0;
}

static int g_commit(void *db)
{
	return gdbm_sync(db) ? fail("gdbm_sync") : 0;
}

static int g_get(void *db, const char *key, void **val, size_t *vlen)
{
	datum k = { (char *)key, (int)strlen(key) }, v = gdbm_fetch(db, k);

	*val = v.dptr;
	*vlen = v.dptr ? (size_t)v.dsize : 0;
	if (v.dptr || gdbm_errno == GDBM_ITEM_NOT_FOUND)
		return 0;
	return fail("gdbm_fetch");
}

static int g_each(void *db, int (*fn)(const void *, size_t, const void *, size_t, void *),
		  void *arg)
{
	datum k = gdbm_firstkey(db), next;
	int rc = 0;

	while (k.dptr && !rc) {
		datum v = gdbm_fetch(db, k);

		if (!v.dptr) {
			free(k.dptr);
			return fail("gdbm_fetch");
		}
		rc = fn(k.dptr, (size_t)k.dsize, v.dptr, (size_t)v.dsize, arg);
		free(v.dptr);
		next = gdbm_nextkey(db, k);
		free(k.dptr);
		k = next;
	}
	if (!rc && gdbm_errno != GDBM_ITEM_NOT_FOUND)
		return fail("gdbm_nextkey");
	free(k.dptr);
	return rc;
}

static const struct db_ops gdbm_ops = {
	.name = "gdbm_commits",
	.nkeys = DB_MAX_KEYS,
	.create = g_create,
	.open = g_open,
	.close = g_close,
	.put = g_put,
	.begin = g_begin,
	.commit = g_commit,
	.get = g_get,
	.each = g_each,
};

int main(int argc, char **argv)
{
	return db_main(argc, argv, &gdbm_ops);
}
