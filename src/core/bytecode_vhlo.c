/*
 * src/core/bytecode_vhlo.c - portable artifacts, part 2: VHLO, StableHLO's
 * versioned serialization dialect (openxla/stablehlo: VhloBytecode.cpp for
 * the attribute and type codes, VhloOps.td for the ops of each version).
 * Attributes and types are decoded from their codes; each op of any
 * version from 0.9.0 is written as the StableHLO op it upgrades to, in
 * MLIR's generic syntax, with StableHLO's attribute spellings and without
 * the attributes VHLO spells out but StableHLO leaves at their default
 * (what StableHLO's own deserializer does).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "bytecode.h"

/* The newest VHLO version this reader knows: artifacts from a newer
 * StableHLO are refused by name and version. */
XRT__PRIVATE const char *xrt__vhlo_version(void) { return "1.20.0"; }

/* ---------------------------------------------------------------------
 * Types (VhloBytecode.cpp's TypeCode)
 * ------------------------------------------------------------------- */

/* Codes of the types without a payload, and what they are. */
static const struct {
  uint8_t code;
  uint8_t kind; /* xrt__bck */
  uint8_t bits, sub;
  const char *name;
} xrt__vhlo_simple_types[] = {
    {0, XRT__BC_T_INT, 1, 0, "i1"},          {2, XRT__BC_T_FLOAT, 16, 0, "bf16"},
    {3, XRT__BC_T_FLOAT, 16, 0, "f16"},      {4, XRT__BC_T_FLOAT, 32, 0, "f32"},
    {5, XRT__BC_T_FLOAT, 64, 0, "f64"},      {6, XRT__BC_T_FLOAT, 8, 0, "f8E4M3FN"},
    {7, XRT__BC_T_FLOAT, 8, 0, "f8E5M2"},    {9, XRT__BC_T_INDEX, 64, 0, "index"},
    {10, XRT__BC_T_INT, 4, 0, "i4"},         {11, XRT__BC_T_INT, 8, 0, "i8"},
    {12, XRT__BC_T_INT, 16, 0, "i16"},       {13, XRT__BC_T_INT, 32, 0, "i32"},
    {14, XRT__BC_T_INT, 64, 0, "i64"},       {15, XRT__BC_T_INT, 4, 2, "ui4"},
    {16, XRT__BC_T_INT, 8, 2, "ui8"},        {17, XRT__BC_T_INT, 16, 2, "ui16"},
    {18, XRT__BC_T_INT, 32, 2, "ui32"},      {19, XRT__BC_T_INT, 64, 2, "ui64"},
    {22, XRT__BC_T_TOKEN, 0, 0, "token"},    {26, XRT__BC_T_WITNESS, 0, 0, "witness"},
    {27, XRT__BC_T_FLOAT, 8, 0, "f8E4M3FNUZ"}, {28, XRT__BC_T_FLOAT, 8, 0, "f8E5M2FNUZ"},
    {29, XRT__BC_T_FLOAT, 8, 0, "f8E4M3B11FNUZ"}, {31, XRT__BC_T_INT, 2, 0, "i2"},
    {32, XRT__BC_T_INT, 2, 2, "ui2"},        {33, XRT__BC_T_NONE, 0, 0, "none"},
    {34, XRT__BC_T_FLOAT, 19, 0, "tf32"},    {35, XRT__BC_T_FLOAT, 8, 0, "f8E4M3"},
    {36, XRT__BC_T_FLOAT, 8, 0, "f8E3M4"},   {37, XRT__BC_T_FLOAT, 4, 0, "f4E2M1FN"},
    {38, XRT__BC_T_FLOAT, 6, 0, "f6E2M3FN"}, {39, XRT__BC_T_FLOAT, 6, 0, "f6E3M2FN"},
    {40, XRT__BC_T_FLOAT, 8, 0, "f8E8M0FNU"},
};

static const int64_t *xrt__vhlo_svarints(xrt__bc *bc, xrt__bcur *c, int32_t *n) {
  uint64_t k = xrt__bc_count(bc, c, 1);
  int64_t *v = xrt__bc_alloc(bc, (size_t)(k + 1) * sizeof *v);
  for (uint64_t i = 0; i < k; i++) v[i] = xrt__bc_svarint(bc, c);
  *n = (int32_t)k;
  return v;
}

/* A type that must be a scalar (of a quantized type, a complex...). */
static const xrt__bcv *xrt__vhlo_scalar(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  const xrt__bcv *t = xrt__bc_type(bc, c);
  if (t->kind != XRT__BC_T_INT && t->kind != XRT__BC_T_FLOAT)
    xrt__bc_fail(bc, at, "expected an integer or floating-point type");
  return t;
}

/* UniformQuantized[PerAxis]V1Type: flags, storage, expressed, [axis],
 * scale(s), zero point(s), storage range. */
static const xrt__bcv *xrt__vhlo_quant(xrt__bc *bc, xrt__bcur *c, bool per_axis) {
  xrt__bcv *v = xrt__bc_new(bc, XRT__BC_T_QUANT);
  v->j = (int64_t)xrt__bc_varint(bc, c);
  v->t = xrt__vhlo_scalar(bc, c);
  v->a = xrt__vhlo_scalar(bc, c);
  double *f;
  int64_t *zp;
  if (!per_axis) {
    f = xrt__bc_alloc(bc, sizeof *f);
    zp = xrt__bc_alloc(bc, sizeof *zp);
    uint64_t bits = xrt__bc_apint(bc, c, 64);
    memcpy(f, &bits, sizeof *f);
    zp[0] = xrt__bc_svarint(bc, c);
    v->lo = xrt__bc_svarint(bc, c);
    v->hi = xrt__bc_svarint(bc, c);
    v->i = -1;
    v->n = 1;
  } else {
    v->i = (int64_t)(xrt__bc_varint(bc, c) & 0x7fffffff);
    v->lo = xrt__bc_svarint(bc, c);
    v->hi = xrt__bc_svarint(bc, c);
    uint64_t k = xrt__bc_count(bc, c, 1);
    f = xrt__bc_alloc(bc, (size_t)(k + 1) * sizeof *f);
    for (uint64_t i = 0; i < k; i++) {
      uint64_t bits = xrt__bc_apint(bc, c, 64);
      memcpy(&f[i], &bits, sizeof *f);
    }
    const uint8_t *at = c->p;
    int32_t nz;
    zp = (int64_t *)xrt__vhlo_svarints(bc, c, &nz);
    if ((uint64_t)nz != k)
      xrt__bc_fail(bc, at, "%d zero points for %d scales", (int)nz, (int)k);
    v->n = (int32_t)k;
  }
  v->f = f;
  v->zp = zp;
  return v;
}

XRT__PRIVATE int xrt__vhlo_type_code(const char *name) {
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__vhlo_simple_types); i++)
    if (!strcmp(xrt__vhlo_simple_types[i].name, name))
      return xrt__vhlo_simple_types[i].code;
  return -1;
}

XRT__PRIVATE const xrt__bcv *xrt__vhlo_read_type(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  uint64_t code = xrt__bc_varint(bc, c);
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__vhlo_simple_types); i++) {
    if (xrt__vhlo_simple_types[i].code != code) continue;
    xrt__bcv *v = xrt__bc_new(bc, (xrt__bck)xrt__vhlo_simple_types[i].kind);
    v->i = xrt__vhlo_simple_types[i].bits;
    v->sub = xrt__vhlo_simple_types[i].sub;
    v->s = xrt__vhlo_simple_types[i].name;
    return v;
  }
  xrt__bcv *v;
  switch (code) {
  case XRT__VT_COMPLEX:
    v = xrt__bc_new(bc, XRT__BC_T_COMPLEX);
    v->t = xrt__vhlo_scalar(bc, c);
    return v;
  case XRT__VT_FUNCTION: { /* inputs, outputs */
    int32_t ni, nr;
    const xrt__bcv **in = xrt__bc_list(bc, c, true, &ni);
    const xrt__bcv **out = xrt__bc_list(bc, c, true, &nr);
    const xrt__bcv **kids = xrt__bc_alloc(bc, ((size_t)ni + (size_t)nr + 1) *
                                                  sizeof *kids);
    memcpy(kids, in, (size_t)ni * sizeof *kids);
    memcpy(kids + ni, out, (size_t)nr * sizeof *kids);
    v = xrt__bc_new(bc, XRT__BC_T_FUNC);
    v->kids = kids;
    v->i = ni;
    v->n = ni + nr;
    return v;
  }
  case XRT__VT_RANKED_TENSOR: case XRT__VT_RANKED_TENSOR_ENC:
    v = xrt__bc_new(bc, XRT__BC_T_TENSOR);
    if (code == XRT__VT_RANKED_TENSOR_ENC) v->a = xrt__bc_attr(bc, c);
    v->dims = xrt__vhlo_svarints(bc, c, &v->n);
    v->t = xrt__bc_type(bc, c);
    return v;
  case XRT__VT_TUPLE: case XRT__VT_FUTURE: /* types */
    v = xrt__bc_new(bc, code == XRT__VT_TUPLE ? XRT__BC_T_TUPLE : XRT__BC_T_FUTURE);
    v->kids = xrt__bc_list(bc, c, true, &v->n);
    return v;
  case XRT__VT_QUANT: case XRT__VT_QUANT_AXIS:
    return xrt__vhlo_quant(bc, c, code == XRT__VT_QUANT_AXIS);
  case XRT__VT_UNRANKED_TENSOR:
    v = xrt__bc_new(bc, XRT__BC_T_UNRANKED);
    v->t = xrt__bc_type(bc, c);
    return v;
  case XRT__VT_RANKED_BUFFER:
    v = xrt__bc_new(bc, XRT__BC_T_BUFFER);
    v->dims = xrt__vhlo_svarints(bc, c, &v->n);
    v->t = xrt__bc_type(bc, c);
    return v;
  default:
    xrt__bc_fail(bc, at, "unknown VHLO type code %" PRIu64, code);
  }
}

/* ---------------------------------------------------------------------
 * Attributes (VhloBytecode.cpp's AttributeCode)
 * ------------------------------------------------------------------- */

/* The values of VHLO's enums, by xrt__bc_enum (VhloEnums.td). */
XRT__PRIVATE const char *const *xrt__vhlo_enum_names(int e, size_t *n) {
  static const char *const dir[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static const char *const cmp[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED",
                                    "UNSIGNED"};
  static const char *const api[] = {
      "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
      "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
      "API_VERSION_TYPED_FFI"};
  static const char *const fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  static const char *const prec[] = {"DEFAULT", "HIGH", "HIGHEST"};
  static const char *const alg[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  static const char *const dist[] = {"INVALID", "UNIFORM", "NORMAL"};
  static const char *const tr[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE",
                                   "TRANSPOSE", "ADJOINT"};
  static const char *const mode[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};
  static const struct {
    const char *const *v;
    size_t n;
  } t[] = {{dir, 6}, {cmp, 5}, {api, 5}, {fft, 4}, {prec, 3},
           {alg, 3}, {dist, 3}, {tr, 4}, {mode, 3}};
  *n = t[e].n;
  return t[e].v;
}

static const xrt__bcv *xrt__vhlo_enum(xrt__bc *bc, xrt__bcur *c, int e) {
  const uint8_t *at = c->p;
  uint64_t v = xrt__bc_varint(bc, c);
  size_t n;
  xrt__vhlo_enum_names(e, &n);
  if (v >= n || (e == XRT__BCE_RNG_DISTRIBUTION && v == 0))
    xrt__bc_fail(bc, at, "enum value %" PRIu64 " out of range", v);
  xrt__bcv *r = xrt__bc_new(bc, XRT__BC_A_ENUM);
  r->sub = (uint8_t)e;
  r->i = (int64_t)v;
  return r;
}

/* The bit width of a scalar type's values (index: 64). */
static int xrt__vhlo_bits(xrt__bc *bc, const uint8_t *at, const xrt__bcv *t) {
  if (t->kind == XRT__BC_T_INT || t->kind == XRT__BC_T_FLOAT ||
      t->kind == XRT__BC_T_INDEX)
    return (int)t->i;
  xrt__bc_fail(bc, at, "a number of a non-scalar type");
}

static const xrt__bcv *xrt__vhlo_number(xrt__bc *bc, xrt__bcur *c, bool flt) {
  xrt__bcv *v = xrt__bc_new(bc, flt ? XRT__BC_A_FLOAT : XRT__BC_A_INT);
  const uint8_t *at = c->p;
  v->t = xrt__bc_type(bc, c);
  int bits = xrt__vhlo_bits(bc, at, v->t);
  if (flt != (v->t->kind == XRT__BC_T_FLOAT))
    xrt__bc_fail(bc, at, "%s attribute of type %s", flt ? "a float" : "an integer",
                 v->t->s ? v->t->s : "?");
  v->u = xrt__bc_apint(bc, c, bits);
  if (bits < 64) v->u &= ((uint64_t)1 << bits) - 1;
  v->i = (int64_t)v->u;
  if (!flt && v->t->sub != 2 && bits < 64 && ((v->u >> (bits - 1)) & 1))
    v->i = (int64_t)(v->u | (~(uint64_t)0 << bits));
  return v;
}

/* TensorV1Attr: type, blob; i1 tensors come packed eight to a byte. */
static const xrt__bcv *xrt__vhlo_tensor(xrt__bc *bc, xrt__bcur *c) {
  xrt__bcv *v = xrt__bc_new(bc, XRT__BC_A_TENSOR);
  const uint8_t *at = c->p;
  v->t = xrt__bc_type(bc, c);
  if (v->t->kind != XRT__BC_T_TENSOR) xrt__bc_fail(bc, at, "a tensor attribute of "
                                                   "a non-tensor type");
  size_t len;
  const uint8_t *blob = xrt__bc_blob(bc, c, &len);
  v->s = (const char *)blob;
  v->len = len;
  const xrt__bcv *e = v->t->t;
  if (e->kind != XRT__BC_T_INT || e->i != 1) return v;
  uint64_t n = 1;
  for (int32_t i = 0; i < v->t->n; i++) {
    if (v->t->dims[i] < 0) xrt__bc_fail(bc, at, "a tensor attribute of dynamic shape");
    if (v->t->dims[i] && n > (uint64_t)bc->size * 8 / (uint64_t)v->t->dims[i] + 1)
      xrt__bc_fail(bc, at, "tensor attribute too large for its data");
    n *= (uint64_t)v->t->dims[i];
  }
  uint64_t packed = (n + 7) / 8;
  uint8_t *u;
  if (len == packed && len != n) { /* unpack */
    u = xrt__bc_alloc(bc, (size_t)n + 1);
    for (uint64_t i = 0; i < n; i++) u[i] = (blob[i / 8] >> (i % 8)) & 1;
    len = (size_t)n;
  } else {
    u = xrt__bc_alloc(bc, len + 1);
    for (size_t i = 0; i < len; i++) u[i] = blob[i] != 0;
  }
  v->s = (const char *)u;
  v->len = len;
  return v;
}

XRT__PRIVATE const xrt__bcv *xrt__vhlo_read_attr(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  uint64_t code = xrt__bc_varint(bc, c);
  xrt__bcv *v;
  switch (code) {
  case XRT__VA_ARRAY:
    v = xrt__bc_new(bc, XRT__BC_A_ARRAY);
    v->kids = xrt__bc_list(bc, c, false, &v->n);
    return v;
  case XRT__VA_BOOL: {
    uint64_t b = xrt__bc_varint(bc, c);
    if (b > 1) xrt__bc_fail(bc, at, "boolean value %" PRIu64, b);
    v = xrt__bc_new(bc, XRT__BC_A_BOOL);
    v->i = (int64_t)b;
    return v;
  }
  case XRT__VA_COMPARISON_DIRECTION: return xrt__vhlo_enum(bc, c, XRT__BCE_COMPARISON_DIRECTION);
  case XRT__VA_COMPARISON_TYPE: return xrt__vhlo_enum(bc, c, XRT__BCE_COMPARISON_TYPE);
  case XRT__VA_API_VERSION: return xrt__vhlo_enum(bc, c, XRT__BCE_API_VERSION);
  case XRT__VA_DICT: { /* (name, value) pairs */
    uint64_t k = xrt__bc_count(bc, c, 2);
    const xrt__bcv **kids = xrt__bc_alloc(bc, (size_t)(2 * k + 1) * sizeof *kids);
    for (uint64_t i = 0; i < 2 * k; i++) kids[i] = xrt__bc_attr(bc, c);
    v = xrt__bc_new(bc, XRT__BC_A_DICT);
    v->kids = kids;
    v->n = (int32_t)k;
    for (uint64_t i = 0; i < k; i++)
      if (kids[2 * i]->kind != XRT__BC_A_STRING)
        xrt__bc_fail(bc, at, "a dictionary key that is not a string");
    return v;
  }
  case XRT__VA_FFT_TYPE: return xrt__vhlo_enum(bc, c, XRT__BCE_FFT_TYPE);
  case XRT__VA_FLOAT: case XRT__VA_INTEGER:
    return xrt__vhlo_number(bc, c, code == XRT__VA_FLOAT);
  case XRT__VA_OUTPUT_OPERAND_ALIAS: {
    v = xrt__bc_new(bc, XRT__BC_A_ALIAS);
    int32_t nz;
    v->dims = xrt__vhlo_svarints(bc, c, &v->n);
    v->i = xrt__bc_svarint(bc, c);
    v->zp = xrt__vhlo_svarints(bc, c, &nz);
    v->j = nz;
    return v;
  }
  case XRT__VA_PRECISION: return xrt__vhlo_enum(bc, c, XRT__BCE_PRECISION);
  case XRT__VA_RNG_ALGORITHM: return xrt__vhlo_enum(bc, c, XRT__BCE_RNG_ALGORITHM);
  case XRT__VA_RNG_DISTRIBUTION: return xrt__vhlo_enum(bc, c, XRT__BCE_RNG_DISTRIBUTION);
  case XRT__VA_STRING:
    v = xrt__bc_new(bc, XRT__BC_A_STRING);
    v->s = xrt__bc_string(bc, c, &v->len);
    return v;
  case XRT__VA_TENSOR: return xrt__vhlo_tensor(bc, c);
  case XRT__VA_TRANSPOSE: return xrt__vhlo_enum(bc, c, XRT__BCE_TRANSPOSE);
  case XRT__VA_TYPE:
    v = xrt__bc_new(bc, XRT__BC_A_TYPE);
    v->t = xrt__bc_type(bc, c);
    return v;
  case XRT__VA_TYPE_EXTENSIONS: /* bounds */
    v = xrt__bc_new(bc, XRT__BC_A_BOUNDS);
    v->dims = xrt__vhlo_svarints(bc, c, &v->n);
    return v;
  case XRT__VA_RESULT_ACCURACY_MODE: return xrt__vhlo_enum(bc, c, XRT__BCE_ACCURACY_MODE);
  case XRT__VA_RESULT_ACCURACY: { /* atol, rtol, ulps, mode */
    v = xrt__bc_new(bc, XRT__BC_A_ACCURACY);
    double *f = xrt__bc_alloc(bc, 2 * sizeof *f);
    for (int i = 0; i < 2; i++) {
      uint64_t bits = xrt__bc_apint(bc, c, 64);
      memcpy(&f[i], &bits, sizeof *f);
    }
    v->f = f;
    v->i = xrt__bc_svarint(bc, c);
    const uint8_t *mat = c->p;
    v->a = xrt__bc_attr(bc, c);
    if (v->a->kind != XRT__BC_A_ENUM || v->a->sub != XRT__BCE_ACCURACY_MODE)
      xrt__bc_fail(bc, mat, "expected a result accuracy mode");
    return v;
  }
  case XRT__VA_SUB_AXIS_INFO: /* pre-size, size */
    v = xrt__bc_new(bc, XRT__BC_A_SUB_AXIS);
    v->i = xrt__bc_svarint(bc, c);
    v->j = xrt__bc_svarint(bc, c);
    return v;
  case XRT__VA_AXIS_REF: /* name, [sub-axis info] */
    v = xrt__bc_new(bc, XRT__BC_A_AXIS_REF);
    v->a = xrt__bc_attr(bc, c);
    if (xrt__bc_varint(bc, c)) v->t = xrt__bc_attr(bc, c);
    return v;
  case XRT__VA_MESH_AXES: /* mesh, axes */
    v = xrt__bc_new(bc, XRT__BC_A_MESH_AXES);
    v->a = xrt__bc_attr(bc, c);
    v->t = xrt__bc_attr(bc, c);
    return v;
  default:
    xrt__bc_fail(bc, at, "unknown VHLO attribute code %" PRIu64, code);
  }
}

/* ---------------------------------------------------------------------
 * StableHLO text: strings, numbers, types, generic attributes
 * ------------------------------------------------------------------- */

static void xrt__vhlo_put_string(xrt__bc *bc, const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  xrt__bc_put(bc, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
      xrt__bc_put(bc, (const char *)&s[i], 1);
    } else {
      char e[3] = {'\\', hex[ch >> 4], hex[ch & 15]};
      xrt__bc_put(bc, e, 3);
    }
  }
  xrt__bc_put(bc, "\"", 1);
}

/* @name, quoted unless it is a plain identifier. */
static void xrt__vhlo_put_symbol(xrt__bc *bc, const char *s, size_t n) {
  bool plain = n > 0 && !(s[0] >= '0' && s[0] <= '9');
  for (size_t i = 0; plain && i < n; i++)
    plain = xrt__is_namechar((unsigned char)s[i]) && s[i] != '-';
  xrt__bc_put(bc, "@", 1);
  if (plain) xrt__bc_put(bc, s, n);
  else xrt__vhlo_put_string(bc, s, n);
}

/* The shortest decimal that reads back as the same value of its width
 * (what the text twin's parser turns into the same double). */
static void xrt__vhlo_put_real(xrt__bc *bc, double d, bool single) {
  char buf[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, d);
    if (single ? (float)strtod(buf, NULL) == (float)d : strtod(buf, NULL) == d)
      break;
  }
  xrt__bc_puts(bc, buf);
  if (!strpbrk(buf, ".e")) xrt__bc_puts(bc, ".0"); /* a float, also untyped */
}

/* A float attribute's value and type: a decimal when finite and of a width
 * the parser reads, else its bits in hex. */
static void xrt__vhlo_put_float(xrt__bc *bc, const xrt__bcv *v) {
  const char *ty = v->t->s;
  double d = 0;
  bool dec = true;
  if (!strcmp(ty, "f64")) memcpy(&d, &v->u, sizeof d);
  else if (!strcmp(ty, "f32")) d = xrt__bits_to_f32((uint32_t)v->u);
  else if (!strcmp(ty, "f16")) d = xrt_f16_to_f32((uint16_t)v->u);
  else if (!strcmp(ty, "bf16")) d = xrt_bf16_to_f32((uint16_t)v->u);
  else dec = false;
  if (dec && isfinite(d)) xrt__vhlo_put_real(bc, d, strcmp(ty, "f64") != 0);
  else xrt__bc_printf(bc, "0x%" PRIX64, v->u);
  xrt__bc_printf(bc, " : %s", ty);
}

static void xrt__vhlo_put_dims(xrt__bc *bc, const int64_t *d, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (d[i] < 0) xrt__bc_put(bc, "?x", 2);
    else xrt__bc_printf(bc, "%" PRId64 "x", d[i]);
  }
}

static void xrt__vhlo_put_attr(xrt__bc *bc, const xrt__bcv *v);

static void xrt__vhlo_put_types(xrt__bc *bc, const xrt__bcv *const *t, int32_t n,
                                bool parens) {
  if (parens) xrt__bc_put(bc, "(", 1);
  for (int32_t i = 0; i < n; i++) {
    if (i) xrt__bc_put(bc, ", ", 2);
    xrt__vhlo_put_type(bc, t[i]);
  }
  if (parens) xrt__bc_put(bc, ")", 1);
}

/* !quant.uniform<i8[<lo:hi>]:f32[:axis], scale[:zp] | {s:zp, ...}> */
static void xrt__vhlo_put_quant(xrt__bc *bc, const xrt__bcv *q) {
  const xrt__bcv *st = q->t;
  bool is_signed = q->j & 1;
  int bits = (int)st->i;
  xrt__bc_printf(bc, "!quant.uniform<%s%d", is_signed ? "i" : "u", bits);
  /* The storage type's own range (any width a file claims: shifts stay
   * within 63 bits; widths outside 1..63 take the full int64 range). */
  int64_t lo = is_signed ? INT64_MIN : 0, hi = INT64_MAX;
  if (bits >= 1 && bits < 64) {
    uint64_t half = (uint64_t)1 << (bits - 1);
    lo = is_signed ? -(int64_t)half : 0;
    hi = (int64_t)(is_signed ? half - 1 : half * 2 - 1);
  }
  if (q->lo != lo || q->hi != hi)
    xrt__bc_printf(bc, "<%" PRId64 ":%" PRId64 ">", q->lo, q->hi);
  xrt__bc_put(bc, ":", 1);
  xrt__vhlo_put_type(bc, q->a);
  if (q->i >= 0) xrt__bc_printf(bc, ":%" PRId64, q->i);
  xrt__bc_put(bc, q->i >= 0 ? ", {" : ", ", q->i >= 0 ? 3 : 2);
  for (int32_t k = 0; k < q->n; k++) {
    if (k) xrt__bc_put(bc, ", ", 2);
    xrt__vhlo_put_real(bc, q->f[k], false);
    if (q->zp[k]) xrt__bc_printf(bc, ":%" PRId64, q->zp[k]);
  }
  xrt__bc_puts(bc, q->i >= 0 ? "}>" : ">");
}

XRT__PRIVATE void xrt__vhlo_put_type(xrt__bc *bc, const xrt__bcv *t) {
  switch ((xrt__bck)t->kind) {
  case XRT__BC_T_INT:
    if (t->i == 1) xrt__bc_puts(bc, "i1");
    else xrt__bc_printf(bc, "%s%d", t->sub == 2 ? "ui" : t->sub == 1 ? "si" : "i",
                        (int)t->i);
    return;
  case XRT__BC_T_FLOAT: xrt__bc_puts(bc, t->s); return;
  case XRT__BC_T_INDEX: xrt__bc_puts(bc, "index"); return;
  case XRT__BC_T_NONE: xrt__bc_puts(bc, "none"); return;
  case XRT__BC_T_COMPLEX:
    xrt__bc_puts(bc, "complex<");
    xrt__vhlo_put_type(bc, t->t);
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_T_TENSOR: case XRT__BC_T_BUFFER:
    xrt__bc_puts(bc, t->kind == XRT__BC_T_TENSOR ? "tensor<" : "memref<");
    xrt__vhlo_put_dims(bc, t->dims, t->n);
    xrt__vhlo_put_type(bc, t->t);
    if (t->a) {
      xrt__bc_put(bc, ", ", 2);
      xrt__vhlo_put_attr(bc, t->a);
    }
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_T_UNRANKED:
    xrt__bc_puts(bc, "tensor<*x");
    xrt__vhlo_put_type(bc, t->t);
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_T_TUPLE: case XRT__BC_T_FUTURE:
    xrt__bc_puts(bc, t->kind == XRT__BC_T_TUPLE ? "tuple<" : "!stablehlo.future<");
    xrt__vhlo_put_types(bc, t->kids, t->n, false);
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_T_FUNC:
    xrt__vhlo_put_types(bc, t->kids, (int32_t)t->i, true);
    xrt__bc_puts(bc, " -> ");
    xrt__vhlo_put_types(bc, t->kids + t->i, t->n - (int32_t)t->i, true);
    return;
  case XRT__BC_T_TOKEN: xrt__bc_puts(bc, "!stablehlo.token"); return;
  case XRT__BC_T_QUANT: xrt__vhlo_put_quant(bc, t); return;
  case XRT__BC_T_WITNESS: xrt__bc_puts(bc, "!shape.witness"); return;
  case XRT__BC_T_TEXT: xrt__bc_put(bc, t->s, t->len); return;
  default: xrt__bc_puts(bc, "none"); return; /* an attribute: cannot be */
  }
}

/* Elements and element size of a tensor attribute's type. */
static uint64_t xrt__vhlo_numel(const xrt__bcv *t) {
  uint64_t n = 1;
  for (int32_t i = 0; i < t->n; i++) {
    if (t->dims[i] < 0) return 0;
    if (t->dims[i] && n > UINT64_MAX / (uint64_t)t->dims[i]) return UINT64_MAX;
    n *= (uint64_t)t->dims[i];
  }
  return n;
}

static size_t xrt__vhlo_esize(const xrt__bcv *e) {
  if (e->kind == XRT__BC_T_COMPLEX) return 2 * xrt__vhlo_esize(e->t);
  if (e->kind == XRT__BC_T_INDEX) return 8;
  int64_t b = e->kind == XRT__BC_T_INT || e->kind == XRT__BC_T_FLOAT ? e->i : 8;
  return b <= 8 ? 1 : (size_t)(b + 7) / 8;
}

/* The bits of one element of scalar type e (size es) at s, unquoted hex
 * (how the parser reads an element's bits); false if e is not a scalar
 * the parser reads so. */
static bool xrt__vhlo_put_bits(xrt__bc *bc, const xrt__bcv *e, const char *s,
                               size_t es) {
  if (e->kind == XRT__BC_T_QUANT) e = e->t; /* its storage integers */
  if (e->kind != XRT__BC_T_INT && e->kind != XRT__BC_T_FLOAT &&
      e->kind != XRT__BC_T_INDEX)
    return false;
  uint64_t x = 0;
  for (size_t k = 0; k < es && k < 8; k++)
    x |= (uint64_t)(unsigned char)s[k] << (8 * k);
  xrt__bc_printf(bc, "0x%" PRIX64, x);
  return true;
}

/* One element of type e at s (len bytes): dense<0x..> or dense<(0x..,
 * 0x..)>, as the text writes a tensor of one element (a splat at rank 0,
 * where the hex string of its bytes would read as no splat). */
static bool xrt__vhlo_put_one(xrt__bc *bc, const xrt__bcv *e, const char *s,
                              size_t len) {
  const xrt__bcv *part = e->kind == XRT__BC_T_COMPLEX ? e->t : e;
  size_t es = e->kind == XRT__BC_T_QUANT ? xrt__vhlo_esize(e->t) : xrt__vhlo_esize(e);
  if (len != es || (part->kind != XRT__BC_T_FLOAT && e->kind == XRT__BC_T_COMPLEX))
    return false;
  size_t mark = bc->out.n;
  xrt__bc_puts(bc, "dense<");
  bool ok;
  if (e->kind == XRT__BC_T_COMPLEX) {
    xrt__bc_puts(bc, "(");
    ok = xrt__vhlo_put_bits(bc, part, s, es / 2);
    xrt__bc_puts(bc, ", ");
    ok = ok && xrt__vhlo_put_bits(bc, part, s + es / 2, es / 2);
    xrt__bc_puts(bc, ")");
  } else {
    ok = xrt__vhlo_put_bits(bc, e, s, es);
  }
  if (!ok) { /* nothing with a newline was written */
    bc->out.n = mark;
    bc->out.s[mark] = 0;
    return false;
  }
  xrt__bc_puts(bc, ">");
  return true;
}

/* dense<"0x..."> : type (dense<> : type when empty; dense<0x..> : type for
 * one element). */
static void xrt__vhlo_put_dense(xrt__bc *bc, const xrt__bcv *t, const char *s,
                                size_t len) {
  static const char hex[] = "0123456789ABCDEF";
  int64_t ref = len >= 64 ? xrt__bc_blob_ref(bc, s, len) : -1;
  if (len && t->kind == XRT__BC_T_TENSOR && xrt__vhlo_numel(t) == 1 &&
      xrt__vhlo_put_one(bc, t->t, s, len)) {
    /* written */
  } else if (!len) {
    xrt__bc_puts(bc, "dense<>");
  } else if (ref >= 0) { /* the parser copies the bytes: no hex */
    xrt__bc_printf(bc, "dense<\"@%" PRId64 "\">", ref);
  } else {
    xrt__bc_puts(bc, "dense<\"0x");
    for (size_t i = 0; i < len; i++) {
      char h[2] = {hex[(unsigned char)s[i] >> 4], hex[(unsigned char)s[i] & 15]};
      xrt__bc_put(bc, h, 2);
    }
    xrt__bc_puts(bc, "\">");
  }
  xrt__bc_puts(bc, " : ");
  xrt__vhlo_put_type(bc, t);
}

static const char *const xrt__vhlo_enum_kind[] = {
    "comparison_direction", "comparison_type", "api_version", "fft_type",
    "precision", "rng_algorithm", "rng_distribution", "transpose",
    "result_accuracy_mode"};

static void xrt__vhlo_put_enum(xrt__bc *bc, const xrt__bcv *v) {
  size_t n;
  const char *const *names = xrt__vhlo_enum_names(v->sub, &n);
  if (v->sub == XRT__BCE_ACCURACY_MODE)
    xrt__bc_printf(bc, "#stablehlo.result_accuracy_mode<%s>", names[v->i]);
  else
    xrt__bc_printf(bc, "#stablehlo<%s %s>", xrt__vhlo_enum_kind[v->sub], names[v->i]);
}

static void xrt__vhlo_put_i64s(xrt__bc *bc, const int64_t *v, int64_t n) {
  xrt__bc_put(bc, "[", 1);
  for (int64_t i = 0; i < n; i++) xrt__bc_printf(bc, "%s%" PRId64, i ? ", " : "", v[i]);
  xrt__bc_put(bc, "]", 1);
}

/* An attribute with StableHLO's spelling of its VHLO form. */
static void xrt__vhlo_put_attr(xrt__bc *bc, const xrt__bcv *v) {
  switch ((xrt__bck)v->kind) {
  case XRT__BC_A_ARRAY:
    xrt__bc_put(bc, "[", 1);
    for (int32_t i = 0; i < v->n; i++) {
      if (i) xrt__bc_put(bc, ", ", 2);
      xrt__vhlo_put_attr(bc, v->kids[i]);
    }
    xrt__bc_put(bc, "]", 1);
    return;
  case XRT__BC_A_DICT:
    xrt__bc_put(bc, "{", 1);
    for (int32_t i = 0; i < v->n; i++) {
      if (i) xrt__bc_put(bc, ", ", 2);
      xrt__vhlo_put_string(bc, v->kids[2 * i]->s, v->kids[2 * i]->len);
      xrt__bc_put(bc, " = ", 3);
      xrt__vhlo_put_attr(bc, v->kids[2 * i + 1]);
    }
    xrt__bc_put(bc, "}", 1);
    return;
  case XRT__BC_A_STRING: xrt__vhlo_put_string(bc, v->s, v->len); return;
  case XRT__BC_A_SYMBOL: xrt__vhlo_put_symbol(bc, v->s, v->len); return;
  case XRT__BC_A_TYPE: xrt__vhlo_put_type(bc, v->t); return;
  case XRT__BC_A_UNIT: xrt__bc_puts(bc, "unit"); return;
  case XRT__BC_A_BOOL: xrt__bc_puts(bc, v->i ? "true" : "false"); return;
  case XRT__BC_A_INT:
    if (v->t->kind == XRT__BC_T_INT && v->t->i == 1) {
      xrt__bc_puts(bc, v->i ? "true" : "false");
      return;
    }
    if (v->t->kind == XRT__BC_T_INT && v->t->sub == 2)
      xrt__bc_printf(bc, "%" PRIu64 " : ", v->u);
    else
      xrt__bc_printf(bc, "%" PRId64 " : ", v->i);
    xrt__vhlo_put_type(bc, v->t);
    return;
  case XRT__BC_A_FLOAT: xrt__vhlo_put_float(bc, v); return;
  case XRT__BC_A_ENUM: xrt__vhlo_put_enum(bc, v); return;
  case XRT__BC_A_TENSOR: case XRT__BC_A_RESOURCE:
    xrt__vhlo_put_dense(bc, v->t, v->s, v->len);
    return;
  case XRT__BC_A_DARRAY: {
    size_t es = xrt__vhlo_esize(v->t);
    xrt__bc_puts(bc, "array<");
    xrt__vhlo_put_type(bc, v->t);
    for (int64_t i = 0; i < v->i && (size_t)(i + 1) * es <= v->len; i++) {
      int64_t x = 0;
      memcpy(&x, v->s + (size_t)i * es, es < 8 ? es : 8);
      if (es < 8 && ((x >> (8 * es - 1)) & 1)) x |= (int64_t)(~(uint64_t)0 << (8 * es));
      xrt__bc_printf(bc, "%s%" PRId64, i ? ", " : ": ", x);
    }
    xrt__bc_puts(bc, ">");
    return;
  }
  case XRT__BC_A_ALIAS:
    xrt__bc_puts(bc, "#stablehlo.output_operand_alias<output_tuple_indices = ");
    xrt__vhlo_put_i64s(bc, v->dims, v->n);
    xrt__bc_printf(bc, ", operand_index = %" PRId64 ", operand_tuple_indices = ", v->i);
    xrt__vhlo_put_i64s(bc, v->zp, v->j);
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_A_BOUNDS:
    xrt__bc_puts(bc, "#stablehlo.bounds<");
    for (int32_t i = 0; i < v->n; i++) {
      if (i) xrt__bc_put(bc, ", ", 2);
      if (v->dims[i] < 0) xrt__bc_put(bc, "?", 1);
      else xrt__bc_printf(bc, "%" PRId64, v->dims[i]);
    }
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_A_ACCURACY:
    xrt__bc_puts(bc, "#stablehlo.result_accuracy<atol = ");
    xrt__vhlo_put_real(bc, v->f[0], false);
    xrt__bc_puts(bc, ", rtol = ");
    xrt__vhlo_put_real(bc, v->f[1], false);
    xrt__bc_printf(bc, ", ulps = %" PRId64 ", mode = ", v->i);
    xrt__vhlo_put_enum(bc, v->a);
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_A_TEXT: xrt__bc_put(bc, v->s, v->len); return;
  case XRT__BC_A_MESH_AXES:
    xrt__bc_puts(bc, "#stablehlo.replica_group_mesh_axes<mesh = ");
    if (v->a->kind == XRT__BC_A_STRING) xrt__vhlo_put_symbol(bc, v->a->s, v->a->len);
    else xrt__vhlo_put_attr(bc, v->a);
    xrt__bc_puts(bc, ", axes = ");
    xrt__vhlo_put_attr(bc, v->t);
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_A_AXIS_REF:
    xrt__bc_puts(bc, "#stablehlo.axis_ref<name = ");
    xrt__vhlo_put_attr(bc, v->a);
    if (v->t) {
      xrt__bc_puts(bc, ", sub_axis_info = ");
      xrt__vhlo_put_attr(bc, v->t);
    }
    xrt__bc_puts(bc, ">");
    return;
  case XRT__BC_A_SUB_AXIS:
    xrt__bc_printf(bc, "(%" PRId64 ")%" PRId64, v->i, v->j);
    return;
  default: xrt__bc_puts(bc, "unit"); return; /* a location or a type */
  }
}

/* ---------------------------------------------------------------------
 * Ops: VHLO op versions as StableHLO ops
 * ------------------------------------------------------------------- */

#define XRT__CONV_PROPS                                                       \
  "batch_group_count feature_group_count input_batch_dimension "              \
  "input_feature_dimension input_spatial_dimensions "                         \
  "kernel_input_feature_dimension kernel_output_feature_dimension "           \
  "kernel_spatial_dimensions lhs_dilation output_batch_dimension "            \
  "output_feature_dimension output_spatial_dimensions "
#define XRT__RA "result_accuracy"

static const xrt__vop xrt__vhlo_ops[] = {
    {"abs_v1", "stablehlo.abs", "0.9.0", "", 0},
    {"add_v1", "stablehlo.add", "0.9.0", "", 0},
    {"after_all_v1", "stablehlo.after_all", "0.9.0", "", 0},
    {"all_gather_v1", "stablehlo.all_gather", "0.9.0",
     "all_gather_dim channel_id replica_groups use_global_device_ids", XRT__VG_CHANNEL},
    {"all_gather_v2", "stablehlo.all_gather", "1.5.0",
     "all_gather_dim channel_id replica_groups use_global_device_ids", XRT__VG_CHANNEL},
    {"all_reduce_v1", "stablehlo.all_reduce", "0.9.0",
     "channel_id replica_groups use_global_device_ids", XRT__VG_CHANNEL},
    {"all_reduce_v2", "stablehlo.all_reduce", "1.5.0",
     "channel_id replica_groups use_global_device_ids", XRT__VG_CHANNEL},
    {"all_to_all_v1", "stablehlo.all_to_all", "0.9.0",
     "channel_id concat_dimension replica_groups split_count split_dimension",
     XRT__VG_CHANNEL},
    {"all_to_all_v2", "stablehlo.all_to_all", "1.5.0",
     "channel_id concat_dimension replica_groups split_count split_dimension",
     XRT__VG_CHANNEL},
    {"and_v1", "stablehlo.and", "0.9.0", "", 0},
    {"async_done_v1", "stablehlo.async_done", "1.15.0", "", 0},
    {"async_start_v1", "stablehlo.async_start", "1.15.0", "", 0},
    {"atan2_v1", "stablehlo.atan2", "0.9.0", "", 0},
    {"batch_norm_grad_v1", "stablehlo.batch_norm_grad", "0.9.0",
     "epsilon feature_index", 0},
    {"batch_norm_inference_v1", "stablehlo.batch_norm_inference", "0.9.0",
     "epsilon feature_index", 0},
    {"batch_norm_training_v1", "stablehlo.batch_norm_training", "0.9.0",
     "epsilon feature_index", 0},
    {"bitcast_convert_v1", "stablehlo.bitcast_convert", "0.9.0", "", 0},
    {"broadcast_in_dim_v1", "stablehlo.broadcast_in_dim", "0.9.0",
     "broadcast_dimensions", 0},
    {"broadcast_v1", "stablehlo.broadcast", "0.9.0", "broadcast_sizes", 0},
    {"call_v1", "func.call", "0.9.0", "callee", 0},
    {"case_v1", "stablehlo.case", "0.9.0", "", 0},
    {"cbrt_v1", "stablehlo.cbrt", "0.9.0", "", 0},
    {"cbrt_v2", "stablehlo.cbrt", "1.10.0", XRT__RA, 0},
    {"ceil_v1", "stablehlo.ceil", "0.9.0", "", 0},
    {"cholesky_v1", "stablehlo.cholesky", "0.9.0", "lower", 0},
    {"clamp_v1", "stablehlo.clamp", "0.9.0", "", 0},
    {"collective_broadcast_v1", "stablehlo.collective_broadcast", "0.16.0",
     "channel_id replica_groups", XRT__VG_CHANNEL},
    {"collective_broadcast_v2", "stablehlo.collective_broadcast", "1.20.0",
     "channel_id has_dynamic_root replica_groups", XRT__VG_CHANNEL},
    {"collective_permute_v1", "stablehlo.collective_permute", "0.9.0",
     "channel_id source_target_pairs", XRT__VG_CHANNEL},
    {"collective_reduce_v1", "stablehlo.collective_reduce", "1.19.0",
     "channel_id has_dynamic_root replica_groups use_global_device_ids",
     XRT__VG_CHANNEL},
    {"compare_v1", "stablehlo.compare", "0.9.0",
     "compare_type comparison_direction", 0},
    {"complex_v1", "stablehlo.complex", "0.9.0", "", 0},
    {"composite_v1", "stablehlo.composite", "0.19.0",
     "composite_attributes decomposition name version", 0},
    {"composite_v2", "stablehlo.composite", "1.14.0",
     "composite_attributes decomposition name version", 0},
    {"concatenate_v1", "stablehlo.concatenate", "0.9.0", "dimension", 0},
    {"constant_v1", "stablehlo.constant", "0.9.0", "value", 0},
    {"convert_v1", "stablehlo.convert", "0.9.0", "", 0},
    {"convolution_v1", "stablehlo.convolution", "0.9.0",
     XRT__CONV_PROPS "padding precision_config rhs_dilation window_reversal "
     "window_strides", XRT__VG_CONV},
    {"cosine_v1", "stablehlo.cosine", "0.9.0", "", 0},
    {"cosine_v2", "stablehlo.cosine", "1.10.0", XRT__RA, 0},
    {"count_leading_zeros_v1", "stablehlo.count_leading_zeros", "0.9.0", "", 0},
    {"create_token_v1", "stablehlo.create_token", "0.9.0", "", 0},
    {"cross-replica-sum_v1", "stablehlo.cross-replica-sum", "0.9.0",
     "replica_groups", 0},
    {"custom_call_v1", "stablehlo.custom_call", "0.9.0",
     "api_version backend_config call_target_name called_computations "
     "has_side_effect operand_layouts output_operand_aliases result_layouts", 0},
    {"custom_call_v2", "stablehlo.custom_call", "1.18.0",
     "api_version backend_config call_target_name called_computations "
     "has_side_effect operand_layouts output_operand_aliases result_layouts "
     "result_tilings", 0},
    {"divide_v1", "stablehlo.divide", "0.9.0", "", 0},
    {"dot_general_v1", "stablehlo.dot_general", "0.9.0",
     "lhs_batching_dimensions lhs_contracting_dimensions precision_config "
     "rhs_batching_dimensions rhs_contracting_dimensions", XRT__VG_DOT},
    {"dot_general_v2", "stablehlo.dot_general", "1.6.0",
     "accumulation_type allow_imprecise_accumulation lhs_batching_dimensions "
     "lhs_component_count lhs_contracting_dimensions lhs_precision_type "
     "num_primitive_operations precision_config rhs_batching_dimensions "
     "rhs_component_count rhs_contracting_dimensions rhs_precision_type",
     XRT__VG_DOT},
    {"dot_v1", "stablehlo.dot", "0.9.0", "precision_config", 0},
    {"dynamic_broadcast_in_dim_v1", "stablehlo.dynamic_broadcast_in_dim",
     "0.9.0", "broadcast_dimensions known_expanding_dimensions "
     "known_nonexpanding_dimensions", 0},
    {"dynamic_conv_v1", "stablehlo.dynamic_conv", "0.9.0",
     XRT__CONV_PROPS "padding precision_config rhs_dilation window_reversal "
     "window_strides", XRT__VG_CONV},
    {"dynamic_conv_v2", "stablehlo.dynamic_conv", "0.20.0",
     XRT__CONV_PROPS "precision_config rhs_dilation window_reversal "
     "window_strides", XRT__VG_CONV},
    {"dynamic_gather_v1", "stablehlo.dynamic_gather", "0.9.0",
     "collapsed_slice_dims index_vector_dim indices_are_sorted offset_dims "
     "start_index_map", XRT__VG_GATHER},
    {"dynamic_gather_v2", "stablehlo.dynamic_gather", "1.1.0",
     "collapsed_slice_dims index_vector_dim indices_are_sorted offset_dims "
     "operand_batching_dims start_index_map start_indices_batching_dims",
     XRT__VG_GATHER},
    {"dynamic_iota_v1", "stablehlo.dynamic_iota", "0.9.0", "iota_dimension", 0},
    {"dynamic_pad_v1", "stablehlo.dynamic_pad", "0.9.0", "", 0},
    {"dynamic_reshape_v1", "stablehlo.dynamic_reshape", "0.9.0", "", 0},
    {"dynamic_slice_v1", "stablehlo.dynamic_slice", "0.9.0", "slice_sizes", 0},
    {"dynamic_update_slice_v1", "stablehlo.dynamic_update_slice", "0.9.0", "", 0},
    {"einsum_v1", "stablehlo.einsum", "0.9.0", "einsum_config", 0},
    {"exponential_minus_one_v1", "stablehlo.exponential_minus_one", "0.9.0", "", 0},
    {"exponential_minus_one_v2", "stablehlo.exponential_minus_one", "1.10.0",
     XRT__RA, 0},
    {"exponential_v1", "stablehlo.exponential", "0.9.0", "", 0},
    {"exponential_v2", "stablehlo.exponential", "1.9.0", XRT__RA, 0},
    {"fft_v1", "stablehlo.fft", "0.9.0", "fft_length fft_type", 0},
    {"floor_v1", "stablehlo.floor", "0.9.0", "", 0},
    {"func_v1", "func.func", "0.9.0",
     "arg_attrs function_type res_attrs sym_name sym_visibility", XRT__VG_FUNC},
    {"gather_v1", "stablehlo.gather", "0.9.0",
     "collapsed_slice_dims index_vector_dim indices_are_sorted offset_dims "
     "slice_sizes start_index_map", XRT__VG_GATHER},
    {"gather_v2", "stablehlo.gather", "1.1.0",
     "collapsed_slice_dims index_vector_dim indices_are_sorted offset_dims "
     "operand_batching_dims slice_sizes start_index_map "
     "start_indices_batching_dims", XRT__VG_GATHER},
    {"get_dimension_size_v1", "stablehlo.get_dimension_size", "0.9.0",
     "dimension", 0},
    {"get_tuple_element_v1", "stablehlo.get_tuple_element", "0.9.0", "index", 0},
    {"if_v1", "stablehlo.if", "0.9.0", "", 0},
    {"imag_v1", "stablehlo.imag", "0.9.0", "", 0},
    {"infeed_v1", "stablehlo.infeed", "0.9.0", "infeed_config layout", 0},
    {"iota_v1", "stablehlo.iota", "0.9.0", "iota_dimension", 0},
    {"is_finite_v1", "stablehlo.is_finite", "0.9.0", "", 0},
    {"log_plus_one_v1", "stablehlo.log_plus_one", "0.9.0", "", 0},
    {"log_plus_one_v2", "stablehlo.log_plus_one", "1.10.0", XRT__RA, 0},
    {"log_v1", "stablehlo.log", "0.9.0", "", 0},
    {"log_v2", "stablehlo.log", "1.10.0", XRT__RA, 0},
    {"logistic_v1", "stablehlo.logistic", "0.9.0", "", 0},
    {"logistic_v2", "stablehlo.logistic", "1.10.0", XRT__RA, 0},
    {"map_v1", "stablehlo.map", "0.9.0", "dimensions", 0},
    {"maximum_v1", "stablehlo.maximum", "0.9.0", "", 0},
    {"minimum_v1", "stablehlo.minimum", "0.9.0", "", 0},
    {"multiply_v1", "stablehlo.multiply", "0.9.0", "", 0},
    {"negate_v1", "stablehlo.negate", "0.9.0", "", 0},
    {"not_v1", "stablehlo.not", "0.9.0", "", 0},
    {"optimization_barrier_v1", "stablehlo.optimization_barrier", "0.9.0", "", 0},
    {"or_v1", "stablehlo.or", "0.9.0", "", 0},
    {"outfeed_v1", "stablehlo.outfeed", "0.9.0", "outfeed_config", 0},
    {"pad_v1", "stablehlo.pad", "0.9.0",
     "edge_padding_high edge_padding_low interior_padding", 0},
    {"partition_id_v1", "stablehlo.partition_id", "0.9.0", "", 0},
    {"popcnt_v1", "stablehlo.popcnt", "0.9.0", "", 0},
    {"power_v1", "stablehlo.power", "0.9.0", "", 0},
    {"real_dynamic_slice_v1", "stablehlo.real_dynamic_slice", "0.9.0", "", 0},
    {"real_v1", "stablehlo.real", "0.9.0", "", 0},
    {"recv_v1", "stablehlo.recv", "0.9.0",
     "channel_id channel_type is_host_transfer", XRT__VG_CHANNEL2},
    {"recv_v2", "stablehlo.recv", "1.12.0",
     "channel_id channel_type is_host_transfer source_target_pairs",
     XRT__VG_CHANNEL2},
    {"reduce_precision_v1", "stablehlo.reduce_precision", "0.9.0",
     "exponent_bits mantissa_bits", 0},
    {"reduce_scatter_v1", "stablehlo.reduce_scatter", "0.9.0",
     "channel_id replica_groups scatter_dimension use_global_device_ids",
     XRT__VG_CHANNEL},
    {"reduce_v1", "stablehlo.reduce", "0.9.0", "dimensions", 0},
    {"reduce_window_v1", "stablehlo.reduce_window", "0.9.0",
     "base_dilations padding window_dilations window_dimensions window_strides",
     0},
    {"remainder_v1", "stablehlo.remainder", "0.9.0", "", 0},
    {"replica_id_v1", "stablehlo.replica_id", "0.9.0", "", 0},
    {"reshape_v1", "stablehlo.reshape", "0.9.0", "", 0},
    {"return_v1", "stablehlo.return", "0.9.0", "", XRT__VG_RETURN},
    {"reverse_v1", "stablehlo.reverse", "0.9.0", "dimensions", 0},
    {"rng_bit_generator_v1", "stablehlo.rng_bit_generator", "0.9.0",
     "rng_algorithm", 0},
    {"rng_v1", "stablehlo.rng", "0.9.0", "rng_distribution", 0},
    {"round_nearest_afz_v1", "stablehlo.round_nearest_afz", "0.9.0", "", 0},
    {"round_nearest_even_v1", "stablehlo.round_nearest_even", "0.9.0", "", 0},
    {"rsqrt_v1", "stablehlo.rsqrt", "0.9.0", "", 0},
    {"rsqrt_v2", "stablehlo.rsqrt", "1.10.0", XRT__RA, 0},
    {"scatter_v1", "stablehlo.scatter", "0.9.0",
     "index_vector_dim indices_are_sorted inserted_window_dims "
     "scatter_dims_to_operand_dims unique_indices update_window_dims",
     XRT__VG_SCATTER},
    {"scatter_v2", "stablehlo.scatter", "1.1.0",
     "index_vector_dim indices_are_sorted input_batching_dims "
     "inserted_window_dims scatter_dims_to_operand_dims "
     "scatter_indices_batching_dims unique_indices update_window_dims",
     XRT__VG_SCATTER},
    {"select_and_scatter_v1", "stablehlo.select_and_scatter", "0.9.0",
     "padding window_dimensions window_strides", 0},
    {"select_v1", "stablehlo.select", "0.9.0", "", 0},
    {"send_v1", "stablehlo.send", "0.9.0",
     "channel_id channel_type is_host_transfer", XRT__VG_CHANNEL2},
    {"send_v2", "stablehlo.send", "1.12.0",
     "channel_id channel_type is_host_transfer source_target_pairs",
     XRT__VG_CHANNEL2},
    {"set_dimension_size_v1", "stablehlo.set_dimension_size", "0.9.0",
     "dimension", 0},
    {"shift_left_v1", "stablehlo.shift_left", "0.9.0", "", 0},
    {"shift_right_arithmetic_v1", "stablehlo.shift_right_arithmetic", "0.9.0",
     "", 0},
    {"shift_right_logical_v1", "stablehlo.shift_right_logical", "0.9.0", "", 0},
    {"sign_v1", "stablehlo.sign", "0.9.0", "", 0},
    {"sine_v1", "stablehlo.sine", "0.9.0", "", 0},
    {"sine_v2", "stablehlo.sine", "1.10.0", XRT__RA, 0},
    {"slice_v1", "stablehlo.slice", "0.9.0", "limit_indices start_indices strides",
     0},
    {"sort_v1", "stablehlo.sort", "0.9.0", "dimension is_stable", 0},
    {"sqrt_v1", "stablehlo.sqrt", "0.9.0", "", 0},
    {"sqrt_v2", "stablehlo.sqrt", "1.10.0", XRT__RA, 0},
    {"subtract_v1", "stablehlo.subtract", "0.9.0", "", 0},
    {"tan_v1", "stablehlo.tan", "1.4.0", "", 0},
    {"tan_v2", "stablehlo.tan", "1.10.0", XRT__RA, 0},
    {"tanh_v1", "stablehlo.tanh", "0.9.0", "", 0},
    {"tanh_v2", "stablehlo.tanh", "1.10.0", XRT__RA, 0},
    {"torch_index_select_v1", "stablehlo.torch_index_select", "0.9.0",
     "batch_dims dim", 0},
    {"transpose_v1", "stablehlo.transpose", "0.9.0", "permutation", 0},
    {"triangular_solve_v1", "stablehlo.triangular_solve", "0.9.0",
     "left_side lower transpose_a unit_diagonal", 0},
    {"tuple_v1", "stablehlo.tuple", "0.9.0", "", 0},
    {"unary_einsum_v1", "stablehlo.unary_einsum", "0.9.0", "einsum_config", 0},
    {"uniform_dequantize_v1", "stablehlo.uniform_dequantize", "0.9.0", "", 0},
    {"uniform_quantize_v1", "stablehlo.uniform_quantize", "0.9.0", "", 0},
    {"while_v1", "stablehlo.while", "0.9.0", "", 0},
    {"xor_v1", "stablehlo.xor", "0.9.0", "", 0},
};

XRT__PRIVATE const xrt__vop *xrt__vhlo_ops_table(size_t *n) {
  *n = XRT__ARRAY_SIZE(xrt__vhlo_ops);
  return xrt__vhlo_ops;
}

XRT__PRIVATE const xrt__vop *xrt__vhlo_op(const char *name) {
  static const xrt__vop module = {"", "builtin.module", "",
                                  "sym_name sym_visibility", 0};
  if (!strcmp(name, "builtin.module")) return &module;
  if (strncmp(name, "vhlo.", 5)) return NULL;
  name += 5;
  size_t lo = 0, hi = XRT__ARRAY_SIZE(xrt__vhlo_ops);
  while (lo < hi) { /* the table is sorted by VHLO name */
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(xrt__vhlo_ops[mid].vhlo, name);
    if (!c) return &xrt__vhlo_ops[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

static const xrt__vrule xrt__vhlo_rules[] = {
    {"stablehlo.triangular_solve", "lower", XRT__VR_KEEP, XRT__VD_NEVER, 0},
    {"stablehlo.sort", "dimension", XRT__VR_KEEP, XRT__VD_MINUS1, 0},
    {NULL, "api_version", XRT__VR_API, XRT__VD_API1, 0},
    {NULL, "arg_attrs", XRT__VR_KEEP, XRT__VD_EMPTY, 'a'},
    {NULL, "backend_config", XRT__VR_KEEP, XRT__VD_EMPTY, 's'},
    {NULL, "base_dilations", XRT__VR_ARRAY, XRT__VD_ONES, 0},
    {NULL, "broadcast_dimensions", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "broadcast_sizes", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "callee", XRT__VR_SYMBOL, XRT__VD_NEVER, 0},
    {NULL, "called_computations", XRT__VR_SYMBOLS, XRT__VD_EMPTY, 'a'},
    {NULL, "compare_type", XRT__VR_KEEP, XRT__VD_ENUM0, 0},
    {NULL, "composite_attributes", XRT__VR_KEEP, XRT__VD_EMPTY, 'd'},
    {NULL, "decomposition", XRT__VR_SYMBOL, XRT__VD_NEVER, 0},
    {NULL, "dimensions", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "edge_padding_high", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "edge_padding_low", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "fft_length", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "has_dynamic_root", XRT__VR_UNIT, XRT__VD_FALSE, 0},
    {NULL, "has_side_effect", XRT__VR_KEEP, XRT__VD_FALSE, 0},
    {NULL, "indices_are_sorted", XRT__VR_KEEP, XRT__VD_FALSE, 0},
    {NULL, "infeed_config", XRT__VR_KEEP, XRT__VD_EMPTY, 's'},
    {NULL, "interior_padding", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "is_host_transfer", XRT__VR_KEEP, XRT__VD_FALSE, 0},
    {NULL, "is_stable", XRT__VR_KEEP, XRT__VD_FALSE, 0},
    {NULL, "known_expanding_dimensions", XRT__VR_ARRAY, XRT__VD_EMPTY, 't'},
    {NULL, "known_nonexpanding_dimensions", XRT__VR_ARRAY, XRT__VD_EMPTY, 't'},
    {NULL, "layout", XRT__VR_KEEP, XRT__VD_EMPTY, 'a'},
    {NULL, "lhs_dilation", XRT__VR_ARRAY, XRT__VD_ONES, 0},
    {NULL, "limit_indices", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "lower", XRT__VR_KEEP, XRT__VD_FALSE, 0},
    {NULL, "operand_layouts", XRT__VR_KEEP, XRT__VD_EMPTY, 'a'},
    {NULL, "outfeed_config", XRT__VR_KEEP, XRT__VD_EMPTY, 's'},
    {NULL, "output_operand_aliases", XRT__VR_KEEP, XRT__VD_EMPTY, 'a'},
    {NULL, "padding", XRT__VR_KEEP, XRT__VD_ZEROS, 0},
    {NULL, "permutation", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "precision_config", XRT__VR_KEEP, XRT__VD_DEFAULTS, 0},
    {NULL, "res_attrs", XRT__VR_KEEP, XRT__VD_EMPTY, 'a'},
    {NULL, "result_accuracy", XRT__VR_KEEP, XRT__VD_ACCURACY, 0},
    {NULL, "result_layouts", XRT__VR_KEEP, XRT__VD_EMPTY, 'a'},
    {NULL, "result_tilings", XRT__VR_KEEP, XRT__VD_EMPTY, 'a'},
    {NULL, "rhs_dilation", XRT__VR_ARRAY, XRT__VD_ONES, 0},
    {NULL, "slice_sizes", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "source_target_pairs", XRT__VR_KEEP, XRT__VD_EMPTY, 't'},
    {NULL, "start_indices", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "strides", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "sym_visibility", XRT__VR_KEEP, XRT__VD_EMPTY, 's'},
    {NULL, "unique_indices", XRT__VR_KEEP, XRT__VD_FALSE, 0},
    {NULL, "use_global_device_ids", XRT__VR_UNIT, XRT__VD_FALSE, 0},
    {NULL, "version", XRT__VR_KEEP, XRT__VD_ZERO, 0},
    {NULL, "window_dilations", XRT__VR_ARRAY, XRT__VD_ONES, 0},
    {NULL, "window_dimensions", XRT__VR_ARRAY, XRT__VD_NEVER, 0},
    {NULL, "window_reversal", XRT__VR_BOOLS, XRT__VD_ZEROS, 0},
    {NULL, "window_strides", XRT__VR_ARRAY, XRT__VD_ONES, 0},
};

XRT__PRIVATE const xrt__vrule *xrt__vhlo_rule(const char *op, const char *name) {
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__vhlo_rules); i++) {
    const xrt__vrule *r = &xrt__vhlo_rules[i];
    if (!strcmp(r->name, name) && (!r->op || !strcmp(r->op, op))) return r;
  }
  return NULL;
}

/* The number of window dimensions of op (reduce_window, select_and_scatter:
 * its window_dimensions; convolution: its spatial dimensions), -1 if it
 * does not say. */
static int64_t xrt__vhlo_ir_window(const xrt_ir_op *op) {
  const xrt_ir_attr *w = xrt_ir_op_attr(op, "window_dimensions");
  if (w) return w->kind == XRT_ATTR_INTS ? w->n : -1;
  const xrt_ir_attr *d = xrt_ir_op_attr(op, "dimension_numbers");
  const xrt_ir_attr *s = d && d->kind == XRT_ATTR_DICT
                             ? xrt_ir_attr_field(d, "input_spatial_dimensions")
                             : NULL;
  return s && s->kind == XRT_ATTR_INTS ? s->n : -1;
}

/* Whether a (an INTS window attribute of op) is all x and as long as the
 * default it stands for (padding: [window, 2]), so that leaving it out
 * hides no malformed one from the verifier. */
static bool xrt__vhlo_ir_all(const xrt_ir_op *op, const xrt_ir_attr *a,
                             int64_t x) {
  if (a->kind != XRT_ATTR_INTS) return false;
  int64_t w = xrt__vhlo_ir_window(op), per = strcmp(a->name, "padding") ? 1 : 2;
  if (w < 0 || a->n != w * per) return false;
  if (a->lit && per == 2 && (a->lit->type.shape.rank != 2 ||
                             a->lit->type.shape.dims[0] != w ||
                             a->lit->type.shape.dims[1] != 2))
    return false;
  if (a->lit && per == 1 && a->lit->type.shape.rank != 1) return false;
  for (int64_t i = 0; i < a->n; i++)
    if (a->ints[i] != x) return false;
  return true;
}

/* A field of a struct attribute that is 0 (or absent). */
static bool xrt__vhlo_ir_zero(const xrt_ir_attr *a, const char *field) {
  const xrt_ir_attr *f = xrt_ir_attr_field(a, field);
  return !f || (f->kind == XRT_ATTR_INT && f->i == 0) ||
         (f->kind == XRT_ATTR_FLOAT && f->f == 0);
}

XRT__PRIVATE bool xrt__vhlo_ir_default(const xrt_ir_op *op, const xrt_ir_attr *a) {
  if (!op->name || !a->name || strncmp(op->name, "stablehlo.", 10)) return false;
  const xrt__vrule *r = xrt__vhlo_rule(op->name, a->name);
  if (!r) return false;
  switch (r->drop) {
  case XRT__VD_FALSE: return a->kind == XRT_ATTR_BOOL && !a->i;
  case XRT__VD_EMPTY:
    return ((a->kind == XRT_ATTR_LIST || a->kind == XRT_ATTR_DICT) &&
            !a->num_items) ||
           ((a->kind == XRT_ATTR_INTS || a->kind == XRT_ATTR_STRING) && !a->n);
  case XRT__VD_ZERO: return a->kind == XRT_ATTR_INT && a->i == 0;
  case XRT__VD_MINUS1: return a->kind == XRT_ATTR_INT && a->i == -1;
  case XRT__VD_API1: return a->kind == XRT_ATTR_INT && a->i == 1;
  case XRT__VD_ENUM0: { /* the enumeration's first value (NOTYPE) */
    size_t n;
    const char *const *v = xrt__vhlo_enum_names(XRT__BCE_COMPARISON_TYPE, &n);
    return a->kind == XRT_ATTR_ENUM && a->s && !strcmp(a->s, v[0]);
  }
  case XRT__VD_DEFAULTS: /* none, or one per operand (all four ops: 2) */
    if (a->kind == XRT_ATTR_INTS) return a->n == 0;
    if (a->kind != XRT_ATTR_LIST || a->num_items != 2) return false;
    for (int32_t i = 0; i < a->num_items; i++)
      if (a->items[i].kind != XRT_ATTR_ENUM || !a->items[i].s ||
          strcmp(a->items[i].s, "DEFAULT"))
        return false;
    return true;
  case XRT__VD_ONES: return xrt__vhlo_ir_all(op, a, 1);
  case XRT__VD_ZEROS: return xrt__vhlo_ir_all(op, a, 0);
  case XRT__VD_ACCURACY: {
    if (a->kind != XRT_ATTR_DICT) return false;
    const xrt_ir_attr *m = xrt_ir_attr_field(a, "mode");
    return m && m->kind == XRT_ATTR_DICT && m->num_items == 1 &&
           m->items[0].name && !strcmp(m->items[0].name, "DEFAULT") &&
           xrt__vhlo_ir_zero(a, "atol") && xrt__vhlo_ir_zero(a, "rtol") &&
           xrt__vhlo_ir_zero(a, "ulps");
  }
  default: return false;
  }
}

/* The integers of an integer tensor attribute (a splat repeated); NULL if
 * v is none or too large for a list. */
static const int64_t *xrt__vhlo_ints(xrt__bc *bc, const xrt__bcv *v, int64_t *n) {
  *n = 0;
  if (!v || v->kind != XRT__BC_A_TENSOR) return NULL;
  const xrt__bcv *e = v->t->t;
  if (e->kind != XRT__BC_T_INT && e->kind != XRT__BC_T_INDEX) return NULL;
  uint64_t numel = xrt__vhlo_numel(v->t);
  size_t es = xrt__vhlo_esize(e);
  bool splat = v->len == es && numel != 1;
  if (numel > (1u << 20) || (!splat && v->len != numel * es)) return NULL;
  int64_t *out = xrt__bc_alloc(bc, (size_t)(numel + 1) * sizeof *out);
  bool sgn = e->kind == XRT__BC_T_INDEX || (e->sub != 2 && e->i > 1);
  for (uint64_t i = 0; i < numel; i++) {
    const unsigned char *p = (const unsigned char *)v->s + (splat ? 0 : i * es);
    uint64_t x = 0;
    for (size_t k = 0; k < es; k++) x |= (uint64_t)p[k] << (8 * k);
    if (sgn && es < 8 && ((x >> (8 * es - 1)) & 1)) x |= ~(uint64_t)0 << (8 * es);
    out[i] = (int64_t)x;
  }
  *n = (int64_t)numel;
  return out;
}

static bool xrt__vhlo_all(xrt__bc *bc, const xrt__bcv *v, int64_t want) {
  int64_t n;
  const int64_t *x = xrt__vhlo_ints(bc, v, &n);
  if (!x) return false;
  for (int64_t i = 0; i < n; i++)
    if (x[i] != want) return false;
  return true;
}

/* Whether StableHLO leaves the attribute out. */
static bool xrt__vhlo_dropped(xrt__bc *bc, const xrt__bcv *v, int drop) {
  switch (drop) {
  case XRT__VD_FALSE: return v->kind == XRT__BC_A_BOOL && !v->i;
  case XRT__VD_EMPTY:
    if (v->kind == XRT__BC_A_TENSOR) return xrt__vhlo_numel(v->t) == 0;
    return (v->kind == XRT__BC_A_ARRAY || v->kind == XRT__BC_A_DICT ||
            v->kind == XRT__BC_A_STRING) && v->n == 0 && v->len == 0;
  case XRT__VD_ZERO: return v->kind == XRT__BC_A_INT && v->i == 0;
  case XRT__VD_MINUS1: return v->kind == XRT__BC_A_INT && v->i == -1;
  case XRT__VD_ENUM0: return v->kind == XRT__BC_A_ENUM && v->i == 0;
  case XRT__VD_API1: return v->kind == XRT__BC_A_ENUM && v->i == 1;
  case XRT__VD_DEFAULTS:
    if (v->kind != XRT__BC_A_ARRAY) return false;
    for (int32_t i = 0; i < v->n; i++)
      if (v->kids[i]->kind != XRT__BC_A_ENUM || v->kids[i]->i != 0) return false;
    return true;
  case XRT__VD_ONES: return xrt__vhlo_all(bc, v, 1);
  case XRT__VD_ZEROS: return xrt__vhlo_all(bc, v, 0);
  case XRT__VD_ACCURACY:
    return v->kind == XRT__BC_A_ACCURACY && v->f[0] == 0 && v->f[1] == 0 &&
           v->i == 0 && v->a->i == 0;
  default: return false;
  }
}

/* An op's attributes by name: from its properties (names from the table)
 * or its attribute dictionary. */
typedef struct xrt__vattrs {
  int32_t n;
  const char **names;
  const xrt__bcv **vals;
  bool *used;
} xrt__vattrs;

static void xrt__vhlo_attrs(xrt__bc *bc, const xrt__bcop *op, const xrt__vop *d,
                            xrt__vattrs *a) {
  size_t cap = (size_t)op->num_props + (op->attrs ? (size_t)op->attrs->n : 0) + 1;
  a->names = xrt__bc_alloc(bc, cap * sizeof *a->names);
  a->vals = xrt__bc_alloc(bc, cap * sizeof *a->vals);
  a->used = xrt__bc_alloc(bc, cap);
  memset(a->used, 0, cap);
  a->n = 0;
  if (op->num_props) {
    const char *p = d && d->props ? d->props : "";
    for (int32_t i = 0; i < op->num_props; i++) {
      while (*p == ' ') p++;
      size_t len = strcspn(p, " ");
      if (!len)
        xrt__bc_fail(bc, bc->beg + op->offset, "%s has more properties (%d) than "
                     "xrt knows", op->name, (int)op->num_props);
      char *nm = xrt__bc_alloc(bc, len + 1);
      memcpy(nm, p, len);
      nm[len] = 0;
      p += len;
      if (!op->props[i]) continue; /* an absent optional property */
      a->names[a->n] = nm;
      a->vals[a->n++] = op->props[i];
    }
    while (*p == ' ') p++;
    if (*p && d && d->props)
      xrt__bc_fail(bc, bc->beg + op->offset, "%s has fewer properties (%d) than "
                   "xrt knows", op->name, (int)op->num_props);
  }
  for (int32_t i = 0; op->attrs && i < op->attrs->n; i++) {
    a->names[a->n] = op->attrs->kids[2 * i]->s;
    a->vals[a->n++] = op->attrs->kids[2 * i + 1];
  }
}

/* The value of attribute name (marked used), or NULL. */
static const xrt__bcv *xrt__vhlo_take(xrt__vattrs *a, const char *name) {
  for (int32_t i = 0; i < a->n; i++)
    if (!a->used[i] && !strcmp(a->names[i], name)) {
      a->used[i] = true;
      return a->vals[i];
    }
  return NULL;
}

/* ", " between attributes of the dictionary being written. */
typedef struct xrt__vout {
  xrt__bc *bc;
  int count;
} xrt__vout;

static void xrt__vhlo_key(xrt__vout *o, const char *name) {
  xrt__bc_puts(o->bc, o->count++ ? ", " : "");
  bool plain = xrt__is_idstart((unsigned char)name[0]);
  for (const char *q = name; plain && *q; q++)
    plain = xrt__is_namechar((unsigned char)*q) && *q != '-';
  if (plain) xrt__bc_puts(o->bc, name);
  else xrt__vhlo_put_string(o->bc, name, strlen(name));
  xrt__bc_puts(o->bc, " = ");
}

/* `key = [a, b]` of an integer-tensor field of a group; left out when
 * empty (as MLIR prints these). */
static void xrt__vhlo_field(xrt__vout *o, xrt__vattrs *a, const char *from,
                            const char *to, bool always) {
  int64_t n;
  const int64_t *x = xrt__vhlo_ints(o->bc, xrt__vhlo_take(a, from), &n);
  if (!x || (!n && !always)) return;
  xrt__vhlo_key(o, to);
  xrt__vhlo_put_i64s(o->bc, x, n);
}

static int64_t xrt__vhlo_int(xrt__vattrs *a, const char *name, int64_t dflt) {
  const xrt__bcv *v = xrt__vhlo_take(a, name);
  return v && v->kind == XRT__BC_A_INT ? v->i : dflt;
}

/* dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[...]>,
 * MLIR's compact form: each side lists its dimensions in order, batch
 * and feature (input/output) or input and output feature (kernel) by
 * letter, spatial ones by number. */
static void xrt__vhlo_conv_side(xrt__bc *bc, xrt__vattrs *a, const char *pre,
                                const char *n1, const char *n2, char l1, char l2) {
  char k1[64], k2[64], ks[64];
  snprintf(k1, sizeof k1, "%s_%s", pre, n1);
  snprintf(k2, sizeof k2, "%s_%s", pre, n2);
  snprintf(ks, sizeof ks, "%s_spatial_dimensions", pre);
  int64_t d1 = xrt__vhlo_int(a, k1, -1), d2 = xrt__vhlo_int(a, k2, -1), ns;
  const int64_t *sp = xrt__vhlo_ints(bc, xrt__vhlo_take(a, ks), &ns);
  int64_t rank = 2 + ns;
  xrt__bc_put(bc, "[", 1);
  for (int64_t p = 0; p < rank; p++) {
    if (p) xrt__bc_put(bc, ", ", 2);
    if (p == d1) { xrt__bc_put(bc, &l1, 1); continue; }
    if (p == d2) { xrt__bc_put(bc, &l2, 1); continue; }
    int64_t k = 0;
    while (k < ns && sp[k] != p) k++;
    if (k < ns) xrt__bc_printf(bc, "%" PRId64, k);
    else xrt__bc_put(bc, "?", 1); /* malformed: the parser says so */
  }
  xrt__bc_put(bc, "]", 1);
}

static void xrt__vhlo_group_conv(xrt__vout *o, xrt__vattrs *a) {
  xrt__vhlo_key(o, "dimension_numbers");
  xrt__bc_puts(o->bc, "#stablehlo.conv<");
  xrt__vhlo_conv_side(o->bc, a, "input", "batch_dimension", "feature_dimension",
                      'b', 'f');
  xrt__bc_put(o->bc, "x", 1);
  xrt__vhlo_conv_side(o->bc, a, "kernel", "input_feature_dimension",
                      "output_feature_dimension", 'i', 'o');
  xrt__bc_put(o->bc, "->", 2);
  xrt__vhlo_conv_side(o->bc, a, "output", "batch_dimension", "feature_dimension",
                      'b', 'f');
  xrt__bc_puts(o->bc, ">");
}

static void xrt__vhlo_group_dot(xrt__vout *o, xrt__vattrs *a) {
  static const char *const dims[] = {
      "lhs_batching_dimensions", "rhs_batching_dimensions",
      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  static const char *const algo[] = {
      "lhs_precision_type", "rhs_precision_type", "accumulation_type",
      "lhs_component_count", "rhs_component_count", "num_primitive_operations",
      "allow_imprecise_accumulation"};
  xrt__vhlo_key(o, "dot_dimension_numbers");
  xrt__bc_puts(o->bc, "#stablehlo.dot<");
  xrt__vout in = {o->bc, 0};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(dims); i++)
    xrt__vhlo_field(&in, a, dims[i], dims[i], false);
  xrt__bc_puts(o->bc, ">");
  const xrt__bcv *v[XRT__ARRAY_SIZE(algo)];
  bool any = false;
  for (size_t i = 0; i < XRT__ARRAY_SIZE(algo); i++) {
    v[i] = xrt__vhlo_take(a, algo[i]);
    any = any || (v[i] && !(v[i]->kind == XRT__BC_A_TYPE &&
                            v[i]->t->kind == XRT__BC_T_NONE));
  }
  if (!any) return;
  xrt__vhlo_key(o, "algorithm");
  xrt__bc_puts(o->bc, "#stablehlo.dot_algorithm<");
  in.count = 0;
  for (size_t i = 0; i < XRT__ARRAY_SIZE(algo); i++) {
    if (!v[i]) continue;
    xrt__vhlo_key(&in, algo[i]);
    if (v[i]->kind == XRT__BC_A_INT) xrt__bc_printf(o->bc, "%" PRId64, v[i]->i);
    else xrt__vhlo_put_attr(o->bc, v[i]);
  }
  xrt__bc_puts(o->bc, ">");
}

/* gather's and scatter's dimension numbers: the lists (left out when
 * empty) and index_vector_dim. */
static void xrt__vhlo_group_dims(xrt__vout *o, xrt__vattrs *a, bool scatter) {
  static const char *const g[] = {"offset_dims", "collapsed_slice_dims",
                                  "operand_batching_dims",
                                  "start_indices_batching_dims", "start_index_map"};
  static const char *const s[] = {"update_window_dims", "inserted_window_dims",
                                  "input_batching_dims",
                                  "scatter_indices_batching_dims",
                                  "scatter_dims_to_operand_dims"};
  const char *const *f = scatter ? s : g;
  xrt__vhlo_key(o, scatter ? "scatter_dimension_numbers" : "dimension_numbers");
  xrt__bc_puts(o->bc, scatter ? "#stablehlo.scatter<" : "#stablehlo.gather<");
  xrt__vout in = {o->bc, 0};
  for (int i = 0; i < 5; i++) xrt__vhlo_field(&in, a, f[i], f[i], false);
  xrt__vhlo_key(&in, "index_vector_dim");
  xrt__bc_printf(o->bc, "%" PRId64 ">", xrt__vhlo_int(a, "index_vector_dim", 0));
}

static void xrt__vhlo_group_channel(xrt__vout *o, xrt__vattrs *a, bool typed) {
  int64_t id = xrt__vhlo_int(a, "channel_id", 0);
  int64_t type = typed ? xrt__vhlo_int(a, "channel_type", 0) : 0;
  if (!typed && id == 0) return;
  xrt__vhlo_key(o, "channel_handle");
  xrt__bc_printf(o->bc, "#stablehlo.channel_handle<handle = %" PRId64
                 ", type = %" PRId64 ">", id, type);
}

/* One attribute by its rule. */
static void xrt__vhlo_one(xrt__vout *o, const char *op, const char *name,
                          const xrt__bcv *v) {
  xrt__bc *bc = o->bc;
  const xrt__vrule *r = xrt__vhlo_rule(op, name);
  int rule = r ? r->rule : XRT__VR_KEEP;
  if (r && xrt__vhlo_dropped(bc, v, r->drop)) return;
  int64_t n;
  const int64_t *x;
  switch (rule) {
  case XRT__VR_ARRAY: case XRT__VR_BOOLS:
    if (!(x = xrt__vhlo_ints(bc, v, &n))) break;
    xrt__vhlo_key(o, name);
    xrt__bc_puts(bc, rule == XRT__VR_ARRAY ? "array<i64" : "array<i1");
    for (int64_t i = 0; i < n; i++) {
      xrt__bc_puts(bc, i ? ", " : ": ");
      if (rule == XRT__VR_ARRAY) xrt__bc_printf(bc, "%" PRId64, x[i]);
      else xrt__bc_puts(bc, x[i] ? "true" : "false");
    }
    xrt__bc_puts(bc, ">");
    return;
  case XRT__VR_UNIT:
    xrt__vhlo_key(o, name);
    xrt__bc_puts(bc, "unit");
    return;
  case XRT__VR_SYMBOL:
    if (v->kind != XRT__BC_A_STRING) break;
    xrt__vhlo_key(o, name);
    xrt__vhlo_put_symbol(bc, v->s, v->len);
    return;
  case XRT__VR_SYMBOLS:
    if (v->kind != XRT__BC_A_ARRAY) break;
    xrt__vhlo_key(o, name);
    xrt__bc_put(bc, "[", 1);
    for (int32_t i = 0; i < v->n; i++) {
      if (i) xrt__bc_put(bc, ", ", 2);
      if (v->kids[i]->kind == XRT__BC_A_STRING)
        xrt__vhlo_put_symbol(bc, v->kids[i]->s, v->kids[i]->len);
      else xrt__vhlo_put_attr(bc, v->kids[i]);
    }
    xrt__bc_put(bc, "]", 1);
    return;
  case XRT__VR_API:
    if (v->kind != XRT__BC_A_ENUM) break;
    xrt__vhlo_key(o, name);
    xrt__bc_printf(bc, "%" PRId64 " : i32", v->i);
    return;
  default: break;
  }
  xrt__vhlo_key(o, name);
  xrt__vhlo_put_attr(bc, v);
}

/* The op's attributes as a `<{...}>` dictionary (nothing if none). */
static void xrt__vhlo_put_attrs(xrt__bc *bc, const xrt__bcop *op,
                                const xrt__vop *d, const char *shlo) {
  xrt__vattrs a;
  xrt__vhlo_attrs(bc, op, d, &a);
  if (!a.n || (d && d->group == XRT__VG_OPAQUE)) return;
  size_t mark = bc->out.n;
  xrt__bc_puts(bc, " <{");
  xrt__vout o = {bc, 0};
  switch (d ? d->group : XRT__VG_NONE) {
  case XRT__VG_CONV:
    xrt__vhlo_group_conv(&o, &a);
    if (!strcmp(op->name, "vhlo.dynamic_conv_v1"))
      xrt__vhlo_take(&a, "padding"); /* an operand, d_padding, since 0.20 */
    break;
  case XRT__VG_DOT: xrt__vhlo_group_dot(&o, &a); break;
  case XRT__VG_GATHER: xrt__vhlo_group_dims(&o, &a, false); break;
  case XRT__VG_SCATTER: xrt__vhlo_group_dims(&o, &a, true); break;
  case XRT__VG_CHANNEL: xrt__vhlo_group_channel(&o, &a, false); break;
  case XRT__VG_CHANNEL2: xrt__vhlo_group_channel(&o, &a, true); break;
  default: break;
  }
  for (int32_t i = 0; i < a.n; i++) {
    if (a.used[i]) continue;
    if (d && d->group == XRT__VG_FUNC && !strcmp(a.names[i], "function_type") &&
        a.vals[i]->kind == XRT__BC_A_TYPE) {
      xrt__vhlo_key(&o, a.names[i]);
      xrt__vhlo_put_type(bc, a.vals[i]->t);
      continue;
    }
    xrt__vhlo_one(&o, shlo, a.names[i], a.vals[i]);
  }
  if (!o.count) { /* every attribute was a default */
    bc->out.n = mark;
    bc->out.s[mark] = 0;
    return;
  }
  xrt__bc_puts(bc, "}>");
}

/* The StableHLO name the op reads as. */
static const char *xrt__vhlo_name(const xrt__bcop *op, const xrt__vop *d) {
  if (!d) return op->name;
  if (d->group == XRT__VG_RETURN && !strcmp(op->parent, "vhlo.func_v1"))
    return "func.return";
  return d->shlo;
}

XRT__PRIVATE void xrt__vhlo_op_head(xrt__bc *bc, const xrt__bcop *op) {
  const xrt__vop *d = xrt__vhlo_op(op->name);
  const char *name = xrt__vhlo_name(op, d);
  for (int32_t i = 0; i < op->num_results; i++)
    xrt__bc_printf(bc, "%s%%%" PRId64, i ? ", " : "", op->result_ids[i]);
  if (op->num_results) xrt__bc_puts(bc, " = ");
  xrt__vhlo_put_string(bc, name, strlen(name));
  xrt__bc_puts(bc, "(");
  for (int32_t i = 0; i < op->num_operands; i++)
    xrt__bc_printf(bc, "%s%%%" PRId64, i ? ", " : "", op->operands[i]);
  xrt__bc_puts(bc, ")");
  xrt__vhlo_put_attrs(bc, op, d, name);
}

XRT__PRIVATE void xrt__vhlo_op_tail(xrt__bc *bc, const xrt__bcop *op) {
  xrt__bc_puts(bc, " : (");
  for (int32_t i = 0; i < op->num_operands; i++) {
    if (i) xrt__bc_put(bc, ", ", 2);
    const xrt__bcv *t = xrt__bc_value_type(bc, op->operands[i]);
    if (t) xrt__vhlo_put_type(bc, t);
    else xrt__bc_puts(bc, "none"); /* used before defined: the parser says so */
  }
  xrt__bc_puts(bc, ") -> ");
  xrt__vhlo_put_types(bc, op->results, op->num_results, true);
}
