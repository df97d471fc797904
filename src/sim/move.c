/*
 * src/sim/move.c - data movement: strided copies, select and clamp, scalar
 * conversion, parallel and blocked copies and transposes.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

#define SIM_INNER_DEF(NAME, T)                                              \
  static void NAME(char *d, const char *s, int64_t n, ptrdiff_t ds,         \
                   ptrdiff_t ss) {                                          \
    if (ds == (ptrdiff_t)sizeof(T) && ss == (ptrdiff_t)sizeof(T)) {         \
      memcpy(d, s, (size_t)n * sizeof(T));                                  \
      return;                                                               \
    }                                                                       \
    for (int64_t i = 0; i < n; i++, d += ds, s += ss)                       \
      *(T *)(void *)d = *(const T *)(const void *)s;                        \
  }
SIM_INNER_DEF(sim_inner_1, uint8_t)
SIM_INNER_DEF(sim_inner_2, uint16_t)
SIM_INNER_DEF(sim_inner_4, uint32_t)
SIM_INNER_DEF(sim_inner_8, uint64_t)
SIM_INNER_DEF(sim_inner_16, sim_b16)

static sim_inner_fn sim_inner_for(size_t es) {
  switch (es) {
  case 1: return sim_inner_1;
  case 2: return sim_inner_2;
  case 4: return sim_inner_4;
  case 8: return sim_inner_8;
  default: return sim_inner_16;
  }
}

#define SIM_TILE 32

/* A transpose-like copy (dst contiguous on the last dimension, src
 * contiguous on another) goes tile by tile so both sides stay in cache:
 * moves the src-contiguous dimension next to the last one.  The order in
 * which elements are copied does not matter. */
static void sim_xcopy_pick_tile(sim_xcopy *x) {
  int q = x->rank - 1;
  if (q < 1 || x->ss[q] == 1 || x->ds[q] != 1 || x->dims[q] < SIM_TILE / 4)
    return;
  for (int p = q - 1; p >= 0; p--) {
    if (x->ss[p] != 1 || x->dims[p] < SIM_TILE / 4) continue;
    int64_t d = x->dims[p];
    ptrdiff_t a = x->ss[p], b = x->ds[p];
    for (int k = p; k < q - 1; k++) {
      x->dims[k] = x->dims[k + 1];
      x->ss[k] = x->ss[k + 1];
      x->ds[k] = x->ds[k + 1];
    }
    x->dims[q - 1] = d, x->ss[q - 1] = a, x->ds[q - 1] = b;
    x->tiled = 1;
    return;
  }
}

/* Strides and bases are in elements here. */
SIM_PRIVATE void sim_xcopy_init(sim_xcopy *x, size_t es, int rank,
                           const int64_t *dims, const int64_t *ss,
                           const int64_t *ds, int64_t sbase, int64_t dbase) {
  memset(x, 0, sizeof *x);
  x->inner = sim_inner_for(es);
  x->sbase = (ptrdiff_t)(sbase * (int64_t)es);
  x->dbase = (ptrdiff_t)(dbase * (int64_t)es);
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 0) x->empty = 1;
    if (dims[k] == 1) continue;
    if (r > 0 && x->ss[r - 1] == ss[k] * dims[k] &&
        x->ds[r - 1] == ds[k] * dims[k]) {
      x->dims[r - 1] *= dims[k];
      x->ss[r - 1] = ss[k];
      x->ds[r - 1] = ds[k];
      continue;
    }
    x->dims[r] = dims[k];
    x->ss[r] = ss[k];
    x->ds[r] = ds[k];
    r++;
  }
  if (r == 0) { /* a single element */
    x->dims[0] = 1;
    x->ss[0] = x->ds[0] = 1;
    r = 1;
  }
  x->rank = r;
  sim_xcopy_pick_tile(x);
  for (int k = 0; k < r; k++) {
    x->ss[k] *= (ptrdiff_t)es;
    x->ds[k] *= (ptrdiff_t)es;
  }
}

/* The innermost dimension, or the last two in tiles. */
static void sim_xcopy_leaf(const sim_xcopy *x, char *d, const char *s) {
  int b = x->rank - 1, a = b - 1;
  if (!x->tiled) {
    x->inner(d, s, x->dims[b], x->ds[b], x->ss[b]);
    return;
  }
  for (int64_t i0 = 0; i0 < x->dims[a]; i0 += SIM_TILE)
    for (int64_t j0 = 0; j0 < x->dims[b]; j0 += SIM_TILE) {
      int64_t ie = i0 + SIM_TILE < x->dims[a] ? i0 + SIM_TILE : x->dims[a];
      int64_t jn = j0 + SIM_TILE < x->dims[b] ? SIM_TILE : x->dims[b] - j0;
      for (int64_t i = i0; i < ie; i++)
        x->inner(d + i * x->ds[a] + j0 * x->ds[b],
                 s + i * x->ss[a] + j0 * x->ss[b], jn, x->ds[b], x->ss[b]);
    }
}

SIM_PRIVATE void sim_xcopy_run(const sim_xcopy *x, char *dst, const char *src) {
  if (x->empty) return;
  int nout = x->rank - (x->tiled ? 2 : 1);
  ptrdiff_t so = x->sbase, dof = x->dbase;
  int64_t idx[XRT_MAX_RANK];
  memset(idx, 0, sizeof idx);
  for (;;) {
    sim_xcopy_leaf(x, dst + dof, src + so);
    int k = nout - 1;
    for (; k >= 0; k--) {
      so += x->ss[k];
      dof += x->ds[k];
      if (++idx[k] < x->dims[k]) break;
      so -= x->ss[k] * (ptrdiff_t)x->dims[k];
      dof -= x->ds[k] * (ptrdiff_t)x->dims[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/* A 64-byte block of the value, copied block by block: whole vector
 * stores (-O2 leaves a loop of element stores scalar, a quarter of the
 * speed or less, and fills are hot: a per-channel bias broadcast over the
 * positions of a feature-major image is filled run by run). */
#define SIM_FILL_DEF(NAME, T)                                           \
  static void NAME(char *d, const char *val, int64_t n) {               \
    T blk[64 / sizeof(T)];                                              \
    const int64_t per = (int64_t)(64 / sizeof(T));                      \
    for (int64_t i = 0; i < per; i++) memcpy(&blk[i], val, sizeof(T));  \
    int64_t i = 0;                                                      \
    for (; i + per <= n; i += per)                                      \
      memcpy(d + (size_t)i * sizeof(T), blk, sizeof blk);               \
    for (; i < n; i++) memcpy(d + (size_t)i * sizeof(T), blk, sizeof(T)); \
  }
SIM_FILL_DEF(sim_fill_2, uint16_t)
SIM_FILL_DEF(sim_fill_4, uint32_t)
SIM_FILL_DEF(sim_fill_8, uint64_t)
SIM_FILL_DEF(sim_fill_16, sim_b16)

static void sim_fill_1(char *d, const char *val, int64_t n) {
  memset(d, (unsigned char)*val, (size_t)n);
}

SIM_PRIVATE sim_fill_fn sim_fill_for(size_t es) {
  switch (es) {
  case 1: return sim_fill_1;
  case 2: return sim_fill_2;
  case 4: return sim_fill_4;
  case 8: return sim_fill_8;
  default: return sim_fill_16;
  }
}

/* Big copies run on the device's thread pool ("The device thread pools"). */
static void sim_memcpy_par(sim_cx *cx, void *dst, const void *src, size_t n);
static void sim_xcopy_par(sim_cx *cx, const sim_xcopy *x, char *dst,
                          const char *src);

SIM_PRIVATE xrt_status sim_run_copy(const sim_step *st, void **vals, sim_cx *cx) {
  sim_memcpy_par(cx, vals[st->out[0]], vals[st->in[0]], (size_t)st->n);
  return XRT_OK;
}

/* optimization_barrier: result i = operand i. */
SIM_PRIVATE xrt_status sim_run_copy_all(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const size_t *bytes = (const size_t *)st->data;
  (void)cx;
  for (int32_t i = 0; i < st->nout; i++)
    if (bytes[i]) memcpy(vals[st->out[i]], vals[st->in[i]], bytes[i]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_run_xcopy(const sim_step *st, void **vals, sim_cx *cx) {
  sim_xcopy_par(cx, (const sim_xcopy *)st->data, (char *)vals[st->out[0]],
                (const char *)vals[st->in[0]]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_run_pad(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_pad *p = (const sim_pad *)st->data;
  char *out = (char *)vals[st->out[0]];
  (void)cx;
  p->fill(out, (const char *)vals[st->in[1]], p->n);
  sim_xcopy_run(&p->x, out, (const char *)vals[st->in[0]]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_run_concat(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_cat *c = (const sim_cat *)st->data;
  char *d = (char *)vals[st->out[0]];
  if (c->outer == 1) { /* each operand one block (NCHW features, batch 1) */
    /* on the pool: the operands' producers left their lines in both
     * cores' caches, and one core alone reads the other's half at a
     * quarter of the speed of its own (3 MB of SqueezeNet: 74 us on one
     * thread, 276 us from one of two) */
    for (int32_t k = 0; k < st->nin; k++) {
      sim_memcpy_par(cx, d, vals[st->in[k]], c->chunk[k]);
      d += c->chunk[k];
    }
    return XRT_OK;
  }
  for (int64_t o = 0; o < c->outer; o++)
    for (int32_t k = 0; k < st->nin; k++) {
      size_t b = c->chunk[k];
      if (!b) continue;
      memcpy(d, (const char *)vals[st->in[k]] + (size_t)o * b, b);
      d += b;
    }
  return XRT_OK;
}

/* ======================================================================
 * select and clamp
 * ==================================================================== */

SIM_PRIVATE xrt_status sim_run_select_scalar(const sim_step *st, void **vals,
                                        sim_cx *cx) {
  (void)cx;
  const uint8_t *p = (const uint8_t *)vals[st->in[0]];
  const void *src = vals[st->in[*p ? 1 : 2]];
  if (st->n) memcpy(vals[st->out[0]], src, (size_t)st->n);
  return XRT_OK;
}
#define SIM_SELECT_DEF(NAME, T)                                             \
  SIM_PRIVATE xrt_status NAME(const sim_step *st, void **vals, sim_cx *cx) {     \
    (void)cx;                                                               \
    const uint8_t *p = (const uint8_t *)vals[st->in[0]];                    \
    const T *a = (const T *)vals[st->in[1]], *b = (const T *)vals[st->in[2]]; \
    T *o = (T *)vals[st->out[0]];                                           \
    for (int64_t i = 0; i < st->n; i++) o[i] = p[i] ? a[i] : b[i];          \
    return XRT_OK;                                                          \
  }
SIM_SELECT_DEF(sim_run_select_1, uint8_t)
SIM_SELECT_DEF(sim_run_select_2, uint16_t)
SIM_SELECT_DEF(sim_run_select_4, uint32_t)
SIM_SELECT_DEF(sim_run_select_8, uint64_t)
SIM_SELECT_DEF(sim_run_select_16, sim_b16)

#define SIM_CLAMP_INT(NAME, T)                                              \
  static void NAME(void *out, const void *lo, const void *x,                \
                   const void *hi, int64_t n, int64_t ls, int64_t hs) {     \
    T *o = (T *)out;                                                        \
    const T *l = (const T *)lo, *v = (const T *)x, *h = (const T *)hi;      \
    for (int64_t i = 0; i < n; i++) {                                       \
      T t = v[i], a = l[i * ls], b = h[i * hs];                             \
      t = t < a ? a : t;                                                    \
      o[i] = t > b ? b : t;                                                 \
    }                                                                       \
  }
SIM_CLAMP_INT(sim_clamp_s8, int8_t)
SIM_CLAMP_INT(sim_clamp_s16, int16_t)
SIM_CLAMP_INT(sim_clamp_s32, int32_t)
SIM_CLAMP_INT(sim_clamp_s64, int64_t)
SIM_CLAMP_INT(sim_clamp_u8, uint8_t)
SIM_CLAMP_INT(sim_clamp_u16, uint16_t)
SIM_CLAMP_INT(sim_clamp_u32, uint32_t)
SIM_CLAMP_INT(sim_clamp_u64, uint64_t)

/* Floats: IEEE maximum/minimum (NaN propagates, -0 < +0); the result is
 * the bit pattern of the chosen input. */
#define SIM_CLAMP_FLT(NAME, T, F, LD)                                       \
  static void NAME(void *out, const void *lo, const void *x,                \
                   const void *hi, int64_t n, int64_t ls, int64_t hs) {     \
    T *o = (T *)out;                                                        \
    const T *l = (const T *)lo, *v = (const T *)x, *h = (const T *)hi;      \
    for (int64_t i = 0; i < n; i++) {                                       \
      T r = v[i];                                                           \
      F fx = LD(r), fa = LD(l[i * ls]), fb = LD(h[i * hs]);                 \
      if (fx == fx && (fa != fa || fa > fx || (fa == fx && signbit(fx)))) { \
        r = l[i * ls];                                                      \
        fx = fa;                                                            \
      }                                                                     \
      if (fx == fx && (fb != fb || fb < fx || (fb == fx && signbit(fb))))   \
        r = h[i * hs];                                                      \
      o[i] = r;                                                             \
    }                                                                       \
  }
SIM_CLAMP_FLT(sim_clamp_f32_scalar, float, float, SIM_LD_ID)
SIM_CLAMP_FLT(sim_clamp_f64, double, double, SIM_LD_ID)

#if defined(__GNUC__)
/* f32 with bounds that are scalars or arrays like x (relu6 is clamp(0, x,
 * 6)): sixteen lanes at a time, the same choices as SIM_CLAMP_FLT made
 * with masks instead of branches, which real data (about half of it
 * below the lower bound) mispredicts; built for portable, AVX2 and
 * AVX-512 and picked at run time. */
typedef float sim_cl_v16 __attribute__((vector_size(64)));
typedef int32_t sim_cl_i16 __attribute__((vector_size(64)));
#define SIM_CL_SEL(c, a, b)                                                   \
  ((sim_cl_v16)(((sim_cl_i16)(a) & (c)) | ((sim_cl_i16)(b) & ~(c))))
#define SIM_CL_KERNEL(ISA, ATTR)                                              \
  static ATTR void sim_clamp_f32_##ISA(float *o, const float *l,              \
                                       const float *v, const float *h,        \
                                       int64_t n, int64_t ls, int64_t hs) {   \
    for (int64_t i = 0; i + 16 <= n; i += 16) {                               \
      sim_cl_v16 fx, fa, fb, r;                                               \
      memcpy(&fx, v + i, sizeof fx);                                          \
      if (ls) memcpy(&fa, l + i, sizeof fa);                                  \
      else                                                                    \
        for (int k = 0; k < 16; k++) fa[k] = l[0]; /* not 0 + l: -0 */        \
      if (hs) memcpy(&fb, h + i, sizeof fb);                                  \
      else                                                                    \
        for (int k = 0; k < 16; k++) fb[k] = h[0];                            \
      sim_cl_i16 zero = {0};                                                  \
      sim_cl_i16 ta = (fx == fx) & ((fa != fa) | (fa > fx) |                  \
                                    ((fa == fx) & ((sim_cl_i16)fx < zero)));  \
      r = SIM_CL_SEL(ta, fa, fx);                                             \
      sim_cl_i16 tb = (r == r) & ((fb != fb) | (fb < r) |                     \
                                  ((fb == r) & ((sim_cl_i16)fb < zero)));     \
      r = SIM_CL_SEL(tb, fb, r);                                              \
      memcpy(o + i, &r, sizeof r);                                            \
    }                                                                         \
  }
/* Bounds that are one number each, neither NaN (relu6's 0 and 6): one
 * compare and one blend a bound, the same choices as SIM_CLAMP_FLT.  No
 * compare with a NaN x holds, so it stays.  x == lo picks lo, the bits
 * of x except for lo = -0, x = +0, which keeps x: a strict compare for
 * lo = -0 (CA), else >=.  r == hi picks hi only when hi's sign bit is
 * set (the bits differ only for hi = -0, r = +0): <= then, else < (CB). */
#define SIM_CL_KS(ISA, ATTR, V, CA, CB)                                       \
  static ATTR void sim_clamp_f32s##V##_##ISA(float *o, const float *l,        \
                                             const float *v, const float *h,  \
                                             int64_t n) {                     \
    sim_cl_v16 fa, fb;                                                        \
    for (int k = 0; k < 16; k++) {                                            \
      fa[k] = l[0];                                                           \
      fb[k] = h[0];                                                           \
    }                                                                         \
    for (int64_t i = 0; i + 16 <= n; i += 16) {                               \
      sim_cl_v16 fx, r;                                                       \
      memcpy(&fx, v + i, sizeof fx);                                          \
      sim_cl_i16 ta = CA;                                                     \
      r = SIM_CL_SEL(ta, fa, fx);                                             \
      sim_cl_i16 tb = CB;                                                     \
      r = SIM_CL_SEL(tb, fb, r);                                              \
      memcpy(o + i, &r, sizeof r);                                            \
    }                                                                         \
  }
#define SIM_CL_KS4(ISA, ATTR)                                                 \
  SIM_CL_KS(ISA, ATTR, 0, (fa >= fx), (fb < r))                               \
  SIM_CL_KS(ISA, ATTR, 1, (fa > fx), (fb < r))                                \
  SIM_CL_KS(ISA, ATTR, 2, (fa >= fx), (fb <= r))                              \
  SIM_CL_KS(ISA, ATTR, 3, (fa > fx), (fb <= r))                               \
  static void (*const sim_clamp_f32s_##ISA[4])(float *, const float *,        \
                                               const float *, const float *,  \
                                               int64_t) = {                   \
      sim_clamp_f32s0_##ISA, sim_clamp_f32s1_##ISA, sim_clamp_f32s2_##ISA,    \
      sim_clamp_f32s3_##ISA};
SIM_CL_KERNEL(port, )
SIM_CL_KS4(port, )
#if SIM_X86
SIM_CL_KERNEL(avx2, __attribute__((target("avx2"))))
SIM_CL_KERNEL(avx512, __attribute__((target("avx512f"))))
SIM_CL_KS4(avx2, __attribute__((target("avx2"))))
SIM_CL_KS4(avx512, __attribute__((target("avx512f"))))
#endif

static void sim_clamp_f32(void *out, const void *lo, const void *x,
                          const void *hi, int64_t n, int64_t ls, int64_t hs) {
  if ((ls != 0 && ls != 1) || (hs != 0 && hs != 1)) {
    sim_clamp_f32_scalar(out, lo, x, hi, n, ls, hs);
    return;
  }
  float *o = (float *)out;
  const float *l = (const float *)lo, *v = (const float *)x,
              *h = (const float *)hi;
  int64_t whole = n / 16 * 16;
#if SIM_X86
  int level = sim_isa_level();
#endif
  if (!ls && !hs && l[0] == l[0] && h[0] == h[0]) {
    int var = (l[0] == 0 && signbit(l[0])) + 2 * (signbit(h[0]) != 0);
#if SIM_X86
    if (level == 2) sim_clamp_f32s_avx512[var](o, l, v, h, whole);
    else if (level == 1) sim_clamp_f32s_avx2[var](o, l, v, h, whole);
    else
#endif
      sim_clamp_f32s_port[var](o, l, v, h, whole);
  } else
#if SIM_X86
  if (level == 2) sim_clamp_f32_avx512(o, l, v, h, whole, ls, hs);
  else if (level == 1) sim_clamp_f32_avx2(o, l, v, h, whole, ls, hs);
  else
#endif
    sim_clamp_f32_port(o, l, v, h, whole, ls, hs);
  if (whole < n)
    sim_clamp_f32_scalar(o + whole, l + whole * ls, v + whole, h + whole * hs,
                         n - whole, ls, hs);
}
#else
#define sim_clamp_f32 sim_clamp_f32_scalar
#endif
SIM_CLAMP_FLT(sim_clamp_f16, uint16_t, float, SIM_LD_F16)
SIM_CLAMP_FLT(sim_clamp_bf16, uint16_t, float, SIM_LD_BF16)

/* The f8/f6/f4 families (one byte each): as SIM_CLAMP_FLT, comparing the
 * exactly decoded values of type t. */
static void sim_clamp_mini(xrt_dtype t, void *out, const void *lo,
                           const void *x, const void *hi, int64_t n,
                           int64_t ls, int64_t hs) {
  uint8_t *o = (uint8_t *)out;
  const uint8_t *l = (const uint8_t *)lo, *v = (const uint8_t *)x,
                *h = (const uint8_t *)hi;
  for (int64_t i = 0; i < n; i++) {
    uint8_t r = v[i];
    double fx = xrt_minifloat_to_f64(t, r);
    double fa = xrt_minifloat_to_f64(t, l[i * ls]);
    double fb = xrt_minifloat_to_f64(t, h[i * hs]);
    if (fx == fx && (fa != fa || fa > fx || (fa == fx && signbit(fx)))) {
      r = l[i * ls];
      fx = fa;
    }
    if (fx == fx && (fb != fb || fb < fx || (fb == fx && signbit(fb))))
      r = h[i * hs];
    o[i] = r;
  }
}

#define SIM_CLAMP_MINI(NAME, DT)                                            \
  static void NAME(void *out, const void *lo, const void *x,                \
                   const void *hi, int64_t n, int64_t ls, int64_t hs) {     \
    sim_clamp_mini(DT, out, lo, x, hi, n, ls, hs);                          \
  }
SIM_CLAMP_MINI(sim_clamp_f8e4m3fn, XRT_F8E4M3FN)
SIM_CLAMP_MINI(sim_clamp_f8e5m2, XRT_F8E5M2)
SIM_CLAMP_MINI(sim_clamp_f8e4m3fnuz, XRT_F8E4M3FNUZ)
SIM_CLAMP_MINI(sim_clamp_f8e5m2fnuz, XRT_F8E5M2FNUZ)
SIM_CLAMP_MINI(sim_clamp_f8e4m3b11fnuz, XRT_F8E4M3B11FNUZ)
SIM_CLAMP_MINI(sim_clamp_f8e3m4, XRT_F8E3M4)
SIM_CLAMP_MINI(sim_clamp_f8e4m3, XRT_F8E4M3)
SIM_CLAMP_MINI(sim_clamp_f8e8m0fnu, XRT_F8E8M0FNU)
SIM_CLAMP_MINI(sim_clamp_f6e2m3fn, XRT_F6E2M3FN)
SIM_CLAMP_MINI(sim_clamp_f6e3m2fn, XRT_F6E3M2FN)
SIM_CLAMP_MINI(sim_clamp_f4e2m1fn, XRT_F4E2M1FN)

SIM_PRIVATE sim_clamp_fn sim_clamp_for(xrt_dtype t) {
  switch (t) {
  case XRT_S2: case XRT_S4: case XRT_S8: return sim_clamp_s8;
  case XRT_S16: return sim_clamp_s16;
  case XRT_S32: return sim_clamp_s32;
  case XRT_S64: return sim_clamp_s64;
  case XRT_PRED: case XRT_U2: case XRT_U4: case XRT_U8: return sim_clamp_u8;
  case XRT_U16: return sim_clamp_u16;
  case XRT_U32: return sim_clamp_u32;
  case XRT_U64: return sim_clamp_u64;
  case XRT_F32: return sim_clamp_f32;
  case XRT_F64: return sim_clamp_f64;
  case XRT_F16: return sim_clamp_f16;
  case XRT_BF16: return sim_clamp_bf16;
  case XRT_F8E4M3FN: return sim_clamp_f8e4m3fn;
  case XRT_F8E5M2: return sim_clamp_f8e5m2;
  case XRT_F8E4M3FNUZ: return sim_clamp_f8e4m3fnuz;
  case XRT_F8E5M2FNUZ: return sim_clamp_f8e5m2fnuz;
  case XRT_F8E4M3B11FNUZ: return sim_clamp_f8e4m3b11fnuz;
  case XRT_F8E3M4: return sim_clamp_f8e3m4;
  case XRT_F8E4M3: return sim_clamp_f8e4m3;
  case XRT_F8E8M0FNU: return sim_clamp_f8e8m0fnu;
  case XRT_F6E2M3FN: return sim_clamp_f6e2m3fn;
  case XRT_F6E3M2FN: return sim_clamp_f6e3m2fn;
  case XRT_F4E2M1FN: return sim_clamp_f4e2m1fn;
  default: return NULL;
  }
}

SIM_PRIVATE xrt_status sim_run_clamp(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_clamp *c = (const sim_clamp *)st->data;
  (void)cx;
  c->fn(vals[st->out[0]], vals[st->in[0]], vals[st->in[1]], vals[st->in[2]],
        st->n, c->ls, c->hs);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_run_ew(const sim_step *st, void **vals, sim_cx *cx) {
  void *in[SIM_MAX_EW_IN];
  (void)cx;
  for (int32_t i = 0; i < st->nin; i++) in[i] = vals[st->in[i]];
  st->ew(in, vals[st->out[0]], (size_t)st->n, st->ew_ctx);
  return XRT_OK;
}

SIM_PRIVATE int sim_is_minifloat(xrt_dtype t) {
  return t >= XRT_F8E4M3FN && t <= XRT_F4E2M1FN;
}

SIM_PRIVATE int sim_num_supported(xrt_dtype t) {
  return t >= XRT_PRED && t <= XRT_F4E2M1FN;
}

/* Rounds to a small float; values beyond its range saturate and NaN
 * becomes 0 in formats that have neither infinity nor NaN. */
static uint8_t sim_minifloat_store(xrt_dtype t, double d) {
  int32_t r = xrt_minifloat_from_f64(t, d);
  xrt_minifloat_format f;
  if (r >= 0 || d != d || !xrt_minifloat_format_of(t, &f))
    return (uint8_t)(r >= 0 ? r : 0);
  unsigned mw = (unsigned)(f.ebits + f.mbits), all = (1u << mw) - 1u;
  unsigned mag = f.kind == XRT_MINIFLOAT_FN ? all - 1u
               : f.kind == XRT_MINIFLOAT_E8M0 ? 254u : all;
  unsigned sign = d < 0 && f.kind != XRT_MINIFLOAT_E8M0 ? 1u << mw : 0u;
  return (uint8_t)(mag | sign);
}

/* Two's-complement wrap of v into an integer type's range. */
SIM_PRIVATE int64_t sim_wrap_int(xrt_dtype t, int64_t v) {
  uint64_t u = (uint64_t)v;
  switch (t) {
  case XRT_PRED: return (int64_t)(u & 1u);
  case XRT_S2: u &= 3u; return u >= 2 ? (int64_t)u - 4 : (int64_t)u;
  case XRT_S4: u &= 15u; return u >= 8 ? (int64_t)u - 16 : (int64_t)u;
  case XRT_U2: return (int64_t)(u & 3u);
  case XRT_U4: return (int64_t)(u & 15u);
  default: return v;
  }
}

SIM_PRIVATE void sim_load(xrt_dtype t, const void *p, sim_num *v) {
  memset(v, 0, sizeof *v);
  v->is_int = 1;
  switch (t) {
  case XRT_PRED: case XRT_U8: case XRT_U2: case XRT_U4:
    v->i = *(const uint8_t *)p; break;
  case XRT_S8: case XRT_S2: case XRT_S4: v->i = *(const int8_t *)p; break;
  case XRT_S16: v->i = *(const int16_t *)p; break;
  case XRT_U16: v->i = *(const uint16_t *)p; break;
  case XRT_S32: v->i = *(const int32_t *)p; break;
  case XRT_U32: v->i = *(const uint32_t *)p; break;
  case XRT_S64: case XRT_U64: v->i = *(const int64_t *)p; break;
  default: v->is_int = 0; break;
  }
  if (v->is_int) {
    v->re = t == XRT_U64 ? (double)(uint64_t)v->i : (double)v->i;
    return;
  }
  switch (t) {
  case XRT_F16: v->re = xrt_f16_to_f32(*(const uint16_t *)p); break;
  case XRT_BF16: v->re = xrt_bf16_to_f32(*(const uint16_t *)p); break;
  case XRT_F32: v->re = *(const float *)p; break;
  case XRT_F64: v->re = *(const double *)p; break;
  case XRT_C64:
    v->re = ((const sim_c64 *)p)->re;
    v->im = ((const sim_c64 *)p)->im;
    break;
  case XRT_C128:
    v->re = ((const sim_c128 *)p)->re;
    v->im = ((const sim_c128 *)p)->im;
    break;
  default:
    if (sim_is_minifloat(t)) v->re = xrt_minifloat_to_f64(t, *(const uint8_t *)p);
    break;
  }
}

/* Float to integer: truncates toward zero, saturating (NaN gives 0). */
SIM_PRIVATE int64_t sim_float_to_i64(double d) {
  if (d != d) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

SIM_PRIVATE void sim_store(xrt_dtype t, void *p, const sim_num *v) {
  int64_t i = sim_wrap_int(t, v->is_int ? v->i : sim_float_to_i64(v->re));
  switch (t) {
  case XRT_PRED: *(uint8_t *)p = v->is_int ? v->i != 0 : v->re != 0; break;
  case XRT_S8: case XRT_U8: case XRT_S2: case XRT_S4: case XRT_U2:
  case XRT_U4: *(uint8_t *)p = (uint8_t)i; break;
  case XRT_S16: case XRT_U16: *(uint16_t *)p = (uint16_t)i; break;
  case XRT_S32: case XRT_U32: *(uint32_t *)p = (uint32_t)i; break;
  case XRT_S64: case XRT_U64: *(uint64_t *)p = (uint64_t)i; break;
  case XRT_F16: *(uint16_t *)p = xrt_f64_to_f16(v->re); break;
  case XRT_BF16: *(uint16_t *)p = xrt_f64_to_bf16(v->re); break;
  case XRT_F32: *(float *)p = (float)v->re; break;
  case XRT_F64: *(double *)p = v->re; break;
  case XRT_C64:
    ((sim_c64 *)p)->re = (float)v->re;
    ((sim_c64 *)p)->im = (float)v->im;
    break;
  case XRT_C128:
    ((sim_c128 *)p)->re = v->re;
    ((sim_c128 *)p)->im = v->im;
    break;
  default:
    if (sim_is_minifloat(t))
      *(uint8_t *)p = sim_minifloat_store(t, v->is_int ? (double)v->i : v->re);
    break;
  }
}

/* Slow path (mixed-type dot_general only): converts n elements. */
SIM_PRIVATE void sim_convert(void *dst, const void *src, int64_t n, xrt_dtype from,
                        xrt_dtype to) {
  size_t fs = sim_esize(from), ts = sim_esize(to);
  for (int64_t i = 0; i < n; i++) {
    sim_num v;
    sim_load(from, (const char *)src + (size_t)i * fs, &v);
    sim_store(to, (char *)dst + (size_t)i * ts, &v);
  }
}

/* Re-wraps sub-byte integers after byte-wide arithmetic. */
SIM_PRIVATE void sim_wrap_all(xrt_dtype t, void *p, int64_t n) {
  uint8_t *b = (uint8_t *)p;
  for (int64_t i = 0; i < n; i++)
    b[i] = (uint8_t)sim_wrap_int(t, t == XRT_S2 || t == XRT_S4
                                        ? (int64_t)(int8_t)b[i]
                                        : (int64_t)b[i]);
}

typedef struct sim_memcpy_job {
  char *d;
  const char *s;
} sim_memcpy_job;

static void sim_memcpy_range(void *ctx, int64_t b, int64_t e) {
  const sim_memcpy_job *j = (const sim_memcpy_job *)ctx;
  memcpy(j->d + b, j->s + b, (size_t)(e - b));
}

static void sim_memcpy_par(sim_cx *cx, void *dst, const void *src,
                           size_t n) {
  if (n < SIM_PAR_MIN || !cx->tp) {
    if (n) memcpy(dst, src, n);
    return;
  }
  sim_memcpy_job j = {(char *)dst, (const char *)src};
  sim_parallel_for(cx, (int64_t)n, (int64_t)SIM_PAR_GRAIN, sim_memcpy_range,
                   &j);
}

/* ---- transposing blocks: d[i][j] = s[j][i], i < ni, j < nj ----
 * d rows are ds bytes apart and s rows ss bytes apart (either may be
 * negative); elements are contiguous along both rows. */
typedef void (*sim_tr_fn)(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss,
                          int64_t ni, int64_t nj);

#define SIM_TR_DEF(NAME, T)                                                 \
  static void NAME(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss,      \
                   int64_t ni, int64_t nj) {                                \
    for (int64_t i = 0; i < ni; i++) {                                      \
      T *o = (T *)(void *)(d + i * ds);                                     \
      const char *c = s + i * (ptrdiff_t)sizeof(T);                         \
      for (int64_t j = 0; j < nj; j++)                                      \
        o[j] = *(const T *)(const void *)(c + j * ss);                      \
    }                                                                       \
  }
SIM_TR_DEF(sim_tr_1, uint8_t)
SIM_TR_DEF(sim_tr_2, uint16_t)
SIM_TR_DEF(sim_tr_4, uint32_t)
SIM_TR_DEF(sim_tr_8, uint64_t)
SIM_TR_DEF(sim_tr_16, sim_b16)

#if SIM_X86_64
#define SIM_TR_X86 1
#include <immintrin.h>

/* 8x8 of 32-bit elements through AVX2 registers. */
__attribute__((target("avx2"))) static inline void
sim_tr8x8_avx2(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss) {
  __m256 r0 = _mm256_loadu_ps((const float *)(const void *)(s + 0 * ss));
  __m256 r1 = _mm256_loadu_ps((const float *)(const void *)(s + 1 * ss));
  __m256 r2 = _mm256_loadu_ps((const float *)(const void *)(s + 2 * ss));
  __m256 r3 = _mm256_loadu_ps((const float *)(const void *)(s + 3 * ss));
  __m256 r4 = _mm256_loadu_ps((const float *)(const void *)(s + 4 * ss));
  __m256 r5 = _mm256_loadu_ps((const float *)(const void *)(s + 5 * ss));
  __m256 r6 = _mm256_loadu_ps((const float *)(const void *)(s + 6 * ss));
  __m256 r7 = _mm256_loadu_ps((const float *)(const void *)(s + 7 * ss));
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps((float *)(void *)(d + 0 * ds), _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 1 * ds), _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 2 * ds), _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 3 * ds), _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 4 * ds), _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps((float *)(void *)(d + 5 * ds), _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps((float *)(void *)(d + 6 * ds), _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps((float *)(void *)(d + 7 * ds), _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* 4x4 of 64-bit elements through AVX2 registers. */
__attribute__((target("avx2"))) static inline void
sim_tr4x4_avx2(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss) {
  __m256d r0 = _mm256_loadu_pd((const double *)(const void *)(s + 0 * ss));
  __m256d r1 = _mm256_loadu_pd((const double *)(const void *)(s + 1 * ss));
  __m256d r2 = _mm256_loadu_pd((const double *)(const void *)(s + 2 * ss));
  __m256d r3 = _mm256_loadu_pd((const double *)(const void *)(s + 3 * ss));
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd((double *)(void *)(d + 0 * ds), _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd((double *)(void *)(d + 1 * ds), _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd((double *)(void *)(d + 2 * ds), _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd((double *)(void *)(d + 3 * ds), _mm256_permute2f128_pd(t1, t3, 0x31));
}

/* 16x16 of 32-bit elements through AVX-512 registers: whole cache lines in
 * and out.  Unpacks and in-lane shuffles make 4x4 transposes in every
 * 128-bit lane; two rounds of lane shuffles put the lanes in place. */
__attribute__((target("avx512f"))) static inline void
sim_tr16x16_avx512(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss) {
  __m512 r[16], t[16], u[16], v[16];
  for (int k = 0; k < 16; k++)
    r[k] = _mm512_loadu_ps((const float *)(const void *)(s + k * ss));
  for (int m = 0; m < 8; m++) {
    t[2 * m] = _mm512_unpacklo_ps(r[2 * m], r[2 * m + 1]);
    t[2 * m + 1] = _mm512_unpackhi_ps(r[2 * m], r[2 * m + 1]);
  }
  for (int m = 0; m < 4; m++) {
    u[4 * m + 0] = _mm512_shuffle_ps(t[4 * m], t[4 * m + 2], 0x44);
    u[4 * m + 1] = _mm512_shuffle_ps(t[4 * m], t[4 * m + 2], 0xEE);
    u[4 * m + 2] = _mm512_shuffle_ps(t[4 * m + 1], t[4 * m + 3], 0x44);
    u[4 * m + 3] = _mm512_shuffle_ps(t[4 * m + 1], t[4 * m + 3], 0xEE);
  }
  /* u[4m + c], lane L: rows 4m..4m+3 of column 4L + c. */
  for (int c = 0; c < 4; c++) {
    v[c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
    v[4 + c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    v[8 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    v[12 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
  }
  for (int c = 0; c < 4; c++) {
    _mm512_storeu_ps((float *)(void *)(d + c * ds),
                     _mm512_shuffle_f32x4(v[c], v[8 + c], 0x88));
    _mm512_storeu_ps((float *)(void *)(d + (4 + c) * ds),
                     _mm512_shuffle_f32x4(v[4 + c], v[12 + c], 0x88));
    _mm512_storeu_ps((float *)(void *)(d + (8 + c) * ds),
                     _mm512_shuffle_f32x4(v[c], v[8 + c], 0xDD));
    _mm512_storeu_ps((float *)(void *)(d + (12 + c) * ds),
                     _mm512_shuffle_f32x4(v[4 + c], v[12 + c], 0xDD));
  }
}

/* A block in M x M micro-blocks by KERNEL, the ragged edges by FALLBACK. */
#define SIM_TR_SIMD_DEF(NAME, TARGET, KERNEL, M, ES, FALLBACK)              \
  __attribute__((target(TARGET))) static void NAME(                         \
      char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss, int64_t ni,       \
      int64_t nj) {                                                         \
    int64_t mi = ni - ni % (M), mj = nj - nj % (M);                         \
    for (int64_t j = 0; j < mj; j += (M))                                   \
      for (int64_t i = 0; i < mi; i += (M))                                 \
        KERNEL(d + i * ds + j * (ES), ds, s + j * ss + i * (ES), ss);       \
    if (mj < nj)                                                            \
      FALLBACK(d + mj * (ES), ds, s + mj * ss, ss, ni, nj - mj);            \
    if (mi < ni)                                                            \
      FALLBACK(d + mi * ds, ds, s + mi * (ES), ss, ni - mi, mj);            \
  }
SIM_TR_SIMD_DEF(sim_tr_4_avx2, "avx2", sim_tr8x8_avx2, 8, 4, sim_tr_4)
SIM_TR_SIMD_DEF(sim_tr_8_avx2, "avx2", sim_tr4x4_avx2, 4, 8, sim_tr_8)
SIM_TR_SIMD_DEF(sim_tr_4_avx512, "avx512f", sim_tr16x16_avx512, 16, 4,
                sim_tr_4)
#endif

/* The highest instruction set the kernels may use, whatever the CPU has:
 * XRT_SIM_ISA=portable (0), avx2 (1) or avx512 (2, the default), read
 * once.  valgrind (3.19) cannot run AVX-512 code, so `make test-valgrind`
 * sets portable; it also lets one compare the kernels on one machine. */
static int sim_isa_cap_level = 2;
static pthread_once_t sim_isa_cap_once = PTHREAD_ONCE_INIT;
static void sim_isa_cap_read(void) {
  const char *e = getenv("XRT_SIM_ISA");
  if (!e || !*e) return;
  if (!strcmp(e, "portable")) sim_isa_cap_level = 0;
  else if (!strcmp(e, "avx2")) sim_isa_cap_level = 1;
}
SIM_PRIVATE int sim_isa_cap(void) {
  pthread_once(&sim_isa_cap_once, sim_isa_cap_read);
  return sim_isa_cap_level;
}

/* The running CPU's best block transpose for element size es. */
static sim_tr_fn sim_tr_for(size_t es) {
  switch (es) {
  case 1: return sim_tr_1;
  case 2: return sim_tr_2;
#if SIM_TR_X86
  case 4:
    if (sim_isa_cap() >= 2 && __builtin_cpu_supports("avx512f"))
      return sim_tr_4_avx512;
    return sim_isa_cap() >= 1 && __builtin_cpu_supports("avx2")
               ? sim_tr_4_avx2 : sim_tr_4;
  case 8:
    return sim_isa_cap() >= 1 && __builtin_cpu_supports("avx2")
               ? sim_tr_8_avx2 : sim_tr_8;
#else
  case 4: return sim_tr_4;
  case 8: return sim_tr_8;
#endif
  default: return sim_tr_16;
  }
}

/* ---- a strided copy cut into items for sim_parallel_for ----
 * An item is part of the innermost loop for one outer index: a band of
 * SIM_TR_BAND rows of a tiled copy (swept along the other dimension), or
 * a piece of the innermost row of a plain one. */
#define SIM_TR_BAND 32

typedef struct sim_xjob {
  const sim_xcopy *x;
  char *d;
  const char *s;
  int nout;         /* outer dimensions */
  int64_t per;      /* items per outer index */
  int64_t piece;    /* elements of a plain row per item */
  sim_tr_fn tr;
} sim_xjob;

/* Item k of outer position (so, dof). */
static void sim_xjob_item(const sim_xjob *j, ptrdiff_t so, ptrdiff_t dof,
                          int64_t k) {
  const sim_xcopy *x = j->x;
  int b = x->rank - 1, a = b - 1;
  if (!x->tiled) {
    int64_t lo = k * j->piece, n = x->dims[b] - lo;
    x->inner(j->d + dof + lo * x->ds[b], j->s + so + lo * x->ss[b],
             n < j->piece ? n : j->piece, x->ds[b], x->ss[b]);
    return;
  }
  int64_t lo = k * SIM_TR_BAND, n = x->dims[a] - lo;
  /* dims[a] is contiguous in the source, dims[b] in the destination. */
  j->tr(j->d + dof + lo * x->ds[a], x->ds[a], j->s + so + lo * x->ss[a],
        x->ss[b], n < SIM_TR_BAND ? n : SIM_TR_BAND, x->dims[b]);
}

static void sim_xjob_range(void *ctx, int64_t begin, int64_t end) {
  const sim_xjob *j = (const sim_xjob *)ctx;
  const sim_xcopy *x = j->x;
  int64_t idx[XRT_MAX_RANK], o = begin / j->per, k = begin % j->per;
  ptrdiff_t so = x->sbase, dof = x->dbase;
  for (int q = j->nout - 1; q >= 0; q--) {
    idx[q] = o % x->dims[q];
    o /= x->dims[q];
    so += (ptrdiff_t)idx[q] * x->ss[q];
    dof += (ptrdiff_t)idx[q] * x->ds[q];
  }
  for (int64_t it = begin; it < end; it++) {
    sim_xjob_item(j, so, dof, k);
    if (++k < j->per) continue;
    k = 0;
    for (int q = j->nout - 1; q >= 0; q--) {
      so += x->ss[q];
      dof += x->ds[q];
      if (++idx[q] < x->dims[q]) break;
      so -= x->ss[q] * (ptrdiff_t)x->dims[q];
      dof -= x->ds[q] * (ptrdiff_t)x->dims[q];
      idx[q] = 0;
    }
  }
}

static size_t sim_inner_es(sim_inner_fn f) {
  return f == sim_inner_1 ? 1 : f == sim_inner_2 ? 2 : f == sim_inner_4 ? 4
       : f == sim_inner_8 ? 8 : 16;
}

/* sim_xcopy_run with blocked transposes, on the device's pool when big. */
static void sim_xcopy_par(sim_cx *cx, const sim_xcopy *x, char *dst,
                          const char *src) {
  if (x->empty) return;
  int64_t total = 1;
  for (int q = 0; q < x->rank; q++) total *= x->dims[q];
  size_t es = sim_inner_es(x->inner);
  size_t bytes = (size_t)total * es;
  if (!x->tiled && (!cx->tp || bytes < SIM_PAR_MIN)) {
    sim_xcopy_run(x, dst, src);
    return;
  }
  sim_xjob j = {x, dst, src, x->rank - (x->tiled ? 2 : 1), 1, 0, NULL};
  int b = x->rank - 1;
  if (x->tiled) {
    j.tr = sim_tr_for(es);
    j.per = (x->dims[b - 1] + SIM_TR_BAND - 1) / SIM_TR_BAND;
  } else {
    /* Rows longer than a chunk are cut in chunk-sized pieces. */
    int64_t ebytes = x->ds[b] < 0 ? -x->ds[b] : x->ds[b];
    int64_t chunk = (int64_t)SIM_PAR_GRAIN / (ebytes ? ebytes : 1);
    j.piece = x->dims[b] > chunk ? chunk : x->dims[b];
    j.per = (x->dims[b] + j.piece - 1) / j.piece;
  }
  int64_t items = total / x->dims[b] / (x->tiled ? x->dims[b - 1] : 1) * j.per;
  int64_t item_bytes = (int64_t)(bytes / (size_t)items) + 1;
  int64_t grain = (int64_t)SIM_PAR_GRAIN / item_bytes;
  if (bytes < SIM_PAR_MIN) grain = items; /* serial */
  sim_parallel_for(cx, items, grain < 1 ? 1 : grain, sim_xjob_range, &j);
}
