/*
 * pjrt_proto_util.h - a tiny protobuf writer for the PJRT host tests: the
 * serialized CompileOptionsProto a PJRT host (JAX) hands to
 * PJRT_Client_Compile, encoded independently of the plugin's reader.
 *
 * Wire format: a field is a varint key (field_number << 3 | wire_type)
 * then its value: wire type 0 a varint (negative int64 as its 64-bit two's
 * complement, ten bytes), 1 eight little-endian bytes, 2 a varint length
 * then that many bytes (strings, nested messages, packed repeated
 * scalars), 5 four little-endian bytes.
 *
 * Field numbers (openxla/xla xla/pjrt/proto/compile_options.proto and
 * xla/xla_data.proto):
 *   CompileOptionsProto: argument_layouts 1, parameter_is_tupled_arguments 2,
 *     executable_build_options 3, compile_portable_executable 4,
 *     profile_version 5, env_option_overrides 7 (map<string,
 *     OptionOverrideProto>: entry key 1, value 2)
 *   ExecutableBuildOptionsProto: device_ordinal 1, debug_options 3,
 *     num_replicas 4, num_partitions 5, use_spmd_partitioning 6,
 *     device_assignment 9, allow_spmd_sharding_propagation_to_output 12
 *     (repeated bool), exec_time_optimization_effort 20 (float)
 *   DeviceAssignmentProto: replica_count 1, computation_count 2,
 *     computation_devices 3 (ComputationDevice: replica_device_ids 1)
 *   OptionOverrideProto: string_field 1, bool_field 2, int_field 3
 */
#ifndef XRT_TEST_PJRT_PROTO_UTIL_H
#define XRT_TEST_PJRT_PROTO_UTIL_H

#include <stdint.h>
#include <string.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* A message being written; ok drops to 0 when it would overflow. */
typedef struct pb_buf {
  uint8_t b[1024];
  size_t n;
  int ok;
} pb_buf;

static inline void pb_init(pb_buf *p) {
  p->n = 0;
  p->ok = 1;
}

static inline void pb_raw(pb_buf *p, const void *d, size_t n) {
  if (!p->ok || n > sizeof p->b - p->n) {
    p->ok = 0;
    return;
  }
  memcpy(p->b + p->n, d, n);
  p->n += n;
}

static inline void pb_varint(pb_buf *p, uint64_t v) {
  uint8_t t[10];
  size_t k = 0;
  do {
    t[k] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) t[k] |= 0x80;
    k++;
  } while (v);
  pb_raw(p, t, k);
}

static inline void pb_key(pb_buf *p, unsigned field, unsigned wire) {
  pb_varint(p, ((uint64_t)field << 3) | wire);
}

/* int64 / int32 / bool / enum field (int32 negatives also take ten bytes). */
static inline void pb_int(pb_buf *p, unsigned field, int64_t v) {
  pb_key(p, field, PB_VARINT);
  pb_varint(p, (uint64_t)v);
}

static inline void pb_len(pb_buf *p, unsigned field, const void *d, size_t n) {
  pb_key(p, field, PB_LEN);
  pb_varint(p, n);
  pb_raw(p, d, n);
}

static inline void pb_msg(pb_buf *p, unsigned field, const pb_buf *sub) {
  if (!sub->ok) p->ok = 0;
  pb_len(p, field, sub->b, sub->n);
}

static inline void pb_str(pb_buf *p, unsigned field, const char *s) {
  pb_len(p, field, s, strlen(s));
}

static inline void pb_fixed32(pb_buf *p, unsigned field, uint32_t v) {
  uint8_t t[4];
  for (int i = 0; i < 4; i++) t[i] = (uint8_t)(v >> (8 * i));
  pb_key(p, field, PB_I32);
  pb_raw(p, t, 4);
}

static inline void pb_fixed64(pb_buf *p, unsigned field, uint64_t v) {
  uint8_t t[8];
  for (int i = 0; i < 8; i++) t[i] = (uint8_t)(v >> (8 * i));
  pb_key(p, field, PB_I64);
  pb_raw(p, t, 8);
}

/* A repeated int64 field, packed (proto3's default) or one key per value
 * (which a reader must accept too). */
static inline void pb_int64s(pb_buf *p, unsigned field, const int64_t *v,
                             int n, int packed) {
  if (!packed) {
    for (int i = 0; i < n; i++) pb_int(p, field, v[i]);
    return;
  }
  pb_buf s;
  pb_init(&s);
  for (int i = 0; i < n; i++) pb_varint(&s, (uint64_t)v[i]);
  pb_msg(p, field, &s);
}

/* DeviceAssignmentProto for `replicas` x `computations` devices:
 * ids[c * replicas + r] is the device of replica r of computation c. */
static inline void pb_device_assignment(pb_buf *da, int replicas,
                                        int computations, const int64_t *ids,
                                        int packed) {
  pb_init(da);
  pb_int(da, 1, replicas);
  pb_int(da, 2, computations);
  for (int c = 0; c < computations; c++) {
    pb_buf cd;
    pb_init(&cd);
    pb_int64s(&cd, 1, ids + (size_t)c * (size_t)replicas, replicas, packed);
    pb_msg(da, 3, &cd);
  }
}

/* A CompileOptionsProto as JAX sends it: executable_build_options with
 * num_replicas, num_partitions and (when ids) a device assignment of
 * replicas x partitions devices, plus fields a plugin is to skip
 * (device_ordinal -1 as a ten-byte varint, an empty debug_options, a float,
 * a repeated bool, an env option override, profile_version). */
static inline void pb_compile_options(pb_buf *out, int replicas,
                                      int partitions, const int64_t *ids) {
  pb_buf ebo, da, dbg, ov, entry;
  pb_init(&ebo);
  pb_int(&ebo, 1, -1);          /* device_ordinal: unset */
  pb_init(&dbg);
  pb_int(&dbg, 9999, 1);        /* a DebugOptions field nobody knows */
  pb_msg(&ebo, 3, &dbg);        /* debug_options */
  pb_int(&ebo, 4, replicas);    /* num_replicas */
  pb_int(&ebo, 5, partitions);  /* num_partitions */
  pb_int(&ebo, 6, 0);           /* use_spmd_partitioning: false */
  if (ids) {
    pb_device_assignment(&da, replicas, partitions, ids, 1);
    pb_msg(&ebo, 9, &da);       /* device_assignment */
  }
  {
    const int64_t f[1] = {0};
    pb_int64s(&ebo, 12, f, 1, 1); /* allow_spmd_..._to_output: [false] */
  }
  pb_fixed32(&ebo, 20, 0);      /* exec_time_optimization_effort: 0.0f */

  pb_init(out);
  pb_msg(out, 3, &ebo);         /* executable_build_options */
  pb_int(out, 4, 0);            /* compile_portable_executable: false */
  pb_int(out, 5, 0);            /* profile_version */
  pb_init(&ov);
  pb_int(&ov, 2, 1);            /* bool_field: true */
  pb_init(&entry);
  pb_str(&entry, 1, "xla_some_option");
  pb_msg(&entry, 2, &ov);
  pb_msg(out, 7, &entry);       /* env_option_overrides */
}

#endif /* XRT_TEST_PJRT_PROTO_UTIL_H */
