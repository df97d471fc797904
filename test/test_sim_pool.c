/*
 * test_sim_pool.c - reduce_window as pooling: the simulator's typed kernels
 * (f32 add / maximum / minimum over windows spanning one or two
 * dimensions, src/sim/index.c) and its general path (windows spanning
 * three dimensions), against a reference written here.
 *
 * The reference combines window elements in row-major window order,
 * starting from the init value, with padding and holes of base dilation
 * as the init value: the order the specification's reduce_window gives,
 * so results must agree bit for bit (NaN for NaN), signed zeros and NaN
 * inputs included.  MIT licensed.
 */
#include "test_util.h"

#include <math.h>

enum { OP_ADD, OP_MAX, OP_MIN };
static const char *const op_names[] = {"add", "maximum", "minimum"};

typedef struct pool_case {
  int op;
  int64_t dims[4];
  int64_t win[4], stride[4], bdil[4], wdil[4], pad[8];
  float init;
} pool_case;

static float combine(int op, float a, float b) {
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

/* The element of x at padded, dilated position p of each dimension, or
 * NULL for padding or a dilation hole. */
static const float *at(const pool_case *k, const float *x, const int64_t *p) {
  int64_t off = 0;
  for (int d = 0; d < 4; d++) {
    int64_t q = p[d] - k->pad[2 * d];
    if (q < 0 || q % k->bdil[d] || q / k->bdil[d] >= k->dims[d]) return NULL;
    off = off * k->dims[d] + q / k->bdil[d];
  }
  return &x[off];
}

static void reference(const pool_case *k, const float *x, float *out) {
  int64_t od[4], o = 0;
  for (int d = 0; d < 4; d++) od[d] = out_dim(k, d);
  int64_t i[4];
  for (i[0] = 0; i[0] < od[0]; i[0]++)
    for (i[1] = 0; i[1] < od[1]; i[1]++)
      for (i[2] = 0; i[2] < od[2]; i[2]++)
        for (i[3] = 0; i[3] < od[3]; i[3]++) {
          float acc = k->init;
          int64_t w[4];
          for (w[0] = 0; w[0] < k->win[0]; w[0]++)
            for (w[1] = 0; w[1] < k->win[1]; w[1]++)
              for (w[2] = 0; w[2] < k->win[2]; w[2]++)
                for (w[3] = 0; w[3] < k->win[3]; w[3]++) {
                  int64_t p[4];
                  for (int d = 0; d < 4; d++)
                    p[d] = i[d] * k->stride[d] + w[d] * k->wdil[d];
                  const float *e = at(k, x, p);
                  acc = combine(k->op, acc, e ? *e : k->init);
                }
          out[o++] = acc;
        }
}

static size_t list(char *buf, size_t cap, const int64_t *v, int n) {
  size_t used = 0;
  for (int i = 0; i < n; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "",
                             (long long)v[i]);
  return used;
}

static char *program(const pool_case *k) {
  char in[64], out[64], wd[64], ws[64], bd[64], wl[64], pd[96];
  int64_t od[4];
  for (int d = 0; d < 4; d++) od[d] = out_dim(k, d);
  snprintf(in, sizeof in, "%lldx%lldx%lldx%lld", (long long)k->dims[0],
           (long long)k->dims[1], (long long)k->dims[2], (long long)k->dims[3]);
  snprintf(out, sizeof out, "%lldx%lldx%lldx%lld", (long long)od[0],
           (long long)od[1], (long long)od[2], (long long)od[3]);
  list(wd, sizeof wd, k->win, 4);
  list(ws, sizeof ws, k->stride, 4);
  list(bd, sizeof bd, k->bdil, 4);
  list(wl, sizeof wl, k->wdil, 4);
  size_t n = 0;
  for (int d = 0; d < 4; d++)
    n += (size_t)snprintf(pd + n, sizeof pd - n, "%s[%lld, %lld]",
                          d ? ", " : "", (long long)k->pad[2 * d],
                          (long long)k->pad[2 * d + 1]);
  char *text = malloc(2048);
  snprintf(text, 2048,
           "func.func @main(%%x: tensor<%sxf32>, %%i: tensor<f32>) -> "
           "tensor<%sxf32> {\n"
           "  %%r = \"stablehlo.reduce_window\"(%%x, %%i) ({\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "    %%m = stablehlo.%s %%a, %%b : tensor<f32>\n"
           "    stablehlo.return %%m : tensor<f32>\n"
           "  }) {window_dimensions = array<i64: %s>, "
           "window_strides = array<i64: %s>, base_dilations = array<i64: %s>, "
           "window_dilations = array<i64: %s>, padding = dense<[%s]> : "
           "tensor<4x2xi64>} : (tensor<%sxf32>, tensor<f32>) -> "
           "tensor<%sxf32>\n"
           "  func.return %%r : tensor<%sxf32>\n}\n",
           in, out, op_names[k->op], wd, ws, bd, wl, pd, in, out, out);
  return text;
}

static uint32_t rng_state = 12345;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (rng_state >> 8) % n;
}

/* Inputs with repeats, both zeros, and a NaN now and then. */
static float *input(int64_t n) {
  float *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++) {
    uint32_t r = rnd(40);
    x[i] = r == 0 ? NAN : r == 1 ? -0.0f : r == 2 ? 0.0f
                                       : (float)((int)rnd(17) - 8) * 0.375f;
  }
  return x;
}

static void run_case(xrt_client *c, const pool_case *k) {
  int64_t nin = 1, nout = 1;
  for (int d = 0; d < 4; d++) {
    nin *= k->dims[d];
    nout *= out_dim(k, d);
  }
  float *x = input(nin), *want = malloc((size_t)(nout ? nout : 1) * 4);
  reference(k, x, want);
  char *text = program(k);
  tu_in in[2] = {{TU_SHAPE(XRT_F32, k->dims[0], k->dims[1], k->dims[2],
                           k->dims[3]), x},
                 {TU_SCALAR(XRT_F32), &k->init}};
  tu_out o;
  xrt_status s = tu_run(c, text, 2, in, &o);
  if (s) fail_msg("%s\n%s", tu_msg, text);
  assert_int_equal(o.bytes[0], (size_t)nout * sizeof(float));
  const float *got = (const float *)o.data[0];
  for (int64_t i = 0; i < nout; i++) {
    bool same = (got[i] != got[i] && want[i] != want[i]) ||
                memcmp(&got[i], &want[i], sizeof(float)) == 0;
    if (!same)
      fail_msg("element %lld: got %a want %a\n%s", (long long)i,
               (double)got[i], (double)want[i], text);
  }
  tu_out_free(&o);
  free(text);
  free(x);
  free(want);
}

/* Max pools as CNNs write them: NCHW 3x3 stride 2 with ceil-mode padding,
 * NHWC 2x2, a global average pool's sum. */
static void test_cnn_pools(void **state) {
  const pool_case cases[] = {
      {OP_MAX, {1, 8, 13, 13}, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 1, 1, 1},
       {1, 1, 1, 1}, {0, 0, 0, 0, 0, 1, 0, 1}, -INFINITY},
      {OP_MAX, {2, 9, 9, 5}, {1, 2, 2, 1}, {1, 2, 2, 1}, {1, 1, 1, 1},
       {1, 1, 1, 1}, {0, 0, 0, 1, 0, 1, 0, 0}, -INFINITY},
      {OP_ADD, {1, 6, 7, 7}, {1, 1, 7, 7}, {1, 1, 1, 1}, {1, 1, 1, 1},
       {1, 1, 1, 1}, {0}, 0.0f},
      {OP_MIN, {1, 3, 10, 4}, {1, 1, 4, 1}, {1, 1, 3, 1}, {1, 1, 1, 1},
       {1, 1, 1, 1}, {0, 0, 0, 0, 2, 2, 0, 0}, INFINITY},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++)
    run_case((xrt_client *)*state, &cases[i]);
}

/* Random windows of one, two (the typed kernels) and three dimensions
 * (the general path), with strides, both dilations and padding. */
static void test_random_windows(void **state) {
  static const float inits[] = {0.0f, -0.0f, -INFINITY, 1.5f, INFINITY};
  for (int t = 0; t < 300; t++) {
    pool_case k;
    memset(&k, 0, sizeof k);
    k.op = (int)rnd(3);
    k.init = inits[rnd(5)];
    int spans = 1 + (int)rnd(3);
    for (int d = 0; d < 4; d++) {
      k.dims[d] = 1 + rnd(d < 2 ? 3 : 7);
      k.win[d] = 1;
      k.stride[d] = 1 + rnd(2);
      k.bdil[d] = rnd(4) ? 1 : 2;
      k.wdil[d] = rnd(4) ? 1 : 2;
      k.pad[2 * d] = rnd(3);
      k.pad[2 * d + 1] = rnd(3);
    }
    for (int j = 0; j < spans; j++) k.win[rnd(4)] = 2 + rnd(3);
    run_case((xrt_client *)*state, &k);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cnn_pools),
      cmocka_unit_test(test_random_windows),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
