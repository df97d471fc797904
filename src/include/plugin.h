/* ---- src/include/plugin.h, part of xrt.h: the plugin interface and the IR that
 * plugins receive (the plugin ABI). */

/* ======================================================================
 * Plugin interface and IR (the plugin ABI: stable from version 1.0)
 *
 * A device plugin receives programs already parsed and verified, as the
 * read-only structures below.  Values are numbered per function; an op's
 * operands and results are indices into xrt_ir_func.value_types.  Regions
 * have a single block whose last op is its terminator.
 * ==================================================================== */

/* X-macro of every op the parser knows: X(ENUM, "name"). */
#define XRT_OPCODES(X)                                                        \
  X(ABS, "stablehlo.abs")                                                     \
  X(ADD, "stablehlo.add")                                                     \
  X(AFTER_ALL, "stablehlo.after_all")                                         \
  X(ALL_GATHER, "stablehlo.all_gather")                                       \
  X(ALL_REDUCE, "stablehlo.all_reduce")                                       \
  X(ALL_TO_ALL, "stablehlo.all_to_all")                                       \
  X(AND, "stablehlo.and")                                                     \
  X(ATAN2, "stablehlo.atan2")                                                 \
  X(BATCH_NORM_GRAD, "stablehlo.batch_norm_grad")                             \
  X(BATCH_NORM_INFERENCE, "stablehlo.batch_norm_inference")                   \
  X(BATCH_NORM_TRAINING, "stablehlo.batch_norm_training")                     \
  X(BITCAST_CONVERT, "stablehlo.bitcast_convert")                             \
  X(BROADCAST, "stablehlo.broadcast")                                         \
  X(BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim")                           \
  X(CASE, "stablehlo.case")                                                   \
  X(CBRT, "stablehlo.cbrt")                                                   \
  X(CEIL, "stablehlo.ceil")                                                   \
  X(CHOLESKY, "stablehlo.cholesky")                                           \
  X(CLAMP, "stablehlo.clamp")                                                 \
  X(COLLECTIVE_BROADCAST, "stablehlo.collective_broadcast")                   \
  X(COLLECTIVE_PERMUTE, "stablehlo.collective_permute")                       \
  X(COLLECTIVE_REDUCE, "stablehlo.collective_reduce")                         \
  X(COMPARE, "stablehlo.compare")                                             \
  X(COMPLEX, "stablehlo.complex")                                             \
  X(COMPOSITE, "stablehlo.composite")                                         \
  X(CONCATENATE, "stablehlo.concatenate")                                     \
  X(CONSTANT, "stablehlo.constant")                                           \
  X(CONVERT, "stablehlo.convert")                                             \
  X(CONVOLUTION, "stablehlo.convolution")                                     \
  X(COSINE, "stablehlo.cosine")                                               \
  X(COUNT_LEADING_ZEROS, "stablehlo.count_leading_zeros")                     \
  X(CUSTOM_CALL, "stablehlo.custom_call")                                     \
  X(DIVIDE, "stablehlo.divide")                                               \
  X(DOT, "stablehlo.dot")                                                     \
  X(DOT_GENERAL, "stablehlo.dot_general")                                     \
  X(DYNAMIC_BROADCAST_IN_DIM, "stablehlo.dynamic_broadcast_in_dim")           \
  X(DYNAMIC_CONV, "stablehlo.dynamic_conv")                                   \
  X(DYNAMIC_GATHER, "stablehlo.dynamic_gather")                               \
  X(DYNAMIC_IOTA, "stablehlo.dynamic_iota")                                   \
  X(DYNAMIC_PAD, "stablehlo.dynamic_pad")                                     \
  X(DYNAMIC_RESHAPE, "stablehlo.dynamic_reshape")                             \
  X(DYNAMIC_SLICE, "stablehlo.dynamic_slice")                                 \
  X(DYNAMIC_UPDATE_SLICE, "stablehlo.dynamic_update_slice")                   \
  X(EXPONENTIAL, "stablehlo.exponential")                                     \
  X(EXPONENTIAL_MINUS_ONE, "stablehlo.exponential_minus_one")                 \
  X(FFT, "stablehlo.fft")                                                     \
  X(FLOOR, "stablehlo.floor")                                                 \
  X(GATHER, "stablehlo.gather")                                               \
  X(GET_DIMENSION_SIZE, "stablehlo.get_dimension_size")                       \
  X(GET_TUPLE_ELEMENT, "stablehlo.get_tuple_element")                         \
  X(IF, "stablehlo.if")                                                       \
  X(IMAG, "stablehlo.imag")                                                   \
  X(INFEED, "stablehlo.infeed")                                               \
  X(IOTA, "stablehlo.iota")                                                   \
  X(IS_FINITE, "stablehlo.is_finite")                                         \
  X(LOG, "stablehlo.log")                                                     \
  X(LOG_PLUS_ONE, "stablehlo.log_plus_one")                                   \
  X(LOGISTIC, "stablehlo.logistic")                                           \
  X(MAP, "stablehlo.map")                                                     \
  X(MAXIMUM, "stablehlo.maximum")                                             \
  X(MINIMUM, "stablehlo.minimum")                                             \
  X(MULTIPLY, "stablehlo.multiply")                                           \
  X(NEGATE, "stablehlo.negate")                                               \
  X(NOT, "stablehlo.not")                                                     \
  X(OPTIMIZATION_BARRIER, "stablehlo.optimization_barrier")                   \
  X(OR, "stablehlo.or")                                                       \
  X(OUTFEED, "stablehlo.outfeed")                                             \
  X(PAD, "stablehlo.pad")                                                     \
  X(PARTITION_ID, "stablehlo.partition_id")                                   \
  X(POPCNT, "stablehlo.popcnt")                                               \
  X(POWER, "stablehlo.power")                                                 \
  X(REAL, "stablehlo.real")                                                   \
  X(RECV, "stablehlo.recv")                                                   \
  X(REDUCE, "stablehlo.reduce")                                               \
  X(REDUCE_PRECISION, "stablehlo.reduce_precision")                           \
  X(REDUCE_SCATTER, "stablehlo.reduce_scatter")                               \
  X(REDUCE_WINDOW, "stablehlo.reduce_window")                                 \
  X(REMAINDER, "stablehlo.remainder")                                         \
  X(REPLICA_ID, "stablehlo.replica_id")                                       \
  X(RESHAPE, "stablehlo.reshape")                                             \
  X(RETURN, "stablehlo.return")                                               \
  X(REVERSE, "stablehlo.reverse")                                             \
  X(RNG, "stablehlo.rng")                                                     \
  X(RNG_BIT_GENERATOR, "stablehlo.rng_bit_generator")                         \
  X(ROUND_NEAREST_AFZ, "stablehlo.round_nearest_afz")                         \
  X(ROUND_NEAREST_EVEN, "stablehlo.round_nearest_even")                       \
  X(RSQRT, "stablehlo.rsqrt")                                                 \
  X(SCATTER, "stablehlo.scatter")                                             \
  X(SELECT, "stablehlo.select")                                               \
  X(SELECT_AND_SCATTER, "stablehlo.select_and_scatter")                       \
  X(SEND, "stablehlo.send")                                                   \
  X(SHIFT_LEFT, "stablehlo.shift_left")                                       \
  X(SHIFT_RIGHT_ARITHMETIC, "stablehlo.shift_right_arithmetic")               \
  X(SHIFT_RIGHT_LOGICAL, "stablehlo.shift_right_logical")                     \
  X(SIGN, "stablehlo.sign")                                                   \
  X(SINE, "stablehlo.sine")                                                   \
  X(SLICE, "stablehlo.slice")                                                 \
  X(SORT, "stablehlo.sort")                                                   \
  X(SQRT, "stablehlo.sqrt")                                                   \
  X(SUBTRACT, "stablehlo.subtract")                                           \
  X(TAN, "stablehlo.tan")                                                     \
  X(TANH, "stablehlo.tanh")                                                   \
  X(TRANSPOSE, "stablehlo.transpose")                                         \
  X(TRIANGULAR_SOLVE, "stablehlo.triangular_solve")                           \
  X(TUPLE, "stablehlo.tuple")                                                 \
  X(UNIFORM_DEQUANTIZE, "stablehlo.uniform_dequantize")                       \
  X(UNIFORM_QUANTIZE, "stablehlo.uniform_quantize")                           \
  X(WHILE, "stablehlo.while")                                                 \
  X(XOR, "stablehlo.xor")                                                     \
  X(FUNC_CALL, "func.call")                                                   \
  X(FUNC_RETURN, "func.return")                                               \
  X(CHLO_MULHI, "chlo.mulhi")                                                 \
  X(CHLO_RAGGED_DOT, "chlo.ragged_dot")                                       \
  X(CHLO_SCAN, "chlo.scan")                                                   \
  X(CHLO_ACOS, "chlo.acos")                                                   \
  X(CHLO_ACOSH, "chlo.acosh")                                                 \
  X(CHLO_ASIN, "chlo.asin")                                                   \
  X(CHLO_ASINH, "chlo.asinh")                                                 \
  X(CHLO_ATAN, "chlo.atan")                                                   \
  X(CHLO_ATANH, "chlo.atanh")                                                 \
  X(CHLO_BESSEL_I1E, "chlo.bessel_i1e")                                       \
  X(CHLO_CONJ, "chlo.conj")                                                   \
  X(CHLO_CONSTANT, "chlo.constant")                                           \
  X(CHLO_CONSTANT_LIKE, "chlo.constant_like")                                 \
  X(CHLO_COSH, "chlo.cosh")                                                   \
  X(CHLO_DIGAMMA, "chlo.digamma")                                             \
  X(CHLO_ERF, "chlo.erf")                                                     \
  X(CHLO_ERFC, "chlo.erfc")                                                   \
  X(CHLO_ERF_INV, "chlo.erf_inv")                                             \
  X(CHLO_IS_INF, "chlo.is_inf")                                               \
  X(CHLO_IS_NEG_INF, "chlo.is_neg_inf")                                       \
  X(CHLO_IS_POS_INF, "chlo.is_pos_inf")                                       \
  X(CHLO_LGAMMA, "chlo.lgamma")                                               \
  X(CHLO_NEXT_AFTER, "chlo.next_after")                                       \
  X(CHLO_POLYGAMMA, "chlo.polygamma")                                         \
  X(CHLO_SINH, "chlo.sinh")                                                   \
  X(CHLO_TAN, "chlo.tan")                                                     \
  X(CHLO_TOP_K, "chlo.top_k")                                                 \
  X(CHLO_ZETA, "chlo.zeta")                                                   \
  X(CHLO_BROADCAST_ADD, "chlo.broadcast_add")                                 \
  X(CHLO_BROADCAST_AND, "chlo.broadcast_and")                                 \
  X(CHLO_BROADCAST_ATAN2, "chlo.broadcast_atan2")                             \
  X(CHLO_BROADCAST_COMPARE, "chlo.broadcast_compare")                         \
  X(CHLO_BROADCAST_COMPLEX, "chlo.broadcast_complex")                         \
  X(CHLO_BROADCAST_DIVIDE, "chlo.broadcast_divide")                           \
  X(CHLO_BROADCAST_MAXIMUM, "chlo.broadcast_maximum")                         \
  X(CHLO_BROADCAST_MINIMUM, "chlo.broadcast_minimum")                         \
  X(CHLO_BROADCAST_MULTIPLY, "chlo.broadcast_multiply")                       \
  X(CHLO_BROADCAST_NEXT_AFTER, "chlo.broadcast_next_after")                   \
  X(CHLO_BROADCAST_OR, "chlo.broadcast_or")                                   \
  X(CHLO_BROADCAST_POLYGAMMA, "chlo.broadcast_polygamma")                     \
  X(CHLO_BROADCAST_POWER, "chlo.broadcast_power")                             \
  X(CHLO_BROADCAST_REMAINDER, "chlo.broadcast_remainder")                     \
  X(CHLO_BROADCAST_SELECT, "chlo.broadcast_select")                           \
  X(CHLO_BROADCAST_SHIFT_LEFT, "chlo.broadcast_shift_left")                   \
  X(CHLO_BROADCAST_SHIFT_RIGHT_ARITHMETIC,                                    \
    "chlo.broadcast_shift_right_arithmetic")                                  \
  X(CHLO_BROADCAST_SHIFT_RIGHT_LOGICAL, "chlo.broadcast_shift_right_logical") \
  X(CHLO_BROADCAST_SUBTRACT, "chlo.broadcast_subtract")                       \
  X(CHLO_BROADCAST_XOR, "chlo.broadcast_xor")                                 \
  X(CHLO_BROADCAST_ZETA, "chlo.broadcast_zeta")                             \
  X(REAL_DYNAMIC_SLICE, "stablehlo.real_dynamic_slice")

/* Every op the parser knows: XRT_OP_ADD for "stablehlo.add", and so on
 * (XRT_OPCODES lists them with their names). */
typedef enum xrt_opcode {
  XRT_OP_INVALID = 0,
#define XRT__OPCODE_ENUM(e, s) XRT_OP_##e,
  XRT_OPCODES(XRT__OPCODE_ENUM)
#undef XRT__OPCODE_ENUM
  XRT_OP_COUNT
} xrt_opcode;

/* The op's MLIR name ("stablehlo.add"); "invalid" if out of range.
 * Thread-safe. */
XRT_API const char *xrt_opcode_name(xrt_opcode op);

/* A source location: file (borrowed from the program), 1-based line/col. */
typedef struct xrt_ir_loc {
  const char *file;
  int32_t line;
  int32_t col;
} xrt_ir_loc;

/* What an xrt_ir_type is. */
typedef enum xrt_ir_type_kind {
  XRT_TYPE_TENSOR = 0,
  XRT_TYPE_TUPLE = 1,
  XRT_TYPE_TOKEN = 2
} xrt_ir_type_kind;

/* Per-tensor or per-axis uniform quantization (!quant.uniform). */
typedef struct xrt_ir_quant {
  xrt_dtype storage;       /* i8, ... */
  xrt_dtype expressed;     /* f32, ... */
  int64_t storage_min, storage_max;
  int32_t axis;            /* -1 for per-tensor */
  int32_t num_scales;
  const double *scales;
  const int64_t *zero_points;
} xrt_ir_quant;

/* A value's type: a tensor (shape, maybe quantized), a tuple of types or
 * a token. */
typedef struct xrt_ir_type {
  uint8_t kind;            /* xrt_ir_type_kind */
  xrt_shape shape;         /* for tensors; dtype is the storage type */
  const xrt_ir_quant *quant; /* non-NULL for quantized element types */
  int32_t num_elems;       /* tuples */
  const struct xrt_ir_type *elems;
} xrt_ir_type;

/* A dense literal.  data holds the elements in buffer storage format
 * (see xrt_dtype); when splat is true it holds one element that stands for
 * every element of type. */
typedef struct xrt_ir_literal {
  xrt_ir_type type;
  const void *data;
  size_t bytes;
  bool splat;
} xrt_ir_literal;

/* What an xrt_ir_attr holds, and in which of its fields. */
typedef enum xrt_ir_attr_kind {
  XRT_ATTR_UNIT = 0,    /* present, no value */
  XRT_ATTR_INT = 1,     /* i */
  XRT_ATTR_FLOAT = 2,   /* f */
  XRT_ATTR_BOOL = 3,    /* i (0/1) */
  XRT_ATTR_STRING = 4,  /* s ("..." contents, unescaped), n = length */
  XRT_ATTR_ENUM = 5,    /* s: #stablehlo<comparison_direction LT> -> "LT",
                           or a bare keyword such as FLOAT */
  XRT_ATTR_INTS = 6,    /* ints[n]: [1, 2], array<i64: 1, 2>, dense<[1,2]> of
                           an integer type */
  XRT_ATTR_DENSE = 7,   /* lit: any other dense<...> : type */
  XRT_ATTR_TYPE = 8,    /* type */
  XRT_ATTR_SYMBOL = 9,  /* s: @name -> "name" */
  XRT_ATTR_LIST = 10,   /* items[num_items]: [...] of non-integers */
  XRT_ATTR_DICT = 11    /* items[num_items], each named: {a = 1} and
                           #dialect.struct<a = 1> */
} xrt_ir_attr_kind;

/* One attribute of an op (or an item of a list or dictionary attribute);
 * kind says which fields hold its value. */
typedef struct xrt_ir_attr {
  const char *name;     /* NULL inside lists */
  uint8_t kind;         /* xrt_ir_attr_kind */
  int64_t i;
  double f;
  const char *s;
  int64_t n;
  const int64_t *ints;
  const xrt_ir_literal *lit;
  const xrt_ir_type *type;
  int32_t num_items;
  const struct xrt_ir_attr *items;
} xrt_ir_attr;

struct xrt_ir_region;

/* One op: operands and results are value ids of the enclosing function
 * (indices into xrt_ir_func.value_types). */
typedef struct xrt_ir_op {
  xrt_opcode code;
  const char *name;      /* as written, e.g. "stablehlo.add" */
  int32_t num_operands;
  const int32_t *operands;
  int32_t num_results;
  const int32_t *results;
  int32_t num_attrs;
  const xrt_ir_attr *attrs;
  int32_t num_regions;
  const struct xrt_ir_region *regions;
  xrt_ir_loc loc;
  /* func.call: index into xrt_ir_module.funcs.  custom_call, infeed,
   * outfeed, send, recv: index into xrt_plugin_compile_args.host_bindings
   * (the last four call host functions named "xrt.infeed", "xrt.outfeed",
   * "xrt.send" and "xrt.recv"). */
  int32_t callee;
} xrt_ir_op;

/* A region (one block): its arguments and ops. */
typedef struct xrt_ir_region {
  int32_t num_args;
  const int32_t *args;   /* value ids of the block arguments */
  int32_t num_ops;
  const xrt_ir_op *ops;  /* last op is the terminator */
} xrt_ir_region;

/* One func.func: its body, the types of all its values, its results. */
typedef struct xrt_ir_func {
  const char *name;
  bool is_public;
  int32_t num_values;
  const xrt_ir_type *value_types; /* indexed by value id */
  xrt_ir_region body;             /* body.args are the function arguments */
  int32_t num_results;
  const xrt_ir_type *result_types;
  xrt_ir_loc loc;
} xrt_ir_func;

/* A parsed, verified module: what a plugin compiles (read-only). */
typedef struct xrt_ir_module {
  const char *name;      /* "" if unnamed */
  int32_t num_custom_calls; /* ops that call the host, see xrt_ir_op.callee */
  int32_t num_funcs;
  const xrt_ir_func *funcs;
  int32_t num_replicas;  /* mhlo.num_replicas, default 1 */
  int32_t num_partitions;/* mhlo.num_partitions, default 1 */
  /* The module attribute stablehlo.version ("1.8.0"), or
   * xrt_stablehlo_version() when absent. */
  const char *stablehlo_version;
  /* ---- ABI 1.3 ---- */
  /* The program as xrt received it (StableHLO text, or the bytes of a
   * portable artifact; source_size bytes, NUL-terminated), for plugins that hand programs on to another
   * compiler (xrt_pjrt.c passes it to PJRT_Client_Compile). */
  const char *source;
  size_t source_size;
} xrt_ir_module;

/* The module of a parsed program (borrowed from it; read-only). Thread-safe. */
XRT_API const xrt_ir_module *xrt_program_module(const xrt_program *program);

/* Finds an attribute of op by name; NULL if absent. Thread-safe. */
static inline const xrt_ir_attr *xrt_ir_op_attr(const xrt_ir_op *op,
                                                const char *name) {
  for (int32_t i = 0; i < op->num_attrs; i++) {
    const char *a = op->attrs[i].name, *b = name;
    while (*a && *a == *b) a++, b++;
    if (*a == *b) return &op->attrs[i];
  }
  return 0;
}

/* Finds a named field of a DICT attribute (such as the dot_dimension_numbers
 * of dot_general); NULL if absent or attr is not a DICT. Thread-safe. */
static inline const xrt_ir_attr *xrt_ir_attr_field(const xrt_ir_attr *attr,
                                                   const char *name) {
  if (!attr || attr->kind != XRT_ATTR_DICT) return 0;
  for (int32_t i = 0; i < attr->num_items; i++) {
    const char *a = attr->items[i].name, *b = name;
    if (!a) continue;
    while (*a && *a == *b) a++, b++;
    if (*a == *b) return &attr->items[i];
  }
  return 0;
}

/* ---- Plugin ABI ----
 *
 * Versioning (PJRT style): a plugin's table carries the ABI major/minor it
 * was built against and its struct_size.  xrt loads a table with the same
 * major and a minor of at least XRT_PLUGIN_ABI_MIN_MINOR; functions and
 * fields are only ever appended, so an older plugin's smaller table reads
 * as NULL for what it lacks, and every NULL function answers
 * XRT_UNIMPLEMENTED ("plugin 'x' does not implement <function>").  Every
 * argument struct starts with struct_size, set by whoever fills it: a
 * plugin reads a field only when XRT_STRUCT_HAS says the struct has it,
 * and fills only the fields its own headers had.
 *
 * Threading: the core calls a plugin's functions for one device from that
 * device's worker thread, and different devices' calls concurrently;
 * compile, client and query functions from any thread. */

/* The plugin ABI version of this header: a plugin built with it sets
 * abi_major and abi_minor of its table to these. */
#define XRT_PLUGIN_ABI_MAJOR 1 /* changes only when the ABI breaks */
#define XRT_PLUGIN_ABI_MINOR 3 /* grows with each append to the ABI */
/* The oldest minor of this major that xrt still loads. */
#define XRT_PLUGIN_ABI_MIN_MINOR 0

/* The symbol a plugin library exports, and its type. */
#define XRT_PLUGIN_ENTRY_SYMBOL "xrt_plugin_get_api"
/* The type of a plugin library's xrt_plugin_get_api. */
typedef const struct xrt_plugin_api *(*xrt_plugin_get_api_fn)(void);

/* Whether a struct that starts with struct_size includes field. */
#define XRT_STRUCT_HAS(ptr, type, field)                                      \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* Every plugin call that can fail gets one of these to explain why. */
typedef struct xrt_plugin_error {
  char message[1024];
} xrt_plugin_error;

/* Services the core offers a plugin (logging and tracing into xrt's). */
typedef struct xrt_plugin_host_api {
  size_t struct_size;
  void *ctx;  /* pass back to every call */
  /* Logs a message under component (the plugin's name is a good one). */
  void (*log)(void *ctx, xrt_log_level level, const char *component,
              const char *message);
  /* Whether a trace is being recorded (cheap; check before timing). */
  bool (*trace_enabled)(void *ctx);
  /* Records one complete event on a device's track: category "collective",
   * "kernel", "transfer"...; times from now_ns. */
  void (*trace_event)(void *ctx, int device, const char *category,
                      const char *name, int64_t start_ns, int64_t end_ns);
  /* The trace clock (monotonic nanoseconds). */
  int64_t (*now_ns)(void *ctx);
  /* ---- ABI 1.2: several processes (see "Multi-process") ---- */
  /* Sends and receives bytes between this process and others, for
   * collectives that span processes (see xrt_transport.exchange; peers are
   * process indices).  NULL, or process_count 1: the client is of this
   * process alone. */
  xrt_status (*exchange)(void *ctx, uint64_t tag,
                         const xrt_transport_msg *sends, int num_sends,
                         const xrt_transport_msg *recvs, int num_recvs,
                         xrt_plugin_error *err);
  int process_index, process_count;
} xrt_plugin_host_api;

/* What client_create receives: the client's options and topology, and
 * the core's services (host). */
typedef struct xrt_plugin_client_args {
  size_t struct_size;
  int num_devices;
  uint64_t device_memory_bytes;
  xrt_allocator allocator;
  int threads_per_device;  /* for one op on one device; 0: the plugin picks */
  /* ---- ABI 1.0 ---- */
  xrt_topology topology;   /* resolved, no -1 */
  const xrt_plugin_host_api *host; /* valid until client_destroy */
  /* ---- ABI 1.3 ---- */
  /* The table this call came through, so that one set of functions can
   * serve several tables (xrt_pjrt.c makes one per PJRT plugin). */
  const struct xrt_plugin_api *api;
} xrt_plugin_client_args;

/* A box copy: the elements of extent[0..rank) starting at src_start in
 * the array of src_dims at src (on src_device) go to dst_start in the
 * array of dst_dims at dst (on dst_device).  Elements are elem_bytes
 * each.  The regions lie inside their arrays (the core checks); src and
 * dst are different memories. */
typedef struct xrt_plugin_copy_region_args {
  size_t struct_size;
  int src_device;
  const void *src;
  const int64_t *src_dims, *src_start;
  int dst_device;
  void *dst;
  const int64_t *dst_dims, *dst_start;
  const int64_t *extent;
  int rank;
  size_t elem_bytes;
} xrt_plugin_copy_region_args;

/* What a plugin says of itself before any client (platform_describe).
 * Strings and arrays are borrowed from the plugin for its lifetime. */
typedef struct xrt_plugin_platform_desc {
  size_t struct_size;
  const char *stablehlo_min;     /* accepted StableHLO versions; NULL: any */
  const char *stablehlo_max;
  uint32_t capabilities;         /* XRT_CAP_* */
  uint64_t dtypes;               /* bit (1 << xrt_dtype) per type; 0: all */
  int num_attributes;
  const xrt_attribute *attributes;
  /* ---- ABI 1.3 ---- */
  /* Set by the core: the table platform_describe was called through (see
   * xrt_plugin_client_args.api). */
  const struct xrt_plugin_api *api;
} xrt_plugin_platform_desc;

/* What device_describe reports of one device. */
typedef struct xrt_plugin_device_desc {
  size_t struct_size;
  const char *kind;                 /* borrowed from the plugin */
  int num_attributes;
  const xrt_attribute *attributes;  /* borrowed from the plugin */
} xrt_plugin_device_desc;

/* The host function a custom_call op is bound to. */
typedef struct xrt_host_binding {
  xrt_host_fn fn;
  void *user;
} xrt_host_binding;

/* What compile receives: the module, its entry, host bindings and the
 * launch shape. */
typedef struct xrt_plugin_compile_args {
  size_t struct_size;
  const xrt_ir_module *module;
  int32_t entry;                    /* index into module->funcs */
  /* One per op that calls the host (custom_call, infeed, outfeed, send,
   * recv; module->num_custom_calls of them), indexed by the op's callee;
   * valid until executable_destroy. */
  const xrt_host_binding *host_bindings;
  /* The launch shape this executable runs in (>= 1 each), and the device
   * of every logical id (replica * num_partitions + partition). */
  int32_t num_replicas, num_partitions;
  const int32_t *device_assignment;
  /* ---- ABI 1.2 ---- */
  /* The process of every logical id (NULL: all are this process's), and
   * this process's index: participants of other processes are run there
   * (their device_assignment entries are -1 here), and reached through
   * host->exchange. */
  const int32_t *participant_process;
  int32_t process_index;
  /* What the core expects of the entry function, set for
   * executable_deserialize (zero for compile): the number of host
   * bindings, and the entry's input and output shapes.  A plugin refuses
   * (XRT_INVALID_ARGUMENT) bytes that disagree, since the core sizes
   * buffers by these. */
  int32_t num_host_bindings;
  int32_t num_inputs, num_outputs;
  const xrt_shape *input_shapes, *output_shapes;
  /* executable_deserialize only (read it when XRT_STRUCT_HAS says it is
   * there): nonzero when the core's store checked an integrity hash over
   * exactly these bytes after reading them, so the plugin may skip a hash
   * of its own.  The core sets it only for its own disk cache (xrt_cache.c,
   * whose load checks the file's XXH3-64 over every byte), never for other
   * xrt_cache_store implementations.  A hash is not a validity check:
   * bytes written on purpose pass it, so every other check still applies. */
  int bytes_verified;
} xrt_plugin_compile_args;

/* One participant of a launch.  Every participant of a launch (all
 * num_replicas * num_partitions of them) is handed to execute exactly once,
 * each on its device's own thread, concurrently; a participant the core
 * cannot run (a failed input) comes with abort_message set instead, so
 * that the others' collectives fail rather than wait forever.  (A launch
 * of a small program with no collectives, host calls or loops, whose
 * devices are idle, may run its participants one after another on the
 * calling thread: they must not wait for each other then.) */
typedef struct xrt_plugin_execute_args {
  size_t struct_size;
  void *executable;
  int device;
  uint64_t launch_id;       /* shared by the participants of one launch */
  int32_t replica, partition;
  int32_t num_replicas, num_partitions;
  void *const *args;        /* device memories of the entry's inputs */
  int num_args;
  void *const *outs;        /* preallocated memories of its results */
  int num_outs;
  const char *abort_message; /* non-NULL: do not run; fail the launch */
} xrt_plugin_execute_args;

/* Plugin objects are opaque to the core: void pointers the plugin made. */
typedef struct xrt_plugin_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char *name;                 /* platform name, e.g. "sim" */
  const char *version;

  xrt_status (*client_create)(const xrt_plugin_client_args *args,
                              void **out_client, xrt_plugin_error *err);
  void (*client_destroy)(void *client);
  int (*device_count)(void *client);
  xrt_status (*device_describe)(void *client, int device,
                                xrt_plugin_device_desc *out,
                                xrt_plugin_error *err);

  /* Device memory.  mem is an opaque device address. */
  xrt_status (*buffer_alloc)(void *client, int device, size_t bytes,
                             void **out_mem, xrt_plugin_error *err);
  void (*buffer_free)(void *client, int device, void *mem);
  xrt_status (*buffer_write)(void *client, int device, void *mem,
                             const void *src, size_t bytes,
                             xrt_plugin_error *err);
  xrt_status (*buffer_read)(void *client, int device, const void *mem,
                            void *dst, size_t bytes, xrt_plugin_error *err);
  xrt_status (*buffer_copy)(void *client, int src_device, const void *src,
                            int dst_device, void *dst, size_t bytes,
                            xrt_plugin_error *err);

  /* Compiles the entry function of a verified module.  The module stays
   * alive until executable_destroy. */
  xrt_status (*compile)(void *client, const xrt_plugin_compile_args *args,
                        void **out_executable, xrt_plugin_error *err);
  void (*executable_destroy)(void *executable);
  /* Runs one participant of a launch (see xrt_plugin_execute_args). */
  xrt_status (*execute)(void *client, const xrt_plugin_execute_args *args,
                        xrt_plugin_error *err);

  /* ---- optional (NULL when absent) ---- */

  /* Makes the next execution on device fail after after_steps kernels. */
  xrt_status (*inject_fault)(void *client, int device, int64_t after_steps,
                             xrt_plugin_error *err);

  /* ---- ABI 1.0 (all optional) ---- */

  /* Fills *out (out->struct_size set by the core) without a client. */
  xrt_status (*platform_describe)(xrt_plugin_platform_desc *out,
                                  xrt_plugin_error *err);
  /* Whether the plugin can run op (of module->funcs[func]): an
   * xrt_support value; on NO or MAYBE it may explain in why.  client may
   * be that of the querying xrt client. */
  int (*op_support)(void *client, const xrt_ir_module *module, int32_t func,
                    const xrt_ir_op *op, xrt_plugin_error *why);
  /* See xrt_device_inject_fault_kind (kind is an xrt_fault_kind). */
  xrt_status (*inject_fault_kind)(void *client, int device, int kind,
                                  int64_t after, xrt_plugin_error *err);
  /* The host address of device memory mem, or NULL when it is not
   * host-addressable (zero-copy DLPack export). */
  void *(*buffer_host_pointer)(void *client, int device, void *mem);
  /* Adopts bytes of host memory at host as device memory (zero-copy
   * DLPack import): *out_mem is then freed with buffer_free, which must
   * not free host itself.  XRT_UNIMPLEMENTED / FAILED_PRECONDITION (e.g.
   * alignment) make the core copy instead. */
  xrt_status (*buffer_wrap_host)(void *client, int device, void *host,
                                 size_t bytes, void **out_mem,
                                 xrt_plugin_error *err);
  /* Copies a box of elements between two dense row-major arrays, on the
   * same device or from one device to another (see
   * xrt_plugin_copy_region_args).  NULL: the core stages through host
   * memory (or uses buffer_host_pointer). */
  xrt_status (*buffer_copy_region)(void *client,
                                   const xrt_plugin_copy_region_args *args,
                                   xrt_plugin_error *err);

  /* ---- ABI 1.1: persistent compilation cache ---- */

  /* Writes an executable as bytes that executable_deserialize of the same
   * plugin name and version can load in another process: *out_data is
   * allocated by the plugin and freed with serialized_free.  NULL (or
   * XRT_UNIMPLEMENTED): this plugin's executables are not kept on disk. */
  xrt_status (*executable_serialize)(void *executable, void **out_data,
                                     size_t *out_size, xrt_plugin_error *err);
  void (*serialized_free)(void *data);
  /* Recreates an executable from executable_serialize's bytes.  args are
   * what compile got (host bindings, launch shape, device assignment)
   * except that args->module is NULL and args->entry is -1: the bytes must
   * be enough.  Bytes the plugin does not recognise are
   * XRT_INVALID_ARGUMENT (the core then compiles). */
  xrt_status (*executable_deserialize)(void *client,
                                       const xrt_plugin_compile_args *args,
                                       const void *data, size_t size,
                                       void **out_executable,
                                       xrt_plugin_error *err);
} xrt_plugin_api;

/* The simulator's table, when xrt_sim.c is compiled in. Thread-safe. */
XRT_API const xrt_plugin_api *xrt_sim_plugin_api(void);

/* ---- PJRT plugins as xrt plugins (xrt_pjrt.c, optional) ----
 * A library that exports GetPjrtApi (OpenXLA's PJRT C API: every vendor's
 * device plugin) instead of xrt_plugin_get_api loads as an xrt plugin when
 * xrt_pjrt.c is compiled in: xrt_context_load_plugin, XRT_PLUGINS and
 * directory scans find the symbol and wrap the PJRT_Api table it returns. */

/* The symbol a PJRT plugin library exports. */
#define XRT_PJRT_ENTRY_SYMBOL "GetPjrtApi"

/* Wraps pjrt_api (the const PJRT_Api * a PJRT plugin's GetPjrtApi
 * returned) as an xrt plugin table named name (NULL: "pjrt"); label names
 * the plugin in messages (its path, say; may be NULL).  Checks the table's
 * version and size and calls PJRT_Plugin_Initialize.  The caller owns
 * *out_table (release with xrt_pjrt_plugin_unwrap after every client of
 * it is gone); pjrt_api must outlive it.  XRT_FAILED_PRECONDITION: another
 * PJRT major version, or a table too small.  Thread-safe. */
XRT_API xrt_status xrt_pjrt_plugin_wrap(const void *pjrt_api, const char *name,
                                        const char *label,
                                        const xrt_plugin_api **out_table);
/* Frees what xrt_pjrt_plugin_wrap made (NULL: nothing). */
XRT_API void xrt_pjrt_plugin_unwrap(const xrt_plugin_api *table);

/* Registers a PJRT plugin's table (what its GetPjrtApi returned) in a
 * context under name (NULL: "pjrt"), wrapped by xrt_pjrt_plugin_wrap; the
 * context frees the wrapper when it unloads the plugin.  XRT_UNIMPLEMENTED
 * when xrt_pjrt.c is not compiled in.  Thread-safe. */
XRT_API xrt_status xrt_context_register_pjrt(xrt_context *context,
                                             const char *name,
                                             const void *pjrt_api,
                                             xrt_plugin **out_plugin);

/* What a plugin library defines (built with XRT_PLUGIN_SHARED for the
 * simulator): its function table, static for the library's lifetime.  The
 * core calls it once per load, from any thread. */
XRT_PLUGIN_EXPORT const xrt_plugin_api *xrt_plugin_get_api(void);

#ifdef __cplusplus
}
#endif
#endif /* XRT_H */
