// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/dispatch-track.c - TRACK (protocol version 3): how a client tracks
 * its stores to a region it attached (dt_client_track()): by the kernel, or
 * refused (its msyncs then persist whole ranges), or not at all.  The state
 * is kept per connection and region, counted per region and in total for
 * STATS, and forgotten with the connection.
 */
#include <string.h>

#include "log.h"
#include "request.h"

static uint32_t *region_count(struct srv_region *sr, uint8_t state)
{
	if (state == DT_TRACK_ON)
		return &sr->clients_tracked;
	return state == DT_TRACK_REFUSED ? &sr->clients_refused : NULL;
}

static uint32_t *server_count(struct dt_server *srv, uint8_t state)
{
	if (state == DT_TRACK_ON)
		return &srv->stats.clients_tracked;
	return state == DT_TRACK_REFUSED ? &srv->stats.clients_refused : NULL;
}

static void count(uint32_t *counter, int delta)
{
	if (counter)
		__atomic_fetch_add(counter, (uint32_t)delta, __ATOMIC_RELAXED);
}

/*
 * One attachment of @c in @state more (@delta 1) or less (-1): the region
 * @sr (NULL: removed, nothing to count there), and the server's total when
 * the connection gets its first or loses its last attachment in @state.
 */
static void track_count(struct dt_server *srv, struct dt_conn *c, struct srv_region *sr,
			uint8_t state, int delta)
{
	/* Never above DT_TRACK_LAST (decoded states are checked): for gcc 12 -O3 */
	if (state == DT_TRACK_NONE || state > DT_TRACK_LAST)
		return;
	if (sr)
		count(region_count(sr, state), delta);
	if (delta > 0 && c->ntrack[state]++ == 0)
		count(server_count(srv, state), 1);
	else if (delta < 0 && --c->ntrack[state] == 0)
		count(server_count(srv, state), -1);
}

static void track_log(const struct req *q, const struct srv_region *sr,
		      const struct dt_proto_track_req *t)
{
	const struct dt_conn *c = q->c;

	if (t->state == DT_TRACK_REFUSED)
		dt_log(LOG_INFO,
		       "client %llu (uid %u, pid %d): region \"%s\": tracking refused "
		       "(%s): its msyncs persist whole ranges",
		       cid(c), (unsigned)c->cred.uid, (int)c->cred.pid, sr->r->name,
		       strerror(-t->reason));
	else
		dt_log(LOG_INFO, "client %llu (uid %u, pid %d): region \"%s\": stores %s", cid(c),
		       (unsigned)c->cred.uid, (int)c->cred.pid, sr->r->name,
		       t->state == DT_TRACK_ON ? "tracked" : "no longer tracked");
}

/* Needs the region attached on the connection (as LOG) and write rights on it. */
int do_track(struct req *q)
{
	const struct dt_proto_track_req *t = &q->m->track_req;
	struct srv_attach *a = dt_conn_find_attach(q->c, t->region);
	struct srv_region *sr;
	int ret;

	if (!a)
		return -ENOENT;
	ret = dt_req_region(q, t->region, true, &sr);
	if (ret)
		return ret;
	if (a->track != t->state) {
		track_count(q->srv, q->c, sr, a->track, -1);
		track_count(q->srv, q->c, sr, (uint8_t)t->state, 1);
		a->track = (uint8_t)t->state;
		track_log(q, sr, t);
	}
	dt_req_put(q, sr);
	return 0;
}

void dt_track_forget(struct dt_server *srv, struct dt_conn *c)
{
	struct srv_region *sr;
	unsigned i;
	int err;

	for (i = 0; i < c->natt; i++) {
		struct srv_attach *a = &c->att[i];

		if (a->track == DT_TRACK_NONE)
			continue;
		sr = regions_get(&srv->regions, a->id, &err); /* NULL: removed */
		track_count(srv, c, sr, a->track, -1);
		a->track = DT_TRACK_NONE;
		if (sr)
			regions_put(&srv->regions, sr);
	}
}
