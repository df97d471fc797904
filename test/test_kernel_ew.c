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
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
enum { N = 21 };

/* ---- element types ---- */

typedef struct {
  xrt_dtype dt;
  const char *mlir;
  size_t size;
  int bits, is_signed, is_float;
} dtinfo;

static const dtinfo fdts[] = {
    {XRT_F32, "f32", 4, 32, 1, 1},
    {XRT_F64, "f64", 8, 64, 1, 1},
    {XRT_F16, "f16", 2, 16, 1, 1},
    {XRT_BF16, "bf16", 2, 16, 1, 1},
};
static const dtinfo idts[] = {
    {XRT_S8, "i8", 1, 8, 1, 0},     {XRT_U8, "ui8", 1, 8, 0, 0},
    {XRT_S16, "i16", 2, 16, 1, 0},  {XRT_U16, "ui16", 2, 16, 0, 0},
    {XRT_S32, "i32", 4, 32, 1, 0},  {XRT_U32, "ui32", 4, 32, 0, 0},
    {XRT_S64, "i64", 8, 64, 1, 0},  {XRT_U64, "ui64", 8, 64, 0, 0},
    {XRT_S2, "i2", 1, 2, 1, 0},     {XRT_U2, "ui2", 1, 2, 0, 0},
    {XRT_S4, "i4", 1, 4, 1, 0},     {XRT_U4, "ui4", 1, 4, 0, 0},
};

/* x wrapped to the width of d: sign-extended when signed, else
 * zero-extended (as a uint64 bit pattern). */
static uint64_t wrapi(const dtinfo *d, uint64_t x) {
  if (d->bits == 64) return x;
  uint64_t m = (1ull << d->bits) - 1;
  x &= m;
  if (d->is_signed && (x >> (d->bits - 1))) x |= ~m;
  return x;
}

static void puti(const dtinfo *d, void *buf, int i, uint64_t v) {
  char *p = (char *)buf + (size_t)i * d->size;
  v = wrapi(d, v);
  switch (d->size) {
  case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
  default: memcpy(p, &v, 8); break;
  }
}

static uint64_t geti(const dtinfo *d, const void *buf, int i) {
  const char *p = (const char *)buf + (size_t)i * d->size;
  uint64_t v = 0;
  switch (d->size) {
  case 1: { uint8_t x; memcpy(&x, p, 1); v = x; break; }
  case 2: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
  case 4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
  default: memcpy(&v, p, 8); break;
  }
  return wrapi(d, v);
}

static void putf(const dtinfo *d, void *buf, int i, double v) {
  char *p = (char *)buf + (size_t)i * d->size;
  switch (d->dt) {
  case XRT_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
  case XRT_F64: memcpy(p, &v, 8); break;
  case XRT_F16: { uint16_t h = xrt_f64_to_f16(v); memcpy(p, &h, 2); break; }
  default: { uint16_t h = xrt_f64_to_bf16(v); memcpy(p, &h, 2); break; }
  }
}

static double getf(const dtinfo *d, const void *buf, int i) {
  const char *p = (const char *)buf + (size_t)i * d->size;
  uint16_t h;
  switch (d->dt) {
  case XRT_F32: { float f; memcpy(&f, p, 4); return f; }
  case XRT_F64: { double x; memcpy(&x, p, 8); return x; }
  case XRT_F16: memcpy(&h, p, 2); return xrt_f16_to_f32(h);
  default: memcpy(&h, p, 2); return xrt_bf16_to_f32(h);
  }
}

/* Runs "%0 = <body>" on inputs a (and b) of type d (N elements each) and
 * returns the output (free with tu_out_free). */
static void run_ew(xrt_client *c, const dtinfo *d, const char *rtype,
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

typedef enum {
  F_ADD, F_SUB, F_MUL, F_DIV, F_REM, F_MAX, F_MIN, F_POW, F_ATAN2,
  F_NEG, F_ABS, F_SIGN, F_SQRT, F_FLOOR, F_CEIL, F_RAFZ, F_REVEN,
  F_EXP, F_LOG, F_RSQRT, F_TANH, F_LOGISTIC, F_SIN, F_COS, F_TAN, F_EXPM1,
  F_LOG1P, F_CBRT, F_COUNT
} fop;

static const struct {
  const char *name;
  int binary, transcendental;
} fops[F_COUNT] = {
    [F_ADD] = {"add", 1, 0},          [F_SUB] = {"subtract", 1, 0},
    [F_MUL] = {"multiply", 1, 0},     [F_DIV] = {"divide", 1, 0},
    [F_REM] = {"remainder", 1, 0},    [F_MAX] = {"maximum", 1, 0},
    [F_MIN] = {"minimum", 1, 0},      [F_POW] = {"power", 1, 1},
    [F_ATAN2] = {"atan2", 1, 1},      [F_NEG] = {"negate", 0, 0},
    [F_ABS] = {"abs", 0, 0},          [F_SIGN] = {"sign", 0, 0},
    [F_SQRT] = {"sqrt", 0, 0},        [F_FLOOR] = {"floor", 0, 0},
    [F_CEIL] = {"ceil", 0, 0},        [F_RAFZ] = {"round_nearest_afz", 0, 0},
    [F_REVEN] = {"round_nearest_even", 0, 0},
    [F_EXP] = {"exponential", 0, 1},  [F_LOG] = {"log", 0, 1},
    [F_RSQRT] = {"rsqrt", 0, 1},      [F_TANH] = {"tanh", 0, 1},
    [F_LOGISTIC] = {"logistic", 0, 1}, [F_SIN] = {"sine", 0, 1},
    [F_COS] = {"cosine", 0, 1},       [F_TAN] = {"tan", 0, 1},
    [F_EXPM1] = {"exponential_minus_one", 0, 1},
    [F_LOG1P] = {"log_plus_one", 0, 1}, [F_CBRT] = {"cbrt", 0, 1},
};

/* IEEE maximum / minimum: NaN wins, -0 < +0. */
static double ref_max(double x, double y, int is_max) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == y) return (signbit(x) != 0) == is_max ? y : x;
  return (x > y) == is_max ? x : y;
}

/* Round half to even; a zero result keeps the sign of x. */
static double ref_reven(double x) {
  double f = floor(x), d = x - f, r;
  if (d > 0.5) r = f + 1;
  else if (d < 0.5) r = f;
  else r = fmod(f, 2) == 0 ? f : f + 1;
  return r == 0 ? copysign(0.0, x) : r;
}

static double fref(fop op, double x, double y) {
  switch (op) {
  case F_ADD: return x + y;
  case F_SUB: return x - y;
  case F_MUL: return x * y;
  case F_DIV: return x / y;
  case F_REM: return fmod(x, y);
  case F_MAX: return ref_max(x, y, 1);
  case F_MIN: return ref_max(x, y, 0);
  case F_POW: return pow(x, y);
  case F_ATAN2: return atan2(x, y);
  case F_NEG: return -x;
  case F_ABS: return fabs(x);
  case F_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
  case F_SQRT: return sqrt(x);
  case F_FLOOR: return floor(x);
  case F_CEIL: return ceil(x);
  case F_RAFZ: return round(x);
  case F_REVEN: return x != x || isinf(x) ? x : ref_reven(x);
  case F_EXP: return exp(x);
  case F_LOG: return log(x);
  case F_RSQRT: return 1 / sqrt(x);
  case F_TANH: return tanh(x);
  case F_LOGISTIC: return 1 / (1 + exp(-x));
  case F_SIN: return sin(x);
  case F_COS: return cos(x);
  case F_TAN: return tan(x);
  case F_EXPM1: return expm1(x);
  case F_LOG1P: return log1p(x);
  case F_CBRT: return cbrt(x);
  default: return 0;
  }
}

static const double fa[N] = {0,   -0.0, 1,    -1,  0.5,   -0.5,     1.5,
                             2.5, -2.5, 3,    100, -7.25, INFINITY, -INFINITY,
                             NAN, 0.1,  1e-3, 2,   -3.75, 7,        0.75};
static const double fb[N] = {1,   2,     -0.0, 0.0,      0.25, 3,   -1.5,
                             2.5, 2,     -INFINITY, 7, 0.5,  INFINITY, 1,
                             2,   NAN,   -3,   0.0,      1.25, -7,  0.75};

/* got vs want in type d: NaN matches NaN, zeros match in sign, else
 * equal (arithmetic) or within 2 ulps of d (transcendental). */
static void check_f(const dtinfo *d, double got, double want, int loose,
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
    const dtinfo *d = &fdts[t];
    char a[N * 8], b[N * 8];
    double xa[N], xb[N];
    for (int i = 0; i < N; i++) {
      putf(d, a, i, fa[i]), putf(d, b, i, fb[i]);
      xa[i] = getf(d, a, i), xb[i] = getf(d, b, i); /* as rounded to d */
    }
    for (int op = 0; op < F_COUNT; op++) {
      char body[256];
      if (fops[op].binary)
        snprintf(body, sizeof body, "stablehlo.%s %%a, %%b : tensor<%dx%s>",
                 fops[op].name, N, d->mlir);
      else
        snprintf(body, sizeof body, "stablehlo.%s %%a : tensor<%dx%s>",
                 fops[op].name, N, d->mlir);
      tu_out o;
      run_ew(C(state), d, d->mlir, body, a, b, &o);
      assert_int_equal(o.bytes[0], N * d->size);
      for (int i = 0; i < N; i++) {
        char w[8];
        putf(d, w, 0, fref((fop)op, xa[i], xb[i])); /* one rounding */
        check_f(d, getf(d, o.data[0], i), getf(d, w, 0),
                fops[op].transcendental, fops[op].name, i);
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
  static const dtinfo p = {XRT_PRED, "i1", 1, 1, 0, 0};
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
    run_ew(C(state), &p, "i1", body, a, b, &o);
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
static uint64_t iref(const dtinfo *d, iop op, uint64_t a, uint64_t b) {
  int w = d->bits, sg = d->is_signed;
  uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
  int64_t sa = (int64_t)a, sb = (int64_t)b;
  uint64_t ua = a & mask, ub = b & mask; /* unsigned views */
  switch (op) {
  case I_ADD: return wrapi(d, a + b);
  case I_SUB: return wrapi(d, a - b);
  case I_MUL: return wrapi(d, a * b);
  case I_DIV:
    if (sg) {
      if (sb == 0) return wrapi(d, ~0ull);
      if (sb == -1) return wrapi(d, 0 - a);
      return wrapi(d, (uint64_t)(sa / sb));
    }
    return ub == 0 ? wrapi(d, ~0ull) : ua / ub;
  case I_REM:
    if (sg) {
      if (sb == 0) return a;
      if (sb == -1) return 0;
      return wrapi(d, (uint64_t)(sa % sb));
    }
    return ub == 0 ? ua : ua % ub;
  case I_MAX: return sg ? (sa > sb ? a : b) : (ua > ub ? a : b);
  case I_MIN: return sg ? (sa < sb ? a : b) : (ua < ub ? a : b);
  case I_POW: {
    if (sg && sb < 0)
      return sa == 1 ? 1 : sa == -1 ? wrapi(d, (sb & 1) ? ~0ull : 1) : 0;
    uint64_t r = 1, e = sg ? (uint64_t)sb : ub;
    for (uint64_t k = 0; k < e && k < 200; k++) r *= a;
    if (e >= 200) { /* only 0, 1 and -1 bases appear with big exponents */
      r = 1;
      for (uint64_t base = a; e; e >>= 1, base *= base)
        if (e & 1) r *= base;
    }
    return wrapi(d, r);
  }
  case I_AND: return a & b;
  case I_OR: return a | b;
  case I_XOR: return a ^ b;
  case I_SHL: return ub >= (uint64_t)w ? 0 : wrapi(d, ua << ub);
  case I_SHRL: return ub >= (uint64_t)w ? 0 : wrapi(d, ua >> ub);
  case I_SHRA: {
    int neg = (ua >> (w - 1)) & 1;
    if (ub >= (uint64_t)w) return neg ? wrapi(d, ~0ull) : 0;
    uint64_t r = ua >> ub;
    if (neg && ub) r |= mask & ~(mask >> ub);
    return wrapi(d, r);
  }
  case I_NEG: return wrapi(d, 0 - a);
  case I_ABS: return sg && sa < 0 ? wrapi(d, 0 - a) : a;
  case I_SIGN:
    return sg ? wrapi(d, (uint64_t)(int64_t)((sa > 0) - (sa < 0))) : ua != 0;
  case I_NOT: return wrapi(d, ~a);
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
    if (sg) return wrapi(d, (uint64_t)(((i128)sa * (i128)sb) >> w));
    return wrapi(d, (uint64_t)(((u128)ua * (u128)ub) >> w));
  default: return 0;
  }
}

static void test_int_ops(void **state) {
  for (size_t t = 0; t < TU_COUNT(idts); t++) {
    const dtinfo *d = &idts[t];
    int w = d->bits;
    uint64_t mn = d->is_signed ? wrapi(d, 1ull << (w - 1)) : 0;
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
      puti(d, a, i, av[i]), puti(d, b, i, bv[i]);
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
        uint64_t want = wrapi(d, iref(d, (iop)op, xa[i], xb[i]));
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

static int cmp_dir(int dir, int lt, int eq) {
  switch (dir) {
  case 0: return eq;
  case 1: return !eq;
  case 2: return !lt;
  case 3: return !lt && !eq;
  case 4: return lt || eq;
  default: return lt;
  }
}

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
      const dtinfo *d = &fdts[t];
      char a[N * 8], b[N * 8];
      for (int i = 0; i < N; i++) putf(d, a, i, fa[i]), putf(d, b, i, fb[i]);
      for (int tot = 0; tot < 2; tot++) {
        snprintf(body, sizeof body,
                 "stablehlo.compare %s, %%a, %%b, %s : (tensor<%dx%s>, "
                 "tensor<%dx%s>) -> tensor<%dxi1>",
                 dirs[dir], tot ? "TOTALORDER" : "FLOAT", N, d->mlir, N,
                 d->mlir, N);
        run_ew(C(state), d, "i1", body, a, b, &o);
        for (int i = 0; i < N; i++) {
          double x = getf(d, a, i), y = getf(d, b, i);
          if (tot) {
            int64_t kx = tot_key(x), ky = tot_key(y);
            want[i] = (uint8_t)cmp_dir(dir, kx < ky, kx == ky);
          } else if (x != x || y != y) {
            want[i] = dir == 1; /* unordered: only NE holds */
          } else {
            want[i] = (uint8_t)cmp_dir(dir, x < y, x == y);
          }
        }
        snprintf(what, sizeof what, "%s %s %d", dirs[dir], d->mlir, tot);
        check_cmp(what, o.data[0], want);
        tu_out_free(&o);
      }
    }
    /* integers (and i1, unsigned) */
    for (size_t t = 0; t <= TU_COUNT(idts); t++) {
      static const dtinfo p = {XRT_PRED, "i1", 1, 1, 0, 0};
      const dtinfo *d = t < TU_COUNT(idts) ? &idts[t] : &p;
      char a[N * 8], b[N * 8];
      for (int i = 0; i < N; i++) {
        uint64_t x = (uint64_t)(i % 5) - 2, y = (uint64_t)(i % 3) - 1;
        if (d->bits == 1) x &= 1, y &= 1, a[i] = (char)x, b[i] = (char)y;
        else puti(d, a, i, x), puti(d, b, i, y);
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
        want[i] = (uint8_t)cmp_dir(dir, lt, x == y);
      }
      snprintf(what, sizeof what, "%s %s", dirs[dir], d->mlir);
      check_cmp(what, o.data[0], want);
      tu_out_free(&o);
    }
    /* complex: lexicographic (real, then imaginary) */
    for (int w = 0; w < 2; w++) {
      static const dtinfo c64 = {XRT_C64, "complex<f32>", 8, 64, 1, 1};
      static const dtinfo c128 = {XRT_C128, "complex<f64>", 16, 128, 1, 1};
      const dtinfo *d = w ? &c128 : &c64;
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
        want[i] = (uint8_t)cmp_dir(dir, lt, eq);
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
    const dtinfo *d = &fdts[t];
    char a[N * 8], b[N * 8];
    for (int i = 0; i < N; i++) putf(d, a, i, fa[i]), putf(d, b, i, 0);
    for (int im = 0; im < 2; im++) {
      char body[128];
      snprintf(body, sizeof body, "stablehlo.%s %%a : (tensor<%dx%s>) -> tensor<%dx%s>",
               im ? "imag" : "real", N, d->mlir, N, d->mlir);
      tu_out o;
      run_ew(C(state), d, d->mlir, body, a, b, &o);
      assert_int_equal(o.bytes[0], N * d->size);
      for (int i = 0; i < N; i++) {
        double g = getf(d, o.data[0], i), w = im ? 0.0 : getf(d, a, i);
        if (!(w != w ? g != g : g == w && signbit(g) == signbit(w)))
          fail_msg("%s %s [%d]: got %g want %g", im ? "imag" : "real",
                   d->mlir, i, g, w);
      }
      tu_out_free(&o);
    }
  }
}

int main(void) {
  setenv("XRT_SIM_NO_FUSION", "1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_ops),
      cmocka_unit_test(test_pred_ops),
      cmocka_unit_test(test_int_ops),
      cmocka_unit_test(test_compare),
      cmocka_unit_test(test_compare_type_mismatch),
      cmocka_unit_test(test_real_imag_of_real),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
