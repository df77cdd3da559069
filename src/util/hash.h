/* The project's one non-cryptographic hash: FNV-1a over bytes (for hash
 * tables keyed by names, content hashes kubectl caches by, fingerprints of
 * state), and a multiplicative hash of addresses (for tables keyed by
 * pointers). None of them is exposed to inputs chosen to collide beyond
 * what a token-holding client could do to itself. */
#ifndef GPUOP_UTIL_HASH_H
#define GPUOP_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Where a hash starts. (FNV's offset basis is 14695981039346656037; this
 * one is a digit short, and kept: content hashes made with it are stable.) */
#define GP_HASH_SEED 1469598103934665603ULL

/* h continued over n bytes. */
static inline uint64_t gp_hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* h continued over a string (NULL counts as empty). */
static inline uint64_t gp_hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* h continued with a whole 64-bit value. */
static inline uint64_t gp_hash_u64(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ULL;
}

/* A slot for an address in a table of `cap` slots (a power of two). */
static inline size_t gp_hash_ptr(const void *p, size_t cap)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
}

#endif
