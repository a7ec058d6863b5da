// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-track-report.c - telling the daemon how a client tracks a region.
 *
 * The TRACK message (protocol version 3) carries the state of a region:
 * its stores tracked by the kernel (dt_client_track()), tracking refused
 * (the application's msyncs then persist whole ranges) or neither.  The
 * daemon only counts such clients (STATS, `daxtrackctl status`): nothing
 * here may fail a track, an untrack or a detach.  The state is kept in the
 * region and sent again on every new connection (a daemon forgets it with
 * the connection); a daemon that does not know TRACK (version 2, or a
 * version-3 daemon from before it) answers -EPROTO, which is ignored.
 *
 * Everything here runs under dt_client.lock.
 */
#include <errno.h>

#include "client-private.h"

/* Whether the daemon of this connection may know TRACK. */
static bool track_spoken(const struct dt_client *c)
{
	return c->hello.version >= DT_PROTO_VERSION_TRACK;
}

static void track_msg(struct dt_client *c, const struct dt_client_region *r, struct dt_msg *m)
{
	dt_client_init_req(c, m, DT_OP_TRACK);
	m->track_req.region = r->id;
	m->track_req.state = r->track_state;
	m->track_req.reason = r->track_state == DT_TRACK_REFUSED ? r->track_err : 0;
}

/* A refusal always names an errno the wire accepts (-1..-4095). */
static int32_t refusal_reason(int32_t err)
{
	return err < 0 && err >= -4095 ? err : -EOPNOTSUPP;
}

int dt_client_track_report(struct dt_client_region *r, uint32_t state, int32_t err)
{
	struct dt_client *c = r->c;
	struct dt_msg req, rep;
	int ret;

	if (state > DT_TRACK_LAST)
		return -EINVAL;
	err = state == DT_TRACK_REFUSED ? refusal_reason(err) : 0;
	if (state == r->track_state && err == r->track_err)
		return 0;
	r->track_state = state;
	r->track_err = err;
	/*
	 * Not connected now, or the connection lost in the exchange: the
	 * reconnection sends it (dt_client_track_restore()).  No reconnection
	 * for it: a detach's report would renew the region's log only to park
	 * it, the old log's marks left to the recovery (FLUSHED).
	 */
	if (c->sock < 0 || r->gone || !track_spoken(c))
		return 0;
	track_msg(c, r, &req);
	ret = dt_client_xact_once(c, &req, -1, &rep);
	/* The daemon's answer changes nothing here (-EPROTO: it does not know TRACK). */
	return ret < 0 && ret != DT_CLIENT_LOST ? ret : 0;
}

int dt_client_track_restore(struct dt_client *c, struct dt_client_region *r)
{
	struct dt_msg req, rep;
	int err;

	if (r->track_state == DT_TRACK_NONE || !track_spoken(c))
		return 0;
	track_msg(c, r, &req);
	err = dt_client_xact_once(c, &req, -1, &rep);
	return err == DT_CLIENT_LOST ? err : 0;
}
