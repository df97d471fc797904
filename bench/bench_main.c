/*
 * bench_main.c - xrt micro-benchmarks, public API only.  MIT licensed.
 *
 * Prints "KEY = NUMBER" lines:
 *   dispatch.add_f32x4.ns              one xrt_execute of a 4-element add
 *                                      plus release of its output (median)
 *   dispatch.pjrt_add_f32x4.ns         the same through a PJRT plugin: xrt
 *                                      -> xrt_pjrt.c -> libxrt_pjrt.so (xrt
 *                                      as a PJRT plugin) -> the simulator
 *   dispatch.pjrt_add_f32x4.ratio      pjrt / direct, same run (target <= 2)
 *   transfer.roundtrip_64MiB.ms        from_host + to_host + release of
 *                                      64 MiB (best of several)
 *   transfer.memcpy_2x64MiB.ms         two 64 MiB memcpys, same run
 *   transfer.roundtrip_64MiB.ratio_memcpy  memcpy time / xrt time (1 = as
 *                                      fast as plain copies)
 *   compile.mb_per_s                   parse + verify + compile of a
 *                                      generated JAX-style program
 *   compile.bytecode_mb_per_s          the same from a portable artifact
 *                                      (MLIR bytecode, xrt_program_serialize)
 *                                      of a ~100 MB program of weights (MB:
 *                                      artifact bytes; target: >= mb_per_s)
 *   compile.bytecode_ratio             bytecode_mb_per_s / mb_per_s
 *   compile.bytecode_ops_mb_per_s      the JAX-style program as an artifact
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#define BENCH_NAME "bench"
#include "bench_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- dispatch ---- */

static const char add_src[] =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* Runs n executes (each releasing its output); returns seconds or -1. */
static double dispatch_batch(xrt_executable *exe, xrt_device *dev,
                             xrt_buffer *const *args, long n) {
  double t0 = bench_now_s();
  for (long i = 0; i < n; i++) {
    xrt_buffer *out = NULL;
    xrt_status s = xrt_execute(exe, dev, args, 2, &out, 1, NULL);
    if (s) {
      bench_fail("execute", s);
      return -1;
    }
    xrt_buffer_release(out);
  }
  return bench_now_s() - t0;
}

/* The median ns of one xrt_execute + release on client's device 0 (key
 * printed), or -1. */
static double bench_dispatch(xrt_client *client, const char *key) {
  enum { BATCHES = 7 };
  xrt_device *dev = xrt_client_device(client, 0);
  xrt_executable *exe = NULL;
  xrt_buffer *args[2] = {NULL, NULL};
  xrt_shape shape = {XRT_F32, 1, {4}};
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  xrt_status s = xrt_compile(client, add_src, sizeof add_src - 1, NULL, &exe);
  if (s) {
    bench_fail("compile add", s);
    return -1;
  }
  int rc = 0;
  if ((s = xrt_buffer_from_host(client, dev, &shape, a, &args[0])) ||
      (s = xrt_buffer_from_host(client, dev, &shape, b, &args[1]))) {
    rc = bench_fail("from_host", s);
  }
  /* Calibrate: batches of ~0.2 s, at most 100k calls. */
  long n = 1000;
  double t = rc ? -1 : dispatch_batch(exe, dev, args, n);
  if (t < 0) rc = 1;
  if (!rc) {
    double want = 0.2 / (t / (double)n);
    n = want > 100000 ? 100000 : want < 100 ? 100 : (long)want;
  }
  double per[BATCHES];
  for (int i = 0; !rc && i < BATCHES; i++) {
    t = dispatch_batch(exe, dev, args, n);
    if (t < 0) rc = 1;
    per[i] = t / (double)n * 1e9;
  }
  double median = -1;
  if (!rc) {
    qsort(per, BATCHES, sizeof per[0], cmp_double);
    median = per[BATCHES / 2];
    printf("%s = %.1f\n", key, median);
  }
  xrt_buffer_release(args[0]);
  xrt_buffer_release(args[1]);
  xrt_executable_release(exe);
  return median;
}

/* The same add through libxrt_pjrt.so loaded as a PJRT plugin (when the
 * build made it: BENCH_PJRT_PLUGIN is its path). */
static int bench_dispatch_pjrt(double direct) {
#ifdef BENCH_PJRT_PLUGIN
  xrt_context *ctx = NULL;
  xrt_client *client = NULL;
  xrt_status s = xrt_context_create(NULL, &ctx);
  if (!s) s = xrt_context_load_plugin(ctx, "pjrt", BENCH_PJRT_PLUGIN, NULL);
  if (s) {
    xrt_context_release(ctx);
    return bench_fail("load " BENCH_PJRT_PLUGIN, s);
  }
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.context = ctx;
  o.plugin = "pjrt";
  if ((s = xrt_client_create(&o, &client))) {
    xrt_context_release(ctx);
    return bench_fail("PJRT client", s);
  }
  double ns = bench_dispatch(client, "dispatch.pjrt_add_f32x4.ns");
  if (ns > 0 && direct > 0)
    printf("dispatch.pjrt_add_f32x4.ratio = %.2f\n", ns / direct);
  xrt_client_release(client);
  xrt_context_release(ctx);
  return ns < 0;
#else
  (void)direct;
  printf("# dispatch.pjrt_add_f32x4.ns: libxrt_pjrt.so not built\n");
  return 0;
#endif
}

/* ---- transfer ---- */

static int bench_transfer(xrt_client *client) {
  enum { REPS = 15 };
  const size_t bytes = (size_t)64 << 20;
  xrt_device *dev = xrt_client_device(client, 0);
  xrt_shape shape = {XRT_F32, 1, {(int64_t)(bytes / sizeof(float))}};
  float *src = malloc(bytes), *dst = malloc(bytes), *tmp = malloc(bytes);
  int rc = 0;
  if (!src || !dst || !tmp) {
    fprintf(stderr, "bench: out of memory\n");
    rc = 1;
  }
  /* Touch every page first so that neither side pays for page faults. */
  for (size_t i = 0; !rc && i < bytes / sizeof(float); i++) src[i] = (float)i;
  if (!rc) {
    memset(dst, 1, bytes);
    memset(tmp, 1, bytes);
  }
  double best_xrt = 1e30, best_mem = 1e30;
  for (int r = 0; !rc && r < REPS; r++) {
    xrt_buffer *buf = NULL;
    double t0 = bench_now_s();
    xrt_status s = xrt_buffer_from_host(client, dev, &shape, src, &buf);
    if (!s) s = xrt_buffer_to_host(buf, dst, bytes);
    if (!s) s = xrt_buffer_release(buf);
    double t1 = bench_now_s();
    if (s) {
      rc = bench_fail("transfer", s);
      break;
    }
    if (t1 - t0 < best_xrt) best_xrt = t1 - t0;
    if (memcmp(src, dst, bytes) != 0) {
      fprintf(stderr, "bench: round trip changed the data\n");
      rc = 1;
    }
    t0 = bench_now_s();
    memcpy(tmp, src, bytes);
    memcpy(dst, tmp, bytes);
    t1 = bench_now_s();
    if (t1 - t0 < best_mem) best_mem = t1 - t0;
  }
  if (!rc) {
    printf("transfer.roundtrip_64MiB.ms = %.3f\n", best_xrt * 1e3);
    printf("transfer.memcpy_2x64MiB.ms = %.3f\n", best_mem * 1e3);
    printf("transfer.roundtrip_64MiB.ratio_memcpy = %.3f\n", best_mem / best_xrt);
  }
  free(src);
  free(dst);
  free(tmp);
  return rc;
}

/* ---- compile ---- */

/* A dense<[...]> literal of n floats, JAX's %e spelling. */
static void put_floats(bench_text *t, int n, unsigned seed) {
  bench_put(t, "dense<[");
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    bench_put(t, "%s%.6e", i ? ", " : "", ((double)(seed >> 8 & 0xffff) - 32768.0) / 16384.0);
  }
  bench_put(t, "]>");
}

/* One block of the generated program: 18 ops over f32, i32 and f16 with
 * constants, broadcasts, a dot_general and a reduce, all carrying locs.
 * x is the f32 tensor<8x16> value the block starts from; returns the value
 * number of the f32 tensor<8x16> it ends with. */
static int put_block(bench_text *t, int blk, int x, int *v) {
  int b = *v;
  const char *T = "tensor<8x16xf32>";
  bench_put(t, "    %%%d = stablehlo.constant ", b);
  put_floats(t, 16, (unsigned)blk * 7u + 1u);
  bench_put(t, " : tensor<16xf32> loc(#loc%d)\n", 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.broadcast_in_dim %%%d, dims = [1] : (tensor<16xf32>) -> %s loc(#loc%d)\n",
      b + 1, b, T, 3 + (blk + 1) % 8);
  bench_put(t, "    %%%d = stablehlo.add %%%d, %%%d : %s loc(#loc%d)\n", b + 2, x, b + 1, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.multiply %%%d, %%%d : %s loc(#loc%d)\n", b + 3, b + 2, x, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.tanh %%%d : %s loc(#loc%d)\n", b + 4, b + 3, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.constant ", b + 5);
  put_floats(t, 16, (unsigned)blk * 13u + 5u);
  bench_put(t, " : tensor<16xf32> loc(#loc%d)\n", 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.reshape %%%d : (tensor<16xf32>) -> tensor<1x16xf32> loc(#loc%d)\n",
      b + 6, b + 5, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.broadcast_in_dim %%%d, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<16x16xf32> loc(#loc%d)\n",
      b + 7, b + 6, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.dot_general %%%d, %%%d, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (%s, tensor<16x16xf32>) -> %s loc(#loc%d)\n",
      b + 8, b + 4, b + 7, T, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.reduce(%%%d init: %%1) applies stablehlo.add across dimensions = [1] : (%s, tensor<f32>) -> tensor<8xf32> loc(#loc%d)\n",
      b + 9, b + 8, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.broadcast_in_dim %%%d, dims = [0] : (tensor<8xf32>) -> %s loc(#loc%d)\n",
      b + 10, b + 9, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.subtract %%%d, %%%d : %s loc(#loc%d)\n", b + 11, b + 8, b + 10, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.convert %%%d : (%s) -> tensor<8x16xi32> loc(#loc%d)\n", b + 12, b + 11, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.xor %%%d, %%2 : tensor<8x16xi32> loc(#loc%d)\n", b + 13, b + 12, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.convert %%%d : (tensor<8x16xi32>) -> tensor<8x16xf16> loc(#loc%d)\n", b + 14, b + 13, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.convert %%%d : (tensor<8x16xf16>) -> %s loc(#loc%d)\n", b + 15, b + 14, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.compare  GT, %%%d, %%%d,  FLOAT : (%s, %s) -> tensor<8x16xi1> loc(#loc%d)\n",
      b + 16, b + 15, b + 11, T, T, 3 + blk % 8);
  bench_put(t, "    %%%d = stablehlo.select %%%d, %%%d, %%%d : tensor<8x16xi1>, %s loc(#loc%d)\n",
      b + 17, b + 16, b + 15, b + 11, T, 3 + blk % 8);
  *v = b + 18;
  return b + 17;
}

/* A JAX-like module of about target bytes. */
static bench_text make_program(size_t target) {
  bench_text t = {NULL, 0, 0, 0};
  t.cap = target + (1 << 16);
  t.p = malloc(t.cap);
  if (!t.p) {
    t.failed = 1;
    return t;
  }
  t.p[0] = 0;
  bench_put(&t, "#loc1 = loc(\"x\")\n");
  bench_put(&t, "module @jit_big attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n");
  bench_put(&t, "  func.func public @main(%%arg0: tensor<8x16xf32> loc(\"x\")) -> (tensor<8x16xf32> {jax.result_info = \"\"}) {\n");
  bench_put(&t, "    %%0 = stablehlo.add %%arg0, %%arg0 : tensor<8x16xf32> loc(#loc3)\n");
  bench_put(&t, "    %%1 = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)\n");
  bench_put(&t, "    %%2 = stablehlo.constant dense<1> : tensor<8x16xi32> loc(#loc)\n");
  int v = 3, x = 0;
  for (int blk = 0; t.len < target && !t.failed; blk++) x = put_block(&t, blk, x, &v);
  bench_put(&t, "    return %%%d : tensor<8x16xf32> loc(#loc)\n  } loc(#loc)\n} loc(#loc)\n", x);
  bench_put(&t, "#loc = loc(unknown)\n#loc2 = loc(\"model.py\":42:0)\n");
  for (int i = 0; i < 8; i++)
    bench_put(&t, "#loc%d = loc(\"jit(f)/jit(main)/layer%d/op\"(#loc2))\n", 3 + i, i);
  return t;
}

static int bench_compile(xrt_client *client, double *mb_per_s) {
  bench_text t = make_program((size_t)4 << 20);
  if (t.failed) {
    free(t.p);
    fprintf(stderr, "bench: out of memory generating the program\n");
    return 1;
  }
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "bench.mlir";
  double best = 1e30;
  int rc = 0;
  for (int r = 0; r < 3 && !rc; r++) {
    xrt_program *prog = NULL;
    xrt_executable *exe = NULL;
    double t0 = bench_now_s();
    xrt_status s = xrt_program_parse(t.p, t.len, &co, &prog);
    if (!s) s = xrt_compile_program(client, prog, &co, &exe);
    double t1 = bench_now_s();
    if (s) rc = bench_fail("compile of the generated program", s);
    xrt_executable_release(exe);
    xrt_program_release(prog);
    if (t1 - t0 < best) best = t1 - t0;
  }
  if (!rc) {
    printf("compile.bytes = %zu\n", t.len);
    printf("compile.mb_per_s = %.2f\n", (double)t.len / 1e6 / best);
    *mb_per_s = (double)t.len / 1e6 / best;
  }
  free(t.p);
  return rc;
}

/* ---- portable artifacts ---- */

/* A model of weights: nw constants of n f32 each (hex, as MLIR prints
 * large constants), each added to the argument in turn. */
static bench_text make_weights(int nw, int n) {
  static const char hex[] = "0123456789ABCDEF";
  bench_text t = {NULL, 0, 0, 0};
  t.cap = (size_t)nw * ((size_t)n * 8 + 256) + 4096;
  t.p = malloc(t.cap);
  if (!t.p) {
    t.failed = 1;
    return t;
  }
  bench_put(&t, "module @weights {\n  func.func public @main(%%a: tensor<%dxf32>) -> "
            "tensor<%dxf32> {\n", n, n);
  uint32_t seed = 12345u;
  for (int w = 0; w < nw && !t.failed; w++) {
    bench_put(&t, "    %%c%d = stablehlo.constant dense<\"0x", w);
    for (int i = 0; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      float f = (float)((int)(seed >> 9) - (1 << 22)) / (float)(1 << 22);
      unsigned char b[4];
      memcpy(b, &f, 4);
      for (int k = 0; k < 4; k++) {
        t.p[t.len++] = hex[b[k] >> 4];
        t.p[t.len++] = hex[b[k] & 15];
      }
    }
    t.p[t.len] = 0;
    bench_put(&t, "\"> : tensor<%dxf32>\n", n);
    char prev[16] = "a";
    if (w) snprintf(prev, sizeof prev, "s%d", w - 1);
    bench_put(&t, "    %%s%d = stablehlo.add %%%s, %%c%d : tensor<%dxf32>\n", w, prev, w, n);
  }
  bench_put(&t, "    func.return %%s%d : tensor<%dxf32>\n  }\n}\n", nw - 1, n);
  return t;
}

/* Parses text and writes it as an artifact (malloc'd, *len bytes). */
static char *artifact_of(const bench_text *t, size_t *len) {
  xrt_program *p = NULL;
  char *b = NULL;
  xrt_status s = xrt_program_parse(t->p, t->len, NULL, &p);
  if (!s) s = xrt_program_serialize(p, NULL, &b, len);
  xrt_program_release(p);
  if (s) bench_fail("serializing the generated program", s);
  return s ? NULL : b;
}

/* Best of five parse + compile of an artifact, in MB of artifact a second. */
static double compile_artifact(xrt_client *client, const char *b, size_t n) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "bench.mlir.bc";
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    xrt_program *prog = NULL;
    xrt_executable *exe = NULL;
    double t0 = bench_now_s();
    xrt_status s = xrt_program_parse(b, n, &co, &prog);
    if (!s) s = xrt_compile_program(client, prog, &co, &exe);
    double t1 = bench_now_s();
    xrt_executable_release(exe);
    xrt_program_release(prog);
    if (s) return bench_fail("compile of the artifact", s), -1;
    if (t1 - t0 < best) best = t1 - t0;
  }
  return (double)n / 1e6 / best;
}

static int bench_bytecode(xrt_client *client, double text_mb_per_s) {
  bench_text ops = make_program((size_t)4 << 20);
  bench_text w = make_weights(24, 1 << 20); /* 24 x 4 MiB of weights */
  size_t on = 0, wn = 0;
  char *ob = ops.failed ? NULL : artifact_of(&ops, &on);
  char *wb = w.failed ? NULL : artifact_of(&w, &wn);
  free(ops.p);
  free(w.p);
  int rc = !ob || !wb;
  if (!rc) {
    double wm = compile_artifact(client, wb, wn), om = compile_artifact(client, ob, on);
    rc = wm < 0 || om < 0;
    if (!rc) {
      printf("compile.bytecode_bytes = %zu\n", wn);
      printf("compile.bytecode_mb_per_s = %.2f\n", wm);
      printf("compile.bytecode_ratio = %.2f\n", wm / text_mb_per_s);
      printf("compile.bytecode_ops_bytes = %zu\n", on);
      printf("compile.bytecode_ops_mb_per_s = %.2f\n", om);
    }
  }
  free(ob);
  free(wb);
  return rc;
}

int main(int argc, char **argv) {
  /* "bench_main --dump-program" prints the generated program instead. */
  if (argc > 1 && strcmp(argv[1], "--dump-program") == 0) {
    bench_text t = make_program((size_t)4 << 20);
    if (!t.failed) fwrite(t.p, 1, t.len, stdout);
    free(t.p);
    return t.failed;
  }
  xrt_client *client = NULL;
  xrt_status s = xrt_client_create(NULL, &client);
  if (s) return bench_fail("client", s);
  /* "bench_main --compile" runs the compile benchmarks only. */
  bool compile_only = argc > 1 && strcmp(argv[1], "--compile") == 0;
  int rc = 0;
  if (!compile_only) {
    double direct = bench_dispatch(client, "dispatch.add_f32x4.ns");
    rc = direct < 0;
    rc |= bench_dispatch_pjrt(direct);
    rc |= bench_transfer(client);
  }
  double text_mb_per_s = 0;
  rc |= bench_compile(client, &text_mb_per_s);
  if (text_mb_per_s > 0) rc |= bench_bytecode(client, text_mb_per_s);
  xrt_client_release(client);
  return rc;
}
