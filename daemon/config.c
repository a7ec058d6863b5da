// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/config.c - the daxtrackd.conf parser (format in config.h and
 * docs/daxtrackd.conf.md).
 */
#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "state.h"

enum section { SEC_NONE, SEC_DAEMON, SEC_REGION };

/* Keys of the two sections; the index is used to find repeated keys. */
enum daemon_key {
	DK_SOCKET, DK_SOCKET_MODE, DK_SOCKET_GROUP, DK_STATE_DIR, DK_WORKERS, DK_MAX_CLIENTS,
	DK_MAX_MESSAGE, DK_MAX_RANGES, DK_MAX_QUEUE, DK_MAX_DUMP, DK_LOG_LEVEL,
	DK_MAX_CLIENTS_PER_UID, DK_MAX_DIRTY_PER_CLIENT, DK_FSYNC_SLICE, DK_RUNTIME_DIR,
	DK_FAST_PATH, DK_COUNT
};
enum region_key { RK_PATH, RK_SIZE, RK_CREATE, RK_MAX_SIZE, RK_COUNT };

struct parser {
	const char *file;
	unsigned line;
	struct dt_config *cfg;
	char *err;
	size_t errlen;
	enum section section;
	struct dt_config_region *region;
	unsigned daemon_line;
	unsigned daemon_keys[DK_COUNT];
	unsigned region_keys[RK_COUNT];
};

static const char *const daemon_key_names[DK_COUNT] = {
	[DK_SOCKET] = "socket",		[DK_SOCKET_MODE] = "socket_mode",
	[DK_SOCKET_GROUP] = "socket_group", [DK_STATE_DIR] = "state_dir",
	[DK_WORKERS] = "workers",	[DK_MAX_CLIENTS] = "max_clients",
	[DK_MAX_MESSAGE] = "max_message", [DK_MAX_RANGES] = "max_ranges",
	[DK_MAX_QUEUE] = "max_queue",	[DK_MAX_DUMP] = "max_dump",
	[DK_LOG_LEVEL] = "log_level",	[DK_MAX_CLIENTS_PER_UID] = "max_clients_per_uid",
	[DK_MAX_DIRTY_PER_CLIENT] = "max_dirty_per_client", [DK_FSYNC_SLICE] = "fsync_slice",
	[DK_RUNTIME_DIR] = "runtime_dir", [DK_FAST_PATH] = "fast_path",
};

static const char *const region_key_names[RK_COUNT] = {
	[RK_PATH] = "path", [RK_SIZE] = "size", [RK_CREATE] = "create",
	[RK_MAX_SIZE] = "max_size",
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Report "FILE:LINE: reason" at @line; returns -EINVAL. */
static int perr_at(struct parser *p, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr_at(struct parser *p, unsigned line, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	set_err(p->err, p->errlen, "%s:%u: %s", p->file, line, reason);
	return -EINVAL;
}

#define perr(p, ...) perr_at((p), (p)->line, __VA_ARGS__)

/* The section as it reads in messages: [daemon] or [region "db"]. */
static const char *section_label(const struct parser *p, char *buf, size_t len)
{
	if (p->section == SEC_DAEMON)
		snprintf(buf, len, "[daemon]");
	else
		snprintf(buf, len, "[region \"%s\"]", p->region->name);
	return buf;
}

static int bad_value(struct parser *p, const char *key, const char *value, const char *expected)
{
	char sec[96];

	return perr(p, "invalid value \"%s\" for \"%s\" in %s: %s", value, key,
		    section_label(p, sec, sizeof(sec)), expected);
}

void dt_config_init(struct dt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->socket, sizeof(cfg->socket), "%s", DT_CONFIG_DEFAULT_SOCKET);
	cfg->socket_mode = 0660;
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", DT_CONFIG_DEFAULT_STATE_DIR);
	snprintf(cfg->runtime_dir, sizeof(cfg->runtime_dir), "%s", DT_CONFIG_DEFAULT_RUNTIME_DIR);
	cfg->fast_path = true;
	cfg->workers = 4;
	cfg->max_clients = 256;
	cfg->max_message = 1ULL << 20;
	cfg->max_ranges = 4096;
	cfg->max_clients_per_uid = DT_CONFIG_DEFAULT_CLIENTS_PER_UID;
	cfg->max_dirty_per_client = DT_CONFIG_DEFAULT_DIRTY_PER_CLIENT;
	cfg->fsync_slice = DT_CONFIG_DEFAULT_FSYNC_SLICE;
	cfg->max_dump = 256ULL << 20;
	cfg->log_level = LOG_INFO;
}

void dt_config_free(struct dt_config *cfg)
{
	free(cfg->regions);
	cfg->regions = NULL;
	cfg->nregions = 0;
}

int dt_config_parse_size(const char *s, uint64_t *out)
{
	uint64_t value = 0;
	unsigned shift = 0;
	const char *c = s;

	if (!isdigit((unsigned char)*c))
		return -EINVAL;
	for (; isdigit((unsigned char)*c); c++) {
		unsigned digit = (unsigned)(*c - '0');

		if (value > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		value = value * 10 + digit;
	}
	switch (*c) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (shift) {
		c++;
		if (!strcmp(c, "iB"))
			c += 2;
	}
	if (*c)
		return -EINVAL;
	if (shift && value > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = value << shift;
	return 0;
}

static int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t value = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		value = value * 10 + (uint64_t)(*s - '0');
		if (value > max)
			return -ERANGE;
	}
	if (value < min)
		return -ERANGE;
	*out = value;
	return 0;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

bool dt_config_valid_name(const char *name)
{
	size_t len = strlen(name), i;

	if (!len || len > DT_CONFIG_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!name_char(name[i]) || (unsigned char)name[i] >= 0x80)
			return false;
	return true;
}

static int set_path(struct parser *p, const char *key, const char *value, char *dst,
		    size_t max)
{
	char expected[64];

	snprintf(expected, sizeof(expected), "expected an absolute path of at most %zu bytes",
		 max);
	if (value[0] != '/' || strlen(value) > max)
		return bad_value(p, key, value, expected);
	memcpy(dst, value, strlen(value) + 1);
	return 0;
}

static int set_uint(struct parser *p, const char *key, const char *value, unsigned min,
		    unsigned max, unsigned *dst)
{
	char expected[64];
	uint64_t v;

	if (parse_uint(value, min, max, &v)) {
		snprintf(expected, sizeof(expected), "expected an integer %u..%u", min, max);
		return bad_value(p, key, value, expected);
	}
	*dst = (unsigned)v;
	return 0;
}

static int set_socket_mode(struct parser *p, const char *key, const char *value)
{
	unsigned mode = 0;
	const char *c;

	if (!*value || strlen(value) > 4)
		goto bad;
	for (c = value; *c; c++) {
		if (*c < '0' || *c > '7')
			goto bad;
		mode = mode * 8 + (unsigned)(*c - '0');
	}
	if (mode > 0777)
		goto bad;
	p->cfg->socket_mode = (mode_t)mode;
	return 0;
bad:
	return bad_value(p, key, value, "expected octal permission bits 0000..0777");
}

static int set_group(struct parser *p, const char *key, const char *value)
{
	size_t len = strlen(value), i;

	if (!len || len > DT_CONFIG_GROUP_MAX || value[0] == '-')
		goto bad;
	for (i = 0; i < len; i++)
		if (!name_char(value[i]))
			goto bad;
	memcpy(p->cfg->socket_group, value, len + 1);
	return 0;
bad:
	return bad_value(p, key, value, "expected a group name or number");
}

/* A size from 4K to @max; @expected names the range for the message. */
static int set_size(struct parser *p, const char *key, const char *value, uint64_t max,
		    const char *expected, uint64_t *dst)
{
	uint64_t v;

	if (dt_config_parse_size(value, &v) || v < 4096 || v > max)
		return bad_value(p, key, value, expected);
	*dst = v;
	return 0;
}

static int set_log_level(struct parser *p, const char *key, const char *value)
{
	int level = dt_log_level_parse(value);

	if (level < 0)
		return bad_value(p, key, value, "expected err, warning, notice, info or debug");
	p->cfg->log_level = level;
	return 0;
}

/*
 * max_queue never had an effect (a connection's requests are read one at a
 * time, so nothing queues in the daemon): still accepted, checked as before,
 * and ignored with a warning, so that an old file keeps loading.
 */
static int deprecated_max_queue(struct parser *p, const char *key, const char *value)
{
	unsigned ignored;
	int ret = set_uint(p, key, value, 1, 65536, &ignored);

	if (!ret)
		dt_log(LOG_WARNING, "%s:%u: \"%s\" is deprecated and ignored: it never had an "
		       "effect; remove it", p->file, p->line, key);
	return ret;
}

/* yes/no, true/false, on/off, 1/0; @expected names the usual pair. */
static int set_bool(struct parser *p, const char *key, const char *value, const char *expected,
		    bool *dst)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcmp(value, yes[i]) || !strcmp(value, no[i])) {
			*dst = !strcmp(value, yes[i]);
			return 0;
		}
	}
	return bad_value(p, key, value, expected);
}

static int daemon_value(struct parser *p, enum daemon_key k, const char *value)
{
	struct dt_config *cfg = p->cfg;
	const char *key = daemon_key_names[k];

	switch (k) {
	case DK_SOCKET:
		return set_path(p, key, value, cfg->socket, DT_CONFIG_SOCKET_MAX);
	case DK_SOCKET_MODE:
		return set_socket_mode(p, key, value);
	case DK_SOCKET_GROUP:
		return set_group(p, key, value);
	case DK_STATE_DIR:
		return set_path(p, key, value, cfg->state_dir, DT_CONFIG_PATH_MAX);
	case DK_WORKERS:
		return set_uint(p, key, value, 1, 256, &cfg->workers);
	case DK_MAX_CLIENTS:
		return set_uint(p, key, value, 1, 65536, &cfg->max_clients);
	case DK_MAX_MESSAGE:
		return set_size(p, key, value, 64ULL << 20, "expected a size 4K..64M",
				&cfg->max_message);
	case DK_MAX_RANGES:
		return set_uint(p, key, value, 1, 1U << 20, &cfg->max_ranges);
	case DK_MAX_QUEUE:
		return deprecated_max_queue(p, key, value);
	case DK_MAX_CLIENTS_PER_UID:
		return set_uint(p, key, value, 1, 65536, &cfg->max_clients_per_uid);
	case DK_MAX_DIRTY_PER_CLIENT:
		return set_size(p, key, value, 64ULL << 40, "expected a size 4K..64T",
				&cfg->max_dirty_per_client);
	case DK_FSYNC_SLICE:
		return set_size(p, key, value, 1ULL << 40, "expected a size 4K..1T",
				&cfg->fsync_slice);
	case DK_MAX_DUMP:
		return set_size(p, key, value, 16ULL << 30, "expected a size 4K..16G",
				&cfg->max_dump);
	case DK_LOG_LEVEL:
		return set_log_level(p, key, value);
	case DK_RUNTIME_DIR:
		return set_path(p, key, value, cfg->runtime_dir, DT_CONFIG_PATH_MAX);
	case DK_FAST_PATH:
		return set_bool(p, key, value, "expected on or off", &cfg->fast_path);
	default:
		return -EINVAL;
	}
}

static int region_value(struct parser *p, enum region_key k, const char *value)
{
	struct dt_config_region *r = p->region;
	const char *key = region_key_names[k];
	uint64_t size;
	int ret;

	switch (k) {
	case RK_PATH:
		return set_path(p, key, value, r->path, DT_CONFIG_PATH_MAX);
	case RK_SIZE:
	case RK_MAX_SIZE:
		ret = dt_config_parse_size(value, &size);
		if (ret == -ERANGE)
			return bad_value(p, key, value, "too large");
		if (ret)
			return bad_value(p, key, value, "expected a size like 64M or 1G");
		if (!size || size % 4096)
			return bad_value(p, key, value, "expected a non-zero multiple of 4K");
		*(k == RK_SIZE ? &r->size : &r->max_size) = size;
		return 0;
	case RK_CREATE:
		return set_bool(p, key, value, "expected yes or no", &r->create);
	default:
		return -EINVAL;
	}
}

static int lookup_key(const char *const *names, int count, const char *key)
{
	int i;

	for (i = 0; i < count; i++)
		if (!strcmp(names[i], key))
			return i;
	return -1;
}

static int key_value(struct parser *p, const char *key, const char *value)
{
	const char *const *names = p->section == SEC_DAEMON ? daemon_key_names : region_key_names;
	int count = p->section == SEC_DAEMON ? DK_COUNT : RK_COUNT;
	unsigned *seen = p->section == SEC_DAEMON ? p->daemon_keys : p->region_keys;
	char sec[96];
	int k;

	if (p->section == SEC_NONE)
		return perr(p, "key \"%s\" outside a section", key);
	k = lookup_key(names, count, key);
	if (k < 0)
		return perr(p, "unknown key \"%s\" in %s", key, section_label(p, sec, sizeof(sec)));
	if (seen[k])
		return perr(p, "duplicate key \"%s\" in %s (first at line %u)", key,
			    section_label(p, sec, sizeof(sec)), seen[k]);
	seen[k] = p->line;
	if (p->section == SEC_DAEMON)
		return daemon_value(p, (enum daemon_key)k, value);
	return region_value(p, (enum region_key)k, value);
}

/* Checks of a region section once all its keys are read. */
static int end_section(struct parser *p)
{
	const struct dt_config_region *r = p->region;

	if (p->section != SEC_REGION)
		return 0;
	if (!r->path[0])
		return perr_at(p, r->line, "[region \"%s\"]: missing key \"path\"", r->name);
	if (r->size && r->max_size)
		return perr_at(p, r->line, "[region \"%s\"]: \"max_size\" is for a region "
			       "without \"size\", which follows its file", r->name);
	return 0;
}

static int begin_region(struct parser *p, const char *name)
{
	struct dt_config *cfg = p->cfg;
	const struct dt_config_region *dup;
	struct dt_config_region *r;

	if (!dt_config_valid_name(name))
		return perr(p, "invalid region name \"%s\": expected 1..%d characters of "
			    "A-Z a-z 0-9 _ . -", name, DT_CONFIG_NAME_MAX);
	dup = dt_config_find_region(cfg, name);
	if (dup)
		return perr(p, "duplicate region \"%s\" (first at line %u)", name, dup->line);
	if (cfg->nregions == DT_CONFIG_MAX_REGIONS)
		return perr(p, "too many regions (at most %d)", DT_CONFIG_MAX_REGIONS);
	if (!cfg->regions) {
		cfg->regions = calloc(DT_CONFIG_MAX_REGIONS, sizeof(*cfg->regions));
		if (!cfg->regions) {
			set_err(p->err, p->errlen, "%s: %s", p->file, strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	r = &cfg->regions[cfg->nregions++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->create = true;
	r->line = p->line;
	p->region = r;
	p->section = SEC_REGION;
	memset(p->region_keys, 0, sizeof(p->region_keys));
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

/* "[daemon]" or "[region "NAME"]"; @s starts at '['. */
static int section_header(struct parser *p, char *s)
{
	size_t len = strlen(s);
	char *inner, *name;
	int ret;

	if (s[len - 1] != ']')
		return perr(p, "syntax error: expected \"]\" at the end of the section header");
	s[len - 1] = '\0';
	inner = trim(s + 1);
	ret = end_section(p);
	if (ret)
		return ret;
	if (!strcmp(inner, "daemon")) {
		if (p->daemon_line)
			return perr(p, "duplicate section [daemon] (first at line %u)",
				    p->daemon_line);
		p->daemon_line = p->line;
		p->section = SEC_DAEMON;
		return 0;
	}
	if (strncmp(inner, "region", 6) || (inner[6] && inner[6] != ' ' && inner[6] != '\t'))
		return perr(p, "unknown section [%s]", inner);
	name = trim(inner + 6);
	len = strlen(name);
	if (len < 2 || name[0] != '"' || name[len - 1] != '"')
		return perr(p, "syntax error: expected [region \"NAME\"]");
	name[len - 1] = '\0';
	return begin_region(p, name + 1);
}

static int parse_line(struct parser *p, char *line)
{
	char *s = trim(line), *eq, *key, *value;
	size_t len;

	if (!*s || *s == '#' || *s == ';')
		return 0;
	if (*s == '[')
		return section_header(p, s);
	eq = strchr(s, '=');
	if (!eq)
		return perr(p, "syntax error: expected \"key = value\" or a [section]");
	*eq = '\0';
	key = trim(s);
	value = trim(eq + 1);
	if (!*key)
		return perr(p, "syntax error: no key before \"=\"");
	len = strlen(value);
	if (len && value[0] == '"') {
		if (len < 2 || value[len - 1] != '"' || memchr(value + 1, '"', len - 2))
			return perr(p, "syntax error: unterminated or embedded quote in the value "
				    "of \"%s\"", key);
		value[len - 1] = '\0';
		value++;
	}
	return key_value(p, key, value);
}

static int parse_stream(struct parser *p, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	while ((n = getline(&line, &cap, f)) >= 0) {
		p->line++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if ((size_t)n > DT_CONFIG_LINE_MAX) {
			ret = perr(p, "line too long (more than %d bytes)", DT_CONFIG_LINE_MAX);
			break;
		}
		if (strlen(line) != (size_t)n) {
			ret = perr(p, "NUL byte in the line");
			break;
		}
		ret = parse_line(p, line);
		if (ret)
			break;
	}
	if (!ret && ferror(f)) {
		ret = -errno;
		set_err(p->err, p->errlen, "%s: read: %s", p->file, strerror(errno));
	}
	if (!ret)
		ret = end_section(p);
	free(line);
	return ret;
}

static int load_defaults(struct dt_config *cfg, char *err, size_t errlen)
{
	struct dt_config_region *r;
	int ret;

	cfg->regions = calloc(DT_CONFIG_MAX_REGIONS, sizeof(*cfg->regions));
	if (!cfg->regions) {
		set_err(err, errlen, "embedded default configuration: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r = &cfg->regions[0];
	snprintf(r->name, sizeof(r->name), "%s", DT_CONFIG_DEFAULT_REGION);
	ret = dt_state_default_region_path(cfg->state_dir, r->path, sizeof(r->path));
	if (ret) {
		set_err(err, errlen, "embedded default region: state directory path too long");
		return ret;
	}
	r->size = DT_CONFIG_DEFAULT_REGION_SIZE;
	r->create = true;
	cfg->nregions = 1;
	return DT_CONFIG_DEFAULTS;
}

static int open_config(const char *path, char *err, size_t errlen, FILE **out)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		if (ret != -ENOENT)
			set_err(err, errlen, "%s: open: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		set_err(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	*out = fdopen(fd, "r");
	if (!*out) {
		ret = -errno;
		close(fd);
		set_err(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	return 0;
}

int dt_config_load(const char *path, struct dt_config *cfg, char *err, size_t errlen)
{
	struct parser p = { .cfg = cfg, .err = err, .errlen = errlen };
	FILE *f = NULL;
	int ret;

	if (!path)
		path = DT_CONFIG_DEFAULT_PATH;
	dt_config_init(cfg);
	set_err(err, errlen, "%s", "");
	if (strlen(path) > DT_CONFIG_PATH_MAX) {
		set_err(err, errlen, "configuration file name too long");
		return -ENAMETOOLONG;
	}
	ret = open_config(path, err, errlen, &f);
	if (ret == -ENOENT)
		return load_defaults(cfg, err, errlen);
	if (ret)
		return ret;
	snprintf(cfg->source, sizeof(cfg->source), "%s", path);
	p.file = cfg->source;
	ret = parse_stream(&p, f);
	fclose(f);
	if (ret)
		return ret;
	return dt_config_check_aliases(cfg, err, errlen);
}

/*
 * What memory a region's path names: a device-DAX device by its device
 * number, an existing file by its inode, a file still to be created by its
 * canonical path (its directory resolved, symbolic links and all).
 */
struct region_identity {
	enum { ID_NONE, ID_DEVICE, ID_INODE, ID_PATH } kind;
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
};

static void region_identity(const char *path, struct region_identity *id)
{
	char dir[PATH_MAX];
	const char *base;
	struct stat st;

	id->kind = ID_NONE;
	if (!stat(path, &st)) {
		id->kind = S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? ID_DEVICE : ID_INODE;
		id->dev = id->kind == ID_DEVICE ? st.st_rdev : st.st_dev;
		id->ino = id->kind == ID_DEVICE ? 0 : st.st_ino;
		return;
	}
	base = strrchr(path, '/');
	if (!base || (size_t)(base - path) >= sizeof(dir))
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path);
	if (!realpath(dir[0] ? dir : "/", id->path) ||
	    strlen(id->path) + strlen(base) >= sizeof(id->path))
		return;
	strcat(id->path, base);
	id->kind = ID_PATH;
}

static bool same_memory(const struct region_identity *a, const struct region_identity *b)
{
	if (a->kind == ID_NONE || a->kind != b->kind)
		return false;
	if (a->kind == ID_PATH)
		return !strcmp(a->path, b->path);
	return a->dev == b->dev && a->ino == b->ino;
}

int dt_config_check_aliases(const struct dt_config *cfg, char *err, size_t errlen)
{
	struct region_identity *ids;
	unsigned i, j;

	if (cfg->nregions < 2)
		return 0;
	ids = calloc(cfg->nregions, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < cfg->nregions; i++)
		region_identity(cfg->regions[i].path, &ids[i]);
	for (i = 1; i < cfg->nregions; i++) {
		for (j = 0; j < i; j++) {
			const struct dt_config_region *a = &cfg->regions[j], *b = &cfg->regions[i];

			if (!same_memory(&ids[i], &ids[j]))
				continue;
			set_err(err, errlen,
				"%s:%u: region \"%s\": %s is the same %s as region \"%s\" "
				"(line %u): two regions over the same memory would miss each "
				"other's dirty pages",
				cfg->source, b->line, b->name, b->path,
				ids[i].kind == ID_DEVICE ? "device" : "file", a->name, a->line);
			free(ids);
			return -EINVAL;
		}
	}
	free(ids);
	return 0;
}

const struct dt_config_region *dt_config_find_region(const struct dt_config *cfg,
						     const char *name)
{
	unsigned i;

	for (i = 0; i < cfg->nregions; i++)
		if (!strcmp(cfg->regions[i].name, name))
			return &cfg->regions[i];
	return NULL;
}
