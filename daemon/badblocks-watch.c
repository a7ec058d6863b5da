// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/badblocks-watch.c - keep the regions' bad block lists current
 * between SIGHUPs.
 *
 * The kernel updates an NVDIMM region's "badblocks" attribute (and the fsdax
 * block device's) after an address range scan or a machine check, and then
 * wakes pollers of the attribute with POLLPRI (sysfs_notify), which is what
 * "ndctl monitor" waits for.  The main loop's epoll waits for EPOLLPRI on
 * every such file of a matched namespace; besides, a timer re-reads them
 * every --badblocks-poll milliseconds (60 s by default: a write to a block
 * device's badblocks file notifies nobody).  When a file's text changed, the
 * namespaces are rescanned as at SIGHUP and every region rematched, which
 * logs the new bad ranges; the set of files is then rebuilt.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "daxtrackd.h"
#include "log.h"

/* One attribute's text, hashed: a change is all we need to see. */
static uint64_t read_hash(int fd)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	char buf[4096];
	ssize_t n, i;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			h = (h ^ (uint8_t)buf[i]) * 1099511628211ULL;
	return h;
}

static void unwatch_all(struct daemon *d)
{
	struct bb_watch *w = &d->bbw;

	for (unsigned i = 0; i < w->n; i++) {
		epoll_ctl(d->main_ep, EPOLL_CTL_DEL, w->files[i].fd, NULL);
		close(w->files[i].fd);
	}
	w->n = 0;
}

static void watch_path(struct daemon *d, const char *path)
{
	struct bb_watch *w = &d->bbw;
	struct epoll_event ev = { .events = EPOLLPRI | EPOLLERR };
	struct bb_file *f;
	int fd;

	for (unsigned i = 0; i < w->n; i++)
		if (!strcmp(w->files[i].path, path))
			return;
	if (w->n == BB_WATCH_MAX)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	f = &w->files[w->n];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->fd = fd;
	f->hash = read_hash(fd); /* a read arms the next notification */
	ev.data.fd = fd;
	if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, fd, &ev)) {
		close(fd);
		return;
	}
	w->n++;
}

/* The badblocks files of the namespaces the regions live on. */
static void watch_regions(struct daemon *d)
{
	struct srv_region *list[DT_PROTO_MAX_REGIONS];
	char path[PATH_MAX];
	unsigned n, i;

	unwatch_all(d);
	n = srv_region_snapshot(&d->srv, list);
	for (i = 0; i < n; i++) {
		const struct dt_region *r = list[i]->r;

		if (r->nd && r->ns_index >= 0) {
			const struct dt_namespace *ns = &r->nd->ns[r->ns_index];

			snprintf(path, sizeof(path), "/sys/bus/nd/devices/%s/badblocks",
				 ns->region);
			watch_path(d, path);
			if (!ns->is_chr && ns->devname[0]) {
				snprintf(path, sizeof(path), "/sys/class/block/%s/badblocks",
					 ns->devname);
				watch_path(d, path);
			}
		}
		srv_region_put(&d->srv, list[i]);
	}
}

void bb_watch_refresh(struct daemon *d)
{
	if (d->bbw.timer_fd >= 0)
		watch_regions(d);
}

int bb_watch_setup(struct daemon *d)
{
	struct bb_watch *w = &d->bbw;
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned ms = w->period_ms ? w->period_ms : BB_WATCH_PERIOD_MS;
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = ms / 1000;
	its.it_interval.tv_nsec = (long)(ms % 1000) * 1000000L;
	its.it_value = its.it_interval;
	w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (w->timer_fd < 0 || timerfd_settime(w->timer_fd, 0, &its, NULL))
		return -errno;
	ev.data.fd = w->timer_fd;
	if (epoll_ctl(d->main_ep, EPOLL_CTL_ADD, w->timer_fd, &ev))
		return -errno;
	watch_regions(d);
	return 0;
}

bool bb_watch_owns(const struct daemon *d, int fd)
{
	if (fd == d->bbw.timer_fd)
		return true;
	for (unsigned i = 0; i < d->bbw.n; i++)
		if (fd == d->bbw.files[i].fd)
			return true;
	return false;
}

void bb_watch_event(struct daemon *d, int fd)
{
	struct bb_watch *w = &d->bbw;
	const char *changed = NULL;
	uint64_t ticks, h;

	if (fd == w->timer_fd && read(fd, &ticks, sizeof(ticks)) < 0)
		return;
	for (unsigned i = 0; i < w->n; i++) {
		h = read_hash(w->files[i].fd);
		if (h != w->files[i].hash && !changed)
			changed = w->files[i].path;
		w->files[i].hash = h;
	}
	w->checks++;
	if (!changed)
		return;
	dt_log(LOG_NOTICE, "%s changed: rescanning the namespaces", changed);
	rescan_namespaces(d);
	watch_regions(d);
}

void bb_watch_close(struct daemon *d)
{
	unwatch_all(d);
	if (d->bbw.timer_fd >= 0)
		close(d->bbw.timer_fd);
	d->bbw.timer_fd = -1;
}
