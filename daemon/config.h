/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/config.h - daxtrackd.conf, an INI-like file like git-config:
 *
 *   # comment            ; comment (whole lines only)
 *   [daemon]
 *   socket = /run/daxtrack/daxtrackd.sock
 *   workers = 4
 *   [region "db"]
 *   path = /dev/dax0.0
 *
 * Blank lines and lines starting with '#' or ';' (after blanks) are
 * ignored; a value runs to the end of the line, blanks around it trimmed,
 * and may be put in double quotes (no escapes).  Keys and section names are
 * case-sensitive.  Unknown sections or keys, repeated keys, a repeated
 * [daemon] section, repeated region names and bad values are errors
 * "FILE:LINE: reason".
 */
#ifndef DAXTRACKD_CONFIG_H
#define DAXTRACKD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DT_CONFIG_DEFAULT_PATH		"/etc/daxtrack/daxtrackd.conf"
#define DT_CONFIG_DEFAULT_SOCKET	"/run/daxtrack/daxtrackd.sock"
#define DT_CONFIG_DEFAULT_STATE_DIR	"/var/lib/daxtrack"
#define DT_CONFIG_DEFAULT_RUNTIME_DIR	"/run/daxtrack"
#define DT_CONFIG_DEFAULT_REGION	"default"
#define DT_CONFIG_DEFAULT_REGION_SIZE	(64ULL << 20)
/* The span of a region that follows its file, when no max_size is given. */
#define DT_CONFIG_DEFAULT_SPAN		(64ULL << 30)
#define DT_CONFIG_DEFAULT_CLIENTS_PER_UID	64
#define DT_CONFIG_DEFAULT_DIRTY_PER_CLIENT	(16ULL << 30)
#define DT_CONFIG_DEFAULT_FSYNC_SLICE		(64ULL << 20)

/* Bounds. */
#define DT_CONFIG_MAX_REGIONS	64
#define DT_CONFIG_NAME_MAX	63	/* region names: [A-Za-z0-9_.-]{1,63} */
#define DT_CONFIG_PATH_MAX	(PATH_MAX - 1)
#define DT_CONFIG_SOCKET_MAX	107	/* sizeof(sun_path) - 1 */
#define DT_CONFIG_GROUP_MAX	32
#define DT_CONFIG_LINE_MAX	4096

/* dt_config_load() found no file and filled in the embedded default. */
#define DT_CONFIG_DEFAULTS	1

/**
 * struct dt_config_region - One [region "NAME"] section.
 * @name: The region's name.
 * @path: Absolute path of a device-DAX character device or a file.
 * @size: Bytes (a multiple of 4KiB) of a file to create; 0 if not given.
 *	   Given, the region is that size; not given, a regular file's region
 *	   follows its file as it grows and shrinks, up to its span.
 * @max_size: The span of a region without @size: bytes it may grow to (a
 *	      multiple of 4KiB); 0 for DT_CONFIG_DEFAULT_SPAN.  Never below
 *	      the file's size at open.
 * @create: Create the file if it is missing (default yes).
 * @line: Line of the section header (0 for the embedded default).
 */
struct dt_config_region {
	char name[DT_CONFIG_NAME_MAX + 1];
	char path[DT_CONFIG_PATH_MAX + 1];
	uint64_t size;
	uint64_t max_size;
	bool create;
	unsigned line;
};

/**
 * struct dt_config - The whole configuration.
 * @source: The file it came from; "" for the embedded default.
 * @socket: Path of the listening socket.
 * @socket_mode: Its permission bits (default 0660).
 * @socket_group: Group name or number owning it; "" to leave it alone.
 * @state_dir: The state directory.
 * @runtime_dir: The runtime directory: the shared dirty logs live in its
 *		 subdirectory logs/ (default /run/daxtrack).
 * @fast_path: Hand clients shared dirty logs (LOG) and keep the daemon's
 *	       own write-intent logs (default on).
 * @workers: Worker threads, 1..256 (default 4).
 * @max_clients: Connected clients, 1..65536 (default 256).
 * @max_message: Largest request in bytes, 4K..64M (default 1M).
 * @max_ranges: Ranges in one DIRTY message, 1..1048576 (default 4096).
 * @max_clients_per_uid: Connected clients of one uid other than root,
 *			 1..65536 (default 64).
 * @max_dirty_per_client: Bytes (4KiB pages) one connection may have marked
 *			  dirty and not yet written back, 4K..64T (default 16G).
 * @fsync_slice: Bytes of a region an FSYNC writes back before the worker
 *		 serves other requests, 4K..1T (default 64M).
 * @max_dump: Bytes of DUMP text held for all clients at once, 4K..16G
 *	       (default 256M).
 * @log_level: LOG_ERR .. LOG_DEBUG (default LOG_INFO).
 * @nregions: Entries of @regions.
 * @regions: The regions in file order.
 */
struct dt_config {
	char source[DT_CONFIG_PATH_MAX + 1];
	char socket[DT_CONFIG_SOCKET_MAX + 1];
	mode_t socket_mode;
	char socket_group[DT_CONFIG_GROUP_MAX + 1];
	char state_dir[DT_CONFIG_PATH_MAX + 1];
	char runtime_dir[DT_CONFIG_PATH_MAX + 1];
	bool fast_path;
	unsigned workers;
	unsigned max_clients;
	uint64_t max_message;
	unsigned max_ranges;
	unsigned max_clients_per_uid;
	uint64_t max_dirty_per_client;
	uint64_t fsync_slice;
	uint64_t max_dump;
	int log_level;
	unsigned nregions;
	struct dt_config_region *regions;
};

/**
 * dt_config_init() - Fill in the built-in defaults, no regions.
 * @cfg: The configuration.
 *
 * Context: Any thread.  Does not allocate.
 */
void dt_config_init(struct dt_config *cfg);

/**
 * dt_config_check_aliases() - Refuse two regions over the same memory.
 * @cfg: A parsed configuration.
 * @err: Receives "FILE:LINE: reason" naming both regions; may be NULL.
 * @errlen: Size of @err.
 *
 * Two regions on the same file (same st_dev and st_ino: the same path, a
 * hard or symbolic link), on the same device (same st_rdev), or on the same
 * file still to be created (same canonical path) would be two trees over the
 * same pages, and an fsync through one would miss the other's dirty pages.
 * A region is always a whole device or a whole file, so these are all the
 * ways two regions can overlap.  dt_config_load() calls it, so the daemon
 * refuses such a file at start and on reload.
 *
 * Context: Any thread.  Calls stat() and realpath() on the region paths.
 * Return: 0; -EINVAL for two regions over the same memory; -ENOMEM.
 */
int dt_config_check_aliases(const struct dt_config *cfg, char *err, size_t errlen);

/**
 * dt_config_load() - Read a configuration file.
 * @path: The file; NULL for DT_CONFIG_DEFAULT_PATH.
 * @cfg: Filled in; free it with dt_config_free(), also after an error.
 * @err: Receives the reason of an error ("FILE:LINE: reason", or
 *	 "FILE: open: strerror"); may be NULL.
 * @errlen: Size of @err.
 *
 * A file that does not exist gives the built-in defaults plus the embedded
 * default region: "default", a file <state_dir>/default.region of 64 MiB,
 * created if missing.  A file without any [region] section is valid and
 * gives no regions.
 *
 * Context: Any thread.  Allocates.
 * Return: 0; DT_CONFIG_DEFAULTS when @path does not exist; -EINVAL for a bad
 * file or two regions over the same memory (dt_config_check_aliases()); -ENOMEM; another negative errno when the file cannot be read.
 */
int dt_config_load(const char *path, struct dt_config *cfg, char *err, size_t errlen);

/**
 * dt_config_free() - Free what dt_config_load() allocated.
 * @cfg: The configuration; left with no regions.
 */
void dt_config_free(struct dt_config *cfg);

/**
 * dt_config_parse_size() - Parse a byte count.
 * @s: Decimal digits, optionally followed by K, M, G or T (either case,
 *     optionally followed by "iB"), each a power of 1024: "64M", "1GiB".
 * @out: Receives the value.
 *
 * Return: 0; -EINVAL for an empty string, a sign, blanks, other suffixes or
 * junk; -ERANGE when the value does not fit in 64 bits.
 */
int dt_config_parse_size(const char *s, uint64_t *out);

/**
 * dt_config_valid_name() - Whether a string is a valid region name.
 * @name: The string.
 *
 * Return: true for 1..63 characters of [A-Za-z0-9_.-].
 */
bool dt_config_valid_name(const char *name);

/**
 * dt_config_find_region() - Look a region up by name.
 * @cfg: The configuration.
 * @name: The region's name.
 *
 * Return: The region, or NULL.
 */
const struct dt_config_region *dt_config_find_region(const struct dt_config *cfg,
						     const char *name);

#endif /* DAXTRACKD_CONFIG_H */
