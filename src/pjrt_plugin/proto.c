/*
 * src/pjrt_plugin/proto.c - a minimal protobuf reader for the serialized
 * xla.CompileOptionsProto that PJRT_Client_Compile receives: the fields
 * xrt uses (replicas, partitions, device assignment); every other field,
 * of any wire type, is skipped.  Every read is bounds-checked: malformed
 * bytes give INVALID_ARGUMENT naming the byte offset.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * Wire format: a message is a sequence of fields, each a varint key
 * (field_number << 3 | wire_type) and a value: a varint (wire type 0), 8
 * bytes (1), a varint length and that many bytes (2: strings, nested
 * messages, packed repeated scalars), a group up to its end key (3, 4;
 * obsolete, skipped), 4 bytes (5).
 */
#include "internal.h"

/* Field numbers, from openxla/xla: xla/pjrt/proto/compile_options.proto
 * (CompileOptionsProto, ExecutableBuildOptionsProto) and xla/xla_data.proto
 * (DeviceAssignmentProto). */
enum xp_compile_options_field {
  XP_CO_EXECUTABLE_BUILD_OPTIONS = 3, /* ExecutableBuildOptionsProto */
  XP_CO_COMPILE_PORTABLE_EXECUTABLE = 4 /* bool */
};
enum xp_build_options_field {
  XP_BO_NUM_REPLICAS = 4,     /* int64 */
  XP_BO_NUM_PARTITIONS = 5,   /* int64 */
  XP_BO_DEVICE_ASSIGNMENT = 9 /* DeviceAssignmentProto */
};
enum xp_device_assignment_field {
  XP_DA_REPLICA_COUNT = 1,       /* int32 */
  XP_DA_COMPUTATION_COUNT = 2,   /* int32 */
  XP_DA_COMPUTATION_DEVICES = 3  /* repeated ComputationDevice */
};
enum xp_computation_device_field {
  XP_CD_REPLICA_DEVICE_IDS = 1 /* repeated int64, packed or not */
};

typedef enum xp_wire {
  XP_WIRE_VARINT = 0,
  XP_WIRE_I64 = 1,
  XP_WIRE_LEN = 2,
  XP_WIRE_SGROUP = 3,
  XP_WIRE_EGROUP = 4,
  XP_WIRE_I32 = 5
} xp_wire;

enum { XP_MAX_VARINT_BYTES = 10, XP_MAX_GROUP_DEPTH = 64 };

/* A reader over [p, end) of the whole input starting at base (for the
 * offsets of messages); why is set at the first error. */
typedef struct xp_pb {
  const uint8_t *p, *end, *base;
  const char *why;
  size_t at; /* offset of the error */
} xp_pb;

static int xp_pb_fail(xp_pb *r, const char *why) {
  if (!r->why) {
    r->why = why;
    r->at = (size_t)(r->p - r->base);
  }
  return 0;
}

static int xp_pb_varint(xp_pb *r, uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < XP_MAX_VARINT_BYTES; i++) {
    if (r->p >= r->end) return xp_pb_fail(r, "a varint runs past the end");
    uint8_t byte = *r->p++;
    v |= (uint64_t)(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return xp_pb_fail(r, "a varint is longer than 10 bytes");
}

/* The next field's number and wire type; 0 at the end or on error. */
static int xp_pb_key(xp_pb *r, uint32_t *field, xp_wire *wire) {
  uint64_t key;
  if (r->p >= r->end || !xp_pb_varint(r, &key)) return 0;
  *field = (uint32_t)(key >> 3);
  *wire = (xp_wire)(key & 7);
  if (key >> 3 == 0 || key >> 3 > 0x1fffffff)
    return xp_pb_fail(r, "a field number is out of range");
  if (*wire > XP_WIRE_I32) return xp_pb_fail(r, "an unknown wire type");
  return 1;
}

/* A length-delimited value as a sub-reader. */
static int xp_pb_len(xp_pb *r, xp_pb *sub) {
  uint64_t n;
  if (!xp_pb_varint(r, &n)) return 0;
  if (n > (uint64_t)(r->end - r->p))
    return xp_pb_fail(r, "a length runs past the end");
  *sub = *r;
  sub->end = r->p + n;
  r->p += n;
  return 1;
}

static int xp_pb_bytes(xp_pb *r, size_t n) {
  if (n > (size_t)(r->end - r->p))
    return xp_pb_fail(r, "a fixed-size value runs past the end");
  r->p += n;
  return 1;
}

static int xp_pb_skip(xp_pb *r, uint32_t field, xp_wire wire, int depth);

/* Skips a group's fields up to its end key (of the same field). */
static int xp_pb_skip_group(xp_pb *r, uint32_t field, int depth) {
  if (depth > XP_MAX_GROUP_DEPTH) return xp_pb_fail(r, "groups nest too deep");
  uint32_t f;
  xp_wire w;
  while (xp_pb_key(r, &f, &w)) {
    if (w == XP_WIRE_EGROUP)
      return f == field ? 1 : xp_pb_fail(r, "a group ends with another field");
    if (!xp_pb_skip(r, f, w, depth + 1)) return 0;
  }
  return r->why ? 0 : xp_pb_fail(r, "a group has no end");
}

static int xp_pb_skip(xp_pb *r, uint32_t field, xp_wire wire, int depth) {
  uint64_t v;
  xp_pb sub;
  switch (wire) {
  case XP_WIRE_VARINT: return xp_pb_varint(r, &v);
  case XP_WIRE_I64: return xp_pb_bytes(r, 8);
  case XP_WIRE_LEN: return xp_pb_len(r, &sub);
  case XP_WIRE_SGROUP: return xp_pb_skip_group(r, field, depth);
  case XP_WIRE_EGROUP: return xp_pb_fail(r, "a group end without its start");
  case XP_WIRE_I32: return xp_pb_bytes(r, 4);
  }
  return xp_pb_fail(r, "an unknown wire type");
}

/* Copies a sub-reader's error into r; 1 if it had none. */
static int xp_pb_adopt(xp_pb *r, const xp_pb *sub) {
  if (!sub->why) return 1;
  if (!r->why) {
    r->why = sub->why;
    r->at = sub->at;
  }
  return 0;
}

/* ---- DeviceAssignmentProto ---- */

/* One replica_device_id into ids[*count] (when below want). */
static int xp_pb_device_id(xp_pb *r, int *ids, int64_t want, int64_t *count) {
  uint64_t v;
  if (!xp_pb_varint(r, &v)) return 0;
  if ((int64_t)v < 0 || (int64_t)v > 0x7fffffff)
    return xp_pb_fail(r, "a replica_device_id is out of range");
  if (*count < want) ids[*count] = (int)v;
  ++*count;
  return 1;
}

/* Reads a ComputationDevice's ids into ids[0..want); *count receives how
 * many it lists. */
static int xp_pb_device_ids(xp_pb *r, int *ids, int64_t want, int64_t *count) {
  uint32_t f;
  xp_wire w;
  *count = 0;
  while (xp_pb_key(r, &f, &w)) {
    if (f == XP_CD_REPLICA_DEVICE_IDS && w == XP_WIRE_VARINT) {
      if (!xp_pb_device_id(r, ids, want, count)) return 0;
    } else if (f == XP_CD_REPLICA_DEVICE_IDS && w == XP_WIRE_LEN) {
      xp_pb packed; /* proto3's default for repeated scalars */
      if (!xp_pb_len(r, &packed)) return 0;
      while (packed.p < packed.end)
        if (!xp_pb_device_id(&packed, ids, want, count))
          return xp_pb_adopt(r, &packed);
    } else if (!xp_pb_skip(r, f, w, 0)) {
      return 0;
    }
  }
  return !r->why;
}

/* The counts of a DeviceAssignmentProto and its computation_devices. */
static int xp_pb_assignment_counts(xp_pb *r, int64_t *replicas,
                                   int64_t *computations, int64_t *listed) {
  uint32_t f;
  xp_wire w;
  uint64_t v;
  xp_pb sub;
  *replicas = *computations = *listed = 0;
  while (xp_pb_key(r, &f, &w)) {
    if ((f == XP_DA_REPLICA_COUNT || f == XP_DA_COMPUTATION_COUNT) &&
        w == XP_WIRE_VARINT) {
      if (!xp_pb_varint(r, &v)) return 0;
      *(f == XP_DA_REPLICA_COUNT ? replicas : computations) = (int32_t)v;
    } else if (f == XP_DA_COMPUTATION_DEVICES && w == XP_WIRE_LEN) {
      if (!xp_pb_len(r, &sub)) return 0;
      ++*listed;
    } else if (!xp_pb_skip(r, f, w, 0)) {
      return 0;
    }
  }
  return !r->why;
}

/* Fills ids[replica * computations + computation] from the lists
 * (column: room for one list); *bad says what is inconsistent when the
 * bytes are well-formed. */
static int xp_pb_assignment_ids(xp_pb *r, int *ids, int *column,
                                int64_t replicas, int64_t computations,
                                const char **bad) {
  uint32_t f;
  xp_wire w;
  xp_pb sub;
  int64_t c = 0, n;
  while (!*bad && xp_pb_key(r, &f, &w)) {
    if (f != XP_DA_COMPUTATION_DEVICES || w != XP_WIRE_LEN) {
      if (!xp_pb_skip(r, f, w, 0)) break;
      continue;
    }
    if (!xp_pb_len(r, &sub)) break;
    if (!xp_pb_device_ids(&sub, column, replicas, &n)) {
      xp_pb_adopt(r, &sub);
      break;
    }
    if (n != replicas) {
      *bad = "a computation_devices entry does not list replica_count ids";
      break;
    }
    for (int64_t i = 0; i < replicas; i++)
      ids[i * computations + c] = column[i];
    c++;
  }
  return !r->why && !*bad;
}

/* Reads the DeviceAssignmentProto r into o->assignment (device id by
 * logical id, replica-major).  A malformed message sets r->why. */
static PJRT_Error *xp_pb_assignment(const char *fn, xp_pb *r,
                                    xp_compile_options *o) {
  int64_t R, C, listed;
  xp_pb pass = *r;
  if (!xp_pb_assignment_counts(&pass, &R, &C, &listed))
    return xp_pb_adopt(r, &pass), NULL;
  /* Each id takes a byte at least, which bounds the allocation. */
  if (R < 1 || C < 1 || listed != C || R * C > (int64_t)(r->end - r->p))
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: compile_options: the device assignment has "
                    "replica_count %lld, computation_count %lld and %lld "
                    "computation_devices", fn, (long long)R, (long long)C,
                    (long long)listed);
  /* (o->assignment is freed by the caller, also on failure) */
  o->assignment = (int *)xp_malloc((size_t)(R * C) * sizeof *o->assignment);
  int *column = o->assignment ? (int *)xp_malloc((size_t)R * sizeof *column)
                              : NULL;
  if (!column)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  const char *bad = NULL;
  pass = *r;
  int ok = xp_pb_assignment_ids(&pass, o->assignment, column, R, C, &bad);
  xp_free(column);
  if (!ok) {
    if (!bad) return xp_pb_adopt(r, &pass), NULL;
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: compile_options: device assignment: %s", fn, bad);
  }
  o->assignment_replicas = R;
  o->assignment_partitions = C;
  return NULL;
}

/* ---- ExecutableBuildOptionsProto and CompileOptionsProto ---- */

static PJRT_Error *xp_pb_build_options(const char *fn, xp_pb *r,
                                       xp_compile_options *o) {
  uint32_t f;
  xp_wire w;
  uint64_t v;
  xp_pb sub;
  while (xp_pb_key(r, &f, &w)) {
    if ((f == XP_BO_NUM_REPLICAS || f == XP_BO_NUM_PARTITIONS) &&
        w == XP_WIRE_VARINT) {
      if (!xp_pb_varint(r, &v)) break;
      *(f == XP_BO_NUM_REPLICAS ? &o->num_replicas : &o->num_partitions) =
          (int64_t)v;
    } else if (f == XP_BO_DEVICE_ASSIGNMENT && w == XP_WIRE_LEN) {
      if (!xp_pb_len(r, &sub)) break;
      xp_free(o->assignment); /* the last one counts, as protobuf says */
      o->assignment = NULL;
      PJRT_Error *e = xp_pb_assignment(fn, &sub, o);
      if (e || !xp_pb_adopt(r, &sub)) return e;
    } else if (!xp_pb_skip(r, f, w, 0)) {
      break;
    }
  }
  return NULL;
}

static PJRT_Error *xp_pb_compile_options(const char *fn, xp_pb *r,
                                         xp_compile_options *o) {
  uint32_t f;
  xp_wire w;
  uint64_t v;
  xp_pb sub;
  while (xp_pb_key(r, &f, &w)) {
    if (f == XP_CO_EXECUTABLE_BUILD_OPTIONS && w == XP_WIRE_LEN) {
      if (!xp_pb_len(r, &sub)) break;
      PJRT_Error *e = xp_pb_build_options(fn, &sub, o);
      if (e || !xp_pb_adopt(r, &sub)) return e;
    } else if (f == XP_CO_COMPILE_PORTABLE_EXECUTABLE && w == XP_WIRE_VARINT) {
      if (!xp_pb_varint(r, &v)) break;
      o->portable = v != 0;
    } else if (!xp_pb_skip(r, f, w, 0)) {
      break;
    }
  }
  return NULL;
}

XP_PRIVATE PJRT_Error *xp_compile_options_parse(const char *fn,
                                                const uint8_t *data,
                                                size_t size,
                                                xp_compile_options *out) {
  memset(out, 0, sizeof *out);
  if (size && !data) return xp_error_null(fn, "args->compile_options");
  xp_pb r = {data, data + size, data, NULL, 0};
  PJRT_Error *e = size ? xp_pb_compile_options(fn, &r, out) : NULL;
  if (!e && r.why)
    e = xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                 "%s: compile_options is not a valid serialized "
                 "CompileOptionsProto: %s (at byte %zu of %zu)",
                 fn, r.why, r.at, size);
  if (!e && (out->num_replicas < 0 || out->num_partitions < 0 ||
             out->num_replicas > 0x7fffffff ||
             out->num_partitions > 0x7fffffff))
    e = xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                 "%s: compile_options: num_replicas %lld, num_partitions "
                 "%lld", fn, (long long)out->num_replicas,
                 (long long)out->num_partitions);
  if (e) {
    xp_free(out->assignment);
    out->assignment = NULL;
  }
  return e;
}
