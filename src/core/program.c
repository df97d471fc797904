/*
 * src/core/program.c - programs and compilation.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

void xrt_compile_options_init(xrt_compile_options *o) {
  if (o) memset(o, 0, sizeof *o);
}

void xrt_execute_options_init(xrt_execute_options *o) {
  if (o) memset(o, 0, sizeof *o);
}

/* The host function an op calls: custom_call's target, or the fixed names
 * under which a program's infeed/outfeed/send/recv reach the host. */
XRT__PRIVATE const char *xrt__host_target(const xrt_ir_op *op) {
  switch (op->code) {
  case XRT_OP_CUSTOM_CALL: {
    const xrt_ir_attr *t = xrt_ir_op_attr(op, "call_target_name");
    return t ? t->s : NULL;
  }
  case XRT_OP_INFEED: return "xrt.infeed";
  case XRT_OP_OUTFEED: return "xrt.outfeed";
  case XRT_OP_SEND: return "xrt.send";
  case XRT_OP_RECV: return "xrt.recv";
  default: return NULL;
  }
}

/* Numbers the ops that call the host (op->callee) into a list. */
static int32_t xrt__number_custom_calls(const xrt_ir_region *r,
                                        const xrt_ir_op **list, int32_t n) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* still ours: not yet shared */
    for (int32_t k = 0; k < op->num_regions; k++)
      n = xrt__number_custom_calls(&op->regions[k], list, n);
    if (!xrt__host_target(op)) continue;
    if (list) list[n] = op;
    op->callee = n++;
  }
  return n;
}

XRT__PRIVATE xrt_status xrt__program_index(xrt__program *p) {
  xrt_ir_module *m = p->module;
  int32_t n = 0;
  for (int32_t i = 0; i < m->num_funcs; i++)
    n = xrt__number_custom_calls(&m->funcs[i].body, NULL, n);
  p->custom_calls = (const xrt_ir_op **)xrt__arena_alloc(
      &p->arena, sizeof(xrt_ir_op *) * (size_t)(n + 1));
  if (!p->custom_calls) return xrt__nomem("the program's custom_call index");
  n = 0;
  for (int32_t i = 0; i < m->num_funcs; i++)
    n = xrt__number_custom_calls(&m->funcs[i].body, p->custom_calls, n);
  m->num_custom_calls = n;
  return XRT_OK;
}

/* ---- constructs xrt reads but does not run (XRT__OP_EXTRA_FIRST) ---- */

/* What of type t xrt does not run ("memref types"), or NULL. */
static const char *xrt__type_unsupported(const xrt_ir_type *t) {
  switch (t->kind) {
  case XRT_TYPE_TOKEN: return NULL;
  case XRT_TYPE_TUPLE:
    for (int32_t i = 0; i < t->num_elems; i++) {
      const char *w = xrt__type_unsupported(&t->elems[i]);
      if (w) return w;
    }
    return NULL;
  case XRT_TYPE_TENSOR:
    if (t->shape.dtype == XRT__DT_INDEX) return "tensors of index elements";
    return NULL;
  case XRT__TYPE_MEMREF: return "memref types";
  case XRT__TYPE_FUTURE: return "!stablehlo.future types";
  default: return "this type";
  }
}

typedef struct xrt__unsup {
  char *buf;
  size_t cap;
  bool found;
} xrt__unsup;

static void xrt__unsup_at(xrt__unsup *u, xrt_ir_loc loc, const char *who,
                          const char *what, const char *kind, int32_t index) {
  u->found = true;
  if (kind)
    snprintf(u->buf, u->cap, "%s:%d:%d: %s: %s %d: xrt does not run %s",
             loc.file ? loc.file : "<input>", (int)loc.line, (int)loc.col, who,
             kind, (int)index, what);
  else
    snprintf(u->buf, u->cap, "%s:%d:%d: %s: xrt does not run %s",
             loc.file ? loc.file : "<input>", (int)loc.line, (int)loc.col, who,
             what);
}

/* The values ids[0..n) of f, as kind ("result") of who at loc. */
static void xrt__unsup_values(xrt__unsup *u, const xrt_ir_func *f,
                              const int32_t *ids, int32_t n, xrt_ir_loc loc,
                              const char *who, const char *kind) {
  for (int32_t i = 0; i < n && !u->found; i++) {
    if (ids[i] < 0 || ids[i] >= f->num_values) continue;
    const char *w = xrt__type_unsupported(&f->value_types[ids[i]]);
    if (w) xrt__unsup_at(u, loc, who, w, kind, i);
  }
}

static void xrt__unsup_region(xrt__unsup *u, const xrt_ir_func *f,
                              const xrt_ir_region *r, const xrt_ir_op *owner) {
  if (owner)
    xrt__unsup_values(u, f, r->args, r->num_args, owner->loc, owner->name,
                      "block argument");
  for (int32_t i = 0; i < r->num_ops && !u->found; i++) {
    const xrt_ir_op *op = &r->ops[i];
    const char *name = op->name ? op->name : "an op";
    if ((int)op->code >= XRT__OP_EXTRA_FIRST && (int)op->code < XRT__OP_EXTRA_END) {
      xrt__unsup_at(u, op->loc, name, "this op", NULL, 0);
      return;
    }
    xrt__unsup_values(u, f, op->results, op->num_results, op->loc, name,
                      "result");
    for (int32_t k = 0; k < op->num_regions && !u->found; k++)
      xrt__unsup_region(u, f, &op->regions[k], op);
  }
}

/* Describes the first construct of m that xrt reads but does not run into
 * buf; false when there is none. */
static bool xrt__find_unsupported(const xrt_ir_module *m, char *buf, size_t cap) {
  xrt__unsup u = {buf, cap, false};
  for (int32_t i = 0; i < m->num_funcs && !u.found; i++) {
    const xrt_ir_func *f = &m->funcs[i];
    char who[160];
    snprintf(who, sizeof who, "@%s", f->name ? f->name : "");
    xrt__unsup_values(&u, f, f->body.args, f->body.num_args, f->loc, who,
                      "argument");
    for (int32_t k = 0; k < f->num_results && !u.found; k++) {
      const char *w = xrt__type_unsupported(&f->result_types[k]);
      if (w) xrt__unsup_at(&u, f->loc, who, w, "result", k);
    }
    if (!u.found) xrt__unsup_region(&u, f, &f->body, NULL);
  }
  return u.found;
}

/* Leaves out the attributes of StableHLO ops that hold the value StableHLO
 * leaves out (xrt__vhlo_ir_default): as a portable artifact reads, so that
 * a program's text and its artifact give one IR (and print alike). */
static void xrt__drop_defaults(const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* still ours: not yet shared */
    xrt_ir_attr *attrs = (xrt_ir_attr *)op->attrs;
    int32_t k = 0;
    for (int32_t j = 0; j < op->num_attrs; j++)
      if (!xrt__vhlo_ir_default(op, &attrs[j])) attrs[k++] = attrs[j];
    op->num_attrs = k;
    for (int32_t j = 0; j < op->num_regions; j++)
      xrt__drop_defaults(&op->regions[j]);
  }
}

static void xrt__drop_module_defaults(const xrt_ir_module *m) {
  for (int32_t i = 0; i < m->num_funcs; i++) xrt__drop_defaults(&m->funcs[i].body);
}

/* Parses and verifies text into the program's arena. */
static xrt_status xrt__program_build(xrt__program *p, const char *text,
                                     size_t len, const xrt_compile_options *o) {
  const char *file = o && o->filename ? o->filename : "<input>";
  int line_offset = o ? o->line_offset : 0;
  char *fname = xrt__arena_strndup(&p->arena, file, strlen(file));
  if (!fname) return xrt__nomem("the program's file name");
  xrt__bctext bc = {0};
  const char *input = text;
  size_t input_len = len;
  if (xrt__is_bytecode(text, len)) { /* a portable artifact: read as text */
    xrt_status b = xrt__bytecode_read(&p->arena, text, len, fname, &bc);
    if (b) return b;
    text = bc.text;
    len = bc.len;
    line_offset = 0;
  }
  xrt_status s = bc.text ? xrt__parse_module_bc(&p->arena, &bc, &p->module, &p->shard)
                         : xrt__parse_module(&p->arena, text, len, fname,
                                             line_offset, &p->module, &p->shard);
  if (bc.text) s = xrt__bytecode_locate(&bc, s, s ? NULL : p->module);
  if (s) return s;
  if (p->module->num_funcs == 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:1: the program has no "
                     "function", file, 1 + line_offset);
  /* A shape-polymorphic program is verified once refined (refine.c); one
   * that holds what xrt does not run is only parsed (its compiles are
   * refused). */
  char why[512];
  if (xrt__find_unsupported(p->module, why, sizeof why)) {
    p->unsupported = xrt__arena_strndup(&p->arena, why, strlen(why));
    if (!p->unsupported) return xrt__nomem("the program's diagnostics");
  }
  p->dynamic = xrt__refine_needed(p->module);
  bool verify = !p->dynamic && !p->unsupported;
  if ((s = verify ? xrt__normalize_module(&p->arena, p->module)
                  : xrt__normalize_attrs(&p->arena, p->module)) ||
      (verify && (s = xrt__verify_module(p->module))))
    return s;
  xrt__drop_module_defaults(p->module); /* once checked as written */
  /* Kept for plugins that compile the program with another compiler (a
   * PJRT plugin's PJRT_Client_Compile); an artifact as it came (its text
   * names large constants by reference, and PJRT reads artifacts). */
  if (bc.text) len = input_len;
  const char *src = xrt__arena_strndup(&p->arena, bc.text ? input : text, len);
  if (!src) return xrt__nomem("the program's text");
  p->module->source = src;
  p->module->source_size = len;
  return xrt__program_index(p);
}

/* Section 12b: the compilation cache's entry points. */

static xrt__program *xrt__program_get(const xrt_program *p) {
  return (xrt__program *)xrt__hget(p, XRT__H_PROGRAM);
}

XRT__PRIVATE void xrt__program_unref(xrt__program *p) {
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  xrt_allocator a = p->allocator;
  xrt__program *base = p->base; /* a refined copy's (refine.c) */
  xrt__arena_release(&p->arena);
  xrt__free(&a, p);
  if (base) xrt__program_unref(base);
}

XRT__PRIVATE xrt_status xrt__program_create(xrt_allocator a, const char *text,
                                      size_t len,
                                      const xrt_compile_options *options,
                                      xrt__program **out) {
  xrt__program *p = (xrt__program *)xrt__calloc(&a, 1, sizeof *p);
  if (!p) return xrt__nomem("the program");
  p->allocator = a;
  atomic_init(&p->refs, 1);
  xrt__arena_init(&p->arena, a);
  xrt_status s = xrt__program_build(p, text, len, options);
  if (s) {
    xrt__program_unref(p);
    return s;
  }
  *out = p;
  return XRT_OK;
}

xrt_status xrt_program_parse(const char *text, size_t len,
                             const xrt_compile_options *options,
                             xrt_program **out_program) {
  XRT__CHECK_ARG(out_program, "out_program is NULL");
  *out_program = NULL;
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  xrt__program *p;
  xrt_status s = xrt__program_create(xrt_allocator_system(), text ? text : "",
                                     len, options, &p);
  if (s) return s;
  xrt__cache_digest_program(p, text ? text : "", len); /* section 12b */
  if (!(p->handle = xrt__hnew(p, XRT__H_PROGRAM))) {
    xrt__program_unref(p);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  *out_program = (xrt_program *)p->handle;
  return XRT_OK;
}

void xrt_program_release(xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  if (!p) return;
  xrt__hfree_handle(p->handle);
  xrt__program_unref(p);
}

int xrt_program_function_count(const xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  return p ? p->module->num_funcs : -1;
}

const char *xrt_program_function_name(const xrt_program *program, int index) {
  xrt__program *p = xrt__program_get(program);
  if (!p || index < 0 || index >= p->module->num_funcs) return NULL;
  return p->module->funcs[index].name;
}

const xrt_ir_module *xrt_program_module(const xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  return p ? p->module : NULL;
}

/* The entry function: the one named, else main, else the only one. */
XRT__PRIVATE xrt_status xrt__find_entry(const xrt_ir_module *m, const char *entry,
                                  int32_t *out) {
  const char *want = entry ? entry : "main";
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, want) == 0) return *out = i, XRT_OK;
  if (!entry && m->num_funcs == 1) return *out = 0, XRT_OK;
  return xrt__fail(XRT_NOT_FOUND, "the program has no function @%s (it has "
                   "%d function(s), e.g. @%s)", want, (int)m->num_funcs,
                   m->num_funcs ? m->funcs[0].name : "");
}

/* Looks up the client's host function for every custom_call op. */
static xrt_status xrt__bind_custom_calls(xrt__executable *e) {
  xrt__program *p = e->program;
  int32_t n = p->module->num_custom_calls;
  e->bindings = (xrt_host_binding *)xrt__calloc(
      &e->client->allocator, (size_t)n + 1, sizeof(xrt_host_binding));
  if (!e->bindings) return xrt__nomem("the executable's host function bindings");
  for (int32_t k = 0; k < n; k++) {
    const xrt_ir_op *op = p->custom_calls[k];
    const char *target = xrt__host_target(op);
    if (!xrt__host_lookup(e->client, target, &e->bindings[k].fn,
                          &e->bindings[k].user))
      return xrt__fail(XRT_NOT_FOUND, "%s:%d:%d: %s: no host function named "
                       "'%s' is registered (see "
                       "xrt_client_register_host_function)", op->loc.file,
                       (int)op->loc.line, (int)op->loc.col, op->name, target);
  }
  return XRT_OK;
}

static xrt_status xrt__entry_shapes(xrt__executable *e) {
  const xrt_ir_func *f = &e->program->module->funcs[e->entry];
  e->num_inputs = f->body.num_args;
  e->num_outputs = f->num_results;
  e->inputs = (xrt_shape *)xrt__calloc(&e->client->allocator,
                                       (size_t)e->num_inputs + 1,
                                       sizeof(xrt_shape));
  e->outputs = (xrt_shape *)xrt__calloc(&e->client->allocator,
                                        (size_t)e->num_outputs + 1,
                                        sizeof(xrt_shape));
  if (!e->inputs || !e->outputs)
    return xrt__nomem("the executable's input and output shapes");
  for (int i = 0; i < e->num_inputs + e->num_outputs; i++) {
    bool in = i < e->num_inputs;
    const xrt_ir_type *t = in ? &f->value_types[f->body.args[i]]
                              : &f->result_types[i - e->num_inputs];
    if (t->kind != XRT_TYPE_TENSOR)
      return xrt__fail(XRT_UNIMPLEMENTED, "%s:%d:%d: @%s: %s %d is not a "
                       "tensor; only tensors cross the entry function's "
                       "boundary", f->loc.file, (int)f->loc.line,
                       (int)f->loc.col, f->name, in ? "argument" : "result",
                       in ? i : i - e->num_inputs);
    if (in) e->inputs[i] = t->shape;
    else e->outputs[i - e->num_inputs] = t->shape;
  }
  return XRT_OK;
}

/* Frees an executable (its handle is already invalid). */
/* Frees what a dead executable holds (its handle is dead) and keeps the
 * shell, with its handle slot, for the next compile: shells are freed only
 * with the client, which makes the lock-free xrt__hpin safe. */

XRT__PRIVATE void xrt__executable_destroy(xrt__executable *e) {
  xrt__client *c = e->client;
  if (e->shared) {
    xrt__exe_shared_unref(e->shared); /* it owns what the fields point to */
    e->shared = NULL;
  } else {
    if (e->pexe && c->api->executable_destroy)
      c->api->executable_destroy(e->pexe);
    xrt__free(&c->allocator, e->bindings);
    xrt__free(&c->allocator, e->inputs);
    xrt__free(&c->allocator, e->outputs);
    xrt__free(&c->allocator, e->assignment);
    if (e->program) xrt__program_unref(e->program);
  }
  e->pexe = NULL;
  e->bindings = NULL;
  e->inputs = e->outputs = NULL;
  e->assignment = NULL;
  e->program = NULL;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_remove(&e->link);
  xrt__link_add(&c->free_exes, &e->link);
  xrt__spin_unlock(&c->objs_lock);
}

/* A zeroed executable: a recycled shell (keeping its handle slot) or new. */
XRT__PRIVATE xrt__executable *xrt__executable_obj(xrt__client *c) {
  xrt__executable *e = NULL;
  xrt__spin_lock(&c->objs_lock);
  if (c->free_exes.next != &c->free_exes) {
    e = (xrt__executable *)(void *)c->free_exes.next;
    xrt__link_remove(&e->link);
  }
  xrt__spin_unlock(&c->objs_lock);
  if (!e) {
    e = (xrt__executable *)xrt__calloc(&c->allocator, 1, sizeof *e);
    if (e) xrt__link_init(&e->link);
    return e;
  }
  /* Zero the fields between the count (0, so stale lookups are refused;
   * only atomic accesses) and the handle (its slot is kept). */
  size_t from = offsetof(xrt__executable, program);
  memset((char *)e + from, 0, offsetof(xrt__executable, handle) - from);
  return e;
}

XRT__PRIVATE void xrt__executable_unref(xrt__executable *e) {
  if (atomic_fetch_sub(&e->refs, 1) == 1) xrt__executable_destroy(e);
}

/* The launch shape and device assignment of an executable: options, else
 * the module's mhlo.num_replicas / num_partitions, logical id i on device
 * i. */
static xrt_status xrt__executable_launch(xrt__executable *e,
                                         const xrt_compile_options *o) {
  const xrt_ir_module *m = e->program->module;
  xrt__client *c = e->client;
  if (c->mp) return xrt__mp_executable_launch(e, o);
  int64_t R = o && o->num_replicas ? o->num_replicas : m->num_replicas;
  int64_t P = o && o->num_partitions ? o->num_partitions : m->num_partitions;
  if (R < 1 || P < 1)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_replicas (%" PRId64 ") and "
                     "num_partitions (%" PRId64 ") must be at least 1", R, P);
  if (R * P > c->num_devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%" PRId64 " replica(s) x %" PRId64
                     " partition(s) need %" PRId64 " devices, the client has "
                     "%d", R, P, R * P, c->num_devices);
  e->num_replicas = (int32_t)R;
  e->num_partitions = (int32_t)P;
  e->assignment = (int32_t *)xrt__calloc(&c->allocator, (size_t)(R * P),
                                         sizeof(int32_t));
  if (!e->assignment) return xrt__nomem("the executable's device assignment");
  for (int64_t i = 0; i < R * P; i++) {
    int dev = o && o->device_assignment ? o->device_assignment[i] : (int)i;
    if (dev < 0 || dev >= c->num_devices)
      return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64 "] "
                       "is %d, outside 0..%d", i, dev, c->num_devices - 1);
    for (int64_t j = 0; j < i; j++)
      if (e->assignment[j] == dev)
        return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64
                         "] and [%" PRId64 "] are both device %d", j, i, dev);
    e->assignment[i] = dev;
  }
  return XRT_OK;
}

/* Whether a region is cheap to run and talks to no other participant or
 * the host: no loops, collectives, host calls or ops whose cost grows
 * beyond their operand and result sizes, and at most *budget elements
 * read and written in all (which it decrements). */
static bool xrt__region_cheap(const xrt_ir_module *m, const xrt_ir_func *f,
                              const xrt_ir_region *r, int64_t *budget,
                              int depth) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    switch (op->code) {
    case XRT_OP_IF: case XRT_OP_CASE: case XRT_OP_FUNC_CALL:
      break;
    case XRT_OP_WHILE: case XRT_OP_ALL_GATHER: case XRT_OP_ALL_REDUCE:
    case XRT_OP_ALL_TO_ALL: case XRT_OP_COLLECTIVE_BROADCAST:
    case XRT_OP_COLLECTIVE_PERMUTE: case XRT_OP_COLLECTIVE_REDUCE:
    case XRT_OP_REDUCE_SCATTER: case XRT_OP_SEND: case XRT_OP_RECV:
    case XRT_OP_INFEED: case XRT_OP_OUTFEED: case XRT_OP_CUSTOM_CALL:
    case XRT_OP_DOT: case XRT_OP_DOT_GENERAL: case XRT_OP_CONVOLUTION:
    case XRT_OP_DYNAMIC_CONV: case XRT_OP_FFT: case XRT_OP_CHOLESKY:
    case XRT_OP_TRIANGULAR_SOLVE: case XRT_OP_CHLO_RAGGED_DOT:
    case XRT_OP_CHLO_SCAN: case XRT_OP_COMPOSITE:
      return false;
    default:
      if (op->num_regions) return false; /* a region per element or window */
      break;
    }
    for (int32_t k = 0; k < op->num_operands + op->num_results; k++) {
      int32_t v = k < op->num_operands ? op->operands[k]
                                       : op->results[k - op->num_operands];
      const xrt_ir_type *t = &f->value_types[v];
      if (t->kind == XRT_TYPE_TENSOR) *budget -= xrt_shape_numel(&t->shape);
    }
    if (*budget < 0 || depth > 8) return false;
    for (int32_t k = 0; k < op->num_regions; k++)
      if (!xrt__region_cheap(m, f, &op->regions[k], budget, depth + 1))
        return false;
    if (op->code == XRT_OP_FUNC_CALL) {
      if (op->callee < 0 || op->callee >= m->num_funcs) return false;
      const xrt_ir_func *g = &m->funcs[op->callee];
      if (!xrt__region_cheap(m, g, &g->body, budget, depth + 1)) return false;
    }
  }
  return true;
}

XRT__PRIVATE xrt_status xrt__executable_build(xrt__executable *e,
                                        const xrt_compile_options *o) {
  xrt__client *c = e->client;
  if (e->program->unsupported)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s", e->program->unsupported);
  xrt_status s = xrt__refine_executable(e, o); /* shape-polymorphic */
  if (s) return s;
  const xrt_ir_module *m = e->program->module;
  s = xrt__find_entry(m, o ? o->entry : NULL, &e->entry);
  if (s || (s = xrt__executable_launch(e, o)) ||
      (s = xrt__shard_check(e->program->shard, e->num_replicas,
                            e->num_partitions)) ||
      (s = xrt__entry_shapes(e)) ||
      (s = xrt__bind_custom_calls(e)))
    return s;
  int64_t budget = 1 << 14;
  /* XRT_NO_INLINE=1 sends every launch through the device queues (to
   * measure or debug them). */
  const char *no_inline = getenv("XRT_NO_INLINE");
  bool together = (c->reg->desc.capabilities & XRT_CAP_LAUNCH_TOGETHER) &&
                  (int64_t)e->num_replicas * e->num_partitions > 1;
  e->inline_ok = !(no_inline && *no_inline && *no_inline != '0') &&
                 !together &&
                 xrt__region_cheap(m, &m->funcs[e->entry],
                                   &m->funcs[e->entry].body, &budget, 0);
  xrt_plugin_compile_args args = {sizeof args, m, e->entry, e->bindings,
                                  e->num_replicas, e->num_partitions,
                                  e->assignment, NULL, 0, 0, 0, 0, NULL, NULL,
                                  0};
  xrt__mp_compile_args(e, &args);
  xrt_plugin_error err = {{0}};
  if ((s = xrt__plugin_check_version(c->reg, m))) return s;
  XRT__PLUGIN_NEED(c, compile);
  XRT__STAT(c, COMPILES, 1);
  if ((s = c->api->compile(c->pc, &args, &e->pexe, &err)))
    return xrt__fail_plugin(s, c->api->name, &err);
  if (!e->pexe)
    return xrt__fail(XRT_INTERNAL, "plugin '%s': compile returned OK without "
                     "an executable", c->api->name);
  return XRT_OK;
}

/* Gives a built executable its count and handle (the next generation of
 * a recycled shell's slot, else a new one). */
XRT__PRIVATE xrt_status xrt__executable_publish(xrt__executable *e) {
  atomic_store_explicit(&e->refs, 1, memory_order_release);
  e->handle = e->handle ? xrt__hrenew(e->handle, XRT__H_EXECUTABLE)
                        : xrt__hnew(e, XRT__H_EXECUTABLE);
  if (e->handle) return XRT_OK;
  atomic_store_explicit(&e->refs, 0, memory_order_relaxed); /* unreachable */
  return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
}

/* Compiles a program for a client; the executable takes a reference. */
XRT__PRIVATE xrt_status xrt__compile(xrt__client *c, xrt__program *p,
                               const xrt_compile_options *o,
                               xrt_executable **out) {
  xrt__executable *e = xrt__executable_obj(c);
  if (!e) return xrt__nomem("the executable");
  e->client = c;
  e->program = p;
  atomic_fetch_add(&p->refs, 1);
  int64_t t0 = xrt__compile_begin();
  xrt_status s = xrt__executable_build(e, o);
  if (!s) s = xrt__executable_publish(e);
  if (s) {
    xrt__executable_destroy(e);
    return s;
  }
  e->name = p->module->funcs[e->entry].name;
  e->module_name = p->module->name;
  if (t0) xrt__compiled(c, e->module_name, e->name, t0);
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->executables, &e->link);
  xrt__spin_unlock(&c->objs_lock);
  *out = (xrt_executable *)e->handle;
  return XRT_OK;
}

xrt_status xrt_compile(xrt_client *client, const char *text, size_t len,
                       const xrt_compile_options *options,
                       xrt_executable **out_executable) {
  XRT__CHECK_ARG(out_executable, "out_executable is NULL");
  *out_executable = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  if (xrt__cache_wanted(c, options)) /* section 12b */
    return xrt__cache_compile(c, text ? text : "", len, NULL, options,
                              out_executable);
  xrt__program *p;
  xrt_status s = xrt__program_create(c->allocator, text ? text : "", len,
                                     options, &p);
  if (s) return s;
  s = xrt__compile(c, p, options, out_executable);
  xrt__program_unref(p);
  return s;
}

xrt_status xrt_compile_program(xrt_client *client, const xrt_program *program,
                               const xrt_compile_options *options,
                               xrt_executable **out_executable) {
  XRT__CHECK_ARG(out_executable, "out_executable is NULL");
  *out_executable = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__program *p = xrt__program_get(program);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(p, "invalid or released program");
  if (p->has_digest && xrt__cache_wanted(c, options)) /* section 12b */
    return xrt__cache_compile(c, NULL, 0, p, options, out_executable);
  return xrt__compile(c, p, options, out_executable);
}

/* A lookup without a reference: only for fields fixed at creation
 * (client, shapes) while the caller's handle stays live. */
XRT__PRIVATE xrt__executable *xrt__executable_get(const xrt_executable *e) {
  return (xrt__executable *)xrt__hget(e, XRT__H_EXECUTABLE);
}

XRT__PRIVATE xrt__executable *xrt__executable_acquire(const xrt_executable *h) {
  bool stale;
  xrt__executable *e = (xrt__executable *)xrt__hpin(
      h, XRT__H_EXECUTABLE, offsetof(xrt__executable, refs), &stale);
  if (stale) { /* released meanwhile */
    xrt__executable_unref(e);
    return NULL;
  }
  return e;
}

xrt_status xrt_executable_release(xrt_executable *executable) {
  if (!executable) return XRT_OK;
  xrt__executable *e =
      (xrt__executable *)xrt__hrevoke(executable, XRT__H_EXECUTABLE);
  XRT__CHECK_ARG(e, "invalid or already released executable");
  xrt__executable_unref(e);
  return XRT_OK;
}

/* An int field of a live executable, or -1. */
static int xrt__executable_int(const xrt_executable *executable,
                               size_t field) {
  xrt__executable *e = xrt__executable_acquire(executable);
  if (!e) return -1;
  int v;
  if (field == offsetof(xrt__executable, num_inputs)) v = e->num_inputs;
  else if (field == offsetof(xrt__executable, num_outputs)) v = e->num_outputs;
  else if (field == offsetof(xrt__executable, num_replicas)) v = e->num_replicas;
  else v = e->num_partitions;
  xrt__executable_unref(e);
  return v;
}

int xrt_executable_num_inputs(const xrt_executable *executable) {
  return xrt__executable_int(executable, offsetof(xrt__executable, num_inputs));
}

int xrt_executable_num_outputs(const xrt_executable *executable) {
  return xrt__executable_int(executable,
                             offsetof(xrt__executable, num_outputs));
}

int xrt_executable_num_replicas(const xrt_executable *executable) {
  return xrt__executable_int(executable,
                             offsetof(xrt__executable, num_replicas));
}

int xrt_executable_num_partitions(const xrt_executable *executable) {
  return xrt__executable_int(executable,
                             offsetof(xrt__executable, num_partitions));
}

xrt_device *xrt_executable_device(const xrt_executable *executable,
                                  int logical_id) {
  xrt__executable *e = xrt__executable_acquire(executable);
  if (!e) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_executable_device: invalid "
              "executable");
    return NULL;
  }
  xrt_device *d = NULL;
  int n = e->num_replicas * e->num_partitions;
  if (logical_id < 0 || logical_id >= n)
    xrt__fail(XRT_OUT_OF_RANGE, "logical id %d is outside 0..%d", logical_id,
              n - 1);
  else
    d = e->assignment[logical_id] < 0 /* another process's */
            ? xrt__mp_device_of(e, logical_id)
            : (xrt_device *)e->client->devices[e->assignment[logical_id]].handle;
  xrt__executable_unref(e);
  return d;
}

static xrt_status xrt__executable_shape(const xrt_executable *executable,
                                        int index, bool input, xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__executable *e = xrt__executable_acquire(executable);
  XRT__CHECK_ARG(e, "invalid executable");
  int n = input ? e->num_inputs : e->num_outputs;
  xrt_status s = XRT_OK;
  if (index < 0 || index >= n)
    s = xrt__fail(XRT_OUT_OF_RANGE, "%s index %d is outside 0..%d",
                  input ? "input" : "output", index, n - 1);
  else
    *out = input ? e->inputs[index] : e->outputs[index];
  xrt__executable_unref(e);
  return s;
}

xrt_status xrt_executable_input_shape(const xrt_executable *executable,
                                      int index, xrt_shape *out) {
  return xrt__executable_shape(executable, index, true, out);
}

xrt_status xrt_executable_output_shape(const xrt_executable *executable,
                                       int index, xrt_shape *out) {
  return xrt__executable_shape(executable, index, false, out);
}

const char *xrt_executable_name(const xrt_executable *executable) {
  xrt__executable *e = xrt__executable_acquire(executable);
  if (!e) return NULL;
  const char *name = e->name;
  xrt__executable_unref(e);
  return name;
}
