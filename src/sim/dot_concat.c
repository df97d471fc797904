/*
 * src/sim/dot_concat.c - dot_general over a concatenation, without the
 * concatenation.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * Products over concatenations
 *
 * A decoder appends the new token's key and value to its cache with a
 * concatenate ([T, d] ++ [1, d] -> [T + 1, d]), reshapes the result into
 * heads and reads it only with dot_generals.  Materializing it copies the
 * whole cache once a call, a read and a write of the cache on top of the
 * product's own read.  Instead, when every use of a concatenation is a
 * dot_general (of the same block, directly or through one reshape, which
 * only relabels the row-major bytes) in which the concatenated dimension
 * stays one dimension of the operand, the concatenation is never
 * computed: each product is split by the parts.
 *
 *  - the concatenated dimension a batching or free dimension of the
 *    operand: the result is the concatenation of the parts' products
 *    along the matching result dimension (and the other operand's batch
 *    dimension is sliced with it);
 *  - a contracting dimension: the result is the sum of the parts'
 *    products, each against the matching slice of the other operand's
 *    contracting dimension (the parts' partial sums added in part order:
 *    a reordering of the sum, as the packed and skinny kernels do too).
 *
 * Each part's product is planned like any dot_general (skinny, packed or
 * plain kernels) with offset tables over the part and the other operand
 * in place; a slice of the other operand is a shift of its batch table.
 * A part whose results form the start of the result is written there;
 * the others go to one scratch result and are copied into their slice
 * (or added).  Only f32 and f64 products whose operands and result share
 * the type are split; the concatenation stays materialized for anything
 * else (other users, entry results, nested regions, quantized types), and
 * when XRT_SIM_NO_FUSION is set (the unfused reference program) or fusion
 * decisions are being replayed from serialized bytes.  A big part whose
 * batches interleave (the heads of a cache) is read ahead in one
 * sequential pass on one thread (sim_dc_touch).
 * ==================================================================== */

/* XRT_SIM_NO_FUSION: products read materialized concatenations. */
static int sim_dc_off;
static pthread_once_t sim_dc_off_once = PTHREAD_ONCE_INIT;
static void sim_dc_off_read(void) {
  sim_dc_off = getenv("XRT_SIM_NO_FUSION") != NULL;
}

/* A plain f32/f64 tensor value (no quantization). */
static int sim_dc_float(const sim_fcc *fc, int32_t id, xrt_dtype t) {
  if (id < 0 || id >= fc->f->num_values) return 0;
  const xrt_ir_type *ty = &fc->f->value_types[id];
  return ty->kind == XRT_TYPE_TENSOR && !ty->quant && ty->shape.dtype == t;
}

/* How a dot_general reads the concatenation behind one operand. */
typedef struct sim_dc_map {
  int p;          /* the operand (0 lhs, 1 rhs) */
  int32_t j;      /* its concatenated dimension */
  int role;       /* 0 batching, 1 contracting, 2 free */
  int32_t jo;     /* batching/contracting: the other operand's dimension */
  int32_t r;      /* batching/free: the result dimension */
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nb, nc;
} sim_dc_map;

/* The dimension of shape x that is dimension axis of c (same row-major
 * bytes): the one with the same elements before it and the same size, or
 * -1 when the reshape merged or split it. */
static int32_t sim_dc_dim(const xrt_shape *c, int64_t axis,
                          const xrt_shape *x) {
  int64_t pre = 1, xp = 1;
  for (int64_t k = 0; k < axis; k++) pre *= c->dims[k];
  for (int32_t j = 0; j < x->rank; j++) {
    if (xp == pre && x->dims[j] == c->dims[axis]) return j;
    xp *= x->dims[j];
    if (xp > pre) break;
  }
  return -1;
}

/* Whether the dimension lists of a product of L and R into O are well
 * formed (in range, each dimension used once, sizes agreeing) and O is
 * [batch, lhs free, rhs free]. */
static int sim_dc_dims_ok(const xrt_shape *L, const xrt_shape *R,
                          const xrt_shape *O, const sim_dc_map *m) {
  int used[2][XRT_MAX_RANK] = {{0}};
  const xrt_shape *S[2] = {L, R};
  const int64_t *lists[2][2] = {{m->lb, m->lc}, {m->rb, m->rc}};
  int64_t counts[2] = {m->nb, m->nc};
  if (m->nb < 0 || m->nc < 0 || m->nb + m->nc > L->rank ||
      m->nb + m->nc > R->rank)
    return 0;
  for (int s = 0; s < 2; s++)
    for (int g = 0; g < 2; g++)
      for (int64_t q = 0; q < counts[g]; q++) {
        int64_t d = lists[s][g][q];
        if (d < 0 || d >= S[s]->rank || used[s][d]) return 0;
        used[s][d] = 1;
      }
  for (int g = 0; g < 2; g++)
    for (int64_t q = 0; q < counts[g]; q++)
      if (L->dims[lists[0][g][q]] != R->dims[lists[1][g][q]]) return 0;
  int64_t want[XRT_MAX_RANK];
  int32_t n = 0;
  for (int64_t q = 0; q < m->nb; q++) want[n++] = L->dims[m->lb[q]];
  for (int s = 0; s < 2; s++)
    for (int32_t d = 0; d < S[s]->rank; d++)
      if (!used[s][d]) {
        if (n >= XRT_MAX_RANK) return 0;
        want[n++] = S[s]->dims[d];
      }
  if (O->rank != n) return 0;
  for (int32_t k = 0; k < n; k++)
    if (O->dims[k] != want[k]) return 0;
  return 1;
}

/* Fills m for dot_general op reading value x (one of its operands) whose
 * bytes are the concatenation cat: 1 when the product can be split. */
static int sim_dc_mapping(const sim_fcc *fc, const xrt_ir_op *cat,
                          const xrt_ir_op *op, int32_t x, const int64_t *lb,
                          const int64_t *rb, const int64_t *lc,
                          const int64_t *rc, int64_t nb, int64_t nc,
                          sim_dc_map *m) {
  if (op->num_operands != 2 || op->num_results != 1 ||
      (op->operands[0] == x) == (op->operands[1] == x))
    return 0;
  xrt_dtype t = sim_shape(fc, cat->results[0])->dtype;
  if (!sim_dc_float(fc, op->operands[0], t) ||
      !sim_dc_float(fc, op->operands[1], t) ||
      !sim_dc_float(fc, op->results[0], t))
    return 0;
  m->lb = lb, m->rb = rb, m->lc = lc, m->rc = rc, m->nb = nb, m->nc = nc;
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  /* a product of no elements is not split: its parts' results would have
   * no scratch (sim_dc_lower_dot sizes it by the largest) */
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  if (!sim_dc_dims_ok(L, R, O, m) || sim_numel(O) < 1) return 0;
  const xrt_ir_attr *da = sim_attr(cat, "dimension", XRT_ATTR_INT);
  if (!da) return 0;
  m->p = op->operands[1] == x;
  m->j = sim_dc_dim(sim_shape(fc, cat->results[0]), da->i,
                    m->p ? R : L);
  if (m->j < 0) return 0;
  const int64_t *mb = m->p ? rb : lb, *mc = m->p ? rc : lc;
  const int64_t *ob = m->p ? lb : rb, *oc = m->p ? lc : rc;
  for (int64_t q = 0; q < nb; q++)
    if (mb[q] == m->j) {
      m->role = 0, m->jo = (int32_t)ob[q], m->r = (int32_t)q;
      return 1;
    }
  for (int64_t q = 0; q < nc; q++)
    if (mc[q] == m->j) {
      m->role = 1, m->jo = (int32_t)oc[q], m->r = -1;
      return 1;
    }
  /* free: after the batch dimensions and, for the rhs, the lhs free ones */
  int32_t r = (int32_t)nb;
  if (m->p) r += (int32_t)(L->rank - nb - nc);
  const xrt_shape *X = m->p ? R : L;
  for (int32_t d = 0; d < m->j && d < X->rank; d++) {
    int listed = 0;
    for (int64_t q = 0; q < nb; q++) listed |= mb[q] == d;
    for (int64_t q = 0; q < nc; q++) listed |= mc[q] == d;
    r += !listed;
  }
  m->role = 2, m->jo = -1, m->r = r;
  return 1;
}

/* The dimension numbers of a dot_general op (0 when malformed). */
static int sim_dc_dot_dims(const xrt_ir_op *op, const int64_t **lb,
                           const int64_t **rb, const int64_t **lc,
                           const int64_t **rc, int64_t *nb, int64_t *nc) {
  const xrt_ir_attr *dn =
      sim_named(op->attrs, op->num_attrs, "dot_dimension_numbers");
  int64_t n1, n2, n3, n4;
  *lb = sim_dot_field(dn, "lhs_batching_dimensions", &n1);
  *rb = sim_dot_field(dn, "rhs_batching_dimensions", &n2);
  *lc = sim_dot_field(dn, "lhs_contracting_dimensions", &n3);
  *rc = sim_dot_field(dn, "rhs_contracting_dimensions", &n4);
  *nb = n1, *nc = n3;
  return n1 == n2 && n3 == n4 && n1 <= XRT_MAX_RANK && n3 <= XRT_MAX_RANK;
}

/* Uses of value v by the ops of region r, nested regions included. */
static int64_t sim_dc_uses(const xrt_ir_region *r, int32_t v, int depth) {
  int64_t n = 0;
  for (int32_t k = 0; k < r->num_ops; k++) {
    const xrt_ir_op *o = &r->ops[k];
    for (int32_t j = 0; j < o->num_operands; j++) n += o->operands[j] == v;
    for (int32_t j = 0; j < o->num_regions && depth < 256; j++)
      n += sim_dc_uses(&o->regions[j], v, depth + 1);
  }
  return n;
}

/* The region whose ops include op (NULL: none). */
static const xrt_ir_region *sim_dc_home(const xrt_ir_region *r,
                                        const xrt_ir_op *op, int depth) {
  if (r->num_ops > 0 && op >= r->ops && op < r->ops + r->num_ops) return r;
  for (int32_t k = 0; k < r->num_ops; k++)
    for (int32_t j = 0; j < r->ops[k].num_regions && depth < 256; j++) {
      const xrt_ir_region *h =
          sim_dc_home(&r->ops[k].regions[j], op, depth + 1);
      if (h) return h;
    }
  return NULL;
}

/* The value whose bytes id relabels through reshapes defined in r. */
static int32_t sim_dc_base(const xrt_ir_region *r, int32_t id) {
  for (int hop = 0; hop < 16; hop++) {
    const xrt_ir_op *def = NULL;
    for (int32_t k = 0; k < r->num_ops && !def; k++)
      if (r->ops[k].num_results == 1 && r->ops[k].results[0] == id)
        def = &r->ops[k];
    if (!def || def->code != XRT_OP_RESHAPE || def->num_operands != 1)
      break;
    id = def->operands[0];
  }
  return id;
}

/* Whether every use of v (the bytes of cat) is a splittable dot_general
 * or (v being cat itself, depth 0) a reshape of the same kind, all ops of
 * region r.  Not a reshape of a reshape: fusion may make the two one loop
 * (sim_fz_plan_block) that reads the concatenation's bytes, never made. */
static int sim_dc_users_ok(const sim_fcc *fc, const xrt_ir_region *r,
                           const xrt_ir_op *cat, int32_t v, int depth) {
  int64_t total = sim_dc_uses(&fc->f->body, v, 0), ok = 0;
  if (total < 1) return 0;
  for (int32_t k = 0; k + 1 < r->num_ops; k++) {
    const xrt_ir_op *o = &r->ops[k];
    int reads = 0;
    for (int32_t j = 0; j < o->num_operands; j++) reads += o->operands[j] == v;
    if (!reads) continue;
    if (o->code == XRT_OP_DOT_GENERAL) {
      const int64_t *lb, *rb, *lc, *rc;
      int64_t nb, nc;
      sim_dc_map m;
      if (!sim_dc_dot_dims(o, &lb, &rb, &lc, &rc, &nb, &nc) ||
          !sim_dc_mapping(fc, cat, o, v, lb, rb, lc, rc, nb, nc, &m))
        return 0;
      /* the other operand is materialized (not this concatenation nor
       * one already left unmaterialized) */
      int32_t other = sim_dc_base(r, o->operands[1 - m.p]);
      if (other == cat->results[0] || fc->v[other].vcat) return 0;
    } else if (o->code == XRT_OP_RESHAPE) {
      if (depth > 0 || o->num_operands != 1 || o->num_results != 1 ||
          !sim_dc_float(fc, o->results[0],
                        sim_shape(fc, cat->results[0])->dtype) ||
          sim_numel(sim_shape(fc, o->results[0])) !=
              sim_numel(sim_shape(fc, v)) ||
          !sim_dc_users_ok(fc, r, cat, o->results[0], depth + 1))
        return 0;
    } else {
      return 0;
    }
    ok += reads;
  }
  return ok == total;
}

/* Lowering a concatenate: 1 when it is left unmaterialized (no step; the
 * products that read it read its parts), 0 to lower it as a copy. */
SIM_PRIVATE int sim_dc_lower_concat(sim_fcc *fc, const xrt_ir_op *op) {
  pthread_once(&sim_dc_off_once, sim_dc_off_read);
  if (sim_dc_off || fc->cc->fzin || op->num_operands < 2 ||
      op->num_results != 1)
    return 0;
  int32_t v = op->results[0];
  const xrt_shape *c = sim_shape(fc, v);
  const xrt_ir_attr *da = sim_attr(op, "dimension", XRT_ATTR_INT);
  if ((c->dtype != XRT_F32 && c->dtype != XRT_F64) ||
      !sim_dc_float(fc, v, c->dtype) || !da || da->i < 0 ||
      da->i >= c->rank || sim_numel(c) < 1)
    return 0;
  int64_t axis = da->i, sum = 0;
  for (int32_t i = 0; i < op->num_operands; i++) {
    int32_t pid = op->operands[i];
    if (!sim_dc_float(fc, pid, c->dtype)) return 0;
    const xrt_shape *s = sim_shape(fc, pid);
    if (s->rank != c->rank || s->dims[axis] < 1) return 0;
    for (int32_t k = 0; k < c->rank; k++)
      if (k != axis && s->dims[k] != c->dims[k]) return 0;
    sum += s->dims[axis];
  }
  if (sum != c->dims[axis]) return 0;
  const xrt_ir_region *home = sim_dc_home(&fc->f->body, op, 0);
  if (!home || !sim_dc_users_ok(fc, home, op, v, 0)) return 0;
  sim_vinfo *vi = &fc->v[v];
  vi->kind = SIM_V_NONE;
  vi->bytes = 0;
  vi->vcat = op;
  return 1;
}

/* A reshape of an unmaterialized concatenation is one too. */
SIM_PRIVATE void sim_dc_lower_reshape(sim_fcc *fc, const xrt_ir_op *op) {
  sim_vinfo *o = &fc->v[op->results[0]];
  o->kind = SIM_V_NONE;
  o->bytes = 0;
  o->vcat = fc->v[op->operands[0]].vcat;
}

/* ---- the split product ---- */

enum { SIM_DC_DIRECT, SIM_DC_COPY, SIM_DC_ADD };

/* Parts of more bytes whose batch dimensions are not leading are read
 * ahead (sim_dc_touch). */
#define SIM_DC_TOUCH_MIN ((size_t)256 << 10)

/* Parts' products of fewer multiply-adds run on the calling thread. */
#define SIM_DC_SERIAL 65536.0

typedef struct sim_dc_part {
  sim_step st;     /* the part's product: in ids[0..1], out ids[2] */
  int32_t ids[3];
  int mode;        /* SIM_DC_*: where its result goes */
  int serial;      /* too small to share with the device's threads */
  size_t touch;    /* bytes of the part read ahead, sequentially */
  sim_xcopy x;     /* SIM_DC_COPY: scratch -> the result's slice */
} sim_dc_part;

typedef struct sim_dc {
  int32_t n;
  sim_dc_part *parts;
  int64_t onumel;
  int f64;
  int cat_p; /* which operand the parts are */
} sim_dc;

/* Reads [p, p + n) ahead into the caches, in order: the products read a
 * part whose batches interleave (the heads of a cache, [T, heads, 64])
 * batch by batch, a few lines of each row at a time, which from memory is
 * several times slower than one sequential pass followed by reads from
 * the cache.  One thread only: with two, a product's columns are shared,
 * and each core reads its share faster from memory than from the other
 * core's cache (measured on gpt_decode: 2.6 ms touched, 2.4 ms not). */
static void sim_dc_touch(const char *p, size_t n) {
  for (size_t o = 0; o < n; o += 64) {
#if defined(__GNUC__)
    __builtin_prefetch(p + o, 0, 3);
#else
    (void)((const volatile unsigned char *)p)[o];
#endif
  }
}

static xrt_status sim_run_dc(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_dc *c = (const sim_dc *)st->data;
  char *out = (char *)vals[st->out[0]];
  for (int32_t i = 0; i < c->n; i++) {
    const sim_dc_part *p = &c->parts[i];
    if (p->touch && !(cx && cx->tp && cx->tp->threads > 1))
      sim_dc_touch((const char *)vals[p->ids[c->cat_p]], p->touch);
    sim_cx one; /* a one-row part: waking the other threads costs more */
    if (p->serial && cx) {
      one = *cx;
      one.tp = NULL;
    }
    xrt_status rc = p->st.run(&p->st, vals, p->serial && cx ? &one : cx);
    if (rc) return rc;
    const char *res = (const char *)vals[p->ids[2]];
    if (p->mode == SIM_DC_COPY) {
      sim_xcopy_run(&p->x, out, res);
    } else if (p->mode == SIM_DC_ADD && c->f64) {
      double *o = (double *)(void *)out;
      const double *a = (const double *)(const void *)res;
      for (int64_t k = 0; k < c->onumel; k++) o[k] += a[k];
    } else if (p->mode == SIM_DC_ADD) {
      float *o = (float *)(void *)out;
      const float *a = (const float *)(const void *)res;
      for (int64_t k = 0; k < c->onumel; k++) o[k] += a[k];
    }
  }
  return XRT_OK;
}

/* Row-major element strides of dims. */
static void sim_dc_strides(int32_t rank, const int64_t *dims, int64_t *st) {
  int64_t s = 1;
  for (int32_t k = rank - 1; k >= 0; k--) {
    st[k] = s;
    s *= dims[k];
  }
}

/* An offset table over the listed dimensions (sizes from dims), with
 * strides s1 (and s2 of a second operand, when given): count entries. */
static int64_t *sim_dc_table(sim_fcc *fc, int64_t nd, const int64_t *list,
                             const int64_t *dims, const int64_t *s1,
                             const int64_t *list2, const int64_t *s2,
                             int64_t **t2, int64_t *count) {
  int64_t sizes[XRT_MAX_RANK], a[XRT_MAX_RANK], b[XRT_MAX_RANK], c = 1;
  for (int64_t q = 0; q < nd; q++) {
    sizes[q] = dims[list[q]];
    a[q] = s1[list[q]];
    b[q] = s2 ? s2[list2[q]] : 0;
    c *= sizes[q];
  }
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(c ? c : 1));
  int64_t *u = s2 ? (int64_t *)sim_palloc(fc, sizeof *u * (size_t)(c ? c : 1))
                  : NULL;
  if (!t || (s2 && !u)) return NULL;
  sim_enum_offsets(nd, sizes, a, s2 ? b : NULL, t, u);
  if (t2) *t2 = u;
  *count = c;
  return t;
}

/* Plans the product of part i (value pid, s0.. s0 + sn of the
 * concatenated dimension) into ps->st, writing value ps->ids[2]. */
static xrt_status sim_dc_plan_part(sim_fcc *fc, const xrt_ir_op *op,
                                   const sim_dc_map *m, int32_t pid,
                                   int64_t s0, int64_t sn, sim_dc_part *ps) {
  const xrt_shape *S[2] = {sim_shape(fc, op->operands[0]),
                           sim_shape(fc, op->operands[1])};
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  xrt_dtype t = O->dtype;
  int64_t dims[2][XRT_MAX_RANK], str[2][XRT_MAX_RANK], shift[2] = {0, 0};
  for (int s = 0; s < 2; s++)
    memcpy(dims[s], S[s]->dims, sizeof(int64_t) * (size_t)S[s]->rank);
  /* the part: its own row-major layout */
  dims[m->p][m->j] = sn;
  sim_dc_strides(S[m->p]->rank, dims[m->p], str[m->p]);
  /* the other operand in place, sliced with a batching/contracting pair */
  int o = 1 - m->p;
  sim_dc_strides(S[o]->rank, S[o]->dims, str[o]);
  if (m->role != 2) {
    dims[o][m->jo] = sn;
    shift[o] = s0 * str[o][m->jo];
  }
  sim_dot *d = (sim_dot *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  int64_t lf[XRT_MAX_RANK], rf[XRT_MAX_RANK], nlf, nrf, *rbt = NULL,
      *rkt = NULL;
  nlf = sim_free_dims(S[0], m->lb, m->nb, m->lc, m->nc, lf);
  nrf = sim_free_dims(S[1], m->rb, m->nb, m->rc, m->nc, rf);
  int64_t *lbt = sim_dc_table(fc, m->nb, m->lb, dims[0], str[0], m->rb,
                              str[1], &rbt, &d->B);
  int64_t *lkt = sim_dc_table(fc, m->nc, m->lc, dims[0], str[0], m->rc,
                              str[1], &rkt, &d->K);
  int64_t *lmt = sim_dc_table(fc, nlf, lf, dims[0], str[0], NULL, NULL,
                              NULL, &d->M);
  int64_t *rnt = sim_dc_table(fc, nrf, rf, dims[1], str[1], NULL, NULL,
                              NULL, &d->N);
  if (!lbt || !lkt || !lmt || !rnt) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t b = 0; b < d->B; b++) { /* the other operand's slice */
    lbt[b] += shift[0];
    rbt[b] += shift[1];
  }
  size_t asz;
  d->fn = sim_dot_for(t, &asz);
  if (!d->fn) return sim_unsupported_type(fc, op, t);
  d->lb = lbt, d->rb = rbt, d->lk = lkt, d->rk = rkt, d->lm = lmt;
  d->rn = rnt;
  d->unit_n = 1;
  for (int64_t n = 0; n < d->N; n++) d->unit_n &= d->rn[n] == n;
  d->lt = d->rt = d->ot = d->ct = t;
  d->ltmp = d->rtmp = d->otmp = d->acc = -1;
  d->lnumel = sim_numel(S[0]), d->rnumel = sim_numel(S[1]);
  d->onumel = d->B * d->M * d->N;
  d->wrap = XRT_DTYPE_INVALID;
  ps->serial = (double)d->B * (double)d->M * (double)d->N * (double)d->K <
               SIM_DC_SERIAL;
  /* a part whose batches interleave in memory (the heads of a cache) */
  ps->touch = 0;
  size_t pbytes = (size_t)sim_numel(S[m->p]) / (size_t)S[m->p]->dims[m->j] *
                  (size_t)sn * sim_esize(t);
  if (m->nb > 0 && pbytes >= SIM_DC_TOUCH_MIN) {
    const int64_t *pb = m->p ? m->rb : m->lb;
    for (int64_t q = 0; q < m->nb; q++)
      if (pb[q] != q) ps->touch = pbytes;
  }
  sim_step *st = &ps->st;
  memset(st, 0, sizeof *st);
  ps->ids[m->p] = pid;
  ps->ids[o] = op->operands[o];
  st->in = ps->ids;
  st->out = ps->ids + 2;
  st->nin = 2;
  st->nout = 1;
  st->op = op;
  xrt_status rc;
  if (sim_skinny_lower_dot(fc, d, st, &rc)) return rc;
  if (sim_gemm_lower_dot(fc, d, st, &rc)) return rc;
  rc = d->unit_n ? sim_temp(fc, (size_t)d->N * asz, &d->acc) : XRT_OK;
  st->data = d;
  st->run = sim_run_dot;
  return rc;
}

/* Lowering a dot_general one of whose operands is an unmaterialized
 * concatenation (sim_dc_lower_concat): one product per part. */
SIM_PRIVATE xrt_status sim_dc_lower_dot(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st, const int64_t *lb,
                                        const int64_t *rb, const int64_t *lc,
                                        const int64_t *rcd, int64_t nb,
                                        int64_t nc) {
  int p = fc->v[op->operands[0]].vcat == NULL;
  int32_t x = op->operands[p];
  const xrt_ir_op *cat = fc->v[x].vcat;
  sim_dc_map m;
  if (fc->v[op->operands[1 - p]].vcat ||
      !sim_dc_mapping(fc, cat, op, x, lb, rb, lc, rcd, nb, nc, &m))
    return sim_fail_op(fc->cc->err, op, XRT_INTERNAL, "a product over a "
                       "concatenation that was not materialized");
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  int64_t ost[XRT_MAX_RANK], axis = sim_attr(cat, "dimension",
                                             XRT_ATTR_INT)->i;
  sim_dc_strides(O->rank, O->dims, ost);
  sim_dc *c = (sim_dc *)sim_palloc(fc, sizeof *c);
  sim_dc_part *parts = (sim_dc_part *)sim_palloc(
      fc, sizeof *parts * (size_t)cat->num_operands);
  if (!c || !parts) return XRT_RESOURCE_EXHAUSTED;
  c->n = cat->num_operands;
  c->parts = parts;
  c->onumel = sim_numel(O);
  c->f64 = O->dtype == XRT_F64;
  c->cat_p = m.p;
  /* elements of the result before the sliced dimension: the first part's
   * results are the start of the result when they are one run */
  int64_t pre = 1;
  for (int32_t k = 0; m.role != 1 && k < m.r; k++) pre *= O->dims[k];
  int32_t tmp = -1;
  size_t es = sim_esize(O->dtype), most = 0;
  xrt_status rc = XRT_OK;
  int64_t s0 = 0;
  for (int32_t i = 0; i < c->n; i++) {
    int64_t sn = sim_shape(fc, cat->operands[i])->dims[axis];
    sim_dc_part *ps = &parts[i];
    ps->mode = m.role == 1 ? (i ? SIM_DC_ADD : SIM_DC_DIRECT)
                           : (i == 0 && pre == 1 ? SIM_DC_DIRECT
                                                 : SIM_DC_COPY);
    int64_t pd[XRT_MAX_RANK], pst[XRT_MAX_RANK];
    memcpy(pd, O->dims, sizeof(int64_t) * (size_t)O->rank);
    if (m.role != 1) pd[m.r] = sn;
    size_t bytes = es;
    for (int32_t k = 0; k < O->rank; k++) bytes *= (size_t)pd[k];
    if (ps->mode != SIM_DC_DIRECT && bytes > most) most = bytes;
    if (ps->mode == SIM_DC_COPY) {
      sim_dc_strides(O->rank, pd, pst);
      sim_xcopy_init(&ps->x, es, O->rank, pd, pst, ost, 0, s0 * ost[m.r]);
    }
    s0 += sn;
  }
  if (most && (rc = sim_temp(fc, most, &tmp))) return rc;
  s0 = 0;
  for (int32_t i = 0; i < c->n && !rc; i++) {
    int32_t pid = cat->operands[i];
    int64_t sn = sim_shape(fc, pid)->dims[axis];
    parts[i].ids[2] = parts[i].mode == SIM_DC_DIRECT ? op->results[0] : tmp;
    rc = sim_use(fc, pid); /* the parts are read here, not at the cat */
    if (!rc) rc = sim_dc_plan_part(fc, op, &m, pid, s0, sn, &parts[i]);
    s0 += sn;
  }
  if (rc) return rc;
  st->data = c;
  st->run = sim_run_dc;
  return XRT_OK;
}
