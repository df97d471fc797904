/*
 * src/sim/minifloat.c - the simulator's kernels for the f8/f6/f4 families
 * (arithmetic, compare, convert to and from them) and reduce_precision.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- the f8/f6/f4 families ---- */

/* Every op decodes through a 256-entry table (exact in double), computes in
 * double and rounds once to the result type, as the interpreter's APFloat
 * arithmetic and mapWithUpcastToDouble do.  Values a format cannot hold
 * follow APFloat's convert: formats with infinities overflow to them, the
 * FN/FNUZ and E8M0 formats (NaN but no infinity) give NaN, and the FP6/FP4
 * formats (neither) saturate to their largest value; NaN becomes +0 there. */

/* The bit pattern of d rounded to small-float type t, by the rules above. */
SIM_PRIVATE uint8_t sim_mf_enc(xrt_dtype t, double d) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return 0;
  unsigned mw = (unsigned)(f.ebits + f.mbits), all = (1u << mw) - 1u;
  unsigned neg = d < 0 && f.kind != XRT_MINIFLOAT_E8M0 ? 1u << mw : 0u;
  if (d != d) { /* NaN; FP6/FP4 have none */
    int32_t r = xrt_minifloat_from_f64(t, d);
    return (uint8_t)(r >= 0 ? r : 0);
  }
  if (d - d != 0) { /* infinity */
    switch (f.kind) {
    case XRT_MINIFLOAT_IEEE: return (uint8_t)(neg | (all >> f.mbits << f.mbits));
    case XRT_MINIFLOAT_FN: return (uint8_t)(neg | all);
    case XRT_MINIFLOAT_FNUZ: return (uint8_t)(1u << mw);
    case XRT_MINIFLOAT_E8M0: return 0xff;
    default: return (uint8_t)(neg | all); /* saturate */
    }
  }
  int32_t r = xrt_minifloat_from_f64(t, d);
  return (uint8_t)(r >= 0 ? r : (int32_t)(neg | all)); /* FP6/FP4 saturate */
}

/* totalOrder key of a sign-magnitude pattern of width w (E8M0: unsigned). */
static inline unsigned sim_mf_key(const sim_mf *m, uint8_t b) {
  unsigned v = b & m->tmask, h = (m->tmask + 1u) >> 1;
  if (m->t == XRT_F8E8M0FNU) return v;
  return (v & h) ? m->tmask - v : v | h; /* negatives reversed below */
}

#define SIM_DEF_MB(OP)                                                        \
  static void sim_##OP##_mf(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];   \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, (double)SIM_F_##OP(m->dec[a[i]], m->dec[b[i]])); \
  }
#define SIM_DEF_MU(OP)                                                        \
  static void sim_##OP##_mf(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0];                                \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, (double)SIM_F_##OP(m->dec[a[i]]));              \
  }
SIM_FLT_BIN_OPS(SIM_DEF_MB)
SIM_FLT_BIN_DOPS(SIM_DEF_MB)
SIM_FLT_UN_OPS(SIM_DEF_MU)
SIM_FLT_UN_DOPS(SIM_DEF_MU)
SIM_CHLO_UN_OPS(SIM_DEF_MU)
SIM_CHLO_BIN_OPS(SIM_DEF_MB)
SIM_DEF_MU(REAL)
SIM_DEF_MU(IMAG)

static void sim_ISFIN_mf(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = (uint8_t)(isfinite(m->dec[a[i]]) != 0);
}

SIM_PRIVATE void sim_cmp_mf(void *const *in, void *out, size_t n,
                            const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) {
    int r = 0;
    if (m->dir >= 8) { /* TOTALORDER on the bit patterns */
      unsigned x = sim_mf_key(m, a[i]), y = sim_mf_key(m, b[i]);
      switch (m->dir - 8) {
      case SIM_EQ: r = x == y; break;
      case SIM_NE: r = x != y; break;
      case SIM_GE: r = x >= y; break;
      case SIM_GT: r = x > y; break;
      case SIM_LE: r = x <= y; break;
      default: r = x < y; break;
      }
    } else {
      double x = m->dec[a[i]], y = m->dec[b[i]];
      switch (m->dir) {
      case SIM_EQ: r = x == y; break;
      case SIM_NE: r = x != y; break;
      case SIM_GE: r = x >= y; break;
      case SIM_GT: r = x > y; break;
      case SIM_LE: r = x <= y; break;
      default: r = x < y; break;
      }
    }
    o[i] = (uint8_t)r;
  }
}

/* Conversions: a small float to any other type goes through its exact
 * double value; anything to a small float through a double rounded to odd
 * (integers) or exact (floats), so the final rounding is the only one. */
static inline double sim_k2d_i(int64_t v) { return sim_i2d_odd(v); }
static inline double sim_k2d_u(uint64_t v) { return sim_u2d_odd(v); }
static inline double sim_k2d_f(double v) { return v; }
static inline double sim_k2d_c(sim_c2 v) { return v.re; }

#define SIM_DEF_CV_TOMF(S, code, SSZ, K)                                      \
  static void sim_cv_##S##_mf(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, sim_k2d_##K(sim_ld_##S(in[0], i)));            \
  }
SIM_CV_SRCS(SIM_DEF_CV_TOMF)

#define SIM_DEF_CV_FROMMF(A, B, K, D, dcode, DSZ)                             \
  static void sim_cv_mf_##D(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0];                                \
    for (size_t i = n; i-- > 0;) /* never narrower: backwards */             \
      sim_st_##D##_f(out, i, m->dec[a[i]]);                                   \
  }
SIM_CV_DSTS(SIM_DEF_CV_FROMMF, 0, 0, 0)

static void sim_cv_mf_mf(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = sim_mf_enc(m->r, m->dec[a[i]]);
}

#define SIM_CV_TOMF_ENT(S, code, SSZ, K) [code] = sim_cv_##S##_mf,
static const sim_ew_fn sim_cv_tomf_tab[XRT_DTYPE_COUNT] = {
    SIM_CV_SRCS(SIM_CV_TOMF_ENT)};
#define SIM_CV_FROMMF_ENT(A, B, K, D, dcode, DSZ) [dcode] = sim_cv_mf_##D,
static const sim_ew_fn sim_cv_frommf_tab[XRT_DTYPE_COUNT] = {
    SIM_CV_DSTS(SIM_CV_FROMMF_ENT, 0, 0, 0)};

/* Small-float kernels by op (NULL: the op does not apply to floats). */
static const sim_ew_fn sim_mf_tab[SIM_EW_NOPS] = {
#define SIM_MF_ENT(OP) [SIM_EW_##OP] = sim_##OP##_mf,
    SIM_FLT_BIN_OPS(SIM_MF_ENT) SIM_FLT_BIN_DOPS(SIM_MF_ENT)
    SIM_FLT_UN_OPS(SIM_MF_ENT) SIM_FLT_UN_DOPS(SIM_MF_ENT)
    SIM_CHLO_UN_OPS(SIM_MF_ENT) SIM_CHLO_BIN_OPS(SIM_MF_ENT)
    SIM_MF_ENT(REAL) SIM_MF_ENT(IMAG) SIM_MF_ENT(ISFIN)
#undef SIM_MF_ENT
};

/* The small-float kernel of op e (NULL: the op does not apply to floats). */
SIM_PRIVATE sim_ew_fn sim_mf_kernel(int e) { return sim_mf_tab[e]; }

/* The convert kernel from t to r, one of them (or both) a small float. */
SIM_PRIVATE sim_ew_fn sim_mf_cv_kernel(xrt_dtype t, xrt_dtype r) {
  int mt = sim_ew_class(t) == SIM_EWC_MINIFLOAT;
  int mr = sim_ew_class(r) == SIM_EWC_MINIFLOAT;
  return mt && mr ? sim_cv_mf_mf
         : mt     ? sim_cv_frommf_tab[r]
                  : sim_cv_tomf_tab[t];
}

/* A context for small-float kernels, from al (the caller frees it). */
SIM_PRIVATE sim_mf *sim_mf_new(const xrt_allocator *al, xrt_dtype t,
                               xrt_dtype r) {
  sim_mf *m = (sim_mf *)al->alloc(al->self, sizeof *m);
  if (!m) return NULL;
  m->t = t, m->r = r, m->dir = 0, m->tmask = 0xff;
  xrt_minifloat_format f;
  if (xrt_minifloat_format_of(t, &f) && f.kind != XRT_MINIFLOAT_E8M0)
    m->tmask = (uint8_t)((2u << (f.ebits + f.mbits)) - 1u);
  for (int b = 0; b < 256; b++)
    m->dec[b] = sim_is_mf(t) ? sim_mf_dec1(t, (uint8_t)b) : 0;
  return m;
}

/* ---- reduce_precision ---- */

/* The interpreter's bit recipe on the element's pattern: round the mantissa
 * to nearest even at the new width, then flush exponents beyond the new
 * range to signed zero or infinity; NaN stays itself (becomes +inf when no
 * mantissa bits are left). */
typedef struct sim_rp {
  xrt_dtype t;
  int width, sm, se;  /* bit width, source mantissa / exponent bits */
  int eb, mb;         /* exponent_bits, mantissa_bits */
  uint64_t inf;       /* +inf pattern (NaN for formats without infinity) */
} sim_rp;

static uint64_t sim_rp_bits(const sim_rp *c, uint64_t x, int isnan_) {
  uint64_t orig = x, wmask = SIM_M64(c->width);
  if (c->mb < c->sm) {
    int sh = c->sm - c->mb;
    uint64_t last = (uint64_t)1 << sh;
    uint64_t bias = ((x & last) >> sh) + ((last >> 1) - 1);
    x = ((x + bias) & ~(last - 1)) & wmask;
  }
  if (c->eb < c->se) {
    uint64_t sign = (uint64_t)1 << (c->width - 1);
    uint64_t emask = (((uint64_t)1 << c->se) - 1) << c->sm;
    uint64_t ebias = ((uint64_t)1 << (c->se - 1)) - 1;
    uint64_t rbias = ((uint64_t)1 << (c->eb - 1)) - 1;
    uint64_t xe = x & emask;
    if (xe > (ebias + rbias) << c->sm) x = (x & sign) | emask;
    else if (xe <= (ebias - rbias) << c->sm) x &= sign;
  }
  if (isnan_) return c->mb > 0 ? orig : c->inf;
  return x;
}

static void sim_rp_run(void *const *in, void *out, size_t n,
                       const void *ctx) {
  const sim_rp *c = (const sim_rp *)ctx;
  switch (c->t) {
  case XRT_F32: {
    const uint32_t *a = (const uint32_t *)in[0];
    uint32_t *o = (uint32_t *)out;
    for (size_t i = 0; i < n; i++)
      o[i] = (uint32_t)sim_rp_bits(c, a[i], (a[i] & 0x7fffffffu) > 0x7f800000u);
    break;
  }
  case XRT_F64: {
    const uint64_t *a = (const uint64_t *)in[0];
    uint64_t *o = (uint64_t *)out;
    for (size_t i = 0; i < n; i++)
      o[i] = sim_rp_bits(c, a[i], (a[i] << 1) > ((uint64_t)0x7ff << 53));
    break;
  }
  case XRT_F16: case XRT_BF16: {
    const uint16_t *a = (const uint16_t *)in[0];
    uint16_t *o = (uint16_t *)out;
    uint16_t inf = c->t == XRT_F16 ? 0x7c00u : 0x7f80u;
    for (size_t i = 0; i < n; i++)
      o[i] = (uint16_t)sim_rp_bits(c, a[i], (a[i] & 0x7fffu) > inf);
    break;
  }
  default: { /* small floats */
    const uint8_t *a = (const uint8_t *)in[0];
    uint8_t *o = (uint8_t *)out;
    for (size_t i = 0; i < n; i++) {
      uint8_t b = (uint8_t)(a[i] & SIM_M64(c->width));
      o[i] = (uint8_t)sim_rp_bits(c, b, isnan(sim_mf_dec1(c->t, b)));
    }
    break;
  }
  }
}

SIM_PRIVATE sim_ew_fn sim_ew_reduce_precision(const xrt_allocator *al,
                                              const xrt_ir_func *f,
                                              const xrt_ir_op *op,
                                              const void **ctx_out,
                                              int *ctx_owned, char *why,
                                              size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  const xrt_ir_attr *e = xrt_ir_op_attr(op, "exponent_bits");
  const xrt_ir_attr *m = xrt_ir_op_attr(op, "mantissa_bits");
  static const int8_t mant[XRT_DTYPE_COUNT] = {
      [XRT_F16] = 10, [XRT_BF16] = 7, [XRT_F32] = 23, [XRT_F64] = 52};
  int width = sim_ew_bits(t), sm = (unsigned)t < XRT_DTYPE_COUNT ? mant[t] : 0;
  xrt_minifloat_format mf;
  if (xrt_minifloat_format_of(t, &mf)) sm = mf.mbits;
  else if (!sm) width = 0;
  if (!width || f->value_types[op->results[0]].shape.dtype != t)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (!e || e->kind != XRT_ATTR_INT || !m || m->kind != XRT_ATTR_INT ||
      e->i < 1 || m->i < 0) {
    if (why && whycap)
      snprintf(why, whycap, "%s needs exponent_bits >= 1 and mantissa_bits "
               ">= 0", op->name ? op->name : "stablehlo.reduce_precision");
    return NULL;
  }
  sim_rp *c = (sim_rp *)al->alloc(al->self, sizeof *c);
  if (!c) return sim_ew_oom(ctx_owned, why, whycap);
  c->t = t, c->width = width, c->sm = sm, c->se = width - sm - 1;
  c->eb = e->i > 64 ? 64 : (int)e->i, c->mb = m->i > 64 ? 64 : (int)m->i;
  if (sim_is_mf(t)) c->inf = sim_mf_enc(t, (double)INFINITY);
  else c->inf = (((uint64_t)1 << c->se) - 1) << sm;
  *ctx_out = c;
  *ctx_owned = 1;
  return sim_rp_run;
}
