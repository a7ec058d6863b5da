// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload-env.c - what the shim reads once: the real functions
 * (dlsym(RTLD_NEXT)), the environment (DAXTRACK_PRELOAD,
 * DAXTRACK_PRELOAD_DEBUG, DAXTRACK_TRACK), and the thread's guard.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

struct dtp_real dtp_real;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool shim_off;
static bool debug_on;
static bool track_off;
static bool env_read;

/*
 * Inside the shim (or inside the library it calls): every interposer passes
 * straight through.  initial-exec: a preloaded library has static TLS, and
 * its access must not allocate (the guard is read inside mmap()).
 */
static __thread int guard __attribute__((tls_model("initial-exec")));

static bool env_off(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no"));
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && !env_off(name);
}

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void init_once_fn(void)
{
	int saved = errno;

	dtp_real.mmap = next("mmap");
	dtp_real.mmap64 = next("mmap64");
	dtp_real.munmap = next("munmap");
	dtp_real.msync = next("msync");
	dtp_real.fsync = next("fsync");
	dtp_real.fdatasync = next("fdatasync");
	dtp_real.close = next("close");
	dtp_real.ftruncate = next("ftruncate");
	dtp_real.ftruncate64 = next("ftruncate64");
	dtp_real.truncate = next("truncate");
	dtp_real.truncate64 = next("truncate64");
	dtp_real.fallocate = next("fallocate");
	dtp_real.fallocate64 = next("fallocate64");
	if (!dtp_real.mmap64)
		dtp_real.mmap64 = (void *)dtp_real.mmap;
	errno = saved;
}

void dtp_init(void)
{
	pthread_once(&init_once, init_once_fn);
}

/*
 * The environment is read by the constructor, not at the first call: other
 * libraries' early calls (a sanitizer's runtime, libpmem's constructor) may
 * come before the environment is there, and pass through untouched.
 */
__attribute__((constructor)) static void dtp_constructor(void)
{
	dtp_init();
	shim_off = env_off("DAXTRACK_PRELOAD");
	debug_on = env_on("DAXTRACK_PRELOAD_DEBUG");
	track_off = env_off("DAXTRACK_TRACK");
	__atomic_store_n(&env_read, true, __ATOMIC_RELEASE);
}

bool dtp_active(void)
{
	dtp_init();
	return __atomic_load_n(&env_read, __ATOMIC_ACQUIRE) && !shim_off && !guard;
}

void dtp_enter(void)
{
	guard++;
}

void dtp_leave(void)
{
	guard--;
}

bool dtp_track_wanted(void)
{
	return !track_off;
}

/* One line on stderr, written at once (no stdio: the program's buffers are its own). */
void dtp_debug(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int saved = errno, n;

	if (!debug_on)
		return;
	n = snprintf(line, sizeof(line), "daxtrack-preload[%d]: ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		errno = saved;
	errno = saved;
}

bool dtp_debug_on(void)
{
	return debug_on;
}
