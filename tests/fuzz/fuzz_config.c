// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_config.c - libFuzzer target: dt_config_load() of arbitrary bytes.
 *
 * The input is written to a file in a mkdtemp() directory and loaded.  Then:
 *   - on an error, the message is non-empty and reads "FILE:LINE: reason"
 *     with FILE the path given and 1 <= LINE <= the number of lines;
 *   - on success, every value is inside its documented bounds and every
 *     region is well formed (a valid unique name, an absolute path, a size
 *     that is a multiple of 4KiB, a plausible line);
 *   - dt_config_free() leaves no allocation behind (LeakSanitizer).
 * The size parser and the name checker are also fed the input as a string.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char path[128];

static void __attribute__((noreturn)) bad(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_config: %s (message \"%s\")\n", what, err ? err : "");
	abort();
}

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/fuzz_config.XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("fuzz_config: mkdtemp");
		abort();
	}
	snprintf(path, sizeof(path), "%s/daxtrackd.conf", dir);
	atexit(cleanup);
	return 0;
}

static void write_file(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;
	ssize_t n;

	if (fd < 0) {
		perror("fuzz_config: open");
		abort();
	}
	while (done < size) {
		n = write(fd, data + done, size - done);
		if (n <= 0) {
			perror("fuzz_config: write");
			abort();
		}
		done += (size_t)n;
	}
	close(fd);
}

static unsigned count_lines(const uint8_t *data, size_t size)
{
	unsigned lines = 0;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	return lines + (size && data[size - 1] != '\n');
}

/* "PATH:LINE: reason" with 1 <= LINE <= @lines and a non-empty reason. */
static void check_error(const char *err, unsigned lines)
{
	size_t plen = strlen(path);
	const char *p;
	char *end;
	unsigned long line;

	if (!err[0])
		bad("empty error message", err);
	if (strncmp(err, path, plen) || err[plen] != ':')
		bad("error message does not start with \"FILE:\"", err);
	p = err + plen + 1;
	if (*p < '0' || *p > '9')
		bad("error message without a line number", err);
	line = strtoul(p, &end, 10);
	if (line < 1 || line > lines)
		bad("error message with a line number outside the file", err);
	if (end[0] != ':' || end[1] != ' ' || !end[2])
		bad("error message without \": reason\"", err);
}

static bool absolute(const char *s)
{
	return s[0] == '/';
}

static void check_config(const struct dt_config *cfg, unsigned lines)
{
	if (strcmp(cfg->source, path))
		bad("source is not the file loaded", cfg->source);
	if (!absolute(cfg->socket) || strlen(cfg->socket) > DT_CONFIG_SOCKET_MAX)
		bad("bad socket", cfg->socket);
	if (!absolute(cfg->state_dir))
		bad("bad state_dir", cfg->state_dir);
	if (cfg->socket_mode > 0777)
		bad("socket_mode out of range", NULL);
	if (strlen(cfg->socket_group) > DT_CONFIG_GROUP_MAX)
		bad("socket_group too long", cfg->socket_group);
	if (cfg->workers < 1 || cfg->workers > 256)
		bad("workers out of range", NULL);
	if (cfg->max_clients < 1 || cfg->max_clients > 65536)
		bad("max_clients out of range", NULL);
	if (cfg->max_message < 4096 || cfg->max_message > (64ULL << 20))
		bad("max_message out of range", NULL);
	if (cfg->max_ranges < 1 || cfg->max_ranges > 1048576)
		bad("max_ranges out of range", NULL);
	if (cfg->max_clients_per_uid < 1 || cfg->max_clients_per_uid > 65536)
		bad("max_clients_per_uid out of range", NULL);
	if (cfg->max_dirty_per_client < 4096 || cfg->max_dirty_per_client > (64ULL << 40))
		bad("max_dirty_per_client out of range", NULL);
	if (cfg->fsync_slice < 4096 || cfg->fsync_slice > (1ULL << 40))
		bad("fsync_slice out of range", NULL);
	if (cfg->log_level < LOG_ERR || cfg->log_level > LOG_DEBUG)
		bad("log_level out of range", NULL);
	if (cfg->nregions > DT_CONFIG_MAX_REGIONS || (cfg->nregions && !cfg->regions))
		bad("bad region count", NULL);
	for (unsigned i = 0; i < cfg->nregions; i++) {
		const struct dt_config_region *r = &cfg->regions[i];

		if (!dt_config_valid_name(r->name))
			bad("invalid region name accepted", r->name);
		if (dt_config_find_region(cfg, r->name) != r)
			bad("duplicate region name accepted", r->name);
		if (!absolute(r->path))
			bad("region path not absolute", r->path);
		if (r->size % 4096)
			bad("region size not a multiple of 4KiB", r->name);
		if (r->line < 1 || r->line > lines || (i && r->line <= cfg->regions[i - 1].line))
			bad("region line out of order", r->name);
	}
}

/* The helpers that take strings, on the input cut at its first NUL. */
static void fuzz_strings(const uint8_t *data, size_t size)
{
	char buf[128];
	size_t n = size < sizeof(buf) - 1 ? size : sizeof(buf) - 1;
	uint64_t v = 0;
	int ret;

	memcpy(buf, data, n);
	buf[n] = '\0';
	ret = dt_config_parse_size(buf, &v);
	if (ret && ret != -EINVAL && ret != -ERANGE)
		bad("dt_config_parse_size: unexpected error", buf);
	(void)dt_config_valid_name(buf);
	(void)dt_log_level_parse(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_config cfg;
	char err[1024];
	unsigned lines = count_lines(data, size);
	int ret;

	fuzz_strings(data, size);
	write_file(data, size);
	memset(err, 'x', sizeof(err));
	ret = dt_config_load(path, &cfg, err, sizeof(err));
	if (!memchr(err, '\0', sizeof(err)))
		bad("error message not terminated", NULL);
	if (ret == 0) {
		if (err[0])
			bad("success with an error message", err);
		check_config(&cfg, lines);
	} else if (ret == -EINVAL) {
		check_error(err, lines);
	} else if (ret == -ENOMEM) {
		if (!err[0])
			bad("-ENOMEM without a message", err);
	} else {
		fprintf(stderr, "fuzz_config: unexpected return %d\n", ret);
		bad("unexpected return value", err);
	}
	dt_config_free(&cfg);
	if (cfg.nregions || cfg.regions)
		bad("dt_config_free() left regions", NULL);
	return 0;
}
