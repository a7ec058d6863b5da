// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/configure.c - applying daxtrackd.conf, at start-up and at a reload:
 * load it, apply its limits, open each region it names (namespace match,
 * injected bad blocks, the server's table) with its log lines, and write a
 * region back before it goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "daxtrackd.h"
#include "intent.h"
#include "log.h"

int load_config(struct daemon *d, struct dt_config *cfg, bool *defaults)
{
	char err[512] = "";
	int ret;

	ret = dt_config_load(d->config_path, cfg, err, sizeof(err));
	*defaults = ret == DT_CONFIG_DEFAULTS;
	if (*defaults && d->config_path) {
		dt_log(LOG_ERR, "%s: %s", d->config_path, strerror(ENOENT));
		return -ENOENT;
	}
	if (ret < 0) {
		dt_log(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	return 0;
}

void apply_limits(struct daemon *d, const struct dt_config *cfg)
{
	int level = cfg->log_level + d->verbose;

	dt_log_set_level(level > LOG_DEBUG ? LOG_DEBUG : level);
	d->srv.max_clients = cfg->max_clients;
	d->srv.max_clients_per_uid = cfg->max_clients_per_uid;
	__atomic_store_n(&d->srv.max_dirty, cfg->max_dirty_per_client / 4096, __ATOMIC_RELAXED);
	__atomic_store_n(&d->srv.fsync_slice, cfg->fsync_slice / 4096, __ATOMIC_RELAXED);
	d->srv.max_message = (uint32_t)(cfg->max_message < DT_PROTO_MAX_MSG ? cfg->max_message
									: DT_PROTO_MAX_MSG);
	d->srv.max_ranges = cfg->max_ranges < DT_PROTO_MAX_RANGES ? cfg->max_ranges
								  : DT_PROTO_MAX_RANGES;
	__atomic_store_n(&d->srv.max_dump, cfg->max_dump, __ATOMIC_RELAXED);
}

/* ", namespace namespace0.0 (fsdax pmem0, by block device 259:0)" or why none. */
void fmt_namespace(char *buf, size_t len, const struct dt_region *r)
{
	dev_t dev = r->devdax ? r->st_rdev : r->st_dev;
	const struct dt_namespace *ns;
	char cxl[128];

	if (r->ns_index < 0) {
		if (r->ns_match == DT_REGION_MATCH_NO_NAMESPACES)
			snprintf(buf, len, ", no namespace (no persistent memory namespaces "
				 "known)");
		else
			snprintf(buf, len, ", no namespace (none has device %u:%u)", major(dev),
				 minor(dev));
		return;
	}
	ns = &r->nd->ns[r->ns_index];
	if (!ns->cxl)
		snprintf(cxl, sizeof(cxl), "%s", dt_ns_backing(ns));
	else
		dt_ndctl_fmt_cxl(r->nd, ns, cxl, sizeof(cxl));
	snprintf(buf, len, ", namespace %s (%s %s, by %s device %u:%u), %s", ns->name,
		 dt_proto_ns_mode_name(dt_ns_wire_mode(ns->mode)),
		 ns->devname[0] ? ns->devname : "-",
		 dt_proto_ns_match_name(dt_region_wire_match(r->ns_match)), major(dev),
		 minor(dev), cxl);
}

#define LOG_BAD_MAX	16	/* bad ranges listed in the log, per region */

/* The bad ranges of a region (main thread: the only writer of them). */
void log_badblocks(const struct dt_region *r)
{
	uint64_t bytes = 0;
	unsigned i;

	for (i = 0; i < r->nbad; i++)
		bytes += r->bad[i].len;
	if (!r->nbad)
		return;
	dt_log(LOG_WARNING, "region \"%s\": %s: overlaps %u known bad block range%s, %llu bytes: "
	       "faults and fsyncs touching them fail with EIO", r->name, r->path, r->nbad,
	       r->nbad == 1 ? "" : "s", (unsigned long long)bytes);
	for (i = 0; i < r->nbad && i < LOG_BAD_MAX; i++)
		dt_log(LOG_WARNING, "region \"%s\": bad block range %llu+%llu", r->name,
		       (unsigned long long)r->bad[i].offset, (unsigned long long)r->bad[i].len);
	if (r->nbad > LOG_BAD_MAX)
		dt_log(LOG_WARNING, "region \"%s\": ... and %u more bad block ranges", r->name,
		       r->nbad - LOG_BAD_MAX);
}

/* A file on a DAX file system whose first stores would each commit the journal. */
static void log_unwritten(const struct dt_region *r)
{
	char holes[32], unwritten[32];

	if (!r->fs_dax || (!r->blocks.hole_bytes && !r->blocks.unwritten_bytes))
		return;
	fmt_size(holes, sizeof(holes), r->blocks.hole_bytes);
	fmt_size(unwritten, sizeof(unwritten), r->blocks.unwritten_bytes);
	dt_log(LOG_WARNING,
	       "region \"%s\": %s: holes %s, unwritten (fallocated) extents %s: on "
	       "a DAX file system the first store to each of their blocks commits the file "
	       "system's journal before the page fault returns (write the file in full once, "
	       "e.g. cp --sparse=never to a new file while the daemon is stopped)",
	       r->name, r->path, holes, unwritten);
}

static void log_region(const struct dt_region *r)
{
	char size[32], span[32], grows[64] = "", ns[256];

	fmt_size(size, sizeof(size), dt_region_bytes(r));
	fmt_size(span, sizeof(span), r->size);
	if (r->grows)
		snprintf(grows, sizeof(grows), " (follows its file, up to %s)", span);
	fmt_namespace(ns, sizeof(ns), r);
	dt_log(LOG_INFO,
	       "region \"%s\": %s: %s%s%s, pmem %s, eADR %s, PMD %s, flush %s, geometry %s%s",
	       r->name, r->path, size, grows, r->devdax ? " devdax" : "", r->is_pmem ? "yes" : "no",
	       r->has_eadr ? "yes" : "no", r->pmd_capable ? "yes" : "no",
	       dt_proto_flush_name(dt_region_wire_flush(r->flush_path)), r->geometry, ns);
	if (!r->is_pmem)
		dt_log(LOG_NOTICE, "region \"%s\": %s: not persistent memory: flushing with msync",
		       r->name, r->path);
	log_badblocks(r);
	log_cxl(r, NULL);
	log_unwritten(r);
}

/* The --inject-badblock ranges of a region (testing). */
static int inject_badblocks(struct daemon *d, struct dt_region *r)
{
	unsigned i;
	int ret;

	for (i = 0; i < d->ninjected; i++) {
		const struct injected_bad *b = &d->injected[i];

		if (strcmp(b->region, r->name))
			continue;
		ret = dt_region_inject_badblock(r, b->offset, b->len);
		if (ret) {
			dt_log(LOG_ERR, "region \"%s\": --inject-badblock %llu+%llu: %s", r->name,
			       (unsigned long long)b->offset, (unsigned long long)b->len,
			       ret == -ERANGE ? "past the end of the region" : strerror(-ret));
			return ret;
		}
		dt_log(LOG_NOTICE, "region \"%s\": --inject-badblock %llu+%llu: bad block range "
		       "injected (testing)", r->name, (unsigned long long)b->offset,
		       (unsigned long long)b->len);
	}
	return 0;
}

/* @f: @cr not served for @ret, @err the message logged ('region "NAME": PATH: reason'). */
static void note_failed(struct dt_proto_failed *f, const struct dt_config_region *cr, int ret,
			const char *err)
{
	const char *reason = err[0] ? err : strerror(-ret);
	size_t skip = strlen(cr->name) + strlen(cr->path) + sizeof("region \"\": : ") - 1;

	if (!strncmp(reason, "region \"", 8) && strlen(reason) > skip)
		reason += skip;
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", cr->name);
	snprintf(f->path, sizeof(f->path), "%s", cr->path);
	snprintf(f->reason, sizeof(f->reason), "%s", reason);
	f->error = ret;
}

int open_region(struct daemon *d, const struct dt_config_region *cr, bool is_default,
		struct dt_proto_failed *f)
{
	struct dt_region *r;
	char err[512] = "";
	int ret;

	ret = dt_region_open(cr, &r, err, sizeof(err));
	if (ret) {
		dt_log(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		if (f)
			note_failed(f, cr, ret, err);
		return ret;
	}
	ret = dt_region_set_namespace(r, d->srv.nd);
	if (ret != -ENOMEM)
		ret = inject_badblocks(d, r);
	if (ret) {
		if (ret == -ENOMEM)
			dt_log(LOG_ERR, "region \"%s\": %s", r->name, strerror(ENOMEM));
		dt_region_close(r);
		goto fail;
	}
	recovery_add_region(d, r);
	ret = srv_region_add(&d->srv, r, is_default);
	if (ret) {
		dt_log(LOG_ERR, "region \"%s\": %s", r->name, strerror(-ret));
		intent_destroy(r, true);
		dt_region_close(r);
		goto fail;
	}
	log_region(r);
	return 0;
fail:
	if (f)
		note_failed(f, cr, ret, "");
	return ret;
}

unsigned serve_regions(struct daemon *d, const struct dt_config *cfg, bool is_default,
		       bool reload, int *first)
{
	struct dt_proto_failed *failed = calloc(cfg->nregions + 1, sizeof(*failed));
	unsigned nfailed = 0;
	struct srv_region *sr;
	int ret;

	for (unsigned i = 0; i < cfg->nregions; i++) {
		sr = srv_region_get_name(&d->srv, cfg->regions[i].name);
		if (sr) {
			srv_region_put(&d->srv, sr);
			continue;
		}
		ret = open_region(d, &cfg->regions[i], is_default,
				  failed ? &failed[nfailed] : NULL);
		if (!ret && reload)
			dt_log(LOG_NOTICE, "region \"%s\": added by the reload", cfg->regions[i].name);
		if (ret && !nfailed++ && first)
			*first = ret;
	}
	if (!failed && nfailed)
		dt_log(LOG_ERR, "the list of the regions not served: %s", strerror(ENOMEM));
	regions_set_failed(&d->srv.regions, failed, failed ? nfailed : 0);
	return nfailed;
}

/* Write back every dirty entry of a region (stop, reload). */
int final_writeback(struct dt_region *r, const char *why)
{
	struct dt_writeback_report rep = { 0 };
	int ret;

	ret = dt_region_writeback(r, 0, r->npages - 1, &rep);
	if (ret) {
		dt_log(LOG_ERR, "region \"%s\": %s writeback: %s: flushing it whole", r->name, why,
		       strerror(-ret));
		ret = dt_region_flush_all(r);
		if (ret)
			dt_log(LOG_ERR, "region \"%s\": full flush: %s", r->name, strerror(-ret));
		return ret;
	}
	dt_log(LOG_INFO, "region \"%s\": %s writeback: %llu entries, %llu bytes", r->name, why,
	       (unsigned long long)rep.entries, (unsigned long long)rep.bytes);
	return 0;
}
