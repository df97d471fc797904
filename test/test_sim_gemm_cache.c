/*
 * test_sim_gemm_cache.c - the packed-operand cache (src/sim/gemm_cache.c):
 * a GEMM whose B operand is an argument keeps B packed across executes,
 * keyed by the argument's memory and its write generation (device.c).
 * Each program is executed several times on the same B (the first call
 * records the key, the second packs into the cache, later ones read it; A
 * new each call, so that rows or columns of C left uncomputed cannot pass
 * for a previous call's), then on new buffers: freed and allocated again
 * at the same address with other contents (the address is checked),
 * imported zero-copy from host memory that is then rewritten, exported
 * and written through the export, used by two products, batched,
 * transposed, f32 and f64, with one and two threads, and the panels of a
 * skinny product's weights (skinny.c).  A stale pack would
 * give the old results.  Also the cache under pressure: a byte cap
 * (XRT_SIM_GEMM_CACHE_MB) that makes entries evict each other or find no
 * room, a cap of 0 (no cache), and more products than the cache has
 * entries.
 *
 * Values are small integers (as floats), so every sum is exact in any
 * order: results are compared exactly with sums computed here in double.
 * MIT licensed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <dlpack/dlpack.h>
#include <pthread.h>

/* C = A B: A [M, K] (or [K, M] with at), B [K, N] (or [N, K] with bt),
 * batched over a leading dim of Bt when Bt > 0. */
typedef struct prog {
  xrt_dtype t;
  int64_t Bt, M, N, K;
  int bt, at;
} prog;

static size_t esz(const prog *p) { return p->t == XRT_F64 ? 8 : 4; }
static int64_t nb(const prog *p) { return p->Bt ? p->Bt : 1; }

static xrt_shape a_shape(const prog *p) {
  int64_t r0 = p->at ? p->K : p->M, r1 = p->at ? p->M : p->K;
  return p->Bt ? TU_SHAPE(p->t, p->Bt, r0, r1) : TU_SHAPE(p->t, r0, r1);
}
static xrt_shape b_shape(const prog *p) {
  int64_t r0 = p->bt ? p->N : p->K, r1 = p->bt ? p->K : p->N;
  return p->Bt ? TU_SHAPE(p->t, p->Bt, r0, r1) : TU_SHAPE(p->t, r0, r1);
}

static xrt_executable *compile(xrt_client *c, const prog *p) {
  const char *ty = p->t == XRT_F64 ? "f64" : "f32";
  char ls[64], rs[64], os[64], text[1200];
  long long B = (long long)p->Bt, M = (long long)p->M, N = (long long)p->N,
            K = (long long)p->K;
  long long r0 = p->bt ? N : K, r1 = p->bt ? K : N;
  long long l0 = p->at ? K : M, l1 = p->at ? M : K;
  if (p->Bt) {
    snprintf(ls, sizeof ls, "%lldx%lldx%lldx%s", B, l0, l1, ty);
    snprintf(rs, sizeof rs, "%lldx%lldx%lldx%s", B, r0, r1, ty);
    snprintf(os, sizeof os, "%lldx%lldx%lldx%s", B, M, N, ty);
  } else {
    snprintf(ls, sizeof ls, "%lldx%lldx%s", l0, l1, ty);
    snprintf(rs, sizeof rs, "%lldx%lldx%s", r0, r1, ty);
    snprintf(os, sizeof os, "%lldx%lldx%s", M, N, ty);
  }
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<%s>, %%b: tensor<%s>) -> tensor<%s> "
           "{\n  %%r = stablehlo.dot_general %%a, %%b, %s contracting_dims = "
           "[%d] x [%d], precision = [DEFAULT, DEFAULT] : (tensor<%s>, "
           "tensor<%s>) -> tensor<%s>\n  func.return %%r : tensor<%s>\n}\n",
           ls, rs, os, p->Bt ? "batching_dims = [0] x [0]," : "",
           (p->Bt ? 1 : 0) + (p->at ? 0 : 1), (p->Bt ? 1 : 0) + (p->bt ? 1 : 0),
           ls, rs, os, os);
  return tu_compile(c, text, 0, NULL);
}

/* Host data: element i of a tensor with salt s, an integer in [-4, 4]. */
static double val(int64_t i, int s) {
  return (double)((int64_t)((uint64_t)(i * 7 + s * 13 + (i / 5) * s) % 9) -
                  4);
}

static void fill(const prog *p, void *dst, int64_t n, int s) {
  for (int64_t i = 0; i < n; i++) {
    if (p->t == XRT_F64) ((double *)dst)[i] = val(i, s);
    else ((float *)dst)[i] = (float)val(i, s);
  }
}

static int64_t a_count(const prog *p) { return nb(p) * p->M * p->K; }
static int64_t b_count(const prog *p) { return nb(p) * p->N * p->K; }

/* want = A B for A and B made with salts sa, sb: [nb, M, N] in double.
 * The operands are first laid out as [nb, M, K] and [nb, K, N], so the
 * sum runs along rows (a reference at the speed of the test's other work,
 * even unoptimized or under valgrind). */
static double *reference(const prog *p, int sa, int sb) {
  int64_t M = p->M, N = p->N, K = p->K;
  double *a = malloc((size_t)(nb(p) * M * K) * sizeof(double));
  double *b = malloc((size_t)(nb(p) * K * N) * sizeof(double));
  double *want = calloc((size_t)(nb(p) * M * N), sizeof(double));
  assert_true(a && b && want);
  for (int64_t q = 0; q < nb(p); q++)
    for (int64_t k = 0; k < K; k++) {
      for (int64_t m = 0; m < M; m++)
        a[(q * M + m) * K + k] =
            val(p->at ? (q * K + k) * M + m : (q * M + m) * K + k, sa);
      for (int64_t j = 0; j < N; j++)
        b[(q * K + k) * N + j] =
            val(p->bt ? (q * N + j) * K + k : (q * K + k) * N + j, sb);
    }
  for (int64_t q = 0; q < nb(p); q++)
    for (int64_t m = 0; m < M; m++) {
      double *w = want + (q * M + m) * N;
      for (int64_t k = 0; k < K; k++) {
        const double x = a[(q * M + m) * K + k], *row = b + (q * K + k) * N;
        for (int64_t j = 0; j < N; j++) w[j] += x * row[j];
      }
    }
  free(a);
  free(b);
  return want;
}

/* The last references run_check computed: the same product is checked
 * many times over (a light run under valgrind spent half its time
 * recomputing them).  Main thread only; freed by the group's teardown. */
enum { NMEMO = 8 };
static struct memo {
  prog p;
  int sa, sb;
  double *want;
} memo[NMEMO];
static int memo_next;

static int same_prog(const prog *x, const prog *y) {
  return x->t == y->t && x->Bt == y->Bt && x->M == y->M && x->N == y->N &&
         x->K == y->K && x->bt == y->bt && x->at == y->at;
}

static const double *memo_reference(const prog *p, int sa, int sb) {
  for (int i = 0; i < NMEMO; i++)
    if (memo[i].want && same_prog(&memo[i].p, p) && memo[i].sa == sa &&
        memo[i].sb == sb)
      return memo[i].want;
  struct memo *m = &memo[memo_next];
  memo_next = (memo_next + 1) % NMEMO;
  free(m->want);
  *m = (struct memo){*p, sa, sb, reference(p, sa, sb)};
  return m->want;
}

static int teardown(void **state) {
  for (int i = 0; i < NMEMO; i++) free(memo[i].want), memo[i].want = NULL;
  return tu_teardown_client(state);
}

/* Executes e on (a, b) and checks C against A and B made with salts sa,
 * sb. */
static void run_check(xrt_client *c, xrt_executable *e, const prog *p,
                      xrt_buffer *a, xrt_buffer *b, int sa, int sb) {
  xrt_buffer *args[2] = {a, b}, *out = NULL;
  xrt_status st =
      xrt_execute(e, xrt_client_device(c, 0), args, 2, &out, 1, NULL);
  if (st) fail_msg("execute: %s", xrt_last_error());
  size_t n = (size_t)(nb(p) * p->M * p->N);
  void *got = malloc(n * esz(p));
  assert_non_null(got);
  assert_int_equal(xrt_buffer_to_host(out, got, n * esz(p)), XRT_OK);
  const double *want = memo_reference(p, sa, sb);
  for (size_t at = 0; at < n; at++) {
    double g = p->t == XRT_F64 ? ((double *)got)[at]
                               : (double)((float *)got)[at];
    if (g != want[at]) {
      long long q = (long long)(at / (size_t)(p->M * p->N)),
                m = (long long)(at / (size_t)p->N % (size_t)p->M),
                j = (long long)(at % (size_t)p->N);
      double w = want[at];
      free(got);
      fail_msg("[%lld,%lld,%lld] got %.17g want %.17g (salts %d %d)", q, m,
               j, g, w, sa, sb);
    }
  }
  free(got);
  xrt_buffer_release(out);
}

static xrt_buffer *upload(xrt_client *c, const prog *p, int is_b, int s) {
  xrt_shape sh = is_b ? b_shape(p) : a_shape(p);
  int64_t n = is_b ? b_count(p) : a_count(p);
  void *h = malloc((size_t)n * esz(p));
  assert_non_null(h);
  fill(p, h, n, s);
  xrt_buffer *b = NULL;
  if (xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, h, &b))
    fail_msg("upload: %s", xrt_last_error());
  free(h);
  return b;
}

/* The device address of b (a DLPack export, deleted at once: it also
 * takes b's write generation away, so b is never cached again). */
static const void *addr_of(xrt_buffer *b) {
  DLManagedTensor *t = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_OK);
  const void *p = t->dl_tensor.data;
  t->deleter(t);
  return p;
}

/* Runs p three times on one B, then again on B freed and allocated at the
 * same address with new contents, six times over (a light run: twice, two
 * times over).  A changes from call to call, so that a part of C left
 * uncomputed cannot keep the right values of a previous call's result in
 * a block the device gave back. */
static void reuse(xrt_client *c, const prog *p) {
  xrt_executable *e = compile(c, p);
  const void *first = NULL;
  int reps = tu_light() ? 2 : 3, salts = tu_light() ? 2 : 6;
  for (int s = 2; s < 2 + salts; s++) {
    xrt_buffer *b = upload(c, p, 1, s);
    for (int r = 0; r < reps; r++) {
      xrt_buffer *a = upload(c, p, 0, 11 + r);
      run_check(c, e, p, a, b, 11 + r, s);
      xrt_buffer_release(a);
    }
    const void *at = addr_of(b);
    if (!first) first = at;
    assert_ptr_equal(at, first); /* the device's block cache gave it back */
    xrt_buffer_release(b);
  }
  xrt_executable_release(e);
}

static void test_reallocated(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F32, 0, 40, 70, 1000, 0, 0}; /* K in three blocks, odd N */
  reuse(c, &p);
  prog q = {XRT_F32, 0, 130, 520, 64, 0, 0}; /* rows and columns in blocks */
  reuse(c, &q);
  /* a few rows against weights [K, N] of 2 MiB or more: the skinny
   * product's panels (skinny.c), one row and two groups of rows */
  prog s = {XRT_F32, 0, 1, 1000, 600, 0, 0};
  reuse(c, &s);
  prog t = {XRT_F32, 0, 5, 1000, 600, 0, 0};
  reuse(c, &t);
}

static void test_batched_transposed_f64(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F32, 3, 20, 50, 90, 0, 0};
  reuse(c, &p);
  prog q = {XRT_F32, 0, 33, 45, 70, 1, 0}; /* B [N, K]: transposing packs */
  reuse(c, &q);
  prog a = {XRT_F32, 0, 32, 45, 70, 0, 1}; /* A [K, M]: runs of rows */
  reuse(c, &a);
  prog b = {XRT_F32, 2, 28, 33, 500, 1, 1}; /* 8- and 4-row edges */
  reuse(c, &b);
  prog r = {XRT_F64, 2, 25, 19, 300, 0, 0};
  reuse(c, &r);
}

static void test_two_threads(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 2, 0);
  /* how the lanes split C depends on M and N only: a light run (valgrind)
   * takes a shorter K */
  int64_t k = tu_light() ? 4 : 1;
  prog p = {XRT_F32, 0, 100, 700, 400 / k, 0, 0}; /* lanes split columns */
  reuse(c, &p);
  prog q = {XRT_F32, 0, 700, 40, 100, 0, 0}; /* lanes split rows */
  reuse(c, &q);
  /* columns while B is packed per call, rows once it is kept packed */
  prog r = {XRT_F32, 0, 300, 700, 200 / k, 0, 0};
  reuse(c, &r);
  q.at = 1; /* A [K, M] */
  reuse(c, &q);
  xrt_client_release(c);
}

/* The A operand changes while B stays: only B is kept. */
static void test_new_lhs_same_weights(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F32, 0, 48, 64, 200, 0, 0};
  xrt_executable *e = compile(c, &p);
  xrt_buffer *b = upload(c, &p, 1, 3);
  for (int s = 10; s < 15; s++) {
    xrt_buffer *a = upload(c, &p, 0, s);
    run_check(c, e, &p, a, b, s, 3);
    xrt_buffer_release(a);
  }
  xrt_buffer_release(b);
  xrt_executable_release(e);
}

/* One weight used by two products of one program, then by a second
 * executable of the same program. */
static void test_two_products(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const char *text =
      "func.func @main(%a: tensor<40x96xf32>, %w: tensor<96x80xf32>) -> "
      "tensor<40x80xf32> {\n"
      "  %r = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0], "
      "precision = [DEFAULT, DEFAULT] : (tensor<40x96xf32>, "
      "tensor<96x80xf32>) -> tensor<40x80xf32>\n"
      "  %s = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0], "
      "precision = [DEFAULT, DEFAULT] : (tensor<40x96xf32>, "
      "tensor<96x80xf32>) -> tensor<40x80xf32>\n"
      "  %t = stablehlo.add %r, %s : tensor<40x80xf32>\n"
      "  func.return %t : tensor<40x80xf32>\n}\n";
  prog p = {XRT_F32, 0, 40, 80, 96, 0, 0};
  for (int x = 0; x < 2; x++) {
    xrt_executable *e = tu_compile(c, text, 0, NULL);
    for (int s = 1; s < 4; s++) {
      xrt_buffer *a = upload(c, &p, 0, 5), *w = upload(c, &p, 1, s);
      double *want = reference(&p, 5, s);
      for (int r = 0; r < 3; r++) {
        xrt_buffer *args[2] = {a, w}, *out = NULL;
        assert_int_equal(
            xrt_execute(e, xrt_client_device(c, 0), args, 2, &out, 1, NULL),
            XRT_OK);
        float got[40 * 80];
        assert_int_equal(xrt_buffer_to_host(out, got, sizeof got), XRT_OK);
        for (int i = 0; i < 40 * 80; i++)
          if ((double)got[i] != 2 * want[i])
            fail_msg("[%d,%d] got %g want %g", i / 80, i % 80,
                     (double)got[i], 2 * want[i]);
        xrt_buffer_release(out);
      }
      free(want);
      xrt_buffer_release(a);
      xrt_buffer_release(w);
    }
    xrt_executable_release(e);
  }
}

/* ---- concurrent executes ---- */

typedef struct worker {
  xrt_client *c;
  xrt_executable *e;
  const prog *p;
  int salt;   /* of this thread's weights */
  int failed; /* results that were wrong */
} worker;

/* Executes e 12 times on this thread's own A and B, checking each result
 * against sums computed here (no cmocka asserts off the main thread). */
static void *work(void *arg) {
  worker *w = (worker *)arg;
  const prog *p = w->p;
  xrt_buffer *a = NULL, *b = NULL;
  xrt_shape as = a_shape(p), bs = b_shape(p);
  float *ah = malloc((size_t)a_count(p) * 4), *bh = malloc((size_t)b_count(p) * 4);
  float *got = malloc((size_t)(p->M * p->N) * 4);
  if (!ah || !bh || !got) {
    w->failed = -1;
    free(ah), free(bh), free(got);
    return NULL;
  }
  fill(p, ah, a_count(p), 1);
  fill(p, bh, b_count(p), w->salt);
  xrt_device *d = xrt_client_device(w->c, 0);
  if (xrt_buffer_from_host(w->c, d, &as, ah, &a) ||
      xrt_buffer_from_host(w->c, d, &bs, bh, &b))
    w->failed = -1;
  for (int r = 0; r < 12 && !w->failed; r++) {
    xrt_buffer *args[2] = {a, b}, *out = NULL;
    if (xrt_execute(w->e, d, args, 2, &out, 1, NULL) ||
        xrt_buffer_to_host(out, got, (size_t)(p->M * p->N) * 4)) {
      w->failed = -1;
      break;
    }
    xrt_buffer_release(out);
    for (int64_t m = 0; m < p->M; m++)
      for (int64_t j = 0; j < p->N; j++) {
        double want = 0;
        for (int64_t k = 0; k < p->K; k++)
          want += val(m * p->K + k, 1) * val(k * p->N + j, w->salt);
        w->failed += (double)got[m * p->N + j] != want;
      }
  }
  xrt_buffer_release(a);
  xrt_buffer_release(b);
  free(ah), free(bh), free(got);
  return NULL;
}

/* Four host threads run one executable on one device, each with weights
 * of its own: the product's entry changes hands (a new key replaces it
 * only when no call is reading it) and every result stays right. */
static void test_concurrent(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F32, 0, 36, 96, 160, 0, 0};
  xrt_executable *e = compile(c, &p);
  pthread_t t[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){c, e, &p, 20 + i % 2, 0}; /* two share weights' values */
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(w[i].failed, 0);
  }
  xrt_executable_release(e);
}

/* ---- memory the device does not control ---- */

typedef struct host_t {
  DLManagedTensor t;
  int64_t shape[2];
  void *raw;
  float *data;
} host_t;

static void host_delete(DLManagedTensor *t) {
  host_t *h = (host_t *)t->manager_ctx;
  free(h->raw);
  free(h);
}

/* B imported zero-copy from host memory that the test then rewrites:
 * adopted memory has no write generation, so it is packed every call. */
static void test_imported_rewritten(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F32, 0, 30, 64, 128, 0, 0};
  xrt_executable *e = compile(c, &p);
  xrt_buffer *a = upload(c, &p, 0, 1);
  host_t *h = (host_t *)calloc(1, sizeof *h);
  assert_non_null(h);
  size_t bytes = (size_t)b_count(&p) * 4;
  h->raw = malloc(bytes + 63);
  assert_non_null(h->raw);
  h->data = (float *)(((uintptr_t)h->raw + 63) & ~(uintptr_t)63);
  fill(&p, h->data, b_count(&p), 2);
  h->shape[0] = p.K, h->shape[1] = p.N;
  h->t.dl_tensor.data = h->data;
  h->t.dl_tensor.device.device_type = kDLCPU;
  h->t.dl_tensor.ndim = 2;
  h->t.dl_tensor.dtype.code = kDLFloat;
  h->t.dl_tensor.dtype.bits = 32;
  h->t.dl_tensor.dtype.lanes = 1;
  h->t.dl_tensor.shape = h->shape;
  h->t.manager_ctx = h;
  h->t.deleter = host_delete;
  float *data = h->data;
  xrt_buffer *b = NULL;
  assert_int_equal(
      xrt_buffer_from_dlpack(c, xrt_client_device(c, 0), &h->t, &b), XRT_OK);
  assert_ptr_equal(addr_of(b), data); /* zero copy: the same memory */
  for (int s = 2; s < 6; s++) {
    fill(&p, data, b_count(&p), s);
    for (int r = 0; r < 3; r++) run_check(c, e, &p, a, b, 1, s);
  }
  xrt_buffer_release(b);
  xrt_buffer_release(a);
  xrt_executable_release(e);
}

/* A device buffer that was cached, then exported and written through the
 * export: from the export on it is never served from the cache. */
static void test_exported_written(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F32, 0, 30, 64, 128, 0, 0};
  xrt_executable *e = compile(c, &p);
  xrt_buffer *a = upload(c, &p, 0, 1), *b = upload(c, &p, 1, 2);
  for (int r = 0; r < 3; r++) run_check(c, e, &p, a, b, 1, 2);
  DLManagedTensor *t = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_OK);
  for (int s = 3; s < 6; s++) {
    fill(&p, t->dl_tensor.data, b_count(&p), s);
    for (int r = 0; r < 3; r++) run_check(c, e, &p, a, b, 1, s);
  }
  t->deleter(t);
  xrt_buffer_release(b);
  xrt_buffer_release(a);
  xrt_executable_release(e);
}

/* ---- the cache under pressure ---- */

/* A client whose cache holds at most `mb` megabytes (the variable is read
 * when the client's cache is made, at its first product). */
static xrt_client *client_with_cap(const char *mb) {
  setenv("XRT_SIM_GEMM_CACHE_MB", mb, 1);
  xrt_client *c = tu_client(1, 1, 0);
  return c;
}

/* With 1 MB, three packed f32 weights of 256 x 256..304 fit and a fourth
 * does not: it evicts the least recently used one when that was not used
 * since the fourth's previous call, and packs as usual (no room) when
 * every other entry was used since.  Every result stays right.  (The
 * products differ in N: the same program compiled again is the same
 * plan, one product.) */
static void test_small_cap(void **state) {
  (void)state;
  xrt_client *c = client_with_cap("1");
  enum { NP = 5 };
  prog p[NP];
  xrt_executable *e[NP];
  xrt_buffer *a[NP], *b[NP];
  for (int i = 0; i < NP; i++) {
    p[i] = (prog){XRT_F32, 0, 48, 256 + 16 * i, 256, 0, 0};
    e[i] = compile(c, &p[i]);
    a[i] = upload(c, &p[i], 0, 1);
    b[i] = upload(c, &p[i], 1, 20 + i);
  }
#define RUN(i) run_check(c, e[i], &p[i], a[i], b[i], 1, 20 + (i))
  for (int i = 0; i < 3; i++) /* three fill the cache */
    for (int r = 0; r < 3; r++) RUN(i);
  RUN(3); /* seen */
  for (int i = 0; i < 3; i++) RUN(i);
  RUN(3); /* all used since its last call: no room, packs as usual */
  RUN(3); /* evicts the least recently used */
  RUN(3);
  for (int r = 0; r < 3; r++) /* the evicted one comes back, and so on */
    for (int i = 0; i < NP; i++) RUN(i);
#undef RUN
  for (int i = 0; i < NP; i++) {
    xrt_buffer_release(a[i]);
    xrt_buffer_release(b[i]);
    xrt_executable_release(e[i]);
  }
  xrt_client_release(c);
  unsetenv("XRT_SIM_GEMM_CACHE_MB");
}

/* A cap of 0 keeps nothing: every call packs, results as always. */
static void test_no_cache(void **state) {
  (void)state;
  xrt_client *c = client_with_cap("0");
  prog p = {XRT_F32, 0, 48, 64, 200, 0, 0};
  reuse(c, &p);
  xrt_client_release(c);
  unsetenv("XRT_SIM_GEMM_CACHE_MB");
}

/* More products than entries: one program of 140 products of the same
 * A and B (each a product of its own), run three times, so that each asks
 * for an entry: new keys take the least recently used unused ones.  The
 * result, 140 A B, is checked each time. */
static void test_many_products(void **state) {
  xrt_client *c = (xrt_client *)*state;
  enum { NP = 140 };
  prog p = {XRT_F32, 0, 24, 32, 40, 0, 0};
  const char *dot = "stablehlo.dot_general %a, %b, contracting_dims = [1] x "
                    "[0], precision = [DEFAULT, DEFAULT] : "
                    "(tensor<24x40xf32>, tensor<40x32xf32>) -> "
                    "tensor<24x32xf32>";
  size_t cap = (size_t)NP * 400 + 400, len = 0;
  char *text = malloc(cap);
  assert_non_null(text);
  len += (size_t)snprintf(text + len, cap - len,
                          "func.func @main(%%a: tensor<24x40xf32>, %%b: "
                          "tensor<40x32xf32>) -> tensor<24x32xf32> {\n"
                          "  %%s0 = %s\n", dot);
  for (int i = 1; i < NP; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "  %%d%d = %s\n  %%s%d = stablehlo.add %%s%d, "
                            "%%d%d : tensor<24x32xf32>\n",
                            i, dot, i, i - 1, i);
  snprintf(text + len, cap - len,
           "  func.return %%s%d : tensor<24x32xf32>\n}\n", NP - 1);
  xrt_executable *e = tu_compile(c, text, 0, NULL);
  free(text);
  xrt_buffer *a = upload(c, &p, 0, 2), *b = upload(c, &p, 1, 3);
  double *want = reference(&p, 2, 3);
  for (int r = 0; r < 3; r++) {
    xrt_buffer *args[2] = {a, b}, *out = NULL;
    assert_int_equal(
        xrt_execute(e, xrt_client_device(c, 0), args, 2, &out, 1, NULL),
        XRT_OK);
    float got[24 * 32];
    assert_int_equal(xrt_buffer_to_host(out, got, sizeof got), XRT_OK);
    for (int i = 0; i < 24 * 32; i++)
      if ((double)got[i] != NP * want[i])
        fail_msg("[%d,%d] got %g want %g", i / 32, i % 32, (double)got[i],
                 NP * want[i]);
    xrt_buffer_release(out);
  }
  free(want);
  xrt_buffer_release(a);
  xrt_buffer_release(b);
  xrt_executable_release(e);
}

/* A 3x3 convolution (NHWC, HWIO kernel, padding 1) whose kernel is the
 * argument kept packed: [1, H, W, C] x [3, 3, C, O], the kernel new (at
 * the same address) for each salt, the input new for each call; checked
 * against the sum here. */
static void conv_reuse(xrt_client *c, int64_t H, int64_t W, int64_t C,
                       int64_t O) {
  char text[1400];
  long long h = (long long)H, w = (long long)W, ci = (long long)C,
            co = (long long)O;
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<1x%lldx%lldx%lldxf32>, %%k: "
           "tensor<3x3x%lldx%lldxf32>) -> tensor<1x%lldx%lldx%lldxf32> {\n"
           "  %%r = stablehlo.convolution(%%x, %%k) dim_numbers = [b, 0, 1, "
           "f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = "
           "[[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
           "feature_group_count = 1 : i64} : (tensor<1x%lldx%lldx%lldxf32>, "
           "tensor<3x3x%lldx%lldxf32>) -> tensor<1x%lldx%lldx%lldxf32>\n"
           "  func.return %%r : tensor<1x%lldx%lldx%lldxf32>\n}\n",
           h, w, ci, ci, co, h, w, co, h, w, ci, ci, co, h, w, co, h, w, co);
  xrt_executable *e = tu_compile(c, text, 0, NULL);
  prog px = {XRT_F32, 0, 1, H * W * C, 1, 0, 0}; /* flat host data */
  prog pk = {XRT_F32, 0, 1, 9 * C * O, 1, 0, 0};
  xrt_shape xs = TU_SHAPE(XRT_F32, 1, H, W, C), ks = TU_SHAPE(XRT_F32, 3, 3,
                                                             C, O);
  float *xh = malloc(sizeof(float) * (size_t)(H * W * C));
  float *kh = malloc(sizeof(float) * (size_t)(9 * C * O));
  float *got = malloc(sizeof(float) * (size_t)(H * W * O));
  float *want = malloc(sizeof(float) * (size_t)(H * W * O));
  assert_true(xh && kh && got && want);
  const void *first = NULL;
  for (int sk = 2; sk < (tu_light() ? 4 : 6); sk++) {
    fill(&pk, kh, 9 * C * O, sk);
    xrt_buffer *kb = NULL, *xb = NULL, *out = NULL;
    assert_int_equal(
        xrt_buffer_from_host(c, xrt_client_device(c, 0), &ks, kh, &kb),
        XRT_OK);
    for (int sx = 11; sx < 14; sx++) {
      fill(&px, xh, H * W * C, sx);
      assert_int_equal(
          xrt_buffer_from_host(c, xrt_client_device(c, 0), &xs, xh, &xb),
          XRT_OK);
      xrt_buffer *args[2] = {xb, kb};
      assert_int_equal(
          xrt_execute(e, xrt_client_device(c, 0), args, 2, &out, 1, NULL),
          XRT_OK);
      assert_int_equal(xrt_buffer_to_host(out, got, sizeof(float) *
                                                        (size_t)(H * W * O)),
                       XRT_OK);
      tu_ref_conv3x3(xh, kh, 1, H, W, O, C, 1, want);
      for (int64_t i = 0; i < H * W * O; i++)
        if (got[i] != want[i])
          fail_msg("conv [%lld,%lld] got %g want %g (salts %d %d)",
                   (long long)(i / O), (long long)(i % O), (double)got[i],
                   (double)want[i], sx, sk);
      xrt_buffer_release(out);
      xrt_buffer_release(xb);
    }
    const void *at = addr_of(kb);
    if (!first) first = at;
    assert_ptr_equal(at, first);
    xrt_buffer_release(kb);
  }
  free(xh);
  free(kh);
  free(got);
  free(want);
  xrt_executable_release(e);
}

/* A convolution's kernel is kept packed as a dot's weights are: one
 * thread and two. */
static void test_conv_kernel(void **state) {
  xrt_client *c = (xrt_client *)*state;
  int64_t h = tu_light() ? 16 : 28; /* a light run (valgrind): fewer */
  conv_reuse(c, h, h, 16, 32);
  xrt_client *c2 = tu_client(1, 2, 0);
  conv_reuse(c2, h - 8, h - 4, 24, 40);
  xrt_client_release(c2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_kernel),
      cmocka_unit_test(test_reallocated),
      cmocka_unit_test(test_batched_transposed_f64),
      cmocka_unit_test(test_two_threads),
      cmocka_unit_test(test_new_lhs_same_weights),
      cmocka_unit_test(test_two_products),
      cmocka_unit_test(test_concurrent),
      cmocka_unit_test(test_imported_rewritten),
      cmocka_unit_test(test_exported_written),
      cmocka_unit_test(test_small_cap),
      cmocka_unit_test(test_no_cache),
      cmocka_unit_test(test_many_products),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, teardown);
}
