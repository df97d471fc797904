/*
 * test_fusion.c - fused elementwise loops and reductions of the simulator
 * (issue #8), through the public API: each program's results are compared
 * with a plain loop written here.  Sizes are chosen around the simulator's
 * tiles (1, 3, 1023, 4097, and big enough to be cut into pieces), and
 * outputs big enough to bypass the cache.
 */
#include "test_kernels.h"

static const int64_t sizes[] = {1, 3, 1023, 4097, 70001};

/* Deterministic inputs: small integers and halves, so that products and
 * sums are exact in f32 and every reference order gives the same bits. */
static void fill(float *p, int64_t n, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((int)(s >> 24) % 33 - 16) * 0.5f;
  }
}

static float *fvec(int64_t n, uint32_t seed) {
  float *p = (float *)malloc(sizeof(float) * (size_t)(n ? n : 1));
  fill(p, n, seed);
  return p;
}

/* Runs one(c, n) for each of the sizes. */
static void each_size(void **state, void (*one)(xrt_client *, int64_t)) {
  for (size_t i = 0; i < TU_COUNT(sizes); i++)
    one((xrt_client *)*state, sizes[i]);
}

/* Runs one(c, R, C) for each of the k shapes [R, C]. */
static void each_shape(void **state, const int64_t (*shapes)[2], size_t k,
                       void (*one)(xrt_client *, int64_t, int64_t)) {
  for (size_t i = 0; i < k; i++)
    one((xrt_client *)*state, shapes[i][0], shapes[i][1]);
}

/* IEEE maximum / minimum as stablehlo's (test_kernels.h): NaN wins (the
 * first NaN operand); equal values: +0 is the larger. */
static float ref_max(float x, float y) {
  return (float)tu_ref_maxmin(x, y, 1);
}

static float ref_min(float x, float y) {
  return (float)tu_ref_maxmin(x, y, 0);
}

static void assert_f32_bits(const tu_out *o, int i, const float *want,
                            int64_t n) {
  assert_int_equal(o->bytes[i], (size_t)n * sizeof(float));
  const float *got = (const float *)o->data[i];
  for (int64_t k = 0; k < n; k++)
    if (tu_f32_bits(got[k]) != tu_f32_bits(want[k]))
      fail_msg("output %d element %lld: got %.9g want %.9g", i, (long long)k,
               (double)got[k], (double)want[k]);
}

/* One expected f32 output of a program: its n values, compared bitwise. */
typedef struct want_f32 {
  const float *v;
  int64_t n;
} want_f32;

/* The count and array of want_f32 rows: WANT({w0, n}, {w1, 1}). */
#define WANT(...)                                                           \
  (int)TU_COUNT(((const want_f32[]){__VA_ARGS__})),                         \
      (const want_f32[]){__VA_ARGS__}

/* Runs prog on in[0..nin) and checks the bits of its first nw outputs. */
static void run_check(xrt_client *c, const char *prog, int nin,
                      const tu_in *in, int nw, const want_f32 *want) {
  tu_out o;
  TU_RUN_OK(c, prog, nin, in, &o);
  for (int i = 0; i < nw; i++) assert_f32_bits(&o, i, want[i].v, want[i].n);
  tu_out_free(&o);
}

/* A long chain of unary and binary ops over four inputs. */
static void long_chain(xrt_client *c, int64_t n) {
  char prog[2048];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1xf32>, %b: tensor<$1xf32>,"
      " %c: tensor<$1xf32>, %d: tensor<$1xf32>) -> "
      "tensor<$1xf32> {\n"
      "  %0 = stablehlo.multiply %a, %b : tensor<$1xf32>\n"
      "  %1 = stablehlo.add %0, %c : tensor<$1xf32>\n"
      "  %2 = stablehlo.subtract %1, %d : tensor<$1xf32>\n"
      "  %3 = stablehlo.abs %a : tensor<$1xf32>\n"
      "  %4 = stablehlo.add %3, %3 : tensor<$1xf32>\n"
      "  %5 = stablehlo.negate %b : tensor<$1xf32>\n"
      "  %6 = stablehlo.maximum %2, %5 : tensor<$1xf32>\n"
      "  %7 = stablehlo.minimum %6, %4 : tensor<$1xf32>\n"
      "  %8 = stablehlo.divide %7, %c : tensor<$1xf32>\n"
      "  func.return %8 : tensor<$1xf32>\n"
      "}\n",
      (long long)n, 0, 0);
  float *a = fvec(n, 1), *b = fvec(n, 2), *cc = fvec(n, 3), *d = fvec(n, 4);
  float *want = fvec(n, 0);
  for (int64_t i = 0; i < n; i++) {
    float t = a[i] * b[i];
    t = t + cc[i];
    t = t - d[i];
    float m = ref_max(t, -b[i]);
    float ab = fabsf(a[i]) + fabsf(a[i]);
    want[i] = ref_min(m, ab) / cc[i];
  }
  xrt_shape s = TU_SHAPE(XRT_F32, n);
  tu_in in[4] = {{s, a}, {s, b}, {s, cc}, {s, d}};
  run_check(c, prog, 4, in, WANT({want, n}));
  free(a), free(b), free(cc), free(d), free(want);
}

static void test_long_chain(void **state) {
  each_size(state, long_chain);
}

/* Scalars, rows and columns broadcast into a loop over a matrix. */
static void broadcasts(xrt_client *c, int64_t R, int64_t C) {
  char prog[2048];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1x$2xf32>, %s: tensor<f32>,"
      " %row: tensor<$2xf32>, %col: tensor<$1xf32>) -> "
      "tensor<$1x$2xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) "
      "-> tensor<$1x$2xf32>\n"
      "  %1 = stablehlo.broadcast_in_dim %row, dims = [1] : "
      "(tensor<$2xf32>) -> tensor<$1x$2xf32>\n"
      "  %2 = stablehlo.broadcast_in_dim %col, dims = [0] : "
      "(tensor<$1xf32>) -> tensor<$1x$2xf32>\n"
      "  %3 = stablehlo.multiply %a, %0 : tensor<$1x$2xf32>\n"
      "  %4 = stablehlo.add %3, %1 : tensor<$1x$2xf32>\n"
      "  %5 = stablehlo.subtract %4, %2 : tensor<$1x$2xf32>\n"
      "  func.return %5 : tensor<$1x$2xf32>\n"
      "}\n",
      (long long)R, (long long)C, 0);
  float *a = fvec(R * C, 5), *row = fvec(C, 6), *col = fvec(R, 7);
  float sc = -1.5f, *want = fvec(R * C, 0);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) {
      float t = a[i * C + j] * sc;
      t = t + row[j];
      want[i * C + j] = t - col[i];
    }
  tu_in in[4] = {{TU_SHAPE(XRT_F32, R, C), a},
                 {TU_SCALAR(XRT_F32), &sc},
                 {TU_SHAPE(XRT_F32, C), row},
                 {TU_SHAPE(XRT_F32, R), col}};
  run_check(c, prog, 4, in, WANT({want, R * C}));
  free(a), free(row), free(col), free(want);
}

static void test_broadcasts(void **state) {
  static const int64_t shapes[][2] = {{1, 1}, {3, 1023}, {4097, 3}, {2, 4097},
                                      {300, 301}};
  each_shape(state, shapes, TU_COUNT(shapes), broadcasts);
}

/* bf16 rounding (nearest even) of a float without NaNs. */
static float ref_bf16(float f) {
  uint32_t u = tu_f32_bits(f);
  u += 0x7fffu + ((u >> 16) & 1);
  return tu_bits_f32(u & 0xffff0000u);
}

/* Converts to f16, bf16 and i32 and back inside one loop. */
static void converts(xrt_client *c, int64_t n) {
  char prog[2048];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1xf32>, %b: tensor<$1xf32>)"
      " -> (tensor<$1xf32>, tensor<$1xi32>) {\n"
      "  %0 = stablehlo.multiply %a, %b : tensor<$1xf32>\n"
      "  %1 = stablehlo.convert %0 : (tensor<$1xf32>) -> "
      "tensor<$1xf16>\n"
      "  %2 = stablehlo.add %1, %1 : tensor<$1xf16>\n"
      "  %3 = stablehlo.convert %2 : (tensor<$1xf16>) -> "
      "tensor<$1xf32>\n"
      "  %4 = stablehlo.divide %3, %b : tensor<$1xf32>\n"
      "  %5 = stablehlo.convert %4 : (tensor<$1xf32>) -> "
      "tensor<$1xbf16>\n"
      "  %6 = stablehlo.convert %5 : (tensor<$1xbf16>) -> "
      "tensor<$1xf32>\n"
      "  %7 = stablehlo.convert %6 : (tensor<$1xf32>) -> "
      "tensor<$1xi32>\n"
      "  func.return %6, %7 : tensor<$1xf32>, tensor<$1xi32>\n"
      "}\n",
      (long long)n, 0, 0);
  float *a = fvec(n, 8), *b = fvec(n, 9), *want = fvec(n, 0);
  int32_t *wi = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    if (b[i] == 0) b[i] = 3; /* keep the quotients finite */
    float p = a[i] * b[i];  /* |p| <= 64, a multiple of 1/4: exact in f16 */
    float q = (p + p) / b[i];
    want[i] = ref_bf16(q);
    wi[i] = (int32_t)want[i]; /* truncation toward zero */
  }
  xrt_shape s = TU_SHAPE(XRT_F32, n);
  tu_in in[2] = {{s, a}, {s, b}};
  tu_out o;
  TU_RUN_OK(c, prog, 2, in, &o);
  assert_f32_bits(&o, 0, want, n);
  assert_int_equal(o.bytes[1], (size_t)n * 4);
  assert_memory_equal(o.data[1], wi, (size_t)n * 4);
  tu_out_free(&o);
  free(a), free(b), free(want), free(wi);
}

static void test_converts(void **state) {
  each_size(state, converts);
}

/* compare + select, and clamp with scalar bounds. */
static void compare_select_clamp(xrt_client *c, int64_t n) {
  char prog[2048];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1xf32>, %b: tensor<$1xf32>,"
      " %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<$1xf32> {\n"
      "  %0 = stablehlo.compare GT, %a, %b, FLOAT : "
      "(tensor<$1xf32>, tensor<$1xf32>) -> tensor<$1xi1>\n"
      "  %1 = stablehlo.add %a, %a : tensor<$1xf32>\n"
      "  %2 = stablehlo.subtract %b, %a : tensor<$1xf32>\n"
      "  %3 = stablehlo.select %0, %1, %2 : (tensor<$1xi1>, "
      "tensor<$1xf32>, tensor<$1xf32>) -> tensor<$1xf32>\n"
      "  %4 = stablehlo.clamp %lo, %3, %hi : (tensor<f32>, "
      "tensor<$1xf32>, tensor<f32>) -> tensor<$1xf32>\n"
      "  func.return %4 : tensor<$1xf32>\n"
      "}\n",
      (long long)n, 0, 0);
  float *a = fvec(n, 10), *b = fvec(n, 11), *want = fvec(n, 0);
  float lo = -5, hi = 6.5f;
  for (int64_t i = 0; i < n; i++) {
    float t = a[i] > b[i] ? a[i] + a[i] : b[i] - a[i];
    want[i] = t < lo ? lo : t > hi ? hi : t;
  }
  xrt_shape s = TU_SHAPE(XRT_F32, n);
  tu_in in[4] = {{s, a}, {s, b}, {TU_SCALAR(XRT_F32), &lo},
                 {TU_SCALAR(XRT_F32), &hi}};
  run_check(c, prog, 4, in, WANT({want, n}));
  free(a), free(b), free(want);
}

static void test_compare_select_clamp(void **state) {
  each_size(state, compare_select_clamp);
}

/* ReLU and its kin after a per-channel operand (NCHW: runs of the same
 * value): a line of f32 ops ending in a maximum or minimum with a splat,
 * with NaN, infinities and signed zeros among the inputs. */
static void relu_chains(xrt_client *c, int64_t C, int64_t H, int64_t W) {
  char prog[4096];
  char t[64];
  snprintf(t, sizeof t, "tensor<2x%lldx%lldx%lldxf32>", (long long)C,
           (long long)H, (long long)W);
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: %s, %%b: tensor<%lldxf32>) -> (%s, %s, %s) "
           "{\n"
           "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : "
           "(tensor<%lldxf32>) -> %s\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%zb = stablehlo.broadcast_in_dim %%z, dims = [] : "
           "(tensor<f32>) -> %s\n"
           "  %%n = stablehlo.constant dense<-0.0> : tensor<f32>\n"
           "  %%nb = stablehlo.broadcast_in_dim %%n, dims = [] : "
           "(tensor<f32>) -> %s\n"
           "  %%nc = stablehlo.broadcast_in_dim %%n, dims = [] : "
           "(tensor<f32>) -> %s\n"
           "  %%s = stablehlo.add %%x, %%bb : %s\n"
           "  %%r0 = stablehlo.maximum %%s, %%zb : %s\n"
           "  %%m = stablehlo.multiply %%x, %%bb : %s\n"
           "  %%r1 = stablehlo.minimum %%nb, %%m : %s\n"
           "  %%d = stablehlo.subtract %%x, %%bb : %s\n"
           "  %%r2 = stablehlo.maximum %%nc, %%d : %s\n"
           "  func.return %%r0, %%r1, %%r2 : %s, %s, %s\n}\n",
           t, (long long)C, t, t, t, (long long)C, t, t, t, t, t, t, t, t,
           t, t, t, t, t);
  int64_t n = 2 * C * H * W, P = H * W;
  float *x = fvec(n, 21), *b = fvec(C, 22);
  const float special[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY};
  for (int64_t i = 0; i < n; i += 7) x[i] = special[(i / 7) % 5];
  for (int64_t k = 0; k < C; k++)
    b[k] = k % 4 == 0 ? -0.0f : k % 4 == 1 ? 0.0f : b[k];
  float *w0 = fvec(n, 0), *w1 = fvec(n, 0), *w2 = fvec(n, 0);
  for (int64_t i = 0; i < n; i++) {
    float bv = b[(i / P) % C];
    w0[i] = ref_max(x[i] + bv, 0.0f);
    w1[i] = ref_min(-0.0f, x[i] * bv);
    w2[i] = ref_max(-0.0f, x[i] - bv);
  }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 2, C, H, W), x},
                 {TU_SHAPE(XRT_F32, C), b}};
  run_check(c, prog, 2, in, WANT({w0, n}, {w1, n}, {w2, n}));
  free(x), free(b), free(w0), free(w1), free(w2);
}

static void test_relu_chains(void **state) {
  xrt_client *c = (xrt_client *)*state;
  relu_chains(c, 3, 5, 7);   /* runs of 35, one tile */
  relu_chains(c, 4, 33, 33); /* runs cross tiles */
  relu_chains(c, 64, 2, 3);  /* runs of 6: shorter than a vector */
}

/* A value used inside the loop and returned; one used twice in the loop;
 * an intermediate returned as well. */
static void shared_values(xrt_client *c, int64_t n) {
  char prog[2048];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1xf32>, %b: tensor<$1xf32>)"
      " -> (tensor<$1xf32>, tensor<$1xf32>, tensor<$1xf32>)"
      " {\n"
      "  %t = stablehlo.multiply %a, %b : tensor<$1xf32>\n"
      "  %u = stablehlo.add %t, %a : tensor<$1xf32>\n"
      "  %v = stablehlo.multiply %u, %u : tensor<$1xf32>\n"
      "  %w = stablehlo.subtract %v, %u : tensor<$1xf32>\n"
      "  %x = stablehlo.negate %w : tensor<$1xf32>\n"
      "  %y = stablehlo.add %x, %t : tensor<$1xf32>\n"
      "  func.return %y, %t, %w : tensor<$1xf32>, "
      "tensor<$1xf32>, tensor<$1xf32>\n"
      "}\n",
      (long long)n, 0, 0);
  float *a = fvec(n, 12), *b = fvec(n, 13);
  float *wy = fvec(n, 0), *wt = fvec(n, 0), *ww = fvec(n, 0);
  for (int64_t i = 0; i < n; i++) {
    float t = a[i] * b[i], u = t + a[i], v = u * u, w = v - u;
    wt[i] = t, ww[i] = w, wy[i] = -w + t;
  }
  xrt_shape s = TU_SHAPE(XRT_F32, n);
  tu_in in[2] = {{s, a}, {s, b}};
  run_check(c, prog, 2, in, WANT({wy, n}, {wt, n}, {ww, n}));
  free(a), free(b), free(wy), free(wt), free(ww);
}

static void test_shared_values(void **state) {
  each_size(state, shared_values);
}

/* Transposed and reshaped operands read by index inside the loop. */
static void transposed_inputs(xrt_client *c, int64_t R, int64_t C) {
  char prog[2048];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1x$2xf32>, "
      "%b: tensor<$2x$1xf32>, %f: tensor<$3xf32>) -> "
      "tensor<$1x$2xf32> {\n"
      "  %0 = stablehlo.transpose %b, dims = [1, 0] : "
      "(tensor<$2x$1xf32>) -> tensor<$1x$2xf32>\n"
      "  %1 = stablehlo.reshape %f : (tensor<$3xf32>) -> "
      "tensor<$1x$2xf32>\n"
      "  %2 = stablehlo.multiply %a, %0 : tensor<$1x$2xf32>\n"
      "  %3 = stablehlo.add %2, %1 : tensor<$1x$2xf32>\n"
      "  func.return %3 : tensor<$1x$2xf32>\n"
      "}\n",
      (long long)R, (long long)C, (long long)(R * C));
  float *a = fvec(R * C, 14), *b = fvec(R * C, 15), *f = fvec(R * C, 16);
  float *want = fvec(R * C, 0);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) {
      float t = a[i * C + j] * b[j * R + i];
      want[i * C + j] = t + f[i * C + j];
    }
  tu_in in[3] = {{TU_SHAPE(XRT_F32, R, C), a},
                 {TU_SHAPE(XRT_F32, C, R), b},
                 {TU_SHAPE(XRT_F32, R * C), f}};
  run_check(c, prog, 3, in, WANT({want, R * C}));
  free(a), free(b), free(f), free(want);
}

static void test_transposed_inputs(void **state) {
  static const int64_t shapes[][2] = {{1, 1}, {3, 1023}, {67, 129}};
  each_shape(state, shapes, TU_COUNT(shapes), transposed_inputs);
}

/* sum(a * b) over axis 0, axis 1 and both; max over axis 1. */
static void reduce_products(xrt_client *c, int64_t R, int64_t C) {
  char prog[3072];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1x$2xf32>, "
      "%b: tensor<$1x$2xf32>) -> (tensor<$2xf32>, "
      "tensor<$1xf32>, tensor<f32>, tensor<$1xf32>, tensor<$2xf32>) {\n"
      "  %z = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %m = stablehlo.constant dense<-100.0> : tensor<f32>\n"
      "  %p = stablehlo.multiply %a, %b : tensor<$1x$2xf32>\n"
      "  %0 = stablehlo.reduce(%p init: %z) applies stablehlo.add "
      "across dimensions = [0] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$2xf32>\n"
      "  %q = stablehlo.multiply %a, %b : tensor<$1x$2xf32>\n"
      "  %1 = stablehlo.reduce(%q init: %z) applies stablehlo.add "
      "across dimensions = [1] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$1xf32>\n"
      "  %r = stablehlo.subtract %a, %b : tensor<$1x$2xf32>\n"
      "  %2 = stablehlo.reduce(%r init: %z) applies stablehlo.add "
      "across dimensions = [0, 1] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<f32>\n"
      "  %s = stablehlo.add %a, %b : tensor<$1x$2xf32>\n"
      "  %3 = stablehlo.reduce(%s init: %m) applies stablehlo.maximum "
      "across dimensions = [1] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$1xf32>\n"
      "  %4 = stablehlo.reduce(%a init: %z) applies stablehlo.add "
      "across dimensions = [0] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$2xf32>\n"
      "  func.return %0, %1, %2, %3, %4 : tensor<$2xf32>, "
      "tensor<$1xf32>, tensor<f32>, tensor<$1xf32>, tensor<$2xf32>\n"
      "}\n",
      (long long)R, (long long)C, 0);
  float *a = fvec(R * C, 17), *b = fvec(R * C, 18);
  float *w0 = fvec(C, 0), *w1 = fvec(R, 0), *w3 = fvec(R, 0), w2 = 0.5f;
  float *w4 = fvec(C, 0);
  for (int64_t j = 0; j < C; j++) w0[j] = w4[j] = 0.5f;
  for (int64_t i = 0; i < R; i++) w1[i] = 0.5f, w3[i] = -100;
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) {
      float x = a[i * C + j], y = b[i * C + j];
      w0[j] += x * y; /* every partial sum is exact: any order works */
      w1[i] += x * y;
      w2 += x - y;
      w3[i] = ref_max(w3[i], x + y);
      w4[j] += x;
    }
  xrt_shape s = TU_SHAPE(XRT_F32, R, C);
  tu_in in[2] = {{s, a}, {s, b}};
  run_check(c, prog, 2, in,
            WANT({w0, C}, {w1, R}, {&w2, 1}, {w3, R}, {w4, C}));
  free(a), free(b), free(w0), free(w1), free(w3), free(w4);
}

static void test_reduce_products(void **state) {
  static const int64_t shapes[][2] = {{1, 1}, {3, 1023}, {4097, 3}, {300, 301},
                                      {2, 70001}};
  each_shape(state, shapes, TU_COUNT(shapes), reduce_products);
}

/* Reductions in f64 and i32 of fused producers, over a middle axis. */
static void test_reduce_types(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const int64_t A = 5, B = 777, C = 3;
  const char *prog =
      "func.func @main(%a: tensor<5x777x3xf64>, %i: tensor<5x777x3xi32>) -> "
      "(tensor<5x3xf64>, tensor<5x3xi32>, tensor<777xi32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f64>\n"
      "  %k = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %p = stablehlo.multiply %a, %a : tensor<5x777x3xf64>\n"
      "  %0 = stablehlo.reduce(%p init: %z) applies stablehlo.add across "
      "dimensions = [1] : (tensor<5x777x3xf64>, tensor<f64>) -> "
      "tensor<5x3xf64>\n"
      "  %q = stablehlo.add %i, %i : tensor<5x777x3xi32>\n"
      "  %1 = stablehlo.reduce(%q init: %k) applies stablehlo.add across "
      "dimensions = [1] : (tensor<5x777x3xi32>, tensor<i32>) -> "
      "tensor<5x3xi32>\n"
      "  %r = stablehlo.negate %i : tensor<5x777x3xi32>\n"
      "  %2 = stablehlo.reduce(%r init: %k) applies stablehlo.minimum across "
      "dimensions = [0, 2] : (tensor<5x777x3xi32>, tensor<i32>) -> "
      "tensor<777xi32>\n"
      "  func.return %0, %1, %2 : tensor<5x3xf64>, tensor<5x3xi32>, "
      "tensor<777xi32>\n"
      "}\n";
  int64_t n = A * B * C;
  double *a = (double *)malloc(sizeof(double) * (size_t)n);
  int32_t *iv = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
  float *tmp = fvec(n, 19);
  for (int64_t k = 0; k < n; k++) a[k] = tmp[k], iv[k] = (int32_t)(tmp[k] * 4);
  double w0[15];
  int32_t w1[15], w2[777];
  for (int k = 0; k < 15; k++) w0[k] = 0, w1[k] = 1;
  for (int k = 0; k < 777; k++) w2[k] = 1;
  for (int64_t x = 0; x < A; x++)
    for (int64_t y = 0; y < B; y++)
      for (int64_t z = 0; z < C; z++) {
        int64_t k = (x * B + y) * C + z;
        w0[x * C + z] += a[k] * a[k];
        w1[x * C + z] += iv[k] + iv[k];
        if (-iv[k] < w2[y]) w2[y] = -iv[k];
      }
  tu_in in[2] = {{TU_SHAPE(XRT_F64, A, B, C), a},
                 {TU_SHAPE(XRT_S32, A, B, C), iv}};
  tu_out o;
  TU_RUN_OK(c, prog, 2, in, &o);
  assert_int_equal(o.bytes[0], sizeof w0);
  assert_memory_equal(o.data[0], w0, sizeof w0);
  assert_int_equal(o.bytes[1], sizeof w1);
  assert_memory_equal(o.data[1], w1, sizeof w1);
  assert_int_equal(o.bytes[2], sizeof w2);
  assert_memory_equal(o.data[2], w2, sizeof w2);
  tu_out_free(&o);
  free(a), free(iv), free(tmp);
}

/* Long f32 sums may be reassociated: compare with a tolerance. */
static void test_reduce_long_sum(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const int64_t R = 7, C = 100003;
  char prog[1024];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1x$2xf32>) -> "
      "tensor<$1xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %e = stablehlo.exponential %a : tensor<$1x$2xf32>\n"
      "  %0 = stablehlo.reduce(%e init: %z) applies stablehlo.add "
      "across dimensions = [1] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$1xf32>\n"
      "  func.return %0 : tensor<$1xf32>\n"
      "}\n",
      (long long)R, (long long)C, 0);
  float *a = fvec(R * C, 20);
  double want[7];
  for (int64_t i = 0; i < R; i++) {
    double s = 0;
    for (int64_t j = 0; j < C; j++) s += (double)(float)exp(a[i * C + j] / 4);
    want[i] = s;
  }
  for (int64_t k = 0; k < R * C; k++) a[k] /= 4;
  tu_in in[1] = {{TU_SHAPE(XRT_F32, R, C), a}};
  tu_out o;
  TU_RUN_OK(c, prog, 1, in, &o);
  tu_assert_f32_near(&o, 0, want, (size_t)R, 1e-4);
  tu_out_free(&o);
  free(a);
}

/* The order an f32 add reduce folds one row of n in: 32 partial sums over
 * whole blocks of 32 when n >= 32, folded pairwise and added to the init,
 * then the rest one by one.  Fused and unfused reduces both keep it, so
 * fusing a reduce never changes its bits. */
static float ref_row_sum(const float *x, int64_t n, float init) {
  float a = init;
  int64_t i = 0;
  if (n >= 32) {
    float s[32] = {0};
    for (; i + 32 <= n; i += 32)
      for (int k = 0; k < 32; k++) s[k] += x[i + k];
    for (int w = 16; w > 0; w /= 2)
      for (int k = 0; k < w; k++) s[k] += s[k + w];
    a += s[0];
  }
  for (; i < n; i++) a += x[i];
  return a;
}

/* Row sums of random floats (where the order shows in the bits), of the
 * input itself and of a fused producer, with rows of every size around
 * the tiles and enough rows to be cut into pieces. */
static void reduce_rows_order(xrt_client *c, int64_t R, int64_t C) {
  char prog[1024];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1x$2xf32>) -> "
      "(tensor<$1xf32>, tensor<$1xf32>) {\n"
      "  %z = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %t = stablehlo.constant dense<3.0> : tensor<$1x$2xf32>\n"
      "  %m = stablehlo.multiply %a, %t : tensor<$1x$2xf32>\n"
      "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add "
      "across dimensions = [1] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$1xf32>\n"
      "  %1 = stablehlo.reduce(%m init: %z) applies stablehlo.add "
      "across dimensions = [1] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$1xf32>\n"
      "  func.return %0, %1 : tensor<$1xf32>, tensor<$1xf32>\n"
      "}\n",
      (long long)R, (long long)C, 0);
  float *a = fvec(R * C, 31), *m = fvec(C, 0), *w0 = fvec(R, 0),
        *w1 = fvec(R, 0);
  uint32_t s = 7;
  for (int64_t k = 0; k < R * C; k++) {
    s = s * 1664525u + 1013904223u;
    a[k] = (float)(s >> 8) / 16777216.0f - 0.3f;
  }
  for (int64_t i = 0; i < R; i++) {
    for (int64_t j = 0; j < C; j++) m[j] = a[i * C + j] * 3.0f;
    w0[i] = ref_row_sum(a + i * C, C, 0.5f);
    w1[i] = ref_row_sum(m, C, 0.5f);
  }
  tu_in in[1] = {{TU_SHAPE(XRT_F32, R, C), a}};
  run_check(c, prog, 1, in, WANT({w0, R}, {w1, R}));
  free(a), free(m), free(w0), free(w1);
}

static void test_reduce_rows_order(void **state) {
  static const int64_t shapes[][2] = {{5, 31},  {5, 32},  {7, 169},
                                      {5, 255}, {5, 256}, {6, 300},
                                      {5, 513}, {9, 768}, {3, 2048},
                                      {100, 768}, {40, 1000}};
  each_shape(state, shapes, TU_COUNT(shapes), reduce_rows_order);
}

/* Zero-size dimensions: nothing computed, reductions give the init. */
static void test_zero_size(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const char *prog =
      "func.func @main(%a: tensor<0x5xf32>, %b: tensor<0x5xf32>) -> "
      "(tensor<0x5xf32>, tensor<5xf32>) {\n"
      "  %z = stablehlo.constant dense<2.5> : tensor<f32>\n"
      "  %0 = stablehlo.multiply %a, %b : tensor<0x5xf32>\n"
      "  %1 = stablehlo.add %0, %a : tensor<0x5xf32>\n"
      "  %p = stablehlo.multiply %a, %b : tensor<0x5xf32>\n"
      "  %2 = stablehlo.reduce(%p init: %z) applies stablehlo.add across "
      "dimensions = [0] : (tensor<0x5xf32>, tensor<f32>) -> tensor<5xf32>\n"
      "  func.return %1, %2 : tensor<0x5xf32>, tensor<5xf32>\n"
      "}\n";
  float none[1] = {0};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 0, 5), none},
                 {TU_SHAPE(XRT_F32, 0, 5), none}};
  tu_out o;
  TU_RUN_OK(c, prog, 2, in, &o);
  assert_int_equal(o.bytes[0], 0);
  TU_ASSERT_OUT(&o, 1, float, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f);
  tu_out_free(&o);
}

/* A fused loop inside a while body. */
static void test_fused_in_region(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const char *prog =
      "func.func @main(%a: tensor<1023xf32>) -> tensor<1023xf32> {\n"
      "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "  %h = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %r:2 = stablehlo.while(%i = %i0, %x = %a) : tensor<i32>, "
      "tensor<1023xf32>\n"
      "    cond {\n"
      "      %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) "
      "-> tensor<i1>\n"
      "      stablehlo.return %c : tensor<i1>\n"
      "    } do {\n"
      "      %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> "
      "tensor<1023xf32>\n"
      "      %m = stablehlo.multiply %x, %hb : tensor<1023xf32>\n"
      "      %y = stablehlo.add %m, %a : tensor<1023xf32>\n"
      "      %j = stablehlo.add %i, %one : tensor<i32>\n"
      "      stablehlo.return %j, %y : tensor<i32>, tensor<1023xf32>\n"
      "    }\n"
      "  func.return %r#1 : tensor<1023xf32>\n"
      "}\n";
  float *a = fvec(1023, 21), *want = fvec(1023, 0);
  for (int k = 0; k < 1023; k++) {
    float x = a[k];
    for (int it = 0; it < 3; it++) x = x * 0.5f + a[k];
    want[k] = x;
  }
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 1023), a}};
  run_check(c, prog, 1, in, WANT({want, 1023}));
  free(a), free(want);
}

/* (a * b + a) - b in s8 (wrapping), u16, f64 and c64, 4097 elements. */
static void test_other_types(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const struct {
    const char *mlir;
    xrt_dtype dt;
    size_t es;
  } types[] = {{"i8", XRT_S8, 1}, {"ui16", XRT_U16, 2}, {"f64", XRT_F64, 8},
               {"complex<f32>", XRT_C64, 8}};
  const int64_t n = 4097;
  for (size_t ti = 0; ti < TU_COUNT(types); ti++) {
    char prog[1024], ty[64];
    snprintf(ty, sizeof ty, "tensor<4097x%s>", types[ti].mlir);
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
             "  %%0 = stablehlo.multiply %%a, %%b : %s\n"
             "  %%1 = stablehlo.add %%0, %%a : %s\n"
             "  %%2 = stablehlo.subtract %%1, %%b : %s\n"
             "  func.return %%2 : %s\n"
             "}\n",
             ty, ty, ty, ty, ty, ty, ty);
    size_t es = types[ti].es;
    unsigned char *a = (unsigned char *)malloc(es * (size_t)n);
    unsigned char *b = (unsigned char *)malloc(es * (size_t)n);
    unsigned char *w = (unsigned char *)malloc(es * (size_t)n);
    float *fa = fvec(2 * n, 24), *fb = fvec(2 * n, 25);
    for (int64_t i = 0; i < n; i++) {
      switch (types[ti].dt) {
      case XRT_S8: {
        int8_t x = (int8_t)(fa[i] * 14), y = (int8_t)(fb[i] * 14);
        uint8_t r = (uint8_t)((uint8_t)(x * y + x) - (uint8_t)y);
        memcpy(a + i, &x, 1), memcpy(b + i, &y, 1), memcpy(w + i, &r, 1);
        break;
      }
      case XRT_U16: {
        uint16_t x = (uint16_t)(fa[i] * 4 + 64);
        uint16_t y = (uint16_t)(fb[i] * 900 + 8000);
        uint16_t r = (uint16_t)((uint16_t)((uint32_t)x * y + x) - y);
        memcpy(a + 2 * i, &x, 2), memcpy(b + 2 * i, &y, 2);
        memcpy(w + 2 * i, &r, 2);
        break;
      }
      case XRT_F64: {
        double x = fa[i] / 3.0, y = fb[i] / 7.0, p = x * y, q = p + x;
        double r = q - y;
        memcpy(a + 8 * i, &x, 8), memcpy(b + 8 * i, &y, 8);
        memcpy(w + 8 * i, &r, 8);
        break;
      }
      default: { /* c64: halves, so every product and sum here is exact */
        float x[2] = {fa[2 * i], fa[2 * i + 1]};
        float y[2] = {fb[2 * i], fb[2 * i + 1]};
        float p0 = x[0] * y[0], p1 = x[1] * y[1], p2 = x[0] * y[1];
        float p3 = x[1] * y[0];
        float m[2] = {p0 - p1, p2 + p3};
        float r[2] = {(m[0] + x[0]) - y[0], (m[1] + x[1]) - y[1]};
        memcpy(a + 8 * i, x, 8), memcpy(b + 8 * i, y, 8);
        memcpy(w + 8 * i, r, 8);
        break;
      }
      }
    }
    xrt_shape s = TU_SHAPE(types[ti].dt, n);
    tu_in in[2] = {{s, a}, {s, b}};
    tu_out o;
    TU_RUN_OK(c, prog, 2, in, &o);
    assert_int_equal(o.bytes[0], es * (size_t)n);
    assert_memory_equal(o.data[0], w, es * (size_t)n);
    tu_out_free(&o);
    free(a), free(b), free(w), free(fa), free(fb);
  }
}

/* Two threads on one device: the big loops are cut into pieces. */
static void test_two_threads(void **state) {
  (void)state;
  xrt_client *c = tu_client(0, 2, 0);
  const int64_t R = 513, C = 9001; /* two column blocks of the axis-0 sum */
  char prog[2048];
  TU_TPL(prog, sizeof prog,
      "func.func @main(%a: tensor<$1x$2xf32>, "
      "%b: tensor<$1x$2xf32>) -> (tensor<$1x$2xf32>, "
      "tensor<$2xf32>, tensor<$1xf32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.multiply %a, %b : tensor<$1x$2xf32>\n"
      "  %1 = stablehlo.add %0, %a : tensor<$1x$2xf32>\n"
      "  %p = stablehlo.multiply %a, %b : tensor<$1x$2xf32>\n"
      "  %2 = stablehlo.reduce(%p init: %z) applies stablehlo.add "
      "across dimensions = [0] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$2xf32>\n"
      "  %3 = stablehlo.reduce(%a init: %z) applies stablehlo.add "
      "across dimensions = [1] : (tensor<$1x$2xf32>, "
      "tensor<f32>) -> tensor<$1xf32>\n"
      "  func.return %1, %2, %3 : tensor<$1x$2xf32>, "
      "tensor<$2xf32>, tensor<$1xf32>\n"
      "}\n",
      (long long)R, (long long)C, 0);
  float *a = fvec(R * C, 22), *b = fvec(R * C, 23), *w0 = fvec(R * C, 0);
  float *w1 = fvec(C, 0), *w2 = fvec(R, 0);
  for (int64_t j = 0; j < C; j++) w1[j] = 0;
  for (int64_t i = 0; i < R; i++) w2[i] = 0;
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) {
      float x = a[i * C + j], y = b[i * C + j], p = x * y;
      w0[i * C + j] = p + x;
      w1[j] += p;
      w2[i] += x;
    }
  xrt_shape s = TU_SHAPE(XRT_F32, R, C);
  tu_in in[2] = {{s, a}, {s, b}};
  run_check(c, prog, 2, in, WANT({w0, R * C}, {w1, C}, {w2, R}));
  xrt_client_release(c);
  free(a), free(b), free(w0), free(w1), free(w2);
}

/* Outputs of 16 MiB and more leave the root's kernel with non-temporal
 * stores, a run of SIM_FZ_SUB elements at a time: odd sizes end in a
 * short run, on one thread and cut into pieces on two. */
static void test_streamed_outputs(void **state) {
  const int64_t n = ((int64_t)4 << 20) + 37;
  /* light (valgrind, wine): each root on one of the clients */
  if (!tu_light()) long_chain((xrt_client *)*state, n);
  broadcasts((xrt_client *)*state, 2049, 2051);
  xrt_client *c2 = tu_client(0, 2, 0);
  long_chain(c2, n);
  if (!tu_light()) broadcasts(c2, 2051, 2049);
  xrt_client_release(c2);
}

/* Loops of elementary functions under 65536 elements: one piece below
 * SIM_FZ_COSTLY_MIN plain ops of work (an LSTM gate's 2048 tanh), cut in
 * pieces for the threads above it (30000 tanh); either way the values of
 * one thread, bit for bit, and tanh's within its accuracy. */
static void test_costly_small_loops(void **state) {
  (void)state;
  xrt_client *c1 = tu_client(1, 1, 0), *c2 = tu_client(1, 2, 0);
  const int64_t sizes[] = {2048, 30000};
  for (size_t k = 0; k < TU_COUNT(sizes); k++) {
    int64_t n = sizes[k];
    char prog[1024];
    TU_TPL(prog, sizeof prog,
        "func.func @main(%a: tensor<$1xf32>, %b: tensor<$1xf32>) -> "
        "tensor<$1xf32> {\n"
        "  %t = stablehlo.tanh %a : tensor<$1xf32>\n"
        "  %m = stablehlo.multiply %t, %b : tensor<$1xf32>\n"
        "  %r = stablehlo.add %m, %a : tensor<$1xf32>\n"
        "  func.return %r : tensor<$1xf32>\n"
        "}\n",
        (long long)n, 0, 0);
    float *a = fvec(n, 31), *b = fvec(n, 32);
    double *want = (double *)malloc(sizeof(double) * (size_t)n);
    assert_non_null(want);
    for (int64_t i = 0; i < n; i++)
      want[i] = tanh((double)a[i]) * b[i] + a[i];
    xrt_shape s = TU_SHAPE(XRT_F32, n);
    tu_in in[2] = {{s, a}, {s, b}};
    tu_out one;
    TU_RUN_OK(c1, prog, 2, in, &one);
    tu_assert_f32_near(&one, 0, want, (size_t)n, 1e-5);
    run_check(c2, prog, 2, in, WANT({(const float *)one.data[0], n}));
    tu_out_free(&one);
    free(a), free(b), free(want);
  }
  xrt_client_release(c1);
  xrt_client_release(c2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_long_chain),
      cmocka_unit_test(test_broadcasts),
      cmocka_unit_test(test_converts),
      cmocka_unit_test(test_compare_select_clamp),
      cmocka_unit_test(test_relu_chains),
      cmocka_unit_test(test_shared_values),
      cmocka_unit_test(test_transposed_inputs),
      cmocka_unit_test(test_reduce_products),
      cmocka_unit_test(test_reduce_types),
      cmocka_unit_test(test_reduce_long_sum),
      cmocka_unit_test(test_reduce_rows_order),
      cmocka_unit_test(test_zero_size),
      cmocka_unit_test(test_fused_in_region),
      cmocka_unit_test(test_other_types),
      cmocka_unit_test(test_two_threads),
      cmocka_unit_test(test_streamed_outputs),
      cmocka_unit_test(test_costly_small_loops),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
