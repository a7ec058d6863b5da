// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto-io.c - sending and receiving one protocol message on a
 * SOCK_SEQPACKET socket, with an optional fd passed by SCM_RIGHTS.
 *
 * A packet is the unit: it arrives whole, or, if longer than the buffer, is
 * consumed and reported (MSG_TRUNC makes recvmsg() return its real length),
 * so that one oversized message cannot desynchronise the stream.  Received
 * fds are installed O_CLOEXEC.  The caller gets at most the first fd of a
 * non-empty packet of the right size; every other fd, and all of them on
 * every other path (an empty packet, an oversized one), is closed before
 * returning, so a peer cannot make us leak descriptors.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <daxtrack/proto.h>

/* Room for a few fds: more than one is a protocol error, but must be closed. */
#define RECV_FDS_MAX	8

ssize_t dt_proto_send(int sock, const void *buf, size_t len, int fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/*
 * Keep the first fd received in *@keep (if asked), close all the others.
 * Return: how many came; one more than those seen when the kernel dropped
 * some for want of room (MSG_CTRUNC).
 */
static unsigned take_fds(struct msghdr *msg, int *keep)
{
	struct cmsghdr *c;
	unsigned count = 0;
	int fd;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++, count++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (keep && *keep < 0)
				*keep = fd;
			else
				close(fd);
		}
	}
	return count + !!(msg->msg_flags & MSG_CTRUNC);
}

ssize_t dt_proto_recv(int sock, void *buf, size_t cap, int *fd)
{
	return dt_proto_recv_fds(sock, buf, cap, fd, NULL);
}

ssize_t dt_proto_recv_fds(int sock, void *buf, size_t cap, int *fd, unsigned *nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(RECV_FDS_MAX * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr msg;
	unsigned count;
	ssize_t n;

	if (fd)
		*fd = -1;
	if (nfds)
		*nfds = 0;
	do {
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(sock, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* An empty packet (the end of the stream) or an oversized one keeps none. */
	if (!n || (size_t)n > cap || (msg.msg_flags & MSG_TRUNC)) {
		take_fds(&msg, NULL);
		return n ? -EMSGSIZE : 0;
	}
	count = take_fds(&msg, fd);
	if (nfds)
		*nfds = count;
	return n;
}
