// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_track: TRACK (protocol version 3) against a running daxtrackd.
 * The state is kept per connection and region: STATS counts the clients
 * tracked and refused per region and in total (a connection once however
 * many of its regions are in the state), a repeated state counts once, a
 * state replaced moves the counts, and a connection that goes takes its
 * states with it.  TRACK needs the region attached on the connection; in a
 * version-2 conversation it is an unknown opcode, and STATS keeps the
 * version-2 layout.  (Write rights: test_daemon_auth.)
 */
#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_track");

struct counts {
	uint32_t clients, tracked, refused; /* the server's */
	uint32_t a_tracked, a_refused, b_tracked, b_refused;
};

static uint32_t ra, rb;

/* STATS of every region, asked on @c; false if it fails. */
static bool get_counts(struct dh_conn *c, struct counts *k)
{
	struct dt_proto_region_stats rs;
	struct dt_msg req, rep;

	memset(k, 0, sizeof(*k));
	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.stats_req.region = DT_PROTO_ALL_REGIONS;
	if (dh_call(c, &req, &rep))
		return false;
	k->clients = rep.stats_rep.clients;
	k->tracked = rep.stats_rep.clients_tracked;
	k->refused = rep.stats_rep.clients_refused;
	for (uint32_t i = 0; i < rep.stats_rep.count; i++) {
		dt_proto_region_stats_at(&rep.stats_rep, i, &rs);
		if (rs.id == ra) {
			k->a_tracked = rs.clients_tracked;
			k->a_refused = rs.clients_refused;
		} else if (rs.id == rb) {
			k->b_tracked = rs.clients_tracked;
			k->b_refused = rs.clients_refused;
		}
	}
	return true;
}

#define CHECK_COUNTS(c, t, r, at, ar, bt, br)         \
	do {                                          \
		struct counts k_;                     \
		if (CHECK(get_counts((c), &k_))) {    \
			CHECK_EQ(k_.tracked, (t));    \
			CHECK_EQ(k_.refused, (r));    \
			CHECK_EQ(k_.a_tracked, (at)); \
			CHECK_EQ(k_.a_refused, (ar)); \
			CHECK_EQ(k_.b_tracked, (bt)); \
			CHECK_EQ(k_.b_refused, (br)); \
		}                                     \
	} while (0)

/* Close @gone and wait until the daemon counts @n connections (asking on @c). */
static void close_and_wait(struct dh_conn *c, struct dh_conn *gone, uint32_t n)
{
	struct counts k = { 0 };

	dh_close(gone);
	for (unsigned i = 0; i < 1000; i++) {
		if (get_counts(c, &k) && k.clients == n)
			break;
		dh_sleep_ms(2);
	}
	CHECK_EQ(k.clients, n);
}

static void test_states(void)
{
	struct dh_conn *c1 = dh_open(), *c2 = dh_open(), *obs = dh_open();

	dt_test_ctx("track: not attached");
	if (!CHECK(c1 && c2 && obs))
		goto out;
	ra = dh_region_id(c1, "a");
	rb = dh_region_id(c1, "b");
	CHECK(ra && rb && ra != rb);
	CHECK_EQ(dh_track(c1, ra, DT_TRACK_ON, 0), -ENOENT); /* root too: attach first */
	CHECK_COUNTS(obs, 0, 0, 0, 0, 0, 0);

	dt_test_ctx("track: tracked");
	CHECK_EQ(dh_attach(c1, "a", -1, NULL), 0);
	CHECK_EQ(dh_track(c1, ra, DT_TRACK_ON, 0), 0);
	CHECK_COUNTS(obs, 1, 0, 1, 0, 0, 0);
	CHECK_EQ(dh_track(c1, ra, DT_TRACK_ON, 0), 0); /* again: counted once */
	CHECK_EQ(dh_attach(c1, "a", -1, NULL), 0); /* attached again: kept */
	CHECK_COUNTS(obs, 1, 0, 1, 0, 0, 0);
	CHECK(dh_log_has("region \"a\": stores tracked"));

	dt_test_ctx("track: refused");
	CHECK_EQ(dh_attach(c2, "a", -1, NULL), 0);
	CHECK_EQ(dh_attach(c2, "b", -1, NULL), 0);
	CHECK_EQ(dh_track(c2, ra, DT_TRACK_REFUSED, -EOPNOTSUPP), 0);
	CHECK_EQ(dh_track(c2, rb, DT_TRACK_REFUSED, -EBUSY), 0);
	CHECK_COUNTS(obs, 1, 1, 1, 1, 0, 1); /* c2 is one client refused */
	CHECK(dh_log_has("region \"b\": tracking refused (Device or resource busy)"));

	dt_test_ctx("track: state changes");
	CHECK_EQ(dh_track(c2, rb, DT_TRACK_ON, 0), 0);
	CHECK_COUNTS(obs, 2, 1, 1, 1, 1, 0);
	CHECK_EQ(dh_track(c2, ra, DT_TRACK_NONE, 0), 0);
	CHECK_COUNTS(obs, 2, 0, 1, 0, 1, 0);
	CHECK_EQ(dh_track(c1, ra, DT_TRACK_NONE, 0), 0);
	CHECK_COUNTS(obs, 1, 0, 0, 0, 1, 0);
	CHECK(dh_log_has("region \"a\": stores no longer tracked"));
	CHECK_EQ(dh_track(c1, ra, DT_TRACK_REFUSED, -EPERM), 0);
	CHECK_EQ(dh_track(c2, ra, DT_TRACK_REFUSED, -EOPNOTSUPP), 0);
	CHECK_COUNTS(obs, 1, 2, 0, 2, 1, 0);

	dt_test_ctx("track: forgotten with the connection");
	close_and_wait(obs, c1, 2);
	c1 = NULL;
	CHECK_COUNTS(obs, 1, 1, 0, 1, 1, 0);
	close_and_wait(obs, c2, 1);
	c2 = NULL;
	CHECK_COUNTS(obs, 0, 0, 0, 0, 0, 0);
out:
	dh_close(c1); /* NULL-safe */
	dh_close(c2);
	dh_close(obs);
}

/* A version-2 conversation: TRACK is an unknown opcode, STATS has no counts. */
static void test_version2(void)
{
	struct dh_conn *c = dh_connect();
	struct dt_msg req, rep;
	size_t len = 0;

	dt_test_ctx("track: version 2");
	if (!CHECK(c))
		return;
	dt_proto_init_request(&req, DT_OP_HELLO, 0);
	req.hello_req.min_version = 1;
	req.hello_req.max_version = 2;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.hello_rep.version, 2);
	CHECK_EQ(dh_attach(c, "a", -1, &rep), -EPROTO); /* the harness speaks the newest */
	dt_proto_init_request(&req, DT_OP_ATTACH, 0);
	req.version = 2;
	req.attach_req.mode = DT_ATTACH_NAME;
	strcpy(req.attach_req.name, "a");
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	/* TRACK's bytes in version 2: answered -EPROTO, as any unknown opcode. */
	dt_proto_init_request(&req, DT_OP_TRACK, 77);
	req.track_req.region = ra;
	req.track_req.state = DT_TRACK_ON;
	CHECK_EQ(dt_proto_encode(&req, c->out, sizeof(c->out), &len), 0);
	c->out[4] = 2;
	CHECK(dt_proto_send(c->fd, c->out, len, -1) > 0);
	CHECK_EQ(dh_recv(c, &rep), -EPROTO); /* the reply's opcode is unknown in v2 */
	CHECK_EQ(dt_proto_peek(c->buf, DT_PROTO_HDR_SIZE, &rep), 0);
	CHECK_EQ(rep.id, 77);
	CHECK_EQ(rep.op, DT_OP_TRACK);
	CHECK_EQ(rep.status, -EPROTO);
	/* STATS in version 2: its layout, still answered. */
	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.version = 2;
	req.stats_req.region = DT_PROTO_ALL_REGIONS;
	CHECK_EQ(dh_call(c, &req, &rep), 0);
	CHECK_EQ(rep.stats_rep.version, 2);
	CHECK_EQ(rep.stats_rep.clients_tracked, 0);
	dh_close(c);
}

int main(int argc, char **argv)
{
	dh_init(argc, argv, 60);
	dh_config("workers = 2", NULL);
	if (!CHECK_EQ(dh_start(), 0))
		return dt_test_done();
	test_states();
	test_version2();
	dt_test_ctx("stop");
	CHECK_EQ(dh_stop(SIGTERM), 0);
	CHECK(!dh_log_has("<3>")); /* no error was logged */
	return dt_test_done();
}
