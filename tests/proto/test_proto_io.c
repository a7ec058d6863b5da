// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto_io.c - dt_proto_send() and dt_proto_recv() over a
 * socketpair(AF_UNIX, SOCK_SEQPACKET): whole packets, oversized packets,
 * passed fds, extra fds, end of stream, EPIPE, EAGAIN and EINTR.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <daxtrack/proto.h>

#include "dt_test.h"
#include "proto_util.h"

DT_TEST_DEFINE("test_proto_io");

static char tmpdir[] = "/tmp/dt-proto-io-XXXXXX";
static char tmpfile_path[64];

static void pair(int sv[2])
{
	CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void test_whole_messages(void)
{
	static uint8_t out[DT_PROTO_MAX_MSG], in[DT_PROTO_MAX_MSG];
	static struct dt_proto_range r[DT_PROTO_DEFAULT_RANGES];
	struct dt_msg m, d;
	struct dt_proto_range x;
	int sv[2], fd = 7;
	size_t len;
	ssize_t n;

	dt_test_ctx("whole messages");
	pair(sv);
	for (uint32_t i = 0; i < DT_PROTO_DEFAULT_RANGES; i++)
		r[i] = (struct dt_proto_range){ rnd() >> 8, 1 + rnd_below(1 << 20) };
	dt_proto_init_request(&m, DT_OP_DIRTY, 42);
	m.dirty_req.region = 2;
	m.dirty_req.count = DT_PROTO_DEFAULT_RANGES;
	m.dirty_req.ranges = r;
	CHECK_EQ(dt_proto_encode(&m, out, sizeof(out), &len), 0);
	CHECK(len <= DT_PROTO_DEFAULT_MSG);
	CHECK_EQ(dt_proto_send(sv[0], out, len, -1), len);
	n = dt_proto_recv(sv[1], in, sizeof(in), &fd);
	CHECK_EQ(n, len);
	CHECK_EQ(fd, -1);
	CHECK(!memcmp(in, out, len));
	CHECK_EQ(dt_proto_decode(in, (size_t)n, &d), 0);
	CHECK_EQ(d.id, 42);
	CHECK_EQ(d.dirty_req.count, DT_PROTO_DEFAULT_RANGES);
	dt_proto_range_at(&d.dirty_req, 4095, &x);
	CHECK_EQ(x.offset, r[4095].offset);
	CHECK_EQ(x.length, r[4095].length);
	close(sv[0]);
	close(sv[1]);
}

static void test_oversized(void)
{
	uint8_t out[1000], in[100];
	int sv[2], fd = 7, before;

	dt_test_ctx("oversized");
	pair(sv);
	memset(out, 0xa5, sizeof(out));
	CHECK_EQ(dt_proto_send(sv[0], out, sizeof(out), -1), sizeof(out));
	CHECK_EQ(dt_proto_send(sv[0], out, 50, -1), 50);
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &fd), -EMSGSIZE);
	CHECK_EQ(fd, -1);
	/* The stream stays in sync: the next packet arrives whole. */
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &fd), 50);
	/* Exactly the capacity is not oversized. */
	CHECK_EQ(dt_proto_send(sv[0], out, sizeof(in), -1), sizeof(in));
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &fd), sizeof(in));
	/* An oversized packet's fd is closed. */
	before = dt_test_fd_count(0);
	CHECK_EQ(dt_proto_send(sv[0], out, sizeof(out), sv[0]), sizeof(out));
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &fd), -EMSGSIZE);
	CHECK_EQ(fd, -1);
	CHECK_EQ(dt_test_fd_count(0), before);
	close(sv[0]);
	close(sv[1]);
}

static void test_pass_fd(void)
{
	struct stat a, b;
	char data[8] = { 0 };
	uint8_t msg[32] = "attach", in[64];
	int sv[2], file, got = -1, before;

	dt_test_ctx("pass fd");
	pair(sv);
	file = open(tmpfile_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(file >= 0);
	CHECK_EQ(write(file, "region", 6), 6);
	CHECK_EQ(dt_proto_send(sv[0], msg, sizeof(msg), file), sizeof(msg));
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &got), sizeof(msg));
	CHECK(got >= 0 && got != file);
	CHECK(!memcmp(in, "attach", 6));
	CHECK_EQ(fstat(file, &a), 0);
	CHECK_EQ(fstat(got, &b), 0);
	CHECK(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	CHECK(fcntl(got, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ(fcntl(got, F_GETFL) & O_ACCMODE, O_RDWR);	/* the open mode travels */
	CHECK_EQ(pread(got, data, 6, 0), 6);
	CHECK(!strcmp(data, "region"));
	close(got);

	/* An fd nobody asked for is closed. */
	before = dt_test_fd_count(0);
	CHECK_EQ(dt_proto_send(sv[0], msg, sizeof(msg), file), sizeof(msg));
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), NULL), sizeof(msg));
	CHECK_EQ(dt_test_fd_count(0), before);
	close(file);
	close(sv[0]);
	close(sv[1]);
}

/* A LOG reply carries the log's fd: encoded, sent with it, received with exactly one. */
static void test_log_reply_fd(void)
{
	uint8_t out[64], in[64];
	struct dt_msg req, m, d;
	struct stat a, b;
	int sv[2], file, got = -1;
	unsigned nfds = 0;
	size_t len;

	dt_test_ctx("LOG reply with its fd");
	pair(sv);
	file = open(tmpfile_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(file >= 0);
	CHECK_EQ(ftruncate(file, 3 * 4096), 0);
	dt_proto_init_request(&req, DT_OP_LOG, 3);
	dt_proto_init_reply(&m, &req, 0);
	m.log_rep.npages = 100;
	m.log_rep.file_size = 3 * 4096;
	m.log_rep.flags = DT_LOG_PMEM;
	CHECK_EQ(dt_proto_encode(&m, out, sizeof(out), &len), 0);
	CHECK_EQ(dt_proto_send(sv[0], out, len, file), len);
	CHECK_EQ(dt_proto_recv_fds(sv[1], in, sizeof(in), &got, &nfds), len);
	CHECK_EQ(nfds, 1);
	CHECK(got >= 0 && got != file);
	CHECK_EQ(dt_proto_decode(in, len, &d), 0);
	CHECK_EQ(d.log_rep.file_size, 3 * 4096);
	CHECK_EQ(fstat(file, &a), 0);
	CHECK_EQ(fstat(got, &b), 0);
	CHECK(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	CHECK_EQ((uint64_t)b.st_size, d.log_rep.file_size);
	CHECK_EQ(fcntl(got, F_GETFL) & O_ACCMODE, O_RDWR);
	close(got);
	close(file);
	close(sv[0]);
	close(sv[1]);
}

/* Send @nfds copies of @fd in one packet, by hand. */
static void send_fds(int sock, int fd, int nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(16 * sizeof(int))];
	} ctl;
	int fds[16];
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			      .msg_controllen = CMSG_SPACE(nfds * sizeof(int)) };
	struct cmsghdr *c;

	memset(&ctl, 0, sizeof(ctl));
	for (int i = 0; i < nfds; i++)
		fds[i] = fd;
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	CHECK_EQ(sendmsg(sock, &msg, 0), 1);
}

static void test_extra_fds(void)
{
	uint8_t in[16];
	int sv[2], got = -1, before;

	pair(sv);
	before = dt_test_fd_count(0);
	for (int n = 2; n <= 16; n += 7) {	/* 16: more than the receiver has room for */
		dt_test_ctx("extra fds %d", n);
		send_fds(sv[0], sv[0], n);
		CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &got), 1);
		CHECK(got >= 0);
		close(got);
		CHECK_EQ(dt_test_fd_count(0), before);
	}
	close(sv[0]);
	close(sv[1]);
}

/* How many came, all but the first closed; none kept from an empty packet. */
static void test_count_fds(void)
{
	uint8_t in[16];
	int sv[2], got = -1, before;
	unsigned nfds = 99;

	pair(sv);
	before = dt_test_fd_count(0);
	for (int n = 1; n <= 16; n += 7) {
		dt_test_ctx("count fds %d", n);
		send_fds(sv[0], sv[0], n);
		CHECK_EQ(dt_proto_recv_fds(sv[1], in, sizeof(in), &got, &nfds), 1);
		CHECK(got >= 0);
		CHECK_EQ(nfds, n <= 8 ? (unsigned)n : 9u);	/* room for 8, one more dropped */
		close(got);
		CHECK_EQ(dt_test_fd_count(0), before);
	}
	dt_test_ctx("an empty packet with an fd");
	CHECK_EQ(dt_proto_send(sv[0], in, 0, sv[0]), 0);
	CHECK_EQ(dt_proto_recv_fds(sv[1], in, sizeof(in), &got, &nfds), 0);
	CHECK_EQ(got, -1);
	CHECK_EQ(nfds, 0);
	CHECK_EQ(dt_test_fd_count(0), before);
	close(sv[0]);
	close(sv[1]);
}

static void test_eof_epipe_eagain(void)
{
	uint8_t in[16] = { 0 };
	int sv[2], fd = 5;

	dt_test_ctx("eof, epipe, eagain");
	pair(sv);
	CHECK_EQ(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &fd), -EAGAIN);
	CHECK_EQ(fd, -1);
	close(sv[0]);
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &fd), 0);
	/* Sending to a closed peer: -EPIPE, and no SIGPIPE kills us. */
	CHECK_EQ(dt_proto_send(sv[1], in, sizeof(in), -1), -EPIPE);
	CHECK_EQ(dt_proto_send(-1, in, sizeof(in), -1), -EBADF);
	CHECK_EQ(dt_proto_recv(-1, in, sizeof(in), &fd), -EBADF);
	close(sv[1]);
}

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

/* A receive interrupted by signals (no SA_RESTART) goes on waiting. */
static void test_eintr(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval tick = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	uint8_t in[16];
	int sv[2], status, fd;
	pid_t pid;

	dt_test_ctx("eintr");
	pair(sv);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	pid = fork();
	if (pid == 0) {
		/* The child waits for the parent's first tick, then sends. */
		char c;

		close(sv[1]);
		if (read(sv[0], &c, 1) != 1)	/* the parent's "ticked" packet */
			_exit(1);
		usleep(30000);			/* ~30 ticks hit the parent's recvmsg() */
		_exit(send(sv[0], "late", 4, 0) == 4 ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK_EQ(setitimer(ITIMER_REAL, &tick, NULL), 0);
	while (!ticks)
		pause();
	/* Ticks keep interrupting the blocked recvmsg() below. */
	CHECK_EQ(send(sv[1], "t", 1, 0), 1);
	CHECK_EQ(dt_proto_recv(sv[1], in, sizeof(in), &fd), 4);
	CHECK(!memcmp(in, "late", 4));
	CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(ticks > 0);
	signal(SIGALRM, SIG_DFL);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	rng_seed();
	if (!CHECK(mkdtemp(tmpdir) != NULL))
		return dt_test_done();
	snprintf(tmpfile_path, sizeof(tmpfile_path), "%s/region", tmpdir);
	test_whole_messages();
	test_oversized();
	test_pass_fd();
	test_log_reply_fd();
	test_extra_fds();
	test_count_fds();
	test_eof_epipe_eagain();
	test_eintr();
	unlink(tmpfile_path);
	rmdir(tmpdir);
	return dt_test_done();
}
