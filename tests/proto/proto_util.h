/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto_util.h - helpers of the protocol tests: a seeded generator and
 * little-endian patching of encoded messages.
 */
#ifndef PROTO_UTIL_H
#define PROTO_UTIL_H

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state;

static inline void rng_seed(void)
{
	const char *s = getenv("DT_TEST_SEED");

	rng_state = s ? strtoull(s, NULL, 0) : 0x5eed0f9a3c1d2b47ULL;
	if (!rng_state)
		rng_state = 1;
	printf("seed 0x%llx (DT_TEST_SEED to replay)\n", (unsigned long long)rng_state);
}

static inline uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static inline uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static inline double test_scale(void)
{
	const char *s = getenv("DT_TEST_SCALE");
	double v = s ? strtod(s, NULL) : 1.0;

	return v > 0 ? v : 1.0;
}

static inline void put_le(uint8_t *p, size_t off, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++)
		p[off + i] = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
}

static inline uint64_t get_le(const uint8_t *p, size_t off, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[off + i] << (8 * i);
	return v;
}

#endif /* PROTO_UTIL_H */
