/*
 * src/sim/plan.c - plans and steps; the planner: values, liveness and slots.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

SIM_PRIVATE xrt_status sim_run_plan(const sim_plan *p, void **vals, sim_cx *cx) {
  for (int32_t i = 0; i < p->n; i++) {
    const sim_step *s = &p->steps[i];
    if (cx->fault_steps >= 0 && cx->fault_steps-- == 0)
      return sim_fault_hit(cx, s);
    xrt_status rc = s->run(s, vals, cx);
    if (rc) return rc;
  }
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_oom(sim_fcc *fc) {
  return sim_fail(fc->cc->err, XRT_RESOURCE_EXHAUSTED, "out of host memory "
                  "while compiling @%s", fc->f->name);
}

/* Executable-lifetime memory; sets the error on failure. */
SIM_PRIVATE void *sim_palloc(sim_fcc *fc, size_t bytes) {
  void *p = sim_pool_alloc(&fc->cc->exe->pool, bytes);
  if (!p) sim_oom(fc);
  return p;
}

/* Not zeroed: for memory the caller writes whole at once. */
SIM_PRIVATE void *sim_palloc_raw(sim_fcc *fc, size_t bytes) {
  void *p = sim_pool_raw(&fc->cc->exe->pool, bytes);
  if (!p) sim_oom(fc);
  return p;
}

SIM_PRIVATE const xrt_shape *sim_shape(const sim_fcc *fc, int32_t id) {
  return &fc->f->value_types[id].shape;
}

/* Tuples are stored flat: each element at a 16-byte aligned offset of one
 * block (nested tuples inline), so copying a tuple is one memcpy and
 * get_tuple_element copies a sub-range.  Tokens hold no bytes. */
#define SIM_TUPLE_ALIGN 16

static size_t sim_tuple_pad(size_t off) {
  return (off + SIM_TUPLE_ALIGN - 1) & ~(size_t)(SIM_TUPLE_ALIGN - 1);
}

SIM_PRIVATE size_t sim_type_bytes(const xrt_ir_type *t) {
  if (t->kind == XRT_TYPE_TOKEN) return 0;
  if (t->kind != XRT_TYPE_TUPLE) return sim_bytes(&t->shape);
  size_t off = 0;
  for (int32_t i = 0; i < t->num_elems; i++)
    off = sim_tuple_pad(off) + sim_type_bytes(&t->elems[i]);
  return off;
}

/* Byte offset of element k inside a tuple value. */
SIM_PRIVATE size_t sim_tuple_off(const xrt_ir_type *t, int32_t k) {
  size_t off = 0;
  for (int32_t i = 0; i < k; i++)
    off = sim_tuple_pad(off) + sim_type_bytes(&t->elems[i]);
  return sim_tuple_pad(off);
}

/* Bytes of any value: tensor, tuple or token. */
SIM_PRIVATE size_t sim_vbytes(const sim_fcc *fc, int32_t id) {
  return sim_type_bytes(&fc->f->value_types[id]);
}

/* The first of n attributes named name (NULL names skipped), as
 * xrt_ir_op_attr and xrt_ir_attr_field find it; libc's strcmp after a
 * first-letter test (their byte loops were a twentieth of a disk cache
 * hit's planning: names such as "lhs_contracting_dimensions" are long). */
SIM_PRIVATE const xrt_ir_attr *sim_named(const xrt_ir_attr *it, int32_t n,
                                    const char *name) {
  for (int32_t i = 0; i < n; i++) {
    const char *a = it[i].name;
    if (a && a[0] == name[0] && strcmp(a, name) == 0) return &it[i];
  }
  return NULL;
}

/* A field of a DICT attribute (NULL: none, or dn is not a DICT). */
SIM_PRIVATE const xrt_ir_attr *sim_field(const xrt_ir_attr *dn, const char *name) {
  return dn && dn->kind == XRT_ATTR_DICT
             ? sim_named(dn->items, dn->num_items, name)
             : NULL;
}

SIM_PRIVATE const xrt_ir_attr *sim_attr(const xrt_ir_op *op, const char *name,
                                   int kind) {
  const xrt_ir_attr *a = sim_named(op->attrs, op->num_attrs, name);
  return a && a->kind == kind ? a : NULL;
}

/* An INTS attribute (absent means empty unless required). */
SIM_PRIVATE xrt_status sim_ints(sim_fcc *fc, const xrt_ir_op *op, const char *name,
                           int required, const int64_t **v, int64_t *n) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INTS);
  *v = a ? a->ints : NULL;
  *n = a ? a->n : 0;
  if (!a && required)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s needs the integer list attribute '%s'", op->name,
                       name);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_int_attr(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, int64_t *out) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INT);
  if (!a)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s needs the integer attribute '%s'", op->name, name);
  *out = a->i;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_unsupported_type(sim_fcc *fc, const xrt_ir_op *op,
                                       xrt_dtype t) {
  return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s is not supported "
                     "by the simulator for element type %s", op->name,
                     sim_dtype_name(t));
}

SIM_PRIVATE xrt_status sim_new_value(sim_fcc *fc, int32_t *id) {
  if (fc->nv == fc->capv) {
    const xrt_allocator *al = &fc->cc->al;
    int32_t cap = fc->capv ? 2 * fc->capv : 64;
    sim_vinfo *v = (sim_vinfo *)al->alloc(al->self, sizeof *v * (size_t)cap);
    if (!v) return sim_oom(fc);
    if (fc->nv) memcpy(v, fc->v, sizeof *v * (size_t)fc->nv);
    al->free(al->self, fc->v);
    fc->v = v;
    fc->capv = cap;
  }
  memset(&fc->v[fc->nv], 0, sizeof *fc->v);
  *id = fc->nv++;
  return XRT_OK;
}

/* The value whose memory id is: id itself, or what a chain of aliases
 * (reshapes that copy nothing, see sim_lower_reshape) leads to.  Uses of
 * an alias are uses of that value: it must live as long as they do. */
SIM_PRIVATE int32_t sim_root(const sim_fcc *fc, int32_t id) {
  while (fc->v[id].alias) id = fc->v[id].alias - 1;
  return id;
}

SIM_PRIVATE xrt_status sim_keep(sim_fcc *fc, int32_t id) {
  id = sim_root(fc, id);
  return sim_push_i32(&fc->cc->al, &fc->nested, id) ? XRT_OK : sim_oom(fc);
}

/* id is written by the current op and needs bytes of scratch. */
SIM_PRIVATE xrt_status sim_def(sim_fcc *fc, int32_t id, size_t bytes) {
  sim_vinfo *v = &fc->v[id];
  v->kind = SIM_V_SLOT;
  v->def = v->last = fc->cur;
  v->bytes = bytes;
  if (!sim_push_i32(&fc->cc->al, &fc->defs, id)) return sim_oom(fc);
  return fc->depth > 0 ? sim_keep(fc, id) : XRT_OK;
}

/* Scratch for the current op (a pseudo value). */
SIM_PRIVATE xrt_status sim_temp(sim_fcc *fc, size_t bytes, int32_t *id) {
  xrt_status rc = sim_new_value(fc, id);
  return rc ? rc : sim_def(fc, *id, bytes);
}

/* The current op reads id.  Inside a region the value must outlive the
 * whole top-level op, which may run the region many times. */
SIM_PRIVATE xrt_status sim_use(sim_fcc *fc, int32_t id) {
  if (fc->depth > 0) return sim_keep(fc, id);
  id = sim_root(fc, id);
  if (fc->v[id].last < fc->cur) fc->v[id].last = fc->cur;
  return XRT_OK;
}

SIM_PRIVATE void sim_set_const(sim_fcc *fc, int32_t id, void *p) {
  fc->v[id].kind = SIM_V_CONST;
  fc->v[id].cptr = p;
}

/* Extends values defined since defs index from, and kept ones, to end. */
SIM_PRIVATE void sim_extend(sim_fcc *fc, int32_t from, int32_t end) {
  const int32_t *d = (const int32_t *)fc->defs.p;
  const int32_t *k = (const int32_t *)fc->nested.p;
  for (int32_t i = from; i < fc->defs.n; i++) {
    sim_vinfo *v = &fc->v[sim_root(fc, d[i])];
    if (v->last < end) v->last = end;
  }
  for (int32_t i = 0; i < fc->nested.n; i++) {
    sim_vinfo *v = &fc->v[sim_root(fc, k[i])];
    if (v->last < end) v->last = end;
  }
  fc->nested.n = 0;
}

/* A free list of arena ranges sorted by offset.  A value takes the best
 * fitting range (the rest of it stays free); a value that fits nowhere
 * grows the free range that ends at the top, if any; a freed range merges
 * with its neighbours.  So values of mixed sizes reuse memory the way one
 * size does, and the arena stays close to the largest live set. */
typedef struct sim_slots {
  size_t *off, *cap;
  int32_t n;
  size_t top;
} sim_slots;

static void sim_slot_drop(sim_slots *s, int32_t i) {
  memmove(&s->off[i], &s->off[i + 1], sizeof *s->off * (size_t)(s->n - i - 1));
  memmove(&s->cap[i], &s->cap[i + 1], sizeof *s->cap * (size_t)(s->n - i - 1));
  s->n--;
}

/* Places v below limit bytes; 0 if it does not fit. */
static int sim_slot_alloc(sim_slots *s, sim_vinfo *v, size_t limit) {
  size_t need = sim_align_up(v->bytes);
  int32_t best = -1;
  for (int32_t i = 0; i < s->n; i++)
    if (s->cap[i] >= need && (best < 0 || s->cap[i] < s->cap[best]))
      best = i;
  v->cap = need;
  if (best >= 0) {
    v->off = s->off[best];
    s->off[best] += need;
    if ((s->cap[best] -= need) == 0) sim_slot_drop(s, best);
    return 1;
  }
  int grow = s->n > 0 && s->off[s->n - 1] + s->cap[s->n - 1] == s->top;
  size_t off = grow ? s->off[s->n - 1] : s->top;
  if (need > limit || off > limit - need) return 0;
  s->n -= grow;
  v->off = off;
  s->top = off + need;
  return 1;
}

static void sim_slot_free(sim_slots *s, const sim_vinfo *v) {
  int32_t i = 0;
  while (i < s->n && s->off[i] < v->off) i++;
  if (i > 0 && s->off[i - 1] + s->cap[i - 1] == v->off) {
    s->cap[i - 1] += v->cap;
    if (i < s->n && s->off[i - 1] + s->cap[i - 1] == s->off[i]) {
      s->cap[i - 1] += s->cap[i];
      sim_slot_drop(s, i);
    }
    return;
  }
  if (i < s->n && v->off + v->cap == s->off[i]) {
    s->off[i] = v->off;
    s->cap[i] += v->cap;
    return;
  }
  memmove(&s->off[i + 1], &s->off[i], sizeof *s->off * (size_t)(s->n - i));
  memmove(&s->cap[i + 1], &s->cap[i], sizeof *s->cap * (size_t)(s->n - i));
  s->off[i] = v->off;
  s->cap[i] = v->cap;
  s->n++;
}

/* The entry's results that an op writes lend their output buffers to
 * values that die before that op: the buffers exist anyway, and the arena
 * shrinks by what fits there (a chain's intermediates, typically), so the
 * peak is the largest live set rather than it plus the results. */
#define SIM_OUT_REGIONS 4
#define SIM_OUT_MIN ((size_t)64 << 10)

typedef struct sim_outs {
  int32_t n;
  int32_t id[SIM_OUT_REGIONS];    /* the result value */
  int32_t until[SIM_OUT_REGIONS]; /* the op that writes it */
  size_t size[SIM_OUT_REGIONS];
  sim_slots s[SIM_OUT_REGIONS];
} sim_outs;

static void sim_outs_init(const sim_fcc *fc, sim_outs *o, size_t *sb) {
  o->n = 0;
  for (int32_t i = 0; i < fc->nv && o->n < SIM_OUT_REGIONS; i++) {
    const sim_vinfo *v = &fc->v[i];
    if (v->kind != SIM_V_OUT || v->bytes < SIM_OUT_MIN) continue;
    o->id[o->n] = i;
    o->until[o->n] = v->def;
    o->size[o->n] = v->bytes & ~(size_t)(SIM_ALIGN - 1);
    o->s[o->n] = (sim_slots){sb, sb + fc->nv, 0, 0};
    sb += 2 * (size_t)fc->nv;
    o->n++;
  }
}

static void sim_place(sim_slots *arena, sim_outs *o, sim_vinfo *v) {
  v->in_out = 0;
  for (int32_t r = 0; r < o->n; r++)
    if (v->last < o->until[r] && sim_slot_alloc(&o->s[r], v, o->size[r])) {
      v->in_out = o->id[r] + 1;
      return;
    }
  sim_slot_alloc(arena, v, SIZE_MAX);
}

static void sim_unplace(sim_slots *arena, sim_outs *o, const sim_vinfo *v) {
  for (int32_t r = 0; r < o->n; r++)
    if (v->in_out == o->id[r] + 1) {
      sim_slot_free(&o->s[r], v);
      return;
    }
  sim_slot_free(arena, v);
}

static int sim_has_slot(const sim_vinfo *v) {
  return v->kind == SIM_V_SLOT && v->bytes > 0 && !v->part_of;
}

/* The value whose slot holds part value id (a concatenate's result that
 * is no part itself), and id's offset in it. */
static int32_t sim_part_top(const sim_fcc *fc, int32_t id, size_t *off) {
  *off = 0;
  while (fc->v[id].part_of) {
    *off += fc->v[id].part_off;
    id = fc->v[id].part_of - 1;
  }
  return id;
}

/* A concatenate's result lives from its first part's definition to the
 * last use of any part (the parts are written before it is "made"). */
static void sim_parts_span(sim_fcc *fc) {
  for (int32_t i = 0; i < fc->nv; i++) {
    if (!fc->v[i].part_of) continue;
    size_t off;
    sim_vinfo *t = &fc->v[sim_part_top(fc, i, &off)];
    if (fc->v[i].def < t->def) t->def = fc->v[i].def;
    if (fc->v[i].last > t->last) t->last = fc->v[i].last;
  }
}

/* Each part's memory: its slice of the result's slot. */
static void sim_parts_place(sim_fcc *fc) {
  for (int32_t i = 0; i < fc->nv; i++) {
    if (!fc->v[i].part_of) continue;
    size_t off;
    const sim_vinfo *t = &fc->v[sim_part_top(fc, i, &off)];
    fc->v[i].off = t->off + off;
    fc->v[i].in_out = t->in_out;
  }
}

/* Sorts the slot values by def and by last use (counting sort). */
static void sim_sort_by(const sim_fcc *fc, int by_last, int32_t *cnt,
                        int32_t *out) {
  int32_t P = fc->pos;
  memset(cnt, 0, sizeof *cnt * (size_t)(P + 1));
  for (int32_t i = 0; i < fc->nv; i++)
    if (sim_has_slot(&fc->v[i]))
      cnt[(by_last ? fc->v[i].last : fc->v[i].def) + 1]++;
  for (int32_t p = 0; p < P; p++) cnt[p + 1] += cnt[p];
  for (int32_t i = 0; i < fc->nv; i++)
    if (sim_has_slot(&fc->v[i]))
      out[cnt[by_last ? fc->v[i].last : fc->v[i].def]++] = i;
}

/* Sweeps op positions: a value takes a slot at its definition and gives
 * it back after its last use (after the results of that op are placed, so
 * an op never writes over its own operands). */
SIM_PRIVATE xrt_status sim_assign_slots(sim_fcc *fc, size_t *arena_size) {
  const xrt_allocator *al = &fc->cc->al;
  int32_t P = fc->pos, nv = fc->nv;
  size_t words = (size_t)(P + 1) + 2 * (size_t)nv;
  int32_t *buf = (int32_t *)al->alloc(al->self, sizeof(int32_t) * words + 1);
  size_t *sb = (size_t *)al->alloc(
      al->self, sizeof(size_t) * 2 * (size_t)nv * (1 + SIM_OUT_REGIONS) + 1);
  if (!buf || !sb) {
    al->free(al->self, buf);
    al->free(al->self, sb);
    return sim_oom(fc);
  }
  int32_t *cnt = buf, *byd = buf + P + 1, *byl = byd + nv;
  sim_parts_span(fc);
  sim_sort_by(fc, 0, cnt, byd);
  sim_sort_by(fc, 1, cnt, byl);
  sim_slots s = {sb, sb + nv, 0, 0};
  sim_outs o;
  sim_outs_init(fc, &o, sb + 2 * (size_t)nv);
  int32_t di = 0, li = 0, total = 0;
  for (int32_t i = 0; i < nv; i++) total += sim_has_slot(&fc->v[i]);
  for (int32_t p = 0; p < P; p++) {
    while (di < total && fc->v[byd[di]].def == p)
      sim_place(&s, &o, &fc->v[byd[di++]]);
    while (li < total && fc->v[byl[li]].last == p)
      sim_unplace(&s, &o, &fc->v[byl[li++]]);
  }
  assert(di == total && li == total);
  sim_parts_place(fc);
  *arena_size = s.top;
  al->free(al->self, buf);
  al->free(al->self, sb);
  return XRT_OK;
}
