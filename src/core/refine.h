/*
 * src/core/refine.h - what the three files of shape refinement share:
 * refine.c (the program walk: entry shapes, dimension arguments, function
 * specialisation, regions, rewrites, shape_assertion), refine_infer.c
 * (result shapes of ops from their operands' shapes) and refine_fold.c
 * (constant folding of the small integer tensors that compute shapes).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 *
 * A shape-polymorphic program (`tensor<?x4xf32>`, as jax.export writes it
 * with symbolic shapes) is parsed with XRT_DIM_DYNAMIC in its shapes and
 * left unverified; each compile refines a copy of it for concrete argument
 * shapes, as StableHLO's stablehlo-refine-arguments and
 * stablehlo-refine-shapes passes do, and verifies that copy, which is all
 * a plugin ever sees.
 */
#include "internal.h"

/* Integer tensors of at most this many elements have their values tracked
 * (and folded): shape computations are a handful of elements, and tracking
 * large tensors would cost compile time for nothing. */
#define XRT__RFOLD_MAX 4096

/* A value's known contents (integers and pred only), or n = -1. */
typedef struct xrt__rval {
  int64_t n;
  int64_t *v;
} xrt__rval;

typedef struct xrt__refiner xrt__refiner;

/* One function instance being refined: the source function's values keep
 * their ids; types and known contents are this instance's. */
typedef struct xrt__rfn {
  xrt__refiner *r;
  const xrt_ir_func *src;
  xrt_ir_type *types; /* src->num_values */
  xrt__rval *known;   /* src->num_values */
  const xrt_ir_op **def; /* src->num_values: the (refined) op defining each */
  const xrt_ir_op *op; /* the op being refined (for messages) */
} xrt__rfn;

/* refine.c */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(3, 4)
#endif
XRT__PRIVATE xrt_status xrt__rfail(const xrt__rfn *f, xrt_status code,
                                   const char *fmt, ...);
XRT__PRIVATE void *xrt__ralloc(xrt__rfn *f, size_t bytes);
XRT__PRIVATE const xrt__rval *xrt__rknown(const xrt__rfn *f, int32_t id);

/* refine_infer.c: the result shapes op has given its operands' (refined)
 * types in f->types; dims it cannot tell are XRT_DIM_DYNAMIC, and out[i]
 * starts as result i's declared shape with every dim XRT_DIM_DYNAMIC. */
XRT__PRIVATE xrt_status xrt__rinfer(xrt__rfn *f, const xrt_ir_op *op,
                                    xrt_shape *out);
/* The static form of a dynamic_* op whose shape operands are known: *op
 * (a copy owned by the refiner) becomes it.  XRT_OK with *op unchanged
 * for any other op. */
XRT__PRIVATE xrt_status xrt__rstatic_form(xrt__rfn *f, xrt_ir_op *op);

/* refine_fold.c: computes the contents of op's results into f->known when
 * its operands are known (returns whether it did). */
XRT__PRIVATE bool xrt__rfold(xrt__rfn *f, const xrt_ir_op *op);
/* Reads a literal of an integer or pred type into n int64 values. */
XRT__PRIVATE bool xrt__rread_literal(xrt__rfn *f, const xrt_ir_literal *lit,
                                     xrt__rval *out);
/* A constant op for the known value of id (a literal in the refiner's
 * arena). */
XRT__PRIVATE xrt_status xrt__rconstant(xrt__rfn *f, int32_t id,
                                       xrt_ir_op *out);
/* Elements of s; -1 when a dimension is dynamic or the count overflows. */
XRT__PRIVATE int64_t xrt__rnumel(const xrt_shape *s);
/* Whether values of dt are tracked (integers of 8 bits or more, pred). */
XRT__PRIVATE bool xrt__rtracked(xrt_dtype dt);
