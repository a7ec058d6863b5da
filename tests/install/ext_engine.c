// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ext_engine.c - a program embedding the engine, built only from the
 * installed libdaxtrack (headers, shared library, pkg-config file, which
 * must bring -lurcu-memb): .ci/install-check.sh compiles it outside the
 * build tree.
 *
 * A tree: a 2MiB entry and a 4KiB one, looked up.  A mapping: a PTE and a
 * PMD fault, both marked dirty and written back through a counting flush
 * op.  Prints "ext_engine: ok" and exits 0, or names the failure, exit 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include <daxtrack/mapping.h>
#include <daxtrack/tree.h>

static uint64_t flushed;

static int sector_of(void *arg __attribute__((unused)), uint64_t pgoff,
		     unsigned order __attribute__((unused)), uint64_t *sector)
{
	*sector = pgoff * 8;
	return 0;
}

static void count_flush(void *arg __attribute__((unused)),
			uint64_t offset __attribute__((unused)), uint64_t len)
{
	flushed += len;
}

static int fail(const char *what)
{
	fprintf(stderr, "ext_engine: %s\n", what);
	return 1;
}

static int check_tree(void)
{
	struct dt_tree *t = dt_tree_new();
	int ok;

	if (!t)
		return fail("dt_tree_new failed");
	ok = dt_tree_insert(t, 512, 9, dt_value(16)) == 0 &&
	     dt_tree_insert(t, 3, 0, dt_value(32)) == 0 &&
	     dt_tree_lookup(t, 1000) == dt_value(16) && dt_tree_lookup(t, 3) == dt_value(32) &&
	     dt_tree_lookup(t, 4) == NULL;
	dt_tree_free(t);
	return ok ? 0 : fail("tree insert/lookup gave wrong entries");
}

static int check_mapping(void)
{
	static const struct dt_flush_ops ops = { .flush = count_flush };
	struct dt_mapping *m = dt_mapping_new(4096, true, sector_of, NULL);
	struct dt_fault res;
	int ok;

	if (!m)
		return fail("dt_mapping_new failed");
	ok = dt_mapping_fault(m, 7, DT_PTE, true, &res) == 0 &&
	     dt_mapping_fault(m, 1024, DT_PMD, true, &res) == 0 &&
	     dt_mapping_mark_dirty(m, 7, 7) == 0 && dt_mapping_mark_dirty(m, 1030, 1030) == 0 &&
	     dt_mapping_writeback(m, 0, 4095, &ops, NULL, NULL) == 0;
	dt_mapping_free(m);
	if (!ok)
		return fail("mapping fault/mark_dirty/writeback failed");
	if (flushed != 4096 + (2u << 20))
		return fail("writeback flushed the wrong number of bytes");
	return 0;
}

int main(void)
{
	int err;

	urcu_memb_register_thread();
	err = check_tree() || check_mapping();
	urcu_memb_unregister_thread();
	if (err)
		return 1;
	printf("ext_engine: ok (fan-out %u)\n", 1u << dt_tree_map_shift());
	return 0;
}
