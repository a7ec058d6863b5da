// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/conn.c - one synchronous connection to daxtrackd over
 * the wire protocol.  See conn.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "ctl.h"

static int conn_hello(struct ctl_conn *c)
{
	struct dt_msg req, rep;
	int err;

	dt_proto_init_request(&req, DT_OP_HELLO, 0);
	req.hello_req.min_version = DT_PROTO_VERSION_MIN;
	req.hello_req.max_version = DT_PROTO_VERSION;
	err = ctl_call(c, &req, -1, &rep);
	if (err)
		return err;
	c->hello = rep.hello_rep;
	return 0;
}

int ctl_conn_open(struct ctl_conn *c, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int err;

	memset(c, 0, sizeof(*c));
	c->sock = -1;
	c->path = path;
	c->next_id = 1;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	c->buf = malloc(DT_PROTO_MAX_MSG);
	if (!c->buf)
		return -ENOMEM;
	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0) {
		err = -errno;
		goto fail;
	}
	if (connect(c->sock, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		err = -errno;
		goto fail;
	}
	err = conn_hello(c);
	if (err)
		goto fail;
	return 0;
fail:
	ctl_conn_close(c);
	return err;
}

void ctl_not_running(const char *path, int err)
{
	ctl_err("is daxtrackd running? socket %s: %s", path, strerror(-err));
}

int ctl_connect(struct ctl *ctl, struct ctl_conn *c)
{
	int err = ctl_conn_open(c, ctl->socket);

	if (err) {
		ctl_not_running(ctl->socket, err);
		return CTL_EXIT_FAIL;
	}
	return 0;
}

void ctl_conn_close(struct ctl_conn *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	free(c->buf);
	c->buf = NULL;
}

int ctl_call(struct ctl_conn *c, struct dt_msg *req, int fd, struct dt_msg *rep)
{
	uint16_t op = req->op;
	uint32_t id = c->next_id++;
	ssize_t n;
	size_t len;
	int err;

	if (c->sock < 0)
		return -ENOTCONN;
	req->id = id;
	if (op != DT_OP_HELLO)
		req->version = (uint8_t)c->hello.version;
	err = dt_proto_encode(req, c->buf, DT_PROTO_MAX_MSG, &len);
	if (err)
		return err;
	n = dt_proto_send(c->sock, c->buf, len, fd);
	if (n < 0)
		return (int)n;
	n = dt_proto_recv(c->sock, c->buf, DT_PROTO_MAX_MSG, NULL);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return (int)n;
	err = dt_proto_decode(c->buf, (size_t)n, rep);
	if (err)
		return err;
	if (!(rep->flags & DT_PROTO_F_REPLY) || rep->op != op || rep->id != id)
		return -EBADMSG;
	return rep->status;
}

static int attach(struct ctl_conn *c, const char *name, int fd, struct dt_proto_attach_rep *out)
{
	struct dt_msg req, rep;
	int err;

	dt_proto_init_request(&req, DT_OP_ATTACH, 0);
	if (name) {
		if (!*name || strlen(name) >= sizeof(req.attach_req.name))
			return -ENOENT;
		req.attach_req.mode = DT_ATTACH_NAME;
		memcpy(req.attach_req.name, name, strlen(name) + 1);
	} else {
		req.attach_req.mode = DT_ATTACH_FD;
	}
	err = ctl_call(c, &req, fd, &rep);
	if (err)
		return err;
	*out = rep.attach_rep;
	return 0;
}

int ctl_attach(struct ctl_conn *c, const char *name, struct dt_proto_attach_rep *out)
{
	return attach(c, name, -1, out);
}

int ctl_attach_fd(struct ctl_conn *c, int fd, struct dt_proto_attach_rep *out)
{
	return attach(c, NULL, fd, out);
}

int ctl_regions(struct ctl_conn *c, struct dt_proto_region **out, uint32_t *count)
{
	struct dt_msg req, rep;
	uint32_t i;
	int err;

	*out = NULL;
	*count = 0;
	dt_proto_init_request(&req, DT_OP_REGIONS, 0);
	err = ctl_call(c, &req, -1, &rep);
	if (err)
		return err;
	if (!rep.regions_rep.count)
		return 0;
	*out = calloc(rep.regions_rep.count, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < rep.regions_rep.count; i++)
		dt_proto_region_at(&rep.regions_rep, i, &(*out)[i]);
	*count = rep.regions_rep.count;
	return 0;
}

int ctl_stats(struct ctl_conn *c, uint32_t region, struct ctl_stats *out)
{
	struct dt_msg req, rep;
	uint32_t i;
	int err;

	memset(out, 0, sizeof(*out));
	dt_proto_init_request(&req, DT_OP_STATS, 0);
	req.stats_req.region = region;
	err = ctl_call(c, &req, -1, &rep);
	if (err)
		return err;
	out->head = rep.stats_rep;
	out->head.raw = NULL;
	out->head.count = 0;
	if (!rep.stats_rep.count)
		return 0;
	out->regions = calloc(rep.stats_rep.count, sizeof(*out->regions));
	if (!out->regions)
		return -ENOMEM;
	for (i = 0; i < rep.stats_rep.count; i++)
		dt_proto_region_stats_at(&rep.stats_rep, i, &out->regions[i]);
	out->head.count = rep.stats_rep.count;
	return 0;
}

void ctl_stats_free(struct ctl_stats *s)
{
	free(s->regions);
	s->regions = NULL;
	s->head.count = 0;
}

const struct dt_proto_region_stats *ctl_stats_find(const struct ctl_stats *s, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < s->head.count; i++)
		if (s->regions[i].id == id)
			return &s->regions[i];
	return NULL;
}

int ctl_region_error(const char *name, const char *op, int err)
{
	if (err == -ENOENT && !strcmp(op, "attach"))
		ctl_err("region \"%s\": no such region", name);
	else
		ctl_err("region \"%s\": %s: %s", name, op, strerror(-err));
	return CTL_EXIT_FAIL;
}

int ctl_open_region(struct ctl *ctl, struct ctl_conn *c, const char *name,
		    struct dt_proto_attach_rep *out)
{
	int err;

	if (ctl_connect(ctl, c))
		return CTL_EXIT_FAIL;
	err = ctl_attach(c, name, out);
	if (err) {
		ctl_conn_close(c);
		return ctl_region_error(name, "attach", err);
	}
	return 0;
}
