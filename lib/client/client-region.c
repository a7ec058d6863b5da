// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-region.c - the calls of daxtrack/client.h on a region itself:
 * attach (by name or by fd), detach, the region's facts (info), and its
 * mapping (map), with the attach by the mapped fd that brings write rights.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client-private.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif

/* ATTACH @r (its name, or its fd) and fill it in from the reply. */
static int attach_req(struct dt_client *c, struct dt_client_region *r, int fd)
{
	struct dt_msg req, rep;
	int err;

	dt_client_init_req(c, &req, DT_OP_ATTACH);
	req.attach_req.mode = fd >= 0 ? DT_ATTACH_FD : DT_ATTACH_NAME;
	if (fd < 0)
		strcpy(req.attach_req.name, r->name);
	err = dt_client_xact(c, NULL, false, &req, fd, &rep);
	if (err)
		return err;
	if (rep.status)
		return rep.status;
	r->id = rep.attach_rep.region;
	r->flags = rep.attach_rep.flags;
	r->size = rep.attach_rep.span;
	r->bytes = rep.attach_rep.size;
	r->access = rep.attach_rep.access;
	strcpy(r->name, rep.attach_rep.name);
	return 0;
}

static int attach(struct dt_client *c, const char *name, int fd, struct dt_client_region **rp)
{
	struct dt_client_region *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->fd = -1;
	if (name) {
		strcpy(r->name, name);
	} else {
		r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (r->fd < 0) {
			free(r);
			return -errno;
		}
		r->by_fd = true;
	}
	pthread_mutex_lock(&c->lock);
	err = attach_req(c, r, r->fd);
	if (!err) {
		r->next = c->regions;
		c->regions = r;
		dt_client_log_open(c, r);
	}
	pthread_mutex_unlock(&c->lock);
	if (err) {
		if (r->fd >= 0)
			close(r->fd);
		free(r);
		return err;
	}
	*rp = r;
	return 0;
}

int dt_client_attach(struct dt_client *c, const char *name, struct dt_client_region **rp)
{
	*rp = NULL;
	if (!name || !*name)
		return -EINVAL;
	if (strlen(name) >= DT_PROTO_NAME_MAX)
		return -ENAMETOOLONG;
	return attach(c, name, -1, rp);
}

int dt_client_attach_fd(struct dt_client *c, int fd, struct dt_client_region **rp)
{
	*rp = NULL;
	if (fd < 0)
		return -EBADF;
	return attach(c, NULL, fd, rp);
}

void dt_client_region_free(struct dt_client_region *r)
{
	if (r->addr)
		munmap(r->addr, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	dt_client_log_free(r);
	dt_rset_free(&r->batch);
	dt_rset_free(&r->acked);
	free(r);
}

int dt_client_detach(struct dt_client_region *r)
{
	struct dt_client *c;
	struct dt_client_region **pp;
	int err;

	if (!r)
		return 0;
	c = r->c;
	pthread_mutex_lock(&c->lock);
	/* No flight may outlive its region: reaped, or put back into the batches. */
	dt_client_reap(c);
	dt_client_track_detach(r);	/* collects what was written */
	err = r->gone ? r->gone : dt_client_send_batch(c, r);
	if (!r->gone)	/* the daemon counts the client tracking no more */
		dt_client_track_report(r, DT_TRACK_NONE, 0);
	for (pp = &c->regions; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	dt_client_log_counters(r, &c->cnt);	/* the handle keeps them */
	dt_client_log_park(c, r);	/* for the next attachment of the region */
	pthread_mutex_unlock(&c->lock);
	dt_client_region_free(r);
	return err;
}

void dt_client_region_info(struct dt_client_region *r, struct dt_client_region_info *info)
{
	struct dt_client *c = r->c;

	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&c->lock);
	info->id = r->id;
	info->flags = r->flags;
	info->size = r->bytes;
	info->writable = r->access & DT_ACCESS_WRITE;
	info->by_fd = r->by_fd;
	memcpy(info->name, r->name, sizeof(info->name));
	info->addr = r->addr;
	info->map_len = r->map_len;
	info->map_sync = r->map_sync;
	info->map_writable = r->map_writable;
	info->pending = r->batch.n;
	if (r->log) {
		info->log = true;
		info->log_flags = r->log->flags;
		info->log_id = r->log->id;
		info->persist_in_process = dt_client_log_in_process(r);
	}
	pthread_mutex_unlock(&c->lock);
}

/* The region's path, from REGIONS. */
static int region_path(struct dt_client *c, struct dt_client_region *r, char *path)
{
	struct dt_proto_region *a;
	uint32_t n;
	int err;

	err = dt_client_regions_locked(c, &a, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (uint32_t i = 0; i < n; i++) {
		if (a[i].id == r->id) {
			memcpy(path, a[i].path, DT_PROTO_PATH_MAX);
			err = 0;
			break;
		}
	}
	free(a);
	return err;
}

/* Open the region's path: O_RDWR, or O_RDONLY when writing is refused. */
static int open_region(struct dt_client *c, struct dt_client_region *r, int *fdp)
{
	char path[DT_PROTO_PATH_MAX];
	int fd, err;

	err = region_path(c, r, path);
	if (err)
		return err;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*fdp = fd;
	return 0;
}

static int map_fd(struct dt_client_region *r, int fd)
{
	int mode = fcntl(fd, F_GETFL);
	int prot = PROT_READ;
	struct stat st;
	void *p;

	if (mode < 0)
		return -errno;
	if ((mode & O_ACCMODE) == O_RDWR)
		prot |= PROT_WRITE;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* A region that follows its file is mapped to its span, to grow into. */
	if (r->flags & DT_REGION_GROWS)
		r->bytes = (uint64_t)st.st_size < r->size ? (uint64_t)st.st_size : r->size;
	else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < r->size)
		return -ERANGE;
	r->map_sync = true;
	p = mmap(NULL, r->size, prot, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	if (p == MAP_FAILED && (errno == EOPNOTSUPP || errno == EINVAL)) {
		r->map_sync = false;
		p = mmap(NULL, r->size, prot, MAP_SHARED, fd, 0);
	}
	if (p == MAP_FAILED)
		return -errno;
	r->map_len = r->size;
	r->map_writable = prot & PROT_WRITE;
	/* May the client flush its stores from it: the daemon's PMEM is for its own mapping. */
	__atomic_store_n(&r->map_pmem, r->map_sync || (r->flags & DT_REGION_DEVDAX) ||
				       r->c->pmem_forced, __ATOMIC_RELAXED);
	/* Published last: the lock-free marks and persists read it without the lock. */
	__atomic_store_n(&r->addr, p, __ATOMIC_RELEASE);
	r->adopted = false;
	return 0;
}

/* A region attached by name, mapped O_RDWR: attach it by that fd for write rights. */
static void upgrade(struct dt_client *c, struct dt_client_region *r, int fd)
{
	struct dt_client_region tmp = *r;

	if (attach_req(c, &tmp, fd) || tmp.id != r->id)
		return;
	r->access = tmp.access;
	r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	r->by_fd = r->fd >= 0;
}

static int map_locked(struct dt_client *c, struct dt_client_region *r)
{
	int fd = -1, err;

	if (r->gone)
		return r->gone;
	if (r->by_fd)
		return map_fd(r, r->fd);
	err = open_region(c, r, &fd);
	if (err)
		return err;
	err = map_fd(r, fd);
	if (!err && r->map_writable && !(r->access & DT_ACCESS_WRITE)) {
		upgrade(c, r, fd);
		dt_client_log_open(c, r);	/* now with write rights */
	}
	close(fd);
	return err;
}

int dt_client_map(struct dt_client_region *r, void **addr, size_t *len)
{
	struct dt_client *c = r->c;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	if (!r->addr || r->adopted)	/* an adopted mapping is the application's */
		err = map_locked(c, r);
	if (!err) {
		*addr = r->addr;
		*len = r->flags & DT_REGION_GROWS ? r->bytes : r->map_len;
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}
