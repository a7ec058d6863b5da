// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_notify: the daemon's sd_notify(3) protocol, read from a
 * NOTIFY_SOCKET of the test's own (a datagram socket, as systemd's):
 * READY=1 only once the socket accepts clients, STATUS=, WATCHDOG=1 every
 * half WATCHDOG_USEC, RELOADING=1 with MONOTONIC_USEC then READY=1 on
 * SIGHUP, STOPPING=1 on SIGTERM; after an unclean exit, the recovery STATUS=
 * and EXTEND_TIMEOUT_USEC= before READY=1.  Needs a daemon built with
 * libsystemd.
 */
#include <poll.h>

#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_notify");

#define WATCHDOG_USEC	"200000"	/* pings every 100 ms */

static int notify_fd = -1;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void notify_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	dh_path(sa.sun_path, "notify.sock");
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (notify_fd < 0 || bind(notify_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("notify socket");
		exit(2);
	}
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	setenv("WATCHDOG_USEC", WATCHDOG_USEC, 1);
	unsetenv("WATCHDOG_PID");
}

/* The next notification within @ms into @buf ("" on timeout). */
static void notify_next(char *buf, size_t len, unsigned ms)
{
	struct pollfd p = { .fd = notify_fd, .events = POLLIN };
	ssize_t n;

	buf[0] = '\0';
	if (poll(&p, 1, (int)ms) != 1)
		return;
	n = recv(notify_fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
}

/*
 * Read notifications for up to @ms until one contains @want; the watchdog
 * pings seen meanwhile are counted in @pings.  Return: whether it came.
 */
static bool notify_wait(const char *want, unsigned ms, unsigned *pings, char *got, size_t len)
{
	uint64_t end = now_ms() + ms;

	while (now_ms() < end) {
		notify_next(got, len, (unsigned)(end - now_ms()));
		if (pings && !strcmp(got, "WATCHDOG=1"))
			(*pings)++;
		if (got[0] && strstr(got, want))
			return true;
	}
	return false;
}

static void test_start_ready(void)
{
	char got[512];
	unsigned pings = 0;
	uint64_t t0;
	int fd;

	dt_test_ctx("start: READY=1 when serving");
	if (!CHECK_EQ(dh_start(), 0))
		return;
	/* dh_start() returned once the socket accepted: READY=1 is there already. */
	CHECK(notify_wait("READY=1", 2000, &pings, got, sizeof(got)));
	fd = dh_try_connect(dh.sock);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(notify_wait("STATUS=serving 2 regions", 2000, &pings, got, sizeof(got)));

	dt_test_ctx("watchdog: a ping every half WATCHDOG_USEC");
	pings = 0;
	t0 = now_ms();
	while (now_ms() - t0 < 1000)
		notify_wait("WATCHDOG=1", 1000, &pings, got, sizeof(got));
	/* 10 expected in a second; a loaded machine may lose a few. */
	CHECK(pings >= 5 && pings <= 12);

	dt_test_ctx("SIGHUP: RELOADING=1, MONOTONIC_USEC, then READY=1");
	kill(dh.pid, SIGHUP);
	CHECK(notify_wait("RELOADING=1", 2000, NULL, got, sizeof(got)));
	CHECK(strstr(got, "\nMONOTONIC_USEC=") != NULL);
	CHECK(notify_wait("READY=1", 2000, NULL, got, sizeof(got)));

	dt_test_ctx("SIGTERM: STOPPING=1, exit 0");
	kill(dh.pid, SIGTERM);
	CHECK(notify_wait("STOPPING=1", 2000, NULL, got, sizeof(got)));
	CHECK_EQ(dh_stop(0), 0);
}

static void test_recovery(void)
{
	char got[512];
	bool status, extend;

	dt_test_ctx("recovery: STATUS= and EXTEND_TIMEOUT_USEC= before READY=1");
	if (!CHECK_EQ(dh_start(), 0))
		return;
	CHECK(notify_wait("READY=1", 2000, NULL, got, sizeof(got)));
	CHECK_EQ(dh_stop(SIGKILL), 128 + SIGKILL);
	while (notify_wait("", 50, NULL, got, sizeof(got)))
		;	/* drain */
	if (!CHECK_EQ(dh_start(), 0))
		return;
	status = notify_wait("STATUS=recovery after an unclean exit", 2000, NULL, got,
			     sizeof(got));
	CHECK(status);
	/* One extension per region flushed, all before READY=1. */
	extend = notify_wait("EXTEND_TIMEOUT_USEC=120000000", 2000, NULL, got, sizeof(got)) &&
		 notify_wait("EXTEND_TIMEOUT_USEC=120000000", 2000, NULL, got, sizeof(got));
	CHECK(extend);
	CHECK(notify_wait("READY=1", 2000, NULL, got, sizeof(got)));
	CHECK_EQ(dh_stop(SIGTERM), 0);
}

int main(int argc, char **argv)
{
	dh_init(argc, argv, 60);
	dh_config(NULL, NULL);
	notify_open();
	test_start_ready();
	test_recovery();
	close(notify_fd);
	return dt_test_done();
}
