/*
 * src/core/verify_types.c - verifier constraints of the types op family:
 * quantization, converts, bitcasts, reduce_precision.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"
/* ----------------------------------------------------------------------
 * Verifier constraints of the types op family: uniform_quantize,
 * uniform_dequantize, reduce_precision, chlo.mulhi, and the quantized
 * forms of elementwise ops. Returns XRT_OK for ops of other families.
 * -------------------------------------------------------------------- */

/* The spec's constraints on a !quant.uniform element type of value id
 * (QuantizedTensorElementType C1-C11, and per-axis C12-C13).  The spec
 * puts no bound on the storage width against the expressed type:
 * i32:f32 is what quantized dot_general and convolution accumulate in. */
static xrt_status xrt__vquant(const xrt__vctx *v, int32_t id, const char *what) {
  const xrt_ir_type *t = xrt__vtype(v, id);
  const xrt_ir_quant *q = t->quant;
  if (!q) return XRT_OK;
  int sk = xrt__dtype_class(q->storage);
  if (sk != XRT__K_SINT && sk != XRT__K_UINT)
    return xrt__vfail(v, "%s: quantized storage type must be an integer type, "
                      "not %s", what, xrt_dtype_name(q->storage));
  if (!xrt_dtype_is_float(q->expressed))
    return xrt__vfail(v, "%s: quantized expressed type must be a float type, "
                      "not %s", what, xrt_dtype_name(q->expressed));
  if (t->shape.dtype != q->storage)
    return xrt__vfail(v, "%s: element type %s differs from the storage type "
                      "%s", what, xrt_dtype_name(t->shape.dtype),
                      xrt_dtype_name(q->storage));
  int sb = xrt_dtype_bits(q->storage);
  int64_t lo = 0, hi = 0;
  if (sk == XRT__K_SINT) {
    lo = sb >= 64 ? INT64_MIN : -((int64_t)1 << (sb - 1));
    hi = sb >= 64 ? INT64_MAX : ((int64_t)1 << (sb - 1)) - 1;
  } else {
    hi = sb >= 63 ? INT64_MAX : ((int64_t)1 << sb) - 1;
  }
  if (q->storage_min < lo || q->storage_max > hi ||
      q->storage_min >= q->storage_max)
    return xrt__vfail(v, "%s: storage range [%" PRId64 ", %" PRId64 "] does "
                      "not fit %s (C3: min_value(storage_type) <= storage_min "
                      "< storage_max <= max_value(storage_type))", what,
                      q->storage_min, q->storage_max,
                      xrt_dtype_name(q->storage));
  if (q->num_scales < 1 || !q->scales || !q->zero_points)
    return xrt__vfail(v, "%s: quantized type without scales", what);
  for (int32_t i = 0; i < q->num_scales; i++) {
    if (!(q->scales[i] > 0) || !isfinite(q->scales[i]))
      return xrt__vfail(v, "%s: scale %g must be positive and finite (C5, "
                        "C6)", what, q->scales[i]);
    if (q->zero_points[i] < q->storage_min ||
        q->zero_points[i] > q->storage_max)
      return xrt__vfail(v, "%s: zero point %" PRId64 " is outside the storage "
                        "range [%" PRId64 ", %" PRId64 "] (C7)", what,
                        q->zero_points[i], q->storage_min, q->storage_max);
  }
  if (q->axis < 0) {
    if (q->num_scales != 1)
      return xrt__vfail(v, "%s: per-tensor quantization needs one scale, got "
                        "%d (C10)", what, (int)q->num_scales);
    return XRT_OK;
  }
  if (q->axis >= t->shape.rank)
    return xrt__vfail(v, "%s: quantization dimension %d is out of range for "
                      "rank %d (C12)", what, (int)q->axis, (int)t->shape.rank);
  if (t->shape.dims[q->axis] != q->num_scales)
    return xrt__vfail(v, "%s: %d scales for quantization dimension %d of size "
                      "%" PRId64 " (C13)", what, (int)q->num_scales,
                      (int)q->axis, t->shape.dims[q->axis]);
  return XRT_OK;
}

static bool xrt__vsame_dims_ids(const xrt__vctx *v, int32_t a, int32_t b) {
  return xrt__same_dims(xrt__vshape(v, a), xrt__vshape(v, b));
}

static xrt_status xrt__verify_uniform_quantize(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  int32_t in = v->op->operands[0], out = v->op->results[0];
  const xrt_ir_quant *qi = xrt__vtype(v, in)->quant;
  const xrt_ir_quant *qo = xrt__vtype(v, out)->quant;
  if ((s = xrt__vquant(v, in, "operand")) || (s = xrt__vquant(v, out, "result")))
    return s;
  if (!qo) return xrt__vfail(v, "result must be a quantized tensor");
  xrt_dtype it = xrt__vshape(v, in)->dtype;
  if (!qi && !xrt_dtype_is_float(it))
    return xrt__vfail(v, "operand must be a float or quantized tensor, not %s",
                      xrt_dtype_name(it));
  if (!xrt__vsame_dims_ids(v, in, out))
    return xrt__vfail(v, "operand and result shapes differ");
  xrt_dtype want = qi ? qi->expressed : it;
  if (qo->expressed != want)
    return xrt__vfail(v, "result expressed type %s must be %s",
                      xrt_dtype_name(qo->expressed), xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_uniform_dequantize(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  int32_t in = v->op->operands[0], out = v->op->results[0];
  const xrt_ir_quant *qi = xrt__vtype(v, in)->quant;
  if ((s = xrt__vquant(v, in, "operand"))) return s;
  if (!qi) return xrt__vfail(v, "operand must be a quantized tensor");
  if (xrt__vtype(v, out)->quant)
    return xrt__vfail(v, "result must not be quantized");
  if (!xrt__vsame_dims_ids(v, in, out))
    return xrt__vfail(v, "operand and result shapes differ");
  if (xrt__vshape(v, out)->dtype != qi->expressed)
    return xrt__vfail(v, "result element type %s must be the expressed type "
                      "%s", xrt_dtype_name(xrt__vshape(v, out)->dtype),
                      xrt_dtype_name(qi->expressed));
  return XRT_OK;
}

static xrt_status xrt__verify_reduce_precision(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  int32_t in = v->op->operands[0], out = v->op->results[0];
  const xrt_ir_quant *q = xrt__vtype(v, in)->quant;
  if ((s = xrt__vquant(v, in, "operand")) || (s = xrt__vquant(v, out, "result")))
    return s;
  xrt_dtype t = xrt__vshape(v, in)->dtype;
  if (q ? q->axis >= 0 : !xrt_dtype_is_float(t))
    return xrt__vfail(v, "operand must be a float or per-tensor quantized "
                      "tensor, not %s", xrt_dtype_name(t));
  if ((s = xrt__vsame(v, in, out, "result type differs from operand type")))
    return s;
  const xrt_ir_attr *e = xrt__vattr(v, "exponent_bits", XRT_ATTR_INT);
  const xrt_ir_attr *m = xrt__vattr(v, "mantissa_bits", XRT_ATTR_INT);
  if (!e || !m)
    return xrt__vfail(v, "needs integer attributes 'exponent_bits' and "
                      "'mantissa_bits'");
  if (e->i < 1)
    return xrt__vfail(v, "exponent_bits must be >= 1, got %" PRId64, e->i);
  if (m->i < 0)
    return xrt__vfail(v, "mantissa_bits must be >= 0, got %" PRId64, m->i);
  return XRT_OK;
}

static xrt_status xrt__verify_mulhi(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s) return s;
  if ((s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                      "operand types differ")) ||
      (s = xrt__vsame(v, v->op->operands[0], v->op->results[0],
                      "result type differs from operand type")))
    return s;
  xrt_dtype t = xrt__operand(v, 0)->dtype;
  if (!xrt__dtype_is_int(t) || xrt__vtype(v, v->op->operands[0])->quant)
    return xrt__vfail(v, "element type %s is not an integer type",
                      xrt_dtype_name(t));
  return XRT_OK;
}

/* Elementwise ops on quantized tensors (spec: e.g. add C2): every operand
 * and the result are quantized (compare: the result is i1) with the same
 * storage and expressed types, and a per-axis operand is quantized along
 * the result's dimension.  Plain tensors are xrt.c's business. */
static xrt_status xrt__verify_quant_elementwise(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  bool any = false;
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (xrt__vtype(v, id)->kind == XRT_TYPE_TENSOR && xrt__vtype(v, id)->quant)
      any = true;
  }
  if (!any || op->num_results != 1) return XRT_OK;
  bool cmp = op->code == XRT_OP_COMPARE;
  int32_t res = op->results[0];
  const xrt_ir_quant *qr = xrt__vtype(v, res)->quant;
  xrt_status s = xrt__vquant(v, res, "result");
  if (s) return s;
  if (cmp ? (qr || xrt__vshape(v, res)->dtype != XRT_PRED) : !qr)
    return xrt__vfail(v, cmp ? "result of a quantized compare must be i1"
                             : "operands and result must all be quantized");
  const xrt_ir_quant *q0 = NULL;
  for (int32_t i = 0; i < op->num_operands; i++) {
    int32_t id = op->operands[i];
    const xrt_ir_quant *q = xrt__vtype(v, id)->quant;
    if ((s = xrt__vquant(v, id, "operand"))) return s;
    if (!q) return xrt__vfail(v, "operands and result must all be quantized");
    if (!xrt__vsame_dims_ids(v, id, res))
      return xrt__vfail(v, "operand %d and result shapes differ", (int)i);
    if (!q0) q0 = q;
    if (q->storage != q0->storage || q->expressed != q0->expressed ||
        (qr && (q->storage != qr->storage || q->expressed != qr->expressed)))
      return xrt__vfail(v, "quantized operands and result need the same "
                        "storage and expressed types");
    if (qr && q->axis >= 0 && q->axis != qr->axis)
      return xrt__vfail(v, "operand %d is quantized along dimension %d, the "
                        "result along %d", (int)i, (int)q->axis, (int)qr->axis);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_types(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_UNIFORM_QUANTIZE: return xrt__verify_uniform_quantize(v);
  case XRT_OP_UNIFORM_DEQUANTIZE: return xrt__verify_uniform_dequantize(v);
  case XRT_OP_REDUCE_PRECISION: return xrt__verify_reduce_precision(v);
  case XRT_OP_CHLO_MULHI: return xrt__verify_mulhi(v);
  case XRT_OP_ADD: case XRT_OP_SUBTRACT: case XRT_OP_MULTIPLY:
  case XRT_OP_DIVIDE: case XRT_OP_REMAINDER: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: case XRT_OP_POWER: case XRT_OP_ATAN2:
  case XRT_OP_NEGATE: case XRT_OP_ABS: case XRT_OP_SIGN:
  case XRT_OP_EXPONENTIAL: case XRT_OP_EXPONENTIAL_MINUS_ONE:
  case XRT_OP_LOG: case XRT_OP_LOG_PLUS_ONE: case XRT_OP_LOGISTIC:
  case XRT_OP_SQRT: case XRT_OP_RSQRT: case XRT_OP_CBRT: case XRT_OP_TANH:
  case XRT_OP_SINE: case XRT_OP_COSINE: case XRT_OP_TAN:
  case XRT_OP_FLOOR: case XRT_OP_CEIL: case XRT_OP_ROUND_NEAREST_AFZ:
  case XRT_OP_ROUND_NEAREST_EVEN: case XRT_OP_COMPARE:
    /* reached once xrt.c's elementwise checks pass quantized ops on */
    return xrt__verify_quant_elementwise(v);
  default: return XRT_OK;
  }
}

/* is_finite, real, imag: a float or complex operand, the result's element
 * type as the spec derives it, and the operand's shape. */
static xrt_status xrt__verify_float_unary(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  xrt_dtype t = in->dtype, want;
  bool cplx = xrt_dtype_is_complex(t);
  if (!cplx && !xrt_dtype_is_float(t) && !xrt__vtype(v, v->op->operands[0])->quant)
    return xrt__vfail(v, "operand must be a float or complex tensor, not %s",
                      xrt_dtype_name(t));
  if (v->op->code == XRT_OP_IS_FINITE) {
    if (cplx) return xrt__vfail(v, "operand must be a float tensor");
    want = XRT_PRED;
  } else {
    want = t == XRT_C64 ? XRT_F32 : t == XRT_C128 ? XRT_F64 : t;
  }
  if (out->dtype != want || !xrt__same_dims(in, out))
    return xrt__vfail(v, "result must be tensor of %s with the operand's shape",
                      xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_complex(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                           "operand types differ")))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  xrt_dtype want = in->dtype == XRT_F32 ? XRT_C64
                 : in->dtype == XRT_F64 ? XRT_C128 : XRT_DTYPE_INVALID;
  if (!want) return xrt__vfail(v, "operands must be f32 or f64");
  if (out->dtype != want || !xrt__same_dims(in, out))
    return xrt__vfail(v, "result must be tensor of %s with the operands' shape",
                      xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_op(xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_IS_FINITE: case XRT_OP_REAL: case XRT_OP_IMAG:
    return xrt__verify_float_unary(v);
  case XRT_OP_COMPLEX: return xrt__verify_complex(v);
  case XRT_OP_REPLICA_ID: case XRT_OP_PARTITION_ID: {
    xrt_status s = xrt__vcounts(v, 0, 1);
    const xrt_shape *r = s ? NULL : xrt__result(v, 0);
    if (!s && (r->rank != 0 || r->dtype != XRT_U32))
      s = xrt__vfail(v, "result must be tensor<ui32>");
    return s;
  }
  case XRT_OP_COMPARE: return xrt__verify_compare(v);
  case XRT_OP_SELECT: return xrt__verify_select(v);
  case XRT_OP_CLAMP: return xrt__verify_clamp(v);
  case XRT_OP_CONVERT: return xrt__verify_convert(v);
  case XRT_OP_BITCAST_CONVERT: return xrt__verify_bitcast(v);
  case XRT_OP_IOTA: return xrt__verify_iota(v);
  case XRT_OP_BROADCAST_IN_DIM: return xrt__verify_broadcast_in_dim(v);
  case XRT_OP_BROADCAST: return xrt__verify_broadcast(v);
  case XRT_OP_RESHAPE: return xrt__verify_reshape(v);
  case XRT_OP_TRANSPOSE: return xrt__verify_transpose(v);
  case XRT_OP_SLICE: return xrt__verify_slice(v);
  case XRT_OP_CONCATENATE: return xrt__verify_concatenate(v);
  case XRT_OP_PAD: return xrt__verify_pad(v);
  case XRT_OP_REVERSE: return xrt__verify_reverse(v);
  case XRT_OP_REDUCE: return xrt__verify_reduce(v);
  case XRT_OP_DOT_GENERAL: return xrt__verify_dot_general(v);
  case XRT_OP_DOT: return xrt__verify_dot(v);
  case XRT_OP_GET_DIMENSION_SIZE: return xrt__verify_get_dimension_size(v);
  case XRT_OP_WHILE: return xrt__verify_while(v);
  case XRT_OP_FUNC_CALL: return xrt__verify_call(v);
  case XRT_OP_CONSTANT: return xrt__verify_constant(v);
  case XRT_OP_CUSTOM_CALL: return xrt__verify_custom_call(v);
  default: {
    xrt_status s = XRT_OK;
    if (xrt__elementwise_mask(v->op->code)) {
      /* quantized operands have further rules in the types family */
      s = xrt__verify_elementwise(v);
      return s ? s : xrt__verify_types(v);
    }
    s = xrt__verify_index(v);
    if (!s) s = xrt__verify_ctrl(v);
    if (!s) s = xrt__verify_linalg(v);
    if (!s) s = xrt__verify_types(v);
    return s;
  }
  }
}

static bool xrt__is_terminator(xrt_opcode c) {
  return c == XRT_OP_RETURN || c == XRT_OP_FUNC_RETURN;
}

static xrt_status xrt__verify_region(xrt__vctx *v, const xrt_ir_region *r,
                                     int depth) {
  if (depth > 256) return xrt__vfail(v, "regions are nested too deeply");
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    v->op = op;
    bool last = i == r->num_ops - 1;
    if (xrt__is_terminator(op->code) != last)
      return xrt__vfail(v, last ? "a region must end with a return"
                                : "a return must be the last op of its region");
    xrt_status s = xrt__verify_op(v);
    if (s) return s;
    for (int32_t k = 0; k < op->num_regions; k++) {
      if ((s = xrt__verify_region(v, &op->regions[k], depth + 1))) return s;
      v->op = op;
    }
  }
  if (r->num_ops == 0) return xrt__fail(XRT_INVALID_ARGUMENT,
                                        "%s:%d:%d: empty region in @%s",
                                        v->func->loc.file, (int)v->func->loc.line,
                                        (int)v->func->loc.col, v->func->name);
  return XRT_OK;
}

static xrt_status xrt__verify_func(xrt__vctx *v) {
  const xrt_ir_func *f = v->func;
  xrt_status s = xrt__verify_region(v, &f->body, 0);
  if (s) return s;
  const xrt_ir_op *ret = &f->body.ops[f->body.num_ops - 1];
  v->op = ret;
  if (ret->num_operands != f->num_results)
    return xrt__vfail(v, "@%s returns %d value(s) but is declared with %d",
                      f->name, (int)ret->num_operands, (int)f->num_results);
  for (int32_t i = 0; i < f->num_results; i++)
    if (!xrt__type_equal(&f->value_types[ret->operands[i]],
                         &f->result_types[i]))
      return xrt__vfail(v, "returned value %d of @%s has the wrong type",
                        (int)i, f->name);
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_module(const xrt_ir_module *m) {
  xrt__vctx v = {m, NULL, NULL};
  for (int32_t i = 0; i < m->num_funcs; i++) {
    v.func = &m->funcs[i];
    xrt_status s = xrt__verify_func(&v);
    if (s) return s;
  }
  return XRT_OK;
}
