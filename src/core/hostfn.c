/*
 * src/core/hostfn.c - host functions (custom_call targets) and the built-in
 * check.* targets.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 11. Host functions and the built-in check.* targets
 * ==================================================================== */

xrt_status xrt_host_call_fail(xrt_host_call *call, xrt_status code,
                              const char *fmt, ...) {
  if (call && call->error && call->error_cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->error, call->error_cap, fmt, ap);
    va_end(ap);
  }
  return code == XRT_OK ? XRT_INTERNAL : code;
}

static xrt_status xrt__host_register(xrt__client *c, const char *target,
                                     xrt_host_fn fn, void *user) {
  for (int i = 0; i < c->num_hosts; i++)
    if (strcmp(c->hosts[i].target, target) == 0) {
      c->hosts[i].fn = fn;
      c->hosts[i].user = user;
      return XRT_OK;
    }
  if (c->num_hosts == c->cap_hosts) {
    int cap = c->cap_hosts ? 2 * c->cap_hosts : 8;
    xrt__host_entry *h = (xrt__host_entry *)xrt__calloc(
        &c->allocator, (size_t)cap, sizeof *h);
    if (!h) return xrt__nomem("the host function table");
    if (c->num_hosts) memcpy(h, c->hosts, sizeof *h * (size_t)c->num_hosts);
    xrt__free(&c->allocator, c->hosts);
    c->hosts = h;
    c->cap_hosts = cap;
  }
  size_t len = strlen(target);
  char *name = (char *)xrt__alloc(&c->allocator, len + 1);
  if (!name) return xrt__nomem("a host function's name");
  memcpy(name, target, len + 1);
  c->hosts[c->num_hosts++] = (xrt__host_entry){name, fn, user};
  return XRT_OK;
}

xrt_status xrt_client_register_host_function(xrt_client *client,
                                             const char *target,
                                             xrt_host_fn fn, void *user) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(target && *target, "target is NULL or empty");
  XRT__CHECK_ARG(fn, "fn is NULL");
  pthread_mutex_lock(&c->mu);
  xrt_status s = xrt__host_register(c, target, fn, user);
  pthread_mutex_unlock(&c->mu);
  return s;
}

XRT__PRIVATE bool xrt__host_lookup(xrt__client *c, const char *target,
                             xrt_host_fn *fn, void **user) {
  bool found = false;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < c->num_hosts && !found; i++)
    if (strcmp(c->hosts[i].target, target) == 0) {
      *fn = c->hosts[i].fn;
      *user = c->hosts[i].user;
      found = true;
    }
  pthread_mutex_unlock(&c->mu);
  return found;
}

/* One element read from a host tensor, widened for comparison. */
typedef struct xrt__scalar {
  int klass;      /* XRT__K_* */
  int64_t i;      /* signed ints and pred */
  uint64_t u;     /* unsigned ints */
  double re, im;  /* floats (re) and complex */
  uint64_t bits;  /* float bit pattern (of re for complex) */
  uint64_t bits_im;
} xrt__scalar;

static void xrt__scalar_read(xrt_dtype t, const void *data, size_t i,
                             xrt__scalar *s) {
  const unsigned char *p = (const unsigned char *)data + i * xrt_dtype_size(t);
  memset(s, 0, sizeof *s);
  s->klass = xrt__dtype_class(t);
  switch (t) {
  case XRT_PRED: s->i = p[0] != 0; break;
  case XRT_S2: case XRT_S4: case XRT_S8: s->i = (int8_t)p[0]; break;
  case XRT_U2: case XRT_U4: case XRT_U8: s->u = p[0]; break;
  case XRT_S16: { int16_t v; memcpy(&v, p, 2); s->i = v; break; }
  case XRT_U16: { uint16_t v; memcpy(&v, p, 2); s->u = v; break; }
  case XRT_S32: { int32_t v; memcpy(&v, p, 4); s->i = v; break; }
  case XRT_U32: { uint32_t v; memcpy(&v, p, 4); s->u = v; break; }
  case XRT_S64: memcpy(&s->i, p, 8); break;
  case XRT_U64: memcpy(&s->u, p, 8); break;
  case XRT_F16: case XRT_BF16: {
    uint16_t v;
    memcpy(&v, p, 2);
    s->bits = v;
    s->re = t == XRT_F16 ? xrt_f16_to_f32(v) : xrt_bf16_to_f32(v);
    break;
  }
  case XRT_F32: case XRT_C64: {
    float v[2] = {0, 0};
    memcpy(v, p, t == XRT_C64 ? 8 : 4);
    s->re = v[0], s->im = v[1];
    s->bits = xrt__f32_to_bits(v[0]), s->bits_im = xrt__f32_to_bits(v[1]);
    break;
  }
  case XRT_F64: case XRT_C128: {
    double v[2] = {0, 0};
    memcpy(v, p, t == XRT_C128 ? 16 : 8);
    s->re = v[0], s->im = v[1];
    s->bits = xrt__f64_to_bits(v[0]), s->bits_im = xrt__f64_to_bits(v[1]);
    break;
  }
  default:
    if (xrt_dtype_is_float(t)) { /* the f8/f6/f4 families */
      s->bits = p[0];
      s->re = xrt_minifloat_to_f64(t, p[0]);
    } else {
      s->klass = XRT__K_NONE;
    }
    break;
  }
}

static int xrt__scalar_format(const xrt__scalar *s, char *buf, size_t cap) {
  switch (s->klass) {
  case XRT__K_PRED: return snprintf(buf, cap, "%s", s->i ? "true" : "false");
  case XRT__K_SINT: return snprintf(buf, cap, "%" PRId64, s->i);
  case XRT__K_UINT: return snprintf(buf, cap, "%" PRIu64, s->u);
  case XRT__K_FLOAT: return snprintf(buf, cap, "%.17g", s->re);
  case XRT__K_COMPLEX: return snprintf(buf, cap, "(%.17g, %.17g)", s->re, s->im);
  }
  return snprintf(buf, cap, "?");
}

/* "[1, 2]" for flat index i of a shape. */
static void xrt__index_format(const xrt_shape *sh, size_t i, char *buf,
                              size_t cap) {
  int64_t idx[XRT_MAX_RANK];
  for (int32_t d = sh->rank - 1; d >= 0; d--) {
    int64_t n = sh->dims[d] ? sh->dims[d] : 1;
    idx[d] = (int64_t)i % n;
    i /= (size_t)n;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int32_t d = 0; d < sh->rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, d ? ", %" PRId64 : "%" PRId64,
                          idx[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

typedef enum { XRT__CHECK_EQ, XRT__CHECK_ALMOST, XRT__CHECK_CLOSE,
               XRT__CHECK_LEGACY_EQ } xrt__check_kind;

typedef struct xrt__check_params {
  xrt__check_kind kind;
  double tolerance;
  uint64_t min_ulp, max_ulp;
} xrt__check_params;

/* IEEE equality, as the reference interpreter's expect_eq uses. */
static bool xrt__scalar_eq(const xrt__scalar *a, const xrt__scalar *b) {
  switch (a->klass) {
  case XRT__K_PRED: case XRT__K_SINT: return a->i == b->i;
  case XRT__K_UINT: return a->u == b->u;
  case XRT__K_FLOAT: return a->re == b->re;
  case XRT__K_COMPLEX: return a->re == b->re && a->im == b->im;
  }
  return false;
}

/* The reference interpreter's approximate equality of two floats. */
static bool xrt__float_almost(double f, double g, double tol) {
  if (f == g) return true;
  if (f != f || g != g) return (f != f) == (g != g);
  bool f_special = isinf(f) || f == 0, g_special = isinf(g) || g == 0;
  if ((f_special || g_special) && f != 0 && g != 0) return false;
  if (signbit(f) != signbit(g)) return false;
  return fabs(f - g) <= tol;
}

/* Magnitude bits, sign, nan and inf of a float pattern of type t. */
static void xrt__float_parts(xrt_dtype t, uint64_t bits, uint64_t *mag,
                             bool *neg, bool *nan, bool *inf) {
  xrt_minifloat_format mf;
  if (xrt_minifloat_format_of(t, &mf)) {
    int mw = mf.ebits + mf.mbits;
    double d = xrt_minifloat_to_f64(t, (uint8_t)bits);
    *neg = mf.kind != XRT_MINIFLOAT_E8M0 && ((bits >> mw) & 1u);
    *mag = mf.kind == XRT_MINIFLOAT_E8M0 ? bits : bits & ((1u << mw) - 1u);
    *nan = isnan(d);
    *inf = isinf(d);
    return;
  }
  int w = xrt_dtype_bits(t == XRT_C64 ? XRT_F32 : t == XRT_C128 ? XRT_F64 : t);
  int ebits = w == 64 ? 11 : w == 32 ? 8 : t == XRT_BF16 ? 8 : 5;
  int mbits = w - 1 - ebits;
  uint64_t sign = 1ull << (w - 1);
  *neg = (bits & sign) != 0;
  *mag = bits & (sign - 1);
  uint64_t emax = ((1ull << ebits) - 1) << mbits;
  *nan = (*mag & emax) == emax && (*mag & ((1ull << mbits) - 1));
  *inf = *mag == emax;
}

/* ULP distance as the reference interpreter's expect_close defines it. */
static uint64_t xrt__ulp_diff(xrt_dtype t, uint64_t f, uint64_t g) {
  if (f == g) return 0;
  uint64_t a, b;
  bool fn, gn, fnan, gnan, finf, ginf;
  xrt__float_parts(t, f, &a, &fn, &fnan, &finf);
  xrt__float_parts(t, g, &b, &gn, &gnan, &ginf);
  if (!fnan && !gnan && !finf && !ginf)
    return fn != gn ? a + b : (a > b ? a - b : b - a);
  if (fnan && gnan) return 0;
  return UINT64_MAX;
}

static bool xrt__check_element(xrt_dtype t, const xrt__check_params *p,
                               const xrt__scalar *a, const xrt__scalar *b,
                               uint64_t *ulp) {
  bool fp = a->klass == XRT__K_FLOAT || a->klass == XRT__K_COMPLEX;
  if (p->kind == XRT__CHECK_CLOSE && fp) {
    *ulp = xrt__ulp_diff(t, a->bits, b->bits);
    if (a->klass == XRT__K_COMPLEX) {
      uint64_t u2 = xrt__ulp_diff(t, a->bits_im, b->bits_im);
      if (u2 > *ulp) *ulp = u2;
    }
    return *ulp >= p->min_ulp && *ulp <= p->max_ulp;
  }
  if ((p->kind == XRT__CHECK_ALMOST || p->kind == XRT__CHECK_LEGACY_EQ) && fp)
    return xrt__float_almost(a->re, b->re, p->tolerance) &&
           (a->klass != XRT__K_COMPLEX ||
            xrt__float_almost(a->im, b->im, p->tolerance));
  return xrt__scalar_eq(a, b);
}

static xrt_status xrt__check_run(xrt_host_call *call,
                                 const xrt__check_params *p) {
  const xrt_ir_loc *l = &call->op->loc;
  if (call->num_inputs != 2)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s:%d:%d: %s takes "
                              "2 operands", l->file, (int)l->line, (int)l->col,
                              call->target);
  const xrt_host_tensor *x = &call->inputs[0], *y = &call->inputs[1];
  if (!xrt__shape_equal(&x->shape, &y->shape))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: "
                              "operand types differ", l->file, (int)l->line,
                              (int)l->col, call->target);
  xrt_dtype t = x->shape.dtype;
  if (xrt__dtype_class(t) == XRT__K_NONE)
    return xrt_host_call_fail(call, XRT_UNIMPLEMENTED, "%s:%d:%d: %s does not "
                              "support %s yet", l->file, (int)l->line,
                              (int)l->col, call->target, xrt_dtype_name(t));
  size_t n = (size_t)xrt_shape_numel(&x->shape);
  for (size_t i = 0; i < n; i++) {
    xrt__scalar a, b;
    uint64_t ulp = 0;
    xrt__scalar_read(t, x->data, i, &a);
    xrt__scalar_read(t, y->data, i, &b);
    if (xrt__check_element(t, p, &a, &b, &ulp)) continue;
    char sa[96], sb[96], si[128], extra[64] = "";
    xrt__scalar_format(&a, sa, sizeof sa);
    xrt__scalar_format(&b, sb, sizeof sb);
    xrt__index_format(&x->shape, i, si, sizeof si);
    if (p->kind == XRT__CHECK_CLOSE)
      snprintf(extra, sizeof extra, " (%" PRIu64 " ULP apart, allowed %" PRIu64
               "..%" PRIu64 ")", ulp, p->min_ulp, p->max_ulp);
    else if (p->kind == XRT__CHECK_ALMOST)
      snprintf(extra, sizeof extra, " (tolerance %g)", p->tolerance);
    return xrt_host_call_fail(call, XRT_CHECK_FAILED, "%s:%d:%d: %s failed at "
                              "element %s: actual %s, expected %s%s", l->file,
                              (int)l->line, (int)l->col, call->target, si, sa,
                              sb, extra);
  }
  return XRT_OK;
}

/* ---- the numeric attributes of the check ops ---- */

static const char *xrt__attr_kind_name(int kind) {
  static const char *const names[] = {"a unit", "an integer", "a float",
                                      "a bool", "a string", "an enum",
                                      "an integer list", "a dense",
                                      "a type", "a symbol", "a list",
                                      "a dictionary"};
  return kind >= 0 && kind < (int)XRT__ARRAY_SIZE(names) ? names[kind] : "?";
}

/* What a, which should be a number in a range, is instead ("-3", "nan",
 * "a string attribute"), into buf. */
static const char *xrt__attr_got(const xrt_ir_attr *a, char *buf, size_t cap) {
  if (a->kind == XRT_ATTR_INT) snprintf(buf, cap, "%" PRId64, a->i);
  else if (a->kind == XRT_ATTR_FLOAT)
    for (int digits = 6; digits <= 17; digits++) { /* the shortest exact */
      snprintf(buf, cap, "%.*g", digits, a->f);
      if (a->f != a->f || strtod(buf, NULL) == a->f) break;
    }
  else snprintf(buf, cap, "%s attribute", xrt__attr_kind_name(a->kind));
  return buf;
}

/* An optional integer attribute in [0, INT64_MAX] (absent: *out = dflt). */
static bool xrt__check_count_attr(const xrt_ir_op *op, const char *name,
                                  int64_t dflt, int64_t *out, char *msg,
                                  size_t cap) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  *out = dflt;
  if (!a) return true;
  if (a->kind == XRT_ATTR_INT && a->i >= 0) {
    *out = a->i;
    return true;
  }
  char got[64];
  snprintf(msg, cap, "%s must be an integer in [0, %" PRId64 "], got %s", name,
           INT64_MAX, xrt__attr_got(a, got, sizeof got));
  return false;
}

/* check.expect_almost_eq's tolerance: a finite number >= 0 (integers are
 * numbers too); check.expect_close's min/max_ulp_difference: integers in
 * [0, INT64_MAX], min <= max; check.expect_serialized_eq's iter: an
 * integer in [0, INT64_MAX].  Other targets have no numeric attributes.
 * False with the attribute, its range and what it is instead in msg. */
static bool xrt__check_attrs_ok(const xrt_ir_op *op, const char *target,
                                size_t n, char *msg, size_t cap) {
  bool ok = true;
#define XRT__IS(name) (n == sizeof name - 1 && !memcmp(target, name, n))
  if (XRT__IS("check.expect_almost_eq")) {
    const xrt_ir_attr *a = xrt_ir_op_attr(op, "tolerance");
    double f = !a ? 0 : a->kind == XRT_ATTR_FLOAT ? a->f
                      : a->kind == XRT_ATTR_INT ? (double)a->i : NAN;
    ok = f >= 0 && f <= DBL_MAX; /* false for NaN */
    char got[64];
    if (!ok)
      snprintf(msg, cap, "tolerance must be a finite number >= 0, got %s",
               xrt__attr_got(a, got, sizeof got));
  } else if (XRT__IS("check.expect_close")) {
    int64_t lo = 0, hi = 0;
    ok = xrt__check_count_attr(op, "min_ulp_difference", 0, &lo, msg, cap) &&
         xrt__check_count_attr(op, "max_ulp_difference", 3, &hi, msg, cap);
    if (ok && lo > hi) {
      ok = false;
      snprintf(msg, cap, "min_ulp_difference must be in [0, "
               "max_ulp_difference = %" PRId64 "], got %" PRId64, hi, lo);
    }
  } else if (XRT__IS("check.expect_serialized_eq")) {
    int64_t it;
    ok = xrt__check_count_attr(op, "iter", 0, &it, msg, cap);
  }
#undef XRT__IS
  return ok;
}

/* INVALID_ARGUMENT located at the op, naming the op, the attribute and its
 * range, or XRT_OK.  The verifier calls this for every custom_call (so
 * every input form: check.* ops, custom_call @check.*, bytecode), and the
 * check functions check again before they convert a value. */
XRT__PRIVATE xrt_status xrt__check_attrs_verify(const xrt_ir_op *op,
                                                const char *target, size_t n) {
  char msg[256];
  if (xrt__check_attrs_ok(op, target, n, msg, sizeof msg)) return XRT_OK;
  const xrt_ir_loc *l = &op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %.*s: %s",
                   l->file ? l->file : "<input>", (int)l->line, (int)l->col,
                   (int)n, target, msg);
}

static double xrt__attr_number(const xrt_ir_op *op, const char *name,
                               double dflt) {
  const xrt_ir_attr *a = op ? xrt_ir_op_attr(op, name) : NULL;
  if (!a) return dflt;
  if (a->kind == XRT_ATTR_FLOAT) return a->f;
  if (a->kind == XRT_ATTR_INT) return (double)a->i;
  return dflt;
}

static xrt_status xrt__check_eq_fn(void *user, xrt_host_call *call) {
  xrt__check_params p = {(xrt__check_kind)(intptr_t)user, 1e-3, 0, 3};
  /* the verifier checked the attributes: again here, before the
   * conversions, for ops that did not come through it */
  char msg[256];
  const xrt_ir_loc *l = call->op ? &call->op->loc : NULL;
  if (l && call->target &&
      !xrt__check_attrs_ok(call->op, call->target, strlen(call->target), msg,
                           sizeof msg))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s",
                              l->file ? l->file : "<input>", (int)l->line,
                              (int)l->col, call->target, msg);
  if (p.kind == XRT__CHECK_ALMOST)
    p.tolerance = xrt__attr_number(call->op, "tolerance", 1e-3);
  if (p.kind == XRT__CHECK_LEGACY_EQ) p.tolerance = 1e-4;
  if (p.kind == XRT__CHECK_CLOSE) {
    p.min_ulp = (uint64_t)xrt__attr_number(call->op, "min_ulp_difference", 0);
    p.max_ulp = (uint64_t)xrt__attr_number(call->op, "max_ulp_difference", 3);
  }
  return xrt__check_run(call, &p);
}

XRT__PRIVATE xrt_status xrt__host_register_builtins(xrt__client *c) {
  static const struct { const char *name; xrt__check_kind kind; } checks[] = {
      {"check.expect_eq", XRT__CHECK_EQ},
      {"check.expect_almost_eq", XRT__CHECK_ALMOST},
      {"check.expect_close", XRT__CHECK_CLOSE},
      {"check.eq", XRT__CHECK_LEGACY_EQ},
  };
  for (size_t i = 0; i < XRT__ARRAY_SIZE(checks); i++) {
    xrt_status s = xrt__host_register(c, checks[i].name, xrt__check_eq_fn,
                                      (void *)(intptr_t)checks[i].kind);
    if (s) return s;
  }
  return XRT_OK;
}
