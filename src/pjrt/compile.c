/*
 * src/pjrt/compile.c - compile: the program as xrt received it, in format
 * "mlir", with compile options for the launch shape; the entry's input
 * and output types (PJRT buffers are typed, xrt memories are not); where
 * each device's arguments go in a launch.
 *
 * A program of one participant is compiled portable: xrt runs it on any
 * device of the client, so it is executed with execute_device set.  A
 * launch of several is compiled for its device assignment.
 */
#include "xrt.h"
#include "internal.h"

static void xpj_exe_free(xpj_exe *e) {
  xpj_client *c = e->c;
  if (e->le) {
    PJRT_LoadedExecutable_Destroy_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
    a.executable = e->le;
    xrt_plugin_error ignored;
    xpj_error(c->p, c->p->fn.PJRT_LoadedExecutable_Destroy(&a),
              "PJRT_LoadedExecutable_Destroy", &ignored);
  }
  xpj_free(c->al, e->in);
  xpj_free(c->al, e->out);
  xpj_free(c->al, e->in_type);
  xpj_free(c->al, e->out_type);
  xpj_free(c->al, e->device_of_lid);
  xpj_free(c->al, e->slot_of_lid);
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->cv);
  xpj_free(c->al, e);
}

static void xpj_executable_destroy(void *executable) {
  if (executable) xpj_exe_free((xpj_exe *)executable);
}

/* One input or output type of the entry: a tensor of a type PJRT has. */
static xrt_status xpj_io_type(const xpj_exe *e, const xrt_ir_type *t,
                              const char *what, int i, xrt_shape *shape,
                              PJRT_Buffer_Type *pt, xrt_plugin_error *err) {
  if (t->kind != XRT_TYPE_TENSOR)
    return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': %s %d is a %s; "
                    "xrt passes only tensors to PJRT plugins", e->c->p->name,
                    what, i, t->kind == XRT_TYPE_TUPLE ? "tuple" : "token");
  *shape = t->shape;
  *pt = xpj_type_of(t->shape.dtype);
  if (*pt == PJRT_Buffer_Type_INVALID)
    return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': %s %d has element "
                    "type %s, which PJRT cannot express", e->c->p->name,
                    what, i, xrt_dtype_name(t->shape.dtype));
  return XRT_OK;
}

static xrt_status xpj_entry_types(xpj_exe *e, const xrt_ir_func *f,
                                  xrt_plugin_error *err) {
  xrt_allocator al = e->c->al;
  e->num_inputs = f->body.num_args;
  e->num_outputs = f->num_results;
  e->in = (xrt_shape *)xpj_alloc(al, (size_t)e->num_inputs * sizeof *e->in);
  e->out = (xrt_shape *)xpj_alloc(al, (size_t)e->num_outputs * sizeof *e->out);
  e->in_type = (PJRT_Buffer_Type *)xpj_alloc(
      al, (size_t)e->num_inputs * sizeof *e->in_type);
  e->out_type = (PJRT_Buffer_Type *)xpj_alloc(
      al, (size_t)e->num_outputs * sizeof *e->out_type);
  if (!e->in || !e->out || !e->in_type || !e->out_type)
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of host "
                    "memory compiling", e->c->p->name);
  xrt_status s = XRT_OK;
  for (int i = 0; i < e->num_inputs && !s; i++)
    s = xpj_io_type(e, &f->value_types[f->body.args[i]], "argument", i,
                    &e->in[i], &e->in_type[i], err);
  for (int i = 0; i < e->num_outputs && !s; i++)
    s = xpj_io_type(e, &f->result_types[i], "result", i, &e->out[i],
                    &e->out_type[i], err);
  return s;
}

/* What PJRT cannot do of what xrt asks: checked before compiling. */
static xrt_status xpj_compile_check(const xpj_client *c,
                                    const xrt_plugin_compile_args *a,
                                    xrt_plugin_error *err) {
  const xrt_ir_module *m = a->module;
  if (!m || a->entry < 0 || a->entry >= m->num_funcs)
    return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': PJRT plugins "
                    "compile programs, not serialized executables",
                    c->p->name);
  if (!m->source)
    return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': the core gave no "
                    "program text to hand to PJRT", c->p->name);
  if (strcmp(m->funcs[a->entry].name, "main"))
    return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': PJRT runs a "
                    "program's @main; the entry is @%s", c->p->name,
                    m->funcs[a->entry].name);
  if (m->num_custom_calls)
    return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': the program calls "
                    "host functions (custom_call, infeed, outfeed, send or "
                    "recv), which a PJRT plugin cannot reach", c->p->name);
  if (a->num_replicas < 1 || a->num_partitions < 1 ||
      (int64_t)a->num_replicas * a->num_partitions > c->n)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "plugin '%s': a launch of "
                    "%d x %d on %d devices", c->p->name, a->num_replicas,
                    a->num_partitions, c->n);
  return XRT_OK;
}

/* The devices of the launch and their PJRT ids; each device once. */
static xrt_status xpj_assignment(xpj_exe *e, const xrt_plugin_compile_args *a,
                                 int *ids, xrt_plugin_error *err) {
  xpj_client *c = e->c;
  for (int l = 0; l < e->num_parts; l++) {
    int d = a->device_assignment ? a->device_assignment[l] : l;
    if (d < 0 || d >= c->n)
      return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': logical id %d "
                      "runs on device %d, not one of this process's %d",
                      c->p->name, l, d, c->n);
    for (int k = 0; k < l; k++)
      if (e->device_of_lid[k] == d)
        return xpj_fail(err, XRT_UNIMPLEMENTED, "plugin '%s': device %d "
                        "runs two participants of a launch", c->p->name, d);
    e->device_of_lid[l] = d;
    e->slot_of_lid[l] = l;
    ids[l] = c->devs[d].id;
  }
  return XRT_OK;
}

static xrt_status xpj_pjrt_compile(xpj_exe *e, const xrt_ir_module *m,
                                   const uint8_t *opts, size_t opts_size,
                                   xrt_plugin_error *err) {
  const xpj_plugin *p = e->c->p;
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)(uintptr_t)m->source; /* PJRT does not write it */
  prog.code_size = m->source_size;
  prog.format = "mlir";
  prog.format_size = 4;
  PJRT_Client_Compile_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  a.client = e->c->pc;
  a.program = &prog;
  a.compile_options = (const char *)opts;
  a.compile_options_size = opts_size;
  xrt_status s = xpj_error(p, p->fn.PJRT_Client_Compile(&a),
                           "PJRT_Client_Compile", err);
  if (!s && !a.executable)
    s = xpj_fail(err, XRT_INTERNAL, "plugin '%s': PJRT_Client_Compile "
                 "returned no error and a NULL executable", p->name);
  if (!s) e->le = a.executable;
  return s;
}

/* The executable's output count against the entry's (when the plugin can
 * tell). */
static xrt_status xpj_check_outputs(xpj_exe *e, xrt_plugin_error *err) {
  const xpj_plugin *p = e->c->p;
  if (!p->fn.PJRT_LoadedExecutable_GetExecutable ||
      !p->fn.PJRT_Executable_NumOutputs || !p->fn.PJRT_Executable_Destroy)
    return XRT_OK; /* (without Destroy, asking would leak) */
  PJRT_LoadedExecutable_GetExecutable_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  g.loaded_executable = e->le;
  PJRT_Error *ge = p->fn.PJRT_LoadedExecutable_GetExecutable(&g);
  if (ge && xpj_unimplemented(p, ge)) return XRT_OK;
  xrt_status s = xpj_error(p, ge, "PJRT_LoadedExecutable_GetExecutable", err);
  if (s || !g.executable) return s;
  PJRT_Executable_NumOutputs_Args n;
  memset(&n, 0, sizeof n);
  n.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
  n.executable = g.executable;
  PJRT_Error *ne = p->fn.PJRT_Executable_NumOutputs(&n);
  if (ne && xpj_unimplemented(p, ne)) {
    ne = NULL;
    n.num_outputs = (size_t)e->num_outputs;
  }
  s = xpj_error(p, ne, "PJRT_Executable_NumOutputs", err);
  if (!s && n.num_outputs != (size_t)e->num_outputs)
    s = xpj_fail(err, XRT_INTERNAL, "plugin '%s': PJRT_Executable_NumOutputs "
                 "says %zu outputs; the program's entry has %d", p->name,
                 n.num_outputs, e->num_outputs);
  PJRT_Executable_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  d.executable = g.executable;
  xrt_plugin_error ignored;
  xpj_error(p, p->fn.PJRT_Executable_Destroy(&d), "PJRT_Executable_Destroy",
            &ignored);
  return s;
}

/* Argument lists go in the order of the executable's addressable devices
 * (when the plugin says; else by logical id, as assigned). */
static xrt_status xpj_slots(xpj_exe *e, xrt_plugin_error *err) {
  xpj_client *c = e->c;
  const xpj_plugin *p = c->p;
  const char *fn = "PJRT_LoadedExecutable_AddressableDevices";
  if (e->portable || !p->fn.PJRT_LoadedExecutable_AddressableDevices)
    return XRT_OK;
  PJRT_LoadedExecutable_AddressableDevices_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE;
  a.executable = e->le;
  PJRT_Error *er = p->fn.PJRT_LoadedExecutable_AddressableDevices(&a);
  if (er && xpj_unimplemented(p, er)) return XRT_OK;
  xrt_status s = xpj_error(p, er, fn, err);
  if (s) return s;
  if (a.num_addressable_devices != (size_t)e->num_parts ||
      !a.addressable_devices)
    return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned %zu devices "
                    "%sfor a launch of %d", p->name, fn,
                    a.num_addressable_devices,
                    a.addressable_devices ? "" : "(a NULL array) ",
                    e->num_parts);
  /* Each assigned device once: slots start at -1 and are set once. */
  for (int l = 0; l < e->num_parts; l++) e->slot_of_lid[l] = -1;
  for (size_t k = 0; k < a.num_addressable_devices; k++) {
    int l = 0;
    while (l < e->num_parts &&
           c->devs[e->device_of_lid[l]].dev != a.addressable_devices[k])
      l++;
    if (l == e->num_parts || e->slot_of_lid[l] >= 0)
      return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s: device %zu is "
                      "not one the launch was assigned, or listed twice",
                      p->name, fn, k);
    e->slot_of_lid[l] = (int)k;
  }
  return XRT_OK;
}

static xrt_status xpj_compile_into(xpj_exe *e,
                                   const xrt_plugin_compile_args *a,
                                   xrt_plugin_error *err) {
  xpj_client *c = e->c;
  const xrt_ir_module *m = a->module;
  xrt_status s = xpj_entry_types(e, &m->funcs[a->entry], err);
  if (s) return s;
  e->num_parts = a->num_replicas * a->num_partitions;
  e->portable = e->num_parts == 1;
  size_t parts = (size_t)e->num_parts * sizeof(int);
  e->device_of_lid = (int *)xpj_alloc(c->al, parts);
  e->slot_of_lid = (int *)xpj_alloc(c->al, parts);
  int *ids = (int *)xpj_alloc(c->al, parts);
  uint8_t *opts = NULL;
  size_t opts_size = 0;
  if (!e->device_of_lid || !e->slot_of_lid || !ids)
    s = xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of host "
                 "memory compiling", c->p->name);
  if (!s) s = xpj_assignment(e, a, ids, err);
  if (!s)
    s = xpj_compile_options(c->al, a->num_replicas, a->num_partitions, ids,
                            e->portable, &opts, &opts_size, err);
  if (!s) s = xpj_pjrt_compile(e, m, opts, opts_size, err);
  if (!s) s = xpj_check_outputs(e, err);
  if (!s) s = xpj_slots(e, err);
  xpj_free(c->al, ids);
  xpj_free(c->al, opts);
  return s;
}

static xrt_status xpj_compile(void *client, const xrt_plugin_compile_args *a,
                              void **out_executable, xrt_plugin_error *err) {
  xpj_client *c = (xpj_client *)client;
  if (!c || !a || !out_executable ||
      !XRT_STRUCT_HAS(a, xrt_plugin_compile_args, device_assignment))
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "compile: bad arguments");
  xrt_status s = xpj_compile_check(c, a, err);
  if (s) return s;
  xpj_exe *e = (xpj_exe *)xpj_alloc(c->al, sizeof *e);
  if (!e)
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of host "
                    "memory compiling", c->p->name);
  e->c = c;
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
  if ((s = xpj_compile_into(e, a, err))) {
    xpj_exe_free(e);
    return s;
  }
  *out_executable = e;
  return XRT_OK;
}

XPJ_PRIVATE void xpj_compile_fill(xrt_plugin_api *t) {
  t->compile = xpj_compile;
  t->executable_destroy = xpj_executable_destroy;
}
