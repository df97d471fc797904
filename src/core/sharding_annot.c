/*
 * src/core/sharding_annot.c - sharding annotations: what JAX's programs say
 * about how their values are laid out over devices, read far enough to run
 * them as xrt can.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 *
 * Programs as JAX exports them carry shardings (mhlo.sharding strings,
 * "{devices=[2,1]0,1}", and Shardy's #sdy.sharding<@mesh, [{"x"}, {}]>) on
 * arguments, results and a few ops: custom_call @Sharding (every
 * with_sharding_constraint), sdy.sharding_constraint, sdy.reshard.  xrt
 * runs programs written per device; it does not partition a program
 * written for the global shape (automatic SPMD partitioning).  So, at the
 * end of parsing (xrt__shard_pass):
 *  - every annotation op becomes an identity: its uses read its operand;
 *  - shard_map regions become per-device code: @SPMDFullToShardShape /
 *    @SPMDShardToFullShape are identities too, sdy.manual_computation is
 *    inlined (its block arguments read its operands, its results the
 *    operands of its sdy.return), and an argument of the entry function
 *    (main, else the only function) that enters a shard_map takes the
 *    shard's type, as does a result that leaves one.  Plugins then see an
 *    ordinary per-device program: the caller passes each device its piece
 *    and gets each device's piece back (xrt_execute_multi,
 *    xrt_execute_sharded);
 *  - a shard_map input computed in the program, or a shard_map output the
 *    program goes on computing with, would need the partitioner: refused
 *    (XRT_UNIMPLEMENTED) at the use, naming the value.
 * What is left depends on the launch (xrt__shard_check, at compile): a
 * sharding that splits a value over several devices, other than at a
 * shard_map's boundary, is refused when the launch has more than one
 * participant (on one device every sharding is an identity), and a
 * program with shard_map regions over D devices runs with num_partitions
 * D.  Replicated and maximal shardings, and sub-axes replicated by
 * last_tile_dim_replicate or replicated={...}, split nothing.
 */
#include "internal.h"

/* ---------------------------------------------------------------------
 * Reading shardings
 * ------------------------------------------------------------------- */

enum { XRT__SHD_REPLICATED, XRT__SHD_MAXIMAL, XRT__SHD_MANUAL, XRT__SHD_TILED };

/* A sharding, as far as xrt needs it. */
typedef struct xrt__shd {
  int kind;
  int rank;                    /* data dimensions with a tile count */
  int64_t tiles[XRT_MAX_RANK]; /* pieces per data dimension */
  int64_t devices;             /* devices the sharding spans */
} xrt__shd;

static bool xrt__shd_split(const xrt__shd *s) {
  for (int i = 0; s->kind == XRT__SHD_TILED && i < s->rank; i++)
    if (s->tiles[i] > 1) return true;
  return false;
}

static const char *xrt__sp_skip(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\t') s++;
  return s;
}

static bool xrt__sp_lit(const char **s, const char *lit) {
  const char *t = xrt__sp_skip(*s);
  size_t n = strlen(lit);
  if (strncmp(t, lit, n)) return false;
  *s = t + n;
  return true;
}

static bool xrt__sp_int(const char **s, int64_t *v) {
  const char *t = xrt__sp_skip(*s);
  if (*t < '0' || *t > '9') return false;
  int64_t x = 0;
  for (; *t >= '0' && *t <= '9'; t++) {
    if (x > (INT64_MAX - 9) / 10) return false;
    x = x * 10 + (*t - '0');
  }
  *v = x;
  *s = t;
  return true;
}

/* The closer matching the bracket before s (strings are opaque, "<=" is
 * no bracket); NULL if there is none. */
static const char *xrt__sp_close(const char *s) {
  int depth = 1;
  for (; *s; s++) {
    if (*s == '"') {
      for (s++; *s && *s != '"'; s++)
        if (*s == '\\' && s[1]) s++;
      if (!*s) return NULL;
    } else if (*s == '{' || *s == '[' || *s == '(' ||
               (*s == '<' && s[1] != '=')) { /* "<=[8]": an iota list */
      depth++;
    } else if ((*s == '}' || *s == ']' || *s == '>' || *s == ')') &&
               --depth == 0) {
      return s;
    }
  }
  return NULL;
}

/* Whether [s, e) contains word. */
static bool xrt__sp_has(const char *s, const char *e, const char *word) {
  size_t n = strlen(word);
  for (; s + n <= e; s++)
    if (!memcmp(s, word, n)) return true;
  return false;
}

/* `devices=[a,b,...]...` (at s, inside the braces ending at e): the last
 * dims are replication or manual subgroups, not data, when
 * last_tile_dim_replicate or last_tile_dims={...} says so. */
static bool xrt__hlo_tiled(const char *s, const char *e, xrt__shd *o) {
  int64_t dims[XRT_MAX_RANK + 8];
  int n = 0;
  o->kind = XRT__SHD_TILED;
  o->devices = 1;
  do {
    if (n == (int)XRT__ARRAY_SIZE(dims) || !xrt__sp_int(&s, &dims[n]))
      return false;
    o->devices *= dims[n] > 0 ? dims[n] : 1;
    n++;
  } while (xrt__sp_lit(&s, ","));
  if (!xrt__sp_lit(&s, "]")) return false;
  int sub = 0;
  if (xrt__sp_has(s, e, "last_tile_dim_replicate")) sub = 1;
  static const char key[] = "last_tile_dims={";
  for (const char *q = s; q + sizeof key - 1 <= e; q++) {
    if (memcmp(q, key, sizeof key - 1)) continue;
    sub = 1;
    for (q += sizeof key - 1; q < e && *q != '}'; q++) sub += *q == ',';
    break;
  }
  if (sub > n) return false;
  o->rank = n - sub;
  if (o->rank > XRT_MAX_RANK) return false;
  for (int i = 0; i < o->rank; i++) o->tiles[i] = dims[i];
  return true;
}

/* One HloSharding at *sp ("{replicated}", "{maximal device=0}",
 * "{manual}", "{devices=[2,1]0,1}", a tuple "{{...}, {...}}": its first
 * split element, else its first).  False when malformed. */
static bool xrt__hlo_shd(const char **sp, xrt__shd *o, int depth) {
  const char *s = *sp;
  memset(o, 0, sizeof *o);
  o->devices = 1;
  if (depth > 8 || !xrt__sp_lit(&s, "{")) return false;
  const char *e = xrt__sp_close(s);
  if (!e) return false;
  *sp = e + 1;
  if (*xrt__sp_skip(s) == '{') {
    bool first = true;
    do {
      xrt__shd el;
      if (!xrt__hlo_shd(&s, &el, depth + 1)) return false;
      if (first || (xrt__shd_split(&el) && !xrt__shd_split(o))) *o = el;
      first = false;
    } while (xrt__sp_lit(&s, ","));
    return xrt__sp_lit(&s, "}");
  }
  if (xrt__sp_lit(&s, "devices=[")) return xrt__hlo_tiled(s, e, o);
  if (xrt__sp_lit(&s, "maximal")) o->kind = XRT__SHD_MAXIMAL;
  else if (xrt__sp_lit(&s, "manual")) o->kind = XRT__SHD_MANUAL;
  else if (!xrt__sp_lit(&s, "replicated") && !xrt__sp_lit(&s, "unknown"))
    return false;
  return true;
}

static const xrt__mesh *xrt__mesh_find(const xrt__annots *an, const char *s,
                                       size_t n) {
  for (const xrt__mesh *m = an->meshes; m; m = m->next)
    if (strlen(m->name) == n && !memcmp(m->name, s, n)) return m;
  return NULL;
}

/* `"a"=2, ...]` of an inline mesh into m (names point into the text). */
static bool xrt__sdy_inline_mesh(const char **sp, xrt__mesh *m,
                                 const char **names, int64_t *sizes) {
  const char *s = *sp;
  m->axes = names;
  m->sizes = sizes;
  while (xrt__sp_lit(&s, "\"")) {
    const char *q = strchr(s, '"');
    if (!q || m->naxes == XRT_MAX_RANK) return false;
    names[m->naxes] = s; /* compared by length below */
    sizes[m->naxes] = (int64_t)(q - s);
    s = q + 1;
    int64_t size;
    if (!xrt__sp_lit(&s, "=") || !xrt__sp_int(&s, &size)) return false;
    sizes[XRT_MAX_RANK + m->naxes++] = size;
    if (!xrt__sp_lit(&s, ",")) break;
  }
  *sp = s;
  return xrt__sp_lit(sp, "]");
}

/* The size of axis "name" (n bytes) of mesh m; 0 if unknown. */
static int64_t xrt__mesh_axis(const xrt__mesh *m, const char *name, size_t n,
                              bool is_inline) {
  for (int32_t i = 0; i < m->naxes; i++) {
    size_t len = is_inline ? (size_t)m->sizes[i] : strlen(m->axes[i]);
    if (len == n && !memcmp(m->axes[i], name, n))
      return is_inline ? m->sizes[XRT_MAX_RANK + i] : m->sizes[i];
  }
  return 0;
}

/* `{"x", "y":(1)2, ?}` at *sp: the product of its axes' sizes. */
static bool xrt__sdy_dim(const char **sp, const xrt__mesh *m, bool is_inline,
                         int64_t *tiles, const char **err) {
  const char *s = *sp;
  *tiles = 1;
  if (!xrt__sp_lit(&s, "{")) return false;
  while (!xrt__sp_lit(&s, "}")) {
    if (xrt__sp_lit(&s, "?") || xrt__sp_lit(&s, ",")) continue;
    if (!xrt__sp_lit(&s, "\"")) return false;
    const char *q = strchr(s, '"');
    if (!q) return false;
    int64_t size = xrt__mesh_axis(m, s, (size_t)(q - s), is_inline), pre;
    if (!size) {
      *err = "an axis the mesh lacks";
      return false;
    }
    s = q + 1;
    if (xrt__sp_lit(&s, ":(")) { /* sub-axis "x":(pre)size */
      if (!xrt__sp_int(&s, &pre) || !xrt__sp_lit(&s, ")") ||
          !xrt__sp_int(&s, &size))
        return false;
    }
    *tiles *= size;
  }
  int64_t prio;
  if (*s == 'p') { /* priority: p0, p1, ... */
    s++;
    if (!xrt__sp_int(&s, &prio)) return false;
  }
  *sp = s;
  return true;
}

/* One sdy sharding at *sp: `@mesh, [dims...]...` or the same in `<...>`
 * (the pointer then moves past the '>'), the mesh by name or inline
 * (`mesh<[...]>`).  False when malformed, with *err set when the text is
 * well formed but names what the program lacks. */
static bool xrt__sdy_shd(const xrt__annots *an, const char **sp, xrt__shd *o,
                         const char **err) {
  const char *s = *sp, *close = NULL;
  memset(o, 0, sizeof *o);
  if (xrt__sp_lit(&s, "<")) {
    close = xrt__sp_close(s);
    if (!close) return false;
  }
  const xrt__mesh *m;
  xrt__mesh inl;
  const char *names[XRT_MAX_RANK];
  int64_t sizes[2 * XRT_MAX_RANK];
  bool is_inline = false;
  memset(&inl, 0, sizeof inl);
  if (xrt__sp_lit(&s, "@")) {
    const char *n = s, *e;
    if (*s == '"') { /* @"a quoted name" */
      if (!(e = strchr(++n, '"'))) return false;
      s = e + 1;
    } else {
      while (xrt__is_namechar(*s) || *s == '.' || *s == '$') s++;
      e = s;
    }
    if (!(m = xrt__mesh_find(an, n, (size_t)(e - n)))) {
      *err = "a mesh the module does not define (sdy.mesh)";
      return false;
    }
  } else {
    xrt__sp_lit(&s, "#sdy.");
    if (!xrt__sp_lit(&s, "mesh<")) return false;
    bool bracket = xrt__sp_lit(&s, "[");
    if (!bracket || !xrt__sdy_inline_mesh(&s, &inl, names, sizes)) return false;
    const char *e = xrt__sp_close(s);
    if (!e) return false;
    s = e + 1;
    m = &inl;
    is_inline = true;
  }
  if (!xrt__sp_lit(&s, ",") || !xrt__sp_lit(&s, "[")) return false;
  while (!xrt__sp_lit(&s, "]")) {
    if (xrt__sp_lit(&s, ",")) continue;
    if (o->rank == XRT_MAX_RANK ||
        !xrt__sdy_dim(&s, m, is_inline, &o->tiles[o->rank++], err))
      return false;
  }
  o->devices = 1;
  for (int32_t i = 0; i < m->naxes; i++)
    o->devices *= is_inline ? m->sizes[XRT_MAX_RANK + i] : m->sizes[i];
  o->kind = m->naxes ? XRT__SHD_TILED : XRT__SHD_MAXIMAL;
  *sp = close ? close + 1 : s;
  return true;
}

/* Element k of an sdy sharding list `[<...>, <...>]` (brackets optional). */
static bool xrt__sdy_shd_at(const xrt__annots *an, const char *s, int32_t k,
                            xrt__shd *o, const char **err) {
  xrt__sp_lit(&s, "[");
  for (int32_t i = 0; i <= k; i++) {
    if (i && !xrt__sp_lit(&s, ",")) return false;
    if (!xrt__sdy_shd(an, &s, o, err)) return false;
  }
  return true;
}

/* ---------------------------------------------------------------------
 * The pass
 * ------------------------------------------------------------------- */

/* A split sharding to judge once the function's boundaries are known. */
typedef struct xrt__sp_cand {
  struct xrt__sp_cand *next;
  xrt_ir_loc loc;
  const char *what;      /* "the result of sdy.sharding_constraint" */
  const char *sharding;
  int32_t root;          /* value whose type tells a boundary; -1: none */
  xrt_ir_type written;   /* its type as the program wrote it */
} xrt__sp_cand;

typedef struct xrt__sp {
  xrt__parser *p;
  xrt_ir_module *m;
  xrt_ir_func *f;
  int32_t fi, entry;
  int32_t *rep;          /* value -> the value its uses read */
  xrt_ir_type *old;      /* value types as written */
  const xrt_ir_op **prod;/* producer of each value; NULL for arguments */
  int64_t *dev;          /* devices of the sharding a value was given */
  xrt__sp_cand *cands;
  xrt__shard_info *info;
} xrt__sp;

/* Ops being emitted into one region. */
typedef struct xrt__sp_ops {
  xrt_ir_op *v;
  int32_t n, cap;
} xrt__sp_ops;

static void *xrt__sp_alloc(xrt__sp *s, size_t n) {
  return memset(xrt__p_alloc(s->p, n), 0, n);
}

static void xrt__sp_push(xrt__sp *s, xrt__sp_ops *o, const xrt_ir_op *op) {
  if (o->n == o->cap) {
    int32_t cap = o->cap ? 2 * o->cap : 16;
    xrt_ir_op *v = xrt__sp_alloc(s, sizeof *v * (size_t)cap);
    if (o->n) memcpy(v, o->v, sizeof *v * (size_t)o->n);
    o->v = v;
    o->cap = cap;
  }
  o->v[o->n++] = *op;
}

static int32_t xrt__sp_find(const xrt__sp *s, int32_t v) {
  while (s->rep[v] != v) v = s->rep[v];
  return v;
}

static const char *xrt__sp_fmt(xrt__sp *s, const char *fmt, ...)
    XRT__PARSE_PRINTF(2, 3);
static const char *xrt__sp_fmt(xrt__sp *s, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return xrt__strdup(s->p, buf, strlen(buf));
}

static const char *xrt__sp_op_name(xrt__sp *s, const xrt_ir_op *op) {
  const char *t = op->code == XRT_OP_CUSTOM_CALL ? xrt__host_target(op) : NULL;
  return t ? xrt__sp_fmt(s, "%s @%s", op->name, t) : op->name;
}

/* "argument 0 of @main", "the result of stablehlo.custom_call @Sharding". */
static const char *xrt__sp_what(xrt__sp *s, int32_t v) {
  for (int32_t i = 0; i < s->f->body.num_args; i++)
    if (s->f->body.args[i] == v)
      return xrt__sp_fmt(s, "argument %d of @%s", (int)i, s->f->name);
  if (s->prod[v]) return xrt__sp_fmt(s, "the result of %s",
                                     xrt__sp_op_name(s, s->prod[v]));
  return xrt__sp_fmt(s, "a region argument in @%s", s->f->name);
}

static const char *xrt__sp_type(xrt__sp *s, const xrt_ir_type *t) {
  char buf[160];
  size_t n = 0;
  xrt__p_type_fmt(t, buf, sizeof buf, &n);
  return xrt__strdup(s->p, buf, strlen(buf));
}

static void xrt__sp_producers(xrt__sp *s, const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    for (int32_t k = 0; k < op->num_results; k++) s->prod[op->results[k]] = op;
    for (int32_t k = 0; k < op->num_regions; k++)
      xrt__sp_producers(s, &op->regions[k]);
  }
}

/* Reads a sharding attribute (mhlo.sharding string or sdy text); false
 * when there is none.  A malformed one is an error at the op. */
static bool xrt__sp_read(xrt__sp *s, xrt_ir_loc loc, const char *text,
                         bool sdy, int32_t k, xrt__shd *o) {
  const char *err = NULL, *t = text;
  if (!text || !*text) return false; /* "": unspecified (JAX writes it) */
  if (sdy ? xrt__sdy_shd_at(&s->p->annots, t, k, o, &err)
          : xrt__hlo_shd(&t, o, 0))
    return true;
  xrt__perr_loc(s->p, loc, XRT_INVALID_ARGUMENT, "%s sharding \"%s\"%s%s",
                err ? "the" : "malformed", text, err ? " names " : "",
                err ? err : "");
}

/* The sharding an op carries: mhlo.sharding, sdy.sharding (of result k),
 * or the sharding of sdy.sharding_constraint / sdy.reshard. */
static bool xrt__sp_op_shd(xrt__sp *s, const xrt_ir_op *op, int32_t k,
                           xrt__shd *o, const char **text) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, "mhlo.sharding");
  bool sdy = false;
  if (!a || a->kind != XRT_ATTR_STRING) {
    a = xrt_ir_op_attr(op, xrt__is_sdy_op(op->code) ? "sharding"
                                                    : "sdy.sharding");
    sdy = true;
  }
  if (!a || a->kind != XRT_ATTR_STRING) return false;
  *text = a->s;
  return xrt__sp_read(s, op->loc, a->s, sdy, k, o);
}

static void xrt__sp_cand_add(xrt__sp *s, xrt_ir_loc loc, const char *what,
                             const char *sharding, int32_t root,
                             const xrt_ir_type *written) {
  xrt__sp_cand *c = xrt__sp_alloc(s, sizeof *c);
  c->loc = loc;
  c->what = what;
  c->sharding = sharding;
  c->root = root;
  if (written) c->written = *written;
  c->next = s->cands;
  s->cands = c;
}

/* The devices a shard_map region runs on (all regions must agree). */
static void xrt__sp_devices(xrt__sp *s, const xrt_ir_op *op, int64_t d) {
  xrt__shard_info *in = s->info;
  if (d < 1) return;
  if (in->devices && in->devices != d)
    xrt__perr_loc(s->p, op->loc, XRT_UNIMPLEMENTED, "%s runs on %lld devices "
                  "but an earlier shard_map region on %lld", op->name,
                  (long long)d, (long long)in->devices);
  if (!in->devices) in->devices = d, in->devices_loc = op->loc;
}

/* Value v enters a shard_map region whose per-device type is local: its
 * root, an argument of the entry function, takes that type. */
static void xrt__sp_enter(xrt__sp *s, int32_t v, const xrt_ir_type *local,
                          const xrt_ir_op *op) {
  int32_t r = xrt__sp_find(s, v);
  xrt_ir_type *t = (xrt_ir_type *)&s->f->value_types[r];
  if (xrt__p_type_eq(t, local)) return;
  bool arg = false;
  for (int32_t i = 0; i < s->f->body.num_args && s->fi == s->entry; i++)
    arg |= s->f->body.args[i] == r;
  if (!arg || !xrt__p_type_eq(t, &s->old[r]))
    xrt__perr_loc(s->p, op->loc, XRT_UNIMPLEMENTED, "%s enters %s with the "
                  "global type %s, but each device takes a %s piece: "
                  "automatic partitioning (SPMD partitioning of a program "
                  "written for the global shape) is not supported; pass the "
                  "value to @%s as an argument instead",
                  xrt__sp_what(s, r), xrt__sp_op_name(s, op),
                  xrt__sp_type(s, t), xrt__sp_type(s, local),
                  s->m->funcs[s->entry].name);
  bool ok = t->kind == XRT_TYPE_TENSOR && local->kind == XRT_TYPE_TENSOR &&
            t->shape.dtype == local->shape.dtype &&
            t->shape.rank == local->shape.rank;
  for (int i = 0; ok && i < t->shape.rank; i++)
    ok = local->shape.dims[i] > 0 ? t->shape.dims[i] % local->shape.dims[i] == 0
                                  : t->shape.dims[i] == 0;
  if (!ok)
    xrt__perr_loc(s->p, op->loc, XRT_INVALID_ARGUMENT, "%s: the shard type %s "
                  "does not divide %s of %s", xrt__sp_op_name(s, op),
                  xrt__sp_type(s, local), xrt__sp_type(s, t),
                  xrt__sp_what(s, r));
  *t = *local;
}

/* Uses of each result of op read the operand at the same index. */
static void xrt__sp_identity(xrt__sp *s, const xrt_ir_op *op) {
  if (op->num_operands != op->num_results)
    xrt__perr_loc(s->p, op->loc, XRT_INVALID_ARGUMENT, "%s has %d operands "
                  "and %d results; a sharding annotation passes its operands "
                  "through", xrt__sp_op_name(s, op), (int)op->num_operands,
                  (int)op->num_results);
  for (int32_t k = 0; k < op->num_results; k++)
    s->rep[op->results[k]] = op->operands[k];
}

static void xrt__sp_emit(xrt__sp *s, const xrt_ir_op *ops, int32_t n,
                         xrt__sp_ops *out);

static void xrt__sp_region(xrt__sp *s, const xrt_ir_region *r) {
  xrt__sp_ops out = {NULL, 0, 0};
  xrt__sp_emit(s, r->ops, r->num_ops, &out);
  xrt_ir_region *w = (xrt_ir_region *)r; /* ours until shared */
  w->ops = out.v;
  w->num_ops = out.n;
}

/* @Sharding, sdy.sharding_constraint, sdy.reshard: identities whose split
 * shardings are judged once the boundaries are known. */
static void xrt__sp_annotation(xrt__sp *s, const xrt_ir_op *op) {
  xrt__sp_identity(s, op);
  for (int32_t k = 0; k < op->num_results; k++) {
    xrt__shd d;
    const char *text = NULL;
    if (!xrt__sp_op_shd(s, op, k, &d, &text)) continue;
    s->dev[op->results[k]] = d.kind == XRT__SHD_TILED ? d.devices : 0;
    if (xrt__shd_split(&d))
      xrt__sp_cand_add(s, op->loc, xrt__sp_fmt(s, "the result of %s",
                                               xrt__sp_op_name(s, op)),
                       text, xrt__sp_find(s, op->operands[k]),
                       &s->old[op->results[k]]);
  }
}

/* sdy.manual_computation: its body, inlined. */
static void xrt__sp_manual(xrt__sp *s, const xrt_ir_op *op, xrt__sp_ops *out) {
  const xrt_ir_region *b = op->num_regions == 1 ? &op->regions[0] : NULL;
  const xrt_ir_op *ret = b && b->num_ops ? &b->ops[b->num_ops - 1] : NULL;
  if (!ret || (int)ret->code != XRT__OP_SDY_RETURN ||
      b->num_args != op->num_operands || ret->num_operands != op->num_results)
    xrt__perr_loc(s->p, op->loc, XRT_INVALID_ARGUMENT, "sdy.manual_computation "
                  "needs a body with an argument per operand that ends in "
                  "sdy.return of a value per result");
  const xrt_ir_attr *in = xrt_ir_op_attr(op, "in_shardings");
  xrt__shd d;
  if (in && in->kind == XRT_ATTR_STRING && op->num_operands &&
      xrt__sp_read(s, op->loc, in->s, true, 0, &d))
    xrt__sp_devices(s, op, d.devices);
  for (int32_t i = 0; i < op->num_operands; i++) {
    s->rep[b->args[i]] = op->operands[i];
    xrt__sp_enter(s, op->operands[i], &s->f->value_types[b->args[i]], op);
  }
  xrt__sp_emit(s, b->ops, b->num_ops - 1, out);
  for (int32_t j = 0; j < op->num_results; j++)
    s->rep[op->results[j]] = ret->operands[j];
}

/* A shard_map boundary custom call: 1 into, 2 out of the region; other
 * targets: 0. */
static int xrt__sp_boundary(const xrt_ir_op *op) {
  const char *t = op->code == XRT_OP_CUSTOM_CALL ? xrt__host_target(op) : NULL;
  if (!t) return 0;
  return !strcmp(t, "SPMDFullToShardShape")   ? 1
         : !strcmp(t, "SPMDShardToFullShape") ? 2
                                              : 0;
}

static bool xrt__sp_is_annotation(const xrt_ir_op *op) {
  const char *t = op->code == XRT_OP_CUSTOM_CALL ? xrt__host_target(op) : NULL;
  return (t && !strcmp(t, "Sharding")) ||
         (int)op->code == XRT__OP_SDY_CONSTRAINT ||
         (int)op->code == XRT__OP_SDY_RESHARD;
}

static void xrt__sp_emit(xrt__sp *s, const xrt_ir_op *ops, int32_t n,
                         xrt__sp_ops *out) {
  for (int32_t i = 0; i < n; i++) {
    const xrt_ir_op *op = &ops[i];
    int bnd = xrt__sp_boundary(op);
    xrt__shd d;
    const char *text = NULL;
    if (xrt__sp_is_annotation(op)) {
      xrt__sp_annotation(s, op);
    } else if (bnd) {
      xrt__sp_identity(s, op);
      if (bnd == 2 && xrt__sp_op_shd(s, op, 0, &d, &text))
        xrt__sp_devices(s, op, d.kind == XRT__SHD_TILED ? d.devices : 0);
      for (int32_t k = 0; bnd == 1 && k < op->num_operands; k++) {
        xrt__sp_devices(s, op, s->dev[op->operands[k]]);
        xrt__sp_enter(s, op->operands[k], &s->old[op->results[k]], op);
      }
    } else if ((int)op->code == XRT__OP_SDY_MANUAL) {
      xrt__sp_manual(s, op, out);
    } else if ((int)op->code == XRT__OP_SDY_RETURN) {
      xrt__perr_loc(s->p, op->loc, XRT_INVALID_ARGUMENT, "sdy.return outside "
                    "sdy.manual_computation");
    } else {
      for (int32_t k = 0; k < op->num_regions; k++)
        xrt__sp_region(s, &op->regions[k]);
      if (op->num_results && xrt__sp_op_shd(s, op, 0, &d, &text) &&
          xrt__shd_split(&d))
        xrt__sp_cand_add(s, op->loc, xrt__sp_fmt(s, "the result of %s",
                                                 xrt__sp_op_name(s, op)),
                         text, -1, NULL);
      xrt__sp_push(s, out, op);
    }
  }
}

/* Points every use at the value it reads now; a type that changed (a
 * shard_map's piece) may only leave through the entry's func.return,
 * whose result then has the piece's type too. */
static void xrt__sp_fix(xrt__sp *s, const xrt_ir_region *r, bool top) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    int32_t *operands = (int32_t *)op->operands;
    for (int32_t k = 0; k < op->num_operands; k++) {
      int32_t v = operands[k], n = xrt__sp_find(s, v);
      const xrt_ir_type *t = &s->f->value_types[n];
      operands[k] = n;
      if (xrt__p_type_eq(t, &s->old[v])) continue;
      if (top && s->fi == s->entry && op->code == XRT_OP_FUNC_RETURN &&
          k < s->f->num_results) {
        ((xrt_ir_type *)s->f->result_types)[k] = *t;
        continue;
      }
      xrt__perr_loc(s->p, op->loc, XRT_UNIMPLEMENTED, "%s holds one device's "
                    "piece (%s) of a shard_map, but %s uses it as the whole "
                    "value (%s): automatic partitioning (SPMD partitioning of "
                    "a program written for the global shape) is not "
                    "supported; return the value from @%s instead",
                    xrt__sp_what(s, n), xrt__sp_type(s, t),
                    xrt__sp_op_name(s, op), xrt__sp_type(s, &s->old[v]),
                    s->m->funcs[s->entry].name);
    }
    for (int32_t k = 0; k < op->num_regions; k++)
      xrt__sp_fix(s, &op->regions[k], false);
  }
}

/* The split shardings of a function's arguments and results that are not
 * shard_map boundaries become candidates. */
static void xrt__sp_notes(xrt__sp *s, const xrt_ir_type *old_results) {
  for (const xrt__shard_note *n = s->p->annots.notes; n; n = n->next) {
    if (n->func != s->fi) continue;
    xrt__shd d;
    if (!xrt__sp_read(s, n->loc, n->text, n->sdy, 0, &d) || !xrt__shd_split(&d))
      continue;
    bool changed;
    if (n->result) {
      if (n->index >= s->f->num_results) continue;
      changed = !xrt__p_type_eq(&s->f->result_types[n->index],
                                &old_results[n->index]);
    } else {
      if (n->index >= s->f->body.num_args) continue;
      int32_t a = s->f->body.args[n->index];
      changed = !xrt__p_type_eq(&s->f->value_types[a], &s->old[a]);
    }
    if (!changed)
      xrt__sp_cand_add(s, n->loc, xrt__sp_fmt(s, "%s %d of @%s",
                                              n->result ? "result" : "argument",
                                              (int)n->index, s->f->name),
                       n->text, -1, NULL);
  }
}

static bool xrt__loc_before(xrt_ir_loc a, xrt_ir_loc b) {
  return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* Keeps the first candidate that is no shard_map boundary. */
static void xrt__sp_judge(xrt__sp *s) {
  xrt__shard_info *in = s->info;
  for (const xrt__sp_cand *c = s->cands; c; c = c->next) {
    if (c->root >= 0 &&
        !xrt__p_type_eq(&s->f->value_types[c->root], &c->written))
      continue; /* the operand is a device's piece: a shard_map boundary */
    if (in->split_what && !xrt__loc_before(c->loc, in->split_loc)) continue;
    in->split_what = c->what;
    in->split_sharding = c->sharding;
    in->split_loc = c->loc;
  }
  s->cands = NULL;
}

static void xrt__sp_func(xrt__sp *s, int32_t fi) {
  xrt_ir_func *f = (xrt_ir_func *)&s->m->funcs[fi];
  size_t nv = (size_t)f->num_values + 1;
  s->f = f;
  s->fi = fi;
  s->rep = xrt__sp_alloc(s, sizeof *s->rep * nv);
  s->old = xrt__sp_alloc(s, sizeof *s->old * nv);
  s->prod = xrt__sp_alloc(s, sizeof *s->prod * nv);
  s->dev = xrt__sp_alloc(s, sizeof *s->dev * nv);
  xrt_ir_type *old_res = xrt__sp_alloc(
      s, sizeof *old_res * (size_t)(f->num_results + 1));
  for (int32_t v = 0; v < f->num_values; v++) {
    s->rep[v] = v;
    s->old[v] = f->value_types[v];
  }
  for (int32_t j = 0; j < f->num_results; j++) old_res[j] = f->result_types[j];
  xrt__sp_producers(s, &f->body);
  xrt__sp_region(s, &f->body);
  xrt__sp_fix(s, &f->body, true);
  xrt__sp_notes(s, old_res);
  xrt__sp_judge(s);
}

/* Whether any op of the module is a sharding annotation or shard_map
 * piece (most programs have none: the pass then costs one scan). */
static bool xrt__sp_any(const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    if (xrt__is_sdy_op(op->code) || xrt__sp_is_annotation(op) ||
        xrt__sp_boundary(op) || xrt_ir_op_attr(op, "mhlo.sharding") ||
        xrt_ir_op_attr(op, "sdy.sharding"))
      return true;
    for (int32_t k = 0; k < op->num_regions; k++)
      if (xrt__sp_any(&op->regions[k])) return true;
  }
  return false;
}

XRT__PRIVATE void xrt__shard_pass(xrt__parser *p, xrt_ir_module *m) {
  bool any = p->annots.notes != NULL;
  for (int32_t i = 0; !any && i < m->num_funcs; i++)
    any = xrt__sp_any(&m->funcs[i].body);
  if (!any) return;
  xrt__sp s;
  memset(&s, 0, sizeof s);
  s.p = p;
  s.m = m;
  s.info = xrt__sp_alloc(&s, sizeof *s.info);
  s.entry = -1;
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (!strcmp(m->funcs[i].name, "main")) s.entry = i;
  if (s.entry < 0 && m->num_funcs == 1) s.entry = 0;
  for (int32_t i = 0; i < m->num_funcs; i++) xrt__sp_func(&s, i);
  p->shard = s.info;
}

XRT__PRIVATE xrt_status xrt__shard_check(const xrt__shard_info *in,
                                         int32_t replicas, int32_t partitions) {
  if (!in) return XRT_OK;
  int64_t n = (int64_t)replicas * partitions;
  const xrt_ir_loc *l = &in->split_loc;
  if (in->split_what && n > 1)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s:%d:%d: %s is split across devices "
                     "by its sharding \"%s\": automatic partitioning (SPMD "
                     "partitioning of a program written for the global shape) "
                     "is not supported; xrt runs programs written per device "
                     "(shard_map) on %lld devices, or this one on one device",
                     l->file, (int)l->line, (int)l->col, in->split_what,
                     in->split_sharding, (long long)n);
  l = &in->devices_loc;
  if (in->devices > 1 && partitions != in->devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: the program's shard_map "
                     "runs on %lld devices, but it is compiled for %d "
                     "partitions (mhlo.num_partitions or num_partitions must "
                     "be %lld)", l->file, (int)l->line, (int)l->col,
                     (long long)in->devices, (int)partitions,
                     (long long)in->devices);
  return XRT_OK;
}
