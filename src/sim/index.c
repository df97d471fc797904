/*
 * src/sim/index.c - indexing and windows: gather, scatter, dynamic slices,
 * reduce_window, select_and_scatter, dynamic shape ops.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ----------------------------------------------------------------------
 * Indexing and windows: gather, scatter, dynamic slices, reduce_window,
 * select_and_scatter, and the dynamic_* ops on static shapes.
 *
 * Data movement goes by element size (sim_xcopy), so every element type
 * works. Index values are read at run time from tensors of any integer
 * type. Regions (scatter's update_computation, reduce_window's body,
 * select_and_scatter's select and scatter) run per element like reduce's
 * body; a region that is one add/mul/max/min/and/or of its two arguments
 * runs as a typed loop instead.
 * -------------------------------------------------------------------- */

#define SIM_IX_MAXN 32 /* operands of a variadic scatter / reduce_window */
#define SIM_IX_BIG ((int64_t)1 << 56) /* |index| beyond any tensor */

/* ---- small helpers ---- */

SIM_PRIVATE int sim_ix_is_int(xrt_dtype t) {
  switch (t) {
  case XRT_S2: case XRT_S4: case XRT_S8: case XRT_S16: case XRT_S32:
  case XRT_S64: case XRT_U2: case XRT_U4: case XRT_U8: case XRT_U16:
  case XRT_U32: case XRT_U64: return 1;
  default: return 0;
  }
}

/* An index read at run time, saturated to +-2^56 so that sums of a few of
 * them never overflow. */
static int64_t sim_ix_load(xrt_dtype t, const void *p) {
  int64_t v;
  if (t == XRT_U64) {
    uint64_t u;
    memcpy(&u, p, sizeof u);
    v = u > (uint64_t)SIM_IX_BIG ? SIM_IX_BIG : (int64_t)u;
  } else {
    sim_num n;
    sim_load(t, p, &n);
    v = n.i;
  }
  return v > SIM_IX_BIG ? SIM_IX_BIG : v < -SIM_IX_BIG ? -SIM_IX_BIG : v;
}

static int64_t sim_ix_clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* A field of a dimension-numbers DICT: an INTS list (absent = empty). */
static const int64_t *sim_ix_field(const xrt_ir_attr *dn, const char *name,
                                   int64_t *n) {
  const xrt_ir_attr *a = sim_field(dn, name);
  *n = a && a->kind == XRT_ATTR_INTS ? a->n : 0;
  return *n ? a->ints : NULL;
}

static int64_t sim_ix_field_int(const xrt_ir_attr *dn, const char *name) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  return a && a->kind == XRT_ATTR_INT ? a->i : 0;
}

static int sim_ix_has(const int64_t *v, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* Every entry of v is a dimension below rank (and n fits a rank). */
static int sim_ix_dims_ok(const int64_t *v, int64_t n, int64_t rank) {
  if (n > XRT_MAX_RANK) return 0;
  for (int64_t i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= rank) return 0;
  return 1;
}

static xrt_status sim_ix_bad(sim_fcc *fc, const xrt_ir_op *op,
                             const char *what) {
  return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: bad %s",
                     op->name, what);
}

/* Compares n integers read at run time (any integer type) with want;
 * a located error names them when they differ. */
static xrt_status sim_ix_check_ints(const sim_step *st, sim_cx *cx,
                                    const void *p, xrt_dtype t,
                                    const int64_t *want, int32_t n,
                                    const char *what) {
  size_t es = sim_esize(t);
  for (int32_t i = 0; i < n; i++) {
    int64_t v = sim_ix_load(t, (const char *)p + (size_t)i * es);
    if (v != want[i])
      return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "%s: %s[%d] "
                         "is %lld at run time but the static result type "
                         "needs %lld", st->op->name, what, (int)i,
                         (long long)v, (long long)want[i]);
  }
  return XRT_OK;
}

/* ---- a region applied to one element (scatter, reduce_window, ...) ---- */

typedef struct sim_ix_body {
  int32_t n;
  const size_t *es;   /* per accumulator */
  sim_red_fn fast;    /* one binary op of both arguments, or NULL */
  xrt_opcode fast_code; /* that op */
  int keep;           /* 1: returns its 2nd argument, 2: its 1st */
  sim_plan plan;
  const int32_t *args, *rets;
  int32_t tmp;        /* n > 1: holds the results before they are stored */
  const size_t *toff;
} sim_ix_body;

/* acc[j] = body(acc[j]..., elem[j]...). */
static xrt_status sim_ix_apply(const sim_ix_body *b, void **vals,
                               sim_cx *cx, char *const *acc,
                               const char *const *elem) {
  if (b->fast) {
    b->fast(acc[0], elem[0], 1, 0);
    return XRT_OK;
  }
  if (b->keep) {
    if (b->keep == 1) memcpy(acc[0], elem[0], b->es[0]);
    return XRT_OK;
  }
  int32_t n = b->n;
  for (int32_t j = 0; j < n; j++) {
    vals[b->args[j]] = acc[j];
    vals[b->args[n + j]] = (void *)(uintptr_t)elem[j];
  }
  xrt_status rc = sim_run_plan(&b->plan, vals, cx);
  if (rc) return rc;
  if (n == 1) {
    memmove(acc[0], vals[b->rets[0]], b->es[0]);
    return XRT_OK;
  }
  char *tmp = (char *)vals[b->tmp]; /* a result may be another argument */
  for (int32_t j = 0; j < n; j++)
    memcpy(tmp + b->toff[j], vals[b->rets[j]], b->es[j]);
  for (int32_t j = 0; j < n; j++) memcpy(acc[j], tmp + b->toff[j], b->es[j]);
  return XRT_OK;
}

/* The region is one op of its two arguments (a typed loop), or returns one
 * of them unchanged. */
static void sim_ix_pick_fast(const sim_fcc *fc, const xrt_ir_region *r,
                             xrt_dtype t, sim_ix_body *b) {
  const xrt_ir_type *types = fc->f->value_types;
  if (r->num_args != 2 || r->num_ops < 1 || r->num_ops > 2) return;
  for (int i = 0; i < 2; i++)
    if (types[r->args[i]].quant || types[r->args[i]].shape.dtype != t ||
        types[r->args[i]].shape.rank != 0)
      return;
  const xrt_ir_op *term = &r->ops[r->num_ops - 1];
  if (term->num_operands != 1) return;
  int32_t a0 = r->args[0], a1 = r->args[1], res = term->operands[0];
  if (r->num_ops == 1) {
    b->keep = res == a1 ? 1 : res == a0 ? 2 : 0;
    return;
  }
  const xrt_ir_op *o = &r->ops[0];
  if (o->num_operands != 2 || o->num_results != 1 || o->num_regions ||
      res != o->results[0] || types[res].quant ||
      types[res].shape.dtype != t)
    return;
  if ((o->operands[0] == a0 && o->operands[1] == a1) ||
      (o->operands[0] == a1 && o->operands[1] == a0))
    b->fast = sim_red_pick(o->code, t);
  if (b->fast) b->fast_code = o->code;
}

/* Plans region k of op as a body over n accumulators of the given types. */
static xrt_status sim_ix_body_lower(sim_fcc *fc, const xrt_ir_op *op, int k,
                                    int32_t n, const xrt_dtype *types,
                                    sim_ix_body *b) {
  const xrt_ir_region *r = &op->regions[k];
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  if (!es) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t j = 0; j < n; j++) es[j] = sim_esize(types[j]);
  b->n = n;
  b->es = es;
  b->tmp = -1;
  if (r->num_args != 2 * n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "a region of "
                       "%s must take %d arguments", op->name, 2 * (int)n);
  for (int32_t j = 0; j < 2 * n; j++) {
    const xrt_ir_type *at = &fc->f->value_types[r->args[j]];
    if (at->kind != XRT_TYPE_TENSOR || sim_esize(at->shape.dtype) != es[j % n])
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: a region "
                         "argument type that differs from the operand's is "
                         "not supported by the simulator", op->name);
  }
  if (n == 1) {
    sim_ix_pick_fast(fc, r, types[0], b);
    if (b->fast || b->keep) return XRT_OK;
  } else {
    size_t *toff = (size_t *)sim_palloc(fc, sizeof *toff * (size_t)n);
    if (!toff) return XRT_RESOURCE_EXHAUSTED;
    size_t total = 0;
    for (int32_t j = 0; j < n; j++) {
      toff[j] = total;
      total += es[j];
    }
    b->toff = toff;
    xrt_status rc = sim_temp(fc, total, &b->tmp);
    if (rc) return rc;
  }
  b->args = r->args;
  return sim_lower_region(fc, r, &b->plan, &b->rets, n, op);
}

/* ======================================================================
 * gather and dynamic_gather
 * ==================================================================== */

typedef struct sim_gather {
  sim_xcopy win;      /* one slice into the result's offset dimensions */
  int64_t nb;         /* index vectors */
  const int64_t *rofs, *iofs, *bofs; /* per index vector, in elements:
                         result, start_indices, operand (batching dims) */
  int32_t nidx;
  int64_t istep;      /* elements between index vector components */
  int64_t ostr[XRT_MAX_RANK], hi[XRT_MAX_RANK]; /* per component */
  xrt_dtype it;
  size_t ies, es;
} sim_gather;

static xrt_status sim_run_gather(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_gather *g = (const sim_gather *)st->data;
  const char *src = (const char *)vals[st->in[0]];
  const char *idx = (const char *)vals[st->in[1]];
  char *out = (char *)vals[st->out[0]];
  (void)cx;
  if (g->win.empty) return XRT_OK;
  for (int64_t b = 0; b < g->nb; b++) {
    int64_t off = g->bofs[b];
    const char *ip = idx + (size_t)g->iofs[b] * g->ies;
    for (int32_t k = 0; k < g->nidx; k++) {
      int64_t v = sim_ix_load(g->it, ip + (size_t)(k * g->istep) * g->ies);
      off += sim_ix_clamp(v, 0, g->hi[k]) * g->ostr[k];
    }
    sim_xcopy_run(&g->win, out + (size_t)g->rofs[b] * g->es,
                  src + (size_t)off * g->es);
  }
  return XRT_OK;
}

/* The dimension numbers gather and scatter share, in this order: window
 * dimensions of W (the result or the updates), collapsed / inserted
 * dimensions of O, batching dimensions of O and of I, and the map from
 * index vector entries to dimensions of O; plus index_vector_dim. */
typedef struct sim_ixdn {
  const int64_t *f[5];
  int64_t n[5], ivd;
} sim_ixdn;

/* Reads the fields named in names[] into *x and checks them against the
 * operand O, the indices I and W; 0 when they are inconsistent. */
static int sim_ix_read_dn(const xrt_ir_attr *dn, const char *const names[5],
                          const xrt_shape *O, const xrt_shape *I,
                          const xrt_shape *W, sim_ixdn *x) {
  for (int k = 0; k < 5; k++) x->f[k] = sim_ix_field(dn, names[k], &x->n[k]);
  x->ivd = sim_ix_field_int(dn, "index_vector_dim");
  if (x->ivd < 0 || x->ivd > I->rank) return 0;
  int64_t nvec = x->ivd < I->rank ? I->dims[x->ivd] : 1;
  const int64_t ranks[5] = {W->rank, O->rank, O->rank, I->rank, O->rank};
  for (int k = 0; k < 5; k++)
    if (!sim_ix_dims_ok(x->f[k], x->n[k], ranks[k])) return 0;
  return x->n[4] == nvec && x->n[2] == x->n[3] &&
         x->n[0] + x->n[1] + x->n[2] == O->rank &&
         W->rank == x->n[0] + I->rank - (x->ivd < I->rank);
}

typedef struct sim_gdims {
  const int64_t *od, *csd, *obd, *sibd, *sim;
  int64_t nod, ncsd, nobd, nsibd, nsim, ivd;
} sim_gdims;

static xrt_status sim_gather_dims(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_gdims *d) {
  const xrt_ir_attr *dn = sim_attr(op, "dimension_numbers", XRT_ATTR_DICT);
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  static const char *const names[5] = {
      "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map"};
  sim_ixdn x;
  if (!dn) return sim_ix_bad(fc, op, "dimension_numbers");
  int ok = sim_ix_read_dn(dn, names, O, I, R, &x);
  d->od = x.f[0], d->nod = x.n[0];
  d->csd = x.f[1], d->ncsd = x.n[1];
  d->obd = x.f[2], d->nobd = x.n[2];
  d->sibd = x.f[3], d->nsibd = x.n[3];
  d->sim = x.f[4], d->nsim = x.n[4];
  d->ivd = x.ivd;
  if (!ok) return sim_ix_bad(fc, op, "dimension numbers");
  if (!sim_ix_is_int(I->dtype))
    return sim_unsupported_type(fc, op, I->dtype);
  return XRT_OK;
}

/* Per index vector: the result, start_indices and batching offsets. */
static xrt_status sim_gather_tables(sim_fcc *fc, const xrt_ir_op *op,
                                    const sim_gdims *d, sim_gather *g) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  int64_t ostr[XRT_MAX_RANK], istr[XRT_MAX_RANK], rstr[XRT_MAX_RANK];
  int64_t sizes[XRT_MAX_RANK], rs[XRT_MAX_RANK], is[XRT_MAX_RANK],
      bs[XRT_MAX_RANK];
  sim_strides(O, ostr);
  sim_strides(I, istr);
  sim_strides(R, rstr);
  int64_t nbd = 0, rd = 0, nb = 1;
  for (int32_t k = 0; k < I->rank; k++) {
    if (k == d->ivd) continue;
    while (sim_ix_has(d->od, d->nod, rd)) rd++; /* next result batch dim */
    if (R->dims[rd] != I->dims[k]) return sim_ix_bad(fc, op, "result shape");
    sizes[nbd] = I->dims[k];
    rs[nbd] = rstr[rd++];
    is[nbd] = istr[k];
    bs[nbd] = 0;
    for (int64_t i = 0; i < d->nsibd; i++)
      if (d->sibd[i] == k) bs[nbd] += ostr[d->obd[i]];
    nb *= sizes[nbd++];
  }
  size_t cnt = (size_t)(nb ? nb : 1);
  int64_t *rofs = (int64_t *)sim_palloc(fc, sizeof *rofs * cnt);
  int64_t *iofs = (int64_t *)sim_palloc(fc, sizeof *iofs * cnt);
  int64_t *bofs = (int64_t *)sim_palloc(fc, sizeof *bofs * cnt);
  if (!rofs || !iofs || !bofs) return XRT_RESOURCE_EXHAUSTED;
  sim_enum_offsets(nbd, sizes, rs, is, rofs, iofs);
  sim_enum_offsets(nbd, sizes, bs, NULL, bofs, NULL);
  g->nb = nb, g->rofs = rofs, g->iofs = iofs, g->bofs = bofs;
  g->istep = d->ivd < I->rank ? istr[d->ivd] : 0;
  return XRT_OK;
}

/* Gather with slice sizes S (an attribute, or inferred for dynamic_gather). */
static xrt_status sim_gather_plan(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st, const sim_gdims *d,
                                  const int64_t *S) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  sim_gather *g = (sim_gather *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  int64_t ostr[XRT_MAX_RANK], rstr[XRT_MAX_RANK];
  int64_t wd[XRT_MAX_RANK], ws[XRT_MAX_RANK], wr[XRT_MAX_RANK];
  sim_strides(O, ostr);
  sim_strides(R, rstr);
  int32_t j = 0;
  for (int32_t k = 0; k < O->rank; k++) {
    if (S[k] < 0 || S[k] > O->dims[k]) return sim_ix_bad(fc, op, "slice_sizes");
    if (sim_ix_has(d->csd, d->ncsd, k) || sim_ix_has(d->obd, d->nobd, k))
      continue;
    if (j >= d->nod || R->dims[d->od[j]] != S[k])
      return sim_ix_bad(fc, op, "result shape");
    wd[j] = S[k], ws[j] = ostr[k], wr[j] = rstr[d->od[j]];
    j++;
  }
  g->es = sim_esize(O->dtype);
  g->it = I->dtype;
  g->ies = sim_esize(I->dtype);
  sim_xcopy_init(&g->win, g->es, j, wd, ws, wr, 0, 0);
  if (sim_numel(R) == 0) g->win.empty = 1;
  g->nidx = (int32_t)d->nsim;
  for (int32_t k = 0; k < g->nidx; k++) {
    g->ostr[k] = ostr[d->sim[k]];
    g->hi[k] = O->dims[d->sim[k]] - S[d->sim[k]];
  }
  xrt_status rc = sim_gather_tables(fc, op, d, g);
  if (rc) return rc;
  st->data = g;
  st->run = sim_run_gather;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_gather(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  sim_gdims d = {0};
  const int64_t *S;
  int64_t ns;
  if (op->num_operands != 2) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_gather_dims(fc, op, &d);
  if (rc || (rc = sim_ints(fc, op, "slice_sizes", 1, &S, &ns))) return rc;
  if (ns != sim_shape(fc, op->operands[0])->rank)
    return sim_ix_bad(fc, op, "slice_sizes");
  return sim_gather_plan(fc, op, st, &d, S);
}

/* ---- shape operands checked at run time (dynamic_* on static shapes) ---- */

typedef struct sim_dyncheck {
  sim_run_fn run;     /* the wrapped kernel, or NULL (check only) */
  const void *data;
  int64_t n;
  int32_t operand;    /* which operand holds the sizes */
  xrt_dtype t;
  int32_t count;
  int64_t want[XRT_MAX_RANK];
  const char *what;
} sim_dyncheck;

static xrt_status sim_run_dyncheck(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const sim_dyncheck *c = (const sim_dyncheck *)st->data;
  xrt_status rc = sim_ix_check_ints(st, cx, vals[st->in[c->operand]], c->t,
                                    c->want, c->count, c->what);
  if (rc || !c->run) return rc;
  sim_step inner = *st;
  inner.run = c->run;
  inner.data = c->data;
  inner.n = c->n;
  return c->run(&inner, vals, cx);
}

/* Wraps the step st (already lowered) with a run-time check that operand k
 * holds the integers want[0..count). */
static xrt_status sim_ix_wrap_check(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st, int32_t k,
                                    const int64_t *want, int32_t count,
                                    const char *what) {
  const xrt_shape *s = sim_shape(fc, op->operands[k]);
  if (!sim_ix_is_int(s->dtype) || s->rank != 1 || s->dims[0] != count ||
      count > XRT_MAX_RANK)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s must "
                       "be a 1-d integer tensor of %d elements", op->name,
                       what, (int)count);
  sim_dyncheck *c = (sim_dyncheck *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->run = st->run;
  c->data = st->data;
  c->n = st->n;
  c->operand = k;
  c->t = s->dtype;
  c->count = count;
  for (int32_t i = 0; i < count; i++) c->want[i] = want[i];
  c->what = what;
  st->run = sim_run_dyncheck;
  st->data = c;
  return XRT_OK;
}

/* slice_sizes are an operand whose values must match the result type:
 * the static sizes follow from the result, the values are checked when
 * the op runs. */
SIM_PRIVATE xrt_status sim_lower_dynamic_gather(sim_fcc *fc, const xrt_ir_op *op,
                                           sim_step *st) {
  sim_gdims d = {0};
  if (op->num_operands != 3) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_gather_dims(fc, op, &d);
  if (rc) return rc;
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  int64_t S[XRT_MAX_RANK];
  int64_t j = 0;
  for (int32_t k = 0; k < O->rank; k++) {
    if (sim_ix_has(d.csd, d.ncsd, k) || sim_ix_has(d.obd, d.nobd, k))
      S[k] = 1;
    else
      S[k] = j < d.nod ? R->dims[d.od[j++]] : 0;
  }
  if ((rc = sim_gather_plan(fc, op, st, &d, S))) return rc;
  return sim_ix_wrap_check(fc, op, st, 2, S, O->rank, "slice_sizes");
}

/* ======================================================================
 * scatter
 * ==================================================================== */

typedef struct sim_scatter {
  sim_ix_body body;
  int32_t n;
  const size_t *bytes;              /* per input: the initial copy */
  int32_t urank;
  int64_t udims[XRT_MAX_RANK];
  int64_t unumel;
  uint8_t is_win[XRT_MAX_RANK];     /* per update dim: window or scatter */
  int64_t ipos[XRT_MAX_RANK];       /* scatter dim: start_indices stride */
  int32_t bop[XRT_MAX_RANK];        /* scatter dim: batching operand dim, -1 */
  int32_t wop[XRT_MAX_RANK];        /* window dim: its operand dim */
  int32_t nidx;
  int32_t sop[XRT_MAX_RANK];        /* index component: its operand dim */
  int64_t istep;
  xrt_dtype it;
  size_t ies;
  int32_t orank;
  int64_t odims[XRT_MAX_RANK], ostr[XRT_MAX_RANK];
} sim_scatter;

/* The start (start index + batching index) of the window that update
 * index u belongs to, per operand dimension. */
static void sim_scatter_start(const sim_scatter *s, const char *idx,
                              const int64_t *u, int64_t *start) {
  int64_t ioff = 0;
  for (int32_t d = 0; d < s->orank; d++) start[d] = 0;
  for (int32_t k = 0; k < s->urank; k++) {
    if (s->is_win[k]) continue;
    ioff += u[k] * s->ipos[k];
    if (s->bop[k] >= 0) start[s->bop[k]] += u[k];
  }
  for (int32_t k = 0; k < s->nidx; k++)
    start[s->sop[k]] += sim_ix_load(
        s->it, idx + (size_t)(ioff + k * s->istep) * s->ies);
}

/* The result offset of update index u, or -1 when it is out of bounds
 * (such updates are skipped, as the spec says). */
static int64_t sim_scatter_target(const sim_scatter *s, const int64_t *u,
                                  const int64_t *start) {
  int64_t full[XRT_MAX_RANK], off = 0;
  memcpy(full, start, sizeof(int64_t) * (size_t)s->orank);
  for (int32_t k = 0; k < s->urank; k++)
    if (s->is_win[k]) full[s->wop[k]] += u[k];
  for (int32_t d = 0; d < s->orank; d++) {
    if (full[d] < 0 || full[d] >= s->odims[d]) return -1;
    off += full[d] * s->ostr[d];
  }
  return off;
}

static xrt_status sim_run_scatter(const sim_step *st, void **vals,
                                  sim_cx *cx) {
  const sim_scatter *s = (const sim_scatter *)st->data;
  int32_t n = s->n;
  for (int32_t j = 0; j < n; j++)
    if (s->bytes[j] && vals[st->out[j]] != vals[st->in[j]])
      memcpy(vals[st->out[j]], vals[st->in[j]], s->bytes[j]);
  const char *idx = (const char *)vals[st->in[n]];
  int64_t u[XRT_MAX_RANK] = {0}, start[XRT_MAX_RANK];
  char *acc[SIM_IX_MAXN];
  const char *elem[SIM_IX_MAXN];
  int dirty = 1;
  for (int64_t e = 0; e < s->unumel; e++) {
    if (dirty) sim_scatter_start(s, idx, u, start);
    dirty = 0;
    int64_t off = sim_scatter_target(s, u, start);
    if (off >= 0) {
      for (int32_t j = 0; j < n; j++) {
        acc[j] = (char *)vals[st->out[j]] + (size_t)off * s->body.es[j];
        elem[j] = (const char *)vals[st->in[n + 1 + j]] +
                  (size_t)e * s->body.es[j];
      }
      xrt_status rc = sim_ix_apply(&s->body, vals, cx, acc, elem);
      if (rc) return rc;
    }
    for (int32_t k = s->urank - 1; k >= 0; k--) { /* row-major order */
      dirty |= !s->is_win[k];
      if (++u[k] < s->udims[k]) break;
      u[k] = 0;
    }
  }
  return XRT_OK;
}

typedef struct sim_sdims {
  const int64_t *uwd, *iwd, *ibd, *sibd, *sdod;
  int64_t nuwd, niwd, nibd, nsibd, nsdod, ivd;
} sim_sdims;

static xrt_status sim_scatter_dims(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_sdims *d, int32_t n) {
  const xrt_ir_attr *dn =
      sim_attr(op, "scatter_dimension_numbers", XRT_ATTR_DICT);
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[n]);
  const xrt_shape *U = sim_shape(fc, op->operands[n + 1]);
  static const char *const names[5] = {
      "update_window_dims", "inserted_window_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"};
  sim_ixdn x;
  if (!dn) return sim_ix_bad(fc, op, "scatter_dimension_numbers");
  int ok = sim_ix_read_dn(dn, names, O, I, U, &x);
  d->uwd = x.f[0], d->nuwd = x.n[0];
  d->iwd = x.f[1], d->niwd = x.n[1];
  d->ibd = x.f[2], d->nibd = x.n[2];
  d->sibd = x.f[3], d->nsibd = x.n[3];
  d->sdod = x.f[4], d->nsdod = x.n[4];
  d->ivd = x.ivd;
  if (!ok) return sim_ix_bad(fc, op, "scatter_dimension_numbers");
  if (!sim_ix_is_int(I->dtype))
    return sim_unsupported_type(fc, op, I->dtype);
  return XRT_OK;
}

/* Maps each update dimension to its role. */
static xrt_status sim_scatter_roles(sim_fcc *fc, const xrt_ir_op *op,
                                    const sim_sdims *d, sim_scatter *s) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[s->n]);
  int64_t istr[XRT_MAX_RANK];
  sim_strides(I, istr);
  int32_t wk = 0, ik = 0; /* next window operand dim, next indices dim */
  for (int32_t k = 0; k < s->urank; k++) {
    s->bop[k] = -1;
    if (sim_ix_has(d->uwd, d->nuwd, k)) {
      while (sim_ix_has(d->iwd, d->niwd, wk) || sim_ix_has(d->ibd, d->nibd, wk))
        wk++;
      s->is_win[k] = 1;
      s->wop[k] = wk++;
      continue;
    }
    if (ik == d->ivd) ik++;
    if (s->udims[k] != I->dims[ik]) return sim_ix_bad(fc, op, "updates shape");
    s->ipos[k] = istr[ik];
    for (int64_t i = 0; i < d->nsibd; i++)
      if (d->sibd[i] == ik) s->bop[k] = (int32_t)d->ibd[i];
    ik++;
  }
  s->nidx = (int32_t)d->nsdod;
  for (int32_t k = 0; k < s->nidx; k++) s->sop[k] = (int32_t)d->sdod[k];
  s->istep = d->ivd < I->rank ? istr[d->ivd] : 0;
  s->orank = O->rank;
  memcpy(s->odims, O->dims, sizeof s->odims);
  sim_strides(O, s->ostr);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_scatter(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  int32_t n = op->num_results;
  if (n < 1 || n > SIM_IX_MAXN || op->num_operands != 2 * n + 1 ||
      op->num_regions != 1)
    return sim_ix_bad(fc, op, "operands");
  sim_sdims d = {0};
  xrt_status rc = sim_scatter_dims(fc, op, &d, n);
  if (rc) return rc;
  sim_scatter *s = (sim_scatter *)sim_palloc(fc, sizeof *s);
  size_t *bytes = (size_t *)sim_palloc(fc, sizeof *bytes * (size_t)n);
  if (!s || !bytes) return XRT_RESOURCE_EXHAUSTED;
  xrt_dtype types[SIM_IX_MAXN];
  const xrt_shape *U = sim_shape(fc, op->operands[n + 1]);
  for (int32_t j = 0; j < n; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *up = sim_shape(fc, op->operands[n + 1 + j]);
    types[j] = sim_shape(fc, op->results[j])->dtype;
    bytes[j] = sim_bytes(in);
    if (sim_esize(in->dtype) != sim_esize(types[j]) ||
        sim_esize(up->dtype) != sim_esize(types[j]) ||
        bytes[j] != sim_bytes(sim_shape(fc, op->results[j])) ||
        sim_numel(up) != sim_numel(U))
      return sim_ix_bad(fc, op, "operand types");
  }
  s->n = n;
  s->bytes = bytes;
  s->urank = U->rank;
  memcpy(s->udims, U->dims, sizeof s->udims);
  s->unumel = sim_numel(U);
  const xrt_shape *I = sim_shape(fc, op->operands[n]);
  s->it = I->dtype;
  s->ies = sim_esize(I->dtype);
  if ((rc = sim_scatter_roles(fc, op, &d, s)) ||
      (rc = sim_ix_body_lower(fc, op, 0, n, types, &s->body))) return rc;
  st->data = s;
  st->run = sim_run_scatter;
  return XRT_OK;
}

/* ======================================================================
 * dynamic_slice and dynamic_update_slice
 * ==================================================================== */

typedef struct sim_dslice {
  sim_xcopy x;
  int32_t rank, first; /* first start-index operand */
  int64_t hi[XRT_MAX_RANK], str[XRT_MAX_RANK];
  xrt_dtype t[XRT_MAX_RANK];
  size_t es, bytes;    /* bytes: update_slice's initial copy */
  bool in_place;       /* update_slice writes into its operand's memory */
} sim_dslice;

/* Element offset of the clamped start indices. */
static int64_t sim_dslice_base(const sim_dslice *d, const sim_step *st,
                               void **vals) {
  int64_t base = 0;
  for (int32_t k = 0; k < d->rank; k++) {
    int64_t v = sim_ix_load(d->t[k], vals[st->in[d->first + k]]);
    base += sim_ix_clamp(v, 0, d->hi[k]) * d->str[k];
  }
  return base;
}

static xrt_status sim_run_dynamic_slice(const sim_step *st, void **vals,
                                        sim_cx *cx) {
  const sim_dslice *d = (const sim_dslice *)st->data;
  (void)cx;
  if (d->x.empty) return XRT_OK;
  int64_t base = sim_dslice_base(d, st, vals);
  sim_xcopy_run(&d->x, (char *)vals[st->out[0]],
                (const char *)vals[st->in[0]] + (size_t)base * d->es);
  return XRT_OK;
}

static xrt_status sim_run_dynamic_update_slice(const sim_step *st,
                                               void **vals, sim_cx *cx) {
  const sim_dslice *d = (const sim_dslice *)st->data;
  (void)cx;
  if (d->in_place) vals[st->out[0]] = vals[st->in[0]];
  char *out = (char *)vals[st->out[0]];
  if (d->bytes && out != vals[st->in[0]])
    memcpy(out, vals[st->in[0]], d->bytes);
  if (d->x.empty) return XRT_OK;
  int64_t base = sim_dslice_base(d, st, vals);
  sim_xcopy_run(&d->x, out + (size_t)base * d->es,
                (const char *)vals[st->in[1]]);
  return XRT_OK;
}

/* Makes st, if it is a dynamic_update_slice of value operand, update
 * that operand's memory in place: its result then lives where the operand
 * did (the caller has checked that nothing else reads the operand).  A
 * while loop uses it for state it updates slice by slice (an RNN's
 * outputs), which otherwise costs two copies of the whole state a step. */
SIM_PRIVATE bool sim_dus_update_in_place(sim_step *st, int32_t operand) {
  if (st->run != sim_run_dynamic_update_slice || st->nin < 2 ||
      st->nout != 1 || st->in[0] != operand)
    return false;
  ((sim_dslice *)(uintptr_t)st->data)->in_place = true; /* plan memory */
  return true;
}

/* The slice (or update) has shape W inside the operand O. */
static xrt_status sim_dslice_plan(sim_fcc *fc, const xrt_ir_op *op,
                                  const xrt_shape *O, const xrt_shape *W,
                                  int32_t first, sim_dslice *d) {
  if (W->rank != O->rank || op->num_operands != first + O->rank)
    return sim_ix_bad(fc, op, "operands");
  sim_strides(O, d->str);
  for (int32_t k = 0; k < O->rank; k++) {
    const xrt_shape *s = sim_shape(fc, op->operands[first + k]);
    if (W->dims[k] > O->dims[k]) return sim_ix_bad(fc, op, "slice sizes");
    if (!sim_ix_is_int(s->dtype) || s->rank != 0)
      return sim_ix_bad(fc, op, "start index");
    d->t[k] = s->dtype;
    d->hi[k] = O->dims[k] - W->dims[k];
  }
  d->rank = O->rank;
  d->first = first;
  d->es = sim_esize(O->dtype);
  d->bytes = sim_bytes(O);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_dynamic_slice(sim_fcc *fc, const xrt_ir_op *op,
                                          sim_step *st) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  sim_dslice *d = (sim_dslice *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_dslice_plan(fc, op, O, R, 1, d);
  if (rc) return rc;
  int64_t rstr[XRT_MAX_RANK];
  sim_strides(R, rstr);
  sim_xcopy_init(&d->x, d->es, R->rank, R->dims, d->str, rstr, 0, 0);
  st->data = d;
  st->run = sim_run_dynamic_slice;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_dynamic_update_slice(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st) {
  if (op->num_operands < 2) return sim_ix_bad(fc, op, "operands");
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *U = sim_shape(fc, op->operands[1]);
  sim_dslice *d = (sim_dslice *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_dslice_plan(fc, op, O, U, 2, d);
  if (rc) return rc;
  if (sim_esize(U->dtype) != d->es ||
      sim_bytes(sim_shape(fc, op->results[0])) != d->bytes)
    return sim_ix_bad(fc, op, "update type");
  int64_t ustr[XRT_MAX_RANK];
  sim_strides(U, ustr);
  sim_xcopy_init(&d->x, d->es, U->rank, U->dims, ustr, d->str, 0, 0);
  st->data = d;
  st->run = sim_run_dynamic_update_slice;
  return XRT_OK;
}

/* ======================================================================
 * reduce_window and select_and_scatter
 * ==================================================================== */

/* Window geometry: for result (or source) index i and window index k of
 * dimension d, tab[d][i * wdims[d] + k] is the operand element offset
 * along d, or -1 where the window covers padding (edges or the holes of
 * base dilation). */
typedef struct sim_win {
  int32_t rank;
  int64_t odims[XRT_MAX_RANK], wdims[XRT_MAX_RANK];
  int64_t onumel, wnumel;
  const int64_t *tab[XRT_MAX_RANK];
} sim_win;

typedef struct sim_win_attrs {
  const int64_t *wd, *ws, *bd, *wdl, *pad;
  int64_t nwd, nws, nbd, nwdl, npad;
} sim_win_attrs;

static xrt_status sim_win_attrs_get(sim_fcc *fc, const xrt_ir_op *op,
                                    int32_t rank, sim_win_attrs *a) {
  xrt_status rc = sim_ints(fc, op, "window_dimensions", 1, &a->wd, &a->nwd);
  if (rc || (rc = sim_ints(fc, op, "window_strides", 0, &a->ws, &a->nws)) ||
      (rc = sim_ints(fc, op, "base_dilations", 0, &a->bd, &a->nbd)) ||
      (rc = sim_ints(fc, op, "window_dilations", 0, &a->wdl, &a->nwdl)) ||
      (rc = sim_ints(fc, op, "padding", 0, &a->pad, &a->npad)))
    return rc;
  if (a->nwd != rank || (a->ws && a->nws != rank) ||
      (a->bd && a->nbd != rank) || (a->wdl && a->nwdl != rank) ||
      (a->pad && a->npad != 2 * rank))
    return sim_ix_bad(fc, op, "window attributes");
  for (int32_t d = 0; d < rank; d++) {
    int64_t v[5] = {a->wd[d], a->ws ? a->ws[d] : 1, a->bd ? a->bd[d] : 1,
                    a->wdl ? a->wdl[d] : 1, 1};
    for (int i = 0; i < 5; i++)
      if (v[i] < 1 || v[i] > ((int64_t)1 << 32))
        return sim_ix_bad(fc, op, "window attributes");
    if (a->pad && (a->pad[2 * d] < -SIM_IX_BIG || a->pad[2 * d] > SIM_IX_BIG))
      return sim_ix_bad(fc, op, "padding");
  }
  return XRT_OK;
}

/* The tables over operand shape X (strides in elements of X) for results
 * of shape R. */
static xrt_status sim_win_plan(sim_fcc *fc, const xrt_shape *X,
                               const xrt_shape *R, const sim_win_attrs *a,
                               sim_win *w) {
  int64_t xstr[XRT_MAX_RANK];
  sim_strides(X, xstr);
  w->rank = X->rank;
  w->onumel = sim_numel(R);
  w->wnumel = 1;
  if (w->onumel == 0) return XRT_OK; /* no windows: no tables */
  for (int32_t d = 0; d < X->rank; d++) {
    int64_t W = a->wd[d], S = a->ws ? a->ws[d] : 1;
    int64_t B = a->bd ? a->bd[d] : 1, D = a->wdl ? a->wdl[d] : 1;
    int64_t lo = a->pad ? a->pad[2 * d] : 0, n = R->dims[d];
    w->odims[d] = n;
    w->wdims[d] = W;
    w->wnumel *= W;
    if (n > (INT64_MAX / 16) / W) return sim_oom(fc); /* table too big */
    int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(n * W + 1));
    if (!t) return XRT_RESOURCE_EXHAUSTED;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < W; k++) {
        int64_t p = i * S + k * D - lo; /* in the padded, dilated operand */
        int ok = p >= 0 && p % B == 0 && p / B < X->dims[d];
        t[i * W + k] = ok ? (p / B) * xstr[d] : -1;
      }
    w->tab[d] = t;
  }
  return XRT_OK;
}

/* Operand offset of window element wi of result element ri, or -1. */
static int64_t sim_win_at(const sim_win *w, const int64_t *ri,
                          const int64_t *wi) {
  int64_t off = 0;
  for (int32_t d = 0; d < w->rank; d++) {
    int64_t t = w->tab[d][ri[d] * w->wdims[d] + wi[d]];
    if (t < 0) return -1;
    off += t;
  }
  return off;
}

static void sim_win_next(int32_t rank, const int64_t *dims, int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

typedef struct sim_rwin {
  sim_win w;
  sim_ix_body body;
  int32_t n;
  /* The dimensions the window spans (more than one element), for the
   * typed kernels below: span[1] is -1 for a window of one dimension. */
  int32_t span[2];
  int32_t rowtmp; /* separable kernels: two operand rows (and 32) of
                   * scratch for rows too long for the stack, else -1 */
  int64_t xw;     /* that row's length (the operand's last dimension) */
  sim_range_fn range;  /* fast kernels: the range of result rows/pixels */
  int64_t items, grain; /* their count, and the least per chunk */
  /* Separable kernels, a window of 2 or 3 columns at stride 2 (a max
   * pool): results [s2j0, s2j1) of a row have their whole window in the
   * row, from column s2c0 + 2 (j - s2j0); s2j1 = s2j0 when not so (or
   * fewer than 4 such results). */
  int64_t s2j0, s2j1, s2c0;
} sim_rwin;

/* The operand offset that the dimensions other than da and db (windows
 * of one element) give result index ri; *pad: one of them is padding. */
static inline int64_t sim_rwin_base(const sim_win *w, const int64_t *ri,
                                    int32_t da, int32_t db, int *pad) {
  int64_t base = 0;
  *pad = 0;
  for (int32_t d = 0; d < w->rank; d++) {
    if (d == da || d == db) continue;
    int64_t t = w->tab[d][ri[d]];
    *pad |= t < 0;
    base += t;
  }
  return base;
}

/* reduce_window of one f32 operand whose body is add, maximum or minimum
 * and whose window spans at most two dimensions (pooling): the other
 * dimensions give one offset per result element, the spanned ones are
 * walked directly, and the operation is inline.  Elements combine in the
 * order of the general path (row-major over the window, padding as the
 * init value), so results are the same bit for bit. */
#define SIM_RWIN_F32(NAME, COMB)                                              \
  static xrt_status NAME(const sim_step *st, void **vals, sim_cx *cx) {       \
    (void)cx;                                                                 \
    const sim_rwin *r = (const sim_rwin *)st->data;                           \
    const sim_win *w = &r->w;                                                 \
    const float *x = (const float *)vals[st->in[0]];                          \
    const float init = *(const float *)vals[st->in[1]];                       \
    float *out = (float *)vals[st->out[0]];                                   \
    static const int64_t none[1] = {0};                                       \
    int32_t da = r->span[0], db = r->span[1];                                 \
    int64_t wa = w->wdims[da], wb = db >= 0 ? w->wdims[db] : 1;               \
    int64_t ri[XRT_MAX_RANK] = {0};                                           \
    for (int64_t o = 0; o < w->onumel; o++) {                                 \
      int pad;                                                                \
      int64_t base = sim_rwin_base(w, ri, da, db, &pad);                      \
      const int64_t *ta = w->tab[da] + ri[da] * wa;                           \
      const int64_t *tb = db >= 0 ? w->tab[db] + ri[db] * wb : none;          \
      float acc = init;                                                       \
      for (int64_t ka = 0; ka < wa; ka++)                                     \
        for (int64_t kb = 0; kb < wb; kb++) {                                 \
          float e = pad || ta[ka] < 0 || tb[kb] < 0                           \
                        ? init                                                \
                        : x[base + ta[ka] + tb[kb]];                          \
          acc = COMB(acc, e);                                                 \
        }                                                                     \
      out[o] = acc;                                                           \
      sim_win_next(w->rank, w->odims, ri);                                    \
    }                                                                         \
    return XRT_OK;                                                            \
  }

#define SIM_RWIN_ADD(a, b) ((a) + (b))
#define SIM_RWIN_MAX(a, b) SIM_FMAX(a, b, a, b)
#define SIM_RWIN_MIN(a, b) SIM_FMIN(a, b, a, b)
SIM_RWIN_F32(sim_run_rwin_add_f32, SIM_RWIN_ADD)
SIM_RWIN_F32(sim_run_rwin_max_f32, SIM_RWIN_MAX)
SIM_RWIN_F32(sim_run_rwin_min_f32, SIM_RWIN_MIN)

#if defined(__GNUC__)
#if SIM_X86
#include <immintrin.h>
#endif
/* Fast max / min pools (and, channels last, sums), vectorized along the
 * operand's contiguous last dimension, split over the device's threads
 * and compiled once per instruction set (sim_isa_level).
 *
 * Separable (a window over the last two dimensions without dilation, an
 * NCHW pool): maximum and minimum do not depend on the order they combine
 * in (signed zeros included; of several NaNs, one is kept), so each
 * result row first combines the window's operand rows lane by lane
 * (vertical pass), then the window's columns of that row at every start
 * column (horizontal pass, unaligned loads), and each result whose window
 * lies inside the row takes its start column's value; the others combine
 * their columns one by one.  Both passes combine in window order from the
 * init value, skipping padding (combining the init value again changes
 * nothing for maximum and minimum).
 *
 * Channels last (the last dimension has a window of one element, stride
 * one and no padding: an NHWC pool): each result pixel combines its
 * window's operand pixels, sixteen channels at a time, in row-major
 * window order from the init value, padding as the init value: the order
 * of the general path, so sums agree bit for bit too.
 *
 * Lanes follow SIM_FMAX / SIM_FMIN: NaN wins (the first one met), +0 is
 * the larger zero. */
typedef float sim_rw_v16 __attribute__((vector_size(64)));
typedef int32_t sim_rw_i16 __attribute__((vector_size(64)));

#define SIM_RW_SEL(c, a, b)                                                   \
  ((sim_rw_v16)(((sim_rw_i16)(a) & (c)) | ((sim_rw_i16)(b) & ~(c))))
/* r = comb(a, b) lane by lane (r must not be a or b); ISMAX: maximum,
 * else minimum.  A NaN b needs no select of its own: a > b (a < b) is
 * false, so the first select already takes b, and a NaN a then wins. */
#define SIM_RW_COMB(r, a, b, ISMAX)                                           \
  do {                                                                        \
    sim_rw_i16 ai_ = (sim_rw_i16)(a), bi_ = (sim_rw_i16)(b);                  \
    sim_rw_v16 z_ = (sim_rw_v16)((ISMAX) ? (ai_ & bi_) : (ai_ | bi_));        \
    r = SIM_RW_SEL((ISMAX) ? (a) > (b) : (a) < (b), a, b);                    \
    r = SIM_RW_SEL((a) == (b), z_, r);                                        \
    r = SIM_RW_SEL((a) != (a), a, r);                                         \
  } while (0)
/* acc = comb(acc, e) for op 0 add, 1 maximum, 2 minimum. */
#define SIM_RW_ACC(OP, acc, e)                                                \
  do {                                                                        \
    sim_rw_v16 t_;                                                            \
    if ((OP) == 0) t_ = (acc) + (e);                                          \
    else SIM_RW_COMBI(t_, acc, e, (OP) == 1);                                 \
    acc = t_;                                                                 \
  } while (0)
#define SIM_RW_SACC(OP, acc, e)                                               \
  ((OP) == 0 ? (acc) + (e) : (OP) == 1 ? SIM_RWIN_MAX(acc, e)                \
                                       : SIM_RWIN_MIN(acc, e))

/* Scratch rows of the separable kernels on the stack up to this length;
 * longer rows use the step's scratch value on one thread. */
#define SIM_RW_STACK 1024

typedef struct sim_rw_job {
  const sim_rwin *r;
  const float *x;
  float *out;
  float init;
  float *tmp; /* 2 * (xw + 32) floats when xw > SIM_RW_STACK, else NULL */
} sim_rw_job;

/* ri[0, nd) = the row-major index idx over odims[0, nd). */
static void sim_rw_unravel(const sim_win *w, int32_t nd, int64_t idx,
                           int64_t *ri) {
  for (int32_t d = nd - 1; d >= 0; d--) {
    ri[d] = idx % w->odims[d];
    idx /= w->odims[d];
  }
}

/* The horizontal pass of a window of 2 or 3 columns at stride 2 (see
 * sim_rwin.s2j0), straight to the result row o from the vertical pass's
 * row tmp: per 16 results, the even and odd columns of 32 (and the even
 * ones from 2 on) combine in window order, as the general pass does (the
 * last 16 again in part; a run shorter than 16, a pool's 27-wide rows,
 * stores only its own; the loads stay inside tmp's 32 extra values, whose
 * lanes are never stored).  The results whose window meets the row's
 * ends go one by one, as in the general pass. */
#if SIM_V16_SHUFFLE
#define SIM_RW_EVEN SIM_V16_EVEN
#define SIM_RW_ODD SIM_V16_ODD
#define SIM_RW_HAVE_S2 1
#define SIM_RW_S2(OP)                                                         \
  do {                                                                        \
    int64_t j0_ = r->s2j0, j1_ = r->s2j1;                                     \
    for (int64_t jj = j0_; jj < j1_; jj += 16) {                              \
      int64_t n_ = 16; /* results stored: a short run stores its own */       \
      if (jj + 16 > j1_ && j1_ - j0_ >= 16)                                   \
        jj = j1_ - 16; /* the last 16, again in part */                       \
      else if (jj + 16 > j1_)                                                 \
        n_ = j1_ - jj;                                                        \
      const float *t_ = tmp + r->s2c0 + 2 * (jj - j0_);                       \
      sim_rw_v16 a_, b_, c_, d_, acc = iv;                                    \
      memcpy(&a_, t_, sizeof a_);                                             \
      memcpy(&b_, t_ + 16, sizeof b_);                                        \
      if (ident)                                                              \
        acc = SIM_RW_EVEN(a_, b_);                                            \
      else                                                                    \
        SIM_RW_ACC(OP, acc, SIM_RW_EVEN(a_, b_));                             \
      SIM_RW_ACC(OP, acc, SIM_RW_ODD(a_, b_));                                \
      if (wb == 3) {                                                          \
        memcpy(&c_, t_ + 2, sizeof c_);                                       \
        memcpy(&d_, t_ + 18, sizeof d_);                                      \
        SIM_RW_ACC(OP, acc, SIM_RW_EVEN(c_, d_));                             \
      }                                                                       \
      /* a constant size: a vector store, not a call; a short run's       \
       * spare lanes may land on results of this range that are written   \
       * later (the row's own after j1_, the next rows'), not past it */    \
      if (n_ == 16 || q * ob + jj + 16 <= e * ob)                             \
        memcpy(o + jj, &acc, sizeof acc);                                     \
      else                                                                    \
        memcpy(o + jj, &acc, (size_t)n_ * sizeof(float));                     \
    }                                                                         \
  } while (0)
#else
#define SIM_RW_S2(OP) ((void)0)
#endif

/* Result rows [b, e) of a separable pool.  Row tails are whole vectors
 * too: the vertical pass redoes the row's last 16 elements (a row
 * shorter than 16 goes through a buffer of init values); tmp holds the
 * row followed by 32 init values, so that the horizontal pass's loads
 * stay inside tmp and read defined values (the results of lanes past the
 * row are never used).  Scratch: tmp, xw rounded up to 16, + 32; then h,
 * the same rounded length. */
#define SIM_RW_SEP(NAME, OP, ATTR)                                            \
  ATTR static void NAME(void *ctx, int64_t b, int64_t e) {                    \
    const sim_rw_job *j = (const sim_rw_job *)ctx;                            \
    const sim_rwin *r = j->r;                                                 \
    const sim_win *w = &r->w;                                                 \
    const float init = j->init;                                               \
    SIM_RW_NAN_DECL;                                                          \
    float stack[2 * (SIM_RW_STACK + 32)];                                     \
    int64_t xw = r->xw, xr = (xw + 15) / 16 * 16;                             \
    float *tmp = j->tmp ? j->tmp : stack, *h = tmp + xr + 32;                 \
    int32_t da = w->rank - 2, db = w->rank - 1;                               \
    int64_t wa = w->wdims[da], wb = w->wdims[db], ob = w->odims[db];          \
    int64_t hn = xw >= wb ? xw - wb + 1 : 0;                                  \
    /* combining the init value first changes nothing (-inf for maximum,   \
     * +inf for minimum, NaN and signed zeros included): skipped */        \
    const int ident = (OP) == 1 ? init == -INFINITY : init == INFINITY;      \
    (void)ident;                                                              \
    int64_t ri[XRT_MAX_RANK] = {0};                                           \
    sim_rw_v16 iv;                                                            \
    for (int l = 0; l < 16; l++) iv[l] = init;                                \
    memcpy(tmp + xw, &iv, sizeof iv);                                         \
    memcpy(tmp + xw + 16, &iv, sizeof iv);                                    \
    sim_rw_unravel(w, db, b, ri);                                             \
    for (int64_t q = b; q < e; q++) {                                         \
      int pad;                                                                \
      int64_t base = sim_rwin_base(w, ri, da, db, &pad);                      \
      float *o = j->out + q * ob;                                             \
      const int64_t *ta = w->tab[da] + ri[da] * wa;                           \
      sim_win_next(db, w->odims, ri); /* for the next row */                  \
      if (pad) {                                                              \
        for (int64_t jj = 0; jj < ob; jj++) o[jj] = init;                     \
        continue;                                                             \
      }                                                                       \
      const float *xb = j->x + base;                                          \
      int64_t i = 0;                                                          \
      for (; i + 16 <= xw; i += 16) {                                         \
        sim_rw_v16 acc = iv, v;                                               \
        int fresh = ident; /* acc is the identity: the first row is it */    \
        for (int64_t ka = 0; ka < wa; ka++)                                   \
          if (ta[ka] >= 0) {                                                  \
            memcpy(&v, xb + ta[ka] + i, sizeof v);                            \
            SIM_RW_SEEN(OP, v);                                                \
            if (fresh)                                                        \
              acc = v, fresh = 0;                                             \
            else                                                              \
              SIM_RW_ACC(OP, acc, v);                                         \
          }                                                                   \
        memcpy(tmp + i, &acc, sizeof acc);                                    \
      }                                                                       \
      if (i < xw && xw >= 16) { /* the last 16, again in part */              \
        sim_rw_v16 acc = iv, v;                                               \
        i = xw - 16;                                                          \
        for (int64_t ka = 0; ka < wa; ka++)                                   \
          if (ta[ka] >= 0) {                                                  \
            memcpy(&v, xb + ta[ka] + i, sizeof v);                            \
            SIM_RW_SEEN(OP, v);                                                \
            SIM_RW_ACC(OP, acc, v);                                           \
          }                                                                   \
        memcpy(tmp + i, &acc, sizeof acc);                                    \
      } else if (i < xw) { /* a short row, through a buffer of init values */ \
        float lane[16];                                                       \
        sim_rw_v16 acc = iv, v;                                               \
        for (int64_t ka = 0; ka < wa; ka++)                                   \
          if (ta[ka] >= 0) {                                                  \
            memcpy(lane, &iv, sizeof lane);                                   \
            memcpy(lane, xb + ta[ka] + i, (size_t)(xw - i) * sizeof(float));  \
            memcpy(&v, lane, sizeof v);                                       \
            SIM_RW_SEEN(OP, v);                                                \
            SIM_RW_ACC(OP, acc, v);                                           \
          }                                                                   \
        memcpy(tmp + i, &acc, sizeof acc);                                    \
      }                                                                       \
      int s2 = r->s2j1 > r->s2j0; /* results [s2j0, s2j1) as vectors */     \
      if (s2)                                                                 \
        SIM_RW_S2(OP);                                                        \
      else                                                                    \
        for (i = 0; i < hn; i += 16) {                                        \
          sim_rw_v16 acc = iv, v;                                             \
          for (int64_t kb = 0; kb < wb; kb++) {                               \
            memcpy(&v, tmp + i + kb, sizeof v);                               \
            SIM_RW_ACC(OP, acc, v);                                           \
          }                                                                   \
          memcpy(h + i, &acc, sizeof acc);                                    \
        }                                                                     \
      for (int64_t jj = 0; jj < ob; jj++) {                                   \
        if (s2 && jj == r->s2j0) jj = r->s2j1;                                \
        if (jj >= ob) break;                                                  \
        const int64_t *tb = w->tab[db] + jj * wb;                             \
        if (!s2 && tb[0] >= 0 && tb[wb - 1] >= 0) {                           \
          o[jj] = h[tb[0]];                                                   \
          continue;                                                           \
        }                                                                     \
        float acc = init;                                                     \
        for (int64_t kb = 0; kb < wb; kb++)                                   \
          if (tb[kb] >= 0) acc = SIM_RW_SACC(OP, acc, tmp[tb[kb]]);           \
        o[jj] = acc;                                                          \
      }                                                                       \
    }                                                                         \
    SIM_RW_NAN_REDO(NAME, ctx, b, e);                                         \
  }

/* Result pixels [b, e) of a channels-last pool. */
#define SIM_RW_CL(NAME, OP, ATTR)                                             \
  ATTR static void NAME(void *ctx, int64_t b, int64_t e) {                    \
    const sim_rw_job *j = (const sim_rw_job *)ctx;                            \
    const sim_rwin *r = j->r;                                                 \
    const sim_win *w = &r->w;                                                 \
    const float init = j->init;                                               \
    SIM_RW_NAN_DECL;                                                          \
    static const int64_t none[1] = {0};                                       \
    int32_t last = w->rank - 1, da = r->span[0], db = r->span[1];             \
    int64_t C = w->odims[last], wa = w->wdims[da];                            \
    int64_t wb = db >= 0 ? w->wdims[db] : 1;                                  \
    int64_t ri[XRT_MAX_RANK] = {0};                                           \
    sim_rw_v16 iv;                                                            \
    for (int l = 0; l < 16; l++) iv[l] = init;                                \
    sim_rw_unravel(w, last, b, ri);                                           \
    for (int64_t p = b; p < e; p++) {                                         \
      int pad;                                                                \
      int64_t base = sim_rwin_base(w, ri, da, db, &pad);                      \
      const int64_t *ta = w->tab[da] + ri[da] * wa;                           \
      const int64_t *tb = db >= 0 ? w->tab[db] + ri[db] * wb : none;          \
      float *o = j->out + p * C;                                              \
      const float *xb = j->x + base;                                          \
      int64_t c = 0;                                                          \
      for (; c + 16 <= C; c += 16) {                                          \
        sim_rw_v16 acc = iv, v;                                               \
        for (int64_t ka = 0; ka < wa; ka++)                                   \
          for (int64_t kb = 0; kb < wb; kb++) {                               \
            if (pad || ta[ka] < 0 || tb[kb] < 0) v = iv;                      \
            else memcpy(&v, xb + ta[ka] + tb[kb] + c, sizeof v);              \
            SIM_RW_SEEN(OP, v);                                                \
            SIM_RW_ACC(OP, acc, v);                                           \
          }                                                                   \
        memcpy(o + c, &acc, sizeof acc);                                      \
      }                                                                       \
      for (; c < C; c++) {                                                    \
        float acc = init;                                                     \
        for (int64_t ka = 0; ka < wa; ka++)                                   \
          for (int64_t kb = 0; kb < wb; kb++) {                               \
            float v = pad || ta[ka] < 0 || tb[kb] < 0                         \
                          ? init                                              \
                          : xb[ta[ka] + tb[kb] + c];                          \
            acc = SIM_RW_SACC(OP, acc, v);                                    \
          }                                                                   \
        o[c] = acc;                                                           \
      }                                                                       \
      sim_win_next(last, w->odims, ri);                                       \
    }                                                                         \
    SIM_RW_NAN_REDO(NAME, ctx, b, e);                                         \
  }

/* Kernels per instruction set: [level][kind][op], kind 0 separable (op 1
 * maximum, 2 minimum), 1 channels last (op 0 add, 1, 2). */
#define SIM_RW_ISA(SUF, ATTR)                                                 \
  SIM_RW_SEP(sim_rwsep_max_##SUF, 1, ATTR)                                    \
  SIM_RW_SEP(sim_rwsep_min_##SUF, 2, ATTR)                                    \
  SIM_RW_CL(sim_rwcl_add_##SUF, 0, ATTR)                                      \
  SIM_RW_CL(sim_rwcl_max_##SUF, 1, ATTR)                                      \
  SIM_RW_CL(sim_rwcl_min_##SUF, 2, ATTR)
#define SIM_RW_SET(SUF)                                                       \
  {{NULL, sim_rwsep_max_##SUF, sim_rwsep_min_##SUF},                          \
   {sim_rwcl_add_##SUF, sim_rwcl_max_##SUF, sim_rwcl_min_##SUF}}

/* The exact kernels: every combine as SIM_RW_COMB. */
#define SIM_RW_COMBI SIM_RW_COMB
#define SIM_RW_SEEN(OP, v) ((void)0)
#define SIM_RW_NAN_DECL int nan_unused_ = 0
#define SIM_RW_NAN_REDO(NAME, ctx, b, e) (void)nan_unused_
SIM_RW_ISA(port, )
#if SIM_X86
SIM_RW_ISA(avx2, __attribute__((target("avx2"))))
SIM_RW_ISA(avx512, __attribute__((target("avx512f"))))
/* With AVX-512DQ, maximum and minimum are one VRANGEPS each (signed zeros
 * as SIM_FMAX / SIM_FMIN: +0 the larger) where SIM_RW_COMB takes seven
 * operations; but VRANGEPS returns the other operand of a NaN, so every
 * operand vector loaded is also checked for NaN, and a range that met
 * one runs again through the exact kernel of the same name without _dq
 * (its results rewritten whole).  NaN pools are rare; the check is one
 * compare into a mask register per load. */
#undef SIM_RW_COMBI
#undef SIM_RW_SEEN
#undef SIM_RW_NAN_DECL
#undef SIM_RW_NAN_REDO
#define SIM_RW_COMBI(r, a, b, ISMAX)                                          \
  r = (sim_rw_v16)_mm512_range_ps((__m512)(a), (__m512)(b),                   \
                                  (ISMAX) ? 0x5 : 0x4)
#define SIM_RW_SEEN(OP, v)                                                    \
  ((OP) != 0 ? (void)(nan_ |= _mm512_cmp_ps_mask((__m512)(v), (__m512)(v),   \
                                                 _CMP_UNORD_Q))              \
             : (void)0)
#define SIM_RW_NAN_DECL __mmask16 nan_ = init != init ? 1 : 0
#define SIM_RW_NAN_REDO(NAME, ctx, b, e)                                      \
  do {                                                                        \
    if (nan_) SIM_RW_EXACT(NAME)(ctx, b, e);                                  \
  } while (0)
#define SIM_RW_EXACT(NAME) SIM_RW_EXACT_(NAME)
#define SIM_RW_EXACT_(NAME) NAME##_exact
/* the exact kernel of a _dq one: the avx512 kernel of the same name */
#define sim_rwsep_max_avx512dq_exact sim_rwsep_max_avx512
#define sim_rwsep_min_avx512dq_exact sim_rwsep_min_avx512
#define sim_rwcl_add_avx512dq_exact sim_rwcl_add_avx512
#define sim_rwcl_max_avx512dq_exact sim_rwcl_max_avx512
#define sim_rwcl_min_avx512dq_exact sim_rwcl_min_avx512
#define SIM_RW_T_DQ __attribute__((target("avx512f,avx512dq")))
SIM_RW_ISA(avx512dq, SIM_RW_T_DQ)
static const sim_range_fn sim_rw_kernels[4][2][3] = {
    SIM_RW_SET(port), SIM_RW_SET(avx2), SIM_RW_SET(avx512),
    SIM_RW_SET(avx512dq)};

/* Max and min pools of 3x3 windows at stride 2 across, from the row's
 * start (padding only past its end, and down the rows: ceil mode), on
 * AVX-512DQ: SqueezeNet's and AlexNet's.  Per 16 results of a row, the
 * vertical ranges of the three rows (vectors A, B of columns c .. c + 31
 * and C of c + 32 ..) stay in registers: the even and odd lanes of A and
 * B and the even ones shifted by one lane (C's first appended) are the
 * window's three columns.  The separable kernel loops over the window's
 * rows per vector and stores the vertical row to read it back;
 * SqueezeNet's first pool (96 x 109 x 109) alone took 162-166 us there
 * and 106-110 here.  VRANGEPS as there: a NaN in a loaded vector (two
 * compares per three vectors) runs the range again exactly, as does an
 * init value other than the identity. */
/* V: the vertical range of the three rows' 16 columns from col (lanes in
 * mask M loaded, the rest the identity: columns past the row's end are
 * padding). */
#define SIM_RW3_VERT(V, col, M)                                               \
  do {                                                                        \
    if (!(M)) { /* all past the row's end (short rows: a third of it) */     \
      V = id;                                                                 \
      break;                                                                  \
    }                                                                         \
    __m512 v0_ = _mm512_mask_loadu_ps(id, M, x0 + (col));                     \
    __m512 v1_ = _mm512_mask_loadu_ps(id, M, x1 + (col));                     \
    __m512 v2_ = _mm512_mask_loadu_ps(id, M, x2 + (col));                     \
    nan_ |= _mm512_cmp_ps_mask(v0_, v1_, _CMP_UNORD_Q) |                      \
            _mm512_cmp_ps_mask(v2_, v2_, _CMP_UNORD_Q);                       \
    V = _mm512_range_ps(_mm512_range_ps(v0_, v1_, IMM), v2_, IMM);            \
  } while (0)
/* The lanes of the row from column c_ on (none past its end). */
#define SIM_RW3_MASK(c_)                                                      \
  (__mmask16)((c_) >= xw        ? 0                                           \
              : (c_) + 16 <= xw ? 0xFFFF                                      \
                                : (1u << (xw - (c_))) - 1)
/* Results jj .. jj + 15 of the row from A (columns 2 jj ..), B and C. */
#define SIM_RW3_OUT(n)                                                        \
  do {                                                                        \
    __m512 ev = _mm512_permutex2var_ps(A, even, B);                           \
    __m512 od = _mm512_permutex2var_ps(A, odd, B);                            \
    __m512 nx = _mm512_castsi512_ps(_mm512_alignr_epi32(                      \
        _mm512_castps_si512(C), _mm512_castps_si512(ev), 1));                 \
    __m512 res = _mm512_range_ps(_mm512_range_ps(ev, od, IMM), nx, IMM);      \
    _mm512_mask_storeu_ps(o + jj, (__mmask16)((1u << (n)) - 1), res);         \
    A = C;                                                                    \
  } while (0)
#define SIM_RW3S2(NAME, ISMAX, EXACT)                                         \
  SIM_RW_T_DQ static void NAME(void *ctx, int64_t b, int64_t e) {             \
    const sim_rw_job *j = (const sim_rw_job *)ctx;                            \
    const sim_rwin *r = j->r;                                                 \
    const sim_win *w = &r->w;                                                 \
    const float init = j->init;                                               \
    if (init != ((ISMAX) ? -INFINITY : INFINITY)) { /* not the identity */    \
      EXACT(ctx, b, e);                                                       \
      return;                                                                 \
    }                                                                         \
    enum { IMM = (ISMAX) ? 0x5 : 0x4 };                                       \
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, \
                                          12, 10, 8, 6, 4, 2, 0);             \
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15,  \
                                         13, 11, 9, 7, 5, 3, 1);              \
    const __m512 id = _mm512_set1_ps(init);                                   \
    int32_t da = w->rank - 2, db = w->rank - 1;                               \
    int64_t xw = r->xw, ob = w->odims[db];                                    \
    __mmask16 nan_ = 0;                                                       \
    int64_t ri[XRT_MAX_RANK] = {0};                                           \
    sim_rw_unravel(w, db, b, ri);                                             \
    for (int64_t q = b; q < e; q++) {                                         \
      int pad;                                                                \
      int64_t base = sim_rwin_base(w, ri, da, db, &pad);                      \
      float *o = j->out + q * ob;                                             \
      const int64_t *ta = w->tab[da] + ri[da] * 3;                            \
      sim_win_next(db, w->odims, ri);                                         \
      if (pad) {                                                              \
        for (int64_t jj = 0; jj < ob; jj++) o[jj] = init;                     \
        continue;                                                             \
      }                                                                       \
      const float *xb = j->x + base;                                          \
      /* a window row in the padding: another of its rows again (a range \
       * of a value with itself is the value) */                            \
      int64_t t0 = ta[0] >= 0 ? ta[0] : ta[1] >= 0 ? ta[1] : ta[2];           \
      int64_t t1 = ta[1] >= 0 ? ta[1] : t0, t2 = ta[2] >= 0 ? ta[2] : t1;     \
      const float *x0 = xb + t0, *x1 = xb + t1, *x2 = xb + t2;                \
      __m512 A, B, C;                                                         \
      const __mmask16 all = 0xFFFF;                                           \
      SIM_RW3_VERT(A, 0, SIM_RW3_MASK(0));                                    \
      int64_t jj = 0;                                                         \
      for (; jj + 16 <= ob && 2 * jj + 48 <= xw; jj += 16) {                  \
        SIM_RW3_VERT(B, 2 * jj + 16, all);                                    \
        SIM_RW3_VERT(C, 2 * jj + 32, all);                                    \
        SIM_RW3_OUT(16);                                                      \
      }                                                                       \
      for (; jj < ob; jj += 16) { /* the row's end: loads under masks */     \
        SIM_RW3_VERT(B, 2 * jj + 16, SIM_RW3_MASK(2 * jj + 16));              \
        SIM_RW3_VERT(C, 2 * jj + 32, SIM_RW3_MASK(2 * jj + 32));              \
        SIM_RW3_OUT(ob - jj >= 16 ? 16 : ob - jj);                            \
      }                                                                       \
    }                                                                         \
    if (nan_) EXACT(ctx, b, e);                                               \
  }
SIM_RW3S2(sim_rw3s2_max, 1, sim_rwsep_max_avx512)
SIM_RW3S2(sim_rw3s2_min, 0, sim_rwsep_min_avx512)

/* Whether r (separable) is one sim_rw3s2_* takes: 3x3 windows, window j
 * of a row its columns 2j .. 2j + 2 (those past the row's end padding),
 * each window down the rows with a row of the image, rows the exact
 * kernel it falls back on takes without scratch.  SqueezeNet's second
 * pool (ceil mode: 54 columns to 27) took 160 us in that kernel. */
static int sim_rw3s2_fits(const sim_rwin *r) {
  const sim_win *w = &r->w;
  int32_t da = w->rank - 2, db = w->rank - 1;
  if (w->wdims[da] != 3 || w->wdims[db] != 3 || r->xw > SIM_RW_STACK)
    return 0;
  for (int64_t j = 0; j < w->odims[db]; j++)
    for (int64_t k = 0; k < 3; k++) {
      int64_t c = 2 * j + k, t = w->tab[db][3 * j + k];
      if (c < r->xw ? t != c : t >= 0) return 0;
    }
  for (int64_t i = 0; i < w->odims[da]; i++) {
    const int64_t *t = w->tab[da] + 3 * i;
    if (t[0] < 0 && t[1] < 0 && t[2] < 0) return 0;
  }
  return 1;
}
#else
static const sim_range_fn sim_rw_kernels[1][2][3] = {SIM_RW_SET(port)};
#endif

static xrt_status sim_run_rw_fast(const sim_step *st, void **vals,
                                  sim_cx *cx) {
  const sim_rwin *r = (const sim_rwin *)st->data;
  sim_rw_job j = {r, (const float *)vals[st->in[0]],
                  (float *)vals[st->out[0]], *(const float *)vals[st->in[1]],
                  r->rowtmp >= 0 ? (float *)vals[r->rowtmp] : NULL};
  if (j.tmp) r->range(&j, 0, r->items); /* one scratch row: one thread */
  else sim_parallel_for(cx, r->items, r->grain, r->range, &j);
  return XRT_OK;
}

/* Sets r->s2j0, s2j1, s2c0 (see sim_rwin) for a separable pool. */
static void sim_rwin_stride2(sim_rwin *r) {
  const sim_win *w = &r->w;
  int32_t db = w->rank - 1;
  int64_t wb = w->wdims[db], ob = w->odims[db], j0 = 0, j1;
  const int64_t *tb = w->tab[db];
  r->s2j0 = r->s2j1 = r->s2c0 = 0;
#ifdef SIM_RW_HAVE_S2
  if (wb < 2 || wb > 3) return;
  while (j0 < ob && (tb[j0 * wb] < 0 || tb[j0 * wb + wb - 1] < 0)) j0++;
  for (j1 = j0; j1 < ob; j1++) {
    int whole = 1;
    for (int64_t k = 0; k < wb; k++)
      whole &= tb[j1 * wb + k] == tb[j0 * wb] + 2 * (j1 - j0) + k;
    if (!whole) break;
  }
  if (j1 - j0 < 4) return;
  r->s2j0 = j0, r->s2j1 = j1, r->s2c0 = j0 < ob ? tb[j0 * wb] : 0;
#else
  (void)wb, (void)ob, (void)j0, (void)j1, (void)tb;
#endif
}

/* The fast kernel for r when one applies (see above), else NULL. */
static sim_run_fn sim_rwin_fast(sim_fcc *fc, sim_rwin *r, const xrt_shape *X,
                                const sim_win_attrs *a) {
  const sim_win *w = &r->w;
  xrt_opcode code = r->body.fast_code;
  int op = code == XRT_OP_ADD ? 0 : code == XRT_OP_MAXIMUM ? 1
           : code == XRT_OP_MINIMUM ? 2 : -1;
  int32_t da = w->rank - 2, db = w->rank - 1;
  int level = 0;
#if SIM_X86
  level = sim_isa_level();
  if (level > 2) level = 2;
  if (level < 0) level = 0;
  if (level == 2 && __builtin_cpu_supports("avx512dq")) level = 3;
#endif
  if (op < 0 || w->rank < 1) return NULL;
  r->rowtmp = -1;
  /* About 16K operand elements per chunk. */
  int64_t work = w->wnumel;
  if (w->wdims[db] == 1) { /* channels last? */
    const int64_t *t = w->tab[db];
    if (X->dims[db] != w->odims[db]) return NULL;
    for (int64_t i = 0; i < w->odims[db]; i++)
      if (t[i] != i) return NULL;
    r->items = w->onumel / w->odims[db];
    work *= w->odims[db];
    r->range = sim_rw_kernels[level][1][op];
  } else {
    if (op == 0 || w->rank < 2 || r->span[0] != da || r->span[1] != db)
      return NULL;
    for (int32_t d = da; d <= db; d++)
      if ((a->bd && a->bd[d] != 1) || (a->wdl && a->wdl[d] != 1))
        return NULL;
    r->xw = X->dims[db];
    sim_rwin_stride2(r);
    r->items = w->onumel / w->odims[db];
    work = w->wdims[da] * r->xw;
    r->range = sim_rw_kernels[level][0][op];
#if SIM_X86
    if (level == 3 && sim_rw3s2_fits(r))
      r->range = op == 1 ? sim_rw3s2_max : sim_rw3s2_min;
#endif
    if (r->xw > SIM_RW_STACK &&
        (r->xw > (int64_t)(SIZE_MAX / 8) ||
         sim_temp(fc, sizeof(float) * 2 * (size_t)(r->xw + 32),
                  &r->rowtmp)))
      return NULL; /* the general kernel needs no scratch */
  }
  r->grain = work >= 16384 ? 1 : 16384 / (work > 0 ? work : 1);
  return sim_run_rw_fast;
}
#else
static sim_run_fn sim_rwin_fast(sim_fcc *fc, sim_rwin *r, const xrt_shape *X,
                                const sim_win_attrs *a) {
  (void)fc, (void)r, (void)X, (void)a;
  return NULL;
}
#endif

/* The typed kernel for r (see above), or NULL for the general path. */
static sim_run_fn sim_rwin_kernel(sim_rwin *r, xrt_dtype t) {
  const sim_win *w = &r->w;
  if (r->n != 1 || t != XRT_F32 || !r->body.fast || w->onumel == 0)
    return NULL;
  int32_t k = 0;
  r->span[0] = 0;
  r->span[1] = -1;
  for (int32_t d = 0; d < w->rank; d++)
    if (w->wdims[d] > 1) {
      if (k == 2) return NULL;
      r->span[k++] = d;
    }
  switch (r->body.fast_code) {
  case XRT_OP_ADD: return sim_run_rwin_add_f32;
  case XRT_OP_MAXIMUM: return sim_run_rwin_max_f32;
  case XRT_OP_MINIMUM: return sim_run_rwin_min_f32;
  default: return NULL;
  }
}

static xrt_status sim_run_reduce_window(const sim_step *st, void **vals,
                                        sim_cx *cx) {
  const sim_rwin *r = (const sim_rwin *)st->data;
  const sim_win *w = &r->w;
  int32_t n = r->n;
  int64_t ri[XRT_MAX_RANK] = {0};
  char *acc[SIM_IX_MAXN];
  const char *elem[SIM_IX_MAXN];
  for (int64_t o = 0; o < w->onumel; o++) {
    for (int32_t j = 0; j < n; j++) {
      acc[j] = (char *)vals[st->out[j]] + (size_t)o * r->body.es[j];
      memcpy(acc[j], vals[st->in[n + j]], r->body.es[j]);
    }
    int64_t wi[XRT_MAX_RANK] = {0};
    for (int64_t e = 0; e < w->wnumel; e++) {
      int64_t off = sim_win_at(w, ri, wi);
      for (int32_t j = 0; j < n; j++) /* padding holds the init value */
        elem[j] = off < 0 ? (const char *)vals[st->in[n + j]]
                          : (const char *)vals[st->in[j]] +
                                (size_t)off * r->body.es[j];
      xrt_status rc = sim_ix_apply(&r->body, vals, cx, acc, elem);
      if (rc) return rc;
      sim_win_next(w->rank, w->wdims, wi);
    }
    sim_win_next(w->rank, w->odims, ri);
  }
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_reduce_window(sim_fcc *fc, const xrt_ir_op *op,
                                          sim_step *st) {
  int32_t n = op->num_results;
  if (n < 1 || n > SIM_IX_MAXN || op->num_operands != 2 * n ||
      op->num_regions != 1)
    return sim_ix_bad(fc, op, "operands");
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  xrt_dtype types[SIM_IX_MAXN];
  for (int32_t j = 0; j < n; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *o = sim_shape(fc, op->results[j]);
    types[j] = o->dtype;
    if (sim_esize(in->dtype) != sim_esize(o->dtype) ||
        sim_esize(sim_shape(fc, op->operands[n + j])->dtype) !=
            sim_esize(o->dtype) ||
        sim_numel(in) != sim_numel(X) || sim_numel(o) != sim_numel(R) ||
        R->rank != X->rank)
      return sim_ix_bad(fc, op, "operand types");
  }
  sim_win_attrs a;
  sim_rwin *r = (sim_rwin *)sim_palloc(fc, sizeof *r);
  if (!r) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_win_attrs_get(fc, op, X->rank, &a);
  if (rc || (rc = sim_win_plan(fc, X, R, &a, &r->w)) ||
      (rc = sim_ix_body_lower(fc, op, 0, n, types, &r->body)))
    return rc;
  r->n = n;
  st->data = r;
  st->run = sim_rwin_kernel(r, types[0]);
  if (st->run) {
    sim_run_fn fast = sim_rwin_fast(fc, r, X, &a);
    if (fast) st->run = fast;
  }
  if (!st->run) st->run = sim_run_reduce_window;
  return XRT_OK;
}

typedef struct sim_sas {
  sim_win w;          /* over the operand, one window per source element */
  sim_plan sel;
  const int32_t *sargs;
  int32_t sret;
  sim_ix_body scat;
  size_t es;
  int64_t numel;      /* of the operand and result */
  sim_fill_fn fill;
} sim_sas;

/* The element of a window that the select region picks: the first one,
 * replaced by each later one for which select(chosen, later) is false. */
static xrt_status sim_sas_pick(const sim_step *st, const sim_sas *s,
                               void **vals, sim_cx *cx, const int64_t *si,
                               int64_t *pick) {
  const char *x = (const char *)vals[st->in[0]];
  int64_t wi[XRT_MAX_RANK] = {0};
  *pick = -1;
  for (int64_t e = 0; e < s->w.wnumel; e++) {
    int64_t off = sim_win_at(&s->w, si, wi);
    sim_win_next(s->w.rank, s->w.wdims, wi);
    if (off < 0) continue;
    if (*pick < 0) {
      *pick = off;
      continue;
    }
    vals[s->sargs[0]] = (void *)(uintptr_t)(x + (size_t)*pick * s->es);
    vals[s->sargs[1]] = (void *)(uintptr_t)(x + (size_t)off * s->es);
    xrt_status rc = sim_run_plan(&s->sel, vals, cx);
    if (rc) return rc;
    if (!*(const uint8_t *)vals[s->sret]) *pick = off;
  }
  return XRT_OK;
}

static xrt_status sim_run_select_and_scatter(const sim_step *st, void **vals,
                                             sim_cx *cx) {
  const sim_sas *s = (const sim_sas *)st->data;
  char *out = (char *)vals[st->out[0]];
  const char *src = (const char *)vals[st->in[1]];
  int64_t si[XRT_MAX_RANK] = {0};
  s->fill(out, (const char *)vals[st->in[2]], s->numel);
  for (int64_t o = 0; o < s->w.onumel; o++) {
    int64_t pick;
    xrt_status rc = sim_sas_pick(st, s, vals, cx, si, &pick);
    if (rc) return rc;
    if (pick >= 0) {
      char *acc = out + (size_t)pick * s->es;
      const char *elem = src + (size_t)o * s->es;
      if ((rc = sim_ix_apply(&s->scat, vals, cx, &acc, &elem))) return rc;
    }
    sim_win_next(s->w.rank, s->w.odims, si);
  }
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_select_and_scatter(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st) {
  if (op->num_operands != 3 || op->num_results != 1 || op->num_regions != 2)
    return sim_ix_bad(fc, op, "operands");
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  const xrt_shape *S = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  size_t es = sim_esize(X->dtype);
  if (S->rank != X->rank || sim_esize(S->dtype) != es ||
      sim_esize(R->dtype) != es || sim_numel(R) != sim_numel(X) ||
      sim_esize(sim_shape(fc, op->operands[2])->dtype) != es)
    return sim_ix_bad(fc, op, "operand types");
  sim_win_attrs a;
  sim_sas *s = (sim_sas *)sim_palloc(fc, sizeof *s);
  if (!s) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_win_attrs_get(fc, op, X->rank, &a);
  if (rc) return rc;
  a.bd = a.wdl = NULL; /* select_and_scatter has no dilations */
  if ((rc = sim_win_plan(fc, X, S, &a, &s->w))) return rc;
  const xrt_ir_region *sel = &op->regions[0];
  const int32_t *rets;
  if (sel->num_args != 2) return sim_ix_bad(fc, op, "select region");
  if ((rc = sim_lower_region(fc, sel, &s->sel, &rets, 1, op))) return rc;
  const xrt_shape *rs = sim_shape(fc, rets[0]);
  if (rs->dtype != XRT_PRED || rs->rank != 0)
    return sim_ix_bad(fc, op, "select region result");
  s->sargs = sel->args;
  s->sret = rets[0];
  xrt_dtype t = R->dtype;
  if ((rc = sim_ix_body_lower(fc, op, 1, 1, &t, &s->scat))) return rc;
  s->es = es;
  s->numel = sim_numel(R);
  s->fill = sim_fill_for(es);
  st->data = s;
  st->run = sim_run_select_and_scatter;
  return XRT_OK;
}

/* ======================================================================
 * dynamic_broadcast_in_dim, dynamic_iota, dynamic_pad, dynamic_reshape
 * ==================================================================== */

SIM_PRIVATE xrt_status sim_lower_dynamic_broadcast_in_dim(sim_fcc *fc,
                                                     const xrt_ir_op *op,
                                                     sim_step *st) {
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  if (op->num_operands != 2) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_lower_broadcast_in_dim(fc, op, st);
  if (rc) return rc;
  return sim_ix_wrap_check(fc, op, st, 1, R->dims, R->rank,
                           "output_dimensions");
}

SIM_PRIVATE xrt_status sim_lower_dynamic_iota(sim_fcc *fc, const xrt_ir_op *op,
                                         sim_step *st) {
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  if (op->num_operands != 1) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_lower_iota(fc, op, st); /* a constant */
  if (rc) return rc;
  return sim_ix_wrap_check(fc, op, st, 0, R->dims, R->rank, "output_shape");
}

SIM_PRIVATE xrt_status sim_lower_dynamic_reshape(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st) {
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  if (op->num_operands != 2) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_lower_reshape(fc, op, st);
  if (rc) return rc;
  return sim_ix_wrap_check(fc, op, st, 1, R->dims, R->rank, "output_shape");
}

/* dynamic_pad: the paddings are read when the op runs; they may differ
 * between runs as long as they give the static result shape. */
typedef struct sim_dpad {
  xrt_shape in, out;
  xrt_dtype lt, ht, it;
  size_t es;
  sim_fill_fn fill;
} sim_dpad;

static xrt_status sim_dpad_read(const sim_step *st, void **vals, sim_cx *cx,
                                const sim_dpad *p, int64_t *lo,
                                int64_t *inter) {
  const xrt_dtype ts[3] = {p->lt, p->ht, p->it};
  for (int32_t k = 0; k < p->in.rank; k++) {
    int64_t v[3];
    for (int i = 0; i < 3; i++)
      v[i] = sim_ix_load(ts[i], (const char *)vals[st->in[2 + i]] +
                                    (size_t)k * sim_esize(ts[i]));
    int64_t dim = p->in.dims[k], size = -1;
    if (v[2] >= 0 && (dim < 2 || v[2] <= (INT64_MAX / 4) / (dim - 1)))
      size = v[0] + v[1] + dim + (dim ? (dim - 1) * v[2] : 0);
    if (size != p->out.dims[k])
      return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "%s: "
                         "paddings (low %lld, high %lld, interior %lld) of "
                         "dimension %d at run time do not give the static "
                         "result size %lld", st->op->name, (long long)v[0],
                         (long long)v[1], (long long)v[2], (int)k,
                         (long long)p->out.dims[k]);
    lo[k] = v[0];
    inter[k] = v[2];
  }
  return XRT_OK;
}

static xrt_status sim_run_dynamic_pad(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const sim_dpad *p = (const sim_dpad *)st->data;
  int64_t lo[XRT_MAX_RANK], inter[XRT_MAX_RANK];
  xrt_status rc = sim_dpad_read(st, vals, cx, p, lo, inter);
  if (rc) return rc;
  int64_t ist[XRT_MAX_RANK], ost[XRT_MAX_RANK], dims[XRT_MAX_RANK];
  int64_t ss[XRT_MAX_RANK], ds[XRT_MAX_RANK], sbase = 0, dbase = 0;
  sim_strides(&p->in, ist);
  sim_strides(&p->out, ost);
  for (int32_t k = 0; k < p->in.rank; k++) { /* as sim_lower_pad */
    int64_t step = inter[k] + 1, j0;
    sim_pad_range(p->in.dims[k], p->out.dims[k], lo[k], step, &j0, &dims[k]);
    sbase += j0 * ist[k];
    dbase += (lo[k] + j0 * step) * ost[k];
    ss[k] = ist[k];
    ds[k] = step * ost[k];
    if (dims[k] == 0) sbase = dbase = 0;
  }
  sim_xcopy x;
  char *out = (char *)vals[st->out[0]];
  sim_xcopy_init(&x, p->es, p->in.rank, dims, ss, ds, sbase, dbase);
  p->fill(out, (const char *)vals[st->in[1]], sim_numel(&p->out));
  sim_xcopy_run(&x, out, (const char *)vals[st->in[0]]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_dynamic_pad(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  if (op->num_operands != 5) return sim_ix_bad(fc, op, "operands");
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  sim_dpad *p = (sim_dpad *)sim_palloc(fc, sizeof *p);
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  xrt_dtype ts[3];
  for (int i = 0; i < 3; i++) {
    const xrt_shape *s = sim_shape(fc, op->operands[2 + i]);
    if (!sim_ix_is_int(s->dtype) || s->rank != 1 || s->dims[0] != X->rank)
      return sim_ix_bad(fc, op, "padding operand");
    ts[i] = s->dtype;
  }
  if (R->rank != X->rank || sim_esize(R->dtype) != sim_esize(X->dtype) ||
      sim_esize(sim_shape(fc, op->operands[1])->dtype) != sim_esize(X->dtype))
    return sim_ix_bad(fc, op, "operand types");
  p->in = *X;
  p->out = *R;
  p->lt = ts[0], p->ht = ts[1], p->it = ts[2];
  p->es = sim_esize(X->dtype);
  p->fill = sim_fill_for(p->es);
  st->data = p;
  st->run = sim_run_dynamic_pad;
  return XRT_OK;
}
