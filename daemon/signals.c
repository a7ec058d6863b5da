// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/signals.c - the main thread's loop: signals through a signalfd
 * (SIGTERM, SIGINT: stop; SIGHUP: reload), the systemd watchdog timer, the
 * listening socket's new clients, the region files' size timer
 * (size-watch.c), and the bad block watcher's files and timer
 * (badblocks-watch.c).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "daxtrackd.h"
#include "log.h"

int setup_loop(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;
	int ret;

	d->main_ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->main_ep < 0)
		return -errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	d->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sig_fd < 0)
		return -errno;
	ev.data.fd = d->sig_fd;
	if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, d->sig_fd, &ev))
		return -errno;
	ev.data.fd = d->srv.listen_fd;
	if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, d->srv.listen_fd, &ev))
		return -errno;
	d->wd_fd = -1;
#ifdef HAVE_LIBSYSTEMD
	if (sd_watchdog_enabled(0, &d->wd_usec) > 0 && d->wd_usec) {
		struct itimerspec its = { 0 };
		uint64_t half = d->wd_usec / 2;

		its.it_interval.tv_sec = (time_t)(half / 1000000);
		its.it_interval.tv_nsec = (long)(half % 1000000) * 1000;
		its.it_value = its.it_interval;
		d->wd_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (d->wd_fd < 0 || timerfd_settime(d->wd_fd, 0, &its, NULL))
			return -errno;
		ev.data.fd = d->wd_fd;
		if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, d->wd_fd, &ev))
			return -errno;
	}
#endif
	ret = size_watch_setup(d);
	if (ret)
		return ret;
	return bb_watch_setup(d);
}

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			dt_log(LOG_INFO, "SIGHUP: reloading %s", d->config_path ? d->config_path
						: DT_CONFIG_DEFAULT_PATH);
			reload(d);
			bb_watch_refresh(d);	/* new regions, new namespaces */
		} else {
			dt_log(LOG_INFO, "%s: stopping", strsignal((int)si.ssi_signo));
			d->stop = true;
		}
	}
}

void loop(struct daemon *d)
{
	struct epoll_event evs[4];
	uint64_t ticks;
	int n, i;

	while (!d->stop) {
		n = epoll_wait(d->main_ep, evs, 4, -1);
		if (n < 0 && errno != EINTR) {
			dt_log(LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == d->sig_fd) {
				handle_signals(d);
			} else if (evs[i].data.fd == d->srv.listen_fd && !d->stop) {
				srv_accept(&d->srv);
			} else if (evs[i].data.fd == d->wd_fd) {
				if (read(d->wd_fd, &ticks, sizeof(ticks)) < 0)
					continue;
				notify("WATCHDOG=1");
				notify_status(d);
			} else if (evs[i].data.fd == d->size_fd) {
				size_watch_event(d);
			} else if (bb_watch_owns(d, evs[i].data.fd)) {
				bb_watch_event(d, evs[i].data.fd);
			}
		}
	}
}
