/*
 * src/sim/elementwise.c - the simulator's elementwise dispatch
 * (sim_ew_kernel) and its pred and float kernels; the other families are
 * in integer.c, bitwise.c, complex.c, compare.c, convert.c, minifloat.c
 * and quant.c.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- pred (i1) kernels: arithmetic on booleans as the spec defines it ---- */

#define SIM_PRED_BIN_OPS(X)                                                   \
  X(ADD, |) X(MUL, &) X(MAX, |) X(MIN, &) X(AND, &) X(OR, |) X(XOR, ^)
#define SIM_DEF_PB(OP, sym)                                                   \
  static void sim_##OP##_pred(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];   \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(uint8_t, a, b, o, n, (uint8_t)((X sym Y) & 1));                  \
  }
SIM_PRED_BIN_OPS(SIM_DEF_PB)

static void sim_NOT_pred(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  (void)ctx;
  SIM_MAP1(uint8_t, a, o, n, (uint8_t)!X);
}

/* ---- float kernels ---- */

/* Stores a double into a float element type with one rounding. */
#define SIM_STD_f32(v) ((float)(v))
#define SIM_STD_f64(v) (v)
#define SIM_STD_f16(v) xrt_f64_to_f16(v)
#define SIM_STD_bf16(v) xrt_f64_to_bf16(v)

#define SIM_DEF_FB(OP, nm, code, T, C, LD, ST, KEY)                           \
  SIM_PRIVATE void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, ST((C)SIM_F_##OP((C)LD(X), (C)LD(Y))));          \
  }
#define SIM_DEF_FU(OP, nm, code, T, C, LD, ST, KEY)                           \
  SIM_PRIVATE void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, ST((C)SIM_F_##OP((C)LD(X))));                       \
  }
#define SIM_DEF_FBD(OP, nm, code, T, C, LD, ST, KEY)                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n,                                                   \
             SIM_STD_##nm(SIM_F_##OP((double)LD(X), (double)LD(Y))));         \
  }
#define SIM_DEF_FUD(OP, nm, code, T, C, LD, ST, KEY)                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, SIM_STD_##nm(SIM_F_##OP((double)LD(X))));           \
  }
#define SIM_STAMP_FB(OP) SIM_FLT_TYPES(SIM_DEF_FB, OP)
#define SIM_STAMP_FU(OP) SIM_FLT_TYPES(SIM_DEF_FU, OP)
#define SIM_STAMP_FBD(OP) SIM_FLT_TYPES(SIM_DEF_FBD, OP)
#define SIM_STAMP_FUD(OP) SIM_FLT_TYPES(SIM_DEF_FUD, OP)
SIM_FLT_BIN_OPS(SIM_STAMP_FB)
SIM_FLT_UN_OPS(SIM_STAMP_FU)
SIM_FLT_BIN_DOPS(SIM_STAMP_FBD)
SIM_FLT_UN_DOPS(SIM_STAMP_FUD)

/* The kernels that fusion maps to its own per-ISA versions. */

/* is_finite: float -> pred (output never wider than input). */
#define SIM_DEF_ISFIN(OP, nm, code, T, C, LD, ST, KEY)                        \
  static void sim_ISFIN_##nm(void *const *in, void *out, size_t n,            \
                             const void *ctx) {                               \
    const T *a = (const T *)in[0];                                            \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, (uint8_t)(isfinite(LD(X)) != 0));                   \
  }
SIM_FLT_TYPES(SIM_DEF_ISFIN, ISFIN)

/* Same-size copy (real of a real type, bitcast); NULL-safe for n == 0. */
SIM_PRIVATE void sim_copy(void *const *in, void *out, size_t n,
                          const void *ctx) {
  size_t esz = *(const size_t *)ctx;
  if (n && in[0] != out) memcpy(out, in[0], n * esz);
}
static void sim_zero(void *const *in, void *out, size_t n, const void *ctx) {
  size_t esz = *(const size_t *)ctx;
  (void)in;
  if (n) memset(out, 0, n * esz); /* +0.0 is all zero bits */
}
SIM_PRIVATE_DATA const size_t sim_esz[17] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* Kernel table indexed by [op][operand element type]; NULL = unsupported. */
#define SIM_TENT_F(OP, nm, code, T, C, LD, ST, KEY) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TENT_P(OP, sym) [SIM_EW_##OP][XRT_PRED] = sim_##OP##_pred,
#define SIM_TROW_F(OP) SIM_FLT_TYPES(SIM_TENT_F, OP)
static const sim_ew_fn sim_ew_tab[SIM_EW_NOPS][XRT_DTYPE_COUNT] = {
    SIM_FLT_BIN_OPS(SIM_TROW_F) SIM_FLT_UN_OPS(SIM_TROW_F)
    SIM_FLT_BIN_DOPS(SIM_TROW_F) SIM_FLT_UN_DOPS(SIM_TROW_F)
    SIM_PRED_BIN_OPS(SIM_TENT_P)
    [SIM_EW_NOT][XRT_PRED] = sim_NOT_pred,
    SIM_FLT_TYPES(SIM_TENT_F, ISFIN)
};

/* The plain kernel of op e (a SIM_EW_* id) on element type t, or NULL. */
SIM_PRIVATE sim_ew_fn sim_ew_plain(int e, xrt_dtype t) {
  return sim_ew_tab[e][t];
}

SIM_PRIVATE int sim_ew_op_of(xrt_opcode code) {
  switch (code) {
#define SIM_EW_CASE(e, xo, ar, vk)                                            \
  case XRT_OP_##xo:                                                           \
    return SIM_EW_##e;
    SIM_EW_OPS(SIM_EW_CASE)
#undef SIM_EW_CASE
  default:
    return -1;
  }
}

/* True if the op code is one sim_ew_kernel handles. */
SIM_PRIVATE int sim_ew_handles(xrt_opcode code) {
  return sim_op(code)->ew_arity != 0;
}

SIM_PRIVATE enum sim_ew_class sim_ew_class(xrt_dtype t) {
  switch (t) {
  case XRT_PRED: return SIM_EWC_PRED;
  case XRT_S2: case XRT_S4: case XRT_S8: case XRT_S16: case XRT_S32:
  case XRT_S64: return SIM_EWC_SIGNED;
  case XRT_U2: case XRT_U4: case XRT_U8: case XRT_U16: case XRT_U32:
  case XRT_U64: return SIM_EWC_UNSIGNED;
  case XRT_F16: case XRT_BF16: case XRT_F32: case XRT_F64:
    return SIM_EWC_FLOAT;
  case XRT_C64: case XRT_C128: return SIM_EWC_COMPLEX;
  case XRT_F8E4M3FN: case XRT_F8E5M2: case XRT_F8E4M3FNUZ:
  case XRT_F8E5M2FNUZ: case XRT_F8E4M3B11FNUZ: case XRT_F8E3M4:
  case XRT_F8E4M3: case XRT_F8E8M0FNU: case XRT_F6E2M3FN: case XRT_F6E3M2FN:
  case XRT_F4E2M1FN: return SIM_EWC_MINIFLOAT;
  default: return SIM_EWC_NONE;
  }
}

/* Bit width of an element type (the MLIR one: 64 for c64). */
SIM_PRIVATE int sim_ew_bits(xrt_dtype t) {
  static const int8_t bits[XRT_DTYPE_COUNT] = {
      [XRT_PRED] = 1, [XRT_S8] = 8, [XRT_S16] = 16, [XRT_S32] = 32,
      [XRT_S64] = 64, [XRT_U8] = 8, [XRT_U16] = 16, [XRT_U32] = 32,
      [XRT_U64] = 64, [XRT_F16] = 16, [XRT_BF16] = 16, [XRT_F32] = 32,
      [XRT_F64] = 64, [XRT_C64] = 64, [XRT_S2] = 2, [XRT_S4] = 4,
      [XRT_U2] = 2, [XRT_U4] = 4, [XRT_F8E4M3FN] = 8, [XRT_F8E5M2] = 8,
      [XRT_F8E4M3FNUZ] = 8, [XRT_F8E5M2FNUZ] = 8, [XRT_F8E4M3B11FNUZ] = 8,
      [XRT_F8E3M4] = 8, [XRT_F8E4M3] = 8, [XRT_F8E8M0FNU] = 8,
      [XRT_F6E2M3FN] = 6, [XRT_F6E3M2FN] = 6, [XRT_F4E2M1FN] = 4};
  if (t == XRT_C128) return 128; /* does not fit the int8_t table */
  return (unsigned)t < XRT_DTYPE_COUNT ? bits[t] : 0;
}
/* Bytes per element in buffers. */
SIM_PRIVATE size_t sim_ew_size(xrt_dtype t) {
  int b = sim_ew_bits(t);
  return b <= 8 ? (b > 0) : (size_t)b / 8;
}

/* The core's opcode names, dtype classes and shape spelling, repeated here
 * so that the plugin built as a shared object calls nothing in xrt.c. */
SIM_PRIVATE const char *sim_opcode_name(xrt_opcode code) {
  static const char *const names[XRT_OP_COUNT] = {
      [XRT_OP_INVALID] = "invalid",
#define SIM_OPCODE_NAME(e, s) [XRT_OP_##e] = s,
      XRT_OPCODES(SIM_OPCODE_NAME)
#undef SIM_OPCODE_NAME
  };
  return (unsigned)code < XRT_OP_COUNT ? names[code] : "invalid";
}
SIM_PRIVATE int sim_dtype_is_float(xrt_dtype t) {
  enum sim_ew_class c = sim_ew_class(t);
  return c == SIM_EWC_FLOAT || c == SIM_EWC_MINIFLOAT;
}
SIM_PRIVATE int sim_dtype_is_complex(xrt_dtype t) {
  return sim_ew_class(t) == SIM_EWC_COMPLEX;
}
/* "tensor<2x3xf32>" into buf (cap > 0), truncated if it does not fit. */
static void sim_shape_format(const xrt_shape *s, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "tensor<");
  for (int32_t i = 0; i < s->rank && i < XRT_MAX_RANK && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)s->dims[i]);
  if (n < cap) snprintf(buf + n, cap - n, "%s>", sim_dtype_name(s->dtype));
}

/* Writes "<op> is not implemented for <type>[ -> <type>]" and returns NULL. */
SIM_PRIVATE sim_ew_fn sim_ew_unsup(const xrt_ir_func *f, const xrt_ir_op *op,
                                   int32_t v, int32_t r,
                                   const char *why_extra, char *why,
                                   size_t whycap) {
  char a[128] = "", b[128] = "";
  sim_shape_format(&f->value_types[v].shape, a, sizeof a);
  if (r >= 0) sim_shape_format(&f->value_types[r].shape, b, sizeof b);
  if (why && whycap)
    snprintf(why, whycap, "%s is not implemented for %s%s%s%s",
             op->name ? op->name : sim_opcode_name(op->code), a,
             r >= 0 ? " -> " : "", b, why_extra ? why_extra : "");
  return NULL;
}

/* A kernel context could not be allocated: *ctx_owned = -1 tells the
 * caller (out of memory, not unsupported). */
SIM_PRIVATE sim_ew_fn sim_ew_oom(int *ctx_owned, char *why, size_t whycap) {
  *ctx_owned = -1;
  if (why && whycap)
    snprintf(why, whycap, "out of host memory for an elementwise kernel's "
             "context");
  return NULL;
}

/* The compare_type each element class takes (floats: TOTALORDER too). */
static const char *const sim_cmp_types[SIM_EWC_COUNT] = {
    [SIM_EWC_PRED] = "UNSIGNED", [SIM_EWC_SIGNED] = "SIGNED",
    [SIM_EWC_UNSIGNED] = "UNSIGNED", [SIM_EWC_FLOAT] = "FLOAT",
    [SIM_EWC_MINIFLOAT] = "FLOAT", [SIM_EWC_COMPLEX] = "FLOAT"};

/* Compare: direction and compare_type attributes pick the kernel. */
static sim_ew_fn sim_ew_compare(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
  static const char *const dirs[SIM_NDIRS] = {"EQ", "NE", "GE",
                                              "GT", "LE", "LT"};
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  const xrt_ir_attr *d = xrt_ir_op_attr(op, "comparison_direction");
  const xrt_ir_attr *ct = xrt_ir_op_attr(op, "compare_type");
  enum sim_ew_class cls = sim_ew_class(t);
  int dir = -1, tot = 0;
  if (f->value_types[op->operands[1]].shape.dtype != t || r != XRT_PRED)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  for (int k = 0; d && d->s && k < SIM_NDIRS; k++)
    if (!strcmp(d->s, dirs[k])) dir = k;
  if (dir < 0)
    return sim_ew_unsup(f, op, op->operands[0], -1,
                        " (bad comparison_direction)", why, whycap);
  if (ct && ct->s) { /* the type must fit the elements (spec (C3)) */
    const char *s = ct->s;
    tot = !strcmp(s, "TOTALORDER");
    int ok = (tot && sim_dtype_is_float(t)) ||
             (sim_cmp_types[cls] && !strcmp(s, sim_cmp_types[cls]));
    if (!ok)
      return sim_ew_unsup(f, op, op->operands[0], -1,
                          " with this compare_type", why, whycap);
  }
  if (cls == SIM_EWC_MINIFLOAT) {
    sim_mf *m = sim_mf_new(al, t, r);
    if (!m) return sim_ew_oom(ctx_owned, why, whycap);
    m->dir = dir + (tot ? 8 : 0);
    *ctx_out = m;
    *ctx_owned = 1;
    return sim_cmp_mf;
  }
  sim_ew_fn fn = cls != SIM_EWC_NONE ? sim_cmp_kernel(tot, dir, t) : NULL;
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], -1, "", why, whycap);
}

/* real/imag of a real element type: a copy and zeros. */
static sim_ew_fn sim_ew_real_imag(int e, xrt_dtype t, const void **ctx_out) {
  if (sim_ew_class(t) != SIM_EWC_FLOAT) return NULL;
  *ctx_out = &sim_esz[sim_ew_size(t)];
  return e == SIM_EW_REAL ? sim_copy : sim_zero;
}

/* The element type a result must have for an op whose operand has type t. */
static xrt_dtype sim_ew_result_type(int e, xrt_dtype t) {
  if (e == SIM_EW_ISFIN) return XRT_PRED;
  if (e == SIM_EW_CMK) return t == XRT_F32 ? XRT_C64 : XRT_C128;
  if ((e == SIM_EW_ABS || e == SIM_EW_REAL || e == SIM_EW_IMAG) &&
      sim_dtype_is_complex(t))
    return t == XRT_C64 ? XRT_F32 : XRT_F64;
  return t;
}

/* A kernel with a sim_mf context: operand type t, result type r. */
static sim_ew_fn sim_ew_mf(const xrt_allocator *al, const xrt_ir_func *f,
                           const xrt_ir_op *op, sim_ew_fn fn, xrt_dtype t,
                           xrt_dtype r, const void **ctx_out, int *ctx_owned,
                           char *why, size_t whycap) {
  if (!fn)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  sim_mf *m = sim_mf_new(al, t, r);
  if (!m) return sim_ew_oom(ctx_owned, why, whycap);
  *ctx_out = m;
  *ctx_owned = 1;
  return fn;
}

/* convert between any two element types (small floats included). */
static sim_ew_fn sim_ew_convert(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  enum sim_ew_class ct = sim_ew_class(t), cr = sim_ew_class(r);
  if (ct == SIM_EWC_NONE || cr == SIM_EWC_NONE)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (ct == SIM_EWC_MINIFLOAT || cr == SIM_EWC_MINIFLOAT)
    return sim_ew_mf(al, f, op, sim_mf_cv_kernel(t, r), t, r, ctx_out,
                     ctx_owned, why, whycap);
  sim_ew_fn fn = sim_cv_kernel(t, r);
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
}

/* Kernel for an elementwise op whose operands all have the result's shape
 * (n elements each; for a bitcast_convert that changes the element width, n
 * counts result elements).  ctx_out receives a pointer (may be NULL) passed
 * back as ctx on every call; *ctx_owned is 1 if the caller must free it
 * with al (it came from al), -1 (and NULL returned) when al failed.
 * Returns NULL and writes a reason into why if unsupported.  Quantized
 * operands or results (and uniform_quantize/dequantize) go to sim_ew_quant,
 * which needs the result's shape to find per-axis parameters. */
SIM_PRIVATE sim_ew_fn sim_ew_kernel(const xrt_allocator *al, const xrt_ir_func *f,
                               const xrt_ir_op *op, const void **ctx_out,
                               int *ctx_owned, char *why, size_t whycap) {
  *ctx_out = NULL;
  *ctx_owned = 0;
  int e = sim_ew_op_of(op->code);
  int handled = sim_ew_handles(op->code);
  /* (the message below gives other ops one operand) */
  int arity = handled ? sim_op(op->code)->ew_arity : 1;
  if (!handled || op->num_operands != arity || op->num_results != 1) {
    if (why && whycap)
      snprintf(why, whycap, "%s is not an elementwise op with %d operand(s)",
               op->name ? op->name : sim_opcode_name(op->code), arity);
    return NULL;
  }
  int quant = op->code == XRT_OP_UNIFORM_QUANTIZE ||
              op->code == XRT_OP_UNIFORM_DEQUANTIZE;
  for (int k = 0; k <= arity; k++) {
    int32_t v = k < arity ? op->operands[k] : op->results[0];
    const xrt_ir_type *ty = &f->value_types[v];
    if (ty->kind != XRT_TYPE_TENSOR)
      return sim_ew_unsup(f, op, v, -1, "", why, whycap);
    if (ty->quant) quant = 1;
  }
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  /* a bitcast between a quantized type and its storage type is a copy */
  if (op->code == XRT_OP_BITCAST_CONVERT)
    return sim_ew_bitcast(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (quant)
    return sim_ew_quant(al, f, op, e, arity, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_COMPARE)
    return sim_ew_compare(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_CONVERT)
    return sim_ew_convert(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_REDUCE_PRECISION)
    return sim_ew_reduce_precision(al, f, op, ctx_out, ctx_owned, why,
                                   whycap);
  if (arity == 2 && f->value_types[op->operands[1]].shape.dtype != t)
    return sim_ew_unsup(f, op, op->operands[1], op->results[0],
                        " (operand types differ)", why, whycap);
  enum sim_ew_class cls = sim_ew_class(t);
  if (cls == SIM_EWC_NONE || r != sim_ew_result_type(e, t))
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (cls == SIM_EWC_MINIFLOAT)
    return sim_ew_mf(al, f, op, sim_mf_kernel(e), t, r, ctx_out, ctx_owned,
                     why, whycap);
  sim_ew_fn fn; /* from the table of the operand's family */
  if (cls == SIM_EWC_SIGNED || cls == SIM_EWC_UNSIGNED) {
    fn = sim_int_kernel(e, t);
    if (!fn) fn = sim_bit_kernel(e, t);
  } else if (cls == SIM_EWC_COMPLEX || e == SIM_EW_CMK) {
    fn = sim_cpx_kernel(e, t);
  } else {
    fn = sim_ew_tab[e][t]; /* pred, float */
  }
  if (!fn && (e == SIM_EW_REAL || e == SIM_EW_IMAG))
    fn = sim_ew_real_imag(e, t, ctx_out);
  if (!fn) fn = sim_chlo_kernel(e, t); /* special.c */
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], -1, "", why, whycap);
}
