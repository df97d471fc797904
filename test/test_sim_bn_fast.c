/*
 * test_sim_bn_fast.c - batch_norm_inference's f32 / f64 kernels
 * (src/sim/batchnorm.c): feature innermost (NHWC rows of features) and
 * not (NCHW runs of one feature), against a reference written here that
 * does the operation's arithmetic the way the simulator defines it: in
 * double, y = scale * ((x - mean) / sqrt(var + eps)) + offset, each step
 * rounded to double, one rounding to the type at the end.  Results must
 * agree bit for bit (NaN, infinities, signed zeros, subnormals included),
 * with one thread and with two (large operands split over both).
 * MIT licensed.
 */
#include "test_util.h"

#include <math.h>

static uint32_t rng_state = 2026;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (rng_state >> 8) % n;
}

/* A value in roughly [-8, 8) with specials now and then. */
static double value(int specials) {
  uint32_t r = specials ? rnd(60) : 59;
  switch (r) {
  case 0: return NAN;
  case 1: return -INFINITY;
  case 2: return INFINITY;
  case 3: return -0.0;
  case 4: return 0.0;
  case 5: return 1e-40; /* subnormal in f32 */
  default: return ((double)rnd(1u << 20) - (double)(1u << 19)) / 65536.0;
  }
}

typedef struct bn_case {
  xrt_dtype t;
  int rank, fi;
  int64_t dims[4];
  const char *eps; /* the attribute's text */
  float eps_f;     /* its f32 value */
} bn_case;

static size_t esz(xrt_dtype t) { return t == XRT_F32 ? 4 : 8; }

static double get(xrt_dtype t, const void *p, int64_t i) {
  return t == XRT_F32 ? (double)((const float *)p)[i]
                      : ((const double *)p)[i];
}

static void put(xrt_dtype t, void *p, int64_t i, double v) {
  if (t == XRT_F32) ((float *)p)[i] = (float)v;
  else ((double *)p)[i] = v;
}

/* The reference, element by element in row-major order. */
static void reference(const bn_case *k, const void *x, const void *scale,
                      const void *offset, const void *mean, const void *var,
                      void *y) {
  int64_t outer = 1, F = k->dims[k->fi], inner = 1;
  for (int d = 0; d < k->fi; d++) outer *= k->dims[d];
  for (int d = k->fi + 1; d < k->rank; d++) inner *= k->dims[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t f = 0; f < F; f++) {
      double sd = sqrt(get(k->t, var, f) + (double)k->eps_f);
      double m = get(k->t, mean, f), s = get(k->t, scale, f);
      double b = get(k->t, offset, f);
      for (int64_t i = 0; i < inner; i++) {
        int64_t at = (o * F + f) * inner + i;
        double v = (get(k->t, x, at) - m) / sd;
        double p = s * v;
        put(k->t, y, at, p + b);
      }
    }
}

static char *program(const bn_case *k) {
  char xs[96] = "", fs[32];
  size_t n = 0;
  const char *tn = k->t == XRT_F32 ? "f32" : "f64";
  for (int d = 0; d < k->rank; d++)
    n += (size_t)snprintf(xs + n, sizeof xs - n, "%lldx",
                          (long long)k->dims[d]);
  snprintf(xs + n, sizeof xs - n, "%s", tn);
  snprintf(fs, sizeof fs, "%lldx%s", (long long)k->dims[k->fi], tn);
  char *text = malloc(2048);
  snprintf(text, 2048,
           "func.func @main(%%x: tensor<%s>, %%s: tensor<%s>, %%o: "
           "tensor<%s>, %%m: tensor<%s>, %%v: tensor<%s>) -> tensor<%s> {\n"
           "  %%r = \"stablehlo.batch_norm_inference\"(%%x, %%s, %%o, %%m, "
           "%%v) {epsilon = %s : f32, feature_index = %d : i64} : "
           "(tensor<%s>, tensor<%s>, tensor<%s>, tensor<%s>, tensor<%s>) -> "
           "tensor<%s>\n"
           "  func.return %%r : tensor<%s>\n}\n",
           xs, fs, fs, fs, fs, xs, k->eps, k->fi, xs, fs, fs, fs, fs, xs, xs);
  return text;
}

/* Runs case k on client c; returns the number of elements checked. */
static int64_t run_case(xrt_client *c, const bn_case *k) {
  int64_t numel = 1, F = k->dims[k->fi];
  for (int d = 0; d < k->rank; d++) numel *= k->dims[d];
  size_t es = esz(k->t);
  void *x = malloc((size_t)numel * es), *want = malloc((size_t)numel * es);
  void *pf[4];
  for (int j = 0; j < 4; j++) pf[j] = malloc((size_t)F * es);
  for (int64_t i = 0; i < numel; i++) put(k->t, x, i, value(1));
  for (int64_t f = 0; f < F; f++) {
    put(k->t, pf[0], f, value(f % 13 == 7)); /* scale */
    put(k->t, pf[1], f, value(f % 17 == 5)); /* offset */
    put(k->t, pf[2], f, value(f % 19 == 3)); /* mean */
    double v = fabs(value(0)) * 0.25;        /* variance */
    put(k->t, pf[3], f, f % 11 == 4 ? 0.0 : f % 23 == 9 ? -1.0 : v);
  }
  reference(k, x, pf[0], pf[1], pf[2], pf[3], want);
  char *text = program(k);
  xrt_shape xs = tu_shape(k->t, k->rank, k->dims);
  tu_in in[5] = {{xs, x},
                 {TU_SHAPE(k->t, F), pf[0]},
                 {TU_SHAPE(k->t, F), pf[1]},
                 {TU_SHAPE(k->t, F), pf[2]},
                 {TU_SHAPE(k->t, F), pf[3]}};
  tu_out o;
  TU_RUN_OK(c, text, 5, in, &o);
  assert_int_equal(o.bytes[0], (size_t)numel * es);
  for (int64_t i = 0; i < numel; i++)
    if (memcmp((char *)o.data[0] + (size_t)i * es,
               (char *)want + (size_t)i * es, es) != 0)
      fail_msg("element %lld: got %a want %a\n%s", (long long)i,
               get(k->t, o.data[0], i), get(k->t, want, i), text);
  tu_out_free(&o);
  free(text);
  for (int j = 0; j < 4; j++) free(pf[j]);
  free(x);
  free(want);
  return numel;
}

static const char *const eps_text[] = {"1.000000e-05", "1.000000e-03",
                                       "0.000000e+00"};
static const float eps_val[] = {1e-5f, 1e-3f, 0.0f};

/* The models' shapes: NHWC with 64 features (rows of F, F a multiple of
 * the vector width) and NCHW, large enough to be split over threads. */
static void model_shapes(xrt_client *c) {
  bn_case cases[] = {
      {XRT_F32, 4, 3, {1, 28, 28, 64}, "1.000000e-05", 1e-5f},
      {XRT_F32, 4, 1, {1, 64, 28, 28}, "1.000000e-05", 1e-5f},
      {XRT_F64, 4, 3, {2, 28, 28, 40}, "1.000000e-03", 1e-3f},
      {XRT_F64, 4, 1, {2, 40, 28, 28}, "1.000000e-03", 1e-3f},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++)
    assert_true(run_case(c, &cases[i]) >= 31360);
}

/* Random ranks, feature dimensions and sizes (tails of the vector loops,
 * F of 1, inner of 1..), both types. */
static void random_shapes(xrt_client *c) {
  for (int t = 0; t < 120; t++) {
    bn_case k;
    memset(&k, 0, sizeof k);
    k.t = rnd(2) ? XRT_F32 : XRT_F64;
    k.rank = 1 + (int)rnd(4);
    k.fi = (int)rnd((uint32_t)k.rank);
    for (int d = 0; d < k.rank; d++) k.dims[d] = 1 + rnd(d == k.fi ? 21 : 9);
    int e = (int)rnd(3);
    k.eps = eps_text[e];
    k.eps_f = eps_val[e];
    assert_true(run_case(c, &k) >= 1);
  }
}

/* On one thread, then on two (the kernels split their work). */
static void test_one_and_two_threads(void **state) {
  (void)state;
  for (int threads = 1; threads <= 2; threads++) {
    xrt_client *c = tu_client(1, threads, 0);
    model_shapes(c);
    random_shapes(c);
    xrt_client_release(c);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_and_two_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
