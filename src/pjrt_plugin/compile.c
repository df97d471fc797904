/*
 * src/pjrt_plugin/compile.c - PJRT_Client_Compile: a PJRT_Program of
 * format "mlir" (StableHLO text; MLIR bytecode, which starts with
 * "ML\xefR", goes to xrt as it is and compiles once xrt reads bytecode)
 * and a serialized CompileOptionsProto (proto.c) mapped onto
 * xrt_compile_options.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * Replicas and partitions: the build options' num_replicas and
 * num_partitions, else the device assignment's counts, else (0) the
 * module's mhlo.num_replicas / mhlo.num_partitions, as xrt does.  The
 * device assignment, computation_devices[partition].replica_device_ids
 * [replica], becomes xrt's list by logical id (replica * partitions +
 * partition).  Empty compile_options are all defaults.
 */
#include "internal.h"

static int xp_format_is(const PJRT_Program *p, const char *name) {
  size_t n = strlen(name);
  return p->format_size == n && memcmp(p->format, name, n) == 0;
}

static PJRT_Error *xp_program_check(const char *fn, const PJRT_Program *p) {
  if (!p) return xp_error_null(fn, "args->program");
  if (p->struct_size < PJRT_Program_STRUCT_SIZE)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: args->program->struct_size is %zu, at least %zu "
                    "expected", fn, p->struct_size,
                    (size_t)PJRT_Program_STRUCT_SIZE);
  if (!p->format && p->format_size)
    return xp_error_null(fn, "args->program->format");
  if (!xp_format_is(p, "mlir"))
    return xp_error(PJRT_Error_Code_UNIMPLEMENTED,
                    "%s: program format \"%.*s\" is not implemented by xrt "
                    "(it compiles format \"mlir\": StableHLO)", fn,
                    (int)p->format_size, p->format ? p->format : "");
  if (!p->code && p->code_size) return xp_error_null(fn, "args->program->code");
  return NULL;
}

/* Takes the counts from the build options or the device assignment; they
 * must agree when both are given. */
static PJRT_Error *xp_counts(const char *fn, const xp_compile_options *o,
                             xrt_compile_options *co) {
  int64_t R = o->num_replicas, P = o->num_partitions;
  if (o->assignment) {
    if ((R && R != o->assignment_replicas) ||
        (P && P != o->assignment_partitions))
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: compile_options ask for %lld replica(s) x %lld "
                      "partition(s), but the device assignment is for %lld x "
                      "%lld", fn, (long long)R, (long long)P,
                      (long long)o->assignment_replicas,
                      (long long)o->assignment_partitions);
    R = o->assignment_replicas;
    P = o->assignment_partitions;
  }
  co->num_replicas = (int)R;
  co->num_partitions = (int)P;
  co->device_assignment = o->assignment;
  return NULL;
}

/* Compiles p with the options; *out receives the loaded executable. */
static PJRT_Error *xp_compile_with(const char *fn, xp_client *c,
                                   const PJRT_Program *p,
                                   const xp_compile_options *o,
                                   PJRT_LoadedExecutable **out) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  PJRT_Error *e = xp_counts(fn, o, &co);
  if (e) return e;
  xrt_executable *xe = NULL;
  xrt_status s = xrt_compile(c->xc, p->code, p->code_size, &co, &xe);
  if (s) return xp_error_xrt(fn, s);
  /* Equal inputs (program, options, topology, plugin version) give equal
   * keys: PJRT's executable fingerprint. */
  char key[XRT_CACHE_KEY_CHARS + 1];
  if (xrt_compile_cache_key(c->xc, p->code, p->code_size, &co, key))
    key[0] = '\0';
  return xp_loaded_create(fn, c, xe, key, out);
}

static PJRT_Error *xp_compile(PJRT_Client_Compile_Args *args) {
  static const char fn[] = "PJRT_Client_Compile";
  XP_ARGS(fn, args, PJRT_Client_Compile_Args_STRUCT_SIZE);
  args->executable = NULL;
  xp_client *c = xp_client_get(args->client);
  if (!c)
    return args->client ? xp_error_stale(fn, "args->client", "PJRT_Client")
                        : xp_error_null(fn, "args->client");
  PJRT_Error *e = xp_program_check(fn, args->program);
  if (e) return e;
  xp_compile_options o;
  e = xp_compile_options_parse(fn, (const uint8_t *)args->compile_options,
                               args->compile_options_size, &o);
  if (e) return e;
  e = xp_compile_with(fn, c, args->program, &o, &args->executable);
  xp_free(o.assignment);
  return e;
}

XP_PRIVATE void xp_compile_register(PJRT_Api *api) {
  api->PJRT_Client_Compile = xp_compile;
}
