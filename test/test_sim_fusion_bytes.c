/*
 * test_sim_fusion_bytes.c - the simulator's serialized executables carry
 * its fusion decisions (format version 4): an executable loaded from them
 * takes the stored grouping instead of searching again, computes bit for
 * bit what the cold compile computes on programs that fuse (several
 * shapes, reductions, broadcasts, views, select and clamp, other element
 * types), and stored groupings that are forged (resealed, so that only the
 * simulator's checks stand in the way) are refused with
 * XRT_INVALID_ARGUMENT or compute the right values; bytes of version 3
 * (no decisions) still load, and search.  The simulator's plugin table is
 * used directly, as the core's disk cache uses it.  MIT licensed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_plugin_abi.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* The simulator's bytes carry an XXH3-64 of everything after byte 24 at
 * byte 16; sets it (as damage or forgery that recomputes it would). */
static void sim_reseal(unsigned char *b, size_t n) {
  if (n < 24) return;
  uint64_t h = XXH3_64bits(b + 24, n - 24);
  memcpy(b + 16, &h, sizeof h);
}

static int32_t get_i32(const unsigned char *b) {
  int32_t v;
  memcpy(&v, b, sizeof v);
  return v;
}

static void put_i32(unsigned char *b, int32_t v) { memcpy(b, &v, sizeof v); }

/* The fusion decisions end the bytes: a count k of ints, then k ints made
 * of blocks (an op count m, then m group ids).  Finds k (the one for which
 * the tail parses as such blocks); returns the offset of the first int, or
 * 0 when none is found. */
static size_t fusion_record(const unsigned char *b, size_t n, int32_t *out_k) {
  for (int32_t k = 1; (size_t)k * 4 + 4 <= n - 24; k++) {
    size_t at = n - 4 * (size_t)k;
    if (get_i32(b + at - 4) != k) continue;
    int32_t i = 0;
    while (i < k) {
      int32_t m = get_i32(b + at + 4 * (size_t)i);
      if (m < 1 || m > k - i - 1) break;
      i += m + 1;
    }
    if (i == k) {
      *out_k = k;
      return at;
    }
  }
  return 0;
}

/* ---- running an executable of the plugin table ---- */

typedef struct rig {
  const xrt_plugin_api *api;
  void *pc;
  const xrt_ir_module *m;
  int32_t entry;
  xrt_plugin_compile_args a; /* compile: the module */
  xrt_plugin_compile_args d; /* deserialize: the signature only */
  xrt_shape ins[8], outs[8];
  int32_t device;
  xrt_program *prog;
} rig;

static void rig_open(rig *g, const char *text) {
  memset(g, 0, sizeof *g);
  g->m = tu_parse_main(text, "parse", &g->prog, &g->entry);
  g->api = xrt_sim_plugin_api();
  g->pc = tu_sim_plugin_client(1 << 26);
  g->a = tu_plugin_compile_args(g->m, g->entry, &g->device);
  const xrt_ir_func *f = &g->m->funcs[g->entry];
  assert_true(f->body.num_args <= 8 && f->num_results <= 8);
  for (int32_t i = 0; i < f->body.num_args; i++)
    g->ins[i] = f->value_types[f->body.args[i]].shape;
  for (int32_t i = 0; i < f->num_results; i++)
    g->outs[i] = f->result_types[i].shape;
  g->d = g->a;
  g->d.module = NULL;
  g->d.entry = -1;
  g->d.num_inputs = f->body.num_args;
  g->d.num_outputs = f->num_results;
  g->d.input_shapes = g->ins;
  g->d.output_shapes = g->outs;
}

static void rig_close(rig *g) {
  g->api->client_destroy(g->pc);
  xrt_program_release(g->prog);
}

static size_t shape_bytes(const xrt_shape *s) {
  size_t n = xrt_dtype_size(s->dtype);
  for (int32_t i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
  return n;
}

/* Deterministic inputs: small values of each input's type, signed, so
 * that compare and select take both branches. */
static void *make_input(const xrt_shape *s, unsigned seed) {
  size_t bytes = shape_bytes(s), n = bytes / xrt_dtype_size(s->dtype);
  unsigned char *p = malloc(bytes ? bytes : 1);
  assert_non_null(p);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    int v = (int)(seed >> 16 & 0xff) - 128;
    switch (s->dtype) {
    case XRT_F32: ((float *)p)[i] = (float)v / 37.0f; break;
    case XRT_F64: ((double *)p)[i] = (double)v / 37.0; break;
    case XRT_S32: ((int32_t *)p)[i] = v; break;
    default: fail_msg("input type %d", (int)s->dtype);
    }
  }
  return p;
}

/* Runs exe on the inputs; XRT_OK with each output in outs[i] (malloc'd,
 * the caller frees), or the run's error. */
static xrt_status rig_run(rig *g, void *exe, void *const *host_in,
                          void **outs) {
  xrt_plugin_error err;
  void *mem[16] = {NULL};
  int nin = g->d.num_inputs, nout = g->d.num_outputs;
  for (int i = 0; i < nin + nout; i++) {
    const xrt_shape *s = i < nin ? &g->ins[i] : &g->outs[i - nin];
    size_t b = shape_bytes(s);
    assert_int_equal(g->api->buffer_alloc(g->pc, 0, b, &mem[i], &err), XRT_OK);
    if (i < nin)
      assert_int_equal(g->api->buffer_write(g->pc, 0, mem[i], host_in[i], b,
                                            &err), XRT_OK);
  }
  xrt_plugin_execute_args ea = tu_plugin_exec_args(exe, mem, nin, nout);
  xrt_status s = g->api->execute(g->pc, &ea, &err);
  for (int j = 0; j < nout; j++) {
    size_t b = shape_bytes(&g->outs[j]);
    outs[j] = NULL;
    if (s) continue;
    outs[j] = malloc(b ? b : 1);
    assert_non_null(outs[j]);
    assert_int_equal(g->api->buffer_read(g->pc, 0, mem[nin + j], outs[j], b,
                                         &err), XRT_OK);
  }
  for (int i = 0; i < nin + nout; i++) g->api->buffer_free(g->pc, 0, mem[i]);
  return s;
}

static void free_all(void **p, int n) {
  for (int i = 0; i < n; i++) free(p[i]), p[i] = NULL;
}

/* The cold compile's bytes (and, in *exe, the executable). */
static unsigned char *cold_bytes(rig *g, void **exe, size_t *n) {
  xrt_plugin_error err;
  void *bytes = NULL;
  assert_int_equal(g->api->compile(g->pc, &g->a, exe, &err), XRT_OK);
  assert_int_equal(g->api->executable_serialize(*exe, &bytes, n, &err),
                   XRT_OK);
  unsigned char *copy = malloc(*n);
  assert_non_null(copy);
  memcpy(copy, bytes, *n);
  g->api->serialized_free(bytes);
  return copy;
}

/* ---- loaded executables compute what the cold compile does ---- */

/* Programs that fuse: elementwise chains over broadcasts and transposes,
 * reductions over each axis and all of them, select/compare/clamp,
 * f64 and i32, a value used by two groups, a dot_general between groups,
 * and fused loops inside a while body and a callee. */
static const char *kFusing[] = {
    /* an MLP layer as bench_disk_cache generates it */
    "func.func public @main(%h: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<8x16xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
    "  %c = stablehlo.constant dense<0.03> : tensor<16xf32>\n"
    "  %cb = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>\n"
    "  %a = stablehlo.add %d, %cb : tensor<8x16xf32>\n"
    "  %t = stablehlo.tanh %a : tensor<8x16xf32>\n"
    "  %r = stablehlo.add %t, %h : tensor<8x16xf32>\n"
    "  %sq = stablehlo.multiply %r, %r : tensor<8x16xf32>\n"
    "  %s = stablehlo.reduce(%sq init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>\n"
    "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<8xf32>) -> tensor<8x16xf32>\n"
    "  %e = stablehlo.add %sb, %one : tensor<8x16xf32>\n"
    "  %q = stablehlo.sqrt %e : tensor<8x16xf32>\n"
    "  %o = stablehlo.divide %r, %q : tensor<8x16xf32>\n"
    "  func.return %o : tensor<8x16xf32>\n"
    "}\n",
    /* reduce over axis 0 of a transposed view, max, compare/select */
    "func.func public @main(%x: tensor<6x4xf32>, %y: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<4x6xf32>) {\n"
    "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>\n"
    "  %m = stablehlo.multiply %t, %y : tensor<4x6xf32>\n"
    "  %e = stablehlo.exponential %m : tensor<4x6xf32>\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %mx = stablehlo.reduce(%e init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "  %g = stablehlo.compare GT, %t, %y, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>\n"
    "  %ng = stablehlo.negate %y : tensor<4x6xf32>\n"
    "  %s = stablehlo.select %g, %m, %ng : tensor<4x6xi1>, tensor<4x6xf32>\n"
    "  func.return %mx, %s : tensor<4xf32>, tensor<4x6xf32>\n"
    "}\n",
    /* f64: a full reduction, a scalar broadcast, clamp, reshape */
    "func.func public @main(%x: tensor<3x5xf64>) -> (tensor<f64>, tensor<15xf64>) {\n"
    "  %lo = stablehlo.constant dense<-1.5> : tensor<f64>\n"
    "  %hi = stablehlo.constant dense<2.0> : tensor<f64>\n"
    "  %k = stablehlo.clamp %lo, %x, %hi : (tensor<f64>, tensor<3x5xf64>, tensor<f64>) -> tensor<3x5xf64>\n"
    "  %h = stablehlo.constant dense<0.5> : tensor<f64>\n"
    "  %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f64>) -> tensor<3x5xf64>\n"
    "  %p = stablehlo.multiply %k, %hb : tensor<3x5xf64>\n"
    "  %q = stablehlo.subtract %p, %x : tensor<3x5xf64>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f64>\n"
    "  %s = stablehlo.reduce(%q init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x5xf64>, tensor<f64>) -> tensor<f64>\n"
    "  %r = stablehlo.reshape %q : (tensor<3x5xf64>) -> tensor<15xf64>\n"
    "  %a = stablehlo.abs %r : tensor<15xf64>\n"
    "  func.return %s, %a : tensor<f64>, tensor<15xf64>\n"
    "}\n",
    /* i32: reduce over axis 0, shifts and a convert to f32 */
    "func.func public @main(%x: tensor<4x3xi32>, %y: tensor<3xi32>) -> (tensor<3xi32>, tensor<4x3xf32>) {\n"
    "  %yb = stablehlo.broadcast_in_dim %y, dims = [1] : (tensor<3xi32>) -> tensor<4x3xi32>\n"
    "  %m = stablehlo.multiply %x, %yb : tensor<4x3xi32>\n"
    "  %two = stablehlo.constant dense<2> : tensor<4x3xi32>\n"
    "  %s = stablehlo.shift_right_arithmetic %m, %two : tensor<4x3xi32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x3xi32>, tensor<i32>) -> tensor<3xi32>\n"
    "  %c = stablehlo.convert %s : (tensor<4x3xi32>) -> tensor<4x3xf32>\n"
    "  %f = stablehlo.sine %c : tensor<4x3xf32>\n"
    "  func.return %r, %f : tensor<3xi32>, tensor<4x3xf32>\n"
    "}\n",
    /* fused loops in a while body and in a callee */
    "func.func private @step(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {\n"
    "  %m = stablehlo.multiply %a, %b : tensor<5xf32>\n"
    "  %t = stablehlo.tanh %m : tensor<5xf32>\n"
    "  %s = stablehlo.add %t, %a : tensor<5xf32>\n"
    "  func.return %s : tensor<5xf32>\n"
    "}\n"
    "func.func public @main(%x: tensor<5xf32>, %y: tensor<5xf32>) -> tensor<5xf32> {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<5xf32>\n"
    "  cond {\n"
    "    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %i, %one : tensor<i32>\n"
    "    %u = stablehlo.multiply %acc, %y : tensor<5xf32>\n"
    "    %v = stablehlo.cosine %u : tensor<5xf32>\n"
    "    %w = stablehlo.add %v, %acc : tensor<5xf32>\n"
    "    stablehlo.return %n, %w : tensor<i32>, tensor<5xf32>\n"
    "  }\n"
    "  %s = func.call @step(%r#1, %y) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>\n"
    "  func.return %s : tensor<5xf32>\n"
    "}\n",
};

/* Every program: the cold compile's bytes carry fusion decisions with at
 * least one group; they load, re-serialize to the same bytes (the same
 * decisions, taken as given), and compute bit for bit what the cold
 * compile computes. */
static void test_loaded_fusion_matches_cold(void **state) {
  (void)state;
  for (size_t p = 0; p < TU_COUNT(kFusing); p++) {
    rig g;
    rig_open(&g, kFusing[p]);
    xrt_plugin_error err;
    void *exe = NULL, *back = NULL, *again = NULL;
    size_t n = 0, n2 = 0;
    unsigned char *bytes = cold_bytes(&g, &exe, &n);
    int32_t k = 0;
    size_t at = fusion_record(bytes, n, &k);
    if (!at) fail_msg("program %zu: no fusion decisions in its bytes", p);
    int grouped = 0;
    for (int32_t i = 0; i < k;) { /* a block: m, then m group ids */
      int32_t m = get_i32(bytes + at + 4 * (size_t)i);
      for (int32_t j = 1; j <= m; j++)
        grouped += get_i32(bytes + at + 4 * (size_t)(i + j)) >= 0;
      i += m + 1;
    }
    if (!grouped) fail_msg("program %zu: nothing fused", p);
    assert_int_equal(g.api->executable_deserialize(g.pc, &g.d, bytes, n, &back,
                                                   &err), XRT_OK);
    assert_int_equal(g.api->executable_serialize(back, &again, &n2, &err),
                     XRT_OK);
    assert_int_equal(n2, n);
    assert_memory_equal(again, bytes, n);
    g.api->serialized_free(again);
    void *in[8] = {NULL}, *want[8] = {NULL}, *got[8] = {NULL};
    for (int32_t i = 0; i < g.d.num_inputs; i++)
      in[i] = make_input(&g.ins[i], 17u * (unsigned)(p + 1) + (unsigned)i);
    assert_int_equal(rig_run(&g, exe, in, want), XRT_OK);
    assert_int_equal(rig_run(&g, back, in, got), XRT_OK);
    for (int32_t j = 0; j < g.d.num_outputs; j++)
      if (memcmp(want[j], got[j], shape_bytes(&g.outs[j])) != 0)
        fail_msg("program %zu output %d differs after loading", p, (int)j);
    free_all(in, g.d.num_inputs);
    free_all(want, g.d.num_outputs);
    free_all(got, g.d.num_outputs);
    g.api->executable_destroy(back);
    g.api->executable_destroy(exe);
    free(bytes);
    rig_close(&g);
  }
}

/* ---- forged decisions ---- */

/* Three groups: tanh(x + broadcast(y)) (t, used by two groups, so
 * materialized), the reduce of t * t, and select(q > x, q, x) with
 * q = t / broadcast(the reduce).  Ops of @main, by index:
 *   0 b  1 s  2 t  3 m  4 z  5 r  6 rb  7 q  8 c  9 o  (10 return) */
static const char *kForge =
    "func.func public @main(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {\n"
    "  %b = stablehlo.broadcast_in_dim %y, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>\n"
    "  %s = stablehlo.add %x, %b : tensor<4x8xf32>\n"
    "  %t = stablehlo.tanh %s : tensor<4x8xf32>\n"
    "  %m = stablehlo.multiply %t, %t : tensor<4x8xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>\n"
    "  %q = stablehlo.divide %t, %rb : tensor<4x8xf32>\n"
    "  %c = stablehlo.compare GT, %q, %x, FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>\n"
    "  %o = stablehlo.select %c, %q, %x : tensor<4x8xi1>, tensor<4x8xf32>\n"
    "  func.return %o, %r : tensor<4x8xf32>, tensor<4xf32>\n"
    "}\n";

#define FORGE_OPS 10

typedef struct forge {
  rig g;
  unsigned char *bytes, *b;
  size_t n, at; /* at: the first group id of @main's block */
  void *in[2];
  float want_o[32], want_r[4]; /* computed here, in double */
  int refused;
} forge;

static void forge_open(forge *f) {
  memset(f, 0, sizeof *f);
  rig_open(&f->g, kForge);
  void *exe = NULL;
  f->bytes = cold_bytes(&f->g, &exe, &f->n);
  f->g.api->executable_destroy(exe);
  int32_t k = 0;
  size_t at = fusion_record(f->bytes, f->n, &k);
  assert_true(at != 0);
  assert_int_equal(k, FORGE_OPS + 1); /* one block: @main's */
  assert_int_equal(get_i32(f->bytes + at), FORGE_OPS);
  f->at = at + 4;
  /* the decisions described above */
  const int32_t grp[FORGE_OPS] = {2, 2, 2, 5, -1, 5, 9, 9, 9, 9};
  for (int i = 0; i < FORGE_OPS; i++)
    assert_int_equal(get_i32(f->bytes + f->at + 4 * (size_t)i), grp[i]);
  f->b = malloc(f->n);
  assert_non_null(f->b);
  f->in[0] = make_input(&f->g.ins[0], 3);
  f->in[1] = make_input(&f->g.ins[1], 4);
  const float *x = f->in[0], *y = f->in[1];
  double t[32], r[4];
  for (int i = 0; i < 4; i++) {
    r[i] = 0;
    for (int j = 0; j < 8; j++) {
      t[i * 8 + j] = tanh((double)x[i * 8 + j] + (double)y[j]);
      r[i] += t[i * 8 + j] * t[i * 8 + j];
    }
    f->want_r[i] = (float)r[i];
  }
  for (int i = 0; i < 32; i++) {
    double q = t[i] / r[i / 8];
    f->want_o[i] = q > (double)x[i] ? (float)q : x[i];
  }
}

static void forge_close(forge *f) {
  free_all(f->in, 2);
  free(f->b);
  free(f->bytes);
  rig_close(&f->g);
}

static int close_to(float got, float want) {
  return fabsf(got - want) <= 1e-5f * (1.0f + fabsf(want));
}

/* Loads f->b (n bytes, resealed here): refused with XRT_INVALID_ARGUMENT
 * (returns 0), or loads and computes the program's values (returns 1). */
static int forge_try(forge *f, size_t n, const char *what) {
  xrt_plugin_error err;
  sim_reseal(f->b, n);
  void *back = NULL;
  xrt_status s = f->g.api->executable_deserialize(f->g.pc, &f->g.d, f->b, n,
                                                  &back, &err);
  if (s) {
    if (s != XRT_INVALID_ARGUMENT)
      fail_msg("%s: status %d (%s)", what, (int)s, err.message);
    assert_null(back);
    f->refused++;
    return 0;
  }
  void *got[2] = {NULL, NULL};
  assert_int_equal(rig_run(&f->g, back, f->in, got), XRT_OK);
  f->g.api->executable_destroy(back);
  const float *o = got[0], *r = got[1];
  for (int i = 0; i < 32; i++)
    if (!close_to(o[i], f->want_o[i]))
      fail_msg("%s: output %d is %g, not %g", what, i, (double)o[i],
               (double)f->want_o[i]);
  for (int i = 0; i < 4; i++)
    if (!close_to(r[i], f->want_r[i]))
      fail_msg("%s: sum %d is %g, not %g", what, i, (double)r[i],
               (double)f->want_r[i]);
  free_all(got, 2);
  return 1;
}

/* Sets @main's group ids to grp and tries the bytes. */
static int forge_groups(forge *f, const int32_t *grp, const char *what) {
  memcpy(f->b, f->bytes, f->n);
  for (int i = 0; i < FORGE_OPS; i++)
    put_i32(f->b + f->at + 4 * (size_t)i, grp[i]);
  return forge_try(f, f->n, what);
}

/* Hand-made groupings: those the planner must not take are refused, the
 * harmless ones compute the program's values. */
static void test_forged_groupings(void **state) {
  (void)state;
  forge f;
  forge_open(&f);
  struct {
    int32_t grp[FORGE_OPS];
    int ok; /* 1: loads (and computes the values), 0: refused */
    const char *what;
  } cases[] = {
      {{2, 2, 2, 5, -1, 5, 9, 9, 9, 9}, 1, "as compiled"},
      {{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}, 1, "no fusion"},
      {{-1, -1, -1, 5, -1, 5, -1, -1, -1, -1}, 1, "only the reduce group"},
      {{-1, -1, -1, -1, -1, -1, -1, 7, 8, 9}, 1, "three one-op groups"},
      /* t feeds the divide of another group: it must be materialized */
      {{5, 5, 5, 5, -1, 5, 9, 9, 9, 9}, 0, "t absorbed by the reduce"},
      {{2, 2, 2, 5, -1, 5, 9, 9, 9, -1}, 0, "members of a non-root"},
      {{2, 2, 2, 5, 5, 5, 9, 9, 9, 9}, 0, "a constant as a member"},
      {{2, 2, 2, 5, -1, 5, 6, 9, 9, 9}, 0, "a view as a root"},
      {{2, 2, 2, 5, -1, 9, 9, 9, 9, 9}, 0, "a reduce as a member"},
      {{2, 2, 2, 5, -1, 5, 9, 9, 8, 8}, 0, "a member after its root"},
      {{2, 2, 2, 3, -1, 5, 9, 9, 9, 9}, 1, "the multiply a root alone"},
      {{10, 2, 2, 5, -1, 5, 9, 9, 9, 9}, 0, "a root past the block"},
      {{-2, 2, 2, 5, -1, 5, 9, 9, 9, 9}, 0, "a negative group"},
      {{2, 2, 2, 5, -1, 5, 9, 9, INT32_MAX, 9}, 0, "a huge group"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++)
    if (forge_groups(&f, cases[i].grp, cases[i].what) != cases[i].ok)
      fail_msg("%s: %s", cases[i].what, cases[i].ok ? "refused" : "loaded");
  /* A block of another op count, a count that does not match the ints
   * that follow, and decisions cut short are refused. */
  memcpy(f.b, f.bytes, f.n);
  put_i32(f.b + f.at - 4, FORGE_OPS - 1);
  assert_int_equal(forge_try(&f, f.n, "op count"), 0);
  memcpy(f.b, f.bytes, f.n);
  put_i32(f.b + f.at - 8, FORGE_OPS + 2);
  assert_int_equal(forge_try(&f, f.n, "record count"), 0);
  memcpy(f.b, f.bytes, f.n);
  put_i32(f.b + f.at - 8, FORGE_OPS);
  assert_int_equal(forge_try(&f, f.n - 4, "record cut"), 0);
  /* No decisions at all (count 0): the planner searches, as for bytes of
   * version 3. */
  memcpy(f.b, f.bytes, f.n);
  put_i32(f.b + f.at - 8, 0);
  assert_int_equal(forge_try(&f, f.at - 4, "no record"), 1);
  forge_close(&f);
}

/* Every group id of @main set to every value from -3 to the op count + 1
 * (and two extremes), resealed: each load is refused or computes the
 * program's values (ASan checks that none reads out of bounds). */
static void test_every_single_forgery(void **state) {
  (void)state;
  forge f;
  forge_open(&f);
  const int32_t grp[FORGE_OPS] = {2, 2, 2, 5, -1, 5, 9, 9, 9, 9};
  int loaded = 0, tried = 0;
  for (int i = 0; i < FORGE_OPS; i++) {
    for (int32_t v = -3; v <= FORGE_OPS + 3; v++) {
      int32_t g2[FORGE_OPS];
      memcpy(g2, grp, sizeof g2);
      g2[i] = v == FORGE_OPS + 2   ? INT32_MIN
              : v == FORGE_OPS + 3 ? INT32_MAX
                                   : v;
      char what[64];
      snprintf(what, sizeof what, "group of op %d = %d", i, (int)g2[i]);
      loaded += forge_groups(&f, g2, what);
      tried++;
    }
  }
  print_message("%d single forgeries: %d refused, %d loaded and computed "
                "the program's values\n", tried, f.refused, loaded);
  assert_int_equal(f.refused + loaded, tried);
  assert_true(f.refused > tried / 2);
  assert_true(loaded > FORGE_OPS); /* the unchanged ids at least */
  forge_close(&f);
}

/* kForge serialized by the simulator of commit c2ab84a (format version
 * 3: no fusion decisions), kept as bytes. */
static const unsigned char kForgeV3[] = {
    0x58, 0x53, 0x49, 0x4d, 0x45, 0x58, 0x45, 0x31, 0x03, 0x00, 0x00, 0x00,
    0x04, 0x03, 0x02, 0x01, 0xa6, 0x26, 0xff, 0xc6, 0xb1, 0x3c, 0x1f, 0x78,
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
    0x31, 0x2e, 0x38, 0x2e, 0x30, 0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00,
    0x00, 0x6d, 0x61, 0x69, 0x6e, 0x01, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x0c,
    0x02, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x01, 0x08, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x02, 0x04, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x0c, 0x02, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c,
    0x02, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x02, 0x04, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x0c,
    0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x0c, 0x01, 0x04, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x02, 0x04, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x0c, 0x02, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x02, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x02, 0x04, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x00, 0x00, 0x1b, 0x00,
    0x00, 0x00, 0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e,
    0x62, 0x72, 0x6f, 0x61, 0x64, 0x63, 0x61, 0x73, 0x74, 0x5f, 0x69, 0x6e,
    0x5f, 0x64, 0x69, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x15, 0x00, 0x00, 0x00, 0x62, 0x72, 0x6f, 0x61, 0x64, 0x63, 0x61, 0x73,
    0x74, 0x5f, 0x64, 0x69, 0x6d, 0x65, 0x6e, 0x73, 0x69, 0x6f, 0x6e, 0x73,
    0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x3c, 0x69, 0x6e, 0x70, 0x75, 0x74,
    0x3e, 0x02, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff,
    0xff, 0x02, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x00, 0x00, 0x73, 0x74, 0x61,
    0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e, 0x61, 0x64, 0x64, 0x02, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x66, 0x00, 0x00, 0x00, 0x0f, 0x00,
    0x00, 0x00, 0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e,
    0x74, 0x61, 0x6e, 0x68, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x04, 0x00, 0x00, 0x00,
    0x08, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x3e, 0x00, 0x00, 0x00,
    0x13, 0x00, 0x00, 0x00, 0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c,
    0x6f, 0x2e, 0x6d, 0x75, 0x6c, 0x74, 0x69, 0x70, 0x6c, 0x79, 0x02, 0x00,
    0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x05, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x1b, 0x00, 0x00, 0x00, 0x13, 0x00,
    0x00, 0x00, 0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e,
    0x63, 0x6f, 0x6e, 0x73, 0x74, 0x61, 0x6e, 0x74, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x06, 0x00, 0x00, 0x00, 0x76, 0x61, 0x6c, 0x75, 0x65, 0x07, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c,
    0x00, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x06,
    0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x4a,
    0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x73, 0x74, 0x61, 0x62, 0x6c,
    0x65, 0x68, 0x6c, 0x6f, 0x2e, 0x72, 0x65, 0x64, 0x75, 0x63, 0x65, 0x02,
    0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0b,
    0x00, 0x00, 0x00, 0x64, 0x69, 0x6d, 0x65, 0x6e, 0x73, 0x69, 0x6f, 0x6e,
    0x73, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x08,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0e,
    0x00, 0x00, 0x00, 0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f,
    0x2e, 0x61, 0x64, 0x64, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
    0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
    0x07, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x51, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x73, 0x74, 0x61, 0x62,
    0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e, 0x72, 0x65, 0x74, 0x75, 0x72, 0x6e,
    0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
    0x07, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0xff, 0x07, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0xff, 0x0e, 0x00, 0x00, 0x00, 0x1b, 0x00, 0x00, 0x00,
    0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e, 0x62, 0x72,
    0x6f, 0x61, 0x64, 0x63, 0x61, 0x73, 0x74, 0x5f, 0x69, 0x6e, 0x5f, 0x64,
    0x69, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x15, 0x00,
    0x00, 0x00, 0x62, 0x72, 0x6f, 0x61, 0x64, 0x63, 0x61, 0x73, 0x74, 0x5f,
    0x64, 0x69, 0x6d, 0x65, 0x6e, 0x73, 0x69, 0x6f, 0x6e, 0x73, 0x06, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0xff, 0x08, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0xff, 0x21, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00,
    0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e, 0x64, 0x69,
    0x76, 0x69, 0x64, 0x65, 0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
    0x0b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
    0x09, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
    0x17, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00, 0x73, 0x74, 0x61, 0x62,
    0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e, 0x63, 0x6f, 0x6d, 0x70, 0x61, 0x72,
    0x65, 0x02, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x15, 0x00, 0x00, 0x00, 0x63, 0x6f, 0x6d, 0x70, 0x61, 0x72, 0x69,
    0x73, 0x6f, 0x6e, 0x5f, 0x64, 0x69, 0x72, 0x65, 0x63, 0x74, 0x69, 0x6f,
    0x6e, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x47, 0x54, 0x0d, 0x00, 0x00, 0x00,
    0x63, 0x6f, 0x6d, 0x70, 0x61, 0x72, 0x65, 0x5f, 0x74, 0x79, 0x70, 0x65,
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x06, 0x00, 0x00, 0x00, 0x46, 0x4c, 0x4f, 0x41, 0x54, 0x00, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0a, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x59, 0x00, 0x00, 0x00, 0x11, 0x00,
    0x00, 0x00, 0x73, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x68, 0x6c, 0x6f, 0x2e,
    0x73, 0x65, 0x6c, 0x65, 0x63, 0x74, 0x03, 0x00, 0x00, 0x00, 0x0d, 0x00,
    0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x0e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0b, 0x00, 0x00, 0x00, 0x08, 0x00,
    0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x6f, 0x00, 0x00, 0x00, 0x0c, 0x00,
    0x00, 0x00, 0x66, 0x75, 0x6e, 0x63, 0x2e, 0x72, 0x65, 0x74, 0x75, 0x72,
    0x6e, 0x02, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0xff, 0xff, 0xff, 0xff, 0x0c, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
    0x00, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x02,
    0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x01, 0x04, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x00, 0x00,
};

/* Version 3 bytes still load: the planner searches for the groups (the
 * executable re-serializes as version 4 with the decisions a cold compile
 * makes) and computes the program's values. */
static void test_version3_bytes(void **state) {
  (void)state;
  forge f;
  forge_open(&f);
  assert_int_equal(get_i32(kForgeV3 + 8), 3);
  xrt_plugin_error err;
  void *back = NULL, *again = NULL;
  size_t n = 0;
  assert_int_equal(f.g.api->executable_deserialize(f.g.pc, &f.g.d, kForgeV3,
                                                   sizeof kForgeV3, &back,
                                                   &err), XRT_OK);
  void *got[2] = {NULL, NULL};
  assert_int_equal(rig_run(&f.g, back, f.in, got), XRT_OK);
  for (int i = 0; i < 32; i++)
    assert_true(close_to(((float *)got[0])[i], f.want_o[i]));
  for (int i = 0; i < 4; i++)
    assert_true(close_to(((float *)got[1])[i], f.want_r[i]));
  free_all(got, 2);
  assert_int_equal(f.g.api->executable_serialize(back, &again, &n, &err),
                   XRT_OK);
  assert_int_equal(n, f.n);
  assert_memory_equal(again, f.bytes, n); /* the cold compile's bytes */
  f.g.api->serialized_free(again);
  f.g.api->executable_destroy(back);
  /* a flipped byte of them is refused by their hash */
  unsigned char *b = malloc(sizeof kForgeV3);
  assert_non_null(b);
  memcpy(b, kForgeV3, sizeof kForgeV3);
  b[sizeof kForgeV3 / 2] ^= 0x10;
  back = NULL;
  assert_int_equal(f.g.api->executable_deserialize(f.g.pc, &f.g.d, b,
                                                   sizeof kForgeV3, &back,
                                                   &err), XRT_INVALID_ARGUMENT);
  assert_null(back);
  free(b);
  forge_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loaded_fusion_matches_cold),
      cmocka_unit_test(test_forged_groupings),
      cmocka_unit_test(test_every_single_forgery),
      cmocka_unit_test(test_version3_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
