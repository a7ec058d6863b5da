/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/local.h - `namespaces --local`: the persistent memory
 * namespaces found by daxtrackctl itself, through libndctl (util/ndctl.c, the scanner
 * the daemon uses too, so both report the same).  Kept apart from the
 * protocol header: util/ndctl.h and daxtrack/proto.h both name DT_NS_* modes.
 */
#ifndef DAXTRACKCTL_LOCAL_H
#define DAXTRACKCTL_LOCAL_H

#include <stddef.h>
#include <stdint.h>

/* One namespace, with ndctl's names; @mode is "fsdax", "devdax", ... */
struct ctl_local_ns {
	char bus[32];
	char region[32];
	char name[32];
	char blockdev[32];
	char chardev[32];
	const char *mode;
	int numa_node;
	uint64_t size;
	uint64_t align;
	uint64_t badblocks;	/* 512-byte blocks */
};

/**
 * ctl_local_namespaces() - Enumerate with libndctl.
 * @out: Receives a malloc()ed array (free() it), NULL if empty.
 * @count: Receives its length.
 * @note: Receives libndctl's note ("no persistent memory namespaces found",
 *	  or why libndctl could not be used).
 * @notelen: Size of @note.
 *
 * Return: 0, or -ENOMEM.
 */
int ctl_local_namespaces(struct ctl_local_ns **out, uint32_t *count, char *note, size_t notelen);

#endif /* DAXTRACKCTL_LOCAL_H */
