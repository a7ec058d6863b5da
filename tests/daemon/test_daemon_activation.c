// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon_activation: systemd socket activation.  systemd-socket-activate
 * listens on a SOCK_SEQPACKET socket and execs daxtrackd with LISTEN_FDS=1
 * on the first connection; the daemon must serve on that socket (and ignore
 * --socket, with a notice), and stop cleanly on SIGTERM.  Needs
 * /usr/bin/systemd-socket-activate and a daemon built with libsystemd.
 */
#include "daemon_harness.h"

DT_TEST_DEFINE("test_daemon_activation");

#define ACTIVATE "/usr/bin/systemd-socket-activate"

int main(int argc, char **argv)
{
	char listen_opt[PATH_MAX + 16], ignored[PATH_MAX];
	struct dh_conn *c;
	struct dt_msg rep;
	pid_t pid;
	unsigned i;
	int st = 0;

	dh_init(argc, argv, 60);
	/* .ci/install-deps.sh installs it (package systemd): its absence is a failure. */
	if (access(ACTIVATE, X_OK)) {
		printf("%s: %s (install the package systemd)\n", ACTIVATE, strerror(errno));
		CHECK(0);
		return dt_test_done();
	}
	dh_config(NULL, NULL);
	snprintf(listen_opt, sizeof(listen_opt), "--listen=%s", dh.sock);
	dh_path(ignored, "ignored.sock");
	{
		char *args[] = { ACTIVATE, listen_opt, "--seqpacket", (char *)dh.exe, "-f", "-c",
				 dh.conf, "-s", ignored, "--flush-log", dh.flush_log, NULL };

		pid = dh_spawn(args);
	}
	dh.pid = pid;
	for (i = 0; i < 500 && access(dh.sock, F_OK); i++)
		dh_sleep_ms(10);
	dt_test_ctx("activated");
	c = dh_open();
	if (!CHECK(c))
		return dt_test_done();
	CHECK_EQ(dh_hello(c, &rep), 0);
	CHECK_EQ(rep.hello_rep.pid, pid);	/* exec'd in place */
	CHECK(dh_region_id(c, "a") != 0);
	CHECK(dh_region_id(c, "b") != 0);
	CHECK_EQ(dh_dirty1(c, dh_region_id(c, "a"), 0, 4096), 0);
	dh_close(c);
	CHECK(dh_log_has("listening on the socket passed by systemd"));
	CHECK(dh_log_has("ignored: using the socket passed by systemd"));
	CHECK(access(ignored, F_OK) != 0);
	/* A second client on the same socket. */
	c = dh_open();
	CHECK(c != NULL);
	dh_close(c);

	dt_test_ctx("stop");
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	dh.pid = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(dh_flush_count("a", 0, 4096, "range"), 1);
	return dt_test_done();
}
