/* Loops over long float vectors compiled for each vector width, the widest the CPU has chosen
 * at run time: the baseline x86-64 build stops at SSE2, a quarter of what the machines we run on
 * do. Only for loops whose every result is one coordinate's own arithmetic, or sums in fixed
 * lanes: the width then changes how fast they run, never their bits (with contraction off). */
#ifndef SYNCWISE_SIMD_H
#define SYNCWISE_SIMD_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
/* (ThreadSanitizer's instrumented ifunc resolver would run before its runtime is up. Clang 14,
 * Debian 12's, names a clone's resolver apart from the function and callers in other files find
 * neither: a clang build runs the baseline loops, with the same bits.) */
#define SW_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SW_VECTOR_CLONES
#endif

#ifdef __cplusplus
}
#endif

#endif
