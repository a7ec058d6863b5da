/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon_util.h - helpers of the daemon module tests: a temporary directory
 * and small files in it.
 */
#ifndef DAEMON_UTIL_H
#define DAEMON_UTIL_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmp_dir[PATH_MAX];

static inline const char *tmp_path(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmp_dir, name);
	return buf;
}

static inline void tmp_setup(const char *base)
{
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/dt-daemon-XXXXXX", base);
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static inline void tmp_cleanup(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", tmp_dir);
}

static inline int write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

#endif /* DAEMON_UTIL_H */
