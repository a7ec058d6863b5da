// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ext_client.c - an application built only from the installed
 * libdaxtrack-client (headers, shared library, pkg-config file), as a user
 * builds one: .ci/install-check.sh compiles it outside the build tree.
 *
 * Usage: ext_client SOCKET REGION
 * Attaches REGION, maps it, stores a record, persists it and checks the
 * daemon reports the page clean afterwards.  Prints "ext_client: ok" and
 * exits 0, or names the failing call and exits 1.
 */
#include <stdio.h>
#include <string.h>

#include <daxtrack/client.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "ext_client: %s: %s\n", what, strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	struct dt_proto_query_rep q;
	struct dt_client_region *r;
	struct dt_client *c;
	size_t len;
	void *addr;
	int err;

	if (argc != 3) {
		fprintf(stderr, "Usage: ext_client SOCKET REGION\n");
		return 2;
	}
	err = dt_client_connect(argv[1], &c);
	if (err)
		return fail("dt_client_connect", err);
	err = dt_client_attach(c, argv[2], &r);
	if (err)
		return fail("dt_client_attach", err);
	err = dt_client_map(r, &addr, &len);
	if (err)
		return fail("dt_client_map", err);
	memcpy(addr, "installed client", 17);
	err = dt_client_persist(r, addr, 17);
	if (err)
		return fail("dt_client_persist", err);
	err = dt_client_query(r, 0, &q);
	if (err)
		return fail("dt_client_query", err);
	if (!q.found || (q.entry.tags & DT_PROTO_TAG_DIRTY)) {
		fprintf(stderr, "ext_client: page 0 missing or still dirty after persist\n");
		return 1;
	}
	err = dt_client_close(c);
	if (err)
		return fail("dt_client_close", err);
	printf("ext_client: ok (%s, op %s)\n", argv[2], dt_proto_op_name(DT_OP_FSYNC));
	return 0;
}
