/*
 * src/sim/control.c - while, func.call, custom_call; if, case, map, sort,
 * composite, tuples and tokens, host I/O, chlo.scan.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

static void *sim_while_other(const sim_while *w, void **vals, int32_t i) {
  void *a = vals[w->bufa[i]];
  return vals[w->bargs[i]] == a ? vals[w->bufb[i]] : a;
}

/* Whether the body left result i where argument i is: its own argument
 * returned unchanged (weights, inputs carried through a loop), or state
 * updated in place (see sim_while_in_place in lower.c). */
static bool sim_while_kept(const sim_while *w, void **vals, int32_t i) {
  return w->brets[i] == w->bargs[i] || vals[w->brets[i]] == vals[w->bargs[i]];
}

/* The body's results become the next iteration's arguments, each in the
 * buffer the arguments do not use; a result already in its argument's
 * buffer stays there, uncopied.  (Only copies happen in the first pass,
 * so the second sees the same pointers.)  A carry the body returns
 * unchanged (weights) is read from the while's operand for the whole loop
 * (nothing writes it): not copied in, and copied out only when something
 * reads that result. */
static void sim_while_advance(const sim_while *w, void **vals) {
  for (int32_t i = 0; i < w->n; i++) {
    void *o = sim_while_other(w, vals, i);
    if (w->bytes[i] && !sim_while_kept(w, vals, i) && o != vals[w->brets[i]])
      memcpy(o, vals[w->brets[i]], w->bytes[i]);
  }
  for (int32_t i = 0; i < w->n; i++)
    if (!sim_while_kept(w, vals, i))
      vals[w->bargs[i]] = vals[w->cargs[i]] = sim_while_other(w, vals, i);
}

SIM_PRIVATE xrt_status sim_run_while(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_while *w = (const sim_while *)st->data;
  for (int32_t i = 0; i < w->n; i++) {
    /* a carry the body returns unchanged is read where it is */
    void *a = w->thru[i] ? vals[st->in[i]] : vals[w->bufa[i]];
    if (w->bytes[i] && !w->thru[i]) memcpy(a, vals[st->in[i]], w->bytes[i]);
    vals[w->bargs[i]] = vals[w->cargs[i]] = a;
  }
  for (int32_t i = 0; i < w->nflags; i++)
    memset(vals[w->flags[i]], 0, 16);
  for (;;) {
    xrt_status rc = sim_run_plan(&w->cond, vals, cx);
    if (rc) return rc;
    if (!*(const uint8_t *)vals[w->cret]) break;
    /* results written where the next iteration reads them */
    for (int32_t i = 0; i < w->n; i++)
      if (w->redir[i]) vals[w->brets[i]] = sim_while_other(w, vals, i);
    if ((rc = sim_run_plan(&w->body, vals, cx))) return rc;
    sim_while_advance(w, vals);
  }
  for (int32_t i = 0; i < w->n; i++)
    if (w->obytes[i] && vals[st->out[i]] != vals[w->bargs[i]])
      memcpy(vals[st->out[i]], vals[w->bargs[i]], w->obytes[i]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_run_call(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_call *c = (const sim_call *)st->data;
  const sim_fplan *fp = c->fp;
  void **cv = cx->allvals + fp->vbase;
  for (int32_t i = 0; i < st->nin; i++) cv[fp->args[i]] = vals[st->in[i]];
  xrt_status rc = sim_run_plan(&fp->body, cv, cx);
  if (rc) return rc;
  for (int32_t i = 0; i < st->nout; i++)
    if (c->bytes[i]) memcpy(vals[st->out[i]], cv[fp->rets[i]], c->bytes[i]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_run_custom_call(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const sim_ccall *c = (const sim_ccall *)st->data;
  const xrt_ir_op *op = st->op;
  int32_t nt = st->nin + st->nout;
  xrt_host_tensor *t = nt ? (xrt_host_tensor *)vals[c->tmp] : NULL;
  if (nt) memcpy(t, c->tmpl, sizeof *t * (size_t)nt);
  for (int32_t i = 0; i < st->nin; i++) t[i].data = vals[st->in[i]];
  for (int32_t i = 0; i < st->nout; i++)
    t[st->nin + i].data = vals[st->out[i]];
  char msg[sizeof cx->err->message];
  msg[0] = 0;
  xrt_host_call call = {c->target, op, st->nin, t, st->nout,
                        t ? t + st->nin : NULL, msg, sizeof msg};
  xrt_status rc = c->host.fn(c->host.user, &call);
  if (rc == XRT_OK) return XRT_OK;
  char prefix[320];
  sim_loc(op, prefix, sizeof prefix);
  if (!msg[0])
    return sim_fail_op(cx->err, op, rc, "%s @%s failed (code %d)",
                       op->code == XRT_OP_CUSTOM_CALL ? "custom_call"
                                                      : op->name,
                       c->target, (int)rc);
  if (strncmp(msg, prefix, strlen(prefix)) == 0) /* already located */
    return sim_fail(cx->err, rc, "%s", msg);
  return sim_fail_op(cx->err, op, rc, "%s", msg);
}
/* ----------------------------------------------------------------------
 * Control flow and structure: if, case, map, sort, composite, tuples,
 * tokens and host-callback I/O, chlo.scan.
 *
 * Tuple values are flat blocks (see sim_type_bytes), tokens hold no bytes,
 * so region results of any kind are moved with memmove of their bytes.
 * -------------------------------------------------------------------- */

/* An elementwise kernel for an op inside a region (its context, if the
 * kernel needs a malloc'd one, is freed with the executable). */
static sim_ew_fn sim_ctrl_ew(sim_fcc *fc, const xrt_ir_op *op,
                             const void **ctx) {
  int owned = 0;
  const xrt_allocator *al = &fc->cc->al;
  /* Out of memory only loses this fast path: the region is interpreted. */
  sim_ew_fn fn = sim_ew_kernel(al, fc->f, op, ctx, &owned, NULL, 0);
  if (fn && owned && *ctx) {
    void **slot = (void **)sim_vec_push(al, &fc->cc->exe->owned_ctx);
    if (!slot) {
      al->free(al->self, (void *)(uintptr_t)*ctx);
      return NULL;
    }
    *slot = (void *)(uintptr_t)*ctx;
  }
  return fn;
}

/* Bytes of each result of op (pool memory), or NULL when out of memory. */
static size_t *sim_ctrl_result_bytes(sim_fcc *fc, const xrt_ir_op *op) {
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(op->num_results + 1));
  for (int32_t i = 0; b && i < op->num_results; i++)
    b[i] = sim_vbytes(fc, op->results[i]);
  return b;
}

/* ======================================================================
 * if and case: run one region, copy its results
 * ==================================================================== */

typedef struct sim_branch {
  int32_t nb;              /* branches */
  int is_if;               /* if: branch 0 when the predicate is true */
  const sim_plan *plans;   /* per branch */
  const int32_t **rets;    /* per branch: the values it returns */
  const size_t *bytes;     /* per result */
} sim_branch;

static xrt_status sim_run_branch(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_branch *b = (const sim_branch *)st->data;
  int32_t k;
  if (b->is_if) {
    k = *(const uint8_t *)vals[st->in[0]] ? 0 : 1;
  } else { /* an index out of range runs the last branch (the default) */
    int32_t i;
    memcpy(&i, vals[st->in[0]], sizeof i);
    k = i < 0 || i >= b->nb ? b->nb - 1 : i;
  }
  xrt_status rc = sim_run_plan(&b->plans[k], vals, cx);
  if (rc) return rc;
  for (int32_t j = 0; j < st->nout; j++)
    if (b->bytes[j]) memmove(vals[st->out[j]], vals[b->rets[k][j]], b->bytes[j]);
  return XRT_OK;
}

static xrt_status sim_lower_branches(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st, int is_if) {
  const xrt_shape *p = sim_shape(fc, op->operands[0]);
  if (op->num_operands != 1 || op->num_regions < 1 ||
      (is_if && op->num_regions != 2) || p->rank != 0 ||
      p->dtype != (is_if ? XRT_PRED : XRT_S32))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  int32_t nb = op->num_regions;
  sim_branch *b = (sim_branch *)sim_palloc(fc, sizeof *b);
  sim_plan *plans = (sim_plan *)sim_palloc(fc, sizeof *plans * (size_t)nb);
  const int32_t **rets =
      (const int32_t **)sim_palloc(fc, sizeof *rets * (size_t)nb);
  size_t *bytes = sim_ctrl_result_bytes(fc, op);
  if (!b || !plans || !rets || !bytes) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t k = 0; k < nb; k++) {
    if (op->regions[k].num_args != 0)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "a branch "
                         "of %s takes no arguments", op->name);
    xrt_status rc = sim_lower_region(fc, &op->regions[k], &plans[k], &rets[k],
                                     op->num_results, op);
    if (rc) return rc;
    for (int32_t j = 0; j < op->num_results; j++)
      if (sim_vbytes(fc, rets[k][j]) != bytes[j])
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "branch %d "
                           "of %s returns a value of the wrong type at "
                           "position %d", (int)k, op->name, (int)j);
  }
  b->nb = nb;
  b->is_if = is_if;
  b->plans = plans;
  b->rets = rets;
  b->bytes = bytes;
  st->data = b;
  st->run = sim_run_branch;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_if(sim_fcc *fc, const xrt_ir_op *op,
                               sim_step *st) {
  return sim_lower_branches(fc, op, st, 1);
}

SIM_PRIVATE xrt_status sim_lower_case(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_branches(fc, op, st, 0);
}

/* ======================================================================
 * map: the region per element, or its single elementwise op at once
 * ==================================================================== */

typedef struct sim_map {
  int64_t n;              /* elements */
  const size_t *es;       /* element size per operand */
  size_t oes;
  sim_plan body;
  const int32_t *bargs;
  int32_t bret;
  sim_ew_fn fast;         /* the body is one elementwise op of the args */
  const void *fast_ctx;
  const int32_t *perm;    /* fast: kernel input k is operand perm[k] */
  int32_t nperm;
} sim_map;

static xrt_status sim_run_map(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_map *m = (const sim_map *)st->data;
  char *out = (char *)vals[st->out[0]];
  if (m->fast) {
    void *in[SIM_MAX_EW_IN];
    for (int32_t k = 0; k < m->nperm; k++) in[k] = vals[st->in[m->perm[k]]];
    if (m->n) m->fast(in, out, (size_t)m->n, m->fast_ctx);
    return XRT_OK;
  }
  for (int64_t e = 0; e < m->n; e++) {
    for (int32_t i = 0; i < st->nin; i++)
      vals[m->bargs[i]] = (char *)vals[st->in[i]] + (size_t)e * m->es[i];
    xrt_status rc = sim_run_plan(&m->body, vals, cx);
    if (rc) return rc;
    memcpy(out + (size_t)e * m->oes, vals[m->bret], m->oes);
  }
  return XRT_OK;
}

/* A body "%r = OP %argI, %argJ...; return %r" runs as one kernel call. */
static void sim_map_fast(sim_fcc *fc, const xrt_ir_op *op, sim_map *m) {
  const xrt_ir_region *r = &op->regions[0];
  if (r->num_ops != 2) return;
  const xrt_ir_op *b = &r->ops[0], *t = &r->ops[1];
  if (b->num_results != 1 || b->num_regions || b->num_operands > SIM_MAX_EW_IN ||
      !sim_ew_handles(b->code) || t->num_operands != 1 ||
      t->operands[0] != b->results[0])
    return;
  int32_t *perm = (int32_t *)sim_palloc(fc, sizeof *perm * (size_t)(b->num_operands + 1));
  if (!perm) return;
  for (int32_t k = 0; k < b->num_operands; k++) {
    perm[k] = -1;
    for (int32_t i = 0; i < r->num_args; i++)
      if (b->operands[k] == r->args[i]) perm[k] = i;
    if (perm[k] < 0) return;
  }
  const void *ctx = NULL;
  sim_ew_fn fn = sim_ctrl_ew(fc, b, &ctx);
  if (!fn) return;
  m->fast = fn;
  m->fast_ctx = ctx;
  m->perm = perm;
  m->nperm = b->num_operands;
}

SIM_PRIVATE xrt_status sim_lower_map(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int32_t n = op->num_operands;
  if (n < 1 || op->num_results != 1 || op->num_regions != 1 ||
      op->regions[0].num_args != n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad map");
  sim_map *m = (sim_map *)sim_palloc(fc, sizeof *m);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  if (!m || !es) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < n; i++) {
    const xrt_shape *s = sim_shape(fc, op->operands[i]);
    if (sim_numel(s) != sim_numel(o))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "map operands and result differ in shape");
    es[i] = sim_esize(s->dtype);
  }
  m->n = sim_numel(o);
  m->es = es;
  m->oes = sim_esize(o->dtype);
  sim_map_fast(fc, op, m);
  if (!m->fast) {
    const int32_t *rets;
    xrt_status rc = sim_lower_region(fc, &op->regions[0], &m->body, &rets, 1, op);
    if (rc) return rc;
    if (sim_vbytes(fc, rets[0]) != m->oes)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "the map "
                         "body must return one element of the result type");
    m->bargs = op->regions[0].args;
    m->bret = rets[0];
  }
  st->data = m;
  st->run = sim_run_map;
  return XRT_OK;
}

/* ======================================================================
 * sort: a stable merge sort of indices per line, driven by the comparator
 * ==================================================================== */

typedef struct sim_sort {
  int32_t n;                /* operands (= results) */
  int64_t outer, len, inner; /* elements = outer * len * inner */
  const size_t *es;
  sim_plan cmp;             /* comparator region, when not fast */
  const int32_t *cargs;     /* 2n: lhs and rhs element of each operand */
  int32_t cret;
  sim_ew_fn fast;           /* comparator = one compare of operand fk */
  const void *fast_ctx;
  int32_t fk;
  int fswap;                /* the compare reads (rhs, lhs) */
  int32_t tidx;             /* pseudo value: 2 * len int64 indices */
} sim_sort;

/* comparator(a, b) for elements at offsets a and b (in elements). */
static xrt_status sim_sort_less(const sim_step *st, const sim_sort *s,
                                void **vals, sim_cx *cx, int64_t a, int64_t b,
                                int *less) {
  if (s->fast) {
    int32_t k = s->fk;
    void *in[2];
    uint8_t r = 0;
    in[s->fswap] = (char *)vals[st->in[k]] + (size_t)a * s->es[k];
    in[1 - s->fswap] = (char *)vals[st->in[k]] + (size_t)b * s->es[k];
    s->fast(in, &r, 1, s->fast_ctx);
    *less = r != 0;
    return XRT_OK;
  }
  for (int32_t k = 0; k < s->n; k++) {
    char *base = (char *)vals[st->in[k]];
    vals[s->cargs[2 * k]] = base + (size_t)a * s->es[k];
    vals[s->cargs[2 * k + 1]] = base + (size_t)b * s->es[k];
  }
  xrt_status rc = sim_run_plan(&s->cmp, vals, cx);
  if (rc) return rc;
  *less = *(const uint8_t *)vals[s->cret] != 0;
  return XRT_OK;
}

/* Bottom-up merge sort of idx[0..len) (element offsets base + i*inner);
 * a right element moves ahead only when strictly less: stable.  Returns
 * the buffer holding the sorted order in *sorted. */
static xrt_status sim_sort_line(const sim_step *st, const sim_sort *s,
                                void **vals, sim_cx *cx, int64_t base,
                                int64_t *idx, int64_t *tmp,
                                int64_t **sorted) {
  int64_t len = s->len, inner = s->inner;
  for (int64_t i = 0; i < len; i++) idx[i] = i;
  int64_t *src = idx, *dst = tmp;
  for (int64_t w = 1; w < len; w *= 2) {
    for (int64_t lo = 0; lo < len; lo += 2 * w) {
      int64_t mid = lo + w < len ? lo + w : len;
      int64_t hi = mid + w < len ? mid + w : len, i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        int less = 0;
        xrt_status rc = sim_sort_less(st, s, vals, cx, base + src[j] * inner,
                                      base + src[i] * inner, &less);
        if (rc) return rc;
        dst[o++] = less ? src[j++] : src[i++];
      }
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  *sorted = src;
  return XRT_OK;
}

static xrt_status sim_run_sort(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_sort *s = (const sim_sort *)st->data;
  if (s->len == 0 || s->outer == 0 || s->inner == 0) return XRT_OK;
  int64_t *idx = (int64_t *)vals[s->tidx], *tmp = idx + s->len;
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t in = 0; in < s->inner; in++) {
      int64_t base = o * s->len * s->inner + in, *perm;
      xrt_status rc = sim_sort_line(st, s, vals, cx, base, idx, tmp, &perm);
      if (rc) return rc;
      for (int32_t k = 0; k < s->n; k++) {
        size_t es = s->es[k];
        const char *src = (const char *)vals[st->in[k]];
        char *dst = (char *)vals[st->out[k]];
        for (int64_t j = 0; j < s->len; j++)
          memcpy(dst + (size_t)(base + j * s->inner) * es,
                 src + (size_t)(base + perm[j] * s->inner) * es, es);
      }
    }
  return XRT_OK;
}

/* The comparator "%p = compare %argX, %argY; return %p" where X, Y are the
 * lhs and rhs of one operand runs as the compare kernel itself. */
static void sim_sort_fast(sim_fcc *fc, const xrt_ir_op *op, sim_sort *s) {
  const xrt_ir_region *r = &op->regions[0];
  if (r->num_ops != 2) return;
  const xrt_ir_op *c = &r->ops[0], *t = &r->ops[1];
  if (c->code != XRT_OP_COMPARE || c->num_operands != 2 ||
      c->num_results != 1 || t->num_operands != 1 ||
      t->operands[0] != c->results[0])
    return;
  for (int32_t k = 0; k < s->n; k++) {
    int32_t l = r->args[2 * k], h = r->args[2 * k + 1];
    int swap;
    if (c->operands[0] == l && c->operands[1] == h) swap = 0;
    else if (c->operands[0] == h && c->operands[1] == l) swap = 1;
    else continue;
    const void *ctx = NULL;
    sim_ew_fn fn = sim_ctrl_ew(fc, c, &ctx);
    if (!fn) return;
    s->fast = fn;
    s->fast_ctx = ctx;
    s->fk = k;
    s->fswap = swap;
    return;
  }
}

SIM_PRIVATE xrt_status sim_lower_sort(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  int32_t n = op->num_operands;
  int64_t dim = 0;
  xrt_status rc = XRT_OK;
  const xrt_ir_attr *da = sim_attr(op, "dimension", XRT_ATTR_INT);
  if (da) dim = da->i;
  else dim = -1; /* the spec default */
  if (n < 1 || op->num_results != n || op->num_regions != 1 ||
      op->regions[0].num_args != 2 * n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad sort");
  const xrt_shape *s0 = sim_shape(fc, op->operands[0]);
  if (dim < 0) dim += s0->rank;
  if (s0->rank > 0 && (dim < 0 || dim >= s0->rank))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "sort "
                       "dimension is out of range");
  sim_sort *s = (sim_sort *)sim_palloc(fc, sizeof *s);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  if (!s || !es) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t k = 0; k < n; k++) {
    const xrt_shape *sk = sim_shape(fc, op->operands[k]);
    if (sk->rank != s0->rank || sim_numel(sk) != sim_numel(s0) ||
        sim_vbytes(fc, op->results[k]) != sim_bytes(sk))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "sort "
                         "operands and results must have one shape");
    es[k] = sim_esize(sk->dtype);
  }
  s->n = n;
  s->es = es;
  s->outer = s->inner = 1;
  s->len = s0->rank ? s0->dims[dim] : 1;
  for (int32_t d = 0; d < s0->rank; d++) {
    if (d < dim) s->outer *= s0->dims[d];
    if (d > dim) s->inner *= s0->dims[d];
  }
  sim_sort_fast(fc, op, s);
  if (!s->fast) {
    const int32_t *rets;
    rc = sim_lower_region(fc, &op->regions[0], &s->cmp, &rets, 1, op);
    if (rc) return rc;
    const xrt_ir_type *rt = &fc->f->value_types[rets[0]];
    if (rt->kind != XRT_TYPE_TENSOR || rt->shape.dtype != XRT_PRED ||
        rt->shape.rank != 0)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "the sort "
                         "comparator must return tensor<i1>");
    s->cargs = op->regions[0].args;
    s->cret = rets[0];
  }
  rc = sim_temp(fc, sizeof(int64_t) * 2 * (size_t)(s->len ? s->len : 1),
                &s->tidx);
  st->data = s;
  st->run = sim_run_sort;
  return rc;
}

/* ======================================================================
 * composite: a call of its decomposition function
 * ==================================================================== */

SIM_PRIVATE xrt_status sim_lower_composite(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  const xrt_ir_attr *d = sim_attr(op, "decomposition", XRT_ATTR_SYMBOL);
  const xrt_ir_module *m = fc->cc->m;
  if (!d || !d->s)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "composite "
                       "needs the symbol attribute 'decomposition'");
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (m->funcs[i].name && !strcmp(m->funcs[i].name, d->s))
      return sim_lower_call_to(fc, op, st, i);
  return sim_fail_op(fc->cc->err, op, XRT_NOT_FOUND, "composite "
                     "decomposition @%s is not a function of the module", d->s);
}

/* ======================================================================
 * Tuples and tokens
 * ==================================================================== */

/* Copies operand i into the result block at offs[i]. */
static xrt_status sim_run_tuple(const sim_step *st, void **vals, sim_cx *cx) {
  const size_t *offs = (const size_t *)st->data, *bytes = offs + st->nin;
  char *out = (char *)vals[st->out[0]];
  (void)cx;
  for (int32_t i = 0; i < st->nin; i++)
    if (bytes[i]) memcpy(out + offs[i], vals[st->in[i]], bytes[i]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_tuple(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  const xrt_ir_type *t = &fc->f->value_types[op->results[0]];
  if (op->num_results != 1 || t->kind != XRT_TYPE_TUPLE ||
      t->num_elems != op->num_operands)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad tuple");
  int32_t n = op->num_operands;
  size_t *d = (size_t *)sim_palloc(fc, sizeof *d * (size_t)(2 * n + 1));
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < n; i++) {
    d[i] = sim_tuple_off(t, i);
    d[n + i] = sim_vbytes(fc, op->operands[i]);
    if (d[n + i] != sim_type_bytes(&t->elems[i]))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "tuple "
                         "element %d has the wrong type", (int)i);
  }
  st->data = d;
  st->run = sim_run_tuple;
  return XRT_OK;
}

/* st->n bytes from the operand at byte offset *(size_t *)data. */
static xrt_status sim_run_copy_from(const sim_step *st, void **vals,
                                    sim_cx *cx) {
  (void)cx;
  if (st->n)
    memcpy(vals[st->out[0]],
           (const char *)vals[st->in[0]] + *(const size_t *)st->data,
           (size_t)st->n);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_get_tuple_element(sim_fcc *fc, const xrt_ir_op *op,
                                              sim_step *st) {
  const xrt_ir_type *t = &fc->f->value_types[op->operands[0]];
  int64_t k = 0;
  xrt_status rc = sim_int_attr(fc, op, "index", &k);
  if (rc) return rc;
  if (op->num_operands != 1 || op->num_results != 1 ||
      t->kind != XRT_TYPE_TUPLE || k < 0 || k >= t->num_elems ||
      sim_type_bytes(&t->elems[k]) != sim_vbytes(fc, op->results[0]))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad get_tuple_element");
  size_t *off = (size_t *)sim_palloc(fc, sizeof *off);
  if (!off) return XRT_RESOURCE_EXHAUSTED;
  *off = sim_tuple_off(t, (int32_t)k);
  st->data = off;
  st->n = (int64_t)sim_vbytes(fc, op->results[0]);
  st->run = sim_run_copy_from;
  return XRT_OK;
}

/* A token carries no data: after_all orders nothing in a sequential
 * simulator, so it has no step. */
SIM_PRIVATE xrt_status sim_lower_after_all(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  (void)st;
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (fc->f->value_types[id].kind != XRT_TYPE_TOKEN)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "after_all takes and makes tokens");
  }
  return XRT_OK;
}

/* ======================================================================
 * infeed, outfeed, send, recv: host functions xrt.infeed ... on tensors
 * ==================================================================== */

/* The tensor values of ids[0..n) (pool memory). */
static int32_t *sim_ctrl_tensors(sim_fcc *fc, const int32_t *ids, int32_t n,
                                 int32_t *count) {
  int32_t *t = (int32_t *)sim_palloc(fc, sizeof *t * (size_t)(n + 1));
  *count = 0;
  for (int32_t i = 0; t && i < n; i++)
    if (fc->f->value_types[ids[i]].kind != XRT_TYPE_TOKEN) t[(*count)++] = ids[i];
  return t;
}

static xrt_status sim_lower_host_io(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st, const char *target) {
  int32_t nin = 0, nout = 0;
  int32_t *in = sim_ctrl_tensors(fc, op->operands, op->num_operands, &nin);
  int32_t *out = sim_ctrl_tensors(fc, op->results, op->num_results, &nout);
  if (!in || !out) return XRT_RESOURCE_EXHAUSTED;
  return sim_lower_host_call(fc, op, st, target, in, nin, out, nout);
}

SIM_PRIVATE xrt_status sim_lower_infeed(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.infeed");
}

SIM_PRIVATE xrt_status sim_lower_outfeed(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.outfeed");
}

SIM_PRIVATE xrt_status sim_lower_send(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.send");
}

SIM_PRIVATE xrt_status sim_lower_recv(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.recv");
}

/* ======================================================================
 * chlo.scan: operands (inputs..., inits...), results (outputs...,
 * carries...); the body takes the inputs' slices at position i of
 * `dimension` and the carries, and returns the outputs' slices at i and
 * the new carries.  is_reverse runs i from the end.
 * ==================================================================== */

/* A tensor seen as outer x len x inner around the scan dimension. */
typedef struct sim_scan_view {
  int64_t outer, inner;
  size_t es;
} sim_scan_view;

typedef struct sim_scan {
  int32_t ni, nc, no;
  int64_t len;
  int reverse;
  const sim_scan_view *iv, *ov;  /* per input, per output */
  const size_t *cbytes;          /* per carry */
  sim_plan body;
  const int32_t *bargs, *brets;
  const int32_t *islice;         /* pseudo values: one input slice each */
  const int32_t *bufa, *bufb;    /* pseudo values: two buffers per carry */
} sim_scan;

/* Copies slice i between a whole tensor and a contiguous slice buffer. */
static void sim_scan_slice(const sim_scan_view *v, int64_t len, int64_t i,
                           char *whole, char *slice, int to_slice) {
  size_t row = (size_t)v->inner * v->es;
  if (!row) return;
  for (int64_t o = 0; o < v->outer; o++) {
    char *w = whole + (size_t)((o * len + i) * v->inner) * v->es;
    char *s = slice + (size_t)o * row;
    if (to_slice) memcpy(s, w, row);
    else memcpy(w, s, row);
  }
}

static xrt_status sim_run_scan(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_scan *s = (const sim_scan *)st->data;
  int32_t ni = s->ni, nc = s->nc, no = s->no;
  for (int32_t j = 0; j < nc; j++) { /* carries start as the inits */
    void *a = vals[s->bufa[j]];
    if (s->cbytes[j]) memcpy(a, vals[st->in[ni + j]], s->cbytes[j]);
    vals[s->bargs[ni + j]] = a;
  }
  for (int64_t t = 0; t < s->len; t++) {
    int64_t i = s->reverse ? s->len - 1 - t : t;
    for (int32_t k = 0; k < ni; k++) {
      char *sl = (char *)vals[s->islice[k]];
      sim_scan_slice(&s->iv[k], s->len, i, (char *)vals[st->in[k]], sl, 1);
      vals[s->bargs[k]] = sl;
    }
    xrt_status rc = sim_run_plan(&s->body, vals, cx);
    if (rc) return rc;
    for (int32_t k = 0; k < no; k++)
      sim_scan_slice(&s->ov[k], s->len, i, (char *)vals[st->out[k]],
                     (char *)vals[s->brets[k]], 0);
    for (int32_t j = 0; j < nc; j++) { /* into the buffer not in use */
      void *a = vals[s->bufa[j]];
      void *next = vals[s->bargs[ni + j]] == a ? vals[s->bufb[j]] : a;
      if (s->cbytes[j]) memcpy(next, vals[s->brets[no + j]], s->cbytes[j]);
    }
    for (int32_t j = 0; j < nc; j++) {
      void *a = vals[s->bufa[j]];
      vals[s->bargs[ni + j]] = vals[s->bargs[ni + j]] == a ? vals[s->bufb[j]] : a;
    }
  }
  for (int32_t j = 0; j < nc; j++)
    if (s->cbytes[j])
      memcpy(vals[st->out[no + j]], vals[s->bargs[ni + j]], s->cbytes[j]);
  return XRT_OK;
}

/* How many operands are inits: operandSegmentSizes, else the trailing
 * operands whose body argument has the operand's own type (an input's
 * argument is a slice, one rank lower). */
static int32_t sim_scan_num_inits(const sim_fcc *fc, const xrt_ir_op *op) {
  const xrt_ir_attr *seg = sim_attr(op, "operandSegmentSizes", XRT_ATTR_INTS);
  if (seg && seg->n == 2) return (int32_t)seg->ints[1];
  const xrt_ir_region *r = &op->regions[0];
  int32_t nc = 0;
  for (int32_t k = op->num_operands - 1; k >= 0; k--) {
    const xrt_shape *a = sim_shape(fc, op->operands[k]);
    const xrt_shape *b = sim_shape(fc, r->args[k]);
    if (a->rank != b->rank) break;
    nc++;
  }
  return nc;
}

static xrt_status sim_scan_view_of(sim_fcc *fc, const xrt_ir_op *op,
                                   int32_t id, int64_t dim, int64_t *len,
                                   sim_scan_view *v) {
  const xrt_shape *s = sim_shape(fc, id);
  if (fc->f->value_types[id].kind != XRT_TYPE_TENSOR || dim >= s->rank ||
      (*len >= 0 && s->dims[dim] != *len))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "chlo.scan "
                       "inputs and outputs must share the scan dimension");
  *len = s->dims[dim];
  v->outer = v->inner = 1;
  for (int32_t d = 0; d < s->rank; d++) {
    if (d < dim) v->outer *= s->dims[d];
    if (d > dim) v->inner *= s->dims[d];
  }
  v->es = sim_esize(s->dtype);
  return XRT_OK;
}

static int sim_attr_true(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (!a) return 0;
  return a->kind == XRT_ATTR_UNIT ||
         ((a->kind == XRT_ATTR_BOOL || a->kind == XRT_ATTR_INT) && a->i != 0);
}

static xrt_status sim_scan_buffers(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_scan *s) {
  int32_t *isl = (int32_t *)sim_palloc(fc, sizeof *isl * (size_t)(s->ni + 1));
  int32_t *a = (int32_t *)sim_palloc(fc, sizeof *a * (size_t)(s->nc + 1));
  int32_t *b = (int32_t *)sim_palloc(fc, sizeof *b * (size_t)(s->nc + 1));
  size_t *cb = (size_t *)sim_palloc(fc, sizeof *cb * (size_t)(s->nc + 1));
  if (!isl || !a || !b || !cb) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = XRT_OK;
  for (int32_t k = 0; k < s->ni && !rc; k++)
    rc = sim_temp(fc, (size_t)(s->iv[k].outer * s->iv[k].inner) * s->iv[k].es,
                  &isl[k]);
  for (int32_t j = 0; j < s->nc && !rc; j++) {
    cb[j] = sim_vbytes(fc, op->operands[s->ni + j]);
    if (cb[j] != sim_vbytes(fc, op->results[s->no + j]))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "chlo.scan "
                         "carry %d changes type", (int)j);
    rc = sim_temp(fc, cb[j], &a[j]);
    if (!rc) rc = sim_temp(fc, cb[j], &b[j]);
  }
  s->islice = isl, s->bufa = a, s->bufb = b, s->cbytes = cb;
  return rc;
}

SIM_PRIVATE xrt_status sim_lower_chlo_scan(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  int64_t dim = 0, len = -1;
  xrt_status rc = sim_int_attr(fc, op, "dimension", &dim);
  if (rc) return rc;
  if (op->num_regions != 1 || op->regions[0].num_args != op->num_operands)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad chlo.scan");
  int32_t nc = sim_scan_num_inits(fc, op);
  int32_t ni = op->num_operands - nc, no = op->num_results - nc;
  if (nc < 0 || ni < 0 || no < 0 || ni + no == 0 || dim < 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad chlo.scan "
                       "operands, results or dimension");
  sim_scan *s = (sim_scan *)sim_palloc(fc, sizeof *s);
  sim_scan_view *iv = (sim_scan_view *)sim_palloc(fc, sizeof *iv * (size_t)(ni + 1));
  sim_scan_view *ov = (sim_scan_view *)sim_palloc(fc, sizeof *ov * (size_t)(no + 1));
  if (!s || !iv || !ov) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t k = 0; k < ni && !rc; k++)
    rc = sim_scan_view_of(fc, op, op->operands[k], dim, &len, &iv[k]);
  for (int32_t k = 0; k < no && !rc; k++)
    rc = sim_scan_view_of(fc, op, op->results[k], dim, &len, &ov[k]);
  if (rc) return rc;
  s->ni = ni, s->nc = nc, s->no = no, s->len = len;
  s->iv = iv, s->ov = ov;
  s->reverse = sim_attr_true(op, "is_reverse");
  if ((rc = sim_scan_buffers(fc, op, s))) return rc;
  rc = sim_lower_region(fc, &op->regions[0], &s->body, &s->brets,
                        op->num_results, op);
  if (rc) return rc;
  for (int32_t k = 0; k < no; k++)
    if (sim_vbytes(fc, s->brets[k]) != (size_t)(ov[k].outer * ov[k].inner) * ov[k].es)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "chlo.scan "
                         "body output %d does not fit result %d", (int)k, (int)k);
  s->bargs = op->regions[0].args;
  st->data = s;
  st->run = sim_run_scan;
  return XRT_OK;
}
