/*
 * arg_shapes.c - `xrt run` of a shape-polymorphic program: the argument
 * shapes to compile it for, from its --input files.  MIT licensed; see
 * LICENSE.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the entry function (entry, else main, else the only one) has an
 * argument with a `?` dimension. */
static bool entry_is_dynamic(const xrt_program *prog, const char *entry) {
  const xrt_ir_module *m = xrt_program_module(prog);
  const xrt_ir_func *f = NULL;
  for (int32_t i = 0; m && i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, entry ? entry : "main") == 0) f = &m->funcs[i];
  if (!f && !entry && m && m->num_funcs == 1) f = &m->funcs[0];
  for (int32_t a = 0; f && a < f->body.num_args; a++) {
    const xrt_ir_type *t = &f->value_types[f->body.args[a]];
    for (int32_t d = 0; t->kind == XRT_TYPE_TENSOR && d < t->shape.rank; d++)
      if (t->shape.dims[d] == XRT_DIM_DYNAMIC) return true;
  }
  return false;
}

xrt_status cli_arg_shapes(xrt_client *client, const xrt_program *prog,
                          const char *entry, const char *const *inputs,
                          int num_inputs, xrt_shape **out) {
  *out = NULL;
  if (!num_inputs || !entry_is_dynamic(prog, entry)) return XRT_OK;
  xrt_shape *shapes = calloc((size_t)num_inputs, sizeof *shapes);
  if (!shapes) return XRT_RESOURCE_EXHAUSTED;
  xrt_device *dev = xrt_client_device(client, 0);
  xrt_status s = XRT_OK;
  for (int i = 0; !s && i < num_inputs; i++) {
    xrt_buffer *b = NULL; /* read once for its shape; loaded again to run */
    s = xrt_buffer_from_npy(client, dev, inputs[i], &b);
    if (!s) s = xrt_buffer_shape(b, &shapes[i]);
    xrt_buffer_release(b);
  }
  if (s) free(shapes);
  else *out = shapes;
  return s;
}
