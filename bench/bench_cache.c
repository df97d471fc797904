/*
 * bench_cache.c - the in-memory compilation cache.  Public API only (and
 * xxhash.h, for the hash it is measured against).  MIT licensed.
 *
 * Prints "KEY = NUMBER" lines (medians of 15 runs of 200 calls each):
 *   cache.hit_10KB.ns        xrt_compile of a ~10 KB JAX-style program (debug
 *                            locations, #loc aliases) already in the cache:
 *                            a new executable handle (target <= 2000)
 *   cache.xxh3_10KB.ns       XXH3-128 of the same bytes alone
 *   cache.hit_vs_xxh3.ratio  the two above, hit / hash (target <= 3)
 *   cache.miss_10KB.us       the first compile of it (parse, verify, plan)
 *   cache.key_10KB.us        xrt_compile_cache_key of it: the canonical
 *                            read (locations and comments dropped) that
 *                            only a text the cache has not seen pays
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#define BENCH_NAME "bench_cache"
#include "bench_util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define RUNS 15
#define CALLS 200

/* A chain of elementwise ops as jax.jit(f).lower(...).as_text() prints
 * it: every op with a loc(#locN), the aliases after the module. */
static char *jax_program(size_t target, size_t *len) {
  size_t cap = target + 4096;
  char *s = (char *)malloc(cap);
  if (!s) return NULL;
  size_t n = 0;
  int ops = (int)(target / 123); /* an op and its alias: ~123 bytes */
  n += (size_t)snprintf(s + n, cap - n,
                        "#loc1 = loc(\"/home/user/model.py\":10:0)\n"
                        "module @jit_step attributes {mhlo.num_partitions = "
                        "1 : i32, mhlo.num_replicas = 1 : i32} {\n"
                        "  func.func public @main(%%arg0: tensor<8x16xf32> "
                        "loc(\"x\"), %%arg1: tensor<8x16xf32> loc(\"y\")) -> "
                        "(tensor<8x16xf32> {jax.result_info = \"\"}) {\n");
  const char *kinds[3] = {"add", "multiply", "subtract"};
  for (int i = 0; i < ops; i++) {
    const char *a = i == 0 ? "%arg0" : "%";
    char prev[32];
    if (i) snprintf(prev, sizeof prev, "%d", i - 1);
    n += (size_t)snprintf(s + n, cap - n,
                          "    %%%d = stablehlo.%s %s%s, %%arg1 : "
                          "tensor<8x16xf32> loc(#loc%d)\n",
                          i, kinds[i % 3], a, i ? prev : "", i + 2);
  }
  n += (size_t)snprintf(s + n, cap - n,
                        "    return %%%d : tensor<8x16xf32> loc(#loc1)\n"
                        "  } loc(#loc1)\n} loc(#loc1)\n", ops - 1);
  for (int i = 0; i < ops; i++)
    n += (size_t)snprintf(s + n, cap - n,
                          "#loc%d = loc(\"jit(step)/jit(main)/op_%d\"(#loc1))"
                          "\n", i + 2, i);
  *len = n;
  return s;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

int main(void) {
  size_t len = 0;
  char *text = jax_program(10 * 1024, &len);
  if (!text) return bench_fail("program", XRT_RESOURCE_EXHAUSTED);
  xrt_client *c = bench_client(1, 1);
  if (!c) return 1;
  static xrt_executable *exes[CALLS];
  double t0 = bench_now_s();
  xrt_status s = xrt_compile(c, text, len, NULL, &exes[0]);
  double miss_us = (bench_now_s() - t0) * 1e6;
  if (s) return bench_fail("compile", s);
  xrt_executable_release(exes[0]);
  double hit[RUNS], hash[RUNS];
  volatile uint64_t sink = 0;
  for (int r = 0; r < RUNS; r++) {
    t0 = bench_now_s();
    for (int i = 0; i < CALLS; i++)
      if ((s = xrt_compile(c, text, len, NULL, &exes[i])))
        return bench_fail("compile (cached)", s);
    hit[r] = (bench_now_s() - t0) * 1e9 / CALLS;
    for (int i = 0; i < CALLS; i++) xrt_executable_release(exes[i]);
    t0 = bench_now_s();
    for (int i = 0; i < CALLS; i++) sink += XXH3_128bits(text, len).low64;
    hash[r] = (bench_now_s() - t0) * 1e9 / CALLS;
  }
  xrt_cache_stats cs;
  if ((s = xrt_client_get_cache_stats(c, &cs))) return bench_fail("stats", s);
  if (cs.misses != 1 || cs.hits != (uint64_t)RUNS * CALLS) {
    fprintf(stderr, BENCH_NAME ": expected 1 miss and %d hits, got %llu and "
            "%llu\n", RUNS * CALLS, (unsigned long long)cs.misses,
            (unsigned long long)cs.hits);
    return 1;
  }
  double key[RUNS];
  char k[XRT_CACHE_KEY_CHARS + 1];
  for (int r = 0; r < RUNS; r++) {
    t0 = bench_now_s();
    for (int i = 0; i < CALLS / 10; i++)
      if ((s = xrt_compile_cache_key(c, text, len, NULL, k)))
        return bench_fail("cache key", s);
    key[r] = (bench_now_s() - t0) * 1e6 / (CALLS / 10);
  }
  double h = median(hit, RUNS), x = median(hash, RUNS);
  printf("cache.program_bytes = %zu\n", len);
  printf("cache.hit_10KB.ns = %.0f\n", h);
  printf("cache.xxh3_10KB.ns = %.0f\n", x);
  printf("cache.hit_vs_xxh3.ratio = %.2f\n", h / x);
  printf("cache.miss_10KB.us = %.0f\n", miss_us);
  printf("cache.key_10KB.us = %.1f\n", median(key, RUNS));
  xrt_client_release(c);
  free(text);
  return sink == 42 ? 0 : 0;
}
