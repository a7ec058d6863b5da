// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_track_report.c - dt_client_track_report(), the client's side of
 * TRACK: against the real daxtrackd, the daemon counts the client tracked
 * or refused (STATS), after a kill -9 and restart the state is told to the
 * new daemon, a detach takes it back; against the fake daemon, which does
 * not know TRACK (version 3, answers -EPROTO, as a daemon without TRACK)
 * or speaks version 2 (not sent at all), the report still succeeds, a state
 * told already is not sent again, and the state is sent after a reconnect.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "client-private.h"
#include "daemon_harness.h"
#include "dt_test.h"
#include "fake_client.h"
#include "fake_server.h"

DT_TEST_DEFINE("test_client_track_report");

#define PAGE 4096ULL

static struct dtd dtd;
static struct fake_server fk;

/* The report as the library makes it: under the handle's lock. */
static int report(struct dt_client_region *r, uint32_t state, int32_t err)
{
	int ret;

	pthread_mutex_lock(&r->c->lock);
	ret = dt_client_track_report(r, state, err);
	pthread_mutex_unlock(&r->c->lock);
	return ret;
}

static struct dt_client *connect_dtd(void)
{
	struct dt_client_options o;
	struct dt_client *c = NULL;

	dt_client_options_init(&o);
	o.socket = dtd.h.sock;
	o.retries = 200;
	o.backoff_min_ms = 5;
	o.backoff_max_ms = 100;
	CHECK_EQ(dt_client_connect_opts(&o, &c), 0);
	return c;
}

static struct dt_client_region *attach_path(struct dt_client *c, const char *path)
{
	struct dt_client_region *r = NULL;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (!CHECK(fd >= 0))
		return NULL;
	CHECK_EQ(dt_client_attach_fd(c, fd, &r), 0);
	close(fd);
	return r;
}

/* The daemon's counts, asked on @c: in total and of region @id. */
static bool counts(struct dt_client *c, uint32_t id, uint32_t k[4])
{
	const struct dt_proto_region_stats *rs;
	struct dt_client_stats *s = NULL;

	if (!CHECK_EQ(dt_client_stats(c, DT_PROTO_ALL_REGIONS, &s), 0))
		return false;
	rs = dt_client_stats_region(s, id);
	k[0] = s->total.clients_tracked;
	k[1] = s->total.clients_refused;
	k[2] = rs ? rs->clients_tracked : 99;
	k[3] = rs ? rs->clients_refused : 99;
	free(s);
	return true;
}

#define CHECK_COUNTS(c, id, t, r, rt, rr)      \
	do {                                   \
		uint32_t k_[4];                \
		if (counts((c), (id), k_)) {   \
			CHECK_EQ(k_[0], (t));  \
			CHECK_EQ(k_[1], (r));  \
			CHECK_EQ(k_[2], (rt)); \
			CHECK_EQ(k_[3], (rr)); \
		}                              \
	} while (0)

static void test_daemon(void)
{
	struct dt_client *c = connect_dtd(), *obs = connect_dtd();
	struct dt_client_region *db = c ? attach_path(c, dtd.db_path) : NULL;
	struct dt_client_region *aux = c ? attach_path(c, dtd.aux_path) : NULL;
	struct dt_client_region_info info;
	uint32_t id;

	dt_test_ctx("daemon: tracked, refused");
	if (!db || !aux || !obs)
		goto out;
	dt_client_region_info(db, &info);
	id = info.id;
	CHECK_COUNTS(obs, id, 0, 0, 0, 0);
	CHECK_EQ(report(db, DT_TRACK_ON, 0), 0);
	CHECK_COUNTS(obs, id, 1, 0, 1, 0);
	CHECK_EQ(report(aux, DT_TRACK_REFUSED, -EOPNOTSUPP), 0);
	CHECK_COUNTS(obs, id, 1, 1, 1, 0);
	CHECK_EQ(report(db, DT_TRACK_REFUSED, -EBUSY), 0);
	CHECK_COUNTS(obs, id, 0, 1, 0, 1);
	CHECK_EQ(db->track_state, DT_TRACK_REFUSED);
	CHECK_EQ(db->track_err, -EBUSY);

	dt_test_ctx("daemon: told again after a restart");
	dt_client_close(obs);
	obs = NULL;
	dtd_kill9(&dtd);
	if (!CHECK_EQ(dtd_start(&dtd), 0))
		goto out;
	CHECK_COUNTS(c, id, 0, 1, 0, 1); /* reconnects: re-attach, TRACK */
	CHECK_EQ(report(db, DT_TRACK_ON, 0), 0);
	CHECK_COUNTS(c, id, 1, 1, 1, 0);

	dt_test_ctx("daemon: a detach takes it back");
	CHECK_EQ(dt_client_detach(db), 0);
	db = NULL;
	CHECK_COUNTS(c, id, 0, 1, 0, 0);
	CHECK_EQ(dt_client_detach(aux), 0);
	aux = NULL;
	CHECK_COUNTS(c, id, 0, 0, 0, 0);
out:
	dt_client_close(obs);
	CHECK_EQ(dt_client_close(c), 0);
}

static uint64_t fake_tracks(void)
{
	uint64_t n;

	fake_lock(&fk);
	n = fk.by_op[DT_OP_TRACK];
	fake_unlock(&fk);
	return n;
}

static void test_fake(void)
{
	struct dt_client *c;
	struct dt_client_region *r;
	struct dt_proto_query_rep q;
	struct dt_client_counters k;

	dt_test_ctx("fake v3 without TRACK: -EPROTO ignored");
	fk.version = 3;
	c = fake_client(&fk, 0, 0);
	r = fake_attach_rw(&fk, c, 0);
	CHECK_EQ(report(r, DT_TRACK_ON, 0), 0);
	CHECK_EQ(fake_tracks(), 1);
	CHECK_EQ(report(r, DT_TRACK_ON, 0), 0); /* told already */
	CHECK_EQ(fake_tracks(), 1);
	CHECK_EQ(report(r, DT_TRACK_LAST + 1, 0), -EINVAL);
	CHECK_EQ(r->track_state, DT_TRACK_ON);
	CHECK_EQ(dt_client_dirty(r, 0, PAGE), 0); /* the connection still works */
	CHECK_EQ(dt_client_fsync(r, 0, PAGE, 0, NULL), 0);

	dt_test_ctx("fake: sent again after a reconnect");
	fake_arm_drop(&fk, DT_OP_QUERY, 1, 30, true, false);
	CHECK_EQ(dt_client_query(r, 0, &q), 0);
	CHECK_EQ(fake_tracks(), 2);
	dt_client_counters(c, &k);
	CHECK_EQ(k.reconnects, 1);
	CHECK_EQ(k.sent_by_op[DT_OP_TRACK], 2);
	CHECK_EQ(report(r, DT_TRACK_REFUSED, 5), 0); /* not an errno: EOPNOTSUPP */
	CHECK_EQ(r->track_err, -EOPNOTSUPP);
	CHECK_EQ(fake_tracks(), 3);
	CHECK_EQ(dt_client_close(c), 0);

	dt_test_ctx("fake v2: not sent");
	fake_lock(&fk);
	fk.version = 2;
	fake_unlock(&fk);
	c = fake_client(&fk, 0, 0);
	r = fake_attach_rw(&fk, c, 1);
	CHECK_EQ(report(r, DT_TRACK_REFUSED, -EOPNOTSUPP), 0);
	CHECK_EQ(r->track_state, DT_TRACK_REFUSED);
	CHECK_EQ(fake_tracks(), 3);
	fake_arm_drop(&fk, DT_OP_QUERY, 1, 30, false, false);
	CHECK_EQ(dt_client_query(r, 0, &q), 0);
	CHECK_EQ(fake_tracks(), 3);
	CHECK_EQ(dt_client_detach(r), 0);
	CHECK_EQ(fake_tracks(), 3);
	CHECK_EQ(dt_client_close(c), 0);
}

int main(void)
{
	if (!CHECK_EQ(dtd_setup(&dtd), 0) || !CHECK_EQ(dtd_start(&dtd), 0)) {
		dtd_cleanup(&dtd, true);
		return dt_test_done();
	}
	test_daemon();
	CHECK_EQ(dtd_stop(&dtd), 0);
	dtd_cleanup(&dtd, dt_test_counts.failed);
	if (!CHECK_EQ(fake_start(&fk), 0))
		return dt_test_done();
	test_fake();
	fake_stop(&fk);
	return dt_test_done();
}
