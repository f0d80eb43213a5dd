/* xoshiro256** with splitmix64 seeding (Blackman and Vigna), and the deviates built on it. */
#define _GNU_SOURCE
#include "syncwise/rng.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <sys/random.h>
#include <unistd.h>

#include "syncwise/err.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void sw_rng_seed(sw_rng *r, uint64_t seed, uint64_t stream)
{
    /* Mix the stream id through splitmix first so that nearby (seed, stream) pairs start far
     * apart; splitmix never yields an all-zero xoshiro state from four consecutive outputs. */
    uint64_t x = seed;
    uint64_t h = splitmix64(&x) ^ (stream * 0xd1b54a32d192ed03ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&h);
}

uint64_t sw_rng_u64(sw_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t sw_rng_below(sw_rng *r, uint64_t n)
{
    if (n == 0)
        return 0; /* nothing lies below 0: the one value that is no draw */
    /* Rejection of the short top interval keeps every value equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = sw_rng_u64(r);
    while (x >= limit);
    return x % n;
}

double sw_rng_uniform(sw_rng *r) { return (double)(sw_rng_u64(r) >> 11) * 0x1.0p-53; }

double sw_rng_normal(sw_rng *r)
{
    /* 1 - u lies in (0, 1], so the logarithm is finite. */
    double u1 = 1.0 - sw_rng_uniform(r);
    double u2 = sw_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double sw_rng_exp(sw_rng *r) { return -log(1.0 - sw_rng_uniform(r)); }

void sw_rng_shuffle(sw_rng *r, uint32_t *idx, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)sw_rng_below(r, i);
        uint32_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}

/* The whole of want, or false (the kernel has no generator to give). */
static bool from_urandom(void *buf, size_t want)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    size_t got = 0;
    while (got < want) {
        ssize_t n = read(fd, (char *)buf + got, want - got);
        if (n > 0)
            got += (size_t)n;
        else if (!(n < 0 && errno == EINTR))
            break;
    }
    close(fd);
    return got == want;
}

int sw_rng_secret(uint64_t *out, char *err)
{
    ssize_t n;
    do
        n = getrandom(out, sizeof *out, 0);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof *out || from_urandom(out, sizeof *out))
        return 0;
    return sw_fail(err, SW_EIO, "no cryptographic random numbers to draw a secret from "
                   "(getrandom, /dev/urandom)");
}
