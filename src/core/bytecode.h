/*
 * src/core/bytecode.h - what the two files of the portable-artifact reader
 * share: bytecode.c (the MLIR bytecode container: sections, strings,
 * dialects, attribute/type tables, properties, resources, the IR walk) and
 * bytecode_vhlo.c (VHLO's attribute and type encodings, and VHLO ops as
 * StableHLO text).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 *
 * The reader turns an artifact into StableHLO text in MLIR's generic form,
 * which the text parser then reads, so both inputs share one parser and
 * one verifier.  Every length, count and index comes from the input and is
 * checked against what is left of it; an error is "FILE: bytecode offset
 * N: what" (INVALID_ARGUMENT), N the byte offset in the artifact.
 */
#include "internal.h"

#include <setjmp.h>

/* What an xrt__bcv (a decoded attribute or type) is. */
typedef enum xrt__bck {
  /* types */
  XRT__BC_T_INT,      /* i: width, sub: 0 signless, 1 signed, 2 unsigned */
  XRT__BC_T_FLOAT,    /* s: MLIR's name ("f32", "f8E4M3FN") */
  XRT__BC_T_INDEX,
  XRT__BC_T_NONE,
  XRT__BC_T_COMPLEX,  /* t: element */
  XRT__BC_T_TENSOR,   /* n dims (INT64_MIN: dynamic), t: element, a: encoding */
  XRT__BC_T_UNRANKED, /* t: element */
  XRT__BC_T_TUPLE,    /* kids[n] */
  XRT__BC_T_FUNC,     /* kids[n]: i inputs then the results */
  XRT__BC_T_TOKEN,
  XRT__BC_T_QUANT,    /* t storage, a expressed, i axis (-1: per tensor),
                         j flags, lo/hi storage range, n scales f[], zp[] */
  XRT__BC_T_BUFFER,   /* memref-like ranked buffer: n dims, t element */
  XRT__BC_T_FUTURE,   /* kids[n] */
  XRT__BC_T_WITNESS,
  XRT__BC_T_TEXT,     /* s: a type in MLIR's assembly syntax */
  /* attributes */
  XRT__BC_A_ARRAY,    /* kids[n] */
  XRT__BC_A_DICT,     /* kids[2n]: name (a string attribute), value, ... */
  XRT__BC_A_STRING,   /* s, len */
  XRT__BC_A_SYMBOL,   /* s, len (a flat symbol reference) */
  XRT__BC_A_TYPE,     /* t */
  XRT__BC_A_UNIT,
  XRT__BC_A_BOOL,     /* i */
  XRT__BC_A_INT,      /* t, i (sign- or zero-extended as t says) */
  XRT__BC_A_FLOAT,    /* t, u: the bits */
  XRT__BC_A_ENUM,     /* sub: xrt__bc_enum, i: the value */
  XRT__BC_A_TENSOR,   /* t, s/len: raw element bytes (one: a splat) */
  XRT__BC_A_DARRAY,   /* t element, i count, s/len raw bytes */
  XRT__BC_A_ALIAS,    /* output_operand_alias: dims[n] output tuple
                         indices, i operand index, zp[j] its tuple indices */
  XRT__BC_A_BOUNDS,   /* type extensions: dims[n] */
  XRT__BC_A_ACCURACY, /* result accuracy: f[0] atol, f[1] rtol, i ulps,
                         a: mode (an A_ENUM) */
  XRT__BC_A_RESOURCE, /* t, i: index of the dialect resource */
  XRT__BC_A_TEXT,     /* s: an attribute in MLIR's assembly syntax */
  XRT__BC_A_MESH_AXES, /* replica groups by mesh axes: a mesh, t axes */
  XRT__BC_A_AXIS_REF, /* a name, t: sub-axis info or NULL */
  XRT__BC_A_SUB_AXIS, /* i pre-size, j size */
  XRT__BC_L_UNKNOWN,  /* locations */
  XRT__BC_L_FILE,     /* s/len file, i line, j col */
  XRT__BC_L_NAME,     /* s/len name, a: child */
  XRT__BC_L_FUSED,    /* kids[n] */
  XRT__BC_L_CALLSITE  /* a: callee, t: caller (a location, not a type) */
} xrt__bck;

/* The enumerations of VHLO's enum attributes. */
typedef enum xrt__bc_enum {
  XRT__BCE_COMPARISON_DIRECTION,
  XRT__BCE_COMPARISON_TYPE,
  XRT__BCE_API_VERSION,
  XRT__BCE_FFT_TYPE,
  XRT__BCE_PRECISION,
  XRT__BCE_RNG_ALGORITHM,
  XRT__BCE_RNG_DISTRIBUTION,
  XRT__BCE_TRANSPOSE,
  XRT__BCE_ACCURACY_MODE
} xrt__bc_enum;

/* A decoded attribute or type (arena memory; shared by every use). */
typedef struct xrt__bcv {
  uint8_t kind; /* xrt__bck */
  uint8_t sub;
  int32_t n;
  int64_t i, j, lo, hi;
  uint64_t u;
  const char *s;
  size_t len;
  const struct xrt__bcv *t, *a;
  const struct xrt__bcv **kids;
  const int64_t *dims, *zp;
  const double *f;
} xrt__bcv;

/* A position in the artifact: reads advance p, never past end. */
typedef struct xrt__bcur {
  const uint8_t *p, *end;
} xrt__bcur;

/* One attribute or type of the table: its encoding and, once read, its
 * value. */
typedef struct xrt__bcent {
  const uint8_t *data;
  size_t size;
  uint32_t dialect;
  bool custom;
  uint8_t state; /* 0 unread, 1 being read (a cycle if met again), 2 read */
  const xrt__bcv *v;
} xrt__bcent;

/* Growable text. */
typedef struct xrt__bcbuf {
  char *s;
  size_t n, cap;
} xrt__bcbuf;

/* One line of the generated text whose op came from the artifact: the op's
 * own location there, and where its encoding starts. */
typedef struct xrt__bcline {
  int32_t line;
  xrt_ir_loc loc;
  size_t offset;
} xrt__bcline;

/* The reader. */
typedef struct xrt__bc {
  xrt__arena *arena;        /* decoded values (freed after reading) */
  xrt__arena *keep;         /* the program's: file names of locations */
  xrt_allocator allocator;  /* scratch (freed by xrt__bc_free) */
  const uint8_t *beg;
  size_t size;
  const char *file;
  jmp_buf jb;
  xrt_status status;
  uint64_t version;         /* of the bytecode format */
  const char *producer;
  int vhlo[3];              /* the producer's StableHLO version */
  int depth;
  /* string section */
  uint64_t num_strings;
  const char **strs;
  size_t *str_len;
  /* dialects and op names */
  uint64_t num_dialects;
  const char **dialects;
  uint64_t num_opnames;
  const char **opnames;     /* "dialect.name" */
  /* attributes and types */
  uint64_t num_attrs, num_types;
  xrt__bcent *attrs, *types;
  /* properties */
  uint64_t num_props;
  const uint8_t *props_beg;
  size_t props_size;
  uint64_t *prop_off;
  /* dialect resources: blobs by handle index */
  uint64_t num_res;
  const uint8_t **res_data;
  size_t *res_size;
  /* values of the current isolated scope: text ids (-1 undefined, else
   * id; ids >= 0 referenced before their definition are marked in
   * slot_fwd) */
  int64_t *slots;
  uint8_t *slot_fwd;
  size_t num_slots, cap_slots;
  int64_t next_id;
  const xrt__bcv **id_types; /* the type of each text id */
  size_t cap_ids;
  /* output */
  xrt__bcbuf out;
  int32_t line;             /* current line of out (1-based) */
  const char *last_file, *last_file_src; /* the last location's file */
  xrt__bcline *lines;
  size_t num_lines, cap_lines;
  /* large constants by reference (xrt__bctext.blobs), when by_ref */
  bool by_ref;
  xrt__bcblob *blobs;
  size_t num_blobs, cap_blobs;
} xrt__bc;

/* An op as the IR walk found it, for the emitter. */
typedef struct xrt__bcop {
  const char *name;         /* "vhlo.add_v1", "builtin.module" */
  size_t offset;            /* where its encoding starts */
  const xrt__bcv *loc;
  const xrt__bcv *attrs;    /* attribute dictionary (A_DICT) or NULL */
  const xrt__bcv **props;   /* properties: attribute values in order */
  int32_t num_props;
  const xrt__bcv **results; /* result types */
  int32_t num_results;
  const int64_t *operands;  /* text ids */
  int32_t num_operands;
  const int64_t *result_ids; /* text ids */
  int32_t num_regions;
  int depth;                /* 0: the module's body */
  const char *parent;       /* the enclosing op's name */
} xrt__bcop;


/* VHLO's attribute and type codes (VhloBytecode.cpp), for the reader and
 * the writer. */
enum {
  XRT__VA_ARRAY = 1, XRT__VA_BOOL = 2, XRT__VA_COMPARISON_DIRECTION = 3,
  XRT__VA_COMPARISON_TYPE = 4, XRT__VA_API_VERSION = 5, XRT__VA_DICT = 6,
  XRT__VA_FFT_TYPE = 7, XRT__VA_FLOAT = 8, XRT__VA_INTEGER = 9,
  XRT__VA_OUTPUT_OPERAND_ALIAS = 10, XRT__VA_PRECISION = 11,
  XRT__VA_RNG_ALGORITHM = 12, XRT__VA_RNG_DISTRIBUTION = 13,
  XRT__VA_STRING = 14, XRT__VA_TENSOR = 15, XRT__VA_TRANSPOSE = 16,
  XRT__VA_TYPE = 17, XRT__VA_TYPE_EXTENSIONS = 18,
  XRT__VA_RESULT_ACCURACY_MODE = 19, XRT__VA_RESULT_ACCURACY = 20,
  XRT__VA_SUB_AXIS_INFO = 21, XRT__VA_AXIS_REF = 22, XRT__VA_MESH_AXES = 23
};
enum {
  XRT__VT_COMPLEX = 1, XRT__VT_FUNCTION = 8, XRT__VT_RANKED_TENSOR = 20,
  XRT__VT_RANKED_TENSOR_ENC = 21, XRT__VT_TOKEN = 22, XRT__VT_TUPLE = 23,
  XRT__VT_QUANT = 24, XRT__VT_UNRANKED_TENSOR = 25, XRT__VT_QUANT_AXIS = 30,
  XRT__VT_RANKED_BUFFER = 41, XRT__VT_FUTURE = 42
};
/* Builtin attribute codes the writer uses (BuiltinDialectBytecode.td). */
enum {
  XRT__BA_DICT = 1, XRT__BA_STRING = 2, XRT__BA_INTEGER = 8,
  XRT__BA_FILE_LOC = 11, XRT__BA_UNKNOWN_LOC = 15, XRT__BT_INTEGER = 0
};

/* Attributes VHLO keeps in several pieces that StableHLO groups. */
enum {
  XRT__VG_NONE,
  XRT__VG_CONV,     /* the nine dimension numbers -> dimension_numbers */
  XRT__VG_DOT,      /* dot dimensions -> dot_dimension_numbers, algorithm */
  XRT__VG_GATHER,   /* gather dimensions -> dimension_numbers */
  XRT__VG_SCATTER,  /* scatter dimensions -> scatter_dimension_numbers */
  XRT__VG_CHANNEL,  /* channel_id -> channel_handle (type 0), none if 0 */
  XRT__VG_CHANNEL2, /* channel_id, channel_type -> channel_handle */
  XRT__VG_FUNC,     /* func.func */
  XRT__VG_RETURN,   /* func.return in a function, else stablehlo.return */
  XRT__VG_OPAQUE    /* xrt knows no StableHLO form: attributes left out */
};

/* One VHLO op version: the StableHLO op it reads as, the version that
 * introduced it, its properties in the order the bytecode stores them
 * (by name: ODS sorts an op's attributes), and its grouped attributes. */
typedef struct xrt__vop {
  const char *vhlo, *shlo, *since, *props;
  uint8_t group;
} xrt__vop;


/* How an attribute becomes StableHLO's, and when StableHLO leaves it out
 * (VHLO spells every default out). */
enum {
  XRT__VR_KEEP, XRT__VR_ARRAY /* i64 tensor -> array<i64> */,
  XRT__VR_BOOLS /* i1 tensor -> array<i1> */, XRT__VR_UNIT /* true -> unit */,
  XRT__VR_SYMBOL /* string -> @symbol */, XRT__VR_SYMBOLS, XRT__VR_API /* -> i32 */
};
enum {
  XRT__VD_NEVER, XRT__VD_FALSE, XRT__VD_EMPTY, XRT__VD_ZERO, XRT__VD_ENUM0,
  XRT__VD_DEFAULTS /* precisions all DEFAULT */, XRT__VD_ONES, XRT__VD_ZEROS,
  XRT__VD_API1, XRT__VD_ACCURACY, XRT__VD_MINUS1
};

/* The writer also reads rule and drop as the attribute's form and its
 * default when a program leaves it out; empty says which empty value an
 * XRT__VD_EMPTY default is: 'a' array, 's' string, 'd' dictionary, 't'
 * i64 tensor. */
typedef struct xrt__vrule {
  const char *op; /* NULL: any op */
  const char *name;
  uint8_t rule, drop;
  char empty;
} xrt__vrule;

/* ---- bytecode.c ---- */
XRT__PRIVATE _Noreturn void xrt__bc_fail(xrt__bc *bc, const uint8_t *at,
                                         const char *fmt, ...)
    XRT_PRINTF_FORMAT(3, 4);
XRT__PRIVATE void *xrt__bc_alloc(xrt__bc *bc, size_t n);
XRT__PRIVATE uint8_t xrt__bc_byte(xrt__bc *bc, xrt__bcur *c);
XRT__PRIVATE uint64_t xrt__bc_varint(xrt__bc *bc, xrt__bcur *c);
XRT__PRIVATE int64_t xrt__bc_svarint(xrt__bc *bc, xrt__bcur *c);
XRT__PRIVATE uint64_t xrt__bc_count(xrt__bc *bc, xrt__bcur *c, size_t min_each);
XRT__PRIVATE const char *xrt__bc_string(xrt__bc *bc, xrt__bcur *c, size_t *len);
XRT__PRIVATE const uint8_t *xrt__bc_blob(xrt__bc *bc, xrt__bcur *c, size_t *len);
XRT__PRIVATE uint64_t xrt__bc_apint(xrt__bc *bc, xrt__bcur *c, int bits);
XRT__PRIVATE const xrt__bcv *xrt__bc_attr(xrt__bc *bc, xrt__bcur *c);
XRT__PRIVATE const xrt__bcv *xrt__bc_type(xrt__bc *bc, xrt__bcur *c);
XRT__PRIVATE const xrt__bcv **xrt__bc_list(xrt__bc *bc, xrt__bcur *c,
                                           bool types, int32_t *n);
XRT__PRIVATE xrt__bcv *xrt__bc_new(xrt__bc *bc, xrt__bck kind);
XRT__PRIVATE const xrt__bcv *xrt__bc_value_type(xrt__bc *bc, int64_t id);
XRT__PRIVATE void xrt__bc_put(xrt__bc *bc, const char *s, size_t n);
/* Names bytes of the artifact as a large constant: its number, or -1 when
 * the text must spell them (not by reference, or not the artifact's). */
XRT__PRIVATE int64_t xrt__bc_blob_ref(xrt__bc *bc, const char *s, size_t n);
XRT__PRIVATE void xrt__bc_puts(xrt__bc *bc, const char *s);
XRT__PRIVATE void xrt__bc_printf(xrt__bc *bc, const char *fmt, ...)
    XRT_PRINTF_FORMAT(2, 3);

/* ---- bytecode_vhlo.c ---- */
/* The newest VHLO version this reader knows ("1.20.0"). */
XRT__PRIVATE const char *xrt__vhlo_version(void);
/* A VHLO attribute or type of the table, from its custom encoding. */
XRT__PRIVATE const xrt__bcv *xrt__vhlo_read_attr(xrt__bc *bc, xrt__bcur *c);
XRT__PRIVATE const xrt__bcv *xrt__vhlo_read_type(xrt__bc *bc, xrt__bcur *c);
/* Emitting an op: its head (results, name, operands, attributes) before
 * its regions, then its tail (types, location) after them. */
XRT__PRIVATE void xrt__vhlo_op_head(xrt__bc *bc, const xrt__bcop *op);
XRT__PRIVATE void xrt__vhlo_op_tail(xrt__bc *bc, const xrt__bcop *op);
/* A type as StableHLO text (block arguments). */
XRT__PRIVATE void xrt__vhlo_put_type(xrt__bc *bc, const xrt__bcv *t);
/* The tables the writer shares: VHLO op versions (sorted by VHLO name),
 * the op version of a "vhlo.x_vN" name, the rule of an attribute, the
 * code of a payload-free type by MLIR name (-1 if none), the value names
 * of an enumeration (xrt__bc_enum). */
XRT__PRIVATE const xrt__vop *xrt__vhlo_ops_table(size_t *n);
XRT__PRIVATE const xrt__vop *xrt__vhlo_op(const char *name);
XRT__PRIVATE const xrt__vrule *xrt__vhlo_rule(const char *op, const char *name);
XRT__PRIVATE int xrt__vhlo_type_code(const char *name);
XRT__PRIVATE const char *const *xrt__vhlo_enum_names(int e, size_t *n);
