/*
 * ir_compare.h - comparing two parsed modules through the public IR
 * (function by function, op by op, attribute by attribute, StableHLO's
 * defaults equal to their absence), and cutting MLIR text into functions
 * with the functions they call: shared by test_bytecode.c (artifacts
 * against their text twins) and test_bytecode_write.c (round trips
 * through xrt_program_serialize).
 */
#ifndef XRT_TEST_IR_COMPARE_H
#define XRT_TEST_IR_COMPARE_H

#include "test_util.h"

/* ---------------------------------------------------------------------
 * Comparing two modules through the public IR
 * ------------------------------------------------------------------- */

typedef struct diff {
  char what[512];
} diff;

static inline bool differ(diff *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->what, sizeof d->what, fmt, ap);
  va_end(ap);
  return false;
}

static inline bool type_eq(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!type_eq(&a->elems[i], &b->elems[i])) return false;
    return true;
  }
  if (a->kind != XRT_TYPE_TENSOR) return true;
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank)
    return false;
  for (int i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  if (!a->quant != !b->quant) return false;
  if (!a->quant) return true;
  const xrt_ir_quant *p = a->quant, *q = b->quant;
  if (p->storage != q->storage || p->expressed != q->expressed ||
      p->storage_min != q->storage_min || p->storage_max != q->storage_max ||
      p->axis != q->axis || p->num_scales != q->num_scales)
    return false;
  for (int32_t i = 0; i < p->num_scales; i++)
    if (p->scales[i] != q->scales[i] || p->zero_points[i] != q->zero_points[i])
      return false;
  return true;
}

static inline int64_t numel(const xrt_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

/* Element by element, splats expanded. */
static inline bool lit_eq(const xrt_ir_literal *a, const xrt_ir_literal *b) {
  if (!type_eq(&a->type, &b->type)) return false;
  size_t es = xrt_dtype_size(a->type.shape.dtype);
  int64_t n = numel(&a->type.shape);
  if ((!a->splat && a->bytes != (size_t)n * es) ||
      (!b->splat && b->bytes != (size_t)n * es))
    return a->bytes == b->bytes && (!a->bytes || !memcmp(a->data, b->data, a->bytes));
  for (int64_t i = 0; i < n; i++) {
    const char *x = (const char *)a->data + (a->splat ? 0 : (size_t)i * es);
    const char *y = (const char *)b->data + (b->splat ? 0 : (size_t)i * es);
    if (memcmp(x, y, es)) return false;
  }
  return true;
}

/* Round trips through an artifact (test_bytecode_write.c) set this: VHLO
 * spells symbol references as strings where StableHLO does not say an
 * attribute is one, integer lists as tensors, and leaves empty fields of
 * structures out, so a string equals a symbol of the same text, an
 * integer list a dense one with the same integers, and an empty field an
 * absent one. */
static bool ir_compare_portable;

static inline bool attr_eq(diff *d, const char *path, const xrt_ir_attr *a,
                    const xrt_ir_attr *b);

/* Items of dictionaries by name, of lists in order. */
static inline bool items_eq(diff *d, const char *path, const xrt_ir_attr *a,
                     const xrt_ir_attr *b, bool by_name) {
  if (a->num_items != b->num_items && !(by_name && ir_compare_portable))
    return differ(d, "%s: %d items vs %d", path, (int)a->num_items,
                  (int)b->num_items);
  if (by_name && ir_compare_portable) { /* empty fields: left out */
    for (int pass = 0; pass < 2; pass++) {
      const xrt_ir_attr *x = pass ? b : a, *o = pass ? a : b;
      for (int32_t i = 0; i < x->num_items; i++) {
        const xrt_ir_attr *it = &x->items[i];
        bool empty = (it->kind == XRT_ATTR_INTS || it->kind == XRT_ATTR_LIST) &&
                     it->n == 0 && it->num_items == 0;
        if (!empty && !xrt_ir_attr_field(o, it->name))
          return differ(d, "%s: no field %s", path, it->name);
      }
    }
    for (int32_t i = 0; i < a->num_items; i++) {
      const xrt_ir_attr *y = xrt_ir_attr_field(b, a->items[i].name);
      char sub[256];
      snprintf(sub, sizeof sub, "%s.%s", path, a->items[i].name);
      if (y && !attr_eq(d, sub, &a->items[i], y)) return false;
    }
    return true;
  }
  for (int32_t i = 0; i < a->num_items; i++) {
    const xrt_ir_attr *y = &b->items[i];
    if (by_name) {
      y = NULL;
      for (int32_t k = 0; k < b->num_items && !y; k++)
        if (b->items[k].name && a->items[i].name &&
            !strcmp(b->items[k].name, a->items[i].name))
          y = &b->items[k];
      if (!y) return differ(d, "%s: no field %s", path, a->items[i].name);
    }
    char sub[256];
    snprintf(sub, sizeof sub, "%s.%s", path,
             by_name ? a->items[i].name : "item");
    if (!attr_eq(d, sub, &a->items[i], y)) return false;
  }
  return true;
}


static inline bool sym_kind(int k) {
  return k == XRT_ATTR_STRING || k == XRT_ATTR_SYMBOL;
}

static inline bool attr_eq(diff *d, const char *path, const xrt_ir_attr *a,
                    const xrt_ir_attr *b) {
  if (ir_compare_portable && sym_kind(a->kind) && sym_kind(b->kind) &&
      a->n == b->n && (!a->n || !memcmp(a->s, b->s, (size_t)a->n)))
    return true;
  if (a->kind != b->kind)
    return differ(d, "%s: kind %d vs %d", path, a->kind, b->kind);
  switch (a->kind) {
  case XRT_ATTR_INT: case XRT_ATTR_BOOL:
    if (a->i != b->i)
      return differ(d, "%s: %lld vs %lld", path, (long long)a->i, (long long)b->i);
    return true;
  case XRT_ATTR_FLOAT:
    if (a->f != b->f && !(isnan(a->f) && isnan(b->f)))
      return differ(d, "%s: %.17g vs %.17g", path, a->f, b->f);
    return true;
  case XRT_ATTR_STRING: case XRT_ATTR_ENUM: case XRT_ATTR_SYMBOL:
    if (a->n != b->n || (a->n && memcmp(a->s, b->s, (size_t)a->n)))
      return differ(d, "%s: '%.*s' vs '%.*s'", path, (int)a->n, a->s, (int)b->n,
                    b->s);
    return true;
  case XRT_ATTR_INTS:
    if (a->n != b->n || (a->n && memcmp(a->ints, b->ints, (size_t)a->n * sizeof *a->ints)))
      return differ(d, "%s: integer lists differ", path);
    if (!a->lit != !b->lit && !ir_compare_portable)
      return differ(d, "%s: dense vs array", path);
    if (a->lit && b->lit && !lit_eq(a->lit, b->lit))
      return differ(d, "%s: dense literals differ", path);
    return true;
  case XRT_ATTR_DENSE:
    if (!lit_eq(a->lit, b->lit)) return differ(d, "%s: literals differ", path);
    return true;
  case XRT_ATTR_TYPE:
    if (!type_eq(a->type, b->type)) return differ(d, "%s: types differ", path);
    return true;
  case XRT_ATTR_LIST: return items_eq(d, path, a, b, false);
  case XRT_ATTR_DICT: return items_eq(d, path, a, b, true);
  default: return true;
  }
}

static inline bool region_eq(diff *d, const char *fn, const xrt_ir_region *a,
                      const xrt_ir_region *b);

static inline bool same_ids(const int32_t *a, const int32_t *b, int32_t n) {
  return n == 0 || !memcmp(a, b, (size_t)n * sizeof *a);
}

/* Attributes StableHLO treats as absent when they have their default
 * value: written out on one side only, they are equal (the artifact cannot
 * tell a default written out from one left out). */
static inline bool is_default(const xrt_ir_op *op, const xrt_ir_attr *a) {
  const char *n = a->name;
  if (op->code == XRT_OP_CUSTOM_CALL && !strcmp(n, "api_version"))
    return a->kind == XRT_ATTR_INT && a->i == 1;
  if (!strcmp(n, "result_layouts") || !strcmp(n, "operand_layouts") ||
      !strcmp(n, "called_computations") || !strcmp(n, "output_operand_aliases"))
    return (a->kind == XRT_ATTR_LIST || a->kind == XRT_ATTR_INTS) &&
           a->n == 0 && a->num_items == 0;
  if (a->kind == XRT_ATTR_BOOL) return a->i == 0; /* false: StableHLO's default */
  if (a->kind == XRT_ATTR_DICT && !strcmp(n, "channel_handle")) {
    const xrt_ir_attr *h = xrt_ir_attr_field(a, "handle");
    const xrt_ir_attr *t = xrt_ir_attr_field(a, "type");
    return (!h || h->i == 0) && (!t || t->i == 0);
  }
  if (a->kind == XRT_ATTR_STRING && !strcmp(n, "backend_config")) return a->n == 0;
  if (a->kind == XRT_ATTR_ENUM && !strcmp(n, "compare_type"))
    return a->n == 6 && !memcmp(a->s, "NOTYPE", 6);
  if (a->kind == XRT_ATTR_INT && op->code == XRT_OP_SORT && !strcmp(n, "dimension"))
    return a->i == -1;
  if (a->kind == XRT_ATTR_LIST && !strcmp(n, "precision_config")) {
    for (int32_t i = 0; i < a->num_items; i++)
      if (a->items[i].kind != XRT_ATTR_ENUM || strcmp(a->items[i].s, "DEFAULT"))
        return false;
    return true;
  }
  if (a->kind == XRT_ATTR_INTS) { /* dilations and strides 1, paddings 0 */
    bool ones = strstr(n, "dilation") || strstr(n, "strides");
    bool zeros = !strcmp(n, "padding") || !strcmp(n, "window_reversal");
    for (int64_t i = 0; (ones || zeros) && i < a->n; i++)
      if (a->ints[i] != (ones ? 1 : 0)) return false;
    if (ones || zeros) return true;
  }
  if (!strcmp(n, "result_accuracy")) {
    const xrt_ir_attr *m = xrt_ir_attr_field(a, "mode");
    const xrt_ir_attr *u = xrt_ir_attr_field(a, "ulps");
    const xrt_ir_attr *at = xrt_ir_attr_field(a, "atol");
    const xrt_ir_attr *rt = xrt_ir_attr_field(a, "rtol");
    return m && m->kind == XRT_ATTR_DICT && m->num_items == 1 &&
           !strcmp(m->items[0].name, "DEFAULT") && (!u || u->i == 0) &&
           (!at || at->f == 0) && (!rt || rt->f == 0);
  }
  return false;
}

/* Attributes of a and b agree: the same by name, or one-sided defaults. */
static inline bool attrs_eq(diff *d, const char *fn, const xrt_ir_op *a,
                     const xrt_ir_op *b) {
  for (int pass = 0; pass < 2; pass++) {
    const xrt_ir_op *x = pass ? b : a, *y = pass ? a : b;
    for (int32_t i = 0; i < x->num_attrs; i++) {
      const xrt_ir_attr *other = xrt_ir_op_attr(y, x->attrs[i].name);
      char path[256];
      snprintf(path, sizeof path, "@%s: %s: %s", fn, a->name, x->attrs[i].name);
      if (!other && !is_default(x, &x->attrs[i]))
        return differ(d, "%s: only in the %s", path, pass ? "artifact" : "twin");
      if (other && !pass && !attr_eq(d, path, &x->attrs[i], other)) return false;
    }
  }
  return true;
}

static inline bool op_eq(diff *d, const char *fn, const xrt_ir_op *a, const xrt_ir_op *b) {
  if (a->code != b->code || strcmp(a->name, b->name))
    return differ(d, "@%s: op %s vs %s", fn, a->name, b->name);
  if (a->num_operands != b->num_operands || a->num_results != b->num_results ||
      !same_ids(a->operands, b->operands, a->num_operands) ||
      !same_ids(a->results, b->results, a->num_results))
    return differ(d, "@%s: %s: operands or results differ", fn, a->name);
  if (!attrs_eq(d, fn, a, b)) return false;
  if (a->num_regions != b->num_regions)
    return differ(d, "@%s: %s: regions differ", fn, a->name);
  for (int32_t i = 0; i < a->num_regions; i++)
    if (!region_eq(d, fn, &a->regions[i], &b->regions[i])) return false;
  return true;
}

static inline bool region_eq(diff *d, const char *fn, const xrt_ir_region *a,
                      const xrt_ir_region *b) {
  if (a->num_args != b->num_args || a->num_ops != b->num_ops ||
      !same_ids(a->args, b->args, a->num_args))
    return differ(d, "@%s: region arguments or op counts differ (%d/%d ops)", fn,
                  (int)a->num_ops, (int)b->num_ops);
  for (int32_t i = 0; i < a->num_ops; i++)
    if (!op_eq(d, fn, &a->ops[i], &b->ops[i])) return false;
  return true;
}

static inline bool func_eq(diff *d, const xrt_ir_func *a, const xrt_ir_func *b) {
  if (strcmp(a->name, b->name) || a->is_public != b->is_public)
    return differ(d, "@%s: name or visibility differs", a->name);
  if (a->num_values != b->num_values || a->num_results != b->num_results)
    return differ(d, "@%s: %d values vs %d", a->name, (int)a->num_values,
                  (int)b->num_values);
  for (int32_t i = 0; i < a->num_values; i++)
    if (!type_eq(&a->value_types[i], &b->value_types[i]))
      return differ(d, "@%s: value %d has another type", a->name, (int)i);
  for (int32_t i = 0; i < a->num_results; i++)
    if (!type_eq(&a->result_types[i], &b->result_types[i]))
      return differ(d, "@%s: result %d has another type", a->name, (int)i);
  return region_eq(d, a->name, &a->body, &b->body);
}

static inline const xrt_ir_func *find_func(const xrt_ir_module *m, const char *name) {
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (!strcmp(m->funcs[i].name, name)) return &m->funcs[i];
  return NULL;
}

/* ---------------------------------------------------------------------
 * Functions of a text: the twin's `func.func @f(...) {` ... `}` at the
 * left margin; the reader's `"func.func"() <{... sym_name = "f" ...}>` at
 * depth one.
 * ------------------------------------------------------------------- */

typedef struct chunk {
  char name[128];
  const char *s;
  size_t n;
} chunk;

static inline int split_twin(const char *t, chunk *out, int cap) {
  int n = 0;
  for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, "func.func", 9) || n == cap) continue;
    const char *at = strchr(l, '@'), *eol = strchr(l, '\n');
    if (!at || (eol && at > eol)) continue;
    chunk *c = &out[n++];
    size_t k = strcspn(at + 1, "( \n");
    snprintf(c->name, sizeof c->name, "%.*s", (int)k, at + 1);
    c->s = l;
    const char *end = eol ? eol : l + strlen(l);
    /* the header may go on over lines: a body opens before the next item */
    for (const char *h = end; *h && h[-1] != '{';) {
      const char *next = strchr(h + 1, '\n');
      if (!next || h[1] == '\n' || (h[1] != ' ' && h[1] != '\t')) break;
      h = next;
      if (h[-1] == '{') end = h;
    }
    if (end > l && end[-1] == '{') { /* a body: up to "}" alone */
      const char *e = end;
      while ((e = strstr(e, "\n}")) && e[2] && e[2] != '\n') e++;
      end = e ? e + 2 : l + strlen(l);
    }
    c->n = (size_t)(end - l);
  }
  return n;
}

static inline int split_generated(const char *t, chunk *out, int cap) {
  int n = 0;
  static const char head[] = "    \"func.func\"", tail[] = "\n    }) : () -> ()";
  for (const char *l = strstr(t, head); l && n < cap; l = strstr(l + 1, head)) {
    chunk *c = &out[n++];
    const char *nm = strstr(l, "sym_name = \"");
    size_t k = nm ? strcspn(nm + 12, "\"") : 0;
    snprintf(c->name, sizeof c->name, "%.*s", (int)k, nm ? nm + 12 : "");
    const char *e = strstr(l, tail);
    c->s = l;
    c->n = e ? (size_t)(e + strlen(tail) - l) : strlen(l);
  }
  return n;
}

/* The function with the functions it names (callees, decompositions). */
static inline char *with_callees(const chunk *all, int n, const chunk *c) {
  size_t len = c->n + 2;
  bool *use = calloc((size_t)n, 1);
  for (int i = 0; i < n; i++) {
    if (&all[i] == c) continue;
    char ref[160];
    snprintf(ref, sizeof ref, "@%s", all[i].name);
    /* only within the chunk: strstr would scan the rest of the file for
     * each pair of functions (minutes with msvcrt's strstr) */
    size_t rn = strlen(ref);
    const char *hit = c->s, *end = c->s + c->n;
    while ((hit = memchr(hit, '@', (size_t)(end - hit)))) {
      if ((size_t)(end - hit) <= rn || memcmp(hit, ref, rn)) {
        hit++;
        continue;
      }
      char after = hit[rn];
      if (!(after == '_' || after == '.' || after == '-' ||
            (after >= '0' && after <= '9') || (after >= 'a' && after <= 'z') ||
            (after >= 'A' && after <= 'Z'))) {
        use[i] = true;
        break;
      }
      hit++;
    }
    if (use[i]) len += all[i].n + 1;
  }
  char *s = malloc(len + 1), *p = s;
  memcpy(p, c->s, c->n);
  p += c->n;
  *p++ = '\n';
  for (int i = 0; i < n; i++)
    if (use[i]) {
      memcpy(p, all[i].s, all[i].n);
      p += all[i].n;
      *p++ = '\n';
    }
  *p = 0;
  free(use);
  return s;
}

#endif
