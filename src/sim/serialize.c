/*
 * src/sim/serialize.c - serialized executables (ABI 1.1, the disk cache): the
 * module, its fusion decisions, and their validation.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * The plugin table
 * ==================================================================== */

/* ======================================================================
 * Serialized executables (ABI 1.1: executable_serialize, serialized_free,
 * executable_deserialize; the persistent compilation cache of issue #7)
 *
 * The bytes are the verified IR module the executable was planned from,
 * in a binary form, its entry, and the fusion decisions the planner made
 * for it: loading them skips parsing, the normalizer and the verifier
 * (most of a cold compile) and the search for fused groups, and re-runs
 * the rest of the planner.  They stay valid across processes of the same
 * simulator version and host (native byte order, checked by a marker).
 *
 *   "XSIMEXE1", u32 format version (4), u32 byte-order marker, u64 XXH3-64
 *   of every byte after it, i32 entry,
 *   the module: name, custom calls, replicas, partitions, version, funcs;
 *   each func: name, public, value count, a table of the distinct value
 *   types and a u32 index into it per value, body region, result types,
 *   loc;
 *   each region: arg ids, ops; each op: code, u8 1 when its name is the
 *   code's (else 0 and the name), operand and result ids, attrs, regions,
 *   loc, callee; types, attrs and literals nest; an attribute's name is a
 *   u8 index into the last SIM_SER_NAMES names or SIM_SER_NEWNAME and the
 *   name;
 *   the fusion decisions: i32 count, then that many i32: per block the
 *   planner fused, in planning order, its op count n (terminator aside)
 *   and n group ids (-1: alone, i: a root, > i: the root absorbing it;
 *   sim_fz_plan_block).  A count of 0 (say, a decision that could not be
 *   recorded) makes the load search as a cold compile does.
 * Versions 3 and 2 (types in full per value, op names as strings, no
 * decisions) are still read, and re-planned from scratch.
 *
 * Strings are a u32 length + 1 (0: NULL) and the bytes; SIM_SER_SAME
 * repeats the previous string of the same slot (op names and file names
 * repeat op after op).  Integers are native-endian.
 *
 * Deserialize reads the bytes as untrusted (they come from disk): every
 * read is bounds-checked, every count bounded by the bytes left, every
 * value id, callee, opcode, dtype, rank, dim and literal size checked, no
 * tensor larger than a device's memory, and nesting depth limited;
 * anything wrong is XRT_INVALID_ARGUMENT.  The bytes carry their own
 * XXH3-64, checked first, so that damage a store without a checksum lets
 * through is refused; it is skipped when the core says its store checked
 * a hash over exactly these bytes (bytes_verified, ABI 1.2: xrt's disk
 * cache, whose file checksum covers them; hashing them twice was a
 * twentieth of a disk cache hit).  A hash is not a validity
 * check, though (bytes can be damaged and resealed, or written on
 * purpose), so the rebuilt module is then validated to the level the
 * planner relies on ("validating what was read" below: scoping of values,
 * terminators, op names matching codes, and a copy of the verifier's
 * rules for each op that may load from bytes; other ops and quantized
 * types are refused), and a module the planner still refuses is
 * XRT_INVALID_ARGUMENT too.  The fusion decisions are taken only after
 * the checks of sim_fz_grouping_ok (cheaper than the search they replace:
 * roots and members of fusable kinds, members before their root over its
 * loop space, every use of a member's value inside its group); decisions
 * that do not fit the blocks make the load XRT_INVALID_ARGUMENT.  The
 * rebuilt module lives in blocks of a sim_pool that the executable's own
 * pool adopts.
 * ==================================================================== */

#define SIM_SER_MAGIC "XSIMEXE1"
/* 3: a 2-D integer tensor attribute (replica groups, source-target pairs)
 * keeps its shape, so collectives load; 2 is still read, without them.
 * 4: a function's value types are a table of distinct types and an index
 * per value, an op named as its code says has a flag instead of the name,
 * and the fusion decisions follow the functions; 3 and 2 are still read
 * (and re-planned from scratch). */
#define SIM_SER_VERSION 4u
#define SIM_SER_ORDER 0x01020304u
#define SIM_SER_SAME 0xffffffffu
#define SIM_SER_DEPTH 64 /* nesting of regions, types and attributes */
#define SIM_SER_HASH_AT 16 /* offset of the hash; it covers what follows */

enum { SIM_SLOT_OPNAME, SIM_SLOT_FILE, SIM_SLOT_COUNT };

/* Version 4: an attribute name is a u8, the index of one of the last
 * SIM_SER_NAMES distinct names written (a ring both sides keep alike), or
 * SIM_SER_NEWNAME and the string, which then takes the next ring slot. */
#define SIM_SER_NAMES 16
#define SIM_SER_NEWNAME 0xffu

/* ---- writing ---- */

typedef struct sim_wbuf {
  unsigned char *p;
  size_t n, cap;
  int oom;
  const char *last[SIM_SLOT_COUNT];
  const char *names[SIM_SER_NAMES]; /* the ring of attribute names */
  unsigned nnames;
} sim_wbuf;

static void sim_w(sim_wbuf *w, const void *src, size_t n) {
  if (w->oom || !n) return;
  if (n > w->cap - w->n) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap - w->n < n) {
      if (cap > SIZE_MAX / 2) {
        w->oom = 1;
        return;
      }
      cap *= 2;
    }
    unsigned char *p = (unsigned char *)realloc(w->p, cap);
    if (!p) {
      w->oom = 1;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  memcpy(w->p + w->n, src, n);
  w->n += n;
}

static void sim_w32(sim_wbuf *w, uint32_t v) { sim_w(w, &v, sizeof v); }
static void sim_wi32(sim_wbuf *w, int32_t v) { sim_w(w, &v, sizeof v); }
static void sim_wi64(sim_wbuf *w, int64_t v) { sim_w(w, &v, sizeof v); }
static void sim_wu8(sim_wbuf *w, unsigned v) {
  unsigned char b = (unsigned char)v;
  sim_w(w, &b, 1);
}

/* n bytes of s (NULL allowed); slot >= 0 lets a repeat cost 4 bytes. */
static void sim_wstrn(sim_wbuf *w, const char *s, size_t n, int slot) {
  if (slot >= 0 && s && w->last[slot] &&
      (s == w->last[slot] ||
       (strlen(w->last[slot]) == n && memcmp(w->last[slot], s, n) == 0))) {
    sim_w32(w, SIM_SER_SAME);
    return;
  }
  if (s && n >= SIM_SER_SAME - 1) {
    w->oom = 1;
    return;
  }
  sim_w32(w, s ? (uint32_t)n + 1 : 0);
  if (s) sim_w(w, s, n);
  if (slot >= 0 && s) w->last[slot] = s;
}

static void sim_wstr(sim_wbuf *w, const char *s, int slot) {
  sim_wstrn(w, s, s ? strlen(s) : 0, slot);
}

static void sim_wids(sim_wbuf *w, const int32_t *ids, int32_t n) {
  sim_wi32(w, n);
  if (n > 0) sim_w(w, ids, sizeof *ids * (size_t)n);
}

static void sim_wloc(sim_wbuf *w, const xrt_ir_loc *loc) {
  sim_wstr(w, loc->file, SIM_SLOT_FILE);
  sim_wi32(w, loc->line);
  sim_wi32(w, loc->col);
}

static void sim_wtype(sim_wbuf *w, const xrt_ir_type *t) {
  sim_wu8(w, t->kind);
  if (t->kind == XRT_TYPE_TUPLE) {
    sim_wi32(w, t->num_elems);
    for (int32_t i = 0; i < t->num_elems; i++) sim_wtype(w, &t->elems[i]);
    return;
  }
  if (t->kind != XRT_TYPE_TENSOR) return;
  sim_wu8(w, (unsigned)t->shape.dtype);
  sim_wu8(w, (unsigned)t->shape.rank);
  sim_w(w, t->shape.dims, sizeof(int64_t) * (size_t)t->shape.rank);
  const xrt_ir_quant *q = t->quant;
  sim_wu8(w, q != NULL);
  if (!q) return;
  sim_wu8(w, (unsigned)q->storage);
  sim_wu8(w, (unsigned)q->expressed);
  sim_wi64(w, q->storage_min);
  sim_wi64(w, q->storage_max);
  sim_wi32(w, q->axis);
  sim_wi32(w, q->num_scales);
  sim_w(w, q->scales, sizeof(double) * (size_t)q->num_scales);
  sim_w(w, q->zero_points, sizeof(int64_t) * (size_t)q->num_scales);
}

static void sim_wlit(sim_wbuf *w, const xrt_ir_literal *l) {
  sim_wtype(w, &l->type);
  sim_wu8(w, l->splat);
  sim_wi64(w, (int64_t)l->bytes);
  sim_w(w, l->data, l->bytes);
}

static void sim_wname(sim_wbuf *w, const char *s) {
  for (unsigned k = 0; s && k < SIM_SER_NAMES && k < w->nnames; k++)
    if (strcmp(w->names[k], s) == 0) {
      sim_wu8(w, k);
      return;
    }
  sim_wu8(w, SIM_SER_NEWNAME);
  sim_wstr(w, s, -1);
  if (s) w->names[w->nnames++ % SIM_SER_NAMES] = s;
}

static void sim_wattr(sim_wbuf *w, const xrt_ir_attr *a) {
  sim_wname(w, a->name);
  sim_wu8(w, a->kind);
  sim_wi64(w, a->i);
  sim_w(w, &a->f, sizeof a->f);
  sim_wi64(w, a->n);
  switch (a->kind) {
  case XRT_ATTR_STRING:
    sim_wstrn(w, a->s, (size_t)a->n, -1);
    break;
  case XRT_ATTR_ENUM:
  case XRT_ATTR_SYMBOL:
    sim_wstr(w, a->s, -1);
    break;
  case XRT_ATTR_INTS: {
    sim_w(w, a->ints, sizeof(int64_t) * (size_t)a->n);
    int rows = a->lit && a->lit->type.shape.rank == 2; /* version 3 */
    sim_wu8(w, (unsigned)rows);
    if (rows) {
      sim_wi64(w, a->lit->type.shape.dims[0]);
      sim_wi64(w, a->lit->type.shape.dims[1]);
    }
    break;
  }
  case XRT_ATTR_DENSE:
    sim_wlit(w, a->lit);
    break;
  case XRT_ATTR_TYPE:
    sim_wtype(w, a->type);
    break;
  case XRT_ATTR_LIST:
  case XRT_ATTR_DICT:
    sim_wi32(w, a->num_items);
    for (int32_t i = 0; i < a->num_items; i++) sim_wattr(w, &a->items[i]);
    break;
  default:
    break;
  }
}

static void sim_wregion(sim_wbuf *w, const xrt_ir_region *r);

static void sim_wop(sim_wbuf *w, const xrt_ir_op *op) {
  sim_wi32(w, (int32_t)op->code);
  const char *cn = sim_opcode_name(op->code);
  int named = cn && op->name && strcmp(op->name, cn) == 0;
  sim_wu8(w, (unsigned)named); /* 1: the name is the code's */
  if (!named) sim_wstr(w, op->name, SIM_SLOT_OPNAME);
  sim_wids(w, op->operands, op->num_operands);
  sim_wids(w, op->results, op->num_results);
  sim_wi32(w, op->num_attrs);
  for (int32_t i = 0; i < op->num_attrs; i++) sim_wattr(w, &op->attrs[i]);
  sim_wi32(w, op->num_regions);
  for (int32_t i = 0; i < op->num_regions; i++)
    sim_wregion(w, &op->regions[i]);
  sim_wloc(w, &op->loc);
  sim_wi32(w, op->callee);
}

static void sim_wregion(sim_wbuf *w, const xrt_ir_region *r) {
  sim_wids(w, r->args, r->num_args);
  sim_wi32(w, r->num_ops);
  for (int32_t i = 0; i < r->num_ops; i++) sim_wop(w, &r->ops[i]);
}

/* Plain tensor types (and tokens) that are equal; others never are (the
 * table keeps them apart, which costs bytes, not correctness). */
static int sim_wsame_type(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == XRT_TYPE_TOKEN) return 1;
  if (a->kind != XRT_TYPE_TENSOR || a->quant || b->quant) return 0;
  return a->shape.dtype == b->shape.dtype && a->shape.rank == b->shape.rank &&
         memcmp(a->shape.dims, b->shape.dims,
                sizeof(int64_t) * (size_t)a->shape.rank) == 0;
}

#define SIM_SER_TYPE_LOOKBACK 16 /* table entries searched for a type */

/* The value types: a table of distinct types (a type is looked for among
 * the last entries only, so writing stays linear), then one u32 index
 * per value. */
static void sim_wvalue_types(sim_wbuf *w, const xrt_ir_func *f) {
  int32_t n = f->num_values, nt = 0;
  int32_t *tab = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n + 1));
  uint32_t *idx = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(n + 1));
  if (!tab || !idx) {
    free(tab);
    free(idx);
    w->oom = 1;
    return;
  }
  const xrt_ir_type *vt = f->value_types;
  for (int32_t i = 0; i < n; i++) {
    int32_t k = nt - 1, stop = nt - SIM_SER_TYPE_LOOKBACK;
    while (k >= 0 && k >= stop && !sim_wsame_type(&vt[tab[k]], &vt[i])) k--;
    if (k < 0 || k < stop) tab[k = nt++] = i;
    idx[i] = (uint32_t)k;
  }
  sim_wi32(w, nt);
  for (int32_t k = 0; k < nt; k++) sim_wtype(w, &vt[tab[k]]);
  sim_w(w, idx, sizeof *idx * (size_t)n);
  free(tab);
  free(idx);
}

static void sim_wfunc(sim_wbuf *w, const xrt_ir_func *f) {
  sim_wstr(w, f->name, -1);
  sim_wu8(w, f->is_public);
  sim_wi32(w, f->num_values);
  sim_wvalue_types(w, f);
  sim_wregion(w, &f->body);
  sim_wi32(w, f->num_results);
  for (int32_t i = 0; i < f->num_results; i++)
    sim_wtype(w, &f->result_types[i]);
  sim_wloc(w, &f->loc);
}

SIM_PRIVATE xrt_status sim_executable_serialize(void *executable, void **out_data,
                                           size_t *out_size,
                                           xrt_plugin_error *err) {
  const sim_exe *e = (const sim_exe *)executable;
  if (!e || !out_data || !out_size || !e->m)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad serialize arguments");
  *out_data = NULL;
  *out_size = 0;
  const xrt_ir_module *m = e->m;
  sim_wbuf w;
  memset(&w, 0, sizeof w);
  sim_w(&w, SIM_SER_MAGIC, 8);
  sim_w32(&w, SIM_SER_VERSION);
  sim_w32(&w, SIM_SER_ORDER);
  sim_wi64(&w, 0); /* the hash, below */
  sim_wi32(&w, e->entry);
  sim_wstr(&w, m->name, -1);
  sim_wi32(&w, m->num_custom_calls);
  sim_wi32(&w, m->num_replicas);
  sim_wi32(&w, m->num_partitions);
  sim_wstr(&w, m->stablehlo_version, -1);
  sim_wi32(&w, m->num_funcs);
  for (int32_t i = 0; i < m->num_funcs; i++) sim_wfunc(&w, &m->funcs[i]);
  /* the fusion decisions (none when one could not be recorded) */
  int32_t nfz = e->fzrec_lost ? 0 : e->fzrec.n;
  sim_wi32(&w, nfz);
  if (nfz) sim_w(&w, e->fzrec.p, sizeof(int32_t) * (size_t)nfz);
  if (w.oom) {
    free(w.p);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  }
  uint64_t h = XXH3_64bits(w.p + SIM_SER_HASH_AT + 8,
                           w.n - SIM_SER_HASH_AT - 8);
  memcpy(w.p + SIM_SER_HASH_AT, &h, sizeof h);
  *out_data = w.p;
  *out_size = w.n;
  return XRT_OK;
}

SIM_PRIVATE void sim_serialized_free(void *data) { free(data); }

/* ---- reading ---- */

/* A bump allocator over blocks of a sim_pool (zeroed, 8-byte aligned). */
typedef struct sim_rbuf {
  const unsigned char *p;
  size_t n, at;
  const char *why; /* first problem found; reading stops there */
  int depth;
  sim_pool pool;
  char *blk;
  size_t blk_left;
  const char *last[SIM_SLOT_COUNT];
  const char *names[SIM_SER_NAMES]; /* version 4: as sim_wbuf's */
  unsigned nnames;
  /* The function being read: value ids must be below num_values. */
  int32_t num_values, num_funcs, num_custom_calls;
  /* A tensor larger than a device's memory cannot run (and would have
   * the planner allocate it for an iota): the bytes are refused. */
  uint64_t max_tensor_bytes;
  uint32_t version; /* of the bytes (SIM_SER_VERSION, 3 or 2) */
  int verified; /* the core's store checked a hash over them (skip ours) */
  /* Version 4: the fusion decisions (nfz ints), for sim_compile_given. */
  const int32_t *fz;
  int32_t nfz;
} sim_rbuf;

static int sim_rbad(sim_rbuf *r, const char *why) {
  if (!r->why) r->why = why;
  return 0;
}

/* A new block for at least bytes (8-aligned); 0 when out of memory. */
static int sim_rblock(sim_rbuf *r, size_t bytes) {
  /* blocks below the usual mmap threshold, not zeroed: a hit touches
   * only the bytes it uses and reuses freed heap memory (1 MB blocks
   * were mapped and faulted in afresh on every load) */
  size_t sz = bytes > ((size_t)64 << 10) ? bytes : ((size_t)64 << 10);
  char *b = (char *)sim_pool_raw(&r->pool, sz);
  if (!b) return sim_rbad(r, "out of host memory");
  r->blk = b;
  r->blk_left = sz;
  return 1;
}

/* Not zeroed: for bytes the caller overwrites at once. */
static inline void *sim_ralloc_raw(sim_rbuf *r, size_t bytes) {
  if (r->why) return NULL;
  bytes = (bytes + 7) & ~(size_t)7;
  if (bytes > r->blk_left && !sim_rblock(r, bytes)) return NULL;
  void *p = r->blk;
  r->blk += bytes;
  r->blk_left -= bytes;
  return p;
}

static void *sim_ralloc(sim_rbuf *r, size_t bytes) {
  void *p = sim_ralloc_raw(r, bytes);
  return p ? memset(p, 0, bytes) : NULL;
}

/* Zeroed memory for bytes > 0 items; for none, a non-NULL pointer that
 * is never read (most ops have no regions, many no attributes). */
static void *sim_rnone_or_zeroed(sim_rbuf *r, size_t bytes) {
  return bytes ? sim_ralloc(r, bytes) : sim_ralloc_raw(r, 8);
}

static int sim_r(sim_rbuf *r, void *dst, size_t n) {
  if (r->why) return 0;
  if (n > r->n - r->at) return sim_rbad(r, "truncated");
  if (n) memcpy(dst, r->p + r->at, n);
  r->at += n;
  return 1;
}

/* The fixed-size reads inline their common case (a third of decoding
 * was calls of sim_r). */
static inline int32_t sim_ri32(sim_rbuf *r) {
  int32_t v = 0;
  if (!r->why && r->n - r->at >= sizeof v) {
    memcpy(&v, r->p + r->at, sizeof v);
    r->at += sizeof v;
    return v;
  }
  sim_r(r, &v, sizeof v);
  return v;
}
static inline int64_t sim_ri64(sim_rbuf *r) {
  int64_t v = 0;
  if (!r->why && r->n - r->at >= sizeof v) {
    memcpy(&v, r->p + r->at, sizeof v);
    r->at += sizeof v;
    return v;
  }
  sim_r(r, &v, sizeof v);
  return v;
}
static inline unsigned sim_ru8(sim_rbuf *r) {
  if (!r->why && r->at < r->n) return r->p[r->at++];
  unsigned char v = 0;
  sim_r(r, &v, 1);
  return v;
}

/* A count of items that take at least min_bytes each in what is left. */
static inline int32_t sim_rcount(sim_rbuf *r, size_t min_bytes) {
  int32_t n = sim_ri32(r);
  if (r->why) return 0;
  if (n < 0 || (size_t)n > (r->n - r->at) / min_bytes) {
    sim_rbad(r, "bad count");
    return 0;
  }
  return n;
}

/* A copy of n items of size bytes each, read straight from the input. */
static void *sim_rarray(sim_rbuf *r, size_t n, size_t size) {
  if (r->why || !n) return NULL;
  if (n > (r->n - r->at) / size) {
    sim_rbad(r, "truncated array");
    return NULL;
  }
  void *p = sim_ralloc_raw(r, n * size); /* n * size bytes are left */
  if (p) memcpy(p, r->p + r->at, n * size), r->at += n * size;
  return p;
}

/* A NUL-terminated copy (NULL stays NULL); *out_n is its length. */
static const char *sim_rstrn(sim_rbuf *r, int slot, size_t *out_n) {
  uint32_t len = 0;
  if (out_n) *out_n = 0;
  if (!sim_r(r, &len, sizeof len)) return NULL;
  if (len == SIM_SER_SAME) {
    if (slot < 0 || !r->last[slot]) {
      sim_rbad(r, "bad string reference");
      return NULL;
    }
    if (out_n) *out_n = strlen(r->last[slot]);
    return r->last[slot];
  }
  if (len == 0) return NULL;
  size_t n = (size_t)len - 1;
  if (n > r->n - r->at) {
    sim_rbad(r, "truncated string");
    return NULL;
  }
  char *s = (char *)sim_ralloc_raw(r, n + 1);
  if (!s) return NULL;
  sim_r(r, s, n);
  s[n] = 0;
  if (out_n) *out_n = n;
  if (slot >= 0) r->last[slot] = s;
  return s;
}

static const char *sim_rstr(sim_rbuf *r, int slot) {
  return sim_rstrn(r, slot, NULL);
}

/* Value ids of the current function (a third of an op's decoding: the
 * count, copy and range check run inline). */
static inline const int32_t *sim_rids(sim_rbuf *r, int32_t *out_n) {
  int32_t n = sim_ri32(r);
  *out_n = 0;
  if (r->why) return NULL;
  size_t bytes = sizeof(int32_t) * (size_t)n;
  if (n < 0 || (size_t)n > (r->n - r->at) / sizeof(int32_t)) {
    sim_rbad(r, "bad count");
    return NULL;
  }
  if (!n) return NULL;
  int32_t *ids = (int32_t *)sim_ralloc_raw(r, bytes);
  if (!ids) return NULL;
  /* copied and checked in one pass (most ops have one to three) */
  const unsigned char *src = r->p + r->at;
  uint32_t bad = 0, nv = (uint32_t)r->num_values;
  for (int32_t i = 0; i < n; i++) {
    int32_t id;
    memcpy(&id, src + sizeof id * (size_t)i, sizeof id);
    ids[i] = id;
    bad |= (uint32_t)id >= nv; /* (negative ids wrap above) */
  }
  r->at += bytes;
  if (bad) return sim_rbad(r, "value id out of range"), NULL;
  *out_n = n;
  return ids;
}

static void sim_rloc(sim_rbuf *r, xrt_ir_loc *loc) {
  loc->file = sim_rstr(r, SIM_SLOT_FILE);
  loc->line = sim_ri32(r);
  loc->col = sim_ri32(r);
}

static int sim_rdtype_ok(unsigned d) {
  return d > XRT_DTYPE_INVALID && d < XRT_DTYPE_COUNT;
}

static void sim_rquant(sim_rbuf *r, xrt_ir_type *t) {
  xrt_ir_quant *q = (xrt_ir_quant *)sim_ralloc(r, sizeof *q);
  if (!q) return;
  unsigned st = sim_ru8(r), ex = sim_ru8(r);
  q->storage = (xrt_dtype)st;
  q->expressed = (xrt_dtype)ex;
  q->storage_min = sim_ri64(r);
  q->storage_max = sim_ri64(r);
  q->axis = sim_ri32(r);
  q->num_scales = sim_rcount(r, sizeof(double) + sizeof(int64_t));
  q->scales = (const double *)sim_rarray(r, (size_t)q->num_scales,
                                         sizeof(double));
  q->zero_points = (const int64_t *)sim_rarray(r, (size_t)q->num_scales,
                                               sizeof(int64_t));
  if (r->why) return;
  int per_axis = q->axis >= 0;
  if (!sim_rdtype_ok(st) || !sim_rdtype_ok(ex) ||
      q->storage_min > q->storage_max || q->axis < -1 ||
      q->axis >= t->shape.rank || q->num_scales < 1 ||
      (!per_axis && q->num_scales != 1) ||
      (per_axis && q->num_scales != t->shape.dims[q->axis]))
    sim_rbad(r, "bad quantization");
  t->quant = q;
}

static void sim_rtype(sim_rbuf *r, xrt_ir_type *t) {
  if (++r->depth > SIM_SER_DEPTH) sim_rbad(r, "types nest too deep");
  unsigned kind = sim_ru8(r);
  t->kind = (uint8_t)kind;
  if (kind == XRT_TYPE_TUPLE) {
    t->num_elems = sim_rcount(r, 1);
    xrt_ir_type *el = (xrt_ir_type *)sim_ralloc(
        r, sizeof *el * (size_t)(t->num_elems ? t->num_elems : 1));
    for (int32_t i = 0; el && i < t->num_elems && !r->why; i++)
      sim_rtype(r, &el[i]);
    t->elems = el;
  } else if (kind == XRT_TYPE_TENSOR) {
    unsigned dt = sim_ru8(r), rank = sim_ru8(r);
    if (!r->why && (!sim_rdtype_ok(dt) || rank > XRT_MAX_RANK))
      sim_rbad(r, "bad tensor type");
    t->shape.dtype = (xrt_dtype)dt;
    t->shape.rank = (int32_t)rank;
    if (!r->why) sim_r(r, t->shape.dims, sizeof(int64_t) * rank);
    /* Dims are sizes (>= 0) whose product fits in an int64 of bytes. */
    uint64_t numel = 1;
    for (unsigned i = 0; i < rank && !r->why; i++) {
      int64_t d = t->shape.dims[i];
      /* (both below 2^28: the product fits, no division needed) */
      if (d < 0 || (d && (numel | (uint64_t)d) >= ((uint64_t)1 << 28) &&
                    numel > ((uint64_t)1 << 56) / (uint64_t)d))
        sim_rbad(r, "bad dimension");
      numel *= (uint64_t)(d > 0 ? d : 1);
    }
    if (!r->why && numel * sim_esize((xrt_dtype)dt) > r->max_tensor_bytes)
      sim_rbad(r, "tensor larger than a device's memory");
    if (sim_ru8(r)) sim_rquant(r, t);
  } else if (kind != XRT_TYPE_TOKEN) {
    sim_rbad(r, "bad type kind");
  }
  r->depth--;
}

static uint64_t sim_rnumel(const xrt_shape *s) {
  uint64_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= (uint64_t)s->dims[i];
  return n;
}

static const xrt_ir_literal *sim_rlit(sim_rbuf *r) {
  xrt_ir_literal *l = (xrt_ir_literal *)sim_ralloc(r, sizeof *l);
  if (!l) return NULL;
  sim_rtype(r, &l->type);
  l->splat = sim_ru8(r) != 0;
  int64_t bytes = sim_ri64(r);
  if (r->why) return NULL;
  if (l->type.kind != XRT_TYPE_TENSOR || bytes < 0 ||
      (uint64_t)bytes != (l->splat ? 1 : sim_rnumel(&l->type.shape)) *
                             sim_esize(l->type.shape.dtype)) {
    sim_rbad(r, "bad literal");
    return NULL;
  }
  l->bytes = (size_t)bytes;
  l->data = sim_rarray(r, l->bytes, 1);
  if (!l->data && l->bytes == 0) l->data = r->blk; /* non-NULL, no bytes */
  return r->why ? NULL : l;
}

/* The shape of a 2-D integer tensor attribute of n values (version 3):
 * a literal without data (sim_pg_rows reads only its shape). */
static const xrt_ir_literal *sim_rrows(sim_rbuf *r, int64_t n) {
  int64_t d0 = sim_ri64(r), d1 = sim_ri64(r);
  if (r->why) return NULL;
  bool fits = d1 > 0 ? d0 == n / d1 && n % d1 == 0 : d1 == 0 && n == 0;
  if (d0 < 0 || !fits)
    return sim_rbad(r, "bad integer tensor shape"), NULL;
  xrt_ir_literal *l = (xrt_ir_literal *)sim_ralloc(r, sizeof *l);
  if (!l) return NULL;
  l->type.kind = XRT_TYPE_TENSOR;
  l->type.shape.dtype = XRT_S64;
  l->type.shape.rank = 2;
  l->type.shape.dims[0] = d0;
  l->type.shape.dims[1] = d1;
  return l;
}

/* An attribute name (version 4: from the ring, or a new one). */
static const char *sim_rname(sim_rbuf *r) {
  if (r->version < 4) return sim_rstr(r, -1);
  unsigned k = sim_ru8(r);
  if (r->why) return NULL;
  if (k != SIM_SER_NEWNAME) {
    if (k >= SIM_SER_NAMES || k >= r->nnames) {
      sim_rbad(r, "bad attribute name reference");
      return NULL;
    }
    return r->names[k];
  }
  const char *s = sim_rstr(r, -1);
  if (s) r->names[r->nnames++ % SIM_SER_NAMES] = s;
  return s;
}

static void sim_rattr(sim_rbuf *r, xrt_ir_attr *a) {
  if (++r->depth > SIM_SER_DEPTH) sim_rbad(r, "attributes nest too deep");
  a->name = sim_rname(r);
  unsigned kind = sim_ru8(r);
  a->kind = (uint8_t)kind;
  a->i = sim_ri64(r);
  _Static_assert(sizeof a->f == sizeof(int64_t), "a double is 8 bytes");
  int64_t fbits = sim_ri64(r); /* (inline, as the integers) */
  memcpy(&a->f, &fbits, sizeof a->f);
  a->n = sim_ri64(r);
  size_t sn = 0;
  switch (kind) {
  case XRT_ATTR_UNIT: case XRT_ATTR_INT: case XRT_ATTR_FLOAT:
  case XRT_ATTR_BOOL:
    break;
  case XRT_ATTR_STRING:
    a->s = sim_rstrn(r, -1, &sn);
    if (!r->why && (!a->s || a->n < 0 || (uint64_t)a->n != sn))
      sim_rbad(r, "bad string attribute");
    break;
  case XRT_ATTR_ENUM: case XRT_ATTR_SYMBOL:
    a->s = sim_rstr(r, -1);
    if (!r->why && !a->s) sim_rbad(r, "bad name attribute");
    break;
  case XRT_ATTR_INTS:
    if (a->n < 0 || a->n > INT32_MAX) sim_rbad(r, "bad integer list");
    else a->ints = (const int64_t *)sim_rarray(r, (size_t)a->n, sizeof(int64_t));
    if (r->version >= 3 && sim_ru8(r)) a->lit = sim_rrows(r, a->n);
    break;
  case XRT_ATTR_DENSE:
    a->lit = sim_rlit(r);
    break;
  case XRT_ATTR_TYPE: {
    xrt_ir_type *t = (xrt_ir_type *)sim_ralloc(r, sizeof *t);
    if (t) sim_rtype(r, t);
    a->type = t;
    break;
  }
  case XRT_ATTR_LIST: case XRT_ATTR_DICT: {
    a->num_items = sim_rcount(r, 1);
    xrt_ir_attr *it = (xrt_ir_attr *)sim_ralloc(
        r, sizeof *it * (size_t)(a->num_items ? a->num_items : 1));
    for (int32_t i = 0; it && i < a->num_items && !r->why; i++)
      sim_rattr(r, &it[i]);
    a->items = it;
    break;
  }
  default:
    sim_rbad(r, "bad attribute kind");
  }
  r->depth--;
}

static void sim_rregion(sim_rbuf *r, xrt_ir_region *g);

/* Whether op->callee indexes what op's code calls (other ops' callee is
 * not read: the parser leaves 0 or -1 there). */
static int sim_rcallee_ok(const sim_rbuf *r, const xrt_ir_op *op) {
  unsigned flags = sim_op(op->code)->flags;
  if (flags & SIM_OPF_CALL)
    return op->callee >= 0 && op->callee < r->num_funcs;
  if (flags & SIM_OPF_HOST)
    return op->callee >= 0 && op->callee < r->num_custom_calls;
  return 1;
}

static void sim_rop(sim_rbuf *r, xrt_ir_op *op) {
  int32_t code = sim_ri32(r);
  if (!r->why && (code < 0 || code >= XRT_OP_COUNT)) sim_rbad(r, "bad opcode");
  op->code = (xrt_opcode)code;
  if (r->version >= 4 && sim_ru8(r))
    op->name = r->why ? NULL : sim_opcode_name(op->code);
  else
    op->name = sim_rstr(r, SIM_SLOT_OPNAME);
  if (!r->why && !op->name) sim_rbad(r, "op without a name");
  op->operands = sim_rids(r, &op->num_operands);
  op->results = sim_rids(r, &op->num_results);
  op->num_attrs = sim_rcount(r, 1);
  xrt_ir_attr *at = (xrt_ir_attr *)sim_rnone_or_zeroed(
      r, sizeof *at * (size_t)op->num_attrs);
  for (int32_t i = 0; at && i < op->num_attrs && !r->why; i++)
    sim_rattr(r, &at[i]);
  op->attrs = at;
  op->num_regions = sim_rcount(r, 1);
  xrt_ir_region *rg = (xrt_ir_region *)sim_rnone_or_zeroed(
      r, sizeof *rg * (size_t)op->num_regions);
  for (int32_t i = 0; rg && i < op->num_regions && !r->why; i++)
    sim_rregion(r, &rg[i]);
  op->regions = rg;
  sim_rloc(r, &op->loc);
  op->callee = sim_ri32(r);
  if (!r->why && !sim_rcallee_ok(r, op)) sim_rbad(r, "bad callee");
}

static void sim_rregion(sim_rbuf *r, xrt_ir_region *g) {
  if (++r->depth > SIM_SER_DEPTH) sim_rbad(r, "regions nest too deep");
  g->args = sim_rids(r, &g->num_args);
  g->num_ops = sim_rcount(r, 1);
  /* A block ends with its terminator. */
  if (!r->why && g->num_ops < 1) sim_rbad(r, "empty region");
  /* (not zeroed: sim_rop sets every field of an op it reads) */
  xrt_ir_op *ops = (xrt_ir_op *)sim_ralloc_raw(
      r, sizeof *ops * (size_t)(g->num_ops ? g->num_ops : 1));
  for (int32_t i = 0; ops && i < g->num_ops && !r->why; i++)
    sim_rop(r, &ops[i]);
  g->ops = ops;
  r->depth--;
}

/* Version 4 value types: the table, then an index per value into it (the
 * value's type is a copy of the entry: tuples share their elements). */
static void sim_rvalue_types(sim_rbuf *r, xrt_ir_type *vt, int32_t n) {
  int32_t nt = sim_rcount(r, 1);
  xrt_ir_type *tab = (xrt_ir_type *)sim_ralloc(
      r, sizeof *tab * (size_t)(nt ? nt : 1));
  for (int32_t k = 0; tab && k < nt && !r->why; k++) sim_rtype(r, &tab[k]);
  if (r->why) return;
  if ((size_t)n > (r->n - r->at) / sizeof(uint32_t)) {
    sim_rbad(r, "truncated value types");
    return;
  }
  const unsigned char *p = r->p + r->at;
  for (int32_t i = 0; i < n; i++) {
    uint32_t k;
    memcpy(&k, p + sizeof k * (size_t)i, sizeof k);
    if (k >= (uint32_t)nt) {
      sim_rbad(r, "value type index out of range");
      return;
    }
    vt[i] = tab[k];
  }
  r->at += sizeof(uint32_t) * (size_t)n;
}

static void sim_rfunc(sim_rbuf *r, xrt_ir_func *f) {
  f->name = sim_rstr(r, -1);
  if (!r->why && !f->name) sim_rbad(r, "function without a name");
  f->is_public = sim_ru8(r) != 0;
  /* (version 4: each value takes its u32 type index) */
  f->num_values = sim_rcount(r, r->version >= 4 ? sizeof(uint32_t) : 1);
  size_t vbytes =
      sizeof(xrt_ir_type) * (size_t)(f->num_values ? f->num_values : 1);
  int table = r->version >= 4; /* else each value's type in full */
  xrt_ir_type *vt = (xrt_ir_type *)(table ? sim_ralloc_raw(r, vbytes)
                                          : sim_ralloc(r, vbytes));
  if (vt && table) sim_rvalue_types(r, vt, f->num_values);
  for (int32_t i = 0; vt && !table && i < f->num_values && !r->why; i++)
    sim_rtype(r, &vt[i]);
  f->value_types = vt;
  r->num_values = f->num_values;
  sim_rregion(r, &f->body);
  f->num_results = sim_rcount(r, 1);
  xrt_ir_type *rt = (xrt_ir_type *)sim_ralloc(
      r, sizeof *rt * (size_t)(f->num_results ? f->num_results : 1));
  for (int32_t i = 0; rt && i < f->num_results && !r->why; i++)
    sim_rtype(r, &rt[i]);
  f->result_types = rt;
  sim_rloc(r, &f->loc);
}

static const char *sim_vmodule(sim_rbuf *r, const xrt_ir_module *m,
                               int32_t entry);

/* The module of serialized bytes, or NULL with r->why. */
static const xrt_ir_module *sim_rmodule(sim_rbuf *r, int32_t *out_entry) {
  char magic[8] = {0};
  sim_r(r, magic, 8);
  uint32_t version = (uint32_t)sim_ri32(r), order = (uint32_t)sim_ri32(r);
  if (r->why || memcmp(magic, SIM_SER_MAGIC, 8) != 0)
    return sim_rbad(r, "not a serialized sim executable"), NULL;
  if (version < 2 || version > SIM_SER_VERSION || order != SIM_SER_ORDER)
    return sim_rbad(r, "other format version or byte order"), NULL;
  r->version = version;
  uint64_t hash = (uint64_t)sim_ri64(r);
  if (r->why ||
      (!r->verified && hash != XXH3_64bits(r->p + r->at, r->n - r->at)))
    return sim_rbad(r, "checksum mismatch"), NULL;
  int32_t entry = sim_ri32(r);
  xrt_ir_module *m = (xrt_ir_module *)sim_ralloc(r, sizeof *m);
  if (!m) return NULL;
  m->name = sim_rstr(r, -1);
  m->num_custom_calls = sim_ri32(r);
  m->num_replicas = sim_ri32(r);
  m->num_partitions = sim_ri32(r);
  m->stablehlo_version = sim_rstr(r, -1);
  m->num_funcs = sim_rcount(r, 1);
  if (r->why) return NULL;
  if (!m->name || !m->stablehlo_version || m->num_custom_calls < 0 ||
      m->num_replicas < 1 || m->num_partitions < 1 || m->num_funcs < 1 ||
      entry < 0 || entry >= m->num_funcs)
    return sim_rbad(r, "bad module header"), NULL;
  r->num_funcs = m->num_funcs;
  r->num_custom_calls = m->num_custom_calls;
  xrt_ir_func *fs = (xrt_ir_func *)sim_ralloc(r, sizeof *fs * (size_t)m->num_funcs);
  for (int32_t i = 0; fs && i < m->num_funcs && !r->why; i++)
    sim_rfunc(r, &fs[i]);
  m->funcs = fs;
  if (version >= 4) { /* checked as the planner follows them */
    r->nfz = sim_rcount(r, sizeof(int32_t));
    r->fz = (const int32_t *)sim_rarray(r, (size_t)r->nfz, sizeof(int32_t));
  }
  if (!r->why && r->at != r->n) sim_rbad(r, "trailing bytes");
  if (!r->why) {
    const char *bad = sim_vmodule(r, m, entry);
    if (bad) sim_rbad(r, bad);
  }
  *out_entry = entry;
  return r->why ? NULL : m;
}

/* ---- validating what was read ----
 *
 * The bytes were read as well-formed, but only the verifier's per-op rules
 * make a module the planner can lower without reading out of bounds, and
 * a hash proves nothing about bytes someone wrote on purpose (or damage
 * after which the hash was recomputed).  So the rebuilt module is checked
 * again here, in the simulator's own code: values are defined once and
 * used in scope, regions end with their terminator, and every op passes a
 * copy of the core verifier's rules for it.  Only ops with such a copy
 * load from bytes; any other op (and any quantized type) makes the bytes
 * XRT_INVALID_ARGUMENT, and the core compiles the program instead. */

typedef struct sim_vchk {
  const xrt_ir_module *m;
  const xrt_ir_func *f;
  const xrt_ir_op *op;
  unsigned char *state; /* per value: 0 not yet, 1 in scope, 2 gone */
  const char *why;
  int depth;
  bool collectives; /* version 3 bytes: groups and pairs keep shape */
} sim_vchk;

static int sim_vbad(sim_vchk *v, const char *why) {
  if (!v->why) v->why = why;
  return 0;
}

static int sim_vtype_eq(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == XRT_TYPE_TOKEN) return 1;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return 0;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!sim_vtype_eq(&a->elems[i], &b->elems[i])) return 0;
    return 1;
  }
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank)
    return 0;
  for (int32_t i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return 0;
  return !a->quant == !b->quant;
}

/* Quantized types are not loaded from bytes (their rules are many). */
static int sim_vtype_plain(const xrt_ir_type *t) {
  if (t->kind == XRT_TYPE_TUPLE) {
    for (int32_t i = 0; i < t->num_elems; i++)
      if (!sim_vtype_plain(&t->elems[i])) return 0;
    return 1;
  }
  return t->kind == XRT_TYPE_TOKEN || (t->kind == XRT_TYPE_TENSOR && !t->quant);
}

static const xrt_ir_type *sim_vty(const sim_vchk *v, int32_t id) {
  return &v->f->value_types[id];
}
static const xrt_shape *sim_vin(const sim_vchk *v, int i) {
  return &sim_vty(v, v->op->operands[i])->shape;
}
static const xrt_shape *sim_vout(const sim_vchk *v, int i) {
  return &sim_vty(v, v->op->results[i])->shape;
}

static int sim_vdims_eq(const xrt_shape *a, const xrt_shape *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}
static int sim_vshape_eq(const xrt_shape *a, const xrt_shape *b) {
  return a->dtype == b->dtype && sim_vdims_eq(a, b);
}

/* Operand and result counts (-1: any), all tensors. */
static int sim_vcounts(sim_vchk *v, int operands, int results) {
  const xrt_ir_op *op = v->op;
  if ((operands >= 0 && op->num_operands != operands) ||
      (results >= 0 && op->num_results != results))
    return sim_vbad(v, "wrong operand or result count");
  const xrt_ir_type *vt = v->f->value_types;
  int bad = 0;
  for (int32_t i = 0; i < op->num_operands; i++)
    bad |= vt[op->operands[i]].kind != XRT_TYPE_TENSOR;
  for (int32_t i = 0; i < op->num_results; i++)
    bad |= vt[op->results[i]].kind != XRT_TYPE_TENSOR;
  return !bad || sim_vbad(v, "operand or result is not a tensor");
}

static int sim_vsame(sim_vchk *v, int32_t a, int32_t b) {
  return sim_vtype_eq(sim_vty(v, a), sim_vty(v, b)) ||
         sim_vbad(v, "types differ");
}

/* An INTS attribute, required. */
static int sim_vints(sim_vchk *v, const char *name, const int64_t **ints,
                     int64_t *n) {
  const xrt_ir_attr *a = sim_attr(v->op, name, XRT_ATTR_INTS);
  if (!a) return sim_vbad(v, "missing integer list attribute");
  *ints = a->ints;
  *n = a->n;
  return 1;
}

/* Distinct dimensions below rank. */
static int sim_vdims(sim_vchk *v, const int64_t *d, int64_t n, int64_t rank) {
  for (int64_t i = 0; i < n; i++) {
    if (d[i] < 0 || d[i] >= rank) return sim_vbad(v, "dimension out of range");
    for (int64_t j = 0; j < i; j++)
      if (d[j] == d[i]) return sim_vbad(v, "dimension repeated");
  }
  return 1;
}

static int sim_vcontains(const int64_t *d, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (d[i] == x) return 1;
  return 0;
}

/* The SIM_VK_* bit of an element class. */
static unsigned sim_vclass(xrt_dtype t) {
  static const unsigned bit[SIM_EWC_COUNT] = {
      [SIM_EWC_PRED] = SIM_VK_P,     [SIM_EWC_SIGNED] = SIM_VK_I,
      [SIM_EWC_UNSIGNED] = SIM_VK_I, [SIM_EWC_FLOAT] = SIM_VK_F,
      [SIM_EWC_MINIFLOAT] = SIM_VK_F, [SIM_EWC_COMPLEX] = SIM_VK_C};
  return bit[sim_ew_class(t)];
}

/* An elementwise op of SIM_EW_OPS with loadable element classes. */
static int sim_vew(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  const sim_op_desc *d = sim_op(op->code);
  int binary = d->ew_arity == 2;
  if (!sim_vcounts(v, binary ? 2 : 1, 1)) return 0;
  if (binary && !sim_vsame(v, op->operands[0], op->operands[1])) return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (!(d->vk & sim_vclass(in->dtype)))
    return sim_vbad(v, "element type not allowed");
  if (op->code == XRT_OP_ABS && sim_dtype_is_complex(in->dtype))
    return (out->dtype == (in->dtype == XRT_C64 ? XRT_F32 : XRT_F64) &&
            sim_vdims_eq(in, out)) ||
           sim_vbad(v, "abs of complex must be real");
  return sim_vsame(v, op->operands[0], op->results[0]);
}

static int sim_vcompare(sim_vchk *v) {
  if (!sim_vcounts(v, 2, 1) ||
      !sim_vsame(v, v->op->operands[0], v->op->operands[1]))
    return 0;
  const xrt_shape *out = sim_vout(v, 0);
  if (out->dtype != XRT_PRED || !sim_vdims_eq(out, sim_vin(v, 0)))
    return sim_vbad(v, "compare result must be i1 of the operands' shape");
  const xrt_ir_attr *d = sim_attr(v->op, "comparison_direction", XRT_ATTR_ENUM);
  static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (size_t i = 0; d && i < sizeof dirs / sizeof *dirs; i++)
    if (strcmp(d->s, dirs[i]) == 0) return 1;
  return sim_vbad(v, "bad comparison_direction");
}

static int sim_vselect(sim_vchk *v) {
  if (!sim_vcounts(v, 3, 1)) return 0;
  const xrt_shape *p = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (p->dtype != XRT_PRED || (p->rank != 0 && !sim_vdims_eq(p, out)))
    return sim_vbad(v, "bad select predicate");
  return sim_vsame(v, v->op->operands[1], v->op->results[0]) &&
         sim_vsame(v, v->op->operands[2], v->op->results[0]);
}

static int sim_vclamp(sim_vchk *v) {
  if (!sim_vcounts(v, 3, 1) ||
      !sim_vsame(v, v->op->operands[1], v->op->results[0]))
    return 0;
  const xrt_shape *x = sim_vin(v, 1);
  for (int i = 0; i < 3; i += 2) {
    const xrt_shape *b = sim_vin(v, i);
    if (b->dtype != x->dtype || (b->rank != 0 && !sim_vdims_eq(b, x)))
      return sim_vbad(v, "bad clamp bound");
  }
  return 1;
}

static int sim_vconvert(sim_vchk *v) {
  return sim_vcounts(v, 1, 1) &&
         (sim_vdims_eq(sim_vin(v, 0), sim_vout(v, 0)) ||
          sim_vbad(v, "convert changes the shape"));
}

static int sim_viota(sim_vchk *v) {
  if (!sim_vcounts(v, 0, 1)) return 0;
  const xrt_ir_attr *d = sim_attr(v->op, "iota_dimension", XRT_ATTR_INT);
  return (d && d->i >= 0 && d->i < sim_vout(v, 0)->rank) ||
         sim_vbad(v, "bad iota_dimension");
}

static int sim_vbroadcast_in_dim(sim_vchk *v) {
  const int64_t *dims;
  int64_t n;
  if (!sim_vcounts(v, 1, 1) ||
      !sim_vints(v, "broadcast_dimensions", &dims, &n))
    return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (in->dtype != out->dtype || n != in->rank)
    return sim_vbad(v, "bad broadcast_in_dim");
  if (!sim_vdims(v, dims, n, out->rank)) return 0;
  for (int64_t i = 0; i < n; i++)
    if (in->dims[i] != 1 && in->dims[i] != out->dims[dims[i]])
      return sim_vbad(v, "bad broadcast_in_dim sizes");
  return 1;
}

static int sim_vreshape(sim_vchk *v) {
  if (!sim_vcounts(v, 1, 1)) return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  return (in->dtype == out->dtype && sim_rnumel(in) == sim_rnumel(out)) ||
         sim_vbad(v, "bad reshape");
}

static int sim_vtranspose(sim_vchk *v) {
  const int64_t *perm;
  int64_t n;
  if (!sim_vcounts(v, 1, 1) || !sim_vints(v, "permutation", &perm, &n))
    return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (n != in->rank || out->rank != in->rank || in->dtype != out->dtype)
    return sim_vbad(v, "bad transpose");
  if (!sim_vdims(v, perm, n, in->rank)) return 0;
  for (int64_t i = 0; i < n; i++)
    if (out->dims[i] != in->dims[perm[i]])
      return sim_vbad(v, "bad transpose result");
  return 1;
}

static int sim_vslice(sim_vchk *v) {
  const int64_t *st, *li;
  int64_t n1, n2;
  if (!sim_vcounts(v, 1, 1) || !sim_vints(v, "start_indices", &st, &n1) ||
      !sim_vints(v, "limit_indices", &li, &n2))
    return 0;
  const xrt_ir_attr *sa = sim_attr(v->op, "strides", XRT_ATTR_INTS);
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (n1 != in->rank || n2 != in->rank || (sa && sa->n != in->rank) ||
      out->rank != in->rank || out->dtype != in->dtype)
    return sim_vbad(v, "bad slice");
  for (int32_t k = 0; k < in->rank; k++) {
    int64_t step = sa ? sa->ints[k] : 1;
    if (st[k] < 0 || st[k] > li[k] || li[k] > in->dims[k] || step < 1 ||
        out->dims[k] != (li[k] - st[k] + step - 1) / step)
      return sim_vbad(v, "bad slice bounds");
  }
  return 1;
}

static int sim_vconcatenate(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  const xrt_ir_attr *d = sim_attr(op, "dimension", XRT_ATTR_INT);
  if (!sim_vcounts(v, -1, 1)) return 0;
  const xrt_shape *out = sim_vout(v, 0);
  if (op->num_operands < 1 || !d || d->i < 0 || d->i >= out->rank)
    return sim_vbad(v, "bad concatenate");
  int64_t total = 0;
  for (int32_t i = 0; i < op->num_operands; i++) {
    const xrt_shape *in = sim_vin(v, i);
    if (in->rank != out->rank || in->dtype != out->dtype)
      return sim_vbad(v, "bad concatenate operand");
    for (int32_t k = 0; k < in->rank; k++)
      if (k != d->i && in->dims[k] != out->dims[k])
        return sim_vbad(v, "bad concatenate operand");
    total += in->dims[d->i];
  }
  return total == out->dims[d->i] || sim_vbad(v, "bad concatenate result");
}

/* count integer scalars of one element type from operand first (the
 * start indices of a dynamic slice or update). */
static int sim_vstarts(sim_vchk *v, int32_t first, int32_t count) {
  for (int32_t i = 0; i < count; i++) {
    const xrt_shape *s = sim_vin(v, first + i);
    if (s->rank != 0 || !sim_ix_is_int(s->dtype) ||
        s->dtype != sim_vin(v, first)->dtype)
      return sim_vbad(v, "bad start index");
  }
  return 1;
}

static int sim_vdynamic_slice(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands < 1 || !sim_vcounts(v, -1, 1))
    return sim_vbad(v, "bad dynamic_slice");
  const xrt_shape *x = sim_vin(v, 0), *out = sim_vout(v, 0);
  const int64_t *sz;
  int64_t n;
  if (op->num_operands != 1 + x->rank || !sim_vstarts(v, 1, x->rank) ||
      !sim_vints(v, "slice_sizes", &sz, &n))
    return sim_vbad(v, "bad dynamic_slice");
  if (n != x->rank || out->rank != x->rank || out->dtype != x->dtype)
    return sim_vbad(v, "bad dynamic_slice");
  for (int32_t k = 0; k < x->rank; k++)
    if (sz[k] < 0 || sz[k] > x->dims[k] || out->dims[k] != sz[k])
      return sim_vbad(v, "bad dynamic_slice sizes");
  return 1;
}

static int sim_vdynamic_update_slice(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands < 2 || !sim_vcounts(v, -1, 1))
    return sim_vbad(v, "bad dynamic_update_slice");
  const xrt_shape *x = sim_vin(v, 0), *u = sim_vin(v, 1);
  if (op->num_operands != 2 + x->rank || !sim_vstarts(v, 2, x->rank) ||
      !sim_vsame(v, op->operands[0], op->results[0]))
    return sim_vbad(v, "bad dynamic_update_slice");
  if (u->rank != x->rank || u->dtype != x->dtype)
    return sim_vbad(v, "bad dynamic_update_slice update");
  for (int32_t k = 0; k < x->rank; k++)
    if (u->dims[k] > x->dims[k])
      return sim_vbad(v, "bad dynamic_update_slice update");
  return 1;
}

/* Region r takes nargs values of types args and returns nrets of types
 * rets (NULL entries: any type). */
static int sim_vregion_sig(sim_vchk *v, const xrt_ir_region *r, int nargs,
                           const xrt_ir_type *const *args, int nrets,
                           const xrt_ir_type *const *rets) {
  if (r->num_args != nargs) return sim_vbad(v, "region argument count");
  for (int i = 0; i < nargs; i++)
    if (args[i] && !sim_vtype_eq(sim_vty(v, r->args[i]), args[i]))
      return sim_vbad(v, "region argument type");
  const xrt_ir_op *term = &r->ops[r->num_ops - 1];
  if (term->num_operands != nrets) return sim_vbad(v, "region result count");
  for (int i = 0; i < nrets; i++)
    if (rets[i] && !sim_vtype_eq(sim_vty(v, term->operands[i]), rets[i]))
      return sim_vbad(v, "region result type");
  return 1;
}

static int sim_vreduce(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  const int64_t *dims;
  int64_t nd;
  if (n < 1 || n > 32 || op->num_regions != 1)
    return sim_vbad(v, "bad reduce");
  if (!sim_vcounts(v, 2 * n, n) || !sim_vints(v, "dimensions", &dims, &nd))
    return 0;
  const xrt_shape *in0 = sim_vin(v, 0);
  if (!sim_vdims(v, dims, nd, in0->rank)) return 0;
  const xrt_ir_type *sig[64];
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = sim_vin(v, i), *init = sim_vin(v, n + i),
                    *out = sim_vout(v, i);
    if (!sim_vdims_eq(in, in0) || init->rank != 0 ||
        init->dtype != out->dtype)
      return sim_vbad(v, "bad reduce operands");
    int32_t k = 0;
    for (int32_t d = 0; d < in->rank; d++) {
      if (sim_vcontains(dims, nd, d)) continue;
      if (k >= out->rank || out->dims[k] != in->dims[d])
        return sim_vbad(v, "bad reduce result");
      k++;
    }
    if (k != out->rank) return sim_vbad(v, "bad reduce result rank");
    sig[i] = sig[n + i] = sim_vty(v, op->operands[n + i]);
  }
  return sim_vregion_sig(v, &op->regions[0], 2 * n, sig, n, sig);
}

static int sim_vdot_field(sim_vchk *v, const xrt_ir_attr *dn, const char *name,
                          const int64_t **ints, int64_t *n) {
  const xrt_ir_attr *a = sim_field(dn, name);
  *ints = NULL;
  *n = 0;
  if (!a) return 1;
  if (a->kind != XRT_ATTR_INTS) return sim_vbad(v, "bad dimension numbers");
  *ints = a->ints;
  *n = a->n;
  return 1;
}

static int sim_vdot_general(sim_vchk *v) {
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nlb, nrb, nlc, nrc;
  const xrt_ir_attr *dn =
      sim_named(v->op->attrs, v->op->num_attrs, "dot_dimension_numbers");
  if (!sim_vcounts(v, 2, 1) ||
      !sim_vdot_field(v, dn, "lhs_batching_dimensions", &lb, &nlb) ||
      !sim_vdot_field(v, dn, "rhs_batching_dimensions", &rb, &nrb) ||
      !sim_vdot_field(v, dn, "lhs_contracting_dimensions", &lc, &nlc) ||
      !sim_vdot_field(v, dn, "rhs_contracting_dimensions", &rc, &nrc))
    return 0;
  const xrt_shape *l = sim_vin(v, 0), *r = sim_vin(v, 1), *out = sim_vout(v, 0);
  if (nlb != nrb || nlc != nrc || nlb + nlc > XRT_MAX_RANK ||
      l->dtype != r->dtype)
    return sim_vbad(v, "bad dot_general");
  int64_t ld[XRT_MAX_RANK], rd[XRT_MAX_RANK];
  for (int64_t i = 0; i < nlb; i++) ld[i] = lb[i], rd[i] = rb[i];
  for (int64_t i = 0; i < nlc; i++) ld[nlb + i] = lc[i], rd[nrb + i] = rc[i];
  if (!sim_vdims(v, ld, nlb + nlc, l->rank) ||
      !sim_vdims(v, rd, nrb + nrc, r->rank))
    return 0;
  for (int64_t i = 0; i < nlb + nlc; i++)
    if (l->dims[ld[i]] != r->dims[rd[i]])
      return sim_vbad(v, "dot_general dimension sizes differ");
  int64_t want[2 * XRT_MAX_RANK];
  int k = 0;
  for (int64_t i = 0; i < nlb; i++) want[k++] = l->dims[lb[i]];
  for (int side = 0; side < 2; side++) {
    const xrt_shape *x = side ? r : l;
    const int64_t *used = side ? rd : ld;
    for (int32_t d = 0; d < x->rank; d++)
      if (!sim_vcontains(used, nlb + nlc, d)) want[k++] = x->dims[d];
  }
  if (out->rank != k) return sim_vbad(v, "bad dot_general result");
  for (int i = 0; i < k; i++)
    if (out->dims[i] != want[i]) return sim_vbad(v, "bad dot_general result");
  return 1;
}

static int sim_vwhile(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  if (op->num_results != n || op->num_regions != 2)
    return sim_vbad(v, "bad while");
  /* on the stack for most loops; one carrying a model's weights takes a
   * heap array */
  const xrt_ir_type *stack[64], **sig = stack;
  if (n > 64 && !(sig = (const xrt_ir_type **)malloc((size_t)n * sizeof *sig)))
    return sim_vbad(v, "out of host memory checking a while loop");
  int ok = 1;
  for (int i = 0; i < n && ok; i++) {
    ok = sim_vsame(v, op->operands[i], op->results[i]);
    sig[i] = sim_vty(v, op->operands[i]);
  }
  const xrt_ir_type *any[1] = {NULL};
  ok = ok && sim_vregion_sig(v, &op->regions[0], n, sig, 1, any);
  if (ok) {
    const xrt_ir_region *c = &op->regions[0];
    const xrt_ir_type *ct = sim_vty(v, c->ops[c->num_ops - 1].operands[0]);
    if (ct->kind != XRT_TYPE_TENSOR || ct->shape.dtype != XRT_PRED ||
        ct->shape.rank != 0)
      ok = sim_vbad(v, "while cond must return tensor<i1>");
  }
  ok = ok && sim_vregion_sig(v, &op->regions[1], n, sig, n, sig);
  if (sig != stack) free(sig);
  return ok;
}

static int sim_vcall(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  const xrt_ir_func *f = &v->m->funcs[op->callee]; /* checked when read */
  if (op->num_operands != f->body.num_args || op->num_results != f->num_results)
    return sim_vbad(v, "call does not fit its callee");
  for (int32_t i = 0; i < op->num_operands; i++)
    if (!sim_vtype_eq(sim_vty(v, op->operands[i]),
                      &f->value_types[f->body.args[i]]))
      return sim_vbad(v, "call argument type");
  for (int32_t i = 0; i < op->num_results; i++)
    if (!sim_vtype_eq(sim_vty(v, op->results[i]), &f->result_types[i]))
      return sim_vbad(v, "call result type");
  return 1;
}

static int sim_vconstant(sim_vchk *v) {
  if (!sim_vcounts(v, 0, 1)) return 0;
  const xrt_ir_attr *a = sim_attr(v->op, "value", XRT_ATTR_DENSE);
  return (a && a->lit && !a->lit->type.quant &&
          sim_vshape_eq(&a->lit->type.shape, sim_vout(v, 0))) ||
         sim_vbad(v, "bad constant");
}

static int sim_vcustom_call(sim_vchk *v) {
  return sim_attr(v->op, "call_target_name", XRT_ATTR_STRING) != NULL ||
         sim_vbad(v, "custom_call without call_target_name");
}

/* all_reduce and collective_permute (a multi-process job's executables,
 * issue #11): results of the operands' types, and all_reduce's reducer
 * takes and returns scalars of their element type; the planner checks
 * groups, pairs and sizes against the launch itself. */
static int sim_vcollective(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands, ar = op->code == XRT_OP_ALL_REDUCE;
  if (!v->collectives) /* flat groups would read as one group */
    return sim_vbad(v, "op not loadable from serialized bytes");
  if (n < 1 || op->num_results != n || op->num_regions != ar)
    return sim_vbad(v, "bad collective");
  for (int i = 0; i < n; i++)
    if (!sim_vsame(v, op->operands[i], op->results[i])) return 0;
  if (!ar) return 1;
  const xrt_ir_region *r = &op->regions[0];
  const xrt_ir_type *t = r->num_args == 2 ? sim_vty(v, r->args[0]) : NULL;
  if (!t || t->kind != XRT_TYPE_TENSOR || t->shape.rank != 0)
    return sim_vbad(v, "bad all_reduce computation");
  for (int i = 0; i < n; i++)
    if (sim_vin(v, i)->dtype != t->shape.dtype)
      return sim_vbad(v, "bad all_reduce computation");
  const xrt_ir_type *sig[2] = {t, t};
  return sim_vregion_sig(v, r, 2, sig, 1, sig);
}

/* The per-op rules; ops without a copy here are refused. */
static int sim_vop_rules(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_regions != 0 && op->code != XRT_OP_REDUCE &&
      op->code != XRT_OP_WHILE && op->code != XRT_OP_ALL_REDUCE)
    return sim_vbad(v, "unexpected region");
  switch (op->code) {
  case XRT_OP_COMPARE: return sim_vcompare(v);
  case XRT_OP_SELECT: return sim_vselect(v);
  case XRT_OP_CLAMP: return sim_vclamp(v);
  case XRT_OP_CONVERT: return sim_vconvert(v);
  case XRT_OP_IOTA: return sim_viota(v);
  case XRT_OP_BROADCAST_IN_DIM: return sim_vbroadcast_in_dim(v);
  case XRT_OP_RESHAPE: return sim_vreshape(v);
  case XRT_OP_TRANSPOSE: return sim_vtranspose(v);
  case XRT_OP_SLICE: return sim_vslice(v);
  case XRT_OP_CONCATENATE: return sim_vconcatenate(v);
  case XRT_OP_DYNAMIC_SLICE: return sim_vdynamic_slice(v);
  case XRT_OP_DYNAMIC_UPDATE_SLICE: return sim_vdynamic_update_slice(v);
  case XRT_OP_REDUCE: return sim_vreduce(v);
  case XRT_OP_DOT_GENERAL: return sim_vdot_general(v);
  case XRT_OP_WHILE: return sim_vwhile(v);
  case XRT_OP_FUNC_CALL: return sim_vcall(v);
  case XRT_OP_CONSTANT: return sim_vconstant(v);
  case XRT_OP_CUSTOM_CALL: return sim_vcustom_call(v);
  case XRT_OP_ALL_REDUCE: case XRT_OP_COLLECTIVE_PERMUTE:
    return sim_vcollective(v);
  case XRT_OP_RETURN: case XRT_OP_FUNC_RETURN:
    return op->num_results == 0 || sim_vbad(v, "return with results");
  default:
    if (sim_op(op->code)->vk) return sim_vew(v);
    return sim_vbad(v, "op not loadable from serialized bytes");
  }
}

static int sim_vdefine(sim_vchk *v, const int32_t *ids, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (v->state[ids[i]]) return sim_vbad(v, "value defined twice");
    const xrt_ir_type *t = sim_vty(v, ids[i]);
    if ((t->kind != XRT_TYPE_TENSOR || t->quant) && !sim_vtype_plain(t))
      return sim_vbad(v, "quantized types are not loaded from bytes");
    v->state[ids[i]] = 1;
  }
  return 1;
}

static void sim_vforget(sim_vchk *v, const int32_t *ids, int32_t n) {
  for (int32_t i = 0; i < n; i++) v->state[ids[i]] = 2;
}

static int sim_vregion(sim_vchk *v, const xrt_ir_region *r);

static int sim_vop(sim_vchk *v, const xrt_ir_op *op, int last) {
  v->op = op;
  const char *cn = sim_opcode_name(op->code); /* (version 4: the same) */
  if (!op->name || (op->name != cn && strcmp(op->name, cn) != 0))
    return sim_vbad(v, "op name does not match its code");
  int term = op->code == XRT_OP_RETURN || op->code == XRT_OP_FUNC_RETURN;
  if (term != last) return sim_vbad(v, "misplaced terminator");
  for (int32_t i = 0; i < op->num_attrs; i++)
    if (!op->attrs[i].name) return sim_vbad(v, "attribute without a name");
  for (int32_t i = 0; i < op->num_operands; i++)
    if (v->state[op->operands[i]] != 1)
      return sim_vbad(v, "value used out of scope");
  for (int32_t i = 0; i < op->num_regions; i++) {
    if (!sim_vregion(v, &op->regions[i])) return 0;
    v->op = op;
  }
  return sim_vop_rules(v) && sim_vdefine(v, op->results, op->num_results);
}

static int sim_vregion(sim_vchk *v, const xrt_ir_region *r) {
  if (++v->depth > SIM_SER_DEPTH) return sim_vbad(v, "regions nest too deep");
  if (!sim_vdefine(v, r->args, r->num_args)) return 0;
  for (int32_t i = 0; i < r->num_ops; i++)
    if (!sim_vop(v, &r->ops[i], i == r->num_ops - 1)) return 0;
  for (int32_t i = 0; i < r->num_ops; i++)
    sim_vforget(v, r->ops[i].results, r->ops[i].num_results);
  sim_vforget(v, r->args, r->num_args);
  v->depth--;
  return 1;
}

static int sim_vfunc(sim_vchk *v, const xrt_ir_func *f) {
  v->f = f;
  v->op = NULL;
  v->depth = 0;
  memset(v->state, 0, (size_t)f->num_values);
  for (int32_t i = 0; i < f->num_results; i++)
    if (!sim_vtype_plain(&f->result_types[i]))
      return sim_vbad(v, "quantized types are not loaded from bytes");
  const xrt_ir_region *b = &f->body;
  const xrt_ir_op *ret = &b->ops[b->num_ops - 1];
  if (!sim_vregion(v, b)) return 0;
  if (ret->code != XRT_OP_FUNC_RETURN || ret->num_operands != f->num_results)
    return sim_vbad(v, "function does not return its results");
  for (int32_t i = 0; i < f->num_results; i++)
    if (!sim_vtype_eq(sim_vty(v, ret->operands[i]), &f->result_types[i]))
      return sim_vbad(v, "function returns a value of the wrong type");
  return 1;
}

/* NULL if m is a module the planner can take, else what is wrong.  The
 * scratch comes from r's pool (it lives as long as the module). */
static const char *sim_vmodule(sim_rbuf *r, const xrt_ir_module *m,
                               int32_t entry) {
  /* The entry takes and returns tensors only (buffers). */
  const xrt_ir_func *e = &m->funcs[entry];
  for (int32_t i = 0; i < e->body.num_args; i++)
    if (e->value_types[e->body.args[i]].kind != XRT_TYPE_TENSOR)
      return "the entry takes a value that is not a tensor";
  for (int32_t i = 0; i < e->num_results; i++)
    if (e->result_types[i].kind != XRT_TYPE_TENSOR)
      return "the entry returns a value that is not a tensor";
  int32_t most = 1;
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (m->funcs[i].num_values > most) most = m->funcs[i].num_values;
  sim_vchk v;
  memset(&v, 0, sizeof v);
  v.m = m;
  v.collectives = r->version >= 3;
  v.state = (unsigned char *)sim_ralloc(r, (size_t)most);
  if (!v.state) return "out of host memory";
  for (int32_t i = 0; i < m->num_funcs && !v.why; i++)
    sim_vfunc(&v, &m->funcs[i]);
  return v.why;
}

/* Hands the blocks of from to the pool to (freed with it). */
static void sim_pool_adopt(sim_pool *to, sim_pool *from) {
  if (!from->head) return;
  void *tail = from->head;
  while (*(void **)tail) tail = *(void **)tail;
  *(void **)tail = to->head;
  to->head = from->head;
  from->head = NULL;
}

static bool sim_same_shape(const xrt_ir_type *t, const xrt_shape *s) {
  if (t->kind != XRT_TYPE_TENSOR || t->shape.dtype != s->dtype ||
      t->shape.rank != s->rank)
    return false;
  for (int32_t d = 0; d < s->rank; d++)
    if (t->shape.dims[d] != s->dims[d]) return false;
  return true;
}

/* The core sizes argument and result buffers, and host bindings, by its
 * own record of the executable: decoded bytes that disagree with it (yet
 * pass every other check) would make kernels read or write past them.
 * NULL when they agree (or the core is older and says nothing). */
static const char *sim_signature_mismatch(const xrt_ir_module *m,
                                          int32_t entry,
                                          const xrt_plugin_compile_args *a) {
  if (!XRT_STRUCT_HAS(a, xrt_plugin_compile_args, output_shapes))
    return NULL;
  if (m->num_custom_calls != a->num_host_bindings) return "host call count";
  const xrt_ir_func *f = &m->funcs[entry];
  if (f->body.num_args != a->num_inputs || f->num_results != a->num_outputs)
    return "entry signature";
  for (int32_t i = 0; i < a->num_inputs; i++)
    if (!a->input_shapes ||
        !sim_same_shape(&f->value_types[f->body.args[i]], &a->input_shapes[i]))
      return "an entry input shape";
  for (int32_t i = 0; i < a->num_outputs; i++)
    if (!a->output_shapes ||
        !sim_same_shape(&f->result_types[i], &a->output_shapes[i]))
      return "an entry output shape";
  return NULL;
}

SIM_PRIVATE xrt_status sim_executable_deserialize(void *client,
                                             const xrt_plugin_compile_args *args,
                                             const void *data, size_t size,
                                             void **out_executable,
                                             xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  if (!c || !args || args->struct_size < SIM_COMPILE_ARGS_MIN ||
      !out_executable || (!data && size))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad deserialize arguments");
  *out_executable = NULL;
  sim_rbuf r;
  memset(&r, 0, sizeof r);
  r.p = (const unsigned char *)data;
  r.n = size;
  r.verified = XRT_STRUCT_HAS(args, xrt_plugin_compile_args, bytes_verified) &&
               args->bytes_verified;
  r.pool.al = c->al;
  for (int i = 0; i < c->ndev; i++)
    if (c->dev[i].limit > r.max_tensor_bytes)
      r.max_tensor_bytes = c->dev[i].limit;
  int32_t entry = -1;
  const xrt_ir_module *m = sim_rmodule(&r, &entry);
  if (!m) {
    sim_pool_release(&r.pool);
    int oom = r.why && strcmp(r.why, "out of host memory") == 0;
    return sim_fail(err, oom ? XRT_RESOURCE_EXHAUSTED : XRT_INVALID_ARGUMENT,
                    "serialized executable: %s at byte %zu of %zu",
                    r.why ? r.why : "unreadable", r.at, size);
  }
  const char *bad = sim_signature_mismatch(m, entry, args);
  if (bad) {
    sim_pool_release(&r.pool);
    return sim_fail(err, XRT_INVALID_ARGUMENT,
                    "serialized executable: %s differs from what the core "
                    "expects", bad);
  }
  xrt_plugin_compile_args a; /* (an older core's may be shorter) */
  memset(&a, 0, sizeof a);
  memcpy(&a, args, args->struct_size < sizeof a ? args->struct_size : sizeof a);
  a.module = m;
  a.entry = entry;
  sim_exe *e = NULL;
  xrt_status rc = sim_compile_given(client, &a, r.fz, r.nfz, (void **)&e,
                                    err);
  if (rc) {
    sim_pool_release(&r.pool);
    /* Bytes the planner refuses (say, a compare_type it has no kernel
     * for) are bytes this simulator does not recognise. */
    if (rc == XRT_RESOURCE_EXHAUSTED) return rc;
    char why[sizeof err->message] = "does not compile";
    if (err) memcpy(why, err->message, sizeof why - 1);
    return sim_fail(err, XRT_INVALID_ARGUMENT, "serialized executable: %s",
                    why);
  }
  sim_pool_adopt(&e->pool, &r.pool); /* the module lives as long as e */
  *out_executable = e;
  return XRT_OK;
}
