/*
 * src/sim/rng.c - random numbers: rng_bit_generator (Three fry,
 * Philox) and rng.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

static uint32_t sim_rotl32(uint32_t v, int r) {
  return (v << r) | (v >> (32 - r));
}

/* Threefry-2x32 with 20 rounds (Salmon et al. 2011), as XLA's prng.cc. */
static void sim_threefry2x32(uint32_t k0, uint32_t k1, uint32_t x[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 4; j++) {
      x[0] += x[1];
      x[1] = sim_rotl32(x[1], rot[(i % 2) * 4 + j]) ^ x[0];
    }
    x[0] += ks[(i + 1) % 3];
    x[1] += ks[(i + 2) % 3] + (uint32_t)(i + 1);
  }
}

/* Philox-4x32 with 10 rounds, as XLA's prng.cc. */
static void sim_philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4]) {
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u;
    uint64_t p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

typedef struct sim_rbg {
  int philox;            /* else three fry */
  int32_t rank, split;   /* three fry 32: the dimension split in halves */
  int64_t dims[XRT_MAX_RANK], numel, nstate;
  size_t es;             /* output element size */
  int bits;              /* output bit width */
  xrt_dtype ot;
} sim_rbg;

/* Stores the low bits of w as one output element. */
static void sim_rbg_put(const sim_rbg *g, void *out, int64_t i, uint64_t w) {
  char *p = (char *)out + (size_t)i * g->es;
  switch (g->es) {
  case 1: {
    uint8_t b = (uint8_t)(w & ((1u << (g->bits < 8 ? g->bits : 8)) - 1u));
    if (g->ot == XRT_S2 || g->ot == XRT_S4)
      b = (uint8_t)sim_wrap_int(g->ot, (int64_t)b);
    *(uint8_t *)p = b;
    break;
  }
  case 2: *(uint16_t *)(void *)p = (uint16_t)w; break;
  case 4: *(uint32_t *)(void *)p = (uint32_t)w; break;
  default: *(uint64_t *)(void *)p = w; break;
  }
}

/* Three fry, 32 bits or fewer: one counter per pair of elements along the
 * split dimension (XLA's SplitShapeIntoHalves); returns counters used. */
static uint64_t sim_rbg_threefry32(const sim_rbg *g, uint64_t key,
                                   uint64_t ctr, void *out) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  if (g->rank == 0) {
    uint32_t x[2] = {(uint32_t)ctr, (uint32_t)(ctr >> 32)};
    sim_threefry2x32(k0, k1, x);
    sim_rbg_put(g, out, 0, x[0]);
    return 1;
  }
  int64_t half[XRT_MAX_RANK], ostr[XRT_MAX_RANK], idx[XRT_MAX_RANK] = {0};
  xrt_shape s;
  memset(&s, 0, sizeof s);
  s.rank = g->rank;
  int64_t hn = 1;
  for (int32_t d = 0; d < g->rank; d++) {
    s.dims[d] = g->dims[d];
    half[d] = d == g->split ? (g->dims[d] + 1) / 2 : g->dims[d];
    hn *= half[d];
  }
  sim_strides(&s, ostr);
  if (hn == 0) return 0;
  for (int64_t h = 0; h < hn; h++) {
    uint64_t c = ctr + (uint64_t)h;
    uint32_t x[2] = {(uint32_t)c, (uint32_t)(c >> 32)};
    sim_threefry2x32(k0, k1, x);
    int64_t off = 0;
    for (int32_t d = 0; d < g->rank; d++)
      off += (d == g->split ? 2 * idx[d] : idx[d]) * ostr[d];
    sim_rbg_put(g, out, off, x[0]);
    if (2 * idx[g->split] + 1 < g->dims[g->split])
      sim_rbg_put(g, out, off + ostr[g->split], x[1]);
    sim_la_next(idx, half, g->rank);
  }
  return (uint64_t)hn;
}

static uint64_t sim_rbg_threefry64(const sim_rbg *g, uint64_t key,
                                   uint64_t ctr, void *out) {
  for (int64_t i = 0; i < g->numel; i++) {
    uint64_t c = ctr + (uint64_t)i;
    uint32_t x[2] = {(uint32_t)c, (uint32_t)(c >> 32)};
    sim_threefry2x32((uint32_t)key, (uint32_t)(key >> 32), x);
    sim_rbg_put(g, out, i, (uint64_t)x[0] | (uint64_t)x[1] << 32);
  }
  return (uint64_t)g->numel;
}

/* Philox: counter c (128 bits: lo, hi) + j gives four words per j, laid
 * out round robin; returns the number of counters used. */
static uint64_t sim_rbg_philox(const sim_rbg *g, uint64_t key, uint64_t lo,
                               uint64_t hi, void *out) {
  int wide = g->es == 8;
  int64_t words = wide ? 2 * g->numel : g->numel;
  uint64_t nv = (uint64_t)((words + 3) / 4);
  for (uint64_t j = 0; j < nv; j++) {
    uint64_t l = lo + j, h = l < lo ? hi + 1 : hi;
    uint32_t x[4] = {(uint32_t)l, (uint32_t)(l >> 32), (uint32_t)h,
                     (uint32_t)(h >> 32)};
    sim_philox4x32((uint32_t)key, (uint32_t)(key >> 32), x);
    for (int q = 0; q < (wide ? 2 : 4); q++) {
      int64_t i = (int64_t)j * (wide ? 2 : 4) + q;
      if (i >= g->numel) break;
      uint64_t w = wide ? (uint64_t)x[2 * q] | (uint64_t)x[2 * q + 1] << 32
                        : x[q];
      sim_rbg_put(g, out, i, w);
    }
  }
  return nv;
}

static xrt_status sim_run_rbg(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_rbg *g = (const sim_rbg *)st->data;
  const uint64_t *s = (const uint64_t *)vals[st->in[0]];
  uint64_t *ns = (uint64_t *)vals[st->out[0]];
  void *out = vals[st->out[1]];
  uint64_t key = s[0];
  (void)cx;
  if (!g->philox) {
    uint64_t used = g->es == 8 ? sim_rbg_threefry64(g, key, s[1], out)
                               : sim_rbg_threefry32(g, key, s[1], out);
    ns[0] = key;
    ns[1] = s[1] + used;
    return XRT_OK;
  }
  /* A 3-word state is (key, counter lo, counter hi); a 2-word one is
   * (key, counter lo) with the key doubling as counter hi, as XLA. */
  uint64_t lo = s[1], hi = g->nstate >= 3 ? s[2] : s[0];
  uint64_t used = sim_rbg_philox(g, key, lo, hi, out);
  uint64_t nl = lo + used;
  ns[0] = key;
  ns[1] = nl;
  if (g->nstate >= 3) ns[2] = nl < lo ? hi + 1 : hi;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_rng_bit_generator(sim_fcc *fc,
                                              const xrt_ir_op *op,
                                              sim_step *st) {
  if (op->num_operands != 1 || op->num_results != 2)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *S = sim_shape(fc, op->operands[0]);
  const xrt_shape *NS = sim_shape(fc, op->results[0]);
  const xrt_shape *O = sim_shape(fc, op->results[1]);
  const char *alg = sim_la_enum(op, "rng_algorithm");
  sim_rbg *g = (sim_rbg *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  g->philox = strcmp(alg, "THREE_FRY") != 0; /* DEFAULT is Philox, as XLA */
  g->nstate = S->rank == 1 ? S->dims[0] : 0;
  if (sim_esize(S->dtype) != 8 || S->rank != 1 || NS->rank != 1 ||
      NS->dims[0] != g->nstate ||
      (g->philox ? g->nstate != 2 && g->nstate != 3 : g->nstate != 2))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the state "
                       "must be a 64-bit tensor<%sxui64>", op->name,
                       g->philox ? "2 or 3" : "2");
  g->ot = O->dtype;
  g->es = sim_esize(O->dtype);
  g->bits = sim_ew_bits(O->dtype);
  if (!g->es || g->es > 8 || O->dtype == XRT_PRED ||
      sim_dtype_is_complex(O->dtype) || fc->f->value_types[op->results[1]].quant)
    return sim_unsupported_type(fc, op, O->dtype);
  g->rank = O->rank;
  g->numel = sim_numel(O);
  for (int32_t d = 0; d < O->rank; d++) g->dims[d] = O->dims[d];
  /* XLA splits the first even dimension, else the first largest one. */
  g->split = -1;
  for (int32_t d = 0; d < O->rank && g->split < 0; d++)
    if (O->dims[d] % 2 == 0) g->split = d;
  if (g->split < 0)
    for (int32_t d = 0; d < O->rank; d++)
      if (g->split < 0 || O->dims[d] > O->dims[g->split]) g->split = d;
  if (g->split < 0) g->split = 0;
  st->data = g;
  st->run = sim_run_rbg;
  return XRT_OK;
}

/* rng: numbers are Threefry-2x32 bits keyed by the op's source position
 * and counted per execution, so a compiled program draws the same
 * sequence every time it is compiled (the interpreter leaves the values
 * implementation-defined). */
typedef struct sim_rng {
  int normal;
  xrt_dtype t, st;     /* result and shape-operand element types */
  int64_t numel;
  int32_t rank;
  int64_t dims[XRT_MAX_RANK];
  uint64_t key;
  _Atomic uint64_t calls;
} sim_rng;

/* 64 random bits for element i of call `call`, stream s. */
static uint64_t sim_rng_bits(const sim_rng *r, uint64_t call, int64_t i,
                             uint32_t s) {
  uint32_t x[2] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32) ^ (s << 31)};
  sim_threefry2x32((uint32_t)r->key, (uint32_t)(r->key >> 32) ^ (uint32_t)call,
                   x);
  return (uint64_t)x[0] | (uint64_t)x[1] << 32;
}

static double sim_rng_unit(uint64_t b) { /* [0, 1) */
  return (double)(b >> 11) * (1.0 / 9007199254740992.0);
}

static void sim_rng_uniform(const sim_rng *r, sim_num a, sim_num b,
                            uint64_t call, void *out) {
  size_t es = sim_esize(r->t);
  for (int64_t i = 0; i < r->numel; i++) {
    char *p = (char *)out + (size_t)i * es;
    uint64_t bits = sim_rng_bits(r, call, i, 0);
    sim_num v = a;
    if (a.is_int) {
      uint64_t range = (uint64_t)b.i - (uint64_t)a.i;
      int up = r->t == XRT_U64 ? (uint64_t)b.i > (uint64_t)a.i : b.i > a.i;
      if (up)
        v.i = (int64_t)((uint64_t)a.i + bits % range);
      v.re = (double)v.i;
      sim_store(r->t, p, &v);
      continue;
    }
    v.re = a.re + (b.re - a.re) * sim_rng_unit(bits);
    sim_store(r->t, p, &v);
    sim_num back;
    sim_load(r->t, p, &back);
    if (a.re < b.re && back.re >= b.re) sim_store(r->t, p, &a); /* rounding */
  }
}

/* Box-Muller: mean a, standard deviation b. */
static void sim_rng_normal(const sim_rng *r, sim_num a, sim_num b,
                           uint64_t call, void *out) {
  const double two_pi = 6.28318530717958647692;
  size_t es = sim_esize(r->t);
  for (int64_t i = 0; i < r->numel; i++) {
    double u1 = 1.0 - sim_rng_unit(sim_rng_bits(r, call, i, 0)); /* (0,1] */
    double u2 = sim_rng_unit(sim_rng_bits(r, call, i, 1));
    sim_num v = {a.re + b.re * sqrt(-2.0 * log(u1)) * cos(two_pi * u2), 0, 0,
                 0};
    sim_store(r->t, (char *)out + (size_t)i * es, &v);
  }
}

static xrt_status sim_run_rng(const sim_step *st, void **vals, sim_cx *cx) {
  sim_rng *r = (sim_rng *)(uintptr_t)st->data; /* calls is the one field
                                                  that changes */
  const void *shape = vals[st->in[2]];
  for (int32_t d = 0; d < r->rank; d++)
    if (sim_la_geti(r->st, shape, d) != r->dims[d])
      return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "the shape "
                         "operand's dimension %d is %lld, the result's %lld",
                         (int)d, (long long)sim_la_geti(r->st, shape, d),
                         (long long)r->dims[d]);
  uint64_t call = r->calls++;
  sim_num a, b;
  sim_load(r->t, vals[st->in[0]], &a);
  sim_load(r->t, vals[st->in[1]], &b);
  if (r->normal) sim_rng_normal(r, a, b, call, vals[st->out[0]]);
  else sim_rng_uniform(r, a, b, call, vals[st->out[0]]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_rng(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  if (op->num_operands != 3 || op->num_results != 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const xrt_shape *S = sim_shape(fc, op->operands[2]);
  sim_rng *r = (sim_rng *)sim_palloc(fc, sizeof *r);
  if (!r) return XRT_RESOURCE_EXHAUSTED;
  r->normal = strcmp(sim_la_enum(op, "rng_distribution"), "NORMAL") == 0;
  r->t = O->dtype;
  r->st = S->dtype;
  if (S->rank != 1 || S->dims[0] != O->rank || sim_dtype_is_float(S->dtype) ||
      sim_dtype_is_complex(S->dtype) || !sim_num_supported(S->dtype))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: shape must "
                       "be a 1-D integer tensor of the result's rank",
                       op->name);
  if (!sim_num_supported(O->dtype) || sim_dtype_is_complex(O->dtype) ||
      (r->normal && !sim_dtype_is_float(O->dtype)))
    return sim_unsupported_type(fc, op, O->dtype);
  r->rank = O->rank;
  for (int32_t d = 0; d < O->rank; d++) r->dims[d] = O->dims[d];
  r->numel = sim_numel(O);
  /* FNV-1a of the source position: a fixed key per op. */
  uint64_t h = 1469598103934665603ull;
  int64_t parts[3] = {op->loc.line, op->loc.col, (int64_t)fc->pos};
  for (int i = 0; i < 3; i++) h = (h ^ (uint64_t)parts[i]) * 1099511628211ull;
  r->key = h;
  r->calls = 0;
  st->data = r;
  st->run = sim_run_rng;
  return XRT_OK;
}
