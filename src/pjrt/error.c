/*
 * src/pjrt/error.c - PJRT_Errors as xrt statuses and messages, named
 * values as xrt attributes, allocation.
 */
#include "xrt.h"
#include "internal.h"

XPJ_PRIVATE void *xpj_alloc(xrt_allocator al, size_t n) {
  void *p = al.alloc(al.self, n ? n : 1);
  if (p) memset(p, 0, n ? n : 1);
  return p;
}

XPJ_PRIVATE void xpj_free(xrt_allocator al, void *ptr) {
  if (ptr) al.free(al.self, ptr);
}

XPJ_PRIVATE xrt_status xpj_fail(xrt_plugin_error *err, xrt_status code,
                                const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* PJRT's codes are absl's, as xrt's are: the same numbers.  Anything else
 * (0, which an error must not carry, or garbage) is UNKNOWN. */
static xrt_status xpj_status_of(int code) {
  return code >= PJRT_Error_Code_CANCELLED &&
                 code <= PJRT_Error_Code_UNAUTHENTICATED
             ? (xrt_status)code
             : XRT_UNKNOWN;
}

static void xpj_error_destroy(const xpj_plugin *p, PJRT_Error *e) {
  PJRT_Error_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  d.error = e;
  p->fn.PJRT_Error_Destroy(&d);
}

/* The code of e; an error while asking for it is UNKNOWN (and freed). */
static xrt_status xpj_error_code(const xpj_plugin *p, PJRT_Error *e) {
  PJRT_Error_GetCode_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  g.error = e;
  PJRT_Error *again = p->fn.PJRT_Error_GetCode(&g);
  if (again) {
    if (again != e) xpj_error_destroy(p, again);
    return XRT_UNKNOWN;
  }
  return xpj_status_of((int)g.code);
}

XPJ_PRIVATE xrt_status xpj_error(const xpj_plugin *p, PJRT_Error *e,
                                 const char *fn, xrt_plugin_error *err) {
  if (!e) return XRT_OK;
  xrt_status code = xpj_error_code(p, e);
  PJRT_Error_Message_Args m;
  memset(&m, 0, sizeof m);
  m.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  m.error = e;
  p->fn.PJRT_Error_Message(&m);
  size_t n = m.message ? m.message_size : 0;
  if (n > sizeof err->message) n = sizeof err->message; /* it is cut anyway */
  /* (the precision is the placeholder's own length when there is none) */
  xpj_fail(err, code, "plugin '%s': %s: %.*s", p->name, fn,
           n ? (int)n : (int)sizeof "(no message)" - 1,
           n ? m.message : "(no message)");
  xpj_error_destroy(p, e);
  return code;
}

XPJ_PRIVATE int xpj_unimplemented(const xpj_plugin *p, PJRT_Error *e) {
  if (xpj_error_code(p, e) != XRT_UNIMPLEMENTED) return 0;
  xpj_error_destroy(p, e);
  return 1;
}

/* ---- named values -> attributes ---- */

/* Bytes the value of v takes as a string (int64 lists print as
 * "[1, 2, 3]"), with its NUL; 0 for types without strings. */
static size_t xpj_value_chars(const PJRT_NamedValue *v) {
  if (v->type == PJRT_NamedValue_kString) return v->value_size + 1;
  if (v->type != PJRT_NamedValue_kInt64List) return 0;
  size_t n = 3;
  for (size_t i = 0; i < v->value_size; i++)
    n += (size_t)snprintf(NULL, 0, "%lld", (long long)v->int64_array_value[i]) + 2;
  return n;
}

static char *xpj_print_list(char *dst, const PJRT_NamedValue *v) {
  char *s = dst;
  *s++ = '[';
  for (size_t i = 0; i < v->value_size; i++)
    s += sprintf(s, "%s%lld", i ? ", " : "",
                 (long long)v->int64_array_value[i]);
  *s++ = ']';
  *s++ = 0;
  return s;
}

/* Checks one value: what a well-behaved plugin cannot send. */
static const char *xpj_value_bad(const PJRT_NamedValue *v) {
  if (!v->name && v->name_size) return "a NULL name";
  if (v->name_size > 4096) return "a name longer than 4096 bytes";
  if (v->type == PJRT_NamedValue_kString && !v->string_value && v->value_size)
    return "a NULL string";
  if (v->type == PJRT_NamedValue_kInt64List && !v->int64_array_value &&
      v->value_size)
    return "a NULL int64 list";
  if ((v->type == PJRT_NamedValue_kString ||
       v->type == PJRT_NamedValue_kInt64List) && v->value_size > 65536)
    return "a value longer than 65536";
  return NULL;
}

/* Fills one attribute from v, its strings at *pool. */
static void xpj_attr_fill(xrt_attribute *a, const PJRT_NamedValue *v,
                          char **pool) {
  a->name = *pool;
  if (v->name_size) memcpy(*pool, v->name, v->name_size);
  (*pool)[v->name_size] = 0;
  *pool += v->name_size + 1;
  switch (v->type) {
  case PJRT_NamedValue_kInt64:
    a->type = XRT_ATTRIBUTE_INT;
    a->int_value = v->int64_value;
    break;
  case PJRT_NamedValue_kFloat:
    a->type = XRT_ATTRIBUTE_FLOAT;
    a->float_value = (double)v->float_value;
    break;
  case PJRT_NamedValue_kBool:
    a->type = XRT_ATTRIBUTE_BOOL;
    a->bool_value = v->bool_value;
    break;
  case PJRT_NamedValue_kString:
    a->type = XRT_ATTRIBUTE_STRING;
    a->string_value = *pool;
    if (v->value_size) memcpy(*pool, v->string_value, v->value_size);
    (*pool)[v->value_size] = 0;
    *pool += v->value_size + 1;
    break;
  default: /* an int64 list, as text */
    a->type = XRT_ATTRIBUTE_STRING;
    a->string_value = *pool;
    *pool = xpj_print_list(*pool, v);
    break;
  }
}

static int xpj_type_known(int t) {
  return t >= PJRT_NamedValue_kString && t <= PJRT_NamedValue_kBool;
}

XPJ_PRIVATE xrt_status xpj_attrs_copy(const xpj_plugin *p, const char *fn,
                                      const PJRT_NamedValue *v, size_t n,
                                      xpj_attrs *out, xrt_plugin_error *err) {
  memset(out, 0, sizeof *out);
  if (n && !v)
    return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned %zu "
                    "attributes but a NULL array", p->name, fn, n);
  if (n > XPJ_MAX_ATTRIBUTES)
    return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned %zu "
                    "attributes, more than %d", p->name, fn, n,
                    XPJ_MAX_ATTRIBUTES);
  size_t chars = 0, kept = 0;
  for (size_t i = 0; i < n; i++) {
    const char *bad = xpj_value_bad(&v[i]);
    if (bad)
      return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s: attribute %zu "
                      "has %s", p->name, fn, i, bad);
    if (!xpj_type_known((int)v[i].type)) continue; /* a newer type */
    chars += v[i].name_size + 1 + xpj_value_chars(&v[i]);
    kept++;
  }
  if (!kept) return XRT_OK;
  xrt_allocator al = xrt_allocator_system();
  out->a = (xrt_attribute *)xpj_alloc(al, kept * sizeof *out->a);
  out->pool = (char *)xpj_alloc(al, chars);
  if (!out->a || !out->pool) {
    xpj_attrs_free(out);
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of "
                    "memory copying the attributes of %s", p->name, fn);
  }
  char *pool = out->pool;
  for (size_t i = 0; i < n; i++)
    if (xpj_type_known((int)v[i].type))
      xpj_attr_fill(&out->a[out->n++], &v[i], &pool);
  return XRT_OK;
}

XPJ_PRIVATE void xpj_attrs_free(xpj_attrs *a) {
  xrt_allocator al = xrt_allocator_system();
  xpj_free(al, a->a);
  xpj_free(al, a->pool);
  memset(a, 0, sizeof *a);
}
