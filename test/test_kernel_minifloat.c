/*
 * test_kernel_minifloat.c - the simulator's f8/f6/f4 kernels
 * (src/sim/minifloat.c): every float op, is_finite, compare (FLOAT and
 * TOTALORDER, every direction) and conversions to and from the eleven
 * small float types, over every bit pattern of each type; and
 * reduce_precision on f16, bf16, f32, f64 and the small floats; chlo.zeta
 * and chlo.polygamma (the binary CHLO kernels) at known values.
 *
 * The reference decodes patterns with a decoder written here from the
 * formats' definitions (IEEE-like with infinities, FN: no infinity and an
 * all-ones NaN, FNUZ: no -0 and NaN at 0x80, f6/f4: neither, E8M0:
 * unsigned powers of two), computes in double and rounds to nearest even
 * over the type's values; out of range goes to infinity, NaN (FN, FNUZ)
 * or the largest value (f6/f4), NaN into f6/f4 gives +0.  E8M0 results
 * are checked where exact (it has no zero and no sign to round to).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))

enum { K_IEEE, K_FN, K_FNUZ, K_FINITE, K_E8M0 };

typedef struct {
  xrt_dtype dt;
  const char *mlir;
  int eb, mb, bias, kind;
} mfmt;

static const mfmt fmts[] = {
    {XRT_F8E4M3FN, "f8E4M3FN", 4, 3, 7, K_FN},
    {XRT_F8E5M2, "f8E5M2", 5, 2, 15, K_IEEE},
    {XRT_F8E4M3FNUZ, "f8E4M3FNUZ", 4, 3, 8, K_FNUZ},
    {XRT_F8E5M2FNUZ, "f8E5M2FNUZ", 5, 2, 16, K_FNUZ},
    {XRT_F8E4M3B11FNUZ, "f8E4M3B11FNUZ", 4, 3, 11, K_FNUZ},
    {XRT_F8E3M4, "f8E3M4", 3, 4, 3, K_IEEE},
    {XRT_F8E4M3, "f8E4M3", 4, 3, 7, K_IEEE},
    {XRT_F8E8M0FNU, "f8E8M0FNU", 8, 0, 127, K_E8M0},
    {XRT_F6E2M3FN, "f6E2M3FN", 2, 3, 1, K_FINITE},
    {XRT_F6E3M2FN, "f6E3M2FN", 3, 2, 3, K_FINITE},
    {XRT_F4E2M1FN, "f4E2M1FN", 2, 1, 1, K_FINITE},
};

static int npat(const mfmt *f) {
  return f->kind == K_E8M0 ? 256 : 1 << (1 + f->eb + f->mb);
}

/* The value of pattern b. */
static double dec(const mfmt *f, unsigned b) {
  if (f->kind == K_E8M0) return b == 0xff ? NAN : ldexp(1, (int)b - 127);
  unsigned mw = (unsigned)(f->eb + f->mb), sign = (b >> mw) & 1;
  unsigned e = (b >> f->mb) & ((1u << f->eb) - 1), m = b & ((1u << f->mb) - 1);
  unsigned emax = (1u << f->eb) - 1;
  if (f->kind == K_FNUZ && b == 1u << mw) return NAN;
  if (f->kind == K_FN && e == emax && m == (1u << f->mb) - 1) return NAN;
  if (f->kind == K_IEEE && e == emax)
    return m ? NAN : sign ? -INFINITY : INFINITY;
  double v = e ? ldexp(1.0 + ldexp(m, -f->mb), (int)e - f->bias)
               : ldexp(m, 1 - f->bias - f->mb);
  return sign ? -v : v;
}

/* The largest finite value. */
static double maxval(const mfmt *f) {
  double mx = 0;
  for (int b = 0; b < npat(f); b++) {
    double v = dec(f, (unsigned)b);
    if (isfinite(v) && v > mx) mx = v;
  }
  return mx;
}

/* A NaN pattern of f (-1: none). */
static int nanpat(const mfmt *f) {
  for (int b = 0; b < npat(f); b++)
    if (dec(f, (unsigned)b) != dec(f, (unsigned)b)) return b;
  return -1;
}

/* Every value of f and its largest finite one, computed once per type
 * (the search below runs for every checked element). */
static const double *values_of(const mfmt *f, double *mx) {
  static double tab[TU_COUNT(fmts)][256], mxs[TU_COUNT(fmts)];
  static int done[TU_COUNT(fmts)];
  size_t k = (size_t)(f - fmts);
  if (!done[k]) {
    for (int b = 0; b < npat(f); b++) tab[k][b] = dec(f, (unsigned)b);
    mxs[k] = maxval(f);
    done[k] = 1;
  }
  *mx = mxs[k];
  return tab[k];
}

/* d rounded to f by the rules above; -1: not checked (E8M0 inexact). */
static int enc(const mfmt *f, double d) {
  int n = npat(f), best = -1;
  double mx;
  const double *vals = values_of(f, &mx);
  if (d != d) return f->kind == K_FINITE ? 0 : nanpat(f);
  if (f->kind == K_E8M0) {
    for (int b = 0; b < n; b++)
      if (vals[b] == d) return b;
    return -1;
  }
  double ad = fabs(d);
  /* the next step beyond max in max's binade decides overflow */
  double step = ldexp(1, (int)floor(log2(mx)) - f->mb);
  if (ad >= mx + step / 2 || isinf(d)) {
    if (f->kind == K_FINITE) ad = mx;
    else if (f->kind == K_IEEE) return enc(f, 0) | (d < 0 ? 1 << (f->eb + f->mb) : 0) | (((1 << f->eb) - 1) << f->mb);
    else return nanpat(f);
  }
  double be = INFINITY;
  for (int b = 0; b < n; b++) {
    double v = vals[b];
    /* same sign; FNUZ's one zero serves both signs */
    if (!isfinite(v) ||
        ((signbit(v) != 0) != (d < 0 || (d == 0 && signbit(d))) &&
         !(v == 0 && f->kind == K_FNUZ)))
      continue;
    double e = fabs(fabs(v) - ad);
    if (e < be || (e == be && !(b & 1) && (best & 1))) be = e, best = b;
  }
  if (best < 0) best = 0; /* -0 in FNUZ: +0 */
  return best;
}

static void run(xrt_client *c, const char *prog, int nin, const tu_in *in,
                tu_out *o) {
  xrt_status st = tu_run(c, prog, nin, in, o);
  if (st != XRT_OK) fail_msg("%s: %s\n%s", xrt_strerror(st), tu_msg, prog);
}

/* Inputs in[0] and in[1]: a = every pattern, b = the patterns in another
 * order; their count. */
static int inputs(const mfmt *f, uint8_t *a, uint8_t *b, tu_in *in) {
  int n = npat(f);
  for (int i = 0; i < n; i++)
    a[i] = (uint8_t)i, b[i] = (uint8_t)((i * 37 + 11) % n);
  in[0] = (tu_in){TU_SHAPE(f->dt, n), a};
  in[1] = (tu_in){TU_SHAPE(f->dt, n), b};
  return n;
}

/* got pattern vs reference pattern want (-1: unchecked): NaNs match any
 * NaN. */
static void check_pat(const mfmt *f, int got, int want, const char *what,
                      int i, unsigned x, unsigned y) {
  if (want < 0 || got == want) return;
  double g = dec(f, (unsigned)got), w = dec(f, (unsigned)want);
  if (g != g && w != w) return;
  fail_msg("%s %s [%d] (0x%x, 0x%x): got 0x%x (%g) want 0x%x (%g)", what,
           f->mlir, i, x, y, (unsigned)got, g, (unsigned)want, w);
}

static void test_mf_ops(void **state) {
  for (size_t t = 0; t < TU_COUNT(fmts); t++) {
    const mfmt *f = &fmts[t];
    uint8_t a[256], b[256];
    tu_in in[2];
    int n = inputs(f, a, b, in);
    for (int k = 0; k < TU_F_COUNT; k++) {
      char prog[1024];
      snprintf(prog, sizeof prog,
               "func.func @main(%%a: tensor<%dx%s>, %%b: tensor<%dx%s>) -> "
               "tensor<%dx%s> {\n  %%0 = stablehlo.%s %%a%s : tensor<%dx%s>\n"
               "  func.return %%0 : tensor<%dx%s>\n}\n",
               n, f->mlir, n, f->mlir, n, f->mlir, tu_fop(k)->name,
               tu_fop(k)->binary ? ", %b" : "", n, f->mlir, n, f->mlir);
      tu_out o;
      run(C(state), prog, 2, in, &o);
      assert_int_equal(o.bytes[0], (size_t)n);
      for (int i = 0; i < n; i++) {
        int want = enc(f, tu_ref_fop(k, dec(f, a[i]), dec(f, b[i])));
        check_pat(f, ((uint8_t *)o.data[0])[i], want, tu_fop(k)->name, i, a[i],
                  b[i]);
      }
      tu_out_free(&o);
    }
  }
}

/* totalOrder rank of a pattern: sign-magnitude, negatives below. */
static int tot_key(const mfmt *f, unsigned b) {
  if (f->kind == K_E8M0) return (int)b;
  unsigned mw = (unsigned)(f->eb + f->mb), mag = b & ((1u << mw) - 1);
  return (b >> mw) & 1 ? -(int)mag - 1 : (int)mag;
}

static void test_mf_compare_isfinite(void **state) {
  static const char *const dirs[6] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (size_t t = 0; t < TU_COUNT(fmts); t++) {
    const mfmt *f = &fmts[t];
    uint8_t a[256], b[256];
    tu_in in[2];
    int n = inputs(f, a, b, in);
    for (int i = 0; i < n; i += 7) b[i] = a[i]; /* some equal pairs */
    /* FLOAT, then TOTALORDER: six compares and is_finite each */
    tu_out o;
    for (int half = 0; half < 2; half++) {
      char p2[4096];
      size_t l2 = (size_t)snprintf(
          p2, sizeof p2,
          "func.func @main(%%a: tensor<%dx%s>, %%b: tensor<%dx%s>) -> "
          "(tensor<%dxi1>, tensor<%dxi1>, tensor<%dxi1>, tensor<%dxi1>, "
          "tensor<%dxi1>, tensor<%dxi1>, tensor<%dxi1>) {\n",
          n, f->mlir, n, f->mlir, n, n, n, n, n, n, n);
      for (int r = 0; r < 6; r++)
        l2 += (size_t)snprintf(
            p2 + l2, sizeof p2 - l2,
            "  %%c%d = stablehlo.compare %s, %%a, %%b, %s : (tensor<%dx%s>, "
            "tensor<%dx%s>) -> tensor<%dxi1>\n",
            r, dirs[r], half ? "TOTALORDER" : "FLOAT", n, f->mlir, n, f->mlir,
            n);
      snprintf(p2 + l2, sizeof p2 - l2,
               "  %%f = stablehlo.is_finite %%a : (tensor<%dx%s>) -> "
               "tensor<%dxi1>\n"
               "  func.return %%c0, %%c1, %%c2, %%c3, %%c4, %%c5, %%f : "
               "tensor<%dxi1>, tensor<%dxi1>, tensor<%dxi1>, tensor<%dxi1>, "
               "tensor<%dxi1>, tensor<%dxi1>, tensor<%dxi1>\n}\n",
               n, f->mlir, n, n, n, n, n, n, n, n);
      run(C(state), p2, 2, in, &o);
      for (int r = 0; r < 6; r++)
        for (int i = 0; i < n; i++) {
          double x = dec(f, a[i]), y = dec(f, b[i]);
          int w;
          if (half) {
            int kx = tot_key(f, a[i]), ky = tot_key(f, b[i]);
            w = tu_cmp_dir(r, kx < ky, kx == ky);
          } else {
            w = x != x || y != y ? r == 1 : tu_cmp_dir(r, x < y, x == y);
          }
          if (((uint8_t *)o.data[r])[i] != w)
            fail_msg("%s %s %s [%d] (0x%x, 0x%x): got %d", f->mlir, dirs[r],
                     half ? "TOTALORDER" : "FLOAT", i, a[i], b[i],
                     ((uint8_t *)o.data[r])[i]);
        }
      for (int i = 0; i < n; i++)
        assert_int_equal(((uint8_t *)o.data[6])[i],
                         isfinite(dec(f, a[i])) ? 1 : 0);
      tu_out_free(&o);
    }
  }
}

/* Converts: small float -> f32, f64, f16, bf16, i32 (exact values only)
 * and small float -> every other small float; f32, f64, i32, u8, c64 ->
 * small float. */
static void test_mf_convert(void **state) {
  for (size_t t = 0; t < TU_COUNT(fmts); t++) {
    const mfmt *f = &fmts[t];
    uint8_t a[256], b[256];
    tu_in in[2];
    int n = inputs(f, a, b, in);
    char prog[2048];
    /* to the wide floats */
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<%dx%s>) -> (tensor<%dxf32>, "
             "tensor<%dxf64>, tensor<%dxf16>, tensor<%dxbf16>) {\n"
             "  %%0 = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dxf32>\n"
             "  %%1 = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dxf64>\n"
             "  %%2 = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dxf16>\n"
             "  %%3 = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dxbf16>\n"
             "  func.return %%0, %%1, %%2, %%3 : tensor<%dxf32>, tensor<%dxf64>, "
             "tensor<%dxf16>, tensor<%dxbf16>\n}\n",
             n, f->mlir, n, n, n, n, n, f->mlir, n, n, f->mlir, n, n, f->mlir,
             n, n, f->mlir, n, n, n, n, n);
    tu_out o;
    run(C(state), prog, 1, in, &o);
    for (int i = 0; i < n; i++) {
      double v = dec(f, a[i]);
      double g0 = ((float *)o.data[0])[i], g1 = ((double *)o.data[1])[i];
      double g2 = xrt_f16_to_f32(((uint16_t *)o.data[2])[i]);
      double g3 = xrt_bf16_to_f32(((uint16_t *)o.data[3])[i]);
      double gs[4] = {g0, g1, g2, g3};
      for (int k = 0; k < 4; k++) {
        double w = v;
        if (k == 2 && fabs(v) > 65504) w = v > 0 ? INFINITY : -INFINITY;
        if (k == 2 && v != 0 && fabs(v) < 0x1p-24) continue; /* f16 flush */
        if (k == 3 && (fabs(v) > 0x1.fep127 || (v != 0 && fabs(v) < 0x1p-133)))
          continue;
        if (v != v ? gs[k] == gs[k] : (gs[k] != w || signbit(gs[k]) != signbit(w)))
          fail_msg("%s -> wide %d [%d] 0x%x: got %g want %g", f->mlir, k, i,
                   a[i], gs[k], w);
      }
    }
    tu_out_free(&o);
    /* to every other small float */
    for (size_t u = 0; u < TU_COUNT(fmts); u++) {
      const mfmt *g = &fmts[u];
      snprintf(prog, sizeof prog,
               "func.func @main(%%a: tensor<%dx%s>) -> tensor<%dx%s> {\n"
               "  %%0 = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dx%s>\n"
               "  func.return %%0 : tensor<%dx%s>\n}\n",
               n, f->mlir, n, g->mlir, n, f->mlir, n, g->mlir, n, g->mlir);
      run(C(state), prog, 1, in, &o);
      for (int i = 0; i < n; i++)
        check_pat(g, ((uint8_t *)o.data[0])[i], enc(g, dec(f, a[i])),
                  "convert", i, a[i], (unsigned)t);
      tu_out_free(&o);
    }
    /* from f32, f64, i32, ui8 and complex<f32> */
    const int M = 24;
    float xf[24], xc[48];
    double xd[24];
    int32_t xi[24];
    uint8_t xu[24];
    for (int i = 0; i < M; i++) {
      double v = (i - 12) * 0.375 + (i % 3) * 0.0625;
      if (i == 0) v = NAN;
      if (i == 1) v = INFINITY;
      if (i == 2) v = -1e30;
      if (i == 3) v = 300;
      if (i == 4) v = -0.0;
      xf[i] = (float)v, xd[i] = v, xc[2 * i] = (float)v, xc[2 * i + 1] = 5;
      xi[i] = (int32_t)((i - 12) * 3 + (i == 5 ? 1000 : 0));
      xu[i] = (uint8_t)(i * 11);
    }
    tu_in ins[5] = {{TU_SHAPE(XRT_F32, M), xf}, {TU_SHAPE(XRT_F64, M), xd},
                    {TU_SHAPE(XRT_S32, M), xi}, {TU_SHAPE(XRT_U8, M), xu},
                    {TU_SHAPE(XRT_C64, M), xc}};
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<24xf32>, %%b: tensor<24xf64>, "
             "%%c: tensor<24xi32>, %%d: tensor<24xui8>, %%e: tensor<24xcomplex<f32>>) -> "
             "(tensor<24x%s>, tensor<24x%s>, tensor<24x%s>, tensor<24x%s>, tensor<24x%s>) {\n"
             "  %%0 = stablehlo.convert %%a : (tensor<24xf32>) -> tensor<24x%s>\n"
             "  %%1 = stablehlo.convert %%b : (tensor<24xf64>) -> tensor<24x%s>\n"
             "  %%2 = stablehlo.convert %%c : (tensor<24xi32>) -> tensor<24x%s>\n"
             "  %%3 = stablehlo.convert %%d : (tensor<24xui8>) -> tensor<24x%s>\n"
             "  %%4 = stablehlo.convert %%e : (tensor<24xcomplex<f32>>) -> tensor<24x%s>\n"
             "  func.return %%0, %%1, %%2, %%3, %%4 : tensor<24x%s>, tensor<24x%s>, "
             "tensor<24x%s>, tensor<24x%s>, tensor<24x%s>\n}\n",
             f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir,
             f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir,
             f->mlir);
    run(C(state), prog, 5, ins, &o);
    for (int i = 0; i < M; i++) {
      check_pat(f, ((uint8_t *)o.data[0])[i], enc(f, xf[i]), "from f32", i, 0, 0);
      check_pat(f, ((uint8_t *)o.data[1])[i], enc(f, xd[i]), "from f64", i, 0, 0);
      check_pat(f, ((uint8_t *)o.data[2])[i], enc(f, xi[i]), "from i32", i, 0, 0);
      check_pat(f, ((uint8_t *)o.data[3])[i], enc(f, xu[i]), "from ui8", i, 0, 0);
      check_pat(f, ((uint8_t *)o.data[4])[i], enc(f, xf[i]), "from c64", i, 0, 0);
    }
    tu_out_free(&o);
  }
}

/* reduce_precision to e exponent and m mantissa bits, by value: mantissa
 * rounded to nearest even, then out-of-range exponents to inf / signed 0.
 * x normal or zero / inf / NaN. */
static double rp_ref(double x, int e, int m) {
  if (x != x) return m > 0 ? x : INFINITY;
  if (x == 0 || isinf(x)) return x;
  int ex;
  double fr = frexp(fabs(x), &ex); /* |x| = fr * 2^ex, fr in [0.5, 1) */
  double r = ldexp(nearbyint(ldexp(fr, m + 1)), ex - m - 1);
  frexp(r, &ex);
  int E = ex - 1, emax = (1 << (e - 1)) - 1, emin = 1 - emax;
  if (E > emax) r = INFINITY;
  else if (E < emin) r = 0;
  return x < 0 ? -r : r;
}

static void test_reduce_precision(void **state) {
  const int N = 16;
  double v[16] = {1.0,  1.0625, 1.09375, 1.03125, -2.5, 1e10,  -3e-8, 0.0,
                  -0.0, INFINITY, NAN,   65519, 1.9999, 3.75, 100.3, 0.1};
  float vf[16];
  uint16_t vh[16], vb[16];
  for (int i = 0; i < N; i++)
    vf[i] = (float)v[i], vh[i] = xrt_f64_to_f16(v[i]), vb[i] = xrt_f64_to_bf16(v[i]);
  const int em[][2] = {{5, 2}, {8, 3}, {4, 0}, {3, 5}, {11, 52}, {8, 23}};
  tu_in in[4] = {{TU_SHAPE(XRT_F32, 16), vf}, {TU_SHAPE(XRT_F64, 16), v},
                 {TU_SHAPE(XRT_F16, 16), vh}, {TU_SHAPE(XRT_BF16, 16), vb}};
  for (size_t k = 0; k < TU_COUNT(em); k++) {
    int e = em[k][0], m = em[k][1];
    char prog[2048];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<16xf32>, %%b: tensor<16xf64>, "
             "%%c: tensor<16xf16>, %%d: tensor<16xbf16>) -> (tensor<16xf32>, "
             "tensor<16xf64>, tensor<16xf16>, tensor<16xbf16>) {\n"
             "  %%0 = stablehlo.reduce_precision %%a, format = e%dm%d : tensor<16xf32>\n"
             "  %%1 = stablehlo.reduce_precision %%b, format = e%dm%d : tensor<16xf64>\n"
             "  %%2 = stablehlo.reduce_precision %%c, format = e%dm%d : tensor<16xf16>\n"
             "  %%3 = stablehlo.reduce_precision %%d, format = e%dm%d : tensor<16xbf16>\n"
             "  func.return %%0, %%1, %%2, %%3 : tensor<16xf32>, tensor<16xf64>, "
             "tensor<16xf16>, tensor<16xbf16>\n}\n",
             e, m, e, m, e, m, e, m);
    tu_out o;
    run(C(state), prog, 4, in, &o);
    for (int i = 0; i < N; i++) {
      double src[4] = {vf[i], v[i], xrt_f16_to_f32(vh[i]), xrt_bf16_to_f32(vb[i])};
      double got[4] = {((float *)o.data[0])[i], ((double *)o.data[1])[i],
                       xrt_f16_to_f32(((uint16_t *)o.data[2])[i]),
                       xrt_bf16_to_f32(((uint16_t *)o.data[3])[i])};
      const int se[4] = {8, 11, 5, 8}, sm[4] = {23, 52, 10, 7};
      for (int s = 0; s < 4; s++) {
        double x = src[s];
        /* skip source subnormals: the recipe works on patterns */
        if (x != 0 && isfinite(x) && fabs(x) < ldexp(1, 2 - (1 << (se[s] - 1))))
          continue;
        double w = rp_ref(x, e < se[s] ? e : se[s], m < sm[s] ? m : sm[s]);
        if (w != w ? got[s] == got[s] : (got[s] != w || signbit(got[s]) != signbit(w)))
          fail_msg("e%dm%d src %d [%d] %.17g: got %.17g want %.17g", e, m, s,
                   i, x, got[s], w);
      }
    }
    tu_out_free(&o);
  }
  /* small floats: every pattern, by value through the format's own
   * rounding */
  for (size_t t = 0; t < TU_COUNT(fmts); t++) {
    const mfmt *f = &fmts[t];
    /* FNUZ biases are not the IEEE ones the bit recipe assumes */
    if (f->kind != K_IEEE && f->kind != K_FN) continue;
    uint8_t a[256], b[256];
    tu_in in[2];
    int n = inputs(f, a, b, in);
    char prog[1024];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<%dx%s>) -> tensor<%dx%s> {\n"
             "  %%0 = stablehlo.reduce_precision %%a, format = e%dm%d : tensor<%dx%s>\n"
             "  func.return %%0 : tensor<%dx%s>\n}\n",
             n, f->mlir, n, f->mlir, f->eb, f->mb > 0 ? f->mb - 1 : 0, n,
             f->mlir, n, f->mlir);
    tu_out o;
    run(C(state), prog, 1, in, &o);
    for (int i = 0; i < n; i++) {
      double x = dec(f, a[i]);
      unsigned e = (a[i] >> f->mb) & ((1u << f->eb) - 1);
      if (x != x || isinf(x) || (e == 0 && x != 0)) continue; /* subnormals */
      double w = rp_ref(x, f->eb, f->mb - 1);
      double g = dec(f, ((uint8_t *)o.data[0])[i]);
      if (isinf(w) && f->kind != K_IEEE) continue; /* formats without inf */
      if (g != w || signbit(g) != signbit(w))
        fail_msg("%s rp [%d] 0x%x: got %g want %g", f->mlir, i, a[i], g, w);
    }
    tu_out_free(&o);
  }
}

/* real of a small float is the value, imag +0 (pattern 0 in every type
 * but E8M0, which has no zero: it is not among these). */
static void test_mf_real_imag(void **state) {
  for (size_t t = 0; t < TU_COUNT(fmts); t++) {
    const mfmt *f = &fmts[t];
    if (f->kind == K_E8M0) continue;
    uint8_t a[256], b[256];
    tu_in in[2];
    int n = inputs(f, a, b, in);
    char prog[1024];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<%dx%s>) -> (tensor<%dx%s>, tensor<%dx%s>) {\n"
             "  %%0 = stablehlo.real %%a : (tensor<%dx%s>) -> tensor<%dx%s>\n"
             "  %%1 = stablehlo.imag %%a : (tensor<%dx%s>) -> tensor<%dx%s>\n"
             "  func.return %%0, %%1 : tensor<%dx%s>, tensor<%dx%s>\n}\n",
             n, f->mlir, n, f->mlir, n, f->mlir, n, f->mlir, n, f->mlir, n,
             f->mlir, n, f->mlir, n, f->mlir, n, f->mlir);
    tu_out o;
    run(C(state), prog, 1, in, &o);
    for (int i = 0; i < n; i++) {
      check_pat(f, ((uint8_t *)o.data[0])[i], a[i], "real", i, a[i], 0);
      check_pat(f, ((uint8_t *)o.data[1])[i], 0, "imag", i, a[i], 0);
    }
    tu_out_free(&o);
  }
}

/* chlo.zeta and chlo.polygamma on small floats: known values rounded once
 * to the type (zeta(2) = pi^2/6, zeta(4) = pi^4/90, zeta(3) =
 * 1.2020569031595942, psi(1) = -0.5772156649015329); the pole at x = 1
 * is infinity where the type has one, NaN in FN. */
static void test_mf_zeta_polygamma(void **state) {
  const double pi = 3.14159265358979323846, z3 = 1.2020569031595942;
  const double zx[6] = {2, 4, 2, 1, 3, 0.5}, zq[6] = {1, 1, 2, 1, 1, 1};
  const double zw[6] = {pi * pi / 6, pi * pi * pi * pi / 90, pi * pi / 6 - 1,
                        INFINITY, z3, NAN};
  const double pn[4] = {1, 0, 2, 1}, px[4] = {1, 1, 1, 2};
  const double pw[4] = {pi * pi / 6, -0.5772156649015329, -2 * z3,
                        pi * pi / 6 - 1};
  const size_t which[2] = {0, 1}; /* f8E4M3FN, f8E5M2 */
  for (int w = 0; w < 2; w++) {
    const mfmt *f = &fmts[which[w]];
    uint8_t a[6], b[6], c[4], d[4];
    for (int i = 0; i < 6; i++) a[i] = (uint8_t)enc(f, zx[i]), b[i] = (uint8_t)enc(f, zq[i]);
    for (int i = 0; i < 4; i++) c[i] = (uint8_t)enc(f, pn[i]), d[i] = (uint8_t)enc(f, px[i]);
    tu_in in[4] = {{TU_SHAPE(f->dt, 6), a}, {TU_SHAPE(f->dt, 6), b},
                   {TU_SHAPE(f->dt, 4), c}, {TU_SHAPE(f->dt, 4), d}};
    char prog[1024];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<6x%s>, %%b: tensor<6x%s>, %%c: tensor<4x%s>, %%d: tensor<4x%s>) -> (tensor<6x%s>, tensor<4x%s>) {\n"
             "  %%0 = chlo.zeta %%a, %%b : tensor<6x%s>, tensor<6x%s> -> tensor<6x%s>\n"
             "  %%1 = chlo.polygamma %%c, %%d : tensor<4x%s>, tensor<4x%s> -> tensor<4x%s>\n"
             "  func.return %%0, %%1 : tensor<6x%s>, tensor<4x%s>\n}\n",
             f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir,
             f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir, f->mlir);
    tu_out o;
    run(C(state), prog, 4, in, &o);
    for (int i = 0; i < 6; i++)
      check_pat(f, ((uint8_t *)o.data[0])[i], enc(f, zw[i]), "zeta", i, a[i], b[i]);
    for (int i = 0; i < 4; i++)
      check_pat(f, ((uint8_t *)o.data[1])[i], enc(f, pw[i]), "polygamma", i, c[i], d[i]);
    tu_out_free(&o);
  }
}

TU_MAIN(tu_setup_client, tu_teardown_client, cmocka_unit_test(test_mf_ops),
        cmocka_unit_test(test_mf_compare_isfinite),
        cmocka_unit_test(test_mf_convert),
        cmocka_unit_test(test_reduce_precision),
        cmocka_unit_test(test_mf_real_imag),
        cmocka_unit_test(test_mf_zeta_polygamma))
