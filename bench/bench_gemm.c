/*
 * bench_gemm.c - matrix products and convolution on the simulator against
 * OpenBLAS and torch on the same machine.  Public API only.
 *
 * Prints "KEY = NUMBER" lines (best of several runs, one thread unless
 * named; ratios are baseline time / xrt time, so higher is better):
 *   gemm.f32_1024.ratio_openblas        1024^3 f32 dot_general vs cblas_sgemm
 *   gemm.f32_4096.ratio_openblas        4096^3
 *   gemm.batched_transposed.ratio_plain 16 x [256x512]x[512x256] with rhs
 *                                       given as [16,256(n),512(k)], vs the
 *                                       plain [16,512,256] layout
 *   conv.resnet3x3_56x56x64.ratio_torch 3x3 64->64 on 1x56x56x64, padding
 *                                       1, vs torch conv2d (NCHW)
 *   threads.2.gemm_speedup              2048^3 f32, 2 threads vs 1
 *   gemm.f32_{1024,4096}.ratio_openblas_skylakex  the same products vs
 *                                       OpenBLAS forced to its AVX-512
 *                                       kernel (OPENBLAS_CORETYPE=SkylakeX,
 *                                       in a copy of this program), on
 *                                       CPUs with AVX-512: the kernel
 *                                       OpenBLAS picks by itself (printed
 *                                       as "# openblas core") may be an
 *                                       older one when it does not know
 *                                       the CPU
 * Built with -DBENCH_GEMM_BLAS (linked with the XRT_BLAS=1 library) it
 * prints only gemm.f32_4096.ratio_openblas_blas.  Without OpenBLAS
 * (BENCH_HAVE_OPENBLAS unset) or python3+torch the keys that need them
 * print "# skipped: ..." instead.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, popen */
#endif

#define BENCH_NAME "bench_gemm"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

static float *rand_f32(size_t n, unsigned seed) {
  float *p = (float *)malloc(sizeof(float) * (n ? n : 1));
  if (!p) return NULL;
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)((int)(seed >> 9) % 2001 - 1000) / 1000.0f;
  }
  return p;
}

/* A compiled two-input program with its inputs on device 0. */
typedef struct bench_prog {
  xrt_client *cl;
  xrt_executable *exe;
  xrt_buffer *args[2];
} bench_prog;

static void prog_free(bench_prog *p) {
  for (int i = 0; i < 2; i++) xrt_buffer_release(p->args[i]);
  xrt_executable_release(p->exe);
  xrt_client_release(p->cl);
  memset(p, 0, sizeof *p);
}

static int prog_make(bench_prog *p, int threads, const char *src,
                     const xrt_shape *sa, const xrt_shape *sb) {
  memset(p, 0, sizeof *p);
  p->cl = bench_client(0, threads);
  if (!p->cl) return 1;
  xrt_device *dev = xrt_client_device(p->cl, 0);
  xrt_status s = xrt_compile(p->cl, src, strlen(src), NULL, &p->exe);
  const xrt_shape *sh[2] = {sa, sb};
  for (int i = 0; !s && i < 2; i++) {
    size_t n = 1;
    for (int d = 0; d < sh[i]->rank; d++) n *= (size_t)sh[i]->dims[d];
    float *h = rand_f32(n, 7u + (unsigned)i);
    s = h ? xrt_buffer_from_host(p->cl, dev, sh[i], h, &p->args[i])
          : XRT_RESOURCE_EXHAUSTED;
    free(h);
  }
  if (s) {
    bench_fail("compile/upload", s);
    prog_free(p);
    return 1;
  }
  return 0;
}

/* Best time of reps executes (after one warm-up), or -1. */
static double prog_time(bench_prog *p, int reps) {
  double best = 1e30;
  xrt_device *dev = xrt_client_device(p->cl, 0);
  for (int r = 0; r <= reps; r++) {
    xrt_buffer *out = NULL;
    double t0 = bench_now_s();
    xrt_status s = xrt_execute(p->exe, dev, p->args, 2, &out, 1, NULL);
    double t = bench_now_s() - t0;
    xrt_buffer_release(out);
    if (s) {
      bench_fail("execute", s);
      return -1;
    }
    if (r > 0 && t < best) best = t;
  }
  return best;
}

static char src[4096];

static void matmul_src(int64_t n) {
  snprintf(src, sizeof src,
           "func.func @main(%%a: tensor<%lldx%lldxf32>, %%b: "
           "tensor<%lldx%lldxf32>) -> tensor<%lldx%lldxf32> {\n"
           "  %%0 = stablehlo.dot_general %%a, %%b, contracting_dims = [1] x "
           "[0] : (tensor<%lldx%lldxf32>, tensor<%lldx%lldxf32>) -> "
           "tensor<%lldx%lldxf32>\n"
           "  func.return %%0 : tensor<%lldx%lldxf32>\n}\n",
           (long long)n, (long long)n, (long long)n, (long long)n,
           (long long)n, (long long)n, (long long)n, (long long)n,
           (long long)n, (long long)n, (long long)n, (long long)n,
           (long long)n, (long long)n);
}

/* xrt time of an n^3 f32 product with threads workers, or -1. */
static double xrt_matmul(int64_t n, int threads, int reps) {
  bench_prog p;
  xrt_shape s = {XRT_F32, 2, {n, n}};
  matmul_src(n);
  if (prog_make(&p, threads, src, &s, &s)) return -1;
  double t = prog_time(&p, reps);
  prog_free(&p);
  return t;
}

#ifdef BENCH_HAVE_OPENBLAS
static double blas_matmul(int n, int reps) {
  size_t nn = (size_t)n * (size_t)n;
  float *a = rand_f32(nn, 1), *b = rand_f32(nn, 2), *c = rand_f32(nn, 3);
  double best = -1;
  if (a && b && c) {
    best = 1e30;
    for (int r = 0; r <= reps; r++) {
      double t0 = bench_now_s();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a,
                  n, b, n, 0.0f, c, n);
      double t = bench_now_s() - t0;
      if (r > 0 && t < best) best = t;
    }
  }
  free(a), free(b), free(c);
  return best;
}
#endif

/* Prints key = tb / tx, baseline over xrt seconds of an n^3 product, with
 * both rates; or why it is skipped. */
static void print_gemm_ratio(const char *key, const char *baseline, int n,
                             double tb, double tx, const char *why) {
  if (tb > 0 && tx > 0) {
    printf("# %s: %s %.1f GFLOP/s, xrt %.1f GFLOP/s\n", key, baseline,
           2.0 * n * n * (double)n / tb * 1e-9,
           2.0 * n * n * (double)n / tx * 1e-9);
    printf("%s = %.3f\n", key, tb / tx);
  } else {
    printf("# skipped: %s (%s)\n", key, why);
  }
}

/* Argument 0 of main: this program, run again for the forced kernel. */
static const char *self_path;

#ifndef BENCH_GEMM_BLAS
/* Seconds of cblas_sgemm on an n^3 product with OpenBLAS's AVX-512 kernel,
 * which it picks when it loads, so from a copy of this program started
 * with OPENBLAS_CORETYPE=SkylakeX; -1 without AVX-512 or on failure. */
static double blas_skylakex_matmul(int n) {
#if defined(BENCH_HAVE_OPENBLAS) && defined(__x86_64__)
  char cmd[1024];
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || strchr(self_path, '\'') ||
      strlen(self_path) > 900)
    return -1;
  snprintf(cmd, sizeof cmd,
           "OPENBLAS_CORETYPE=SkylakeX BENCH_GEMM_OPENBLAS_ONLY=%d '%s'", n,
           self_path);
  return bench_popen_number(cmd, NULL, 0);
#else
  (void)n;
  return -1;
#endif
}

static void ratio_skylakex(const char *key, int n, int reps) {
  double tb = blas_skylakex_matmul(n), tx = xrt_matmul(n, 1, reps);
  print_gemm_ratio(key, "openblas SkylakeX", n, tb, tx,
                   "no AVX-512, no OpenBLAS, or it failed");
}
#endif

static void ratio_openblas(const char *key, int n, int reps) {
#ifdef BENCH_HAVE_OPENBLAS
  double tb = blas_matmul(n, reps), tx = xrt_matmul(n, 1, reps);
  print_gemm_ratio(key, "openblas", n, tb, tx, "run failed");
#else
  (void)n, (void)reps;
  printf("# skipped: %s (built without OpenBLAS)\n", key);
#endif
}

#ifndef BENCH_GEMM_BLAS
static int batched_prog(bench_prog *p, int transposed) {
  enum { B = 16, M = 256, K = 512, N = 256 };
  xrt_shape sa = {XRT_F32, 3, {B, M, K}};
  xrt_shape sb = transposed ? (xrt_shape){XRT_F32, 3, {B, N, K}}
                            : (xrt_shape){XRT_F32, 3, {B, K, N}};
  const char *bt =
      transposed ? "tensor<16x256x512xf32>" : "tensor<16x512x256xf32>";
  snprintf(src, sizeof src,
           "func.func @main(%%a: tensor<16x256x512xf32>, %%b: %s) -> "
           "tensor<16x256x256xf32> {\n"
           "  %%0 = stablehlo.dot_general %%a, %%b, batching_dims = [0] x "
           "[0], contracting_dims = [2] x [%d] : (tensor<16x256x512xf32>, %s)"
           " -> tensor<16x256x256xf32>\n"
           "  func.return %%0 : tensor<16x256x256xf32>\n}\n",
           bt, transposed ? 2 : 1, bt);
  return prog_make(p, 1, src, &sa, &sb);
}

/* The two layouts alternate, so a change in the machine's load hits both. */
static void bench_batched(void) {
  bench_prog p, q;
  double tp = 1e30, tt = 1e30;
  if (batched_prog(&p, 0)) return;
  if (batched_prog(&q, 1)) {
    prog_free(&p);
    return;
  }
  for (int r = 0; r < 9 && tp > 0 && tt > 0; r++) {
    double a = prog_time(&p, 1), b = prog_time(&q, 1);
    tp = a < 0 ? -1 : a < tp ? a : tp;
    tt = b < 0 ? -1 : b < tt ? b : tt;
  }
  prog_free(&p);
  prog_free(&q);
  if (tp > 0 && tt > 0)
    printf("gemm.batched_transposed.ratio_plain = %.3f\n", tp / tt);
  else
    printf("# skipped: gemm.batched_transposed.ratio_plain (run failed)\n");
}

static const char conv_src[] =
    "func.func @main(%x: tensor<1x56x56x64xf32>, %w: tensor<3x3x64x64xf32>)"
    " -> tensor<1x56x56x64xf32> {\n"
    "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x"
    "[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], "
    "[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} "
    ": (tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) -> "
    "tensor<1x56x56x64xf32>\n"
    "  func.return %0 : tensor<1x56x56x64xf32>\n}\n";

static const char torch_script[] =
    "/usr/bin/python3 -c '\n"
    "import time, torch\n"
    "torch.set_num_threads(1)\n"
    "x = torch.randn(1, 64, 56, 56); w = torch.randn(64, 64, 3, 3)\n"
    "f = torch.nn.functional.conv2d\n"
    "best = 1e9\n"
    "with torch.no_grad():\n"
    "  for i in range(30):\n"
    "    t = time.perf_counter(); f(x, w, padding=1); t = time.perf_counter() - t\n"
    "    best = min(best, t) if i else best\n"
    "print(best)\n' 2>/dev/null";

static void bench_conv(void) {
  const char *key = "conv.resnet3x3_56x56x64.ratio_torch";
  bench_prog p;
  xrt_shape sx = {XRT_F32, 4, {1, 56, 56, 64}}, sw = {XRT_F32, 4, {3, 3, 64, 64}};
  if (prog_make(&p, 1, conv_src, &sx, &sw)) {
    printf("# skipped: %s (compile failed)\n", key);
    return;
  }
  double tx = prog_time(&p, 20);
  prog_free(&p);
  double tt = bench_popen_number(torch_script, NULL, 0);
  if (tt <= 0 || tx <= 0) {
    printf("# skipped: %s (no python3 with torch, or run failed)\n", key);
    return;
  }
  printf("# conv: torch %.3f ms, xrt %.3f ms\n", tt * 1e3, tx * 1e3);
  printf("%s = %.3f\n", key, tt / tx);
}

static void bench_threads(void) {
  double t1 = xrt_matmul(2048, 1, 3), t2 = xrt_matmul(2048, 2, 3);
  if (t1 > 0 && t2 > 0)
    printf("threads.2.gemm_speedup = %.3f\n", t1 / t2);
  else
    printf("# skipped: threads.2.gemm_speedup (run failed)\n");
}
#endif /* !BENCH_GEMM_BLAS */

int main(int argc, char **argv) {
  self_path = argc > 0 ? argv[0] : "";
#ifdef BENCH_HAVE_OPENBLAS
  openblas_set_num_threads(1);
  const char *only = getenv("BENCH_GEMM_OPENBLAS_ONLY");
  if (only) { /* the copy that times the forced kernel */
    if (strcmp(openblas_get_corename(), "SkylakeX") != 0) return 1;
    printf("%.9f\n", blas_matmul(atoi(only), 3));
    return 0;
  }
  printf("# openblas core: %s\n", openblas_get_corename());
#endif
#ifdef BENCH_GEMM_BLAS
  ratio_openblas("gemm.f32_4096.ratio_openblas_blas", 4096, 3);
#else
  ratio_openblas("gemm.f32_1024.ratio_openblas", 1024, 7);
  ratio_openblas("gemm.f32_4096.ratio_openblas", 4096, 3);
  ratio_skylakex("gemm.f32_1024.ratio_openblas_skylakex", 1024, 7);
  ratio_skylakex("gemm.f32_4096.ratio_openblas_skylakex", 4096, 3);
  bench_batched();
  bench_conv();
  bench_threads();
#endif
  return 0;
}
