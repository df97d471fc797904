/*
 * test_kernel_ew.c - the simulator's elementwise kernels, swept over
 * every (op, element type) pair they are stamped for:
 *
 * - float ops (src/sim/elementwise.c) on f32, f64, f16 and bf16: the
 *   arithmetic ones computed in the element's type, the transcendental
 *   ones in double, is_finite; inputs with zeros of both signs,
 *   infinities, NaN and halves (rounding ops);
 * - pred ops (add = or, multiply = and, max, min, and, or, xor, not);
 * - integer ops (src/sim/integer.c, bitwise.c) on every signed and
 *   unsigned width including 2 and 4 bits: wrap-around, division and
 *   remainder by 0 and -1, negative exponents, shifts by the width and
 *   more, popcnt and count_leading_zeros;
 * - compare (src/sim/compare.c) in every direction for every type, floats
 *   also with TOTALORDER, complex numbers lexicographically for the
 *   orderings (as compare.c defines them), and compare_types that do not
 *   fit the element type (UNIMPLEMENTED at compile);
 * - real and imag of real float types (a copy and zeros).
 *
 * Vectors have 21 elements: one block of 16 of the kernels' loops and a
 * tail.  Expected values come from references written here (libm in
 * double for floats, int64 arithmetic wrapped to the width for integers).
 * XRT_SIM_NO_FUSION is set so that f32/f64 ops run these kernels rather
 * than fusion's own loops.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))
enum { N = 21 };

/* ---- element types ---- */

static const xrt_dtype fdts[] = {XRT_F32, XRT_F64, XRT_F16, XRT_BF16};
static const xrt_dtype idts[] = {
    XRT_S8,  XRT_U8,  XRT_S16, XRT_U16, XRT_S32, XRT_U32,
    XRT_S64, XRT_U64, XRT_S2,  XRT_U2,  XRT_S4,  XRT_U4,
};

/* Integer element i wrapped to the width of d. */
static uint64_t geti(const tu_dtinfo *d, const void *buf, int i) {
  return tu_wrap(d, tu_get_int(d, buf, i));
}

/* Runs "%0 = <body>" on inputs a (and b) of type d (N elements each) and
 * returns the output (free with tu_out_free). */
static void run_ew(xrt_client *c, const tu_dtinfo *d, const char *rtype,
                   const char *body, const void *a, const void *b,
                   tu_out *o) {
  char prog[1024];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<%dx%s>, %%b: tensor<%dx%s>) -> "
           "tensor<%dx%s> {\n  %%0 = %s\n  func.return %%0 : tensor<%dx%s>\n}\n",
           N, d->mlir, N, d->mlir, N, rtype, body, N, rtype);
  tu_in in[2] = {{TU_SHAPE(d->dt, N), a}, {TU_SHAPE(d->dt, N), b}};
  xrt_status st = tu_run(c, prog, 2, in, o);
  if (st != XRT_OK) fail_msg("%s: %s\n%s", xrt_strerror(st), tu_msg, prog);
}

/* ---- floats ---- */

static const double fa[N] = {0,   -0.0, 1,    -1,  0.5,   -0.5,     1.5,
                             2.5, -2.5, 3,    100, -7.25, INFINITY, -INFINITY,
                             NAN, 0.1,  1e-3, 2,   -3.75, 7,        0.75};
static const double fb[N] = {1,   2,     -0.0, 0.0,      0.25, 3,   -1.5,
                             2.5, 2,     -INFINITY, 7, 0.5,  INFINITY, 1,
                             2,   NAN,   -3,   0.0,      1.25, -7,  0.75};

/* got vs want in type d: NaN matches NaN, zeros match in sign, else
 * equal (arithmetic) or within 2 ulps of d (transcendental). */
static void check_f(const tu_dtinfo *d, double got, double want, int loose,
                    const char *what, int i) {
  if (want != want) {
    if (got == got) fail_msg("%s %s [%d]: got %.17g want NaN", what, d->mlir, i, got);
    return;
  }
  if (got == want && signbit(got) == signbit(want)) return;
  double ulp = d->dt == XRT_F64 ? 0x1p-52 : d->dt == XRT_F32 ? 0x1p-23
               : d->dt == XRT_F16 ? 0x1p-10 : 0x1p-7;
  if (loose && isfinite(want) && fabs(got - want) <= 2 * ulp * fabs(want))
    return;
  fail_msg("%s %s [%d]: got %.17g want %.17g", what, d->mlir, i, got, want);
}

static void test_float_ops(void **state) {
  for (size_t t = 0; t < TU_COUNT(fdts); t++) {
    const tu_dtinfo *d = tu_dt(fdts[t]);
    char a[N * 8], b[N * 8];
    double xa[N], xb[N];
    for (int i = 0; i < N; i++) {
      tu_put(d, a, i, fa[i], 0), tu_put(d, b, i, fb[i], 0);
      xa[i] = tu_get_f(d, a, i),
      xb[i] = tu_get_f(d, b, i); /* as rounded to d */
    }
    for (int op = 0; op < TU_F_COUNT; op++) {
      char body[256];
      if (tu_fop(op)->binary)
        snprintf(body, sizeof body, "stablehlo.%s %%a, %%b : tensor<%dx%s>",
                 tu_fop(op)->name, N, d->mlir);
      else
        snprintf(body, sizeof body, "stablehlo.%s %%a : tensor<%dx%s>",
                 tu_fop(op)->name, N, d->mlir);
      tu_out o;
      run_ew(C(state), d, d->mlir, body, a, b, &o);
      assert_int_equal(o.bytes[0], N * d->size);
      for (int i = 0; i < N; i++) {
        char w[8];
        tu_put(d, w, 0, tu_ref_fop(op, xa[i], xb[i]), 0); /* one rounding */
        check_f(d, tu_get_f(d, o.data[0], i), tu_get_f(d, w, 0),
                tu_fop(op)->transcendental, tu_fop(op)->name, i);
      }
      tu_out_free(&o);
    }
    /* is_finite */
    char body[128];
    snprintf(body, sizeof body,
             "stablehlo.is_finite %%a : (tensor<%dx%s>) -> tensor<%dxi1>", N,
             d->mlir, N);
    tu_out o;
    run_ew(C(state), d, "i1", body, a, b, &o);
    assert_int_equal(o.bytes[0], N);
    for (int i = 0; i < N; i++)
      assert_int_equal(((uint8_t *)o.data[0])[i], isfinite(xa[i]) ? 1 : 0);
    tu_out_free(&o);
  }
}

/* ---- pred ---- */

static void test_pred_ops(void **state) {
  const tu_dtinfo *p = tu_dt(XRT_PRED);
  const char *names[] = {"add", "multiply", "maximum", "minimum",
                         "and", "or",       "xor",     "not"};
  uint8_t a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = (uint8_t)(i & 1), b[i] = (uint8_t)((i >> 1) & 1);
  for (size_t k = 0; k < TU_COUNT(names); k++) {
    char body[128];
    if (k == 7)
      snprintf(body, sizeof body, "stablehlo.not %%a : tensor<%dxi1>", N);
    else
      snprintf(body, sizeof body, "stablehlo.%s %%a, %%b : tensor<%dxi1>",
               names[k], N);
    tu_out o;
    run_ew(C(state), p, "i1", body, a, b, &o);
    for (int i = 0; i < N; i++) {
      int x = a[i], y = b[i], w;
      switch (k) {
      case 0: case 2: case 5: w = x | y; break;
      case 1: case 3: case 4: w = x & y; break;
      case 6: w = x ^ y; break;
      default: w = !x; break;
      }
      if (((uint8_t *)o.data[0])[i] != w)
        fail_msg("pred %s [%d]: got %d want %d", names[k], i,
                 ((uint8_t *)o.data[0])[i], w);
    }
    tu_out_free(&o);
  }
}

/* ---- integers ---- */

typedef enum {
  I_ADD, I_SUB, I_MUL, I_DIV, I_REM, I_MAX, I_MIN, I_POW, I_AND, I_OR,
  I_XOR, I_SHL, I_SHRL, I_SHRA, I_NEG, I_ABS, I_SIGN, I_NOT, I_POPCNT,
  I_CLZ, I_MULHI, I_COUNT
} iop;

static const struct {
  const char *name;
  int binary;
} iops[I_COUNT] = {
    [I_ADD] = {"add", 1},        [I_SUB] = {"subtract", 1},
    [I_MUL] = {"multiply", 1},   [I_DIV] = {"divide", 1},
    [I_REM] = {"remainder", 1},  [I_MAX] = {"maximum", 1},
    [I_MIN] = {"minimum", 1},    [I_POW] = {"power", 1},
    [I_AND] = {"and", 1},        [I_OR] = {"or", 1},
    [I_XOR] = {"xor", 1},        [I_SHL] = {"shift_left", 1},
    [I_SHRL] = {"shift_right_logical", 1},
    [I_SHRA] = {"shift_right_arithmetic", 1},
    [I_NEG] = {"negate", 0},     [I_ABS] = {"abs", 0},
    [I_SIGN] = {"sign", 0},      [I_NOT] = {"not", 0},
    [I_POPCNT] = {"popcnt", 0},  [I_CLZ] = {"count_leading_zeros", 0},
    [I_MULHI] = {"chlo.mulhi", 2},
};

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/* The reference of op on a and b (both already wrapped to d), wrapped. */
static uint64_t iref(const tu_dtinfo *d, iop op, uint64_t a, uint64_t b) {
  int w = d->bits, sg = d->is_signed;
  uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
  int64_t sa = (int64_t)a, sb = (int64_t)b;
  uint64_t ua = a & mask, ub = b & mask; /* unsigned views */
  switch (op) {
  case I_ADD: return tu_wrap(d, a + b);
  case I_SUB: return tu_wrap(d, a - b);
  case I_MUL: return tu_wrap(d, a * b);
  case I_DIV:
    if (sg) {
      if (sb == 0) return tu_wrap(d, ~0ull);
      if (sb == -1) return tu_wrap(d, 0 - a);
      return tu_wrap(d, (uint64_t)(sa / sb));
    }
    return ub == 0 ? tu_wrap(d, ~0ull) : ua / ub;
  case I_REM:
    if (sg) {
      if (sb == 0) return a;
      if (sb == -1) return 0;
      return tu_wrap(d, (uint64_t)(sa % sb));
    }
    return ub == 0 ? ua : ua % ub;
  case I_MAX: return sg ? (sa > sb ? a : b) : (ua > ub ? a : b);
  case I_MIN: return sg ? (sa < sb ? a : b) : (ua < ub ? a : b);
  case I_POW: {
    if (sg && sb < 0)
      return sa == 1 ? 1 : sa == -1 ? tu_wrap(d, (sb & 1) ? ~0ull : 1) : 0;
    uint64_t r = 1, e = sg ? (uint64_t)sb : ub;
    for (uint64_t k = 0; k < e && k < 200; k++) r *= a;
    if (e >= 200) { /* only 0, 1 and -1 bases appear with big exponents */
      r = 1;
      for (uint64_t base = a; e; e >>= 1, base *= base)
        if (e & 1) r *= base;
    }
    return tu_wrap(d, r);
  }
  case I_AND: return a & b;
  case I_OR: return a | b;
  case I_XOR: return a ^ b;
  case I_SHL: return ub >= (uint64_t)w ? 0 : tu_wrap(d, ua << ub);
  case I_SHRL: return ub >= (uint64_t)w ? 0 : tu_wrap(d, ua >> ub);
  case I_SHRA: {
    int neg = (ua >> (w - 1)) & 1;
    if (ub >= (uint64_t)w) return neg ? tu_wrap(d, ~0ull) : 0;
    uint64_t r = ua >> ub;
    if (neg && ub) r |= mask & ~(mask >> ub);
    return tu_wrap(d, r);
  }
  case I_NEG: return tu_wrap(d, 0 - a);
  case I_ABS: return sg && sa < 0 ? tu_wrap(d, 0 - a) : a;
  case I_SIGN:
    return sg ? tu_wrap(d, (uint64_t)(int64_t)((sa > 0) - (sa < 0))) : ua != 0;
  case I_NOT: return tu_wrap(d, ~a);
  case I_POPCNT: {
    uint64_t n = 0;
    for (uint64_t x = ua; x; x &= x - 1) n++;
    return n;
  }
  case I_CLZ: {
    uint64_t n = 0;
    for (int k = w - 1; k >= 0 && !((ua >> k) & 1); k--) n++;
    return n;
  }
  case I_MULHI: /* the high w bits of the 2w-bit product */
    if (sg) return tu_wrap(d, (uint64_t)(((i128)sa * (i128)sb) >> w));
    return tu_wrap(d, (uint64_t)(((u128)ua * (u128)ub) >> w));
  default: return 0;
  }
}

static void test_int_ops(void **state) {
  for (size_t t = 0; t < TU_COUNT(idts); t++) {
    const tu_dtinfo *d = tu_dt(idts[t]);
    int w = d->bits;
    uint64_t mn = d->is_signed ? tu_wrap(d, 1ull << (w - 1)) : 0;
    uint64_t mx = d->is_signed ? (w == 64 ? (uint64_t)INT64_MAX
                                          : (1ull << (w - 1)) - 1)
                               : (w == 64 ? ~0ull : (1ull << w) - 1);
    /* pairs: ordinary, 0 and -1 divisors, MIN / -1, shifts by the width
     * and beyond, negative shifts, negative and large exponents */
    const uint64_t av[N] = {7,  (uint64_t)-7, 100, mn, mn, 5, (uint64_t)-1,
                            3,  mx, 1, (uint64_t)-1, 2, 0, 6, 0x55, 1,
                            (uint64_t)-2, mx, 9, 1, 0};
    const uint64_t bv[N] = {2,  3, 0, (uint64_t)-1, 1, (uint64_t)-1, 2,
                            (uint64_t)w, 1, (uint64_t)(w - 1), 5,
                            (uint64_t)(w + 3), 3, (uint64_t)-3, 0x33,
                            (uint64_t)-2, (uint64_t)-3, mx, 4, 1000, 0};
    char a[N * 8], b[N * 8];
    uint64_t xa[N], xb[N];
    for (int i = 0; i < N; i++) {
      tu_put_int(d, a, i, av[i]), tu_put_int(d, b, i, bv[i]);
      xa[i] = geti(d, a, i), xb[i] = geti(d, b, i);
    }
    for (int op = 0; op < I_COUNT; op++) {
      char body[256];
      if (iops[op].binary == 2)
        snprintf(body, sizeof body,
                 "\"%s\"(%%a, %%b) : (tensor<%dx%s>, tensor<%dx%s>) -> "
                 "tensor<%dx%s>",
                 iops[op].name, N, d->mlir, N, d->mlir, N, d->mlir);
      else if (iops[op].binary)
        snprintf(body, sizeof body, "stablehlo.%s %%a, %%b : tensor<%dx%s>",
                 iops[op].name, N, d->mlir);
      else
        snprintf(body, sizeof body, "stablehlo.%s %%a : tensor<%dx%s>",
                 iops[op].name, N, d->mlir);
      tu_out o;
      run_ew(C(state), d, d->mlir, body, a, b, &o);
      assert_int_equal(o.bytes[0], N * d->size);
      for (int i = 0; i < N; i++) {
        uint64_t got = geti(d, o.data[0], i);
        uint64_t want = tu_wrap(d, iref(d, (iop)op, xa[i], xb[i]));
        if (got != want)
          fail_msg("%s %s [%d] (%lld, %lld): got %lld want %lld",
                   iops[op].name, d->mlir, i, (long long)xa[i],
                   (long long)xb[i], (long long)got, (long long)want);
      }
      tu_out_free(&o);
    }
  }
}

/* ---- compare ---- */

static const char *const dirs[6] = {"EQ", "NE", "GE", "GT", "LE", "LT"};

/* The total order of floats as a signed key: -NaN < -inf < ... < -0 < +0
 * < ... < inf < NaN. */
static int64_t tot_key(double x) {
  if (x != x) return signbit(x) ? INT64_MIN : INT64_MAX;
  if (x == 0) return signbit(x) ? -1 : 0;
  int64_t k = (int64_t)ldexp(fabs(atan(x)), 60) + 1; /* monotonic in |x| */
  return signbit(x) ? -k - 1 : k;
}

static void check_cmp(const char *what, const void *got, const uint8_t *want) {
  for (int i = 0; i < N; i++)
    if (((const uint8_t *)got)[i] != want[i])
      fail_msg("%s [%d]: got %d want %d", what, i, ((const uint8_t *)got)[i],
               want[i]);
}

static void test_compare(void **state) {
  char body[256], what[64];
  uint8_t want[N];
  tu_out o;
  for (int dir = 0; dir < 6; dir++) {
    /* floats, FLOAT and TOTALORDER */
    for (size_t t = 0; t < TU_COUNT(fdts); t++) {
      const tu_dtinfo *d = tu_dt(fdts[t]);
      char a[N * 8], b[N * 8];
      for (int i = 0; i < N; i++)
        tu_put(d, a, i, fa[i], 0), tu_put(d, b, i, fb[i], 0);
      for (int tot = 0; tot < 2; tot++) {
        snprintf(body, sizeof body,
                 "stablehlo.compare %s, %%a, %%b, %s : (tensor<%dx%s>, "
                 "tensor<%dx%s>) -> tensor<%dxi1>",
                 dirs[dir], tot ? "TOTALORDER" : "FLOAT", N, d->mlir, N,
                 d->mlir, N);
        run_ew(C(state), d, "i1", body, a, b, &o);
        for (int i = 0; i < N; i++) {
          double x = tu_get_f(d, a, i), y = tu_get_f(d, b, i);
          if (tot) {
            int64_t kx = tot_key(x), ky = tot_key(y);
            want[i] = (uint8_t)tu_cmp_dir(dir, kx < ky, kx == ky);
          } else if (x != x || y != y) {
            want[i] = dir == 1; /* unordered: only NE holds */
          } else {
            want[i] = (uint8_t)tu_cmp_dir(dir, x < y, x == y);
          }
        }
        snprintf(what, sizeof what, "%s %s %d", dirs[dir], d->mlir, tot);
        check_cmp(what, o.data[0], want);
        tu_out_free(&o);
      }
    }
    /* integers (and i1, unsigned) */
    for (size_t t = 0; t <= TU_COUNT(idts); t++) {
      const tu_dtinfo *d = tu_dt(t < TU_COUNT(idts) ? idts[t] : XRT_PRED);
      char a[N * 8], b[N * 8];
      for (int i = 0; i < N; i++) {
        uint64_t x = (uint64_t)(i % 5) - 2, y = (uint64_t)(i % 3) - 1;
        if (d->bits == 1) x &= 1, y &= 1, a[i] = (char)x, b[i] = (char)y;
        else tu_put_int(d, a, i, x), tu_put_int(d, b, i, y);
      }
      snprintf(body, sizeof body,
               "stablehlo.compare %s, %%a, %%b, %s : (tensor<%dx%s>, "
               "tensor<%dx%s>) -> tensor<%dxi1>",
               dirs[dir], d->is_signed ? "SIGNED" : "UNSIGNED", N, d->mlir, N,
               d->mlir, N);
      run_ew(C(state), d, "i1", body, a, b, &o);
      for (int i = 0; i < N; i++) {
        uint64_t x = d->bits == 1 ? (uint8_t)a[i] : geti(d, a, i);
        uint64_t y = d->bits == 1 ? (uint8_t)b[i] : geti(d, b, i);
        int lt = d->is_signed ? (int64_t)x < (int64_t)y : x < y;
        want[i] = (uint8_t)tu_cmp_dir(dir, lt, x == y);
      }
      snprintf(what, sizeof what, "%s %s", dirs[dir], d->mlir);
      check_cmp(what, o.data[0], want);
      tu_out_free(&o);
    }
    /* complex: lexicographic (real, then imaginary) */
    for (int w = 0; w < 2; w++) {
      const tu_dtinfo *d = tu_dt(w ? XRT_C128 : XRT_C64);
      double ar[N], ai[N], br[N], bi[N];
      char a[N * 16], b[N * 16];
      for (int i = 0; i < N; i++) {
        ar[i] = i % 3, ai[i] = (i / 3) % 3, br[i] = (i / 2) % 3, bi[i] = 1;
        if (w) {
          double va[2] = {ar[i], ai[i]}, vb[2] = {br[i], bi[i]};
          memcpy(a + 16 * i, va, 16), memcpy(b + 16 * i, vb, 16);
        } else {
          float va[2] = {(float)ar[i], (float)ai[i]};
          float vb[2] = {(float)br[i], (float)bi[i]};
          memcpy(a + 8 * i, va, 8), memcpy(b + 8 * i, vb, 8);
        }
      }
      snprintf(body, sizeof body,
               "stablehlo.compare %s, %%a, %%b, FLOAT : (tensor<%dx%s>, "
               "tensor<%dx%s>) -> tensor<%dxi1>",
               dirs[dir], N, d->mlir, N, d->mlir, N);
      run_ew(C(state), d, "i1", body, a, b, &o);
      for (int i = 0; i < N; i++) {
        int lt = ar[i] < br[i] || (ar[i] == br[i] && ai[i] < bi[i]);
        int eq = ar[i] == br[i] && ai[i] == bi[i];
        want[i] = (uint8_t)tu_cmp_dir(dir, lt, eq);
      }
      snprintf(what, sizeof what, "%s %s", dirs[dir], d->mlir);
      check_cmp(what, o.data[0], want);
      tu_out_free(&o);
    }
  }
}

/* compare_type must fit the elements: SIGNED on floats, TOTALORDER on
 * integers are reported at compile. */
static void test_compare_type_mismatch(void **state) {
  static const char *const cases[][2] = {
      {"f32", "SIGNED"}, {"i32", "TOTALORDER"}, {"ui8", "SIGNED"},
      {"i16", "FLOAT"},
  };
  for (size_t k = 0; k < TU_COUNT(cases); k++) {
    char prog[512], want[128];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<4x%s>) -> tensor<4xi1> {\n"
             "  %%0 = stablehlo.compare LT, %%a, %%a, %s : (tensor<4x%s>, "
             "tensor<4x%s>) -> tensor<4xi1>\n  func.return %%0 : tensor<4xi1>\n}\n",
             cases[k][0], cases[k][1], cases[k][0], cases[k][0]);
    snprintf(want, sizeof want,
             "stablehlo.compare is not implemented for tensor<4x%s> with this "
             "compare_type", cases[k][0]);
    xrt_executable *exe = NULL;
    assert_int_equal(xrt_compile(C(state), prog, strlen(prog), NULL, &exe),
                     XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(xrt_last_error(), want);
    assert_null(exe);
  }
}

/* real of a real float is the value, imag +0. */
static void test_real_imag_of_real(void **state) {
  for (size_t t = 0; t < TU_COUNT(fdts); t++) {
    const tu_dtinfo *d = tu_dt(fdts[t]);
    char a[N * 8], b[N * 8];
    for (int i = 0; i < N; i++)
      tu_put(d, a, i, fa[i], 0), tu_put(d, b, i, 0, 0);
    for (int im = 0; im < 2; im++) {
      char body[128];
      snprintf(body, sizeof body, "stablehlo.%s %%a : (tensor<%dx%s>) -> tensor<%dx%s>",
               im ? "imag" : "real", N, d->mlir, N, d->mlir);
      tu_out o;
      run_ew(C(state), d, d->mlir, body, a, b, &o);
      assert_int_equal(o.bytes[0], N * d->size);
      for (int i = 0; i < N; i++) {
        double g = tu_get_f(d, o.data[0], i), w = im ? 0.0 : tu_get_f(d, a, i);
        if (!(w != w ? g != g : g == w && signbit(g) == signbit(w)))
          fail_msg("%s %s [%d]: got %g want %g", im ? "imag" : "real",
                   d->mlir, i, g, w);
      }
      tu_out_free(&o);
    }
  }
}

/* The group's client, with fusion off (each op runs its own kernel). */
static int setup(void **state) {
  setenv("XRT_SIM_NO_FUSION", "1", 1);
  return tu_setup_client(state);
}

TU_MAIN(setup, tu_teardown_client, cmocka_unit_test(test_float_ops),
        cmocka_unit_test(test_pred_ops), cmocka_unit_test(test_int_ops),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_compare_type_mismatch),
        cmocka_unit_test(test_real_imag_of_real))
