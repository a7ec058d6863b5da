// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/reload.c - the reload at SIGHUP: rescan the namespaces and rematch
 * every region, reread the configuration, drop the regions it no longer
 * names, open the new ones, apply the new limits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include "daxtrackd.h"
#include "fastlog.h"
#include "intent.h"
#include "log.h"

static void drop_region(struct daemon *d, const char *name)
{
	struct srv_region *sr = srv_region_remove(&d->srv, name);

	if (!sr)
		return;
	fastlog_fsync(&d->srv, sr, 0, sr->r->npages - 1);	/* what clients' logs hold too */
	final_writeback(sr->r, "removal");
	intent_destroy(sr->r, true);
	dt_log(LOG_NOTICE, "region \"%s\": removed from the configuration: dropped", sr->r->name);
	dt_region_close(sr->r);
	free(sr);
}

/* What a rescan may change of a region: report it. */
static void log_rematch(const struct dt_region *r, const char *was_ns, unsigned was_nbad,
			uint64_t was_bytes, const struct dt_ndctl *was)
{
	const char *now_ns = r->ns_index >= 0 ? r->nd->ns[r->ns_index].name : "";
	uint64_t bytes = 0;
	char ns[256];
	unsigned i;

	for (i = 0; i < r->nbad; i++)
		bytes += r->bad[i].len;
	if (strcmp(was_ns, now_ns)) {
		fmt_namespace(ns, sizeof(ns), r);
		dt_log(LOG_NOTICE, "region \"%s\": reload: %s (was %s)", r->name, ns + 2,
		       was_ns[0] ? was_ns : "none");
	}
	log_cxl(r, strcmp(was_ns, now_ns) ? NULL : was);
	if (r->nbad == was_nbad && bytes == was_bytes)
		return;
	if (r->nbad)
		log_badblocks(r);
	else
		dt_log(LOG_NOTICE, "region \"%s\": reload: no known bad blocks any more", r->name);
}

/* Keep a scan that a region could not let go of (out of memory) until the exit. */
static void retire_scan(struct daemon *d, struct dt_ndctl *nd)
{
	if (d->nretired < MAX_RETIRED) {
		d->retired[d->nretired++] = nd;
		return;
	}
	dt_log(LOG_ERR, "reload: too many namespace scans still in use: leaking one");
}

/*
 * Enumerate the namespaces again and match every region to the new scan
 * (new namespaces, new bad blocks).  Each region switches under its lock;
 * NAMESPACES reads srv.nd as an RCU reader, so the old scan is freed after a
 * grace period.
 */
void rescan_namespaces(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	char was_ns[32];
	struct dt_ndctl *nd, *old;
	bool stuck = false;
	unsigned n, i, was_nbad, j;
	uint64_t was_bytes;

	if (dt_ndctl_scan(&nd)) {
		dt_log(LOG_ERR, "reload: namespaces: %s: keeping the previous scan",
		       strerror(ENOMEM));
		return;
	}
	dt_log(LOG_INFO, "reload: namespaces rescanned: %s", nd->note);
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		struct dt_region *r = list[i]->r;

		snprintf(was_ns, sizeof(was_ns), "%s",
			 r->ns_index >= 0 ? r->nd->ns[r->ns_index].name : "");
		was_nbad = r->nbad;
		for (j = 0, was_bytes = 0; j < r->nbad; j++)
			was_bytes += r->bad[j].len;
		if (dt_region_set_namespace(r, nd) == -ENOMEM) {
			dt_log(LOG_ERR, "region \"%s\": reload: namespaces: %s: keeping the "
			       "previous match", r->name, strerror(ENOMEM));
			stuck = true;
		} else {
			log_rematch(r, was_ns, was_nbad, was_bytes, d->srv.nd);
		}
		srv_region_put(&d->srv, list[i]);
	}
	old = rcu_xchg_pointer(&d->srv.nd, nd);
	urcu_memb_synchronize_rcu();
	if (stuck)
		retire_scan(d, old);
	else
		dt_ndctl_free(old);
}

static bool keep_region(const struct dt_config *nc, const struct dt_region *r)
{
	const struct dt_config_region *cr = dt_config_find_region(nc, r->name);

	return cr && !strcmp(cr->path, r->path);
}

static void warn_static_keys(const struct dt_config *o, const struct dt_config *n)
{
	if (strcmp(o->socket, n->socket) || o->socket_mode != n->socket_mode ||
	    strcmp(o->socket_group, n->socket_group))
		dt_log(LOG_WARNING, "reload: socket settings changed: they take effect at a restart");
	if (strcmp(o->state_dir, n->state_dir))
		dt_log(LOG_WARNING, "reload: state_dir changed: it takes effect at a restart");
	if (strcmp(o->runtime_dir, n->runtime_dir))
		dt_log(LOG_WARNING, "reload: runtime_dir changed: it takes effect at a restart");
	if (o->fast_path != n->fast_path)
		dt_log(LOG_WARNING, "reload: fast_path changed: it takes effect at a restart");
	if (o->workers != n->workers)
		dt_log(LOG_WARNING, "reload: workers changed: it takes effect at a restart");
}

void reload(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	char names[DT_PROTO_MAX_REGIONS][DT_CONFIG_NAME_MAX + 1];
	struct dt_config nc;
	bool defaults;
	unsigned n, i, gone = 0;

	notify("RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)(srv_now_ns() / 1000));
	rescan_namespaces(d);
	if (load_config(d, &nc, &defaults)) {
		dt_log(LOG_ERR, "reload failed: keeping the old configuration");
		dt_config_free(&nc);
		notify("READY=1");
		return;
	}
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		if (!keep_region(&nc, list[i]->r))
			snprintf(names[gone++], sizeof(names[0]), "%s", list[i]->r->name);
		srv_region_put(&d->srv, list[i]);
	}
	for (i = 0; i < gone; i++)
		drop_region(d, names[i]);
	serve_regions(d, &nc, defaults, true, NULL);
	warn_static_keys(&d->cfg, &nc);
	apply_limits(d, &nc);
	dt_config_free(&d->cfg);
	d->cfg = nc;
	d->defaults = defaults;
	dt_log(LOG_INFO, "configuration reloaded: %u regions", d->srv.regions.n);
	notify("READY=1");
	notify_status(d);
}
