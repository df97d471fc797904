/*
 * src/pjrt/proto.c - the compile options PJRT_Client_Compile takes: a
 * serialized xla.CompileOptionsProto, written by a minimal protobuf
 * encoder for the fields xrt sets (launch shape, device assignment,
 * portability).
 *
 * Wire format: each field is a varint key (number << 3 | wire type) and
 * its value: a varint (wire type 0; a negative int64 as its 64-bit two's
 * complement, ten bytes) or a varint length and that many bytes (wire type
 * 2: nested messages and packed repeated numbers).
 */
#include "xrt.h"
#include "internal.h"

/* Field numbers, from openxla/xla: xla/pjrt/proto/compile_options.proto
 * (CompileOptionsProto, ExecutableBuildOptionsProto) and
 * xla/xla_data.proto (DeviceAssignmentProto). */
enum {
  /* CompileOptionsProto */
  XPJ_CO_EXECUTABLE_BUILD_OPTIONS = 3, /* ExecutableBuildOptionsProto */
  XPJ_CO_COMPILE_PORTABLE_EXECUTABLE = 4, /* bool */
  /* ExecutableBuildOptionsProto */
  XPJ_EBO_DEVICE_ORDINAL = 1,   /* int64; -1: not set */
  XPJ_EBO_NUM_REPLICAS = 4,     /* int64 */
  XPJ_EBO_NUM_PARTITIONS = 5,   /* int64 */
  XPJ_EBO_DEVICE_ASSIGNMENT = 9, /* DeviceAssignmentProto */
  /* DeviceAssignmentProto */
  XPJ_DA_REPLICA_COUNT = 1,       /* int32 */
  XPJ_DA_COMPUTATION_COUNT = 2,   /* int32 */
  XPJ_DA_COMPUTATION_DEVICES = 3, /* repeated ComputationDevice */
  /* DeviceAssignmentProto.ComputationDevice */
  XPJ_CD_REPLICA_DEVICE_IDS = 1   /* repeated int64, packed */
};

enum { XPJ_WIRE_VARINT = 0, XPJ_WIRE_LEN = 2 };

/* A message being written; oom once an allocation failed. */
typedef struct xpj_pb {
  xrt_allocator al;
  uint8_t *b;
  size_t n, cap;
  int oom;
} xpj_pb;

static void xpj_pb_raw(xpj_pb *p, const void *d, size_t n) {
  if (p->oom || !n) return;
  if (p->cap - p->n < n) {
    size_t cap = p->cap ? p->cap : 64;
    while (cap - p->n < n) cap *= 2;
    uint8_t *b = (uint8_t *)xpj_alloc(p->al, cap);
    if (!b) {
      p->oom = 1;
      return;
    }
    if (p->n) memcpy(b, p->b, p->n);
    xpj_free(p->al, p->b);
    p->b = b;
    p->cap = cap;
  }
  memcpy(p->b + p->n, d, n);
  p->n += n;
}

static void xpj_pb_varint(xpj_pb *p, uint64_t v) {
  uint8_t t[10];
  size_t k = 0;
  do {
    t[k] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) t[k] |= 0x80;
    k++;
  } while (v);
  xpj_pb_raw(p, t, k);
}

static void xpj_pb_int(xpj_pb *p, unsigned field, int64_t v) {
  xpj_pb_varint(p, ((uint64_t)field << 3) | XPJ_WIRE_VARINT);
  xpj_pb_varint(p, (uint64_t)v);
}

/* A nested message (or packed list) field, taking inner's bytes. */
static void xpj_pb_msg(xpj_pb *p, unsigned field, xpj_pb *inner) {
  if (inner->oom) p->oom = 1;
  xpj_pb_varint(p, ((uint64_t)field << 3) | XPJ_WIRE_LEN);
  xpj_pb_varint(p, inner->n);
  xpj_pb_raw(p, inner->b, inner->n);
  xpj_free(inner->al, inner->b);
  memset(inner, 0, sizeof *inner);
}

static void xpj_pb_init(xpj_pb *p, xrt_allocator al) {
  memset(p, 0, sizeof *p);
  p->al = al;
}

/* DeviceAssignmentProto: devices of computation (partition) c, by
 * replica. */
static void xpj_pb_assignment(xpj_pb *da, int replicas, int partitions,
                              const int *ids) {
  xpj_pb_int(da, XPJ_DA_REPLICA_COUNT, replicas);
  xpj_pb_int(da, XPJ_DA_COMPUTATION_COUNT, partitions);
  for (int c = 0; c < partitions; c++) {
    xpj_pb packed, cd;
    xpj_pb_init(&packed, da->al);
    xpj_pb_init(&cd, da->al);
    for (int r = 0; r < replicas; r++)
      xpj_pb_varint(&packed, (uint64_t)(int64_t)ids[r * partitions + c]);
    xpj_pb_msg(&cd, XPJ_CD_REPLICA_DEVICE_IDS, &packed);
    xpj_pb_msg(da, XPJ_DA_COMPUTATION_DEVICES, &cd);
  }
}

XPJ_PRIVATE xrt_status xpj_compile_options(xrt_allocator al, int replicas,
                                           int partitions, const int *ids,
                                           int portable, uint8_t **out,
                                           size_t *out_size,
                                           xrt_plugin_error *err) {
  xpj_pb co, ebo;
  xpj_pb_init(&co, al);
  xpj_pb_init(&ebo, al);
  xpj_pb_int(&ebo, XPJ_EBO_DEVICE_ORDINAL, -1);
  xpj_pb_int(&ebo, XPJ_EBO_NUM_REPLICAS, replicas);
  xpj_pb_int(&ebo, XPJ_EBO_NUM_PARTITIONS, partitions);
  if (!portable) {
    xpj_pb da;
    xpj_pb_init(&da, al);
    xpj_pb_assignment(&da, replicas, partitions, ids);
    xpj_pb_msg(&ebo, XPJ_EBO_DEVICE_ASSIGNMENT, &da);
  }
  xpj_pb_msg(&co, XPJ_CO_EXECUTABLE_BUILD_OPTIONS, &ebo);
  if (portable) xpj_pb_int(&co, XPJ_CO_COMPILE_PORTABLE_EXECUTABLE, 1);
  if (co.oom) {
    xpj_free(al, co.b);
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory for "
                    "the compile options");
  }
  *out = co.b;
  *out_size = co.n;
  return XRT_OK;
}
