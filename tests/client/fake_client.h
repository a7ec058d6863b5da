/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fake_client.h - the client handles of the tests against the fake daemon
 * (fake_server.h): a connection with fast retries, a region attached by an
 * O_RDWR fd (write rights).  A failure ends the test (dt_test.h).
 */
#ifndef FAKE_CLIENT_H
#define FAKE_CLIENT_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <daxtrack/client.h>

#include "dt_test.h"
#include "fake_server.h"

static inline struct dt_client *fake_client(const struct fake_server *f, uint32_t batch,
					    unsigned flags)
{
	struct dt_client_options o;
	struct dt_client *c = NULL;

	dt_client_options_init(&o);
	o.socket = f->sock;
	o.batch_ranges = batch;
	o.flags = flags;
	o.retries = 100;
	o.backoff_min_ms = 2;
	o.backoff_max_ms = 20;
	if (!CHECK_EQ(dt_client_connect_opts(&o, &c), 0))
		exit(dt_test_done());
	return c;
}

static inline struct dt_client_region *fake_attach_rw(const struct fake_server *f,
						      struct dt_client *c, unsigned ri)
{
	struct dt_client_region *r = NULL;
	int fd = open(f->regions[ri].path, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_EQ(dt_client_attach_fd(c, fd, &r), 0);
	close(fd);
	if (!r)
		exit(dt_test_done());
	return r;
}

#endif /* FAKE_CLIENT_H */
