/*
 * src/sim/fft.c - fft: FFT, IFFT, RFFT and IRFFT, radix-2 or
 * Bluestein, in double precision.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* One transformed axis: a forward DFT of length n, radix-2 when n is a
 * power of two, else Bluestein's chirp-z through a power-of-two FFT of
 * length m >= 2n - 1.  Computed in double precision. */
typedef struct sim_fft_axis {
  int64_t n, m;
  const sim_c128 *tw;    /* m/2 twiddles exp(-2 pi i k / m) */
  const sim_c128 *chirp; /* Bluestein: exp(-pi i k^2 / n), k < n */
  const sim_c128 *filt;  /* Bluestein: FFT of the conjugate chirp, m */
} sim_fft_axis;

typedef struct sim_fft {
  int kind;                /* 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT */
  int32_t L, rank;
  int64_t dims[XRT_MAX_RANK]; /* the complex work shape */
  int64_t in_last, out_last;  /* last dimension of operand and result */
  sim_fft_axis ax[3];      /* for the last L dimensions, outermost first */
  xrt_dtype it, ot;
  int32_t work, line;      /* pseudo values: work buffer, line scratch */
} sim_fft;

static int sim_is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* In-place iterative radix-2 FFT of length m (a power of two). */
static void sim_fft_pow2(sim_c128 *x, int64_t m, const sim_c128 *tw) {
  for (int64_t i = 1, j = 0; i < m; i++) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      sim_c128 t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t s = 0; s < m; s += len)
      for (int64_t k = 0; k < half; k++) {
        sim_c128 u = x[s + k], v = sim_cmul(x[s + k + half], tw[k * step]);
        x[s + k].re = u.re + v.re, x[s + k].im = u.im + v.im;
        x[s + k + half].re = u.re - v.re, x[s + k + half].im = u.im - v.im;
      }
  }
}

/* Forward DFT of x (length n) in place; scratch holds m elements. */
static void sim_fft_line(const sim_fft_axis *a, sim_c128 *x,
                         sim_c128 *scratch) {
  if (a->n <= 1) return;
  if (a->m == a->n) {
    sim_fft_pow2(x, a->n, a->tw);
    return;
  }
  int64_t n = a->n, m = a->m;
  for (int64_t k = 0; k < m; k++) {
    sim_c128 z = {0, 0};
    scratch[k] = k < n ? sim_cmul(x[k], a->chirp[k]) : z;
  }
  sim_fft_pow2(scratch, m, a->tw);
  for (int64_t k = 0; k < m; k++) {
    scratch[k] = sim_cmul(scratch[k], a->filt[k]);
    scratch[k].im = -scratch[k].im; /* inverse by conjugation */
  }
  sim_fft_pow2(scratch, m, a->tw);
  for (int64_t k = 0; k < n; k++) {
    sim_c128 v = {scratch[k].re / (double)m, -scratch[k].im / (double)m};
    x[k] = sim_cmul(v, a->chirp[k]);
  }
}

/* Transforms every line of buf (shape dims) along dimension d. */
static void sim_fft_axis_run(const sim_fft_axis *a, sim_c128 *buf,
                             const int64_t *dims, int32_t rank, int32_t d,
                             int inverse, sim_c128 *line) {
  int64_t outer = 1, inner = 1, n = dims[d];
  for (int32_t k = 0; k < d; k++) outer *= dims[k];
  for (int32_t k = d + 1; k < rank; k++) inner *= dims[k];
  sim_c128 *scratch = line + n;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      sim_c128 *base = buf + o * n * inner + i;
      for (int64_t k = 0; k < n; k++) {
        line[k] = base[k * inner];
        if (inverse) line[k].im = -line[k].im;
      }
      sim_fft_line(a, line, scratch);
      for (int64_t k = 0; k < n; k++) {
        sim_c128 v = line[k];
        if (inverse) v.re /= (double)n, v.im = -v.im / (double)n;
        base[k * inner] = v;
      }
    }
}

static void sim_fft_load(const sim_fft *f, const void *in, sim_c128 *w,
                         int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    sim_num v;
    sim_load(f->it, (const char *)in + (size_t)i * sim_esize(f->it), &v);
    w[i].re = v.re, w[i].im = v.im;
  }
}

/* IRFFT's last dimension: the Hermitian extension of the half spectrum,
 * inverse transformed; the real part is the result. */
static void sim_fft_irfft_last(const sim_fft *f, sim_c128 *w, void *out,
                               sim_c128 *line, int64_t lines) {
  const sim_fft_axis *a = &f->ax[f->L - 1];
  int64_t n = a->n, h = f->in_last;
  size_t es = sim_esize(f->ot);
  for (int64_t l = 0; l < lines; l++) {
    const sim_c128 *src = w + l * h;
    for (int64_t k = 0; k < n; k++) {
      sim_c128 v = k < h ? src[k] : src[n - k];
      if (k >= h) v.im = -v.im;
      line[k].re = v.re, line[k].im = -v.im; /* conjugate: inverse */
    }
    sim_fft_line(a, line, line + n);
    for (int64_t k = 0; k < n; k++) {
      sim_num v = {line[k].re / (double)n, 0, 0, 0};
      sim_store(f->ot, (char *)out + (size_t)(l * n + k) * es, &v);
    }
  }
}

static xrt_status sim_run_fft(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_fft *f = (const sim_fft *)st->data;
  sim_c128 *w = (sim_c128 *)vals[f->work], *line = (sim_c128 *)vals[f->line];
  void *out = vals[st->out[0]];
  int64_t total = 1;
  (void)cx;
  for (int32_t k = 0; k < f->rank; k++) total *= f->dims[k];
  if (total == 0) return XRT_OK;
  int inverse = f->kind == 1 || f->kind == 3;
  int32_t axes = f->kind == 3 ? f->L - 1 : f->L;
  sim_fft_load(f, vals[st->in[0]], w, total);
  for (int32_t j = 0; j < axes; j++) {
    int32_t d = f->rank - f->L + j;
    sim_fft_axis_run(&f->ax[j], w, f->dims, f->rank, d, inverse, line);
  }
  if (f->kind == 3) {
    sim_fft_irfft_last(f, w, out, line, total / f->in_last);
    return XRT_OK;
  }
  /* Copy out, keeping the first out_last entries of the last dimension. */
  size_t es = sim_esize(f->ot);
  int64_t lines = total / f->in_last;
  for (int64_t l = 0; l < lines; l++)
    for (int64_t k = 0; k < f->out_last; k++) {
      sim_c128 v = w[l * f->in_last + k];
      sim_num nv = {v.re, v.im, 0, 0};
      sim_store(f->ot, (char *)out + (size_t)(l * f->out_last + k) * es, &nv);
    }
  return XRT_OK;
}

/* Twiddles, chirp and filter of one axis (compile time). */
static xrt_status sim_fft_plan_axis(sim_fcc *fc, sim_fft_axis *a, int64_t n) {
  const double pi = 3.14159265358979323846;
  a->n = n;
  a->m = n;
  if (n <= 1) return XRT_OK;
  if (!sim_is_pow2(n)) {
    a->m = 1;
    while (a->m < 2 * n - 1) a->m <<= 1;
  }
  int64_t m = a->m;
  sim_c128 *tw = (sim_c128 *)sim_palloc(fc, sizeof *tw * (size_t)(m / 2 + 1));
  if (!tw) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t k = 0; k < m / 2; k++) {
    tw[k].re = cos(-2 * pi * (double)k / (double)m);
    tw[k].im = sin(-2 * pi * (double)k / (double)m);
  }
  a->tw = tw;
  if (m == n) return XRT_OK;
  sim_c128 *ch = (sim_c128 *)sim_palloc(fc, sizeof *ch * (size_t)n);
  sim_c128 *fl = (sim_c128 *)sim_palloc(fc, sizeof *fl * (size_t)m);
  if (!ch || !fl) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t k = 0; k < n; k++) {
    /* k^2 mod 2n keeps the angle exact for large k (n < 2^31). */
    uint64_t q = ((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n);
    ch[k].re = cos(-pi * (double)q / (double)n);
    ch[k].im = sin(-pi * (double)q / (double)n);
  }
  for (int64_t k = 0; k < n; k++) {
    sim_c128 c = {ch[k].re, -ch[k].im};
    fl[k] = c;
    if (k) fl[m - k] = c;
  }
  sim_fft_pow2(fl, m, tw);
  a->chirp = ch;
  a->filt = fl;
  return XRT_OK;
}

static int sim_fft_kind(const char *s) {
  static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

SIM_PRIVATE xrt_status sim_lower_fft(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  const xrt_shape *I = sim_shape(fc, op->operands[0]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const int64_t *len;
  int64_t nl;
  xrt_status rc = sim_ints(fc, op, "fft_length", 1, &len, &nl);
  if (rc) return rc;
  sim_fft *f = (sim_fft *)sim_palloc(fc, sizeof *f);
  if (!f) return XRT_RESOURCE_EXHAUSTED;
  f->kind = sim_fft_kind(sim_la_enum(op, "fft_type"));
  int ok = f->kind >= 0 && nl >= 1 && nl <= 3 && nl <= I->rank &&
           I->rank == O->rank;
  for (int32_t d = 0; ok && d < I->rank; d++) {
    int last = d == I->rank - 1;
    ok = last || I->dims[d] == O->dims[d];
    if (ok && d >= I->rank - nl) {
      int64_t want = len[d - (I->rank - nl)];
      int64_t have = f->kind == 2 ? I->dims[d] : f->kind == 3 && last
                   ? O->dims[d] : I->dims[d];
      ok = want == have && want < (1ll << 31);
    }
  }
  if (ok) {
    int64_t n = len[nl - 1], h = n == 0 ? 0 : n / 2 + 1;
    int64_t il = I->dims[I->rank - 1], ol = O->dims[O->rank - 1];
    ok = f->kind == 2 ? ol == h : f->kind == 3 ? il == h : il == ol;
  }
  if (!ok)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: fft_type, "
                       "fft_length and shapes do not agree", op->name);
  if (!sim_dtype_is_complex(f->kind == 3 ? I->dtype : O->dtype) ||
      !(sim_dtype_is_complex(I->dtype) || I->dtype == XRT_F32 ||
        I->dtype == XRT_F64) ||
      !(sim_dtype_is_complex(O->dtype) || O->dtype == XRT_F32 ||
        O->dtype == XRT_F64))
    return sim_unsupported_type(fc, op, I->dtype);
  f->it = I->dtype, f->ot = O->dtype;
  f->L = (int32_t)nl, f->rank = I->rank;
  for (int32_t d = 0; d < I->rank; d++) f->dims[d] = I->dims[d];
  f->in_last = I->rank ? I->dims[I->rank - 1] : 1;
  f->out_last = O->rank ? O->dims[O->rank - 1] : 1;
  int64_t biggest = 1, total = sim_numel(I);
  for (int32_t j = 0; j < f->L; j++) {
    if ((rc = sim_fft_plan_axis(fc, &f->ax[j], len[j]))) return rc;
    int64_t need = f->ax[j].n + f->ax[j].m;
    if (need > biggest) biggest = need;
  }
  rc = sim_temp(fc, sizeof(sim_c128) * (size_t)(total ? total : 1), &f->work);
  if (!rc) rc = sim_temp(fc, sizeof(sim_c128) * (size_t)biggest, &f->line);
  st->data = f;
  st->run = sim_run_fft;
  return rc;
}
