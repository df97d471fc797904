/*
 * src/sim/lower.c - lowering ops to steps: the op table, quantized compute ops
 * (dequantize, the float op, quantize), lowering one op.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * Lowering ops to steps
 * ==================================================================== */


/* Nested region: arguments are bound at run time by the owning step. */
SIM_PRIVATE xrt_status sim_lower_region(sim_fcc *fc, const xrt_ir_region *r,
                                   sim_plan *plan, const int32_t **rets,
                                   int32_t nrets, const xrt_ir_op *owner) {
  fc->depth++;
  for (int32_t i = 0; i < r->num_args; i++)
    fc->v[r->args[i]].kind = SIM_V_BOUND;
  const xrt_ir_op *term = NULL;
  xrt_status rc = sim_lower_block(fc, r, plan, &term);
  fc->depth--;
  if (rc) return rc;
  if (term->num_operands != nrets)
    return sim_fail_op(fc->cc->err, owner, XRT_INVALID_ARGUMENT, "a region of "
                       "%s returns %d value(s), expected %d", owner->name,
                       (int)term->num_operands, (int)nrets);
  *rets = term->operands;
  return XRT_OK;
}

static xrt_status sim_lower_constant(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  const xrt_ir_attr *a = sim_attr(op, "value", XRT_ATTR_DENSE);
  const xrt_shape *s = sim_shape(fc, op->results[0]);
  size_t es = sim_esize(s->dtype), bytes = sim_bytes(s);
  (void)st;
  if (!a || !a->lit || !es)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "stablehlo.constant needs a dense 'value'");
  const xrt_ir_literal *lit = a->lit;
  if (lit->splat ? lit->bytes < es : lit->bytes != bytes)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "constant data "
                       "has %zu bytes for a %zu-byte value", lit->bytes, bytes);
  char *p = (char *)sim_palloc_raw(fc, bytes); /* every byte written below */
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  if (lit->splat) sim_fill_for(es)(p, (const char *)lit->data, sim_numel(s));
  else if (bytes) memcpy(p, lit->data, bytes);
  sim_set_const(fc, op->results[0], p);
  return XRT_OK;
}

/* iota is data known at compile time: materialized like a constant. */
SIM_PRIVATE xrt_status sim_lower_iota(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  const xrt_shape *s = sim_shape(fc, op->results[0]);
  int64_t dim = 0, str[XRT_MAX_RANK];
  xrt_status rc = sim_int_attr(fc, op, "iota_dimension", &dim);
  (void)st;
  if (rc) return rc;
  if (dim < 0 || dim >= s->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "iota_dimension %lld is out of range", (long long)dim);
  if (!sim_num_supported(s->dtype))
    return sim_unsupported_type(fc, op, s->dtype);
  size_t es = sim_esize(s->dtype);
  char *p = (char *)sim_palloc(fc, sim_bytes(s));
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  sim_strides(s, str);
  for (int64_t i = 0, n = sim_numel(s); i < n; i++) {
    int64_t k = (i / str[dim]) % s->dims[dim];
    sim_num v = {(double)k, 0, k, 1};
    sim_store(s->dtype, p + (size_t)i * es, &v);
  }
  sim_set_const(fc, op->results[0], p);
  return XRT_OK;
}

static xrt_status sim_lower_get_dimension_size(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *s = sim_shape(fc, op->results[0]);
  int64_t dim = 0;
  xrt_status rc = sim_int_attr(fc, op, "dimension", &dim);
  (void)st;
  if (rc) return rc;
  if (dim < 0 || dim >= in->rank || s->rank != 0 ||
      !sim_num_supported(s->dtype))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad get_dimension_size");
  char *p = (char *)sim_palloc(fc, sim_esize(s->dtype));
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  sim_num v = {(double)in->dims[dim], 0, in->dims[dim], 1};
  sim_store(s->dtype, p, &v);
  sim_set_const(fc, op->results[0], p);
  return XRT_OK;
}

/* A strided copy into the (row-major) result: result element idx reads
 * operand element sbase + sum idx_k * ss_k. */
static xrt_status sim_lower_gather_view(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st, const int64_t *ss,
                                        int64_t sbase) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t ds[XRT_MAX_RANK];
  sim_xcopy *x = (sim_xcopy *)sim_palloc(fc, sizeof *x);
  if (!x) return XRT_RESOURCE_EXHAUSTED;
  sim_strides(o, ds);
  sim_xcopy_init(x, sim_esize(o->dtype), o->rank, o->dims, ss, ds, sbase, 0);
  st->data = x;
  st->run = sim_run_xcopy;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_broadcast_in_dim(sim_fcc *fc, const xrt_ir_op *op,
                                             sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  const int64_t *bd;
  int64_t n, ist[XRT_MAX_RANK], ss[XRT_MAX_RANK] = {0};
  xrt_status rc = sim_ints(fc, op, "broadcast_dimensions", 1, &bd, &n);
  if (rc) return rc;
  if (n != in->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad broadcast_dimensions");
  sim_strides(in, ist);
  for (int64_t i = 0; i < n; i++) {
    if (bd[i] < 0 || bd[i] >= o->rank)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "bad broadcast_dimensions");
    if (in->dims[i] != 1) ss[bd[i]] = ist[i];
  }
  return sim_lower_gather_view(fc, op, st, ss, 0);
}

/* The older stablehlo.broadcast: new leading dimensions. */
static xrt_status sim_lower_broadcast(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t ist[XRT_MAX_RANK], ss[XRT_MAX_RANK] = {0};
  int32_t lead = o->rank - in->rank;
  if (lead < 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad broadcast");
  sim_strides(in, ist);
  for (int32_t i = 0; i < in->rank; i++)
    ss[lead + i] = in->dims[i] == 1 ? 0 : ist[i];
  return sim_lower_gather_view(fc, op, st, ss, 0);
}

static xrt_status sim_lower_transpose(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const int64_t *perm;
  int64_t n, ist[XRT_MAX_RANK], ss[XRT_MAX_RANK];
  xrt_status rc = sim_ints(fc, op, "permutation", 1, &perm, &n);
  if (rc) return rc;
  if (n != in->rank || sim_shape(fc, op->results[0])->rank != in->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad permutation");
  sim_strides(in, ist);
  for (int64_t k = 0; k < n; k++) {
    if (perm[k] < 0 || perm[k] >= in->rank)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "bad permutation");
    ss[k] = ist[perm[k]];
  }
  return sim_lower_gather_view(fc, op, st, ss, 0);
}

static xrt_status sim_lower_slice(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const int64_t *start, *limit, *step;
  int64_t n1, n2, n3, ist[XRT_MAX_RANK], ss[XRT_MAX_RANK], base = 0;
  xrt_status rc = sim_ints(fc, op, "start_indices", 1, &start, &n1);
  if (rc || (rc = sim_ints(fc, op, "limit_indices", 1, &limit, &n2)) ||
      (rc = sim_ints(fc, op, "strides", 0, &step, &n3)))
    return rc;
  if (n1 != in->rank || (step && n3 != in->rank))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad slice");
  sim_strides(in, ist);
  for (int32_t k = 0; k < in->rank; k++) {
    base += start[k] * ist[k];
    ss[k] = ist[k] * (step ? step[k] : 1);
  }
  return sim_lower_gather_view(fc, op, st, ss, base);
}

static xrt_status sim_lower_reverse(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const int64_t *dims;
  int64_t n, ss[XRT_MAX_RANK], base = 0;
  xrt_status rc = sim_ints(fc, op, "dimensions", 1, &dims, &n);
  if (rc) return rc;
  sim_strides(in, ss);
  for (int64_t i = 0; i < n; i++) {
    int64_t d = dims[i];
    if (d < 0 || d >= in->rank)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "bad reverse dimensions");
    if (ss[d] < 0) continue; /* listed twice */
    if (in->dims[d] > 0) base += (in->dims[d] - 1) * ss[d];
    ss[d] = -ss[d];
  }
  return sim_lower_gather_view(fc, op, st, ss, base);
}

/* A reshape that copies nothing: its result is its operand's memory. */
static xrt_status sim_run_alias(const sim_step *st, void **vals, sim_cx *cx) {
  (void)cx;
  vals[st->out[0]] = vals[st->in[0]];
  return XRT_OK;
}

/* Whether value id is a result of the entry function (written into the
 * caller's buffer: a reshape into it stays a copy). */
SIM_PRIVATE int sim_entry_result(const sim_fcc *fc, int32_t id) {
  const sim_exe *e = fc->cc->exe;
  const xrt_ir_region *b = &fc->f->body;
  if (fc->f != &fc->cc->m->funcs[e->entry] || b->num_ops < 1) return 0;
  const xrt_ir_op *t = &b->ops[b->num_ops - 1];
  for (int32_t i = 0; i < t->num_operands; i++)
    if (t->operands[i] == id) return 1;
  return 0;
}

/* A reshape relabels its operand's bytes: unless its result is an entry
 * result, it takes no memory of its own but aliases the value whose
 * memory its operand is (an arena value, an argument, a constant), which
 * then lives as long as the alias is used (sim_root).  Nothing writes a
 * value in place once defined, except a while body's dynamic_update_slice
 * of a loop argument that it reads only there (sim_while_in_place), which
 * a reshape of that argument, being a read, turns off. */
SIM_PRIVATE xrt_status sim_lower_reshape(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  size_t in = sim_bytes(sim_shape(fc, op->operands[0]));
  if (in != sim_bytes(sim_shape(fc, op->results[0])))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "reshape changes the number of elements");
  if (fc->v[op->operands[0]].vcat) { /* of a concatenation never made */
    sim_dc_lower_reshape(fc, op);
    return XRT_OK;
  }
  int32_t out = op->results[0], root = sim_root(fc, op->operands[0]);
  sim_vinfo *r = &fc->v[root], *o = &fc->v[out];
  int ok = r->kind == SIM_V_SLOT || r->kind == SIM_V_BOUND ||
           r->kind == SIM_V_CONST;
  if (ok && in > 0 && o->kind == SIM_V_SLOT && !o->alias &&
      fc->f->value_types[op->operands[0]].kind == XRT_TYPE_TENSOR &&
      !sim_entry_result(fc, out)) {
    o->kind = SIM_V_NONE;
    o->bytes = 0;
    o->alias = root + 1;
    if (r->last < o->last) r->last = o->last;
    st->run = sim_run_alias;
    return XRT_OK;
  }
  st->run = sim_run_copy;
  st->n = (int64_t)in;
  return XRT_OK;
}

static xrt_status sim_lower_barrier(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  if (op->num_operands != op->num_results)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad optimization_barrier");
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(op->num_results + 1));
  if (!b) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < op->num_results; i++)
    b[i] = sim_vbytes(fc, op->results[i]);
  st->data = b;
  st->run = sim_run_copy_all;
  return XRT_OK;
}

/* Which operand indices j of one dimension land inside the result:
 * position lo + j*step for j in [*j0, *j0 + *cnt). */
SIM_PRIVATE void sim_pad_range(int64_t in, int64_t out, int64_t lo, int64_t step,
                          int64_t *j0, int64_t *cnt) {
  int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
  int64_t end = out - 1 - lo < 0 ? 0 : (out - 1 - lo) / step + 1;
  if (end > in) end = in;
  *j0 = first;
  *cnt = end > first ? end - first : 0;
}

static xrt_status sim_lower_pad(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  const int64_t *lo, *hi, *inter;
  int64_t n1, n2, n3, ist[XRT_MAX_RANK], ost[XRT_MAX_RANK];
  int64_t dims[XRT_MAX_RANK], ss[XRT_MAX_RANK], ds[XRT_MAX_RANK];
  int64_t sbase = 0, dbase = 0;
  xrt_status rc = sim_ints(fc, op, "edge_padding_low", 1, &lo, &n1);
  if (rc || (rc = sim_ints(fc, op, "edge_padding_high", 1, &hi, &n2)) ||
      (rc = sim_ints(fc, op, "interior_padding", 0, &inter, &n3)))
    return rc;
  if (n1 != in->rank || o->rank != in->rank || (inter && n3 != in->rank))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad pad");
  sim_pad *p = (sim_pad *)sim_palloc(fc, sizeof *p);
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  sim_strides(in, ist);
  sim_strides(o, ost);
  for (int32_t k = 0; k < in->rank; k++) {
    int64_t step = (inter ? inter[k] : 0) + 1, j0;
    sim_pad_range(in->dims[k], o->dims[k], lo[k], step, &j0, &dims[k]);
    sbase += j0 * ist[k];
    dbase += (lo[k] + j0 * step) * ost[k];
    ss[k] = ist[k];
    ds[k] = step * ost[k];
    if (dims[k] == 0) sbase = dbase = 0; /* nothing copied; keep in range */
  }
  size_t es = sim_esize(o->dtype);
  sim_xcopy_init(&p->x, es, in->rank, dims, ss, ds, sbase, dbase);
  p->fill = sim_fill_for(es);
  p->n = sim_numel(o);
  st->data = p;
  st->run = sim_run_pad;
  return XRT_OK;
}

/* A concatenate whose operands are each one block of its result (every
 * dimension before the axis of size 1: NCHW features of one image, as
 * SqueezeNet's and Inception's fire modules join their branches) is made
 * by its operands' producers: each operand's memory becomes its block of
 * the result (sim_vinfo's part_of, placed by plan.c), so the producers
 * write their results in place and nothing is copied.  Only arena values
 * of the top-level block, each operand's memory used for that operand
 * alone (distinct roots of its own size), block offsets aligned as slots
 * are, and a result that is not an entry result (written into the
 * caller's buffer): otherwise the copy (sim_run_concat). */
static int sim_cat_in_place(sim_fcc *fc, const xrt_ir_op *op,
                            const sim_cat *c) {
  int32_t out = op->results[0];
  const sim_vinfo *o = &fc->v[out];
  if (fc->depth > 0 || c->outer != 1 || o->kind != SIM_V_SLOT ||
      o->alias || o->vcat || o->part_of || sim_entry_result(fc, out))
    return 0;
  size_t off = 0;
  for (int32_t i = 0; i < op->num_operands; i++) {
    int32_t v = op->operands[i], r = sim_root(fc, v);
    const sim_vinfo *rv = &fc->v[r];
    if (r == out || rv->kind != SIM_V_SLOT || rv->vcat || rv->part_of ||
        rv->bytes != c->chunk[i] || off % SIM_ALIGN ||
        sim_entry_result(fc, v) || sim_entry_result(fc, r))
      return 0;
    for (int32_t j = 0; j < i; j++)
      if (sim_root(fc, op->operands[j]) == r) return 0;
    off += c->chunk[i];
  }
  off = 0;
  for (int32_t i = 0; i < op->num_operands; i++) {
    sim_vinfo *rv = &fc->v[sim_root(fc, op->operands[i])];
    if (c->chunk[i]) rv->part_of = out + 1, rv->part_off = off;
    off += c->chunk[i];
  }
  return 1;
}

static xrt_status sim_lower_concatenate(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t axis = 0;
  xrt_status rc = sim_int_attr(fc, op, "dimension", &axis);
  if (rc) return rc;
  if (axis < 0 || axis >= o->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad concatenate dimension");
  if (sim_dc_lower_concat(fc, op)) return XRT_OK; /* only products read it */
  sim_cat *c = (sim_cat *)sim_palloc(fc, sizeof *c);
  size_t *chunk = (size_t *)sim_palloc(
      fc, sizeof *chunk * (size_t)(op->num_operands + 1));
  if (!c || !chunk) return XRT_RESOURCE_EXHAUSTED;
  int64_t inner = 1;
  c->outer = 1;
  for (int32_t k = 0; k < axis; k++) c->outer *= o->dims[k];
  for (int32_t k = (int32_t)axis + 1; k < o->rank; k++) inner *= o->dims[k];
  for (int32_t i = 0; i < op->num_operands; i++)
    chunk[i] = (size_t)(sim_shape(fc, op->operands[i])->dims[axis] * inner) *
               sim_esize(o->dtype);
  c->chunk = chunk;
  if (sim_cat_in_place(fc, op, c)) return XRT_OK; /* no step */
  st->data = c;
  st->run = sim_run_concat;
  return XRT_OK;
}

static xrt_status sim_lower_select(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  const xrt_shape *p = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  if (p->rank == 0) {
    st->run = sim_run_select_scalar;
    st->n = (int64_t)sim_bytes(o);
    return XRT_OK;
  }
  static const sim_run_fn by_size[17] = {
      [1] = sim_run_select_1, [2] = sim_run_select_2, [4] = sim_run_select_4,
      [8] = sim_run_select_8, [16] = sim_run_select_16};
  st->run = by_size[sim_esize(o->dtype)];
  st->n = sim_numel(o);
  return st->run ? XRT_OK : sim_unsupported_type(fc, op, o->dtype);
}

static xrt_status sim_lower_clamp(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  sim_clamp_fn fn = sim_clamp_for(o->dtype);
  if (!fn || fc->f->value_types[op->results[0]].quant)
    return sim_unsupported_type(fc, op, o->dtype);
  sim_clamp *c = (sim_clamp *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->fn = fn;
  c->ls = sim_shape(fc, op->operands[0])->rank == 0 && o->rank != 0 ? 0 : 1;
  c->hs = sim_shape(fc, op->operands[2])->rank == 0 && o->rank != 0 ? 0 : 1;
  st->data = c;
  st->run = sim_run_clamp;
  st->n = sim_numel(o);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_ew(sim_fcc *fc, const xrt_ir_op *op,
                               sim_step *st) {
  char why[512];
  const void *ctx = NULL;
  int owned = 0;
  why[0] = 0;
  if (op->num_results != 1 || op->num_operands > SIM_MAX_EW_IN)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s with %d "
                       "operands and %d results is not supported by the "
                       "simulator", op->name, (int)op->num_operands,
                       (int)op->num_results);
  const xrt_allocator *al = &fc->cc->al;
  sim_ew_fn fn = sim_ew_kernel(al, fc->f, op, &ctx, &owned, why, sizeof why);
  if (!fn && owned < 0) return sim_oom(fc);
  if (!fn)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s",
                       why[0] ? why : "elementwise op not supported");
  if (owned && ctx) {
    void **slot = (void **)sim_vec_push(al, &fc->cc->exe->owned_ctx);
    if (!slot) {
      al->free(al->self, (void *)(uintptr_t)ctx);
      return sim_oom(fc);
    }
    *slot = (void *)(uintptr_t)ctx;
  }
  st->run = sim_run_ew;
  st->ew = sim_fz_isa_kernel(fn); /* f32/f64: AVX2/AVX-512 if the CPU has */
  st->ew_ctx = ctx;
  st->n = sim_numel(sim_shape(fc, op->results[0]));
  return XRT_OK;
}

/* The binary op of a region that is one binary op of its two arguments
 * (either order) and returns its result, else NULL. */
SIM_PRIVATE const xrt_ir_op *sim_region_binop(const xrt_ir_region *r) {
  if (r->num_args != 2 || r->num_ops != 2) return NULL;
  const xrt_ir_op *b = &r->ops[0], *t = &r->ops[1];
  if (b->num_operands != 2 || b->num_results != 1 || b->num_regions ||
      t->num_operands != 1 || t->operands[0] != b->results[0])
    return NULL;
  int32_t a0 = r->args[0], a1 = r->args[1];
  if (!((b->operands[0] == a0 && b->operands[1] == a1) ||
        (b->operands[0] == a1 && b->operands[1] == a0)))
    return NULL;
  return b;
}

/* The typed loop when the body is one add/mul/max/min/and/or of its two
 * arguments (either order) on the input's own type, else NULL. */
SIM_PRIVATE sim_red_fn sim_reduce_fast_body(const sim_fcc *fc, const xrt_ir_op *op) {
  if (op->num_operands != 2) return NULL;
  const xrt_ir_op *b = sim_region_binop(&op->regions[0]);
  if (!b) return NULL;
  const xrt_ir_type *in = &fc->f->value_types[op->operands[0]];
  const xrt_ir_type *res = &fc->f->value_types[op->results[0]];
  const xrt_ir_type *bt = &fc->f->value_types[b->results[0]];
  if (in->quant || res->quant || bt->quant ||
      in->shape.dtype != res->shape.dtype || bt->shape.dtype != res->shape.dtype)
    return NULL;
  return sim_red_pick_isa(b->code, res->shape.dtype);
}

/* Drops the unit dimensions of shape sh (strides str) and joins neighbours
 * whose strides make them one run, into dims/ostr; returns the new rank
 * (>= 1: a scalar becomes one dimension of size 1, stride 0). */
SIM_PRIVATE int32_t sim_coalesce_dims(const xrt_shape *sh, const int64_t *str,
                                 int64_t *dims, int64_t *ostr) {
  int32_t n = 0;
  for (int32_t k = 0; k < sh->rank; k++) {
    if (sh->dims[k] == 1) continue;
    if (n > 0 && ostr[n - 1] == str[k] * sh->dims[k]) {
      dims[n - 1] *= sh->dims[k];
      ostr[n - 1] = str[k];
      continue;
    }
    dims[n] = sh->dims[k];
    ostr[n++] = str[k];
  }
  if (n == 0) {
    dims[0] = 1;
    ostr[0] = 0;
    n = 1;
  }
  return n;
}

/* Merges dimensions for the single input pass: drops size-1 dimensions and
 * joins neighbours that are both reduced or both kept. */
SIM_PRIVATE void sim_reduce_dims(sim_reduce *r, const xrt_shape *in,
                            const int64_t *rd, int64_t nrd) {
  int64_t ostr[XRT_MAX_RANK], acc = 1;
  for (int32_t k = in->rank - 1; k >= 0; k--) {
    int reduced = 0;
    for (int64_t j = 0; j < nrd; j++) reduced |= rd[j] == k;
    ostr[k] = reduced ? 0 : acc;
    if (!reduced) acc *= in->dims[k];
  }
  r->rank = sim_coalesce_dims(in, ostr, r->dims, r->ostr);
}

static xrt_status sim_reduce_body(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_reduce *r) {
  int32_t n = r->n;
  if (n > 1) {
    size_t *toff = (size_t *)sim_palloc(fc, sizeof *toff * (size_t)n);
    if (!toff) return XRT_RESOURCE_EXHAUSTED;
    size_t total = 0;
    for (int32_t j = 0; j < n; j++) {
      toff[j] = total;
      total += r->es[j];
    }
    r->toff = toff;
    xrt_status rc = sim_temp(fc, total, &r->tmp);
    if (rc) return rc;
  }
  const xrt_ir_region *reg = &op->regions[0];
  if (reg->num_args != 2 * n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "reduce body must take %d arguments", 2 * (int)n);
  r->bargs = reg->args;
  return sim_lower_region(fc, reg, &r->body, &r->brets, n, op);
}

static xrt_status sim_lower_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  int32_t n = op->num_results;
  const int64_t *rd;
  int64_t nrd;
  xrt_status rc = sim_ints(fc, op, "dimensions", 1, &rd, &nrd);
  if (rc) return rc;
  if (n < 1 || op->num_operands != 2 * n || op->num_regions != 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad reduce");
  sim_reduce *r = (sim_reduce *)sim_palloc(fc, sizeof *r);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  sim_fill_fn *fill = (sim_fill_fn *)sim_palloc(fc, sizeof *fill * (size_t)n);
  if (!r || !es || !fill) return XRT_RESOURCE_EXHAUSTED;
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  for (int32_t j = 0; j < n; j++) {
    const xrt_shape *ij = sim_shape(fc, op->operands[j]);
    const xrt_shape *oj = sim_shape(fc, op->results[j]);
    es[j] = sim_esize(oj->dtype);
    if (sim_esize(ij->dtype) != es[j] || sim_numel(ij) != sim_numel(in))
      return sim_unsupported_type(fc, op, ij->dtype);
    fill[j] = sim_fill_for(es[j]);
  }
  r->n = n;
  r->es = es;
  r->fill = fill;
  r->tmp = -1;
  r->in_numel = sim_numel(in);
  r->out_numel = sim_numel(sim_shape(fc, op->results[0]));
  sim_reduce_dims(r, in, rd, nrd);
  r->fast = sim_reduce_fast_body(fc, op);
  if (!r->fast && (rc = sim_reduce_body(fc, op, r))) return rc;
  st->data = r;
  st->run = sim_run_reduce;
  return XRT_OK;
}

/* Offsets of every index combination (row-major) over the listed
 * dimensions, in two operands at once. */
SIM_PRIVATE void sim_enum_offsets(int64_t nd, const int64_t *sizes,
                             const int64_t *st1, const int64_t *st2,
                             int64_t *o1, int64_t *o2) {
  int64_t idx[2 * XRT_MAX_RANK] = {0}, count = 1, a = 0, b = 0;
  for (int64_t j = 0; j < nd; j++) count *= sizes[j];
  for (int64_t c = 0; c < count; c++) {
    o1[c] = a;
    if (o2) o2[c] = b;
    for (int64_t j = nd - 1; j >= 0; j--) {
      a += st1[j];
      b += st2 ? st2[j] : 0;
      if (++idx[j] < sizes[j]) break;
      a -= st1[j] * sizes[j];
      b -= st2 ? st2[j] * sizes[j] : 0;
      idx[j] = 0;
    }
  }
}

/* The dimensions of x not listed in a or b. */
SIM_PRIVATE int64_t sim_free_dims(const xrt_shape *x, const int64_t *a, int64_t na,
                             const int64_t *b, int64_t nb, int64_t *out) {
  int64_t n = 0;
  for (int32_t d = 0; d < x->rank; d++) {
    int used = 0;
    for (int64_t j = 0; j < na; j++) used |= a[j] == d;
    for (int64_t j = 0; j < nb; j++) used |= b[j] == d;
    if (!used) out[n++] = d;
  }
  return n;
}

/* Offset table over dims of x (sizes and strides of x), count entries. */
SIM_PRIVATE int64_t *sim_dot_table(sim_fcc *fc, const xrt_shape *x,
                              const int64_t *dims, int64_t nd,
                              const xrt_shape *y, const int64_t *ydims,
                              int64_t **ytab, int64_t *count) {
  int64_t xs[XRT_MAX_RANK], ys[XRT_MAX_RANK];
  int64_t sizes[XRT_MAX_RANK], s1[XRT_MAX_RANK], s2[XRT_MAX_RANK], c = 1;
  sim_strides(x, xs);
  if (y) sim_strides(y, ys);
  for (int64_t j = 0; j < nd; j++) {
    sizes[j] = x->dims[dims[j]];
    s1[j] = xs[dims[j]];
    s2[j] = y ? ys[ydims[j]] : 0;
    c *= sizes[j];
  }
  /* Layers of one model repeat their shapes: reuse an equal table. */
  size_t kb = sizeof(int64_t) * (size_t)nd;
  sim_cc *cc = fc->cc;
  for (unsigned i = 0; i < SIM_DOT_MEMO && i < cc->ndmemo; i++) {
    const sim_dot_memo *k = &cc->dmemo[i];
    if (k->nd == nd && k->has_y == (y != NULL) && !memcmp(k->sizes, sizes, kb) &&
        !memcmp(k->s1, s1, kb) && !memcmp(k->s2, s2, kb)) {
      if (ytab) *ytab = k->u;
      *count = k->count;
      return k->t;
    }
  }
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(c ? c : 1));
  int64_t *u = y ? (int64_t *)sim_palloc(fc, sizeof *u * (size_t)(c ? c : 1))
                 : NULL;
  if (!t || (y && !u)) return NULL;
  sim_enum_offsets(nd, sizes, s1, y ? s2 : NULL, t, u);
  sim_dot_memo *k = &cc->dmemo[cc->ndmemo++ % SIM_DOT_MEMO];
  k->nd = nd;
  k->has_y = y != NULL;
  memcpy(k->sizes, sizes, kb);
  memcpy(k->s1, s1, kb);
  memcpy(k->s2, s2, kb);
  k->t = t, k->u = u, k->count = c;
  if (ytab) *ytab = u;
  *count = c;
  return t;
}

typedef struct sim_dot_dims {
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nb, nc;
} sim_dot_dims;

static xrt_status sim_dot_convert_temps(sim_fcc *fc, sim_dot *d) {
  size_t cs = sim_esize(d->ct);
  xrt_status rc = XRT_OK;
  d->ltmp = d->rtmp = d->otmp = -1;
  if (d->lt != d->ct)
    rc = sim_temp(fc, (size_t)d->lnumel * cs, &d->ltmp);
  if (!rc && d->rt != d->ct)
    rc = sim_temp(fc, (size_t)d->rnumel * cs, &d->rtmp);
  if (!rc && d->ot != d->ct)
    rc = sim_temp(fc, (size_t)d->onumel * cs, &d->otmp);
  return rc;
}

static xrt_status sim_lower_dot_dims(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st, const sim_dot_dims *dd) {
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const xrt_ir_type *types = fc->f->value_types;
  size_t asz;
  if (fc->v[op->operands[0]].vcat || fc->v[op->operands[1]].vcat)
    return sim_dc_lower_dot(fc, op, st, dd->lb, dd->rb, dd->lc, dd->rc,
                            dd->nb, dd->nc); /* products of the parts */
  /* Small floats compute in f32 (exact products, one rounding at the end). */
  xrt_dtype ct = sim_is_minifloat(O->dtype) ? XRT_F32 : O->dtype;
  sim_dot_fn fn = sim_dot_for(ct, &asz);
  if (!fn || types[op->operands[0]].quant || types[op->operands[1]].quant ||
      types[op->results[0]].quant)
    return sim_unsupported_type(fc, op, O->dtype);
  if (!sim_num_supported(L->dtype) || !sim_num_supported(R->dtype))
    return sim_unsupported_type(fc, op, L->dtype);
  sim_dot *d = (sim_dot *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  int64_t lf[XRT_MAX_RANK], rf[XRT_MAX_RANK], nlf, nrf, c2;
  nlf = sim_free_dims(L, dd->lb, dd->nb, dd->lc, dd->nc, lf);
  nrf = sim_free_dims(R, dd->rb, dd->nb, dd->rc, dd->nc, rf);
  int64_t *rb = NULL, *rk = NULL;
  d->lb = sim_dot_table(fc, L, dd->lb, dd->nb, R, dd->rb, &rb, &d->B);
  d->lk = sim_dot_table(fc, L, dd->lc, dd->nc, R, dd->rc, &rk, &d->K);
  d->lm = sim_dot_table(fc, L, lf, nlf, NULL, NULL, NULL, &d->M);
  d->rn = sim_dot_table(fc, R, rf, nrf, NULL, NULL, NULL, &d->N);
  if (!d->lb || !d->lk || !d->lm || !d->rn) return XRT_RESOURCE_EXHAUSTED;
  d->rb = rb;
  d->rk = rk;
  c2 = d->B * d->M * d->N;
  if (c2 != sim_numel(O))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "dot result shape does not fit its operands");
  d->fn = fn;
  d->unit_n = 1;
  for (int64_t n = 0; n < d->N; n++) d->unit_n &= d->rn[n] == n;
  d->lt = L->dtype, d->rt = R->dtype, d->ot = O->dtype, d->ct = ct;
  d->lnumel = sim_numel(L), d->rnumel = sim_numel(R), d->onumel = c2;
  d->wrap = O->dtype == XRT_S2 || O->dtype == XRT_S4 || O->dtype == XRT_U2 ||
                    O->dtype == XRT_U4
                ? O->dtype
                : XRT_DTYPE_INVALID;
  xrt_status grc; /* few f32 rows against weights: skinny.c */
  if (sim_skinny_lower_dot(fc, d, st, &grc)) return grc;
  /* large f32/f64 products: packed GEMM (sim_gemm.inc) */
  if (sim_gemm_lower_dot(fc, d, st, &grc)) return grc;
  d->acc = -1;
  xrt_status rc = sim_dot_convert_temps(fc, d);
  if (!rc && d->unit_n) rc = sim_temp(fc, (size_t)d->N * asz, &d->acc);
  st->data = d;
  st->run = sim_run_dot;
  return rc;
}

SIM_PRIVATE const int64_t *sim_dot_field(const xrt_ir_attr *dn, const char *name,
                                    int64_t *n) {
  const xrt_ir_attr *a = sim_field(dn, name);
  *n = a && a->kind == XRT_ATTR_INTS ? a->n : 0;
  return *n ? a->ints : NULL;
}

static xrt_status sim_lower_dot_general(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  const xrt_ir_attr *dn =
      sim_named(op->attrs, op->num_attrs, "dot_dimension_numbers");
  sim_dot_dims dd;
  int64_t n1, n2, n3, n4;
  dd.lb = sim_dot_field(dn, "lhs_batching_dimensions", &n1);
  dd.rb = sim_dot_field(dn, "rhs_batching_dimensions", &n2);
  dd.lc = sim_dot_field(dn, "lhs_contracting_dimensions", &n3);
  dd.rc = sim_dot_field(dn, "rhs_contracting_dimensions", &n4);
  if (n1 != n2 || n3 != n4 || n1 > XRT_MAX_RANK || n3 > XRT_MAX_RANK)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad dot_dimension_numbers");
  dd.nb = n1;
  dd.nc = n3;
  return sim_lower_dot_dims(fc, op, st, &dd);
}

/* stablehlo.dot: contracts the last lhs dimension with the first rhs one. */
static xrt_status sim_lower_dot(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  static const int64_t zero = 0, one = 1;
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  if (L->rank < 1 || L->rank > 2 || sim_shape(fc, op->operands[1])->rank < 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad dot");
  sim_dot_dims dd = {NULL, NULL, L->rank == 1 ? &zero : &one, &zero, 0, 1};
  return sim_lower_dot_dims(fc, op, st, &dd);
}

static int64_t sim_region_reads(const xrt_ir_region *r, int32_t v);

/* Two buffers per carry, except for carries the body returns unchanged
 * (read in place from the operand: no buffers); the bytes of each result
 * that something reads. */
static xrt_status sim_while_buffers(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_while *w) {
  int32_t n = op->num_operands;
  const xrt_ir_region *body = &op->regions[1];
  const xrt_ir_op *term =
      body->num_ops > 0 ? &body->ops[body->num_ops - 1] : NULL;
  int32_t *a = (int32_t *)sim_palloc(fc, sizeof *a * (size_t)(n + 1));
  int32_t *b = (int32_t *)sim_palloc(fc, sizeof *b * (size_t)(n + 1));
  size_t *bytes = (size_t *)sim_palloc(fc, sizeof *bytes * (size_t)(n + 1));
  size_t *ob = (size_t *)sim_palloc(fc, sizeof *ob * (size_t)(n + 1));
  uint8_t *thru = (uint8_t *)sim_palloc(fc, (size_t)(n + 1));
  if (!a || !b || !bytes || !ob || !thru) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < n; i++) {
    bytes[i] = sim_vbytes(fc, op->operands[i]);
    thru[i] = term && term->num_operands == n && i < body->num_args &&
              term->operands[i] == body->args[i];
    ob[i] = sim_region_reads(&fc->f->body, op->results[i]) ? bytes[i] : 0;
    size_t own = thru[i] ? 0 : bytes[i];
    xrt_status rc = sim_temp(fc, own, &a[i]);
    if (rc || (rc = sim_temp(fc, own, &b[i]))) return rc;
  }
  w->n = n;
  w->bufa = a;
  w->bufb = b;
  w->bytes = bytes;
  w->thru = thru;
  w->obytes = ob;
  return XRT_OK;
}

SIM_PRIVATE int sim_loop_invariant(sim_fcc *fc, int32_t v, int32_t *flag,
                                   xrt_status *rc) {
  *rc = XRT_OK;
  *flag = 0;
  const xrt_ir_region *b = fc->lbody;
  if (!b || b->num_ops < 1) return 0;
  const xrt_ir_op *t = &b->ops[b->num_ops - 1];
  int found = 0;
  for (int32_t i = 0; i < b->num_args && i < t->num_operands; i++)
    found |= b->args[i] == v && t->operands[i] == v;
  if (!found) return 0;
  if ((*rc = sim_temp(fc, 16, flag))) return 0;
  if (!sim_push_i32(&fc->cc->al, fc->lflags, *flag)) {
    *rc = sim_oom(fc);
    return 0;
  }
  return 1;
}

/* How many times value v is read in region r: by its ops, the ops of
 * their nested regions (which may read it from outside) and its
 * terminator. */
static int64_t sim_region_reads(const xrt_ir_region *r, int32_t v) {
  int64_t n = 0;
  for (int32_t k = 0; k < r->num_ops; k++) {
    const xrt_ir_op *o = &r->ops[k];
    for (int32_t j = 0; j < o->num_operands; j++) n += o->operands[j] == v;
    for (int32_t j = 0; j < o->num_regions; j++)
      n += sim_region_reads(&o->regions[j], v);
  }
  return n;
}

/* Loop state that the body replaces by a dynamic_update_slice of itself
 * (an RNN writing step t's output into a [T, ...] array) is updated in
 * place: when the body reads the argument only there and the result only
 * goes back into the loop, the slice is written into the argument's
 * buffer and nothing is copied (sim_while_advance sees it kept). */
static void sim_while_in_place(const sim_while *w, const xrt_ir_region *body,
                               uint8_t *redir) {
  for (int32_t i = 0; i < w->n; i++) {
    int32_t arg = w->bargs[i], ret = w->brets[i];
    if (ret == arg || sim_region_reads(body, arg) != 1 ||
        sim_region_reads(body, ret) != 1)
      continue;
    for (int32_t k = 0; k < w->body.n; k++) {
      sim_step *s = (sim_step *)(uintptr_t)&w->body.steps[k]; /* plan memory */
      if (s->nout == 1 && s->out[0] == ret) {
        if (sim_dus_update_in_place(s, arg)) redir[i] = 2;
        break;
      }
    }
  }
}

/* Carries whose result the body computes into an arena value of its own
 * (the new h and c of an LSTM step): the body writes it straight into the
 * carry buffer the next iteration reads (sim_run_while points the value
 * there), so nothing is copied.  Not for results that are arguments,
 * outer values, aliases, updated in place (redir 2 already) or returned
 * twice. */
static void sim_while_redirect(sim_fcc *fc, const sim_while *w,
                               uint8_t *redir) {
  for (int32_t i = 0; i < w->n; i++) {
    int32_t ret = w->brets[i];
    if (redir[i] || w->thru[i] || !w->bytes[i] || ret == w->bargs[i] ||
        ret < 0 || ret >= fc->nv)
      continue;
    const sim_vinfo *v = &fc->v[ret];
    if (v->kind != SIM_V_SLOT || v->alias || v->vcat || v->in_out ||
        v->bytes != w->bytes[i])
      continue;
    int twice = 0, made = 0;
    for (int32_t j = 0; j < w->n; j++) twice |= j != i && w->brets[j] == ret;
    for (int32_t k = 0; k < w->body.n; k++) {
      const sim_step *s = &w->body.steps[k];
      for (int32_t j = 0; j < s->nout; j++) made |= s->out[j] == ret;
    }
    if (!twice && made) redir[i] = 1;
  }
  for (int32_t i = 0; i < w->n; i++) redir[i] = redir[i] == 1;
}

static xrt_status sim_lower_while(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  if (op->num_regions != 2 || op->num_results != op->num_operands ||
      op->regions[0].num_args != op->num_operands ||
      op->regions[1].num_args != op->num_operands)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad while");
  sim_while *w = (sim_while *)sim_palloc(fc, sizeof *w);
  if (!w) return XRT_RESOURCE_EXHAUSTED;
  const int32_t *cret;
  xrt_status rc = sim_while_buffers(fc, op, w);
  if (rc ||
      (rc = sim_lower_region(fc, &op->regions[0], &w->cond, &cret, 1, op)))
    return rc;
  /* the body's readers of loop-invariant carries register pack flags */
  sim_vec flags = {NULL, 0, 0, sizeof(int32_t)};
  const xrt_ir_region *lbody = fc->lbody;
  sim_vec *lflags = fc->lflags;
  fc->lbody = &op->regions[1];
  fc->lflags = &flags;
  rc = sim_lower_region(fc, &op->regions[1], &w->body, &w->brets,
                        op->num_operands, op);
  fc->lbody = lbody;
  fc->lflags = lflags;
  int32_t *fl = NULL;
  if (!rc && flags.n) {
    fl = (int32_t *)sim_palloc(fc, sizeof *fl * (size_t)flags.n);
    if (!fl) rc = XRT_RESOURCE_EXHAUSTED;
    else memcpy(fl, flags.p, sizeof *fl * (size_t)flags.n);
  }
  w->flags = fl;
  w->nflags = fl ? (int32_t)flags.n : 0;
  sim_vec_free(&fc->cc->al, &flags);
  if (rc) return rc;
  const xrt_shape *cs = sim_shape(fc, cret[0]);
  if (cs->dtype != XRT_PRED || cs->rank != 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "while cond must return tensor<i1>");
  w->cret = cret[0];
  w->cargs = op->regions[0].args;
  w->bargs = op->regions[1].args;
  uint8_t *redir = (uint8_t *)sim_palloc(fc, (size_t)w->n + 1);
  if (!redir) return XRT_RESOURCE_EXHAUSTED;
  sim_while_in_place(w, &op->regions[1], redir);
  sim_while_redirect(fc, w, redir);
  w->redir = redir;
  st->data = w;
  st->run = sim_run_while;
  return XRT_OK;
}

/* A call of module function fidx (func.call, composite). */
SIM_PRIVATE xrt_status sim_lower_call_to(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st, int32_t fidx) {
  const xrt_ir_module *m = fc->cc->m;
  if (fidx < 0 || fidx >= m->num_funcs)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s of an unknown function", op->name);
  const xrt_ir_func *g = &m->funcs[fidx];
  sim_fplan *fp = &fc->cc->exe->fp[fidx];
  if (fp->state == 1)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "recursive call of "
                       "@%s is not supported by the simulator", g->name);
  if (op->num_operands != g->body.num_args || op->num_results != g->num_results)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s does not match @%s", op->name, g->name);
  xrt_status rc = sim_plan_func(fc->cc, fidx, 0);
  if (rc) return rc;
  sim_call *c = (sim_call *)sim_palloc(fc, sizeof *c);
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(op->num_results + 1));
  if (!c || !b) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < op->num_results; i++)
    b[i] = sim_vbytes(fc, op->results[i]);
  c->fp = fp;
  c->bytes = b;
  st->data = c;
  st->run = sim_run_call;
  return XRT_OK;
}

static xrt_status sim_lower_call(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_call_to(fc, op, st, op->callee);
}

/* A step that calls the host function bound to op->callee with the
 * tensors in[0..nin) and out[0..nout) (custom_call: all operands and
 * results; infeed/outfeed/send/recv: all but the tokens). */
SIM_PRIVATE xrt_status sim_lower_host_call(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st, const char *target,
                                      const int32_t *in, int32_t nin,
                                      const int32_t *out, int32_t nout) {
  const xrt_host_binding *hosts = fc->cc->hosts;
  if (!hosts || op->callee < 0 || op->callee >= fc->cc->m->num_custom_calls ||
      !hosts[op->callee].fn)
    return sim_fail_op(fc->cc->err, op, XRT_NOT_FOUND, "%s target "
                       "'%s' has no host function",
                       op->code == XRT_OP_CUSTOM_CALL ? "custom_call"
                                                      : op->name, target);
  int32_t nt = nin + nout;
  sim_ccall *c = (sim_ccall *)sim_palloc(fc, sizeof *c);
  xrt_host_tensor *tm = (xrt_host_tensor *)sim_palloc(
      fc, sizeof *tm * (size_t)(nt + 1));
  if (!c || !tm) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < nt; i++) {
    int32_t id = i < nin ? in[i] : out[i - nin];
    if (fc->f->value_types[id].kind == XRT_TYPE_TOKEN) { /* no bytes */
      memset(&tm[i], 0, sizeof tm[i]);
      continue;
    }
    if (fc->f->value_types[id].kind != XRT_TYPE_TENSOR)
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: tuple "
                         "values cannot be passed to a host function",
                         op->name);
    tm[i].shape = *sim_shape(fc, id);
    tm[i].bytes = sim_bytes(&tm[i].shape);
  }
  st->in = in, st->nin = nin;
  st->out = out, st->nout = nout;
  c->target = target;
  c->host = hosts[op->callee];
  c->tmpl = tm;
  c->tmp = -1;
  st->data = c;
  st->run = sim_run_custom_call;
  return nt ? sim_temp(fc, sizeof *tm * (size_t)nt, &c->tmp) : XRT_OK;
}

static xrt_status sim_lower_custom_call(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  const xrt_ir_attr *t = sim_attr(op, "call_target_name", XRT_ATTR_STRING);
  return sim_lower_host_call(fc, op, st, t ? t->s : op->name, op->operands,
                             op->num_operands, op->results, op->num_results);
}

/* ----------------------------------------------------------------------
 * The op table: everything the simulator knows of an opcode in one entry
 * (sim_op_desc, internal.h).  Ops without an entry are refused.  The
 * elementwise ops of SIM_EW_OPS take theirs from that list; the other ops
 * sim_ew_kernel runs are spelled out below.
 * -------------------------------------------------------------------- */

#define SIM_OP_EW(e, xo, ar, k)                                               \
  [XRT_OP_##xo] = {.lower = sim_lower_ew, .ew_arity = ar,                     \
                   .vk = SIM_VK_##k, .fuse = SIM_FUSE_EW},
static const sim_op_desc sim_ops[XRT_OP_COUNT] = {
    SIM_EW_OPS(SIM_OP_EW)
    [XRT_OP_COMPARE] = {.lower = sim_lower_ew, .ew_arity = 2,
                        .fuse = SIM_FUSE_EW},
    [XRT_OP_CONVERT] = {.lower = sim_lower_ew, .ew_arity = 1,
                        .fuse = SIM_FUSE_EW},
    [XRT_OP_BITCAST_CONVERT] = {.lower = sim_lower_ew, .ew_arity = 1},
    [XRT_OP_REDUCE_PRECISION] = {.lower = sim_lower_ew, .ew_arity = 1,
                                 .quant = SIM_QR_ALL},
    [XRT_OP_UNIFORM_QUANTIZE] = {.lower = sim_lower_ew, .ew_arity = 1},
    [XRT_OP_UNIFORM_DEQUANTIZE] = {.lower = sim_lower_ew, .ew_arity = 1},
    [XRT_OP_CONSTANT] = {.lower = sim_lower_constant},
    [XRT_OP_IOTA] = {.lower = sim_lower_iota, .types = SIM_TR_NUM_RESULT},
    [XRT_OP_GET_DIMENSION_SIZE] = {.lower = sim_lower_get_dimension_size},
    [XRT_OP_REPLICA_ID] = {.lower = sim_lower_process_id},
    [XRT_OP_PARTITION_ID] = {.lower = sim_lower_process_id},
    [XRT_OP_ALL_REDUCE] = {.lower = sim_lower_all_reduce,
                           .coll = sim_run_all_reduce},
    [XRT_OP_ALL_GATHER] = {.lower = sim_lower_all_gather,
                           .coll = sim_run_all_gather},
    [XRT_OP_REDUCE_SCATTER] = {.lower = sim_lower_reduce_scatter,
                               .coll = sim_run_reduce_scatter},
    [XRT_OP_ALL_TO_ALL] = {.lower = sim_lower_all_to_all,
                           .coll = sim_run_all_to_all},
    [XRT_OP_COLLECTIVE_PERMUTE] = {.lower = sim_lower_collective_permute,
                                   .coll = sim_run_collective_permute},
    [XRT_OP_COLLECTIVE_BROADCAST] = {.lower = sim_lower_collective_broadcast,
                                     .coll = sim_run_collective_broadcast},
    [XRT_OP_COLLECTIVE_REDUCE] = {.lower = sim_lower_collective_reduce,
                                  .coll = sim_run_collective_reduce},
    [XRT_OP_BROADCAST_IN_DIM] = {.lower = sim_lower_broadcast_in_dim,
                                 .fuse = SIM_FUSE_VIEW},
    [XRT_OP_BROADCAST] = {.lower = sim_lower_broadcast, .fuse = SIM_FUSE_VIEW},
    [XRT_OP_RESHAPE] = {.lower = sim_lower_reshape, .fuse = SIM_FUSE_RESHAPE},
    [XRT_OP_TRANSPOSE] = {.lower = sim_lower_transpose, .fuse = SIM_FUSE_VIEW},
    [XRT_OP_SLICE] = {.lower = sim_lower_slice, .fuse = SIM_FUSE_VIEW},
    [XRT_OP_CONCATENATE] = {.lower = sim_lower_concatenate},
    [XRT_OP_PAD] = {.lower = sim_lower_pad},
    [XRT_OP_REVERSE] = {.lower = sim_lower_reverse},
    [XRT_OP_SELECT] = {.lower = sim_lower_select, .fuse = SIM_FUSE_SELECT,
                       .quant = SIM_QR_SELECT},
    [XRT_OP_CLAMP] = {.lower = sim_lower_clamp, .types = SIM_TR_CLAMP,
                      .fuse = SIM_FUSE_CLAMP, .quant = SIM_QR_ALL},
    [XRT_OP_REDUCE] = {.lower = sim_lower_reduce, .fuse = SIM_FUSE_REDUCE,
                       .quant = SIM_QR_WIDEN},
    [XRT_OP_DOT_GENERAL] = {.lower = sim_lower_dot_general,
                            .types = SIM_TR_DOT, .quant = SIM_QR_ALL},
    [XRT_OP_DOT] = {.lower = sim_lower_dot, .types = SIM_TR_DOT,
                    .quant = SIM_QR_ALL},
    [XRT_OP_WHILE] = {.lower = sim_lower_while, .flags = SIM_OPF_TUPLES},
    [XRT_OP_FUNC_CALL] = {.lower = sim_lower_call,
                          .flags = SIM_OPF_TUPLES | SIM_OPF_CALL},
    /* tokens: no bytes; tuples: refused when lowered */
    [XRT_OP_CUSTOM_CALL] = {.lower = sim_lower_custom_call,
                            .flags = SIM_OPF_TUPLES | SIM_OPF_HOST},
    [XRT_OP_OPTIMIZATION_BARRIER] = {.lower = sim_lower_barrier,
                                     .flags = SIM_OPF_TUPLES},
    [XRT_OP_GATHER] = {.lower = sim_lower_gather,
                       .types = SIM_TR_GATHER_INDEX},
    [XRT_OP_SCATTER] = {.lower = sim_lower_scatter,
                        .types = SIM_TR_SCATTER_INDEX},
    [XRT_OP_DYNAMIC_SLICE] = {.lower = sim_lower_dynamic_slice},
    [XRT_OP_DYNAMIC_UPDATE_SLICE] = {.lower = sim_lower_dynamic_update_slice},
    [XRT_OP_DYNAMIC_GATHER] = {.lower = sim_lower_dynamic_gather,
                               .types = SIM_TR_GATHER_INDEX},
    [XRT_OP_REDUCE_WINDOW] = {.lower = sim_lower_reduce_window,
                              .quant = SIM_QR_WIDEN},
    [XRT_OP_SELECT_AND_SCATTER] = {.lower = sim_lower_select_and_scatter},
    [XRT_OP_DYNAMIC_BROADCAST_IN_DIM] = {
        .lower = sim_lower_dynamic_broadcast_in_dim},
    [XRT_OP_DYNAMIC_IOTA] = {.lower = sim_lower_dynamic_iota},
    [XRT_OP_DYNAMIC_PAD] = {.lower = sim_lower_dynamic_pad},
    [XRT_OP_DYNAMIC_RESHAPE] = {.lower = sim_lower_dynamic_reshape},
    [XRT_OP_IF] = {.lower = sim_lower_if, .flags = SIM_OPF_TUPLES},
    [XRT_OP_CASE] = {.lower = sim_lower_case, .flags = SIM_OPF_TUPLES},
    [XRT_OP_MAP] = {.lower = sim_lower_map},
    [XRT_OP_SORT] = {.lower = sim_lower_sort},
    [XRT_OP_COMPOSITE] = {.lower = sim_lower_composite,
                          .flags = SIM_OPF_TUPLES},
    [XRT_OP_TUPLE] = {.lower = sim_lower_tuple, .flags = SIM_OPF_TUPLES},
    [XRT_OP_GET_TUPLE_ELEMENT] = {.lower = sim_lower_get_tuple_element,
                                  .flags = SIM_OPF_TUPLES},
    [XRT_OP_AFTER_ALL] = {.lower = sim_lower_after_all,
                          .flags = SIM_OPF_TUPLES},
    [XRT_OP_INFEED] = {.lower = sim_lower_infeed,
                       .flags = SIM_OPF_TUPLES | SIM_OPF_HOST},
    [XRT_OP_OUTFEED] = {.lower = sim_lower_outfeed,
                        .flags = SIM_OPF_TUPLES | SIM_OPF_HOST},
    [XRT_OP_SEND] = {.lower = sim_lower_send_any,
                     .flags = SIM_OPF_TUPLES | SIM_OPF_HOST},
    [XRT_OP_RECV] = {.lower = sim_lower_recv_any,
                     .flags = SIM_OPF_TUPLES | SIM_OPF_HOST},
    [XRT_OP_CHLO_SCAN] = {.lower = sim_lower_chlo_scan},
    [XRT_OP_CONVOLUTION] = {.lower = sim_lower_convolution,
                            .types = SIM_TR_CONV, .quant = SIM_QR_ALL},
    [XRT_OP_DYNAMIC_CONV] = {.lower = sim_lower_dynamic_conv,
                             .types = SIM_TR_CONV, .quant = SIM_QR_ALL},
    [XRT_OP_FFT] = {.lower = sim_lower_fft},
    [XRT_OP_TRIANGULAR_SOLVE] = {.lower = sim_lower_triangular_solve,
                                 .types = SIM_TR_LINALG, .quant = SIM_QR_ALL},
    [XRT_OP_CHOLESKY] = {.lower = sim_lower_cholesky, .types = SIM_TR_LINALG,
                         .quant = SIM_QR_ALL},
    [XRT_OP_BATCH_NORM_INFERENCE] = {.lower = sim_lower_batch_norm_inference,
                                     .types = SIM_TR_FLOAT_INPUT,
                                     .quant = SIM_QR_ALL,
                                     .fuse = SIM_FUSE_BN},
    [XRT_OP_BATCH_NORM_TRAINING] = {.lower = sim_lower_batch_norm_training,
                                    .types = SIM_TR_FLOAT_INPUT,
                                    .quant = SIM_QR_ALL},
    [XRT_OP_BATCH_NORM_GRAD] = {.lower = sim_lower_batch_norm_grad,
                                .types = SIM_TR_FLOAT_INPUT,
                                .quant = SIM_QR_ALL},
    [XRT_OP_RNG] = {.lower = sim_lower_rng, .types = SIM_TR_RNG},
    [XRT_OP_RNG_BIT_GENERATOR] = {.lower = sim_lower_rng_bit_generator,
                                  .types = SIM_TR_RNG_BITS},
    [XRT_OP_CHLO_RAGGED_DOT] = {.lower = sim_lower_chlo_ragged_dot,
                                .types = SIM_TR_RAGGED_DOT,
                                .quant = SIM_QR_ALL},
    /* terminators: lowered with their block (sim_lower_block) */
    [XRT_OP_RETURN] = {.flags = SIM_OPF_TUPLES},
    [XRT_OP_FUNC_RETURN] = {.flags = SIM_OPF_TUPLES},
};
#undef SIM_OP_EW

SIM_PRIVATE const sim_op_desc *sim_op(xrt_opcode code) {
  static const sim_op_desc refused; /* a code outside the table */
  return (unsigned)code < XRT_OP_COUNT ? &sim_ops[code] : &refused;
}

/* Tensors (also inside tuples) have element types the simulator stores. */
static int sim_type_ok(const xrt_ir_type *t, int depth) {
  if (t->kind == XRT_TYPE_TOKEN) return 1;
  if (t->kind == XRT_TYPE_TENSOR) return sim_esize(t->shape.dtype) != 0;
  if (t->kind != XRT_TYPE_TUPLE || depth > 64) return 0;
  for (int32_t i = 0; i < t->num_elems; i++)
    if (!sim_type_ok(&t->elems[i], depth + 1)) return 0;
  return 1;
}

/* Every value the op touches is a value of f that the simulator can
 * hold: tensors, and for some ops tuples and tokens.  XRT_OK, or the
 * status with the reason in why (also op_support's answer). */
SIM_PRIVATE xrt_status sim_values_why(const xrt_ir_func *f, const xrt_ir_op *op,
                                 char *why, size_t cap) {
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (id < 0 || id >= f->num_values) {
      snprintf(why, cap, "%s refers to value %d, which does not exist",
               op->name, (int)id);
      return XRT_INTERNAL;
    }
    const xrt_ir_type *t = &f->value_types[id];
    if (t->kind != XRT_TYPE_TENSOR &&
        !(sim_op(op->code)->flags & SIM_OPF_TUPLES)) {
      snprintf(why, cap, "%s: tuple and token values are not supported by "
               "the simulator", op->name);
      return XRT_UNIMPLEMENTED;
    }
    if (!sim_type_ok(t, 0)) {
      snprintf(why, cap, "%s: a value has an element type the simulator "
               "cannot store", op->name);
      return XRT_UNIMPLEMENTED;
    }
  }
  return XRT_OK;
}

static xrt_status sim_check_values(sim_fcc *fc, const xrt_ir_op *op) {
  char why[256];
  xrt_status rc = sim_values_why(fc->f, op, why, sizeof why);
  return rc ? sim_fail_op(fc->cc->err, op, rc, "%s", why) : XRT_OK;
}

/* ----------------------------------------------------------------------
 * Quantized operands and results of compute ops.
 *
 * The spec defines dot_general, convolution, clamp, select (with
 * differing quantization parameters), reduce_precision, batch norm,
 * cholesky and triangular_solve on quantized tensors as
 * dequantize_op_quantize: every quantized operand becomes its expressed
 * type, the float op runs, and a quantized result is quantized again
 * (hybrid_dequantize_then_op: a float lhs with a quantized rhs dequantizes
 * the rhs only and makes a float result).  Such an op lowers into one step
 * that runs a small plan: dequantize kernels into float pseudo values, the
 * op's own lowering applied to a copy of the op that reads and writes those
 * values, and quantize kernels into the real results.  The pseudo values
 * get their float types through fc->xf, a copy of the function whose
 * value_types also cover pseudo values, which is what fc->f points at while
 * the op's lowerer runs.
 *
 * Data movement ops (reshape, transpose, slice, broadcast_in_dim,
 * concatenate, pad, reverse, gather, scatter, dynamic slices, tuples,
 * control flow, ...) move storage values and need nothing; the ops with
 * regions (reduce, reduce_window, sort, scatter, select_and_scatter, map)
 * do their arithmetic in the region, whose elementwise ops are quantized
 * kernels themselves.
 * -------------------------------------------------------------------- */

static int sim_quant_eq(const xrt_ir_quant *a, const xrt_ir_quant *b) {
  if (a == b) return 1;
  if (!a || !b || a->storage != b->storage || a->expressed != b->expressed ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->axis != b->axis || a->num_scales != b->num_scales)
    return 0;
  for (int32_t i = 0; i < a->num_scales; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i])
      return 0;
  return 1;
}

/* The type operand (i < num_operands) or result i of op is computed in
 * when it differs from the value's own: the expressed type of a quantized
 * value, or for a reduce / reduce_window input the wider quantized type of
 * its result.  Returns 0 to use the value as it is. */
static int sim_quant_want(const sim_fcc *fc, const xrt_ir_op *op, int32_t i,
                          xrt_ir_type *w) {
  int32_t nin = op->num_operands;
  int32_t id = i < nin ? op->operands[i] : op->results[i - nin];
  const xrt_ir_type *t = &fc->f->value_types[id];
  if (t->kind != XRT_TYPE_TENSOR || !t->quant) return 0;
  *w = *t;
  if (sim_op(op->code)->quant == SIM_QR_WIDEN) {
    int32_t n = op->num_results;
    if (i >= n || nin != 2 * n) return 0;
    const xrt_ir_type *r = &fc->f->value_types[op->results[i]];
    if (!r->quant || r->shape.dtype == t->shape.dtype) return 0;
    w->shape.dtype = r->shape.dtype;
    w->quant = r->quant;
    return 1;
  }
  w->shape.dtype = t->quant->expressed;
  w->quant = NULL;
  return 1;
}

/* True if a value op reads or writes is quantized. */
static int sim_quant_any(const sim_fcc *fc, const xrt_ir_op *op) {
  const xrt_ir_type *t = fc->f->value_types;
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (t[id].kind == XRT_TYPE_TENSOR && t[id].quant) return 1;
  }
  return 0;
}

/* dequantize_select_quantize; a plain copy of storage values when the
 * branches and the result share their parameters. */
static int sim_quant_select(const sim_fcc *fc, const xrt_ir_op *op) {
  const xrt_ir_type *t = fc->f->value_types;
  if (op->num_operands != 3 || op->num_results != 1) return 0;
  return (t[op->operands[1]].quant || t[op->operands[2]].quant ||
          t[op->results[0]].quant) &&
         !(sim_quant_eq(t[op->operands[1]].quant, t[op->results[0]].quant) &&
           sim_quant_eq(t[op->operands[2]].quant, t[op->results[0]].quant));
}

/* is_promotable: quantized inputs whose body and results use a wider
 * storage type are converted first. */
static int sim_quant_widens(const sim_fcc *fc, const xrt_ir_op *op) {
  xrt_ir_type w;
  for (int32_t i = 0; i < op->num_operands; i++)
    if (sim_quant_want(fc, op, i, &w)) return 1;
  return 0;
}

/* True if op is a compute op with a quantized operand or result. */
SIM_PRIVATE int sim_quant_computes(const sim_fcc *fc, const xrt_ir_op *op) {
  switch (sim_op(op->code)->quant) {
  case SIM_QR_ALL: return sim_quant_any(fc, op);
  case SIM_QR_SELECT: return sim_quant_select(fc, op);
  case SIM_QR_WIDEN: return sim_quant_widens(fc, op);
  case SIM_QR_NONE: break;
  }
  return 0;
}

/* Points fc->xf at a copy of the function's types covering every value id
 * so far (pseudo values typeless until set). */
static xrt_status sim_quant_types(sim_fcc *fc, const xrt_ir_func *f) {
  if (fc->nv > fc->xcap) {
    int32_t cap = fc->nv + (fc->xcap > 16 ? fc->xcap : 16);
    xrt_ir_type *t = (xrt_ir_type *)sim_palloc(fc, sizeof *t * (size_t)cap);
    if (!t) return XRT_RESOURCE_EXHAUSTED;
    memset(t, 0, sizeof *t * (size_t)cap);
    if (fc->xcap) memcpy(t, fc->xt, sizeof *t * (size_t)fc->xcap);
    else memcpy(t, f->value_types, sizeof *t * (size_t)f->num_values);
    fc->xt = t;
    fc->xcap = cap;
  }
  fc->xf = *f;
  fc->xf.value_types = fc->xt;
  fc->xf.num_values = fc->nv;
  return XRT_OK;
}

/* A step converting value `from` (type a) into value `to` (type b), one of
 * them quantized, by the quantized elementwise kernel. */
static xrt_status sim_quant_step(sim_fcc *fc, const xrt_ir_op *op,
                                 const int32_t *from, const int32_t *to,
                                 const xrt_ir_type *a, const xrt_ir_type *b,
                                 sim_step *st) {
  sim_q *c = (sim_q *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  memset(c, 0, sizeof *c);
  c->e = b->quant ? SIM_Q_QUANTIZE : SIM_Q_DEQUANTIZE;
  c->nin = 1;
  if (!sim_q_value(a, &c->v[0]) || !sim_q_value(b, &c->v[1]))
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: quantized "
                       "type with storage %s is not supported by the "
                       "simulator", op->name, sim_dtype_name(a->shape.dtype));
  c->back = sim_ew_size(a->shape.dtype) < sim_ew_size(b->shape.dtype);
  memset(st, 0, sizeof *st);
  st->run = sim_run_ew;
  st->ew = sim_q_run;
  st->ew_ctx = c;
  st->in = from;
  st->out = to;
  st->nin = st->nout = 1;
  st->n = sim_numel(&a->shape);
  st->op = op;
  return XRT_OK;
}

static xrt_status sim_run_seq(const sim_step *st, void **vals, sim_cx *cx) {
  return sim_run_plan((const sim_plan *)st->data, vals, cx);
}

/* Lowers a compute op with quantized operands or results (see above). */
static xrt_status sim_lower_quant(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st, sim_lower_fn lower) {
  const xrt_ir_func *f = fc->f;
  int32_t nin = op->num_operands, nout = op->num_results, ns = 0;
  int32_t *ids = (int32_t *)sim_palloc(fc, sizeof *ids *
                                               (size_t)(nin + nout + 1));
  sim_step *steps = (sim_step *)sim_palloc(fc, sizeof *steps *
                                                   (size_t)(nin + nout + 1));
  xrt_ir_op *o2 = (xrt_ir_op *)sim_palloc(fc, sizeof *o2);
  sim_plan *plan = (sim_plan *)sim_palloc(fc, sizeof *plan);
  if (!ids || !steps || !o2 || !plan) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = XRT_OK;
  xrt_ir_type *want = (xrt_ir_type *)sim_palloc(fc, sizeof *want *
                                                      (size_t)(nin + nout + 1));
  if (!want) return XRT_RESOURCE_EXHAUSTED;
  /* pseudo values for the operands and results computed in another type */
  for (int32_t i = 0; i < nin + nout && !rc; i++) {
    ids[i] = i < nin ? op->operands[i] : op->results[i - nin];
    if (!sim_quant_want(fc, op, i, &want[i])) continue;
    if (!sim_esize(want[i].shape.dtype))
      return sim_unsupported_type(fc, op, want[i].shape.dtype);
    rc = sim_temp(fc, sim_bytes(&want[i].shape), &ids[i]);
  }
  if (rc || (rc = sim_quant_types(fc, f))) return rc;
  for (int32_t i = 0; i < nin + nout; i++) {
    int32_t id = i < nin ? op->operands[i] : op->results[i - nin];
    if (ids[i] != id) fc->xt[ids[i]] = want[i];
  }
  /* dequantize, the op on floats, quantize */
  for (int32_t i = 0; i < nin && !rc; i++)
    if (ids[i] != op->operands[i])
      rc = sim_quant_step(fc, op, &op->operands[i], &ids[i],
                          &f->value_types[op->operands[i]], &fc->xt[ids[i]],
                          &steps[ns++]);
  if (rc) return rc;
  *o2 = *op;
  o2->operands = ids;
  o2->results = ids + nin;
  sim_step s2;
  memset(&s2, 0, sizeof s2);
  s2.in = o2->operands;
  s2.out = o2->results;
  s2.nin = nin;
  s2.nout = nout;
  s2.op = o2;
  fc->f = &fc->xf;
  rc = lower(fc, o2, &s2);
  fc->f = f;
  if (rc) return rc;
  if (s2.run) steps[ns++] = s2;
  for (int32_t j = 0; j < nout && !rc; j++)
    if (ids[nin + j] != op->results[j])
      rc = sim_quant_step(fc, op, &ids[nin + j], &op->results[j],
                          &fc->xt[ids[nin + j]],
                          &f->value_types[op->results[j]], &steps[ns++]);
  if (rc) return rc;
  plan->steps = steps;
  plan->n = ns;
  st->run = sim_run_seq;
  st->data = plan;
  return XRT_OK;
}

/* Records the op's uses and definitions, then lowers it into one step. */
SIM_PRIVATE xrt_status sim_lower_op(sim_fcc *fc, const xrt_ir_op *op,
                               sim_vec *steps) {
  sim_lower_fn lower = sim_op(op->code)->lower;
  if (!lower)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s is not "
                       "supported by the simulator", op->name);
  xrt_status rc = sim_check_values(fc, op);
  if (rc) return rc;
  int32_t cur = fc->cur = fc->pos++, ndefs = fc->defs.n;
  for (int32_t i = 0; i < op->num_operands && !rc; i++) {
    rc = sim_use(fc, op->operands[i]);
    /* A region may read the operands while it runs. */
    if (!rc && op->num_regions && fc->depth == 0)
      rc = sim_keep(fc, op->operands[i]);
  }
  for (int32_t i = 0; i < op->num_results && !rc; i++)
    rc = sim_def(fc, op->results[i], sim_vbytes(fc, op->results[i]));
  sim_step st;
  memset(&st, 0, sizeof st);
  st.in = op->operands;
  st.out = op->results;
  st.nin = op->num_operands;
  st.nout = op->num_results;
  st.op = op;
  if (!rc && sim_quant_computes(fc, op))
    rc = sim_lower_quant(fc, op, &st, lower);
  else if (!rc)
    rc = lower(fc, op, &st);
  if (rc) return rc;
  sim_trace_wrap(fc, &st); /* collectives report to a trace */
  fc->cur = cur;
  if (fc->depth == 0 && fc->pos - 1 > cur) sim_extend(fc, ndefs, fc->pos - 1);
  if (!st.run) return XRT_OK;
  sim_step *slot = (sim_step *)sim_vec_push(&fc->cc->al, steps);
  if (!slot) return sim_oom(fc);
  *slot = st;
  return XRT_OK;
}

/* Lowers a block's ops into plan; *term is its terminator. */
SIM_PRIVATE xrt_status sim_lower_block(sim_fcc *fc, const xrt_ir_region *r,
                                  sim_plan *plan, const xrt_ir_op **term) {
  sim_vec steps = {NULL, 0, 0, sizeof(sim_step)};
  xrt_status rc = XRT_OK;
  if (r->num_ops < 1)
    return sim_fail(fc->cc->err, XRT_INVALID_ARGUMENT, "@%s: a block has no "
                    "terminator", fc->f->name);
  rc = sim_fz_lower_ops(fc, r, &steps); /* each op, or fused groups */
  const xrt_ir_op *t = &r->ops[r->num_ops - 1];
  if (!rc && t->code != XRT_OP_RETURN && t->code != XRT_OP_FUNC_RETURN)
    rc = sim_fail_op(fc->cc->err, t, XRT_INVALID_ARGUMENT, "a block must end "
                     "with a return, not %s", t->name);
  if (!rc) rc = sim_check_values(fc, t);
  fc->cur = fc->pos++;
  for (int32_t i = 0; i < t->num_operands && !rc; i++)
    rc = sim_use(fc, t->operands[i]);
  sim_step *arr = NULL;
  if (!rc && steps.n) {
    arr = (sim_step *)sim_palloc(fc, sizeof *arr * (size_t)steps.n);
    if (!arr) rc = XRT_RESOURCE_EXHAUSTED;
    else memcpy(arr, steps.p, sizeof *arr * (size_t)steps.n);
  }
  plan->steps = arr;
  plan->n = rc ? 0 : steps.n;
  *term = t;
  sim_vec_free(&fc->cc->al, &steps);
  return rc;
}
