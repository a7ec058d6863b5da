// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/size-watch.c - a region file truncated (or grown back) by another
 * process is followed within SIZE_WATCH_MS even when no request touches the
 * region: a timer of the main loop re-reads every region file's size, one
 * fstat(2) each (dt_region_check_size()).  A flush that meets a page past
 * the end and every writer's request check at once besides.
 *
 * A periodic fstat(2) rather than inotify: it sees a truncation through any
 * name or descriptor and needs no watch per path to keep across renames;
 * it costs one system call per region per tick.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "daxtrackd.h"
#include "log.h"

int size_watch_setup(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct itimerspec its = { 0 };

	its.it_interval.tv_nsec = SIZE_WATCH_MS * 1000000L;
	its.it_value = its.it_interval;
	d->size_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->size_fd < 0 || timerfd_settime(d->size_fd, 0, &its, NULL))
		return -errno;
	ev.data.fd = d->size_fd;
	return epoll_ctl(d->main_ep, EPOLL_CTL_ADD, d->size_fd, &ev) ? -errno : 0;
}

void size_watch_event(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	uint64_t ticks;
	unsigned n;

	if (read(d->size_fd, &ticks, sizeof(ticks)) < 0)
		return;
	n = srv_region_snapshot(&d->srv, list);
	for (unsigned i = 0; i < n; i++) {
		dt_region_check_size(list[i]->r);
		srv_region_put(&d->srv, list[i]);
	}
}

void size_watch_close(struct daemon *d)
{
	if (d->size_fd >= 0)
		close(d->size_fd);
	d->size_fd = -1;
}
