/*
 * print.c - how the xrt command-line tool prints values: `xrt run`'s
 * results as numpy-style arrays, and values in the StableHLO interpreter's
 * output format, which `xrt check` matches against CHECK lines.  MIT
 * licensed; see LICENSE.
 */
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * Printing values
 * ==================================================================== */

enum { PRINT_LIMIT = 1000, PRINT_EDGE = 3, PRINT_LINE = 75 };

/* Makes "1" read as a float ("1.0") and spells non-finite values plainly. */
static void float_finish(char *buf, size_t cap, double v) {
  if (v != v) {
    snprintf(buf, cap, "nan");
  } else if (v - v != 0) {
    snprintf(buf, cap, v < 0 ? "-inf" : "inf");
  } else if (!strpbrk(buf, ".e")) {
    size_t n = strlen(buf);
    if (n + 2 < cap) memcpy(buf + n, ".0", 3);
  }
}

/* The shortest %g spelling that reads back as the same value of the type,
 * so 0.1f prints as 0.1 rather than 0.100000001. */
static void format_float(xrt_dtype t, const unsigned char *p, char *buf, size_t cap) {
  double v;
  int maxp;
  uint16_t h = 0;
  float f = 0;
  switch (t) {
  case XRT_F16: memcpy(&h, p, 2); v = xrt_f16_to_f32(h); maxp = 5; break;
  case XRT_BF16: memcpy(&h, p, 2); v = xrt_bf16_to_f32(h); maxp = 4; break;
  case XRT_F32: memcpy(&f, p, 4); v = f; maxp = 9; break;
  default: memcpy(&v, p, 8); maxp = 17; break;
  }
  if (v == v && v - v == 0) {
    for (int prec = 1; prec <= maxp; prec++) {
      snprintf(buf, cap, "%.*g", prec, v);
      double back = strtod(buf, NULL);
      int same = t == XRT_F16    ? xrt_f64_to_f16(back) == h
                 : t == XRT_BF16 ? xrt_f64_to_bf16(back) == h
                 : t == XRT_F32  ? (float)back == f
                                 : back == v;
      if (same) break;
    }
    /* %g writes 10 as "1e+01": show the integer digits in full below 1e7. */
    double a = v < 0 ? -v : v;
    if (strchr(buf, 'e') && a >= 1 && a < 1e7)
      snprintf(buf, cap, "%.*g", (int)floor(log10(a)) + 1, v);
  }
  float_finish(buf, cap, v);
}

/* One element as text: integers in decimal, floats shortest, complex as
 * (re,im), pred as true/false, f8/f6/f4 as their bit patterns. */
static void format_elem(xrt_dtype t, const unsigned char *p, char *buf, size_t cap) {
  int8_t s8; int16_t s16; int32_t s32; int64_t s64;
  uint16_t u16; uint32_t u32; uint64_t u64;
  switch (t) {
  case XRT_PRED: snprintf(buf, cap, "%s", p[0] ? "true" : "false"); return;
  case XRT_S2: case XRT_S4: case XRT_S8:
    memcpy(&s8, p, 1); snprintf(buf, cap, "%d", s8); return;
  case XRT_U2: case XRT_U4: case XRT_U8: snprintf(buf, cap, "%u", p[0]); return;
  case XRT_S16: memcpy(&s16, p, 2); snprintf(buf, cap, "%d", s16); return;
  case XRT_U16: memcpy(&u16, p, 2); snprintf(buf, cap, "%u", u16); return;
  case XRT_S32: memcpy(&s32, p, 4); snprintf(buf, cap, "%" PRId32, s32); return;
  case XRT_U32: memcpy(&u32, p, 4); snprintf(buf, cap, "%" PRIu32, u32); return;
  case XRT_S64: memcpy(&s64, p, 8); snprintf(buf, cap, "%" PRId64, s64); return;
  case XRT_U64: memcpy(&u64, p, 8); snprintf(buf, cap, "%" PRIu64, u64); return;
  case XRT_F16: case XRT_BF16: case XRT_F32: case XRT_F64:
    format_float(t, p, buf, cap);
    return;
  case XRT_C64: case XRT_C128: {
    xrt_dtype part = t == XRT_C64 ? XRT_F32 : XRT_F64;
    size_t half = t == XRT_C64 ? 4 : 8;
    char re[40], im[40];
    format_float(part, p, re, sizeof re);
    format_float(part, p + half, im, sizeof im);
    snprintf(buf, cap, "(%s,%s)", re, im);
    return;
  }
  default: snprintf(buf, cap, "0x%02x", p[0]); return; /* f8/f6/f4 bits */
  }
}

typedef struct printer {
  const xrt_shape *shape;
  const unsigned char *data;
  size_t esize;
  int summarize;              /* show only PRINT_EDGE items at each end */
  int width;                  /* column width: the widest element shown */
  int col;                    /* current output column, for wrapping */
  int64_t stride[XRT_MAX_RANK];
} printer;

/* The index after i along a dimension of size n, skipping the middle when
 * summarizing; n when done.  *gap is set when the skip happens. */
static int64_t next_index(const printer *pr, int64_t n, int64_t i, int *gap) {
  *gap = 0;
  i++;
  if (pr->summarize && n > 2 * PRINT_EDGE && i == PRINT_EDGE) {
    *gap = 1;
    return n - PRINT_EDGE;
  }
  return i;
}

static void measure(printer *pr, int d, int64_t off) {
  int64_t n = pr->shape->dims[d];
  int gap;
  for (int64_t i = 0; i < n; i = next_index(pr, n, i, &gap)) {
    int64_t at = off + i * pr->stride[d];
    if (d + 1 < pr->shape->rank) {
      measure(pr, d + 1, at);
    } else {
      char buf[96];
      format_elem(pr->shape->dtype, pr->data + (size_t)at * pr->esize, buf, sizeof buf);
      int w = (int)strlen(buf);
      if (w > pr->width) pr->width = w;
    }
  }
}

static void emit(printer *pr, FILE *out, const char *s) {
  fputs(s, out);
  pr->col += (int)strlen(s);
}

static void newline(printer *pr, FILE *out, int lines, int indent) {
  for (int i = 0; i < lines; i++) fputc('\n', out);
  fprintf(out, "%*s", indent, "");
  pr->col = indent;
}

/* Prints the innermost dimension, wrapping lines numpy-style. */
static void print_row(printer *pr, FILE *out, int d, int64_t off) {
  int64_t n = pr->shape->dims[d];
  int gap = 0;
  for (int64_t i = 0; i < n; i = next_index(pr, n, i, &gap)) {
    char buf[96], cell[128];
    format_elem(pr->shape->dtype, pr->data + (size_t)(off + i * pr->stride[d]) * pr->esize,
                buf, sizeof buf);
    snprintf(cell, sizeof cell, "%*s", pr->width, buf);
    if (i > 0) {
      emit(pr, out, ",");
      if (gap) {
        emit(pr, out, " ...,");
      }
      if (pr->col + 1 + (int)strlen(cell) + 1 > PRINT_LINE) newline(pr, out, 1, d + 1);
      else emit(pr, out, " ");
    }
    emit(pr, out, cell);
  }
}

static void print_dim(printer *pr, FILE *out, int d, int64_t off) {
  emit(pr, out, "[");
  if (d + 1 == pr->shape->rank) {
    print_row(pr, out, d, off);
  } else {
    int64_t n = pr->shape->dims[d];
    int gap = 0;
    int blank = pr->shape->rank - d - 1; /* numpy: more newlines between bigger blocks */
    for (int64_t i = 0; i < n; i = next_index(pr, n, i, &gap)) {
      if (i > 0) {
        emit(pr, out, ",");
        newline(pr, out, blank, d + 1);
        if (gap) {
          emit(pr, out, "...,");
          newline(pr, out, blank, d + 1);
        }
      }
      print_dim(pr, out, d + 1, off + i * pr->stride[d]);
    }
  }
  emit(pr, out, "]");
}

/* Prints a host copy of an array: nested brackets, summarized when large. */
static void print_array(FILE *out, const xrt_shape *shape, const void *data) {
  printer pr;
  memset(&pr, 0, sizeof pr);
  pr.shape = shape;
  pr.data = data;
  pr.esize = xrt_dtype_size(shape->dtype);
  pr.summarize = xrt_shape_numel(shape) > PRINT_LIMIT;
  if (shape->rank == 0) {
    char buf[96];
    format_elem(shape->dtype, data, buf, sizeof buf);
    fprintf(out, "%s\n", buf);
    return;
  }
  int64_t stride = 1;
  for (int d = shape->rank - 1; d >= 0; d--) {
    pr.stride[d] = stride;
    stride *= shape->dims[d];
  }
  if (xrt_shape_numel(shape) > 0) measure(&pr, 0, 0);
  print_dim(&pr, out, 0, 0);
  fputc('\n', out);
}

/* Prints "result[k]: tensor<...>" and the values of one output. */
xrt_status cli_print_result(int k, xrt_buffer *buf) {
  xrt_shape shape;
  xrt_status s = xrt_buffer_shape(buf, &shape);
  if (s) return s;
  char type[256];
  xrt_shape_format(&shape, type, sizeof type);
  size_t bytes = xrt_buffer_bytes(buf);
  void *host = malloc(bytes ? bytes : 1);
  if (!host) {
    fprintf(stderr, "xrt: out of memory reading result %d\n", k);
    return XRT_RESOURCE_EXHAUSTED;
  }
  s = bytes ? xrt_buffer_to_host(buf, host, bytes) : XRT_OK;
  if (!s) {
    printf("result[%d]: %s\n", k, type);
    print_array(stdout, &shape, host);
  }
  free(host);
  return s;
}

/* ======================================================================
 * The StableHLO interpreter's output format
 *
 * `stablehlo-translate --interpret` prints values as "tensor<2xi32> {\n
 * [3, 3]\n}" (rank 0: "tensor<i32> {3}"), with elements as MLIR prints
 * attributes; its tests match that text with FileCheck.
 * ==================================================================== */

/* The text buffers outbuf and sbuf are in cli.h. */

void ob_add(outbuf *o, const char *s, size_t n) {
  fwrite(s, 1, n, stdout);
  if (!o->keep) return;
  if (o->n + n + 1 > o->cap) {
    size_t cap = o->cap ? o->cap : 1024;
    while (cap < o->n + n + 1) cap *= 2;
    char *ns = realloc(o->s, cap);
    if (!ns) return; /* keeps what fits; FileCheck will then report a miss */
    o->s = ns;
    o->cap = cap;
  }
  memcpy(o->s + o->n, s, n);
  o->n += n;
  o->s[o->n] = 0;
}

void sb_add(sbuf *b, const char *s) {
  size_t n = strlen(s);
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns) {
      b->oom = 1;
      return;
    }
    b->s = ns;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n + 1);
  b->n += n;
}

/* A float's bits, decoded, and whether text reads back as the same bits. */
static double mlir_float_value(xrt_dtype t, const unsigned char *p, uint64_t *bits) {
  uint16_t h;
  uint32_t u;
  double d;
  switch (t) {
  case XRT_F16: memcpy(&h, p, 2); *bits = h; return xrt_f16_to_f32(h);
  case XRT_BF16: memcpy(&h, p, 2); *bits = h; return xrt_bf16_to_f32(h);
  case XRT_F32: memcpy(&u, p, 4); *bits = u; return (double)xrt__bits_to_f32(u);
  case XRT_F64: memcpy(&d, p, 8); memcpy(bits, &d, 8); return d;
  default: *bits = p[0]; return xrt_minifloat_to_f64(t, p[0]);
  }
}

static int mlir_float_reads_back(xrt_dtype t, const char *text, uint64_t bits) {
  double d = strtod(text, NULL);
  switch (t) {
  case XRT_F16: return xrt_f64_to_f16(d) == bits;
  case XRT_BF16: return xrt_f64_to_bf16(d) == bits;
  case XRT_F32: return xrt__f32_to_bits((float)d) == bits;
  case XRT_F64: { uint64_t b; memcpy(&b, &d, 8); return b == bits; }
  default: return xrt_minifloat_from_f64(t, d) == (int32_t)bits;
  }
}

/* Significant digits of APFloat's natural precision: 2 + p * 59 / 196. */
static int mlir_float_digits(xrt_dtype t) {
  int p = t == XRT_F16 ? 11 : t == XRT_BF16 ? 8 : t == XRT_F32 ? 24 : t == XRT_F64 ? 53 : 4;
  xrt_minifloat_format mf;
  if (xrt_minifloat_format_of(t, &mf)) p = mf.mbits + 1;
  return 2 + p * 59 / 196;
}

/* APFloat::toString(str) (natural precision, padding 3, zeros truncated):
 * "0.333333343", "1.0E+10". */
static void mlir_float_natural(double v, int prec, char *out, size_t cap) {
  char e[64], digits[40];
  snprintf(e, sizeof e, "%.*e", prec - 1, v);
  const char *q = e;
  int neg = *q == '-', nd = 0;
  if (neg) q++;
  for (; *q && *q != 'e'; q++)
    if (*q >= '0' && *q <= '9' && nd < (int)sizeof digits - 1) digits[nd++] = *q;
  int e10 = *q == 'e' ? atoi(q + 1) : 0;
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = 0;
  int exp = e10 - (nd - 1); /* power of the last digit */
  int sci;
  if (exp >= 0) sci = exp > 3 || nd + exp > prec;
  else sci = e10 < 0 && -e10 > 3;
  size_t k = 0;
  char buf[96];
  if (neg) buf[k++] = '-';
  if (sci) {
    buf[k++] = digits[0];
    buf[k++] = '.';
    if (nd == 1) buf[k++] = '0';
    for (int i = 1; i < nd; i++) buf[k++] = digits[i];
    snprintf(buf + k, sizeof buf - k, "E%c%d", e10 < 0 ? '-' : '+', e10 < 0 ? -e10 : e10);
  } else if (exp >= 0) {
    for (int i = 0; i < nd; i++) buf[k++] = digits[i];
    for (int i = 0; i < exp; i++) buf[k++] = '0';
    buf[k] = 0;
  } else if (e10 >= 0) {
    for (int i = 0; i < nd; i++) {
      if (i == e10 + 1) buf[k++] = '.';
      buf[k++] = digits[i];
    }
    buf[k] = 0;
  } else {
    buf[k++] = '0';
    buf[k++] = '.';
    for (int i = 0; i < -e10 - 1; i++) buf[k++] = '0';
    for (int i = 0; i < nd; i++) buf[k++] = digits[i];
    buf[k] = 0;
  }
  snprintf(out, cap, "%s", buf);
}

/* A float as MLIR prints it: "%.6e" when that reads back exactly, else
 * the natural-precision form, else (non-finite) its bits in hex. */
static void mlir_float(xrt_dtype t, const unsigned char *p, char *out, size_t cap) {
  uint64_t bits;
  double v = mlir_float_value(t, p, &bits);
  if (v == v && v - v == 0) {
    snprintf(out, cap, "%.6e", v);
    if (mlir_float_reads_back(t, out, bits)) return;
    mlir_float_natural(v, mlir_float_digits(t), out, cap);
    if (strchr(out, '.')) return;
  }
  snprintf(out, cap, "0x%" PRIX64, bits);
}

/* One element as the interpreter prints it. */
static void mlir_elem(xrt_dtype t, const unsigned char *p, char *out, size_t cap) {
  if (t == XRT_C64 || t == XRT_C128) {
    xrt_dtype part = t == XRT_C64 ? XRT_F32 : XRT_F64;
    char re[64], im[64];
    mlir_float(part, p, re, sizeof re);
    mlir_float(part, p + xrt_dtype_size(part), im, sizeof im);
    snprintf(out, cap, "[%s, %s]", re, im);
  } else if (xrt_dtype_is_float(t)) {
    mlir_float(t, p, out, cap);
  } else {
    format_elem(t, p, out, cap); /* integers in decimal, pred true/false */
  }
}

/* The body of Tensor::print, one dimension at a time: nested "[...]" on
 * indented lines, elements of the last dimension on one line. */
static void interp_dims(sbuf *b, const xrt_shape *s, const unsigned char *data,
                        int d, int64_t off, int indent, int last) {
  char buf[160];
  if (d == s->rank) {
    mlir_elem(s->dtype, data + (size_t)off * xrt_dtype_size(s->dtype), buf, sizeof buf);
    sb_add(b, buf);
    if (!last) sb_add(b, ", ");
    return;
  }
  sb_add(b, "\n");
  for (int i = 0; i < indent; i++) sb_add(b, "  ");
  sb_add(b, "[");
  int64_t inner = 1;
  for (int k = d + 1; k < s->rank; k++) inner *= s->dims[k];
  for (int64_t i = 0; i < s->dims[d]; i++)
    interp_dims(b, s, data, d + 1, off + i * inner, indent + 1, i == s->dims[d] - 1);
  sb_add(b, "]");
  if (!last) {
    sb_add(b, ",");
  } else {
    sb_add(b, "\n");
    for (int i = 0; i < indent - 1; i++) sb_add(b, "  ");
  }
}

/* "tensor<2xi32> {\n  [3, 3]\n}" (no final newline). */
static void interp_format(sbuf *b, const xrt_shape *s, const void *data) {
  char type[256];
  xrt_shape_format(s, type, sizeof type);
  sb_add(b, type);
  sb_add(b, " {");
  interp_dims(b, s, data, 0, 0, 1, 1);
  sb_add(b, "}");
}

/* Prints one value in the interpreter's format plus a newline. */
void interp_emit(interp_state *st, const char *prefix, const xrt_shape *s,
                 const void *data) {
  sbuf b = {NULL, 0, 0, 0};
  sb_add(&b, prefix);
  interp_format(&b, s, data);
  sb_add(&b, "\n");
  pthread_mutex_lock(&st->mu);
  if (st->holding) sb_add(&st->hold, b.oom ? "<out of memory>\n" : b.s);
  else if (b.oom) ob_add(&st->out, "<out of memory>\n", 16);
  else ob_add(&st->out, b.s, b.n);
  pthread_mutex_unlock(&st->mu);
  free(b.s);
}
