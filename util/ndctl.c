// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util/ndctl.c - persistent memory namespaces through libndctl (see ndctl.h).
 *
 * Device numbers come from sysfs ("M:m" in .../dev), not from /dev, so that
 * a missing or renamed device node does not matter.  Bad blocks are read
 * per region (libndctl has none per namespace for devdax) and moved to the
 * device's own offsets: region start + offset - start of the device's data
 * (the pfn or dax "resource", which is past the info block and, with
 * map=dev, the page structs).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <ndctl/libndctl.h>

#include "ndctl.h"

#define RESOURCE_UNKNOWN ULLONG_MAX

struct dt_ndctl_private {
	struct ndctl_ctx *ctx;
	struct ndctl_region **regions;	/* region of each namespace */
};

uint8_t dt_ns_wire_mode(enum dt_ns_mode mode)
{
	switch (mode) {
	case DT_NS_MODE_FSDAX: return DT_NS_FSDAX;
	case DT_NS_MODE_DEVDAX: return DT_NS_DEVDAX;
	case DT_NS_MODE_RAW: return DT_NS_RAW;
	case DT_NS_MODE_SECTOR: return DT_NS_SECTOR;
	default: return DT_NS_UNKNOWN;
	}
}

static enum dt_ns_mode ns_mode(struct ndctl_namespace *ndns)
{
	switch (ndctl_namespace_get_mode(ndns)) {
	case NDCTL_NS_MODE_FSDAX: return DT_NS_MODE_FSDAX;
	case NDCTL_NS_MODE_DEVDAX: return DT_NS_MODE_DEVDAX;
	case NDCTL_NS_MODE_RAW: return DT_NS_MODE_RAW;
	case NDCTL_NS_MODE_SECTOR: return DT_NS_MODE_SECTOR;
	default: return DT_NS_MODE_UNKNOWN;
	}
}

static void copy_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Read "M:m" from a sysfs dev file. */
static int read_devt(const char *path, dev_t *out)
{
	unsigned maj, min;
	FILE *f = fopen(path, "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%u:%u", &maj, &min);
	fclose(f);
	if (n != 2)
		return -EINVAL;
	*out = makedev(maj, min);
	return 0;
}

static void block_devt(struct dt_namespace *ns)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", ns->devname);
	if (read_devt(path, &ns->devt))
		ns->devt = 0;
}

/* The character device of a devdax namespace: a dax* child of the nd device. */
static void dax_devt(struct dt_namespace *ns, const char *nd_devname)
{
	static const char *const fmts[] = {
		"/sys/bus/nd/devices/%s/%s/dev",
		"/sys/bus/dax/devices/%s/dev",
		"/sys/class/dax/%s/dev",
	};
	char path[PATH_MAX];
	size_t i;

	ns->is_chr = true;
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		if (i == 0)
			snprintf(path, sizeof(path), fmts[0], nd_devname, nd_devname);
		else
			snprintf(path, sizeof(path), fmts[i], nd_devname);
		if (!read_devt(path, &ns->devt))
			return;
	}
	ns->devt = 0;
}

/* Fill in devname, devt, size, align; return the data start (or unknown). */
static unsigned long long ns_device(struct ndctl_namespace *ndns, struct dt_namespace *ns)
{
	struct ndctl_pfn *pfn = ndctl_namespace_get_pfn(ndns);
	struct ndctl_dax *dax = ndctl_namespace_get_dax(ndns);
	struct ndctl_btt *btt = ndctl_namespace_get_btt(ndns);

	if (dax) {
		copy_name(ns->devname, sizeof(ns->devname), ndctl_dax_get_devname(dax));
		ns->size = ndctl_dax_get_size(dax);
		ns->align = ndctl_dax_get_align(dax);
		dax_devt(ns, ns->devname);
		return ndctl_dax_get_resource(dax);
	}
	if (pfn) {
		copy_name(ns->devname, sizeof(ns->devname), ndctl_pfn_get_block_device(pfn));
		ns->size = ndctl_pfn_get_size(pfn);
		ns->align = ndctl_pfn_get_align(pfn);
		block_devt(ns);
		return ndctl_pfn_get_resource(pfn);
	}
	if (btt) {
		copy_name(ns->devname, sizeof(ns->devname), ndctl_btt_get_block_device(btt));
		ns->size = ndctl_btt_get_size(btt);
		block_devt(ns);
		return RESOURCE_UNKNOWN;	/* sectors are remapped: no bad ranges */
	}
	copy_name(ns->devname, sizeof(ns->devname), ndctl_namespace_get_block_device(ndns));
	if (ns->devname[0])
		block_devt(ns);
	return ndctl_namespace_get_resource(ndns);
}

static int add_badblock(struct dt_namespace *ns, uint64_t offset, uint64_t len)
{
	struct dt_badblock *bad;

	bad = realloc(ns->bad, (ns->nbad + 1) * sizeof(*bad));
	if (!bad)
		return -ENOMEM;
	bad[ns->nbad].offset = offset;
	bad[ns->nbad].len = len;
	ns->bad = bad;
	ns->nbad++;
	return 0;
}

static int cmp_badblock(const void *a, const void *b)
{
	const struct dt_badblock *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Region bad blocks (sectors from the region start) inside the device. */
static int ns_badblocks(struct ndctl_region *region, struct dt_namespace *ns,
			unsigned long long data_start)
{
	unsigned long long region_start = ndctl_region_get_resource(region);
	struct badblock *bb;
	int ret;

	if (data_start == RESOURCE_UNKNOWN || region_start == RESOURCE_UNKNOWN || !ns->size)
		return 0;
	ndctl_region_badblock_foreach(region, bb) {
		uint64_t start = region_start + bb->offset * 512;
		uint64_t end = start + (uint64_t)bb->len * 512;

		if (end <= data_start || start >= data_start + ns->size)
			continue;
		if (start < data_start)
			start = data_start;
		if (end > data_start + ns->size)
			end = data_start + ns->size;
		ret = add_badblock(ns, start - data_start, end - start);
		if (ret)
			return ret;
	}
	if (ns->nbad > 1)
		qsort(ns->bad, ns->nbad, sizeof(*ns->bad), cmp_badblock);
	return 0;
}

/*
 * The block device's own bad sectors (/sys/class/block/NAME/badblocks,
 * "SECTOR COUNT" lines, from the device's sector 0): the kernel fills them
 * from the region's (ARS) and an administrator may add some (a write to the
 * file), which the region's list, what libndctl reads, never shows.  Both
 * lists are merged; overlaps are merged by the region code.
 */
static int disk_badblocks(struct dt_namespace *ns)
{
	unsigned long long sector, count;
	char path[PATH_MAX];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/block/%s/badblocks", ns->devname);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!ret && fscanf(f, "%llu %llu%*[^\n]", &sector, &count) == 2) {
		if (count && sector * 512 < ns->size)
			ret = add_badblock(ns, sector * 512, count * 512);
	}
	fclose(f);
	if (ns->nbad > 1)
		qsort(ns->bad, ns->nbad, sizeof(*ns->bad), cmp_badblock);
	return ret;
}

static bool has_deep_flush(const char *region)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/nd/devices/%s/deep_flush", region);
	return !access(path, F_OK);
}

static int add_namespace(struct dt_ndctl *nd, struct ndctl_bus *bus,
			 struct ndctl_region *region, struct ndctl_namespace *ndns)
{
	struct dt_ndctl_private *priv = nd->priv;
	struct ndctl_region **regions;
	struct dt_namespace *ns;
	unsigned long long data_start;
	int ret;

	ns = realloc(nd->ns, (nd->nns + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	nd->ns = ns;
	regions = realloc(priv->regions, (nd->nns + 1) * sizeof(*regions));
	if (!regions)
		return -ENOMEM;
	priv->regions = regions;
	regions[nd->nns] = region;

	ns = &nd->ns[nd->nns++];
	memset(ns, 0, sizeof(*ns));
	copy_name(ns->bus, sizeof(ns->bus), ndctl_bus_get_devname(bus));
	copy_name(ns->bus_provider, sizeof(ns->bus_provider), ndctl_bus_get_provider(bus));
	copy_name(ns->region, sizeof(ns->region), ndctl_region_get_devname(region));
	copy_name(ns->name, sizeof(ns->name), ndctl_namespace_get_devname(ndns));
	ns->mode = ns_mode(ndns);
	ns->numa_node = ndctl_namespace_get_numa_node(ndns);
	ns->enabled = ndctl_namespace_is_active(ndns);	/* it or its pfn/dax/btt */
	ns->size = ndctl_namespace_get_size(ndns);
	ns->deep_flush = has_deep_flush(ns->region);
	ns->cxl = !strcmp(ns->bus_provider, "CXL");
	ns->region_start = ndctl_region_get_resource(region);
	ns->cxl_region = ns->cxl ? dt_cxl_region_at(nd->cxl, ns->region_start) : -1;
	nd->ncxl += ns->cxl;
	if (!ns->enabled)
		return 0;
	data_start = ns_device(ndns, ns);
	ret = ns_badblocks(region, ns, data_start);
	if (!ret && !ns->is_chr && ns->devname[0] && data_start != RESOURCE_UNKNOWN)
		ret = disk_badblocks(ns);
	return ret;
}

static int scan_ctx(struct dt_ndctl *nd)
{
	struct ndctl_namespace *ndns;
	struct ndctl_region *region;
	struct ndctl_bus *bus;
	int ret;

	ndctl_bus_foreach(nd->priv->ctx, bus) {
		ndctl_region_foreach(bus, region) {
			ndctl_namespace_foreach(region, ndns) {
				/* idle seeds: what "ndctl list" hides too */
				if (!ndctl_namespace_get_size(ndns) &&
				    !ndctl_namespace_is_active(ndns))
					continue;
				ret = add_namespace(nd, bus, region, ndns);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

static void set_note(struct dt_ndctl *nd)
{
	if (!nd->nns)
		snprintf(nd->note, sizeof(nd->note), "no persistent memory namespaces found; %s",
			 nd->cxl->note);
	else
		snprintf(nd->note, sizeof(nd->note), "%u persistent memory namespace%s found "
			 "(%u on CXL); %s", nd->nns, nd->nns == 1 ? "" : "s", nd->ncxl,
			 nd->cxl->note);
}

int dt_ndctl_scan(struct dt_ndctl **out)
{
	struct dt_ndctl *nd;
	int ret;

	*out = NULL;
	nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	nd->priv = calloc(1, sizeof(*nd->priv));
	ret = nd->priv ? dt_cxl_scan(&nd->cxl, true) : -ENOMEM;
	if (ret)
		goto fail;
	ret = ndctl_new(&nd->priv->ctx);
	if (ret) {
		nd->priv->ctx = NULL;
		snprintf(nd->note, sizeof(nd->note), "libndctl: ndctl_new: %s; no persistent "
			 "memory namespaces known", strerror(ret < 0 ? -ret : ret));
		*out = nd;
		return 0;
	}
	ret = scan_ctx(nd);
	if (ret)
		goto fail;
	set_note(nd);
	*out = nd;
	return 0;
fail:
	dt_ndctl_free(nd);
	return ret;
}

void dt_ndctl_free(struct dt_ndctl *nd)
{
	unsigned i;

	if (!nd)
		return;
	for (i = 0; i < nd->nns; i++)
		free(nd->ns[i].bad);
	free(nd->ns);
	dt_cxl_free(nd->cxl);
	if (nd->priv) {
		free(nd->priv->regions);
		if (nd->priv->ctx)
			ndctl_unref(nd->priv->ctx);
		free(nd->priv);
	}
	free(nd);
}

/* The whole disk of a partition; @dev itself if it is not one. */
static dev_t whole_disk(dev_t dev)
{
	char path[PATH_MAX];
	dev_t parent = 0;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", major(dev), minor(dev));
	if (access(path, F_OK))
		return dev;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", major(dev), minor(dev));
	if (read_devt(path, &parent))
		return dev;
	return parent;
}

int dt_ndctl_match(const struct dt_ndctl *nd, bool is_chr, dev_t dev)
{
	dev_t disk = is_chr ? dev : whole_disk(dev);
	unsigned i;

	for (i = 0; i < nd->nns; i++) {
		const struct dt_namespace *ns = &nd->ns[i];

		if (!ns->devt || ns->is_chr != is_chr)
			continue;
		if (ns->devt == dev || ns->devt == disk)
			return (int)i;
	}
	return -ENOENT;
}

int dt_ndctl_deep_flush(struct dt_ndctl *nd, unsigned index)
{
	int ret;

	if (index >= nd->nns || !nd->priv || !nd->priv->regions)
		return -ENOENT;
	if (!nd->ns[index].deep_flush)
		return -EOPNOTSUPP;
	ret = ndctl_region_deep_flush(nd->priv->regions[index]);
	if (ret == -EBADF)	/* libndctl found no deep_flush to open */
		return -EOPNOTSUPP;
	return ret > 0 ? -ret : ret;
}
