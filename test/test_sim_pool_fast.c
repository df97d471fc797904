/*
 * test_sim_pool_fast.c - the vectorized pools of reduce_window
 * (src/sim/index.c): separable max / min pools over the last two
 * dimensions (NCHW) and channels-last pools (NHWC: the window leaves the
 * last dimension alone) of maximum, minimum and sums, on one thread and
 * on two, against a reference written here.
 *
 * The reference follows the specification: each result starts from the
 * init value and combines its window's elements in row-major window
 * order, padding and holes of base dilation as the init value.  Results
 * must agree bit for bit (signed zeros, infinities); where the reference
 * gives NaN the result must be a NaN (of several NaNs a max pool keeps
 * one, and the separable kernel meets them in another order).  f32 takes
 * the vectorized kernels, f64 the general path.  MIT licensed.
 */
#include "test_util.h"

#include <math.h>

enum { OP_ADD, OP_MAX, OP_MIN };
static const char *const op_names[] = {"add", "maximum", "minimum"};

typedef struct pool_case {
  int op;
  xrt_dtype t;
  int64_t dims[4];
  int64_t win[4], stride[4], bdil[4], wdil[4], pad[8];
  double init;
  int nan; /* NaN among the inputs now and then */
} pool_case;

static double combine(int op, double a, double b) {
  if (op == OP_ADD) return a + b;
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) /* +0 is the larger zero */
    return (op == OP_MAX) == !signbit(a) ? a : b;
  return (op == OP_MAX) == (a > b) ? a : b;
}

static int64_t out_dim(const pool_case *k, int d) {
  int64_t dil = (k->dims[d] - 1) * k->bdil[d] + 1;
  int64_t padded = dil + k->pad[2 * d] + k->pad[2 * d + 1];
  int64_t wext = (k->win[d] - 1) * k->wdil[d] + 1;
  return padded < wext ? 0 : (padded - wext) / k->stride[d] + 1;
}

/* The flat index of the element at padded, dilated position p, or -1 for
 * padding or a dilation hole. */
static int64_t at(const pool_case *k, const int64_t *p) {
  int64_t off = 0;
  for (int d = 0; d < 4; d++) {
    int64_t q = p[d] - k->pad[2 * d];
    if (q < 0 || q % k->bdil[d] || q / k->bdil[d] >= k->dims[d]) return -1;
    off = off * k->dims[d] + q / k->bdil[d];
  }
  return off;
}

/* f32 sums round each step to f32, as the kernels do. */
static double round_to(xrt_dtype t, double v) {
  return t == XRT_F32 ? (double)(float)v : v;
}

static void reference(const pool_case *k, const double *x, double *out) {
  int64_t od[4], o = 0, i[4], w[4];
  for (int d = 0; d < 4; d++) od[d] = out_dim(k, d);
  for (i[0] = 0; i[0] < od[0]; i[0]++)
    for (i[1] = 0; i[1] < od[1]; i[1]++)
      for (i[2] = 0; i[2] < od[2]; i[2]++)
        for (i[3] = 0; i[3] < od[3]; i[3]++) {
          double acc = k->init;
          for (w[0] = 0; w[0] < k->win[0]; w[0]++)
            for (w[1] = 0; w[1] < k->win[1]; w[1]++)
              for (w[2] = 0; w[2] < k->win[2]; w[2]++)
                for (w[3] = 0; w[3] < k->win[3]; w[3]++) {
                  int64_t p[4];
                  for (int d = 0; d < 4; d++)
                    p[d] = i[d] * k->stride[d] + w[d] * k->wdil[d];
                  int64_t e = at(k, p);
                  acc = round_to(k->t, combine(k->op, acc,
                                               e < 0 ? k->init : x[e]));
                }
          out[o++] = acc;
        }
}

static size_t list(char *buf, size_t cap, const int64_t *v) {
  size_t used = 0;
  for (int i = 0; i < 4; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "",
                             (long long)v[i]);
  return used;
}

static char *program(const pool_case *k) {
  char in[64], out[64], wd[64], ws[64], bd[64], wl[64], pd[96];
  const char *tn = k->t == XRT_F32 ? "f32" : "f64";
  int64_t od[4];
  for (int d = 0; d < 4; d++) od[d] = out_dim(k, d);
  snprintf(in, sizeof in, "%lldx%lldx%lldx%lldx%s", (long long)k->dims[0],
           (long long)k->dims[1], (long long)k->dims[2], (long long)k->dims[3],
           tn);
  snprintf(out, sizeof out, "%lldx%lldx%lldx%lldx%s", (long long)od[0],
           (long long)od[1], (long long)od[2], (long long)od[3], tn);
  list(wd, sizeof wd, k->win);
  list(ws, sizeof ws, k->stride);
  list(bd, sizeof bd, k->bdil);
  list(wl, sizeof wl, k->wdil);
  size_t n = 0;
  for (int d = 0; d < 4; d++)
    n += (size_t)snprintf(pd + n, sizeof pd - n, "%s[%lld, %lld]",
                          d ? ", " : "", (long long)k->pad[2 * d],
                          (long long)k->pad[2 * d + 1]);
  char *text = malloc(2048);
  snprintf(text, 2048,
           "func.func @main(%%x: tensor<%s>, %%i: tensor<%s>) -> "
           "tensor<%s> {\n"
           "  %%r = \"stablehlo.reduce_window\"(%%x, %%i) ({\n"
           "  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n"
           "    %%m = stablehlo.%s %%a, %%b : tensor<%s>\n"
           "    stablehlo.return %%m : tensor<%s>\n"
           "  }) {window_dimensions = array<i64: %s>, "
           "window_strides = array<i64: %s>, base_dilations = array<i64: %s>, "
           "window_dilations = array<i64: %s>, padding = dense<[%s]> : "
           "tensor<4x2xi64>} : (tensor<%s>, tensor<%s>) -> tensor<%s>\n"
           "  func.return %%r : tensor<%s>\n}\n",
           in, tn, out, tn, tn, op_names[k->op], tn, tn, wd, ws, bd, wl, pd, in,
           tn, out, out);
  return text;
}

static uint32_t rng_state = 4242;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (rng_state >> 8) % n;
}

/* Inputs with repeats, both zeros, infinities and (k->nan) NaN now and
 * then (sums: finite values only, often exactly representable, some
 * not).  Without NaN the AVX-512DQ kernels keep their own results; with
 * one, the range that met it runs again through the exact kernel. */
static double *input(const pool_case *k, int64_t n) {
  double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
  for (int64_t i = 0; i < n; i++) {
    uint32_t r = rnd(50);
    if (k->op == OP_ADD && r < 5) r += 5;
    if (!k->nan && r == 0) r = 1;
    x[i] = r == 0 ? NAN : r == 1 ? -0.0 : r == 2 ? 0.0 : r == 3 ? -INFINITY
           : r == 4 ? INFINITY : r == 5 ? 0.1 * (double)rnd(7)
                    : (double)((int)rnd(33) - 16) * 0.375;
    x[i] = round_to(k->t, x[i]);
  }
  return x;
}

/* Runs k on c; returns the number of results checked. */
static int64_t run_case(xrt_client *c, const pool_case *k) {
  int64_t nin = 1, nout = 1;
  for (int d = 0; d < 4; d++) {
    nin *= k->dims[d];
    nout *= out_dim(k, d);
  }
  size_t es = k->t == XRT_F32 ? 4 : 8;
  double *x = input(k, nin), *want = malloc((size_t)(nout ? nout : 1) * 8);
  reference(k, x, want);
  void *xd = malloc((size_t)(nin ? nin : 1) * es);
  for (int64_t i = 0; i < nin; i++)
    if (k->t == XRT_F32) ((float *)xd)[i] = (float)x[i];
    else ((double *)xd)[i] = x[i];
  float init32 = (float)k->init;
  char *text = program(k);
  tu_in in[2] = {{tu_shape(k->t, 4, k->dims), xd},
                 {TU_SCALAR(k->t), k->t == XRT_F32 ? (const void *)&init32
                                                   : (const void *)&k->init}};
  tu_out o;
  TU_RUN_OK(c, text, 2, in, &o);
  assert_int_equal(o.bytes[0], (size_t)nout * es);
  for (int64_t i = 0; i < nout; i++) {
    double got = k->t == XRT_F32 ? (double)((const float *)o.data[0])[i]
                                 : ((const double *)o.data[0])[i];
    bool same = want[i] != want[i]
                    ? got != got
                    : memcmp(&got, &want[i], sizeof got) == 0;
    if (!same)
      fail_msg("element %lld: got %a want %a\n%s", (long long)i, got,
               want[i], text);
  }
  tu_out_free(&o);
  free(text);
  free(xd);
  free(x);
  free(want);
  return nout;
}

static pool_case base_case(int op, xrt_dtype t, double init) {
  pool_case k;
  memset(&k, 0, sizeof k);
  k.op = op;
  k.t = t;
  k.init = init;
  k.nan = 1;
  for (int d = 0; d < 4; d++)
    k.dims[d] = k.win[d] = k.stride[d] = k.bdil[d] = k.wdil[d] = 1;
  return k;
}

/* The models' pools at smaller sizes: 3x3 stride 2 NCHW without padding
 * and with ceil-mode padding, NHWC padded by one; rows of 16, of 17, of
 * fewer than 16 and longer than the kernels' stack scratch (1024); 2- and
 * 3-column windows at stride 2 over rows of 16 results and more; 3x3
 * windows at stride 2 across with other strides down and init values. */
static void cnn_pools(xrt_client *c) {
  static const int64_t ncw[][4] = {{1, 16, 41, 41}, {1, 24, 20, 20},
                                   {2, 3, 16, 16},  {1, 5, 17, 17},
                                   {1, 4, 9, 7},    {1, 1, 5, 1100}};
  for (size_t i = 0; i < TU_COUNT(ncw); i++)
    for (int ceil = 0; ceil < 2; ceil++) {
      pool_case k = base_case(i % 3 == 2 ? OP_MIN : OP_MAX, XRT_F32,
                              i % 3 == 2 ? INFINITY : -INFINITY);
      memcpy(k.dims, ncw[i], sizeof k.dims);
      k.win[2] = k.win[3] = 3;
      k.stride[2] = k.stride[3] = 2;
      k.pad[5] = k.pad[7] = ceil;
      for (k.nan = 0; k.nan < 2; k.nan++) assert_true(run_case(c, &k) > 0);
    }
  /* Windows of 2 and 3 columns at stride 2 with 16 or more results a row
   * whose window lies inside it (the separable kernel's vector path for
   * them), padded on neither side, the left, the right or both. */
  static const int64_t s2[][4] = {
      {1, 3, 6, 33}, {1, 2, 5, 64}, {1, 2, 4, 35}, {2, 2, 3, 100}};
  for (size_t i = 0; i < TU_COUNT(s2); i++)
    for (int win = 2; win <= 3; win++)
      for (int pad = 0; pad < 4; pad++) {
        int op = (i + (size_t)pad) % 2 ? OP_MIN : OP_MAX;
        pool_case k = base_case(op, XRT_F32, op == OP_MIN ? INFINITY : -INFINITY);
        memcpy(k.dims, s2[i], sizeof k.dims);
        k.win[2] = k.win[3] = win;
        k.stride[2] = k.stride[3] = 2;
        k.pad[6] = pad & 1, k.pad[7] = pad >> 1;
        for (k.nan = 0; k.nan < 2; k.nan++) assert_true(run_case(c, &k) > 0);
      }
  /* 3x3 windows at stride 2 across from the row's start (the AVX-512DQ
   * kernel that keeps rows in registers): SqueezeNet's 109-wide rows,
   * 1023 (the longest it takes), stride 1 and 3 down, and init values
   * other than the identity (0, -0, 1.5, NaN: the exact kernel's
   * results); no padding, padding past the rows' ends and below the last
   * row (ceil mode: a window's last column or row, or a whole window of
   * padding at the end of a row). */
  static const struct {
    int64_t dims[4], sdown;
    double init;
  } r3[] = {{{1, 3, 11, 109}, 2, -INFINITY}, {{1, 2, 5, 1023}, 2, -INFINITY},
            {{2, 2, 9, 47}, 1, -INFINITY},   {{1, 3, 10, 50}, 3, -INFINITY},
            {{1, 2, 7, 37}, 2, 0.0},         {{1, 2, 7, 37}, 2, -0.0},
            {{1, 2, 7, 37}, 2, 1.5},         {{1, 2, 7, 37}, 2, NAN}};
  static const int64_t r3pad[] = {0, 1, 3};
  for (size_t i = 0; i < TU_COUNT(r3); i++)
    for (int op = OP_MAX; op <= OP_MIN; op++)
      for (size_t p = 0; p < TU_COUNT(r3pad); p++) {
        double init = r3[i].init;
        if (op == OP_MIN && isinf(init)) init = INFINITY;
        pool_case k = base_case(op, XRT_F32, init);
        memcpy(k.dims, r3[i].dims, sizeof k.dims);
        k.win[2] = k.win[3] = 3;
        k.stride[2] = r3[i].sdown, k.stride[3] = 2;
        k.pad[7] = r3pad[p];
        k.pad[5] = r3pad[p] < 2 ? r3pad[p] : 2; /* no window all padding */
        for (k.nan = 0; k.nan < 2; k.nan++)
          assert_true(run_case(c, &k) > 0);
      }
  /* SqueezeNet's second pool at a smaller depth: 54 columns to 27 */
  pool_case sq = base_case(OP_MAX, XRT_F32, -INFINITY);
  int64_t sqd[4] = {1, 5, 54, 54};
  memcpy(sq.dims, sqd, sizeof sqd);
  sq.win[2] = sq.win[3] = 3;
  sq.stride[2] = sq.stride[3] = 2;
  sq.pad[5] = sq.pad[7] = 1;
  for (sq.nan = 0; sq.nan < 2; sq.nan++) assert_true(run_case(c, &sq) > 0);
  static const int64_t nhwc[][4] = {{1, 40, 40, 16}, {2, 9, 9, 64},
                                    {1, 11, 13, 37}, {1, 7, 7, 3}};
  for (size_t i = 0; i < TU_COUNT(nhwc); i++) {
    pool_case k = base_case(OP_MAX, XRT_F32, -INFINITY);
    memcpy(k.dims, nhwc[i], sizeof k.dims);
    k.win[1] = k.win[2] = 3;
    k.stride[1] = k.stride[2] = 2;
    k.pad[2] = k.pad[3] = k.pad[4] = k.pad[5] = 1;
    for (k.nan = 0; k.nan < 2; k.nan++) assert_true(run_case(c, &k) > 0);
  }
}

/* Random pools of both layouts, every op and init value, strides,
 * padding (some larger than the window: results of padding only),
 * dilations of the spanned dimensions (NHWC), both types. */
static void random_pools(xrt_client *c) {
  static const double inits[] = {-INFINITY, INFINITY, 0.0, -0.0, 1.5, NAN};
  for (int t = 0; t < 160; t++) {
    int nhwc = (int)rnd(2);
    int op = (int)rnd(3);
    if (!nhwc && op == OP_ADD) op = OP_MAX;
    pool_case k = base_case(op, rnd(5) ? XRT_F32 : XRT_F64,
                            inits[rnd(op == OP_ADD ? 4 : 6)]);
    int a = nhwc ? 1 : 2, b = a + 1;
    k.dims[0] = 1 + rnd(2);
    k.dims[nhwc ? 3 : 1] = 1 + rnd(nhwc ? 40 : 5);
    k.dims[a] = 1 + rnd(12);
    k.dims[b] = 1 + rnd(36);
    for (int d = a; d <= b; d++) {
      k.win[d] = 1 + rnd(4);
      k.stride[d] = 1 + rnd(3);
      k.pad[2 * d] = rnd(4) ? rnd(2) : rnd(5);
      k.pad[2 * d + 1] = rnd(4) ? rnd(3) : rnd(5);
      if (nhwc && !rnd(4)) k.wdil[d] = 2;
      if (nhwc && !rnd(6)) k.bdil[d] = 2;
    }
    if (!rnd(8)) k.pad[0] = 1; /* a padded batch: results of padding */
    k.nan = (int)rnd(2);
    for (int d = a; d <= b; d++)
      while (out_dim(&k, d) == 0) k.pad[2 * d + 1] += 2;
    assert_true(run_case(c, &k) > 0);
  }
}

/* On one thread, then on two (the kernels split their work). */
static void test_one_and_two_threads(void **state) {
  (void)state;
  for (int threads = 1; threads <= 2; threads++) {
    xrt_client *c = tu_client(1, threads, 0);
    cnn_pools(c);
    random_pools(c);
    xrt_client_release(c);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_and_two_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
