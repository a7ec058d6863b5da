// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/check.c - daxtrackd --check: the configuration and every region it
 * names checked as a start would open them, without serving: a line a
 * region on standard output, exit 1 if one would not be served.  Nothing
 * is created: a missing file that a start would create is reported so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "daxtrackd.h"
#include "region.h"

/* One region: 0 if a start would serve it, else -errno (the reason printed). */
static int check_region(const struct dt_config_region *cr)
{
	struct dt_region *r;
	char err[512] = "";
	struct stat st;
	int ret;

	if (lstat(cr->path, &st) && errno == ENOENT) {
		if (cr->create && cr->size) {
			printf("region \"%s\": %s: does not exist: a start creates it (%llu bytes)\n",
			       cr->name, cr->path, (unsigned long long)cr->size);
			return 0;
		}
		printf("region \"%s\": %s: does not exist and %s\n", cr->name, cr->path,
		       cr->create ? "no size is configured to create it" : "create = no");
		return -ENOENT;
	}
	ret = dt_region_open(cr, &r, err, sizeof(err));
	if (ret) {
		printf("%s\n", err[0] ? err : strerror(-ret));
		return ret;
	}
	if (r->grows)
		printf("region \"%s\": %s: ok, %llu bytes, follows its file up to %llu\n",
		       cr->name, cr->path, (unsigned long long)dt_region_bytes(r),
		       (unsigned long long)r->size);
	else
		printf("region \"%s\": %s: ok, %llu bytes\n", cr->name, cr->path,
		       (unsigned long long)r->size);
	dt_region_close(r);
	return 0;
}

int check_config(struct daemon *d)
{
	unsigned i, bad = 0;
	bool defaults;

	dt_config_init(&d->cfg);
	if (load_config(d, &d->cfg, &defaults))
		return 1;
	printf("configuration %s: %u region%s\n", defaults ? "(embedded default)" : d->cfg.source,
	       d->cfg.nregions, d->cfg.nregions == 1 ? "" : "s");
	for (i = 0; i < d->cfg.nregions; i++)
		bad += check_region(&d->cfg.regions[i]) != 0;
	if (bad)
		printf("%u of %u region%s would not be served\n", bad, d->cfg.nregions,
		       d->cfg.nregions == 1 ? "" : "s");
	dt_config_free(&d->cfg);
	return bad ? 1 : 0;
}
