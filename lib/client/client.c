// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client.c - the handle of the client of daxtrackd: its options, connect
 * and close, the daemon's HELLO and the client's counters.
 *
 * The calls of daxtrack/client.h are in client.c (the handle),
 * client-region.c (attach, map, detach), client-sync.c (fault, marks,
 * fsync and persist, punch) and client-query.c (questions to the daemon).
 * Each call takes the handle's lock, checks what it can locally, and goes
 * through dt_client_xact() (client-conn.c), which pipelines a region's dirty
 * batch in front of the request where needed and survives reconnections.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client-private.h"

void dt_client_options_init(struct dt_client_options *o)
{
	memset(o, 0, sizeof(*o));
	o->retries = DT_CLIENT_RETRIES;
	o->backoff_min_ms = DT_CLIENT_BACKOFF_MIN_MS;
	o->backoff_max_ms = DT_CLIENT_BACKOFF_MAX_MS;
}

const char *dt_client_socket_default(void)
{
	const char *env = getenv(DT_CLIENT_SOCKET_ENV);

	return env && *env ? env : DT_PROTO_SOCKET_PATH;
}

static void client_free(struct dt_client *c)
{
	struct dt_client_region *r, *next;

	for (r = c->regions; r; r = next) {
		next = r->next;
		dt_client_region_free(r);
	}
	dt_client_log_free_parked(c);
	if (c->sock >= 0)
		close(c->sock);
	if (c->rx_fd >= 0)
		close(c->rx_fd);
	for (unsigned i = 0; i < DT_CLIENT_DIRTY_WINDOW; i++)
		dt_rset_free(&c->flight[i].ranges);
	pthread_mutex_destroy(&c->lock);
	free(c->tx);
	free(c->rx);
	free(c->path);
	free(c);
}

int dt_client_connect_opts(const struct dt_client_options *o, struct dt_client **cp)
{
	struct dt_client *c;
	int err;

	*cp = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sock = -1;
	pthread_mutex_init(&c->lock, NULL);
	if (o)
		c->o = *o;	/* else all zero: the defaults below */
	if (!c->o.retries)
		c->o.retries = DT_CLIENT_RETRIES;
	if (!c->o.backoff_min_ms)
		c->o.backoff_min_ms = DT_CLIENT_BACKOFF_MIN_MS;
	if (!c->o.backoff_max_ms)
		c->o.backoff_max_ms = DT_CLIENT_BACKOFF_MAX_MS;
	dt_client_log_env(c);
	c->path = strdup(c->o.socket ? c->o.socket : dt_client_socket_default());
	c->o.socket = c->path;
	c->tx = malloc(DT_PROTO_MAX_MSG);
	c->rx = malloc(DT_PROTO_MAX_MSG);
	if (!c->path || !c->tx || !c->rx) {
		client_free(c);
		return -ENOMEM;
	}
	if (c->o.flags & DT_CLIENT_WAIT)
		err = dt_client_conn_open_wait(c);
	else
		err = dt_client_conn_open(c);
	if (err) {
		client_free(c);
		return err;
	}
	*cp = c;
	return 0;
}

int dt_client_connect(const char *path, struct dt_client **cp)
{
	struct dt_client_options o;

	dt_client_options_init(&o);
	o.socket = path;
	return dt_client_connect_opts(&o, cp);
}

int dt_client_close(struct dt_client *c)
{
	struct dt_client_region *r;
	int err = 0, e;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	c->closing = true;
	dt_client_reap(c);
	for (r = c->regions; r; r = r->next) {
		dt_client_track_detach(r);
		e = dt_client_send_batch(c, r);
		if (e && !err)
			err = e;
	}
	pthread_mutex_unlock(&c->lock);
	client_free(c);
	return err;
}

const char *dt_client_socket(const struct dt_client *c)
{
	return c->path;
}

int dt_client_daemon(struct dt_client *c, struct dt_proto_hello_rep *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->hello;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void dt_client_counters(struct dt_client *c, struct dt_client_counters *out)
{
	struct dt_client_region *r;

	pthread_mutex_lock(&c->lock);
	*out = c->cnt;
	for (r = c->regions; r; r = r->next)
		dt_client_log_counters(r, out);
	pthread_mutex_unlock(&c->lock);
}
