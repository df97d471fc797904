/*
 * src/core/normalize.c - one attribute form for the pretty and the generic
 * syntax (convolution dimension numbers, windows).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 5b. Normalize
 *
 * Some ops spell the same attributes differently in their pretty and generic
 * forms.  This pass rewrites them into one representation, the generic
 * attribute names of the StableHLO specification, so that the verifier and
 * every plugin read a single form:
 *  - convolution's compact `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
 *    becomes a DICT "dimension_numbers" with INT/INTS fields
 *    input_batch_dimension, input_feature_dimension,
 *    input_spatial_dimensions, kernel_input_feature_dimension,
 *    kernel_output_feature_dimension, kernel_spatial_dimensions,
 *    output_batch_dimension, output_feature_dimension,
 *    output_spatial_dimensions;
 *  - the pretty `window = {stride, pad, lhs_dilate, rhs_dilate, reverse}`
 *    becomes window_strides, padding (flattened pairs), lhs_dilation,
 *    rhs_dilation and window_reversal.
 * ==================================================================== */

typedef struct xrt__nctx {
  xrt__arena *arena;
  const xrt_ir_op *op;
} xrt__nctx;

static xrt_status xrt__nfail(const xrt__nctx *n, const char *what) {
  const xrt_ir_loc *l = &n->op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s", l->file,
                   (int)l->line, (int)l->col, n->op->name, what);
}

/* One bracketed group of the compact form: "[b, 0, 1, f]".  Letters are
 * given in `letters` (e.g. "bf"); their positions go to role[], digit k's
 * position to spatial[k]. */
static xrt_status xrt__conv_group(const xrt__nctx *n, const char **sp,
                                  const char *letters, int64_t role[2],
                                  int64_t *spatial, int64_t *nspatial) {
  const char *s = *sp;
  while (*s == ' ') s++;
  if (*s++ != '[') return xrt__nfail(n, "malformed dimension numbers");
  int64_t pos = 0, count = 0;
  role[0] = role[1] = -1;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ']') break;
    if (*s >= '0' && *s <= '9') {
      int64_t k = 0;
      while (*s >= '0' && *s <= '9' && k < XRT_MAX_RANK) k = k * 10 + (*s++ - '0');
      if (k >= XRT_MAX_RANK) return xrt__nfail(n, "spatial dimension too large");
      spatial[k] = pos;
      if (k + 1 > count) count = k + 1;
    } else if (*s == letters[0] || *s == letters[1]) {
      role[*s == letters[1]] = pos;
      s++;
    } else {
      return xrt__nfail(n, "malformed dimension numbers");
    }
    if (++pos > XRT_MAX_RANK) return xrt__nfail(n, "too many dimensions");
  }
  *sp = s + 1;
  *nspatial = count;
  if (role[0] < 0 || role[1] < 0)
    return xrt__nfail(n, "dimension numbers lack a batch/feature letter");
  return XRT_OK;
}

static xrt_ir_attr xrt__int_attr(const char *name, int64_t v) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = XRT_ATTR_INT;
  a.i = v;
  return a;
}

static xrt_status xrt__ints_attr(const xrt__nctx *n, const char *name,
                                 const int64_t *v, int64_t count,
                                 xrt_ir_attr *a) {
  int64_t *copy = (int64_t *)xrt__arena_alloc(n->arena,
                                              sizeof(int64_t) * (size_t)(count + 1));
  if (!copy) return xrt__nomem("an integer list attribute");
  for (int64_t i = 0; i < count; i++) copy[i] = v[i];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->kind = XRT_ATTR_INTS;
  a->ints = copy;
  a->n = count;
  return XRT_OK;
}

XRT__PRIVATE_DATA const char *const xrt__conv_dim_names[3][3] = {
    {"input_batch_dimension", "input_feature_dimension",
     "input_spatial_dimensions"},
    {"kernel_input_feature_dimension", "kernel_output_feature_dimension",
     "kernel_spatial_dimensions"},
    {"output_batch_dimension", "output_feature_dimension",
     "output_spatial_dimensions"}};

/* The compact conv form into a DICT of nine fields. */
static xrt_status xrt__conv_dims(const xrt__nctx *n, const char *s,
                                 xrt_ir_attr *out) {
  const char *const (*names)[3] = xrt__conv_dim_names;
  static const char *const letters[3] = {"bf", "io", "bf"};
  xrt_ir_attr *items = (xrt_ir_attr *)xrt__arena_alloc(n->arena,
                                                       9 * sizeof *items);
  if (!items) return xrt__nomem("a dimension-numbers attribute");
  for (int g = 0; g < 3; g++) {
    int64_t role[2], spatial[XRT_MAX_RANK] = {0}, ns = 0;
    if (g == 1 && (s[0] != 'x' || !s++))
      return xrt__nfail(n, "expected 'x' in dimension numbers");
    if (g == 2 && (s[0] != '-' || s[1] != '>' || !(s += 2)))
      return xrt__nfail(n, "expected '->' in dimension numbers");
    xrt_status st = xrt__conv_group(n, &s, letters[g], role, spatial, &ns);
    if (st) return st;
    items[3 * g] = xrt__int_attr(names[g][0], role[0]);
    items[3 * g + 1] = xrt__int_attr(names[g][1], role[1]);
    if ((st = xrt__ints_attr(n, names[g][2], spatial, ns, &items[3 * g + 2])))
      return st;
  }
  memset(out, 0, sizeof *out);
  out->name = "dimension_numbers";
  out->kind = XRT_ATTR_DICT;
  out->items = items;
  out->num_items = 9;
  return XRT_OK;
}

/* Maps a pretty window field to its generic attribute. */
static const char *xrt__window_name(const char *field) {
  static const char *const map[][2] = {
      {"stride", "window_strides"}, {"pad", "padding"},
      {"lhs_dilate", "lhs_dilation"}, {"rhs_dilate", "rhs_dilation"},
      {"reverse", "window_reversal"}};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(map); i++)
    if (strcmp(field, map[i][0]) == 0) return map[i][1];
  return NULL;
}

/* [[lo, hi], ...] (a LIST of two-element INTS) into flat INTS. */
static xrt_status xrt__flatten_pairs(const xrt__nctx *n, const xrt_ir_attr *a,
                                     xrt_ir_attr *out) {
  int64_t v[2 * XRT_MAX_RANK];
  if (a->num_items > XRT_MAX_RANK) return xrt__nfail(n, "too many pads");
  for (int32_t i = 0; i < a->num_items; i++) {
    const xrt_ir_attr *p = &a->items[i];
    if (p->kind != XRT_ATTR_INTS || p->n != 2)
      return xrt__nfail(n, "pad entries must be [low, high] pairs");
    v[2 * i] = p->ints[0];
    v[2 * i + 1] = p->ints[1];
  }
  return xrt__ints_attr(n, a->name, v, 2 * (int64_t)a->num_items, out);
}

static xrt_status xrt__normalize_conv(xrt__nctx *n, xrt_ir_op *op) {
  int32_t extra = 0;
  for (int32_t i = 0; i < op->num_attrs; i++)
    if (op->attrs[i].kind == XRT_ATTR_DICT && op->attrs[i].name &&
        strcmp(op->attrs[i].name, "window") == 0)
      extra += op->attrs[i].num_items;
  xrt_ir_attr *attrs = (xrt_ir_attr *)xrt__arena_alloc(
      n->arena, sizeof *attrs * (size_t)(op->num_attrs + extra + 1));
  if (!attrs) return xrt__nomem("an op's normalized attributes");
  int32_t k = 0;
  for (int32_t i = 0; i < op->num_attrs; i++) {
    const xrt_ir_attr *a = &op->attrs[i];
    const char *name = a->name ? a->name : "";
    xrt_status st = XRT_OK;
    if (a->kind == XRT_ATTR_STRING && (strcmp(name, "dimension_numbers") == 0 ||
                                       strcmp(name, "dim_numbers") == 0)) {
      st = xrt__conv_dims(n, a->s, &attrs[k++]);
    } else if (a->kind == XRT_ATTR_DICT && strcmp(name, "window") == 0) {
      for (int32_t j = 0; j < a->num_items; j++) {
        const char *g = a->items[j].name ? xrt__window_name(a->items[j].name)
                                         : NULL;
        if (!g) return xrt__nfail(n, "unknown field in window");
        if (a->items[j].kind == XRT_ATTR_LIST) { /* pad = [[lo, hi], ...] */
          if ((st = xrt__flatten_pairs(n, &a->items[j], &attrs[k]))) return st;
        } else {
          attrs[k] = a->items[j];
        }
        attrs[k++].name = g;
      }
    } else {
      attrs[k++] = *a;
    }
    if (st) return st;
  }
  op->attrs = attrs;
  op->num_attrs = k;
  return XRT_OK;
}

static xrt_status xrt__normalize_region(xrt__nctx *n, const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* ours until shared */
    n->op = op;
    xrt_status s = XRT_OK;
    if (op->code == XRT_OP_CONVOLUTION || op->code == XRT_OP_DYNAMIC_CONV)
      s = xrt__normalize_conv(n, op);
    for (int32_t k = 0; !s && k < op->num_regions; k++)
      s = xrt__normalize_region(n, &op->regions[k]);
    if (s) return s;
  }
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__normalize_module(xrt__arena *arena, xrt_ir_module *m) {
  xrt_status cs = xrt__chlo_lower_module(arena, m); /* chlo.c */
  return cs ? cs : xrt__normalize_attrs(arena, m);
}

XRT__PRIVATE xrt_status xrt__normalize_attrs(xrt__arena *arena, xrt_ir_module *m) {
  xrt__nctx n = {arena, NULL};
  for (int32_t i = 0; i < m->num_funcs; i++) {
    xrt_status s = xrt__normalize_region(&n, &m->funcs[i].body);
    if (s) return s;
  }
  return XRT_OK;
}
