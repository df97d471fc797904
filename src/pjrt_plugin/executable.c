/*
 * src/pjrt_plugin/executable.c - PJRT_LoadedExecutable (a compiled xrt
 * executable on a client) and PJRT_Executable (its description, made by
 * PJRT_LoadedExecutable_GetExecutable): both share one refcounted core
 * holding what the queries return, computed once at compile time.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * Deleting a loaded executable releases the xrt executable (executions
 * already running finish); the core's descriptions stay for the
 * PJRT_Executables made from it.  The name is the entry function's.  The
 * fingerprint is xrt's compilation cache key (equal programs, options and
 * topologies give equal keys).  Generated code has no size xrt can tell:
 * SizeOfGeneratedCodeInBytes says 0.
 */
#include "internal.h"

static void xp_core_free(xp_exe_core *k) {
  atomic_store(&k->xe, NULL);
  /* a stale handle (its client destroyed) is refused safely */
  if (k->xe_held) xrt_executable_release(k->xe_held);
  xp_free(k->name);
  xp_free(k->outputs);
  xp_free(k->output_types);
  xp_free(k->output_dims);
  xp_free(k->output_dim_sizes);
  xp_free(k->output_kinds);
  xp_free(k->output_kind_sizes);
  xp_free(k->devices);
  xp_free(k->xdevices);
  xp_free(k);
}

XP_PRIVATE void xp_core_unref(xp_exe_core *k) {
  if (k && atomic_fetch_sub(&k->refs, 1) == 1) xp_core_free(k);
}

/* Output shapes, types, dimensions and memory kinds. */
static int xp_core_outputs(xp_exe_core *k, xrt_executable *xe) {
  size_t n = k->num_outputs, total = 0;
  k->outputs = (xp_shape *)xp_calloc(n + 1, sizeof *k->outputs);
  k->output_types =
      (PJRT_Buffer_Type *)xp_calloc(n + 1, sizeof *k->output_types);
  /* output_bytes shares the block of output_dim_sizes. */
  k->output_dim_sizes =
      (size_t *)xp_calloc(2 * (n + 1), sizeof *k->output_dim_sizes);
  k->output_bytes = k->output_dim_sizes ? k->output_dim_sizes + n + 1 : NULL;
  k->output_kinds = (const char **)xp_calloc(n + 1, sizeof *k->output_kinds);
  k->output_kind_sizes =
      (size_t *)xp_calloc(n + 1, sizeof *k->output_kind_sizes);
  if (!k->outputs || !k->output_types || !k->output_dim_sizes ||
      !k->output_kinds || !k->output_kind_sizes)
    return 0;
  for (size_t i = 0; i < n; i++) {
    xrt_shape s;
    if (xrt_executable_output_shape(xe, (int)i, &s)) return 0;
    xp_shape_from_xrt(&k->outputs[i], &s);
    k->output_types[i] = k->outputs[i].type;
    k->output_dim_sizes[i] = k->outputs[i].num_dims;
    k->output_bytes[i] = k->outputs[i].bytes;
    k->output_kinds[i] = XP_MEMORY_KIND;
    k->output_kind_sizes[i] = sizeof XP_MEMORY_KIND - 1;
    total += k->outputs[i].num_dims;
  }
  k->output_dims = (int64_t *)xp_calloc(total + 1, sizeof *k->output_dims);
  if (!k->output_dims) return 0;
  for (size_t i = 0, at = 0; i < n; i++)
    for (size_t d = 0; d < k->outputs[i].num_dims; d++)
      k->output_dims[at++] = k->outputs[i].dims[d];
  return 1;
}

/* The devices of logical ids 0 .. replicas * partitions - 1. */
static int xp_core_devices(xp_exe_core *k, xp_client *c, xrt_executable *xe) {
  size_t n = k->num_devices;
  k->devices = (PJRT_Device **)xp_calloc(n + 1, sizeof *k->devices);
  k->xdevices = (xrt_device **)xp_calloc(n + 1, sizeof *k->xdevices);
  if (!k->devices || !k->xdevices) return 0;
  for (size_t i = 0; i < n; i++) {
    xrt_device *xd = xrt_executable_device(xe, (int)i);
    xp_device *d = xd ? xp_client_device_of(c, xd) : NULL;
    if (!d) return 0;
    k->devices[i] = d->handle;
    k->xdevices[i] = xd;
  }
  return 1;
}

static PJRT_Error *xp_core_create(const char *fn, xp_client *c,
                                  xrt_executable *xe, const char *fingerprint,
                                  xp_exe_core **out) {
  xp_exe_core *k = (xp_exe_core *)xp_calloc(1, sizeof *k);
  if (!k) {
    xrt_executable_release(xe);
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  }
  atomic_init(&k->refs, 1);
  atomic_init(&k->xe, xe);
  k->xe_held = xe;
  k->xobj = xrt__pjrt_executable_obj(xe);
  k->client = c->handle;
  const char *name = xrt_executable_name(xe);
  k->name = xp_strndup(name ? name : "main", strlen(name ? name : "main"));
  k->num_replicas = xrt_executable_num_replicas(xe);
  k->num_partitions = xrt_executable_num_partitions(xe);
  k->num_args = xrt_executable_num_inputs(xe);
  int outs = xrt_executable_num_outputs(xe);
  snprintf(k->fingerprint, sizeof k->fingerprint, "%s", fingerprint);
  if (k->num_replicas < 1 || k->num_partitions < 1 || k->num_args < 0 ||
      outs < 0) {
    xp_core_free(k);
    return xp_error(PJRT_Error_Code_INTERNAL,
                    "%s: xrt describes the executable inconsistently", fn);
  }
  k->num_outputs = (size_t)outs;
  k->num_devices = (size_t)k->num_replicas * (size_t)k->num_partitions;
  if (!k->name || !xp_core_outputs(k, xe) || !xp_core_devices(k, c, xe)) {
    xp_core_free(k);
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (describing the executable)", fn);
  }
  *out = k;
  return NULL;
}

XP_PRIVATE PJRT_Error *xp_loaded_create(const char *fn, xp_client *c,
                                        xrt_executable *xe,
                                        const char *fingerprint,
                                        PJRT_LoadedExecutable **out) {
  xp_exe_core *k = NULL;
  PJRT_Error *e = xp_core_create(fn, c, xe, fingerprint, &k);
  if (e) return e;
  xp_loaded *l = (xp_loaded *)xp_calloc(1, sizeof *l);
  if (l) {
    l->core = k;
    atomic_init(&l->deleted, 0);
    l->handle = (PJRT_LoadedExecutable *)xp_handle_new(l, XP_KIND_LOADED);
  }
  if (!l || !l->handle) {
    xp_free(l);
    xp_core_unref(k);
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  }
  *out = l->handle;
  return NULL;
}

/* The core of a PJRT_Executable, or NULL with *err. */
static xp_exe_core *xp_exe_arg(const char *fn, const PJRT_Executable *h,
                               PJRT_Error **err) {
  xp_executable *x = (xp_executable *)xp_handle_get(h, XP_KIND_EXECUTABLE);
  if (!x)
    *err = h ? xp_error_stale(fn, "args->executable", "PJRT_Executable")
             : xp_error_null(fn, "args->executable");
  return x ? x->core : NULL;
}

static xp_loaded *xp_loaded_arg(const char *fn, PJRT_LoadedExecutable *h,
                                const char *what, PJRT_Error **err) {
  xp_loaded *l = xp_loaded_get(h);
  if (!l)
    *err = h ? xp_error_stale(fn, what, "PJRT_LoadedExecutable")
             : xp_error_null(fn, what);
  return l;
}

#define XP_EXE_ARG(fn, args, type)                            \
  XP_ARGS(fn, args, type##_STRUCT_SIZE);                      \
  PJRT_Error *err_ = NULL;                                    \
  xp_exe_core *k = xp_exe_arg(fn, args->executable, &err_);   \
  if (!k) return err_

#define XP_LOADED_ARG(fn, args, type, field)                               \
  XP_ARGS(fn, args, type##_STRUCT_SIZE);                                   \
  PJRT_Error *err_ = NULL;                                                 \
  xp_loaded *l = xp_loaded_arg(fn, args->field, "args->" #field, &err_);   \
  if (!l) return err_

/* ---- PJRT_Executable ---- */

static PJRT_Error *xp_exe_destroy(PJRT_Executable_Destroy_Args *args) {
  static const char fn[] = "PJRT_Executable_Destroy";
  XP_ARGS(fn, args, PJRT_Executable_Destroy_Args_STRUCT_SIZE);
  if (!args->executable) return NULL;
  xp_executable *x =
      (xp_executable *)xp_handle_retire(args->executable, XP_KIND_EXECUTABLE);
  if (!x) return xp_error_stale(fn, "args->executable", "PJRT_Executable");
  xp_core_unref(x->core);
  xp_free(x);
  return NULL;
}

static PJRT_Error *xp_exe_name(PJRT_Executable_Name_Args *args) {
  XP_EXE_ARG("PJRT_Executable_Name", args, PJRT_Executable_Name_Args);
  args->executable_name = k->name;
  args->executable_name_size = strlen(k->name);
  return NULL;
}

static PJRT_Error *xp_exe_replicas(PJRT_Executable_NumReplicas_Args *args) {
  XP_EXE_ARG("PJRT_Executable_NumReplicas", args,
             PJRT_Executable_NumReplicas_Args);
  args->num_replicas = (size_t)k->num_replicas;
  return NULL;
}

static PJRT_Error *xp_exe_partitions(PJRT_Executable_NumPartitions_Args *args) {
  XP_EXE_ARG("PJRT_Executable_NumPartitions", args,
             PJRT_Executable_NumPartitions_Args);
  args->num_partitions = (size_t)k->num_partitions;
  return NULL;
}

static PJRT_Error *xp_exe_outputs(PJRT_Executable_NumOutputs_Args *args) {
  XP_EXE_ARG("PJRT_Executable_NumOutputs", args,
             PJRT_Executable_NumOutputs_Args);
  args->num_outputs = k->num_outputs;
  return NULL;
}

static PJRT_Error *xp_exe_code_size(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args *args) {
  XP_EXE_ARG("PJRT_Executable_SizeOfGeneratedCodeInBytes", args,
             PJRT_Executable_SizeOfGeneratedCodeInBytes_Args);
  (void)k;
  args->size_in_bytes = 0;
  return NULL;
}

static PJRT_Error *xp_exe_output_types(
    PJRT_Executable_OutputElementTypes_Args *args) {
  XP_EXE_ARG("PJRT_Executable_OutputElementTypes", args,
             PJRT_Executable_OutputElementTypes_Args);
  args->output_types = k->output_types;
  args->num_output_types = k->num_outputs;
  return NULL;
}

static PJRT_Error *xp_exe_output_dims(
    PJRT_Executable_OutputDimensions_Args *args) {
  XP_EXE_ARG("PJRT_Executable_OutputDimensions", args,
             PJRT_Executable_OutputDimensions_Args);
  args->num_outputs = k->num_outputs;
  args->dims = k->output_dims;
  args->dim_sizes = k->output_dim_sizes;
  return NULL;
}

static PJRT_Error *xp_exe_output_kinds(
    PJRT_Executable_OutputMemoryKinds_Args *args) {
  XP_EXE_ARG("PJRT_Executable_OutputMemoryKinds", args,
             PJRT_Executable_OutputMemoryKinds_Args);
  args->num_outputs = k->num_outputs;
  args->memory_kinds = k->output_kinds;
  args->memory_kind_sizes = k->output_kind_sizes;
  return NULL;
}

static PJRT_Error *xp_fingerprint(const char *fn, const xp_exe_core *k,
                                  const char **out, size_t *out_size) {
  if (!k->fingerprint[0])
    return xp_error(PJRT_Error_Code_UNIMPLEMENTED,
                    "%s: this executable has no fingerprint (its options "
                    "have no xrt cache key)", fn);
  *out = k->fingerprint;
  *out_size = strlen(k->fingerprint);
  return NULL;
}

static PJRT_Error *xp_exe_fingerprint(PJRT_Executable_Fingerprint_Args *args) {
  static const char fn[] = "PJRT_Executable_Fingerprint";
  XP_EXE_ARG(fn, args, PJRT_Executable_Fingerprint_Args);
  return xp_fingerprint(fn, k, &args->executable_fingerprint,
                        &args->executable_fingerprint_size);
}

/* ---- PJRT_LoadedExecutable ---- */

/* Marks the executable deleted: later Executes refuse it; its xrt
 * executable goes with the core (see xp_exe_core.xe). */
static void xp_loaded_delete_xe(xp_loaded *l) {
  atomic_store(&l->deleted, 1);
  atomic_store(&l->core->xe, NULL);
}

static PJRT_Error *xp_loaded_destroy(PJRT_LoadedExecutable_Destroy_Args *args) {
  static const char fn[] = "PJRT_LoadedExecutable_Destroy";
  XP_ARGS(fn, args, PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE);
  if (!args->executable) return NULL;
  xp_loaded *l = (xp_loaded *)xp_handle_retire(args->executable, XP_KIND_LOADED);
  if (!l)
    return xp_error_stale(fn, "args->executable", "PJRT_LoadedExecutable");
  xp_loaded_delete_xe(l);
  xp_core_unref(l->core);
  xp_free(l);
  return NULL;
}

static PJRT_Error *xp_loaded_executable(
    PJRT_LoadedExecutable_GetExecutable_Args *args) {
  static const char fn[] = "PJRT_LoadedExecutable_GetExecutable";
  XP_LOADED_ARG(fn, args, PJRT_LoadedExecutable_GetExecutable_Args,
                loaded_executable);
  args->executable = NULL;
  xp_executable *x = (xp_executable *)xp_malloc(sizeof *x);
  if (x) {
    x->core = l->core;
    x->handle = (PJRT_Executable *)xp_handle_new(x, XP_KIND_EXECUTABLE);
  }
  if (!x || !x->handle) {
    xp_free(x);
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  }
  atomic_fetch_add(&l->core->refs, 1);
  args->executable = x->handle;
  return NULL;
}

static PJRT_Error *xp_loaded_devices(
    PJRT_LoadedExecutable_AddressableDevices_Args *args) {
  XP_LOADED_ARG("PJRT_LoadedExecutable_AddressableDevices", args,
                PJRT_LoadedExecutable_AddressableDevices_Args, executable);
  args->addressable_devices = l->core->devices;
  args->num_addressable_devices = l->core->num_devices;
  return NULL;
}

static PJRT_Error *xp_loaded_delete(PJRT_LoadedExecutable_Delete_Args *args) {
  XP_LOADED_ARG("PJRT_LoadedExecutable_Delete", args,
                PJRT_LoadedExecutable_Delete_Args, executable);
  xp_loaded_delete_xe(l);
  return NULL;
}

static PJRT_Error *xp_loaded_is_deleted(
    PJRT_LoadedExecutable_IsDeleted_Args *args) {
  XP_LOADED_ARG("PJRT_LoadedExecutable_IsDeleted", args,
                PJRT_LoadedExecutable_IsDeleted_Args, executable);
  args->is_deleted = atomic_load(&l->deleted) != 0;
  return NULL;
}

static PJRT_Error *xp_loaded_fingerprint(
    PJRT_LoadedExecutable_Fingerprint_Args *args) {
  static const char fn[] = "PJRT_LoadedExecutable_Fingerprint";
  XP_LOADED_ARG(fn, args, PJRT_LoadedExecutable_Fingerprint_Args, executable);
  return xp_fingerprint(fn, l->core, &args->executable_fingerprint,
                        &args->executable_fingerprint_size);
}

XP_PRIVATE void xp_executable_register(PJRT_Api *api) {
  api->PJRT_Executable_Destroy = xp_exe_destroy;
  api->PJRT_Executable_Name = xp_exe_name;
  api->PJRT_Executable_NumReplicas = xp_exe_replicas;
  api->PJRT_Executable_NumPartitions = xp_exe_partitions;
  api->PJRT_Executable_NumOutputs = xp_exe_outputs;
  api->PJRT_Executable_SizeOfGeneratedCodeInBytes = xp_exe_code_size;
  api->PJRT_Executable_OutputElementTypes = xp_exe_output_types;
  api->PJRT_Executable_OutputDimensions = xp_exe_output_dims;
  api->PJRT_Executable_OutputMemoryKinds = xp_exe_output_kinds;
  api->PJRT_Executable_Fingerprint = xp_exe_fingerprint;
  api->PJRT_LoadedExecutable_Destroy = xp_loaded_destroy;
  api->PJRT_LoadedExecutable_GetExecutable = xp_loaded_executable;
  api->PJRT_LoadedExecutable_AddressableDevices = xp_loaded_devices;
  api->PJRT_LoadedExecutable_Delete = xp_loaded_delete;
  api->PJRT_LoadedExecutable_IsDeleted = xp_loaded_is_deleted;
  api->PJRT_LoadedExecutable_Fingerprint = xp_loaded_fingerprint;
}
