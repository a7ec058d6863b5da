// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_config.c - the daxtrackd.conf parser: a full file, the example file,
 * the embedded default, every rejection with its exact message, sizes.
 */
#include <errno.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "dt_test.h"
#include "daemon_util.h"

DT_TEST_DEFINE("test_config");

static char conf_path[PATH_MAX];

static int load_text(const char *text, struct dt_config *cfg, char *err, size_t errlen)
{
	dt_config_free(cfg);
	if (write_file(conf_path, text, strlen(text))) {
		perror(conf_path);
		exit(1);
	}
	return dt_config_load(conf_path, cfg, err, errlen);
}

static void test_full_file(void)
{
	static const char text[] =
		"# a comment\n"
		"; another\n"
		"\n"
		"[daemon]\n"
		"socket = /tmp/x.sock\n"
		"  socket_mode=0600  \n"
		"socket_group = daxtrack\n"
		"state_dir = \"/var/lib/dt with space\"\n"
		"workers = 8\n"
		"max_clients = 1000\r\n"
		"max_message = 64K\n"
		"max_ranges = 100\n"
		"max_queue = 7\n"
		"max_dump = 3M\n"
		"log_level = debug\n"
		"[region \"db\"]\n"
		"path = /dev/dax0.0\n"
		"max_size = 2T\n"
		"[ region   \"pool-1.x_y\" ]\n"
		"\tpath = /mnt/pmem/p.pool\n"
		"size = 1G\n"
		"create = no\n";
	struct dt_config cfg = { 0 };
	char err[512];
	int ret;

	dt_test_ctx("full file");
	ret = load_text(text, &cfg, err, sizeof(err));
	CHECK_EQ(ret, 0);
	if (ret)
		fprintf(stderr, "     %s\n", err);
	CHECK(!strcmp(cfg.source, conf_path));
	CHECK(!strcmp(cfg.socket, "/tmp/x.sock"));
	CHECK_EQ(cfg.socket_mode, 0600);
	CHECK(!strcmp(cfg.socket_group, "daxtrack"));
	CHECK(!strcmp(cfg.state_dir, "/var/lib/dt with space"));
	CHECK_EQ(cfg.workers, 8);
	CHECK_EQ(cfg.max_clients, 1000);
	CHECK_EQ(cfg.max_message, 65536);
	CHECK_EQ(cfg.max_ranges, 100);
	CHECK_EQ(cfg.max_dump, 3ULL << 20);
	CHECK_EQ(cfg.log_level, LOG_DEBUG);
	CHECK_EQ(cfg.nregions, 2);
	if (cfg.nregions == 2) {
		CHECK(!strcmp(cfg.regions[0].name, "db"));
		CHECK(!strcmp(cfg.regions[0].path, "/dev/dax0.0"));
		CHECK_EQ(cfg.regions[0].size, 0);
		CHECK(cfg.regions[0].create);
		CHECK_EQ(cfg.regions[0].max_size, 2ULL << 40);
		CHECK_EQ(cfg.regions[0].line, 16);
		CHECK(!strcmp(cfg.regions[1].name, "pool-1.x_y"));
		CHECK(!strcmp(cfg.regions[1].path, "/mnt/pmem/p.pool"));
		CHECK_EQ(cfg.regions[1].size, 1ULL << 30);
		CHECK_EQ(cfg.regions[1].max_size, 0);
		CHECK(!cfg.regions[1].create);
		CHECK(dt_config_find_region(&cfg, "db") == &cfg.regions[0]);
		CHECK(dt_config_find_region(&cfg, "nope") == NULL);
	}
	dt_config_free(&cfg);
	CHECK_EQ(cfg.nregions, 0);
	CHECK(cfg.regions == NULL);
}

/*
 * The per-tenant limits, and max_queue: accepted, checked,
 * ignored with a warning naming the line (it never had an effect).
 */
static void test_tenant_limits(void)
{
	struct dt_config cfg = { 0 };
	char err[512], want[PATH_MAX + 128], *log = NULL;
	size_t loglen = 0;
	FILE *f = open_memstream(&log, &loglen);

	dt_test_ctx("tenant limits");
	CHECK_EQ(load_text("[daemon]\nmax_clients_per_uid = 3\nmax_dirty_per_client = 8M\n"
			   "fsync_slice = 256K\n", &cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg.max_clients_per_uid, 3);
	CHECK_EQ(cfg.max_dirty_per_client, 8ULL << 20);
	CHECK_EQ(cfg.fsync_slice, 256ULL << 10);

	dt_test_ctx("max_queue deprecated");
	dt_log_set_output(f, DT_LOG_PREFIX_IDENT);
	CHECK_EQ(load_text("[daemon]\nworkers = 2\nmax_queue = 7\n", &cfg, err, sizeof(err)), 0);
	dt_log_set_output(NULL, DT_LOG_PREFIX_AUTO);
	fclose(f);
	CHECK_EQ(cfg.workers, 2);
	snprintf(want, sizeof(want), "%s:3: \"max_queue\" is deprecated and ignored", conf_path);
	CHECK(log && strstr(log, want));
	free(log);
	dt_config_free(&cfg);
}

static void test_fast_path_keys(void)
{
	struct dt_config cfg = { 0 };
	char err[512];

	dt_test_ctx("runtime_dir and fast_path");
	CHECK_EQ(load_text("[daemon]\nruntime_dir = \"/run/dt x\"\nfast_path = off\n", &cfg, err,
			   sizeof(err)), 0);
	CHECK(!strcmp(cfg.runtime_dir, "/run/dt x"));
	CHECK(!cfg.fast_path);
	CHECK_EQ(load_text("[daemon]\nfast_path = on\n", &cfg, err, sizeof(err)), 0);
	CHECK(cfg.fast_path);
	CHECK(!strcmp(cfg.runtime_dir, DT_CONFIG_DEFAULT_RUNTIME_DIR));
	dt_config_free(&cfg);
}

static void test_empty_and_example(void)
{
	struct dt_config cfg = { 0 };
	char err[512];
	int ret;

	dt_test_ctx("empty file");
	CHECK_EQ(load_text("", &cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg.nregions, 0);
	CHECK(!strcmp(cfg.socket, DT_CONFIG_DEFAULT_SOCKET));
	CHECK_EQ(cfg.socket_mode, 0660);
	CHECK(!strcmp(cfg.state_dir, DT_CONFIG_DEFAULT_STATE_DIR));
	CHECK(!strcmp(cfg.runtime_dir, "/run/daxtrack"));
	CHECK(cfg.fast_path);
	CHECK_EQ(cfg.workers, 4);
	CHECK_EQ(cfg.max_clients, 256);
	CHECK_EQ(cfg.max_message, 1 << 20);
	CHECK_EQ(cfg.max_ranges, 4096);
	CHECK_EQ(cfg.max_clients_per_uid, 64);
	CHECK_EQ(cfg.max_dirty_per_client, 16ULL << 30);
	CHECK_EQ(cfg.fsync_slice, 64ULL << 20);
	CHECK_EQ(cfg.max_dump, 256ULL << 20);
	CHECK_EQ(cfg.log_level, LOG_INFO);
	CHECK_EQ(cfg.socket_group[0], 0);
	dt_config_free(&cfg);

	dt_test_ctx("systemd/daxtrackd.conf.example");
	ret = dt_config_load(DT_SOURCE_ROOT "/systemd/daxtrackd.conf.example", &cfg, err,
			     sizeof(err));
	CHECK_EQ(ret, 0);
	if (ret)
		fprintf(stderr, "     %s\n", err);
	CHECK(cfg.nregions >= 1);
	dt_config_free(&cfg);
}

static void test_defaults(void)
{
	struct dt_config cfg = { 0 };
	char err[512], path[PATH_MAX];

	dt_test_ctx("missing file");
	CHECK_EQ(dt_config_load(tmp_path(path, "does-not-exist.conf"), &cfg, err, sizeof(err)),
		 DT_CONFIG_DEFAULTS);
	CHECK_EQ(cfg.source[0], 0);
	CHECK_EQ(cfg.nregions, 1);
	if (cfg.nregions == 1) {
		CHECK(!strcmp(cfg.regions[0].name, "default"));
		CHECK(!strcmp(cfg.regions[0].path, "/var/lib/daxtrack/default.region"));
		CHECK_EQ(cfg.regions[0].size, 64ULL << 20);
		CHECK(cfg.regions[0].create);
	}
	CHECK(!strcmp(cfg.state_dir, "/var/lib/daxtrack"));
	CHECK_EQ(cfg.workers, 4);
	dt_config_free(&cfg);

	dt_test_ctx("directory as the file");
	CHECK_EQ(dt_config_load(tmp_dir, &cfg, err, sizeof(err)), -EINVAL);
	snprintf(path, sizeof(path), "%s: not a regular file", tmp_dir);
	CHECK(!strcmp(err, path));
	dt_config_free(&cfg);
}

struct reject {
	const char *text;
	unsigned line;
	const char *msg;
};

static const struct reject rejects[] = {
	{ "[region \"db\"]\npath = /x\nsise = 1G\n", 3,
	  "unknown key \"sise\" in [region \"db\"]" },
	{ "[daemon]\nsockets = /x\n", 2, "unknown key \"sockets\" in [daemon]" },
	{ "[foo]\n", 1, "unknown section [foo]" },
	{ "[regions \"a\"]\n", 1, "unknown section [regions \"a\"]" },
	{ "\n[ daemon ]\n[daemon]\n", 3, "duplicate section [daemon] (first at line 2)" },
	{ "[daemon]\nworkers = 2\nworkers = 3\n", 3,
	  "duplicate key \"workers\" in [daemon] (first at line 2)" },
	{ "[region \"a\"]\npath=/a\npath=/b\n", 3,
	  "duplicate key \"path\" in [region \"a\"] (first at line 2)" },
	{ "[region \"a\"]\npath=/a\n[region \"b\"]\npath=/b\n[region \"a\"]\n", 5,
	  "duplicate region \"a\" (first at line 1)" },
	{ "workers = 2\n", 1, "key \"workers\" outside a section" },
	{ "[region \"a\"]\nsize = 1G\n[daemon]\n", 1, "[region \"a\"]: missing key \"path\"" },
	{ "[daemon]\n[region \"a\"]\n# no path\n", 2, "[region \"a\"]: missing key \"path\"" },
	{ "[region \"a b\"]\n", 1,
	  "invalid region name \"a b\": expected 1..63 characters of A-Z a-z 0-9 _ . -" },
	{ "[region \"\"]\n", 1,
	  "invalid region name \"\": expected 1..63 characters of A-Z a-z 0-9 _ . -" },
	{ "[region \"a/b\"]\n", 1,
	  "invalid region name \"a/b\": expected 1..63 characters of A-Z a-z 0-9 _ . -" },
	{ "[region db]\n", 1, "syntax error: expected [region \"NAME\"]" },
	{ "[region]\n", 1, "syntax error: expected [region \"NAME\"]" },
	{ "[daemon\n", 1, "syntax error: expected \"]\" at the end of the section header" },
	{ "[daemon]\njunk\n", 2, "syntax error: expected \"key = value\" or a [section]" },
	{ "[daemon]\n = 4\n", 2, "syntax error: no key before \"=\"" },
	{ "[daemon]\nsocket = \"/x\n", 2,
	  "syntax error: unterminated or embedded quote in the value of \"socket\"" },
	{ "[daemon]\nworkers = 0\n", 2,
	  "invalid value \"0\" for \"workers\" in [daemon]: expected an integer 1..256" },
	{ "[daemon]\nworkers = 257\n", 2,
	  "invalid value \"257\" for \"workers\" in [daemon]: expected an integer 1..256" },
	{ "[daemon]\nworkers = -1\n", 2,
	  "invalid value \"-1\" for \"workers\" in [daemon]: expected an integer 1..256" },
	{ "[daemon]\nworkers = 4 # four\n", 2,
	  "invalid value \"4 # four\" for \"workers\" in [daemon]: expected an integer 1..256" },
	{ "[daemon]\nworkers =\n", 2,
	  "invalid value \"\" for \"workers\" in [daemon]: expected an integer 1..256" },
	{ "[daemon]\nmax_clients = 99999999999999999999\n", 2,
	  "invalid value \"99999999999999999999\" for \"max_clients\" in [daemon]: "
	  "expected an integer 1..65536" },
	{ "[daemon]\nmax_ranges = 1048577\n", 2,
	  "invalid value \"1048577\" for \"max_ranges\" in [daemon]: "
	  "expected an integer 1..1048576" },
	{ "[daemon]\nmax_clients_per_uid = 0\n", 2,
	  "invalid value \"0\" for \"max_clients_per_uid\" in [daemon]: "
	  "expected an integer 1..65536" },
	{ "[daemon]\nmax_dirty_per_client = 65T\n", 2,
	  "invalid value \"65T\" for \"max_dirty_per_client\" in [daemon]: "
	  "expected a size 4K..64T" },
	{ "[daemon]\nmax_dirty_per_client = 1K\n", 2,
	  "invalid value \"1K\" for \"max_dirty_per_client\" in [daemon]: "
	  "expected a size 4K..64T" },
	{ "[daemon]\nfsync_slice = 2T\n", 2,
	  "invalid value \"2T\" for \"fsync_slice\" in [daemon]: expected a size 4K..1T" },
	{ "[daemon]\nmax_queue = 0x10\n", 2,
	  "invalid value \"0x10\" for \"max_queue\" in [daemon]: expected an integer 1..65536" },
	{ "[daemon]\nsocket = run/x.sock\n", 2,
	  "invalid value \"run/x.sock\" for \"socket\" in [daemon]: "
	  "expected an absolute path of at most 107 bytes" },
	{ "[daemon]\nstate_dir = var\n", 2,
	  "invalid value \"var\" for \"state_dir\" in [daemon]: "
	  "expected an absolute path of at most 4095 bytes" },
	{ "[daemon]\nsocket_mode = 0800\n", 2,
	  "invalid value \"0800\" for \"socket_mode\" in [daemon]: "
	  "expected octal permission bits 0000..0777" },
	{ "[daemon]\nsocket_mode = 1777\n", 2,
	  "invalid value \"1777\" for \"socket_mode\" in [daemon]: "
	  "expected octal permission bits 0000..0777" },
	{ "[daemon]\nsocket_group = a:b\n", 2,
	  "invalid value \"a:b\" for \"socket_group\" in [daemon]: "
	  "expected a group name or number" },
	{ "[daemon]\nmax_message = 1K\n", 2,
	  "invalid value \"1K\" for \"max_message\" in [daemon]: expected a size 4K..64M" },
	{ "[daemon]\nmax_message = 65M\n", 2,
	  "invalid value \"65M\" for \"max_message\" in [daemon]: expected a size 4K..64M" },
	{ "[daemon]\nmax_dump = 1K\n", 2,
	  "invalid value \"1K\" for \"max_dump\" in [daemon]: expected a size 4K..16G" },
	{ "[daemon]\nmax_dump = 17G\n", 2,
	  "invalid value \"17G\" for \"max_dump\" in [daemon]: expected a size 4K..16G" },
	{ "[daemon]\nlog_level = loud\n", 2,
	  "invalid value \"loud\" for \"log_level\" in [daemon]: "
	  "expected err, warning, notice, info or debug" },
	{ "[daemon]\nruntime_dir = run\n", 2,
	  "invalid value \"run\" for \"runtime_dir\" in [daemon]: "
	  "expected an absolute path of at most 4095 bytes" },
	{ "[daemon]\nfast_path = fast\n", 2,
	  "invalid value \"fast\" for \"fast_path\" in [daemon]: expected on or off" },
	{ "[daemon]\nfast_path = on\nfast_path = off\n", 3,
	  "duplicate key \"fast_path\" in [daemon] (first at line 2)" },
	{ "[region \"a\"]\npath = /a\ncreate = maybe\n", 3,
	  "invalid value \"maybe\" for \"create\" in [region \"a\"]: expected yes or no" },
	{ "[region \"a\"]\npath = /a\nsize = 4097\n", 3,
	  "invalid value \"4097\" for \"size\" in [region \"a\"]: "
	  "expected a non-zero multiple of 4K" },
	{ "[region \"a\"]\npath = /a\nsize = 0\n", 3,
	  "invalid value \"0\" for \"size\" in [region \"a\"]: "
	  "expected a non-zero multiple of 4K" },
	{ "[region \"a\"]\npath = /a\nsize = 1X\n", 3,
	  "invalid value \"1X\" for \"size\" in [region \"a\"]: expected a size like 64M or 1G" },
	{ "[region \"a\"]\npath = /a\nsize = -1G\n", 3,
	  "invalid value \"-1G\" for \"size\" in [region \"a\"]: expected a size like 64M or 1G" },
	{ "[region \"a\"]\npath = /a\nsize = 16777216T\n", 3,
	  "invalid value \"16777216T\" for \"size\" in [region \"a\"]: too large" },
	{ "[region \"a\"]\npath = /a\nmax_size = 6000\n", 3,
	  "invalid value \"6000\" for \"max_size\" in [region \"a\"]: "
	  "expected a non-zero multiple of 4K" },
	{ "[region \"a\"]\npath = /a\nsize = 1G\nmax_size = 2G\n", 1,
	  "[region \"a\"]: \"max_size\" is for a region without \"size\", which follows its file" },
	{ "[region \"a\"]\npath = a\n", 2,
	  "invalid value \"a\" for \"path\" in [region \"a\"]: "
	  "expected an absolute path of at most 4095 bytes" },
};

static void test_rejects(void)
{
	struct dt_config cfg = { 0 };
	char err[512], want[768];
	size_t i;

	for (i = 0; i < sizeof(rejects) / sizeof(rejects[0]); i++) {
		const struct reject *r = &rejects[i];

		dt_test_ctx("reject %zu: %s", i, r->msg);
		CHECK_EQ(load_text(r->text, &cfg, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "%s:%u: %s", conf_path, r->line, r->msg);
		if (!CHECK(!strcmp(err, want)))
			fprintf(stderr, "     got  \"%s\"\n     want \"%s\"\n", err, want);
	}
	dt_config_free(&cfg);
}

static void test_limits(void)
{
	struct dt_config cfg = { 0 };
	char err[512], want[768];
	size_t len = 0, cap = 8192 + 64 * 64;
	char *text = malloc(cap + DT_CONFIG_LINE_MAX + 64);
	int i;

	dt_test_ctx("too many regions");
	for (i = 0; i <= DT_CONFIG_MAX_REGIONS; i++)
		len += (size_t)sprintf(text + len, "[region \"r%d\"]\npath = /r%d\n", i, i);
	CHECK_EQ(load_text(text, &cfg, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:%d: too many regions (at most 64)", conf_path,
		 2 * DT_CONFIG_MAX_REGIONS + 1);
	CHECK(!strcmp(err, want));

	dt_test_ctx("64 regions are fine");
	text[len - strlen("[region \"r64\"]\npath = /r64\n")] = '\0';
	CHECK_EQ(load_text(text, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg.nregions, 64);

	dt_test_ctx("63-character name");
	snprintf(text, cap, "[region \"%063d\"]\npath = /x\n", 7);
	CHECK_EQ(load_text(text, &cfg, err, sizeof(err)), 0);
	snprintf(text, cap, "[region \"%064d\"]\npath = /x\n", 7);
	CHECK_EQ(load_text(text, &cfg, err, sizeof(err)), -EINVAL);

	dt_test_ctx("line too long");
	strcpy(text, "[daemon]\n# ");
	memset(text + 11, 'x', DT_CONFIG_LINE_MAX);
	strcpy(text + 11 + DT_CONFIG_LINE_MAX, "\n");
	CHECK_EQ(load_text(text, &cfg, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: line too long (more than 4096 bytes)", conf_path);
	CHECK(!strcmp(err, want));

	dt_test_ctx("NUL byte");
	dt_config_free(&cfg);
	CHECK_EQ(write_file(conf_path, "[daemon]\nworkers = 4\0junk\n", 26), 0);
	CHECK_EQ(dt_config_load(conf_path, &cfg, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: NUL byte in the line", conf_path);
	CHECK(!strcmp(err, want));
	dt_config_free(&cfg);
	free(text);
}

struct size_case {
	const char *s;
	int ret;
	uint64_t value;
};

static const struct size_case sizes[] = {
	{ "0", 0, 0 },
	{ "4096", 0, 4096 },
	{ "1K", 0, 1024 },
	{ "1k", 0, 1024 },
	{ "1KiB", 0, 1024 },
	{ "64M", 0, 64ULL << 20 },
	{ "64MiB", 0, 64ULL << 20 },
	{ "1G", 0, 1ULL << 30 },
	{ "3g", 0, 3ULL << 30 },
	{ "2T", 0, 2ULL << 40 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16777215T", 0, 16777215ULL << 40 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "99999999999999999999999", -ERANGE, 0 },
	{ "16777216T", -ERANGE, 0 },
	{ "17179869184G", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "K", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "1 K", -EINVAL, 0 },
	{ "1KB", -EINVAL, 0 },
	{ "1Ki", -EINVAL, 0 },
	{ "1P", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1GG", -EINVAL, 0 },
	{ "1iB", -EINVAL, 0 },
};

static void test_sizes(void)
{
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t v = 12345;
		int ret = dt_config_parse_size(sizes[i].s, &v);

		dt_test_ctx("size \"%s\"", sizes[i].s);
		CHECK_EQ(ret, sizes[i].ret);
		if (!sizes[i].ret)
			CHECK_EQ(v, sizes[i].value);
		else
			CHECK_EQ(v, 12345);
	}
}

static void test_names(void)
{
	dt_test_ctx("names");
	CHECK(dt_config_valid_name("db"));
	CHECK(dt_config_valid_name("A-Z_a.z-09"));
	CHECK(dt_config_valid_name("."));
	CHECK(!dt_config_valid_name(""));
	CHECK(!dt_config_valid_name("a b"));
	CHECK(!dt_config_valid_name("a\"b"));
	CHECK(!dt_config_valid_name("\xc3\xa9t\xc3\xa9"));
	CHECK(!dt_config_valid_name("a/b"));
}

/* Loads [region "a"] at @a and [region "b"] at @b; returns dt_config_load()'s result. */
static int load_pair(const char *a, const char *b, char *err, size_t errlen)
{
	struct dt_config cfg = { 0 };
	char text[3 * PATH_MAX];
	int ret;

	snprintf(text, sizeof(text), "[region \"a\"]\npath = %s\n\n[region \"b\"]\npath = %s\n",
		 a, b);
	ret = load_text(text, &cfg, err, errlen);
	dt_config_free(&cfg);
	return ret;
}

/* Two regions over the same memory are refused, naming both. */
static void test_aliases(void)
{
	char file[PATH_MAX], hard[PATH_MAX], soft[PATH_MAX], other[PATH_MAX], dotted[PATH_MAX];
	char fresh[PATH_MAX], err[1024], want[1024];

	dt_test_ctx("two regions over the same memory");
	tmp_path(file, "one.region");
	tmp_path(hard, "hard.region");
	tmp_path(soft, "soft.region");
	tmp_path(other, "other.region");
	tmp_path(fresh, "fresh.region");
	tmp_path(dotted, "./fresh.region");
	CHECK_EQ(write_file(file, "x", 1), 0);
	CHECK_EQ(write_file(other, "y", 1), 0);
	CHECK_EQ(link(file, hard), 0);
	CHECK_EQ(symlink(file, soft), 0);

	CHECK_EQ(load_pair(file, other, err, sizeof(err)), 0);
	CHECK_EQ(load_pair(fresh, other, err, sizeof(err)), 0);

	CHECK_EQ(load_pair(file, file, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:4: region \"b\": %s is the same file as region \"a\" (line 1): two regions "
		 "over the same memory would miss each other's dirty pages", conf_path, file);
	if (!CHECK(!strcmp(err, want)))
		fprintf(stderr, "     got  \"%s\"\n     want \"%s\"\n", err, want);
	CHECK_EQ(load_pair(file, hard, err, sizeof(err)), -EINVAL);	/* same inode */
	CHECK(strstr(err, "is the same file as region \"a\"") != NULL);
	CHECK_EQ(load_pair(soft, file, err, sizeof(err)), -EINVAL);	/* through a symlink */
	CHECK(strstr(err, "region \"b\": ") != NULL);
	CHECK_EQ(load_pair(fresh, dotted, err, sizeof(err)), -EINVAL);	/* both to be created */
	CHECK(strstr(err, "is the same file as region \"a\"") != NULL);
	CHECK_EQ(load_pair("/dev/null", "/dev/null", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "is the same device as region \"a\"") != NULL);
}

int main(void)
{
	umask(022);
	tmp_setup("/tmp");
	tmp_path(conf_path, "daxtrackd.conf");
	test_full_file();
	test_tenant_limits();
	test_fast_path_keys();
	test_empty_and_example();
	test_defaults();
	test_rejects();
	test_limits();
	test_sizes();
	test_names();
	test_aliases();
	tmp_cleanup();
	return dt_test_done();
}
