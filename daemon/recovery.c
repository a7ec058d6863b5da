// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/recovery.c - the unclean-exit recovery: set the marker in the state
 * directory before serving; if the previous daemon left it, it died with
 * dirty pages possibly unflushed, so every region is flushed whole first.
 */
#include <string.h>

#include "daxtrackd.h"
#include "log.h"

static int recovery_flush(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	unsigned n, i;
	int ret = 0, err;

	dt_log(LOG_WARNING, "unclean exit detected (%s/%s): flushing every region before serving",
	       d->state.path, DT_STATE_MARKER);
	notify("STATUS=recovery after an unclean exit: flushing every region");
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		struct dt_region *r = list[i]->r;
		uint64_t t0 = srv_now_ns();
		char size[32];

		notify("EXTEND_TIMEOUT_USEC=%llu", 120000000ULL);
		err = dt_region_flush_all(r);
		fmt_size(size, sizeof(size), r->size);
		if (err) {
			dt_log(LOG_ERR, "region \"%s\": recovery flush: %s", r->name, strerror(-err));
			ret = err;
		} else {
			dt_log(LOG_NOTICE, "region \"%s\": recovery flush: %s in %.2f s", r->name,
			       size, (double)(srv_now_ns() - t0) / 1e9);
		}
		srv_region_put(&d->srv, list[i]);
	}
	return ret;
}

int recovery_begin(struct daemon *d)
{
	char err[512] = "";
	bool unclean = false;
	int ret;

	ret = dt_state_begin(&d->state, &unclean, err, sizeof(err));
	if (ret) {
		dt_log(LOG_ERR, "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	d->marker = true;
	if (unclean) {
		ret = recovery_flush(d);
		if (ret) {
			dt_log(LOG_ERR, "recovery flush failed: refusing to serve");
			d->marker = false;	/* keep it: the next start flushes again */
			return ret;
		}
	}
	return 0;
}
