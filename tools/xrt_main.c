/*
 * xrt_main.c - the xrt command-line tool.  MIT licensed; see LICENSE.
 *
 *   xrt run FILE.mlir [--devices N] [--input A.npy]... [--output-dir DIR]
 *                     [--entry NAME]
 *   xrt check FILE.mlir [--split-input-file] [--verbose]
 *   (either with --mpi: one process of an MPI job; see "--mpi" below)
 *   xrt version | xrt --help
 *
 * It uses only the public API in xrt.h, so it doubles as an example of it.
 * Exit codes: 0 success, 1 a check.* op failed, 2 anything else (bad usage,
 * a file that does not parse or compile, a runtime error).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdir */
#endif

#include "xrt.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#ifdef XRT_HAVE_MPI
#include <mpi.h>
#include <unistd.h> /* dup, dup2: the output of processes but 0 */
#endif

/* Platform: the tool's one OS difference, creating a directory. */
#if defined(_WIN32)
#include <direct.h>
static int os_mkdir(const char *dir) { return _mkdir(dir); }
#else
static int os_mkdir(const char *dir) { return mkdir(dir, 0777); }
#endif

enum { EXIT_PASS = 0, EXIT_CHECK = 1, EXIT_ERROR = 2 };

static const char usage_text[] =
    "usage: xrt <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE.mlir      compile the entry function, run it on a simulated\n"
    "                     client and print its results\n"
    "      --devices N        run it replicated on N devices (num_replicas = N\n"
    "                         over the program's partitions; default 1) and print\n"
    "                         each device's results after a 'device D:' line\n"
    "      --input A.npy      an argument of the entry function; repeat once\n"
    "                         per argument, in order\n"
    "      --output-dir DIR   also write result K to DIR/result_K.npy\n"
    "                         (DIR/device_D_result_K.npy with several devices)\n"
    "      --entry NAME       function to run (default: main, or the only one)\n"
    "      --cache-dir DIR    keep compiled executables in DIR and reuse them\n"
    "                         (default: $XRT_CACHE_DIR when set)\n"
    "  check FILE.mlir    run every check.* op of the file's test functions;\n"
    "                     with a '// RUN: ... --interpret ... | FileCheck %s'\n"
    "                     line, also print the results as the StableHLO\n"
    "                     interpreter does (with that line's --args=\"[...]\"\n"
    "                     as arguments) and match the '// CHECK:' lines\n"
    "      --split-input-file split at lines '// -----' and run each chunk\n"
    "      --verbose          also list the chunks that pass\n"
    "      --cache-dir DIR    as for run\n"
    "  run and check also take\n"
    "      --mpi              be one process of an MPI job (mpirun; xrt built\n"
    "                         with XRT_MPI=1): every process runs the whole\n"
    "                         program, interpreter.run_parallel spreads its\n"
    "                         participants over the processes; process 0\n"
    "                         prints, and all exit with the worst status\n"
    "  version            print the version\n"
    "  help, --help       print this message\n"
    "\n"
    "exit status: 0 success, 1 a check failed, 2 any other error\n";

static int usage_error(const char *fmt, const char *arg) {
  fputs("xrt: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n\n", stderr);
  fputs(usage_text, stderr);
  return EXIT_ERROR;
}

/* Prints the last xrt error with its status name; returns the exit code it
 * maps to. */
static int report(xrt_status s, const char *what) {
  fprintf(stderr, "xrt: %s%s%s [%s]\n", what ? what : "", what ? ": " : "",
          xrt_last_error(), xrt_strerror(s));
  return s == XRT_CHECK_FAILED ? EXIT_CHECK : EXIT_ERROR;
}

/* ---- --mpi: one process of an MPI job ----
 *
 * Every process runs the whole program on a client of its own; only
 * interpreter.run_parallel spans the processes (see there).  Process 0
 * prints; the others keep their output and show it only when their own
 * status differs from process 0's, and every process exits with the worst
 * status of all, so that a failure anywhere fails the job everywhere. */

static struct {
  int on, me, nproc;
#ifdef XRT_HAVE_MPI
  FILE *kept;          /* processes but 0: their stdout and stderr */
  int out_fd, err_fd;  /* the real ones, while kept */
#endif
} mpi_job;

/* Removes "--mpi" from argv (after the command); whether it was there. */
static int take_mpi_flag(int *argc, char **argv) {
  int found = 0, k = 2;
  for (int i = 2; i < *argc; i++) {
    if (strcmp(argv[i], "--mpi") == 0) found = 1;
    else argv[k++] = argv[i];
  }
  *argc = k;
  return found;
}

#ifdef XRT_HAVE_MPI
/* Sends this process's stdout and stderr to a temporary file. */
static void mpi_keep_output(void) {
  fflush(stdout);
  fflush(stderr);
  mpi_job.kept = tmpfile();
  if (!mpi_job.kept) return; /* then it prints, which is only noisy */
  mpi_job.out_fd = dup(1);
  mpi_job.err_fd = dup(2);
  dup2(fileno(mpi_job.kept), 1);
  dup2(fileno(mpi_job.kept), 2);
}

/* Restores stdout and stderr; shows what was kept when asked to. */
static void mpi_release_output(int show) {
  if (!mpi_job.kept) return;
  fflush(stdout);
  fflush(stderr);
  dup2(mpi_job.out_fd, 1);
  dup2(mpi_job.err_fd, 2);
  close(mpi_job.out_fd);
  close(mpi_job.err_fd);
  if (show) {
    fprintf(stderr, "xrt: process %d of %d:\n", mpi_job.me, mpi_job.nproc);
    rewind(mpi_job.kept);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, mpi_job.kept)) > 0)
      fwrite(buf, 1, n, stderr);
    fflush(stderr);
  }
  fclose(mpi_job.kept);
  mpi_job.kept = NULL;
}
#endif

/* Joins the MPI job; 0 or an exit code after saying why not. */
static int mpi_begin(void) {
#ifdef XRT_HAVE_MPI
  xrt_mpi_options o;
  xrt_mpi_options_init(&o);
  xrt_status s = xrt_mpi_init(&o);
  if (s) return report(s, "--mpi");
  xrt_topology t;
  if ((s = xrt_mpi_topology(&t))) {
    int rc = report(s, "--mpi");
    xrt_mpi_finalize();
    return rc;
  }
  mpi_job.on = 1;
  mpi_job.me = t.process_index;
  mpi_job.nproc = t.process_count;
  if (mpi_job.me) mpi_keep_output();
  return 0;
#else
  return usage_error("%s", "--mpi: this xrt was built without MPI (build it with "
                     "make XRT_MPI=1)");
#endif
}

/* Agrees on the exit status (the worst of all processes) and leaves the
 * job.  Collective. */
static int mpi_end(int rc) {
#ifdef XRT_HAVE_MPI
  int worst = rc;
  int *all = calloc((size_t)mpi_job.nproc, sizeof *all);
  if (all && MPI_Allgather(&rc, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS) {
    for (int p = 0; p < mpi_job.nproc; p++) worst = all[p] > worst ? all[p] : worst;
  } else {
    worst = EXIT_ERROR; /* cannot tell how the others did */
  }
  if (mpi_job.me) mpi_release_output(!all || rc != all[0]);
  for (int p = 1; all && mpi_job.me == 0 && p < mpi_job.nproc; p++)
    if (all[p] != rc)
      fprintf(stderr, "xrt: process %d of %d exits with status %d\n", p, mpi_job.nproc, all[p]);
  free(all);
  xrt_mpi_finalize();
  mpi_job.on = 0;
  return worst;
#else
  return rc;
#endif
}

/* Reads a whole file into a NUL-terminated heap string. */
static int read_file(const char *path, char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "xrt: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len - 1, f);
    if (len < cap - 1) break;
    char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  int err = !buf || ferror(f);
  int e = errno;
  fclose(f);
  if (err) {
    fprintf(stderr, "xrt: %s: %s\n", path, buf ? strerror(e) : "out of memory");
    free(buf);
    return -1;
  }
  buf[len] = 0;
  *out = buf;
  *out_len = len;
  return 0;
}

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
static xrt_status print_result(int k, xrt_buffer *buf) {
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
 * The StableHLO interpreter's output format and test ops
 *
 * `stablehlo-translate --interpret` prints values as "tensor<2xi32> {\n
 * [3, 3]\n}" (rank 0: "tensor<i32> {3}"), with elements as MLIR prints
 * attributes; its tests match that text with FileCheck.  The interpreter's
 * own ops reach the CLI as custom_calls: interpreter.print prints its
 * operand, interpreter.probe records a copy of its operand per probe_id and
 * iteration, and check.expect_serialized_eq compares a value with a record.
 * ==================================================================== */

/* Text printed during one chunk: echoed to stdout and kept for FileCheck. */
typedef struct outbuf {
  char *s;
  size_t n, cap;
  int keep; /* 0: only echo */
} outbuf;

static void ob_add(outbuf *o, const char *s, size_t n) {
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

/* A growable string for building one printed value. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
  int oom;
} sbuf;

static void sb_add(sbuf *b, const char *s) {
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

/* What interpreter.probe recorded: one per probe_id and iteration. */
typedef struct probe_rec {
  char *id;
  xrt_shape shape;
  void *data;
  size_t bytes;
} probe_rec;

/* A list of values on a host queue: what one infeed function returned,
 * or what one send passed.  Each tensor's data is its own allocation. */
typedef struct hmsg {
  struct hmsg *next;
  int n;
  xrt_host_tensor t[];
} hmsg;

typedef struct hqueue {
  hmsg *head, *tail;
} hqueue;

/* The host side of the send/recv ops with is_host_transfer, by handle. */
typedef struct hchan {
  struct hchan *next;
  int64_t handle;
  hqueue q;
} hchan;

/* --mpi: where a channel's host transfers of the running
 * interpreter.run_parallel meet (the processes of its senders and of its
 * receivers), and how many went each way across processes.  A host
 * function does not know which participant calls it, so a channel whose
 * senders (or receivers) sit on several processes cannot be routed. */
typedef struct rp_route {
  int64_t handle;
  int send_proc, recv_proc;
  int spread; /* senders or receivers on several processes */
  uint64_t nsent, nrecv;
} rp_route;

enum { RP_MAX_ROUTES = 64 };

typedef struct interp_state {
  pthread_mutex_t mu;
  outbuf out;
  probe_rec *recs;
  size_t num_recs, cap_recs;
  const xrt_ir_module *module; /* of the program running, for SSA names */
  const xrt_ir_module *module2; /* a run_parallel wrapper program's */
  /* interpreter.run_parallel: the running chunk (program, text, where it
   * starts in its file), the client whose devices run its launches
   * (created on first use, grown when a launch needs more devices) and
   * the host queues of infeed and host transfers (guarded by qmu). */
  const xrt_program *prog;
  const char *text, *file;
  size_t len;
  int line_offset;
  xrt_client *par;
  int par_devices, par_busy;
  pthread_mutex_t qmu;
  pthread_cond_t qcv;
  hqueue infeed;
  hchan *chans;
  /* --mpi: text printed while a launch runs waits in hold (under mu) until
   * every process's is in; the running launch's routes (under qmu) and
   * its number, alike in every process. */
  int holding;
  sbuf hold;
  rp_route routes[RP_MAX_ROUTES];
  int nroutes;
  uint64_t launch_no;
} interp_state;

static void hmsg_free(hmsg *m) {
  for (int i = 0; m && i < m->n; i++) free(m->t[i].data);
  free(m);
}

static void hq_push(hqueue *q, hmsg *m) {
  m->next = NULL;
  if (q->tail) q->tail->next = m;
  else q->head = m;
  q->tail = m;
}

static hmsg *hq_pop(hqueue *q) {
  hmsg *m = q->head;
  if (m && !(q->head = m->next)) q->tail = NULL;
  return m;
}

static void hq_clear(hqueue *q) {
  for (hmsg *m; (m = hq_pop(q)) != NULL;) hmsg_free(m);
}

static void interp_init(interp_state *st) {
  memset(st, 0, sizeof *st);
  pthread_mutex_init(&st->mu, NULL);
  pthread_mutex_init(&st->qmu, NULL);
  pthread_cond_init(&st->qcv, NULL);
}

static void interp_reset(interp_state *st) {
  for (size_t i = 0; i < st->num_recs; i++) {
    free(st->recs[i].id);
    free(st->recs[i].data);
  }
  st->num_recs = 0;
  st->out.n = 0;
  if (st->out.s) st->out.s[0] = 0;
  st->module = st->module2 = NULL;
  st->prog = NULL;
  st->text = NULL;
  hq_clear(&st->infeed);
  while (st->chans) {
    hchan *c = st->chans;
    st->chans = c->next;
    hq_clear(&c->q);
    free(c);
  }
}

static void interp_free(interp_state *st) {
  interp_reset(st);
  xrt_client_release(st->par);
  free(st->hold.s);
  free(st->recs);
  free(st->out.s);
  pthread_cond_destroy(&st->qcv);
  pthread_mutex_destroy(&st->qmu);
  pthread_mutex_destroy(&st->mu);
}

/* Prints one value in the interpreter's format plus a newline. */
static void interp_emit(interp_state *st, const char *prefix, const xrt_shape *s,
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

/* The name MLIR prints for value v of a function ("%3 = ", "%0:2 = "):
 * each op's results are one numbered group, in order, a nested region
 * continuing from its op's count.  The interpreter prints a block argument's description up to a
 * '=' it does not have, which leaves just "<". */
static int ssa_name(const xrt_ir_region *r, int32_t v, int64_t c, char *out, size_t cap) {
  for (int32_t i = 0; i < r->num_args; i++)
    if (r->args[i] == v) {
      snprintf(out, cap, "<");
      return 1;
    }
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    for (int32_t k = 0; k < op->num_results; k++)
      if (op->results[k] == v) {
        if (op->num_results == 1) snprintf(out, cap, "%%%" PRId64 " = ", c);
        else snprintf(out, cap, "%%%" PRId64 ":%d = ", c, (int)op->num_results);
        return 1;
      }
    c += op->num_results > 0;
    for (int32_t k = 0; k < op->num_regions; k++)
      if (ssa_name(&op->regions[k], v, c, out, cap)) return 1;
  }
  return 0;
}

static int region_has_op(const xrt_ir_region *r, const xrt_ir_op *op) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    if (&r->ops[i] == op) return 1;
    for (int32_t k = 0; k < r->ops[i].num_regions; k++)
      if (region_has_op(&r->ops[i].regions[k], op)) return 1;
  }
  return 0;
}

static void print_prefix(const interp_state *st, const xrt_ir_op *op, char *out, size_t cap) {
  out[0] = 0;
  for (int k = 0; k < 2; k++) {
    const xrt_ir_module *m = k ? st->module2 : st->module;
    for (int32_t i = 0; m && op && op->num_operands > 0 && i < m->num_funcs; i++)
      if (region_has_op(&m->funcs[i].body, op)) {
        ssa_name(&m->funcs[i].body, op->operands[0], 0, out, cap);
        return;
      }
  }
}

static int one_input(xrt_host_call *call) {
  return call->num_inputs == 1 && call->inputs[0].bytes == xrt_shape_bytes(&call->inputs[0].shape);
}

static xrt_status host_print(void *user, xrt_host_call *call) {
  interp_state *st = user;
  if (!one_input(call))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s takes one tensor", call->target);
  char prefix[64];
  print_prefix(st, call->op, prefix, sizeof prefix);
  interp_emit(st, prefix, &call->inputs[0].shape, call->inputs[0].data);
  return XRT_OK;
}

static const xrt_ir_attr *string_attr(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = op ? xrt_ir_op_attr(op, name) : NULL;
  return a && a->kind == XRT_ATTR_STRING ? a : NULL;
}

/* Room for one more probe record, if memory allows (callers hold st->mu
 * and check num_recs < cap_recs). */
static void probe_room(interp_state *st) {
  if (st->num_recs < st->cap_recs) return;
  size_t cap = st->cap_recs ? 2 * st->cap_recs : 16;
  probe_rec *nr = realloc(st->recs, cap * sizeof *nr);
  if (nr) {
    st->recs = nr;
    st->cap_recs = cap;
  }
}

static int same_id(const probe_rec *r, const xrt_ir_attr *id) {
  return strlen(r->id) == (size_t)id->n && memcmp(r->id, id->s, (size_t)id->n) == 0;
}

static xrt_status host_probe(void *user, xrt_host_call *call) {
  interp_state *st = user;
  const xrt_ir_attr *id = string_attr(call->op, "probe_id");
  if (!one_input(call) || call->num_outputs != 1 || !id ||
      call->outputs[0].bytes != call->inputs[0].bytes)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT,
                              "%s takes one tensor, returns it and needs a probe_id",
                              call->target);
  const xrt_host_tensor *in = &call->inputs[0];
  if (in->bytes) memcpy(call->outputs[0].data, in->data, in->bytes);
  probe_rec r = {malloc((size_t)id->n + 1), in->shape, malloc(in->bytes ? in->bytes : 1),
                 in->bytes};
  xrt_status s = XRT_OK;
  pthread_mutex_lock(&st->mu);
  probe_room(st);
  if (!r.id || !r.data || st->num_recs == st->cap_recs) {
    s = XRT_RESOURCE_EXHAUSTED;
  } else {
    memcpy(r.id, id->s, (size_t)id->n);
    r.id[id->n] = 0;
    if (in->bytes) memcpy(r.data, in->data, in->bytes);
    st->recs[st->num_recs++] = r;
  }
  pthread_mutex_unlock(&st->mu);
  if (s) {
    free(r.id);
    free(r.data);
    return xrt_host_call_fail(call, s, "out of memory recording probe");
  }
  return XRT_OK;
}

static xrt_status host_serialized_eq(void *user, xrt_host_call *call) {
  interp_state *st = user;
  const xrt_ir_attr *id = string_attr(call->op, "probe_id");
  const xrt_ir_attr *it = call->op ? xrt_ir_op_attr(call->op, "iter") : NULL;
  int64_t iter = it && it->kind == XRT_ATTR_INT ? it->i : 0;
  if (!one_input(call) || !id)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT,
                              "%s takes one tensor and needs a probe_id", call->target);
  const xrt_ir_loc *l = &call->op->loc;
  const xrt_host_tensor *in = &call->inputs[0];
  xrt_status s = XRT_OK;
  char want[256], got[256];
  pthread_mutex_lock(&st->mu);
  const probe_rec *r = NULL;
  int64_t seen = 0;
  for (size_t i = 0; i < st->num_recs && !r; i++)
    if (same_id(&st->recs[i], id) && seen++ == iter) r = &st->recs[i];
  if (!r) {
    s = xrt_host_call_fail(call, XRT_CHECK_FAILED,
                           "%s:%d:%d: %s: probe '%.*s' has no iteration %" PRId64
                           " (it ran %" PRId64 " time%s)",
                           l->file, (int)l->line, (int)l->col, call->target, (int)id->n,
                           id->s, iter, seen, seen == 1 ? "" : "s");
  } else {
    xrt_shape_format(&r->shape, want, sizeof want);
    xrt_shape_format(&in->shape, got, sizeof got);
    int same_type = strcmp(want, got) == 0 && r->bytes == in->bytes;
    if (!same_type || (in->bytes && memcmp(r->data, in->data, in->bytes) != 0))
      s = xrt_host_call_fail(call, XRT_CHECK_FAILED,
                             "%s:%d:%d: %s: %s differs from probe '%.*s' iteration %" PRId64
                             "%s%s%s",
                             l->file, (int)l->line, (int)l->col, call->target, got,
                             (int)id->n, id->s, iter, same_type ? "" : " (which is ",
                             same_type ? "" : want, same_type ? "" : ")");
  }
  pthread_mutex_unlock(&st->mu);
  return s;
}

static const char *skip_blanks(const char *p, const char *end);

/* ---- the host's infeed, outfeed, send and recv ---- */

/* A recv nobody sends to fails after this long rather than hang:
 * XRT_RECV_TIMEOUT_MS, default 10 s. */
static int64_t recv_timeout_ms(void) {
  const char *e = getenv("XRT_RECV_TIMEOUT_MS");
  char *end;
  long long v = e ? strtoll(e, &end, 10) : 0;
  return e && *e && !*end && v > 0 && v < 86400000 ? (int64_t)v : 10000;
}

/* A copy of n host tensors as one queue entry; NULL when out of memory. */
static hmsg *hmsg_new(const xrt_host_tensor *t, int n) {
  hmsg *m = calloc(1, sizeof *m + (size_t)n * sizeof *t);
  if (!m) return NULL;
  for (int i = 0; i < n; i++) {
    m->t[i] = t[i];
    m->t[i].data = malloc(t[i].bytes ? t[i].bytes : 1);
    m->n = i + 1;
    if (!m->t[i].data) {
      hmsg_free(m);
      return NULL;
    }
    if (t[i].bytes) memcpy(m->t[i].data, t[i].data, t[i].bytes);
  }
  return m;
}

/* Fills the call's outputs from a queue entry of the same types. */
static xrt_status hmsg_deliver(const hmsg *m, xrt_host_call *call, const char *what) {
  if (m->n != call->num_outputs)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: %s has %d value%s but the op "
                              "takes %d", call->target, what, m->n, m->n == 1 ? "" : "s",
                              call->num_outputs);
  for (int i = 0; i < m->n; i++) {
    xrt_host_tensor *o = &call->outputs[i];
    char have[256], want[256];
    xrt_shape_format(&m->t[i].shape, have, sizeof have);
    xrt_shape_format(&o->shape, want, sizeof want);
    if (strcmp(have, want) != 0 || m->t[i].bytes != o->bytes)
      return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: value %d of %s is %s but the "
                                "op takes %s", call->target, i, what, have, want);
    if (o->bytes) memcpy(o->data, m->t[i].data, o->bytes);
  }
  return XRT_OK;
}

/* infeed: the next entry of the queue run_parallel's infeed functions
 * filled. */
static xrt_status host_infeed(void *user, xrt_host_call *call) {
  interp_state *st = user;
  pthread_mutex_lock(&st->qmu);
  hmsg *m = hq_pop(&st->infeed);
  pthread_mutex_unlock(&st->qmu);
  if (!m)
    return xrt_host_call_fail(call, XRT_OUT_OF_RANGE, "%s: the infeed queue is empty (values "
                              "come from interpreter.run_parallel's infeed = [@f, ...])",
                              call->target);
  xrt_status s = hmsg_deliver(m, call, "the next infeed entry");
  hmsg_free(m);
  return s;
}

/* outfeed: the interpreter keeps the values for no one; neither do we. */
static xrt_status host_outfeed(void *user, xrt_host_call *call) {
  (void)user;
  (void)call;
  return XRT_OK;
}

static int channel_handle(const xrt_ir_op *op, int64_t *out) {
  const xrt_ir_attr *ch = op ? xrt_ir_op_attr(op, "channel_handle") : NULL;
  const xrt_ir_attr *h = xrt_ir_attr_field(ch, "handle");
  if (!h || h->kind != XRT_ATTR_INT) return -1;
  *out = h->i;
  return 0;
}

/* The channel of a handle, created on first use; call with qmu held. */
static hchan *find_channel(interp_state *st, int64_t handle) {
  for (hchan *c = st->chans; c; c = c->next)
    if (c->handle == handle) return c;
  hchan *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->handle = handle;
  c->next = st->chans;
  st->chans = c;
  return c;
}

/* --mpi: the process at the other end of a host transfer on handle when
 * that is not this one (sending: the receiver's, receiving: the
 * sender's), with the transfer's number on its route; -1: it stays here,
 * on the channel's queue; -2: the channel cannot be routed. */
static int route_peer(interp_state *st, int64_t handle, int sending, uint64_t *seq) {
  int peer = -1;
  if (!mpi_job.on) return -1;
  pthread_mutex_lock(&st->qmu);
  for (int i = 0; i < st->nroutes; i++) {
    rp_route *r = &st->routes[i];
    if (r->handle != handle) continue;
    int other = sending ? r->recv_proc : r->send_proc;
    if (r->spread) {
      peer = -2;
    } else if (other >= 0 && other != mpi_job.me) {
      peer = other;
      *seq = sending ? r->nsent++ : r->nrecv++;
    }
    break;
  }
  pthread_mutex_unlock(&st->qmu);
  return peer;
}

static xrt_status route_spread(xrt_host_call *call, int64_t handle) {
  return xrt_host_call_fail(call, XRT_UNIMPLEMENTED, "%s: channel %" PRId64 " has senders or "
                            "receivers on several processes (--mpi routes a host channel "
                            "between one process and one other)", call->target, handle);
}

/* The exchange tag of a host transfer, alike at both ends: the launch's
 * number, the channel, the transfer's number (48 bits, below
 * XRT_USER_TAG_LIMIT). */
static uint64_t route_tag(const interp_state *st, int64_t handle, uint64_t seq) {
  return (st->launch_no & 0xFFFFF) << 28 | ((uint64_t)handle & 0xFFF) << 16 | (seq & 0xFFFF);
}

/* Moves a host transfer's values to (send: its inputs) or from (recv:
 * its outputs) process peer, as one message. */
static xrt_status remote_transfer(interp_state *st, xrt_host_call *call, int64_t handle,
                                  int peer, uint64_t seq, int send) {
  const xrt_host_tensor *t = send ? call->inputs : call->outputs;
  int n = send ? call->num_inputs : call->num_outputs;
  size_t total = 0, off = 0;
  for (int i = 0; i < n; i++) total += t[i].bytes;
  char *buf = malloc(total ? total : 1);
  if (!buf) return xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "%s: out of memory",
                                      call->target);
  for (int i = 0; send && i < n; off += t[i].bytes, i++)
    if (t[i].bytes) memcpy(buf + off, t[i].data, t[i].bytes);
  xrt_transport_msg m = {peer, buf, total};
  uint64_t tag = route_tag(st, handle, seq);
  xrt_status s = send ? xrt_client_process_exchange(st->par, tag, &m, 1, NULL, 0)
                      : xrt_client_process_exchange(st->par, tag, NULL, 0, &m, 1);
  for (int i = 0; !s && !send && i < n; off += t[i].bytes, i++)
    if (t[i].bytes) memcpy(call->outputs[i].data, buf + off, t[i].bytes);
  free(buf);
  if (s)
    return xrt_host_call_fail(call, s, "%s: channel %" PRId64 " %s process %d: %s",
                              call->target, handle, send ? "to" : "from", peer,
                              xrt_last_error());
  return XRT_OK;
}

/* send with is_host_transfer: queues a copy on its channel (--mpi: sends
 * it to the receiver's process when that is another). */
static xrt_status host_send(void *user, xrt_host_call *call) {
  interp_state *st = user;
  int64_t handle;
  if (channel_handle(call->op, &handle))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s needs a channel_handle",
                              call->target);
  uint64_t seq = 0;
  int peer = route_peer(st, handle, 1, &seq);
  if (peer == -2) return route_spread(call, handle);
  if (peer >= 0) return remote_transfer(st, call, handle, peer, seq, 1);
  hmsg *m = hmsg_new(call->inputs, call->num_inputs);
  pthread_mutex_lock(&st->qmu);
  hchan *c = m ? find_channel(st, handle) : NULL;
  if (c) hq_push(&c->q, m);
  pthread_cond_broadcast(&st->qcv);
  pthread_mutex_unlock(&st->qmu);
  if (!c) {
    hmsg_free(m);
    return xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "%s: out of memory", call->target);
  }
  return XRT_OK;
}

/* recv with is_host_transfer: the oldest value sent on its channel,
 * waiting RECV_TIMEOUT_S seconds for one at most. */
static xrt_status host_recv(void *user, xrt_host_call *call) {
  interp_state *st = user;
  int64_t handle;
  if (channel_handle(call->op, &handle))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s needs a channel_handle",
                              call->target);
  uint64_t seq = 0;
  int peer = route_peer(st, handle, 0, &seq);
  if (peer == -2) return route_spread(call, handle);
  if (peer >= 0) return remote_transfer(st, call, handle, peer, seq, 0);
  int64_t ms = recv_timeout_ms();
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)(ms / 1000);
  until.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  hmsg *m = NULL;
  int timed_out = 0, oom = 0;
  pthread_mutex_lock(&st->qmu);
  for (;;) {
    hchan *c = find_channel(st, handle);
    if (!c) {
      oom = 1;
      break;
    }
    if ((m = hq_pop(&c->q)) != NULL || timed_out) break;
    timed_out = pthread_cond_timedwait(&st->qcv, &st->qmu, &until) ==
                ETIMEDOUT;
  }
  pthread_mutex_unlock(&st->qmu);
  if (!m)
    return oom ? xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "%s: out of memory",
                                    call->target)
               : xrt_host_call_fail(call, XRT_DEADLINE_EXCEEDED,
                                    "%s: nothing was sent on channel %" PRId64
                                    " within %" PRId64 " ms", call->target, handle, ms);
  xrt_status s = hmsg_deliver(m, call, "what was sent");
  hmsg_free(m);
  return s;
}

static xrt_status host_run_parallel(void *user, xrt_host_call *call);

static xrt_status interp_register(xrt_client *c, interp_state *st) {
  xrt_status s = xrt_client_register_host_function(c, "interpreter.print", host_print, st);
  if (!s) s = xrt_client_register_host_function(c, "interpreter.probe", host_probe, st);
  if (!s)
    s = xrt_client_register_host_function(c, "check.expect_serialized_eq",
                                          host_serialized_eq, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.infeed", host_infeed, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.outfeed", host_outfeed, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.send", host_send, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.recv", host_recv, st);
  if (!s)
    s = xrt_client_register_host_function(c, "interpreter.run_parallel", host_run_parallel,
                                          st);
  return s;
}

/* ---- interpreter.run_parallel ----
 *
 * Runs programs = [[@f00, @f01, ...], [@f10, ...], ...] (one list per
 * replica, one function per partition) as one launch of R x P
 * participants, as the StableHLO interpreter does: the operands go to the
 * participants in order of their functions' parameters, the results come
 * back in the same order.  The launch runs on a second client of R * P
 * devices: the client running @main is busy with this very call. */

enum { RP_MAX = 1024 }; /* participants of one launch */

typedef struct rp_part {
  const xrt_ir_func *f;
  const char *name;
  int wrapped;          /* tokens cross its boundary: run its wrapper */
  xrt_executable *exe;  /* owned by the first participant of that name */
  int owns_exe;
  xrt_buffer **args, **outs;
  int nargs, nouts;
  xrt_event *done;
  int proc, local;      /* its process; whether that is this one */
} rp_part;

typedef struct rp_launch {
  interp_state *st;
  xrt_host_call *call;
  int R, P, n;
  rp_part *parts;
  xrt_program *wprog; /* the chunk plus the wrappers, when needed */
  size_t recs_before; /* --mpi: probe records made before the launch */
} rp_launch;

static const xrt_ir_func *find_func(const xrt_ir_module *m, const char *name, size_t n) {
  for (int32_t i = 0; m && i < m->num_funcs; i++)
    if (strlen(m->funcs[i].name) == n && memcmp(m->funcs[i].name, name, n) == 0)
      return &m->funcs[i];
  return NULL;
}

static int is_token(const xrt_ir_type *t) { return t->kind == XRT_TYPE_TOKEN; }

static int same_shape(const xrt_shape *a, const xrt_shape *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

/* Does host tensor t carry a value of type ty (a token: no bytes)? */
static int host_matches(const xrt_host_tensor *t, const xrt_ir_type *ty) {
  if (is_token(ty)) return t->bytes == 0 && t->shape.dtype == XRT_DTYPE_INVALID;
  return ty->kind == XRT_TYPE_TENSOR && same_shape(&t->shape, &ty->shape) &&
         t->bytes == xrt_shape_bytes(&ty->shape);
}

/* Finds the functions and checks operands and results against them. */
static xrt_status rp_bind(rp_launch *L) {
  xrt_host_call *call = L->call;
  const xrt_ir_attr *progs = xrt_ir_op_attr(call->op, "programs");
  int in = 0, out = 0;
  for (int r = 0; r < L->R; r++)
    for (int p = 0; p < L->P; p++) {
      const xrt_ir_attr *sym = &progs->items[r].items[p];
      rp_part *pt = &L->parts[r * L->P + p];
      pt->f = find_func(L->st->module, sym->s, (size_t)sym->n);
      if (!pt->f)
        return xrt_host_call_fail(call, XRT_NOT_FOUND, "%s: the module has no function @%.*s",
                                  call->target, (int)sym->n, sym->s);
      pt->name = pt->f->name;
      const xrt_ir_func *f = pt->f;
      for (int32_t k = 0; k < f->body.num_args; k++, in++) {
        const xrt_ir_type *ty = &f->value_types[f->body.args[k]];
        pt->wrapped |= is_token(ty);
        pt->nargs += !is_token(ty);
        if (in < call->num_inputs && !host_matches(&call->inputs[in], ty))
          return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: operand %d does not "
                                    "match argument %d of @%s (replica %d, partition %d)",
                                    call->target, in, (int)k, f->name, r, p);
      }
      for (int32_t k = 0; k < f->num_results; k++, out++) {
        const xrt_ir_type *ty = &f->result_types[k];
        pt->wrapped |= is_token(ty);
        pt->nouts += !is_token(ty);
        if (out < call->num_outputs && !host_matches(&call->outputs[out], ty))
          return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: result %d does not "
                                    "match result %d of @%s (replica %d, partition %d)",
                                    call->target, out, (int)k, f->name, r, p);
      }
    }
  if (in != call->num_inputs || out != call->num_outputs)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s has %d operand(s) and %d "
                              "result(s) but its programs take %d and return %d", call->target,
                              call->num_inputs, call->num_outputs, in, out);
  return XRT_OK;
}

/* The MLIR spelling of a parameter or result type a wrapper can use. */
static int type_text(const xrt_ir_type *t, char *buf, size_t cap) {
  if (is_token(t)) {
    snprintf(buf, cap, "!stablehlo.token");
    return 0;
  }
  if (t->kind != XRT_TYPE_TENSOR || t->quant) return -1;
  xrt_shape_format(&t->shape, buf, cap);
  return 0;
}

/* Appends a function @__xrt_rp_F that makes the tokens F takes (an
 * after_all), calls F, and returns F's results without its tokens: only
 * tensors cross an entry function's boundary. */
static int rp_wrapper(sbuf *b, const xrt_ir_func *f) {
  char ty[300], line[512];
  int nres = 0, nargs = 0;
  snprintf(line, sizeof line, "\nfunc.func @__xrt_rp_%s(", f->name);
  sb_add(b, line);
  for (int32_t k = 0; k < f->body.num_args; k++) {
    const xrt_ir_type *t = &f->value_types[f->body.args[k]];
    if (type_text(t, ty, sizeof ty)) return -1;
    if (is_token(t)) continue;
    snprintf(line, sizeof line, "%s%%a%d: %s", nargs++ ? ", " : "", (int)k, ty);
    sb_add(b, line);
  }
  sb_add(b, ") -> (");
  for (int32_t k = 0; k < f->num_results; k++) {
    if (type_text(&f->result_types[k], ty, sizeof ty)) return -1;
    if (is_token(&f->result_types[k])) continue;
    sb_add(b, nres++ ? ", " : "");
    sb_add(b, ty);
  }
  sb_add(b, ") {\n  %t = stablehlo.after_all : !stablehlo.token\n  ");
  if (f->num_results > 0) {
    snprintf(line, sizeof line, "%%r:%d = ", (int)f->num_results);
    sb_add(b, f->num_results == 1 ? "%r = " : line);
  }
  snprintf(line, sizeof line, "func.call @%s(", f->name);
  sb_add(b, line);
  for (int32_t k = 0; k < f->body.num_args; k++) {
    const xrt_ir_type *t = &f->value_types[f->body.args[k]];
    snprintf(line, sizeof line, "%%a%d", (int)k);
    sb_add(b, k ? ", " : "");
    sb_add(b, is_token(t) ? "%t" : line);
  }
  sb_add(b, ") : (");
  for (int32_t k = 0; k < f->body.num_args; k++) {
    type_text(&f->value_types[f->body.args[k]], ty, sizeof ty);
    sb_add(b, k ? ", " : "");
    sb_add(b, ty);
  }
  sb_add(b, ") -> (");
  for (int32_t k = 0; k < f->num_results; k++) {
    type_text(&f->result_types[k], ty, sizeof ty);
    sb_add(b, k ? ", " : "");
    sb_add(b, ty);
  }
  sb_add(b, ")\n  func.return");
  for (int32_t k = 0, i = 0; k < f->num_results; k++) {
    if (is_token(&f->result_types[k])) continue;
    if (f->num_results == 1) snprintf(line, sizeof line, " %%r");
    else snprintf(line, sizeof line, "%s %%r#%d", i ? "," : "", (int)k);
    i++;
    sb_add(b, line);
  }
  for (int32_t k = 0, i = 0; k < f->num_results; k++) {
    if (is_token(&f->result_types[k])) continue;
    type_text(&f->result_types[k], ty, sizeof ty);
    sb_add(b, i++ ? ", " : " : ");
    sb_add(b, ty);
  }
  sb_add(b, "\n}\n");
  return 0;
}

/* Where a wrapper goes: before the module's closing brace (the last '}'
 * outside a comment) when the chunk is a `module {...}`, else the end. */
static size_t wrapper_at(const char *text, size_t len) {
  const char *p = text, *end = text + len;
  int in_module = 0;
  size_t last = len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *q = skip_blanks(p, eol);
    if (!in_module && eol - q >= 6 && strncmp(q, "module", 6) == 0) in_module = 1;
    for (; q < eol && !(q + 1 < eol && q[0] == '/' && q[1] == '/'); q++)
      if (*q == '}') last = (size_t)(q - text);
    p = eol + 1;
  }
  return in_module ? last : len;
}

/* Parses the chunk again with a wrapper for every function that takes or
 * returns tokens; lines of the chunk keep their numbers. */
static xrt_status rp_wrap(rp_launch *L) {
  interp_state *st = L->st;
  sbuf w = {NULL, 0, 0, 0};
  for (int i = 0; i < L->n; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= L->parts[j].f == L->parts[i].f;
    if (!L->parts[i].wrapped || seen) continue;
    if (rp_wrapper(&w, L->parts[i].f)) {
      free(w.s);
      return xrt_host_call_fail(L->call, XRT_UNIMPLEMENTED, "%s: @%s takes or returns tokens "
                                "together with tuples or quantized tensors", L->call->target,
                                L->parts[i].name);
    }
  }
  if (!w.s) return XRT_OK;
  size_t at = wrapper_at(st->text, st->len);
  char *text = w.oom ? NULL : malloc(st->len + w.n + 1);
  if (!text) {
    free(w.s);
    return xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(text, st->text, at);
  memcpy(text + at, w.s, w.n);
  memcpy(text + at + w.n, st->text + at, st->len - at);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = st->file;
  co.line_offset = st->line_offset;
  xrt_status s = xrt_program_parse(text, st->len + w.n, &co, &L->wprog);
  free(text);
  free(w.s);
  if (s)
    return xrt_host_call_fail(L->call, s, "%s: wrapping token functions: %s", L->call->target,
                              xrt_last_error());
  st->module2 = xrt_program_module(L->wprog);
  return XRT_OK;
}

/* The client of the launches, with at least n devices (--mpi: of all
 * processes, each with as many; creating it is collective). */
static xrt_status rp_client(rp_launch *L, int n) {
  interp_state *st = L->st;
  if (st->par && st->par_devices >= n) return XRT_OK;
  xrt_client_release(st->par);
  st->par = NULL;
  xrt_client_options o;
  xrt_client_options_init(&o);
  int nproc = mpi_job.on ? mpi_job.nproc : 1;
  o.num_devices = (n + nproc - 1) / nproc;
  if (!mpi_job.on) o.topology.process_count = 1;
  xrt_status s = xrt_client_create(&o, &st->par);
  if (!s) s = interp_register(st->par, st);
  if (s) {
    xrt_client_release(st->par);
    st->par = NULL;
    return xrt_host_call_fail(L->call, s, "%s: %s", L->call->target, xrt_last_error());
  }
  st->par_devices = o.num_devices * nproc;
  return XRT_OK;
}

/* Compiles each distinct function once for the R x P launch. */
static xrt_status rp_compile(rp_launch *L) {
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    for (int j = 0; j < i && !pt->exe; j++)
      if (L->parts[j].f == pt->f) pt->exe = L->parts[j].exe;
    if (pt->exe) continue;
    char entry[300];
    snprintf(entry, sizeof entry, "%s%s", pt->wrapped ? "__xrt_rp_" : "", pt->name);
    xrt_compile_options co;
    xrt_compile_options_init(&co);
    co.entry = entry;
    co.num_replicas = L->R;
    co.num_partitions = L->P;
    xrt_status s = xrt_compile_program(L->st->par, L->wprog ? L->wprog : L->st->prog, &co,
                                       &pt->exe);
    if (s) return xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    pt->owns_exe = 1;
  }
  return XRT_OK;
}

/* Runs the infeed = [@f, ...] functions; their results fill the queue. */
static xrt_status rp_infeed(rp_launch *L) {
  const xrt_ir_attr *feed = xrt_ir_op_attr(L->call->op, "infeed");
  for (int32_t i = 0; feed && i < feed->num_items; i++) {
    char name[300];
    snprintf(name, sizeof name, "%.*s", (int)feed->items[i].n, feed->items[i].s);
    xrt_compile_options co;
    xrt_compile_options_init(&co);
    co.entry = name;
    /* On this process's first device: with --mpi, device_assignment takes
     * global ids, and global id 0 may be another process's. */
    int here = xrt_device_global_id(xrt_client_device(L->st->par, 0));
    co.num_replicas = co.num_partitions = 1;
    co.device_assignment = &here;
    xrt_executable *exe = NULL;
    xrt_status s = xrt_compile_program(L->st->par, L->st->prog, &co, &exe);
    int nout = s ? 0 : xrt_executable_num_outputs(exe);
    xrt_buffer *outs[64] = {NULL};
    xrt_host_tensor t[64];
    if (!s && (nout > 64 || xrt_executable_num_inputs(exe) != 0))
      s = xrt_host_call_fail(L->call, XRT_INVALID_ARGUMENT, "%s: infeed function @%s must take "
                             "no arguments", L->call->target, name);
    else if (!s)
      s = xrt_execute(exe, xrt_client_device(L->st->par, 0), NULL, 0, outs, nout, NULL);
    if (s && !L->call->error[0]) xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    int k = 0;
    for (; !s && k < nout; k++) {
      xrt_buffer_shape(outs[k], &t[k].shape);
      t[k].bytes = xrt_buffer_bytes(outs[k]);
      t[k].data = malloc(t[k].bytes ? t[k].bytes : 1);
      if (!t[k].data) s = xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
      else if (t[k].bytes && (s = xrt_buffer_to_host(outs[k], t[k].data, t[k].bytes)))
        xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    }
    hmsg *m = s ? NULL : hmsg_new(t, nout);
    if (!s && !m) s = xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
    for (int j = 0; j < k; j++) free(t[j].data);
    for (int j = 0; j < nout; j++) xrt_buffer_release(outs[j]);
    xrt_executable_release(exe);
    if (s) return s;
    pthread_mutex_lock(&L->st->qmu);
    hq_push(&L->st->infeed, m);
    pthread_mutex_unlock(&L->st->qmu);
  }
  return XRT_OK;
}

/* Uploads each participant's operands to its device. */
static xrt_status rp_upload(rp_launch *L) {
  int in = 0;
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    pt->args = calloc((size_t)pt->nargs + 1, sizeof *pt->args);
    pt->outs = calloc((size_t)pt->nouts + 1, sizeof *pt->outs);
    if (!pt->args || !pt->outs)
      return xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
    xrt_device *dev = xrt_executable_device(pt->exe, i);
    for (int32_t k = 0, a = 0; k < pt->f->body.num_args; k++, in++) {
      if (!pt->local || is_token(&pt->f->value_types[pt->f->body.args[k]])) continue;
      const xrt_host_tensor *t = &L->call->inputs[in];
      xrt_status s = xrt_buffer_from_host(L->st->par, dev, &t->shape, t->data, &pt->args[a++]);
      if (s) return xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    }
  }
  return XRT_OK;
}

/* Enqueues every participant under one launch id and waits for all; the
 * first failure is the call's. */
static xrt_status rp_execute(rp_launch *L) {
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  o.launch_id = xrt_client_new_launch_id(L->st->par);
  xrt_status s = XRT_OK;
  int queued = 0;
  for (; queued < L->n && !s; queued++) {
    rp_part *pt = &L->parts[queued];
    if (!pt->local) continue; /* another process runs it */
    o.replica = queued / L->P;
    o.partition = queued % L->P;
    s = xrt_execute_async(pt->exe, xrt_executable_device(pt->exe, queued), pt->args,
                          pt->nargs, pt->outs, pt->nouts, &o, &pt->done);
    if (s) xrt_host_call_fail(L->call, s, "%s: replica %d, partition %d: %s", L->call->target,
                              o.replica, o.partition, xrt_last_error());
  }
  /* An incomplete launch cannot meet in its collectives: wait boundedly. */
  int64_t limit = s ? recv_timeout_ms() * 1000000 : -1;
  for (int i = 0; i < L->n; i++) {
    if (!L->parts[i].done) continue;
    xrt_status e = limit < 0 ? xrt_event_await(L->parts[i].done)
                             : xrt_event_await_for(L->parts[i].done, limit);
    if (e && !s) s = xrt_host_call_fail(L->call, e, "%s", xrt_last_error());
  }
  return s;
}

/* Copies the participants' results into the call's outputs, in order. */
static xrt_status rp_download(rp_launch *L) {
  int out = 0;
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    for (int32_t k = 0, j = 0; k < pt->f->num_results; k++, out++) {
      if (!pt->local || is_token(&pt->f->result_types[k])) continue;
      xrt_host_tensor *t = &L->call->outputs[out];
      xrt_status s = t->bytes ? xrt_buffer_to_host(pt->outs[j], t->data, t->bytes) : XRT_OK;
      j++;
      if (s) return xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    }
  }
  return XRT_OK;
}

static void rp_release(rp_launch *L) {
  for (int i = 0; L->parts && i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    for (int k = 0; pt->args && k < pt->nargs; k++) xrt_buffer_release(pt->args[k]);
    for (int k = 0; pt->outs && k < pt->nouts; k++) xrt_buffer_release(pt->outs[k]);
    xrt_event_release(pt->done);
    free(pt->args);
    free(pt->outs);
  }
  for (int i = 0; L->parts && i < L->n; i++)
    if (L->parts[i].owns_exe) xrt_executable_release(L->parts[i].exe);
  free(L->parts);
  L->st->module2 = NULL;
  xrt_program_release(L->wprog);
}

/* ---- --mpi: a launch spread over the processes ----
 *
 * Every process runs the same program, so every process makes the same
 * run_parallel calls: each makes the launch client (a client of the whole
 * MPI job, with ceil(R*P / processes) devices of its own), compiles every
 * function, and runs the participants of its own devices (global ids
 * 0..R*P-1); then rp_share gives every process every participant's
 * results, the text they printed, their probes and the first failure of
 * any process, so that @main continues alike everywhere.  Host transfers between
 * participants of different processes meet through the client's exchange
 * (route_peer). */

/* Notes that proc sends (or receives) on handle; the first one of each
 * side is the route's. */
static void rp_route_add(interp_state *st, int64_t handle, int sending, int proc) {
  rp_route *r = NULL;
  for (int i = 0; i < st->nroutes && !r; i++)
    if (st->routes[i].handle == handle) r = &st->routes[i];
  if (!r && st->nroutes == RP_MAX_ROUTES) return; /* more channels: they stay local */
  if (!r) {
    r = &st->routes[st->nroutes++];
    memset(r, 0, sizeof *r);
    r->handle = handle;
    r->send_proc = r->recv_proc = -1;
  }
  int *side = sending ? &r->send_proc : &r->recv_proc;
  if (*side >= 0 && *side != proc) r->spread = 1;
  if (*side < 0) *side = proc;
}

/* The host transfers of a region, through the functions it calls. */
static void rp_scan(interp_state *st, const xrt_ir_region *r, int proc, int depth) {
  const xrt_ir_module *m = st->module;
  for (int32_t i = 0; i < r->num_ops && depth < 16; i++) {
    const xrt_ir_op *op = &r->ops[i];
    const xrt_ir_attr *host = xrt_ir_op_attr(op, "is_host_transfer");
    int64_t handle;
    if ((op->code == XRT_OP_SEND || op->code == XRT_OP_RECV) && host &&
        host->kind == XRT_ATTR_BOOL && host->i && !channel_handle(op, &handle))
      rp_route_add(st, handle, op->code == XRT_OP_SEND, proc);
    if (op->code == XRT_OP_FUNC_CALL && op->callee >= 0 && op->callee < m->num_funcs)
      rp_scan(st, &m->funcs[op->callee].body, proc, depth + 1);
    for (int32_t k = 0; k < op->num_regions; k++) rp_scan(st, &op->regions[k], proc, depth + 1);
  }
}

/* Where each participant runs, and the routes of the host transfers. */
static void rp_place(rp_launch *L) {
  interp_state *st = L->st;
  pthread_mutex_lock(&st->qmu);
  st->nroutes = 0;
  st->launch_no++;
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    xrt_device *dev = xrt_executable_device(pt->exe, i);
    pt->proc = mpi_job.on ? xrt_device_process_index(dev) : 0;
    pt->local = !mpi_job.on || xrt_device_is_addressable(dev) == 1;
    if (mpi_job.on) rp_scan(st, &pt->f->body, pt->proc, 0);
  }
  pthread_mutex_unlock(&st->qmu);
}

/* What each process contributes to rp_share, before its results. */
typedef struct rp_head {
  int32_t status, pad;
  uint64_t printed; /* bytes of text held */
  uint64_t probed;  /* bytes of the probe records made (rp_probes_pack) */
  char message[488];
} rp_head;

/* Byte offset of each result of the call within the results. */
static size_t rp_result_at(const xrt_host_call *call, int k) {
  size_t off = 0;
  for (int i = 0; i < k; i++) off += call->outputs[i].bytes;
  return off;
}

/* Copies the results of the participants of process proc between the
 * call's outputs and packed (to: into packed). */
static void rp_pack(rp_launch *L, char *packed, int proc, int to) {
  int out = 0;
  for (int i = 0; i < L->n; i++) {
    const rp_part *pt = &L->parts[i];
    for (int32_t k = 0; k < pt->f->num_results; k++, out++) {
      xrt_host_tensor *t = &L->call->outputs[out];
      if (pt->proc != proc || !t->bytes) continue;
      char *at = packed + rp_result_at(L->call, out);
      if (to) memcpy(at, t->data, t->bytes);
      else memcpy(t->data, at, t->bytes);
    }
  }
}

/* This launch's probe records (from L->recs_before on), one after the
 * other: id length (uint32), id, shape, bytes (uint64), data.  *n gets
 * the size; NULL when out of memory.  mu held. */
static char *rp_probes_pack(const rp_launch *L, size_t *n) {
  const interp_state *st = L->st;
  size_t total = 0;
  for (size_t i = L->recs_before; i < st->num_recs; i++)
    total += 4 + strlen(st->recs[i].id) + sizeof(xrt_shape) + 8 + st->recs[i].bytes;
  char *b = malloc(total ? total : 1), *at = b;
  for (size_t i = L->recs_before; b && i < st->num_recs; i++) {
    const probe_rec *r = &st->recs[i];
    uint32_t idn = (uint32_t)strlen(r->id);
    uint64_t bytes = r->bytes;
    memcpy(at, &idn, 4);
    memcpy(at + 4, r->id, idn);
    at += 4 + idn;
    memcpy(at, &r->shape, sizeof r->shape);
    memcpy(at + sizeof r->shape, &bytes, 8);
    at += sizeof r->shape + 8;
    if (bytes) memcpy(at, r->data, r->bytes);
    at += r->bytes;
  }
  *n = total;
  return b;
}

/* Appends the probe records packed in b (n bytes, from a process alike
 * to this one); -1 when out of memory.  mu held. */
static int rp_probes_unpack(interp_state *st, const char *b, size_t n) {
  const char *at = b, *end = b + n;
  while (at < end) {
    uint32_t idn;
    uint64_t bytes;
    probe_rec r;
    memcpy(&idn, at, 4);
    memcpy(&r.shape, at + 4 + idn, sizeof r.shape);
    memcpy(&bytes, at + 4 + idn + sizeof r.shape, 8);
    r.bytes = (size_t)bytes;
    r.id = malloc((size_t)idn + 1);
    r.data = malloc(r.bytes ? r.bytes : 1);
    probe_room(st);
    if (!r.id || !r.data || st->num_recs == st->cap_recs) {
      free(r.id);
      free(r.data);
      return -1;
    }
    memcpy(r.id, at + 4, idn);
    r.id[idn] = 0;
    at += 4 + idn + sizeof r.shape + 8;
    if (r.bytes) memcpy(r.data, at, r.bytes);
    at += r.bytes;
    st->recs[st->num_recs++] = r;
  }
  return 0;
}

/* What every process printed and probed during the launch, to every
 * process, in process order: the text to the output, the probe records
 * (this process's own included, so that all keep them in one order). */
static xrt_status rp_share_extra(rp_launch *L, const char *heads, size_t rec) {
  interp_state *st = L->st;
  uint64_t most = 0;
  for (int p = 0; p < mpi_job.nproc; p++) {
    const rp_head *h = (const rp_head *)(const void *)(heads + (size_t)p * rec);
    most = h->printed + h->probed > most ? h->printed + h->probed : most;
  }
  if (!most) return XRT_OK;
  const rp_head *me = (const rp_head *)(const void *)(heads + (size_t)mpi_job.me * rec);
  char *mine = calloc(1, (size_t)most), *all = calloc((size_t)mpi_job.nproc, (size_t)most);
  size_t pn = 0;
  pthread_mutex_lock(&st->mu);
  char *probes = rp_probes_pack(L, &pn);
  if (mine && me->printed) memcpy(mine, st->hold.s, me->printed);
  if (mine && probes && pn == me->probed) memcpy(mine + me->printed, probes, pn);
  pthread_mutex_unlock(&st->mu);
  free(probes);
  /* Every process must take part, even one short of memory. */
  xrt_status s = mine && all ? xrt_client_process_allgather(st->par, mine, all, (size_t)most)
                             : XRT_RESOURCE_EXHAUSTED;
  if (s && mine && all)
    xrt_host_call_fail(L->call, s, "%s: gathering printed text and probes: %s", L->call->target,
                       xrt_last_error());
  else if (s)
    xrt_host_call_fail(L->call, s, "%s: out of memory", L->call->target);
  pthread_mutex_lock(&st->mu);
  for (size_t i = L->recs_before; !s && i < st->num_recs; i++) {
    free(st->recs[i].id);
    free(st->recs[i].data);
  }
  if (!s) st->num_recs = L->recs_before;
  for (int p = 0; !s && p < mpi_job.nproc; p++) {
    const rp_head *h = (const rp_head *)(const void *)(heads + (size_t)p * rec);
    const char *blob = all + (size_t)p * most;
    ob_add(&st->out, blob, (size_t)h->printed);
    if (rp_probes_unpack(st, blob + h->printed, (size_t)h->probed))
      s = xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory recording probe");
  }
  pthread_mutex_unlock(&st->mu);
  free(mine);
  free(all);
  return s;
}

/* Gives every process every participant's results and the first failure
 * of any process (s: this process's).  Collective over the processes. */
static xrt_status rp_share(rp_launch *L, xrt_status s) {
  interp_state *st = L->st;
  xrt_host_call *call = L->call;
  pthread_mutex_lock(&st->mu);
  st->holding = 0; /* the launch is over: nobody prints any more */
  pthread_mutex_unlock(&st->mu);
  size_t total = rp_result_at(call, call->num_outputs), rec = sizeof(rp_head) + total;
  char *mine = calloc(1, rec), *all = calloc((size_t)mpi_job.nproc, rec);
  xrt_status g = XRT_RESOURCE_EXHAUSTED;
  if (mine && all) {
    rp_head *h = (rp_head *)(void *)mine;
    h->status = (int32_t)s;
    pthread_mutex_lock(&st->mu);
    h->printed = st->hold.oom ? 0 : st->hold.n;
    size_t pn = 0;
    free(rp_probes_pack(L, &pn)); /* its size (packed again with the text) */
    h->probed = pn;
    pthread_mutex_unlock(&st->mu);
    snprintf(h->message, sizeof h->message, "%s", s ? call->error : "");
    if (!s) rp_pack(L, mine + sizeof(rp_head), mpi_job.me, 1);
    g = xrt_client_process_allgather(st->par, mine, all, rec);
  }
  if (g && !s)
    s = mine && all ? xrt_host_call_fail(call, g, "%s: gathering the results: %s", call->target,
                                         xrt_last_error())
                    : xrt_host_call_fail(call, g, "%s: out of memory", call->target);
  if (!g) {
    xrt_status t = rp_share_extra(L, all, rec);
    for (int p = 0; p < mpi_job.nproc && !s; p++) {
      const rp_head *h = (const rp_head *)(void *)(all + (size_t)p * rec);
      if (h->status)
        s = xrt_host_call_fail(call, (xrt_status)h->status, "process %d: %s", p, h->message);
      else if (p != mpi_job.me)
        rp_pack(L, all + (size_t)p * rec + sizeof(rp_head), p, 0);
    }
    if (!s) s = t;
  }
  free(mine);
  free(all);
  pthread_mutex_lock(&st->mu);
  st->hold.n = 0;
  st->hold.oom = 0;
  pthread_mutex_unlock(&st->mu);
  return s;
}

static xrt_status host_run_parallel(void *user, xrt_host_call *call) {
  interp_state *st = user;
  const xrt_ir_attr *progs = call->op ? xrt_ir_op_attr(call->op, "programs") : NULL;
  if (!progs || progs->kind != XRT_ATTR_LIST || progs->num_items < 1 || !st->prog)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s needs programs = [[@f, ...]] "
                              "and a program to take them from", call->target);
  rp_launch L;
  memset(&L, 0, sizeof L);
  L.st = st;
  L.call = call;
  L.R = progs->num_items;
  L.P = progs->items[0].num_items;
  if ((int64_t)L.R * L.P > RP_MAX)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: %d x %d programs are more than "
                              "%d", call->target, L.R, L.P, RP_MAX);
  L.n = L.R * L.P;
  /* The launch client is shared: one run_parallel at a time. */
  pthread_mutex_lock(&st->qmu);
  int busy = st->par_busy;
  st->par_busy = 1;
  pthread_mutex_unlock(&st->qmu);
  if (busy)
    return xrt_host_call_fail(call, XRT_UNIMPLEMENTED, "%s cannot run inside or beside "
                              "another interpreter.run_parallel", call->target);
  L.parts = calloc((size_t)L.n, sizeof *L.parts);
  xrt_status s = L.parts ? XRT_OK
                         : xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "out of memory");
  if (!s) s = rp_bind(&L);
  if (!s) s = rp_wrap(&L);
  if (!s) s = rp_client(&L, L.n);
  if (!s) {
    /* --mpi: from here on every process must reach rp_share. */
    pthread_mutex_lock(&st->mu);
    st->holding = mpi_job.on;
    L.recs_before = st->num_recs;
    pthread_mutex_unlock(&st->mu);
    s = rp_compile(&L);
    if (!s) rp_place(&L);
    if (!s) s = rp_infeed(&L);
    if (!s) s = rp_upload(&L);
    if (!s) s = rp_execute(&L);
    if (!s) s = rp_download(&L);
    if (mpi_job.on) s = rp_share(&L, s);
    pthread_mutex_lock(&st->qmu);
    st->nroutes = 0;
    pthread_mutex_unlock(&st->qmu);
  }
  rp_release(&L);
  pthread_mutex_lock(&st->qmu);
  st->par_busy = 0;
  pthread_mutex_unlock(&st->qmu);
  return s;
}

/* ======================================================================
 * xrt run
 * ==================================================================== */

typedef struct run_args {
  const char *file;
  const char *entry;
  const char *output_dir;
  const char *cache_dir; /* --cache-dir, else $XRT_CACHE_DIR, else NULL */
  int devices;
  int num_inputs;
  const char **inputs; /* borrowed from argv */
} run_args;

/* Matches "--name VALUE" or "--name=VALUE"; advances *i past the value. */
static int option_value(int argc, char **argv, int *i, const char *name,
                        const char **value) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != 0) return 0;
  if (*i + 1 >= argc) {
    *value = NULL;
    return 1;
  }
  *value = argv[++*i];
  return 1;
}

static int parse_devices(const char *v, int *out) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || end == v || *end || n < 1 || n > 1024) return -1;
  *out = (int)n;
  return 0;
}

/* Returns 0, or an exit code after printing a usage error. */
static int parse_run_args(int argc, char **argv, run_args *ra) {
  memset(ra, 0, sizeof *ra);
  ra->devices = 1;
  ra->inputs = calloc((size_t)argc, sizeof *ra->inputs);
  if (!ra->inputs) return usage_error("%s", "out of memory");
  for (int i = 2; i < argc; i++) {
    const char *v = NULL;
    if (option_value(argc, argv, &i, "--devices", &v)) {
      if (!v || parse_devices(v, &ra->devices))
        return usage_error("--devices needs a number from 1 to 1024, not '%s'", v ? v : "");
    } else if (option_value(argc, argv, &i, "--input", &v)) {
      if (!v) return usage_error("%s needs a file", "--input");
      ra->inputs[ra->num_inputs++] = v;
    } else if (option_value(argc, argv, &i, "--output-dir", &v)) {
      if (!v) return usage_error("%s needs a directory", "--output-dir");
      ra->output_dir = v;
    } else if (option_value(argc, argv, &i, "--entry", &v)) {
      if (!v) return usage_error("%s needs a function name", "--entry");
      ra->entry = v;
    } else if (option_value(argc, argv, &i, "--cache-dir", &v)) {
      if (!v || !*v) return usage_error("%s needs a directory", "--cache-dir");
      ra->cache_dir = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return usage_error("run: unknown option '%s'", argv[i]);
    } else if (ra->file) {
      return usage_error("run: more than one program file ('%s')", argv[i]);
    } else {
      ra->file = argv[i];
    }
  }
  if (!ra->file) return usage_error("%s: no program file given", "run");
  if (!ra->cache_dir) {
    const char *env = getenv("XRT_CACHE_DIR");
    if (env && *env) ra->cache_dir = env;
  }
  return 0;
}

/* Opens the disk cache of --cache-dir (none without one); returns 0 or an
 * exit code after reporting why. */
static int open_disk_cache(const char *dir, xrt_disk_cache **out) {
  *out = NULL;
  if (!dir) return 0;
#ifdef XRT_HAVE_DISK_CACHE
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  o.directory = dir;
  xrt_status s = xrt_disk_cache_open(&o, out);
  return s ? report(s, NULL) : 0;
#else
  fprintf(stderr, "xrt: --cache-dir %s: this xrt is built without the disk "
          "cache (XRT_DISK_CACHE=0)\n", dir);
  return EXIT_ERROR;
#endif
}

static void close_disk_cache(xrt_disk_cache *cache) {
#ifdef XRT_HAVE_DISK_CACHE
  xrt_disk_cache_close(cache);
#else
  (void)cache;
#endif
}

/* Loads the --input files onto dev, checking them against the entry's
 * signature so that mistakes are reported by file name. */
static int load_inputs(const run_args *ra, xrt_client *client, xrt_device *dev,
                       xrt_executable *exe, xrt_buffer **args) {
  int want = xrt_executable_num_inputs(exe);
  if (want != ra->num_inputs) {
    fprintf(stderr, "xrt: @%s takes %d argument%s but %d --input file%s given\n",
            xrt_executable_name(exe), want, want == 1 ? "" : "s", ra->num_inputs,
            ra->num_inputs == 1 ? " was" : "s were");
    for (int i = 0; i < want; i++) {
      xrt_shape s;
      char type[256] = "?";
      if (!xrt_executable_input_shape(exe, i, &s)) xrt_shape_format(&s, type, sizeof type);
      fprintf(stderr, "  argument %d: %s\n", i, type);
    }
    return EXIT_ERROR;
  }
  for (int i = 0; i < want; i++) {
    xrt_status s = xrt_buffer_from_npy(client, dev, ra->inputs[i], &args[i]);
    if (s) return report(s, NULL);
    xrt_shape got, expect;
    if (xrt_buffer_shape(args[i], &got) || xrt_executable_input_shape(exe, i, &expect))
      return report(xrt_last_status(), NULL);
    char tg[256], te[256];
    xrt_shape_format(&got, tg, sizeof tg);
    xrt_shape_format(&expect, te, sizeof te);
    if (strcmp(tg, te) != 0) {
      fprintf(stderr, "xrt: %s holds %s but argument %d of @%s is %s\n", ra->inputs[i],
              tg, i, xrt_executable_name(exe), te);
      return EXIT_ERROR;
    }
  }
  return 0;
}

/* Creates dir if it does not exist (one level, like mkdir). */
static int ensure_dir(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    fprintf(stderr, "xrt: --output-dir %s is not a directory\n", dir);
    return -1;
  }
  if (os_mkdir(dir) != 0 && errno != EEXIST) {
    fprintf(stderr, "xrt: cannot create %s: %s\n", dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* Writes DIR/result_K.npy, or DIR/device_D_result_K.npy for device D of a
 * replicated run (device >= 0). */
static int write_results(const char *dir, xrt_buffer **outs, int n, int device) {
  if (ensure_dir(dir)) return EXIT_ERROR;
  size_t cap = strlen(dir) + 64;
  char *path = malloc(cap);
  if (!path) return EXIT_ERROR;
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    if (device < 0) snprintf(path, cap, "%s/result_%d.npy", dir, k);
    else snprintf(path, cap, "%s/device_%d_result_%d.npy", dir, device, k);
    xrt_status s = xrt_buffer_to_npy(outs[k], path);
    if (s) rc = report(s, NULL);
  }
  free(path);
  return rc;
}

/* Replicas of a run on ra->devices devices: the module's partitions
 * (mhlo.num_partitions) times the replicas fill the devices. */
static int run_replicas(const run_args *ra, const xrt_program *prog, int *replicas) {
  const xrt_ir_module *m = xrt_program_module(prog);
  int parts = m && m->num_partitions > 0 ? m->num_partitions : 1;
  if (ra->devices % parts != 0) {
    fprintf(stderr, "xrt: --devices %d is not a multiple of the program's %d partitions\n",
            ra->devices, parts);
    return EXIT_ERROR;
  }
  *replicas = ra->devices / parts;
  return 0;
}

/* Prints (and with --output-dir writes) one device's results; a run on
 * several devices heads each device's results with "device D:". */
static int show_results(const run_args *ra, xrt_buffer **outs, int nout, int device) {
  if (device >= 0) printf("device %d:\n", device);
  for (int k = 0; k < nout; k++) {
    xrt_status s = print_result(k, outs[k]);
    if (s) return report(s, NULL);
  }
  return ra->output_dir ? write_results(ra->output_dir, outs, nout, device) : 0;
}

/* Runs exe on every device of its launch (the same --input files on
 * each) and shows every device's results.  n = devices of the launch. */
static int run_devices(const run_args *ra, xrt_client *client, xrt_executable *exe, int n) {
  int nin = xrt_executable_num_inputs(exe), nout = xrt_executable_num_outputs(exe);
  size_t ai = (size_t)(nin > 0 ? nin : 1), ao = (size_t)(nout > 0 ? nout : 1);
  xrt_buffer **bufs = calloc((size_t)n * (ai + ao), sizeof *bufs);
  xrt_buffer **arg_lists[RP_MAX], **out_lists[RP_MAX];
  int rc = !bufs || n > RP_MAX ? EXIT_ERROR : 0;
  if (rc) fprintf(stderr, "xrt: out of memory\n");
  for (int d = 0; !rc && d < n; d++) {
    arg_lists[d] = bufs + (size_t)d * ai;
    out_lists[d] = bufs + (size_t)n * ai + (size_t)d * ao;
    rc = load_inputs(ra, client, xrt_executable_device(exe, d), exe, arg_lists[d]);
  }
  xrt_status s = XRT_OK;
  if (!rc) {
    xrt_event *done = NULL;
    s = xrt_execute_multi(exe, (xrt_buffer *const *const *)arg_lists, n, nin,
                          (xrt_buffer **const *)out_lists, nout, NULL, &done);
    if (!s) s = xrt_event_await(done);
    if (s) rc = report(s, NULL);
    xrt_event_release(done);
  }
  for (int d = 0; !rc && d < n; d++) rc = show_results(ra, out_lists[d], nout, d);
  for (size_t i = 0; bufs && i < (size_t)n * (ai + ao); i++)
    if (bufs[i]) xrt_buffer_release(bufs[i]);
  free(bufs);
  return rc;
}

/* Runs exe on device 0 and shows its results. */
static int run_one(const run_args *ra, xrt_client *client, xrt_executable *exe) {
  xrt_device *dev = xrt_client_device(client, 0);
  int nin = xrt_executable_num_inputs(exe), nout = xrt_executable_num_outputs(exe);
  xrt_buffer **args = calloc((size_t)(nin > 0 ? nin : 1), sizeof *args);
  xrt_buffer **outs = calloc((size_t)(nout > 0 ? nout : 1), sizeof *outs);
  int rc = !args || !outs ? EXIT_ERROR : 0;
  if (!rc) rc = load_inputs(ra, client, dev, exe, args);
  if (!rc) {
    xrt_status s = xrt_execute(exe, dev, args, nin, outs, nout, NULL);
    if (s) rc = report(s, NULL);
  }
  if (!rc) rc = show_results(ra, outs, nout, -1);
  for (int i = 0; args && i < nin; i++) xrt_buffer_release(args[i]);
  for (int k = 0; outs && k < nout; k++) xrt_buffer_release(outs[k]);
  free(args);
  free(outs);
  return rc;
}

/* Parses, compiles (replicated over --devices), loads inputs, executes
 * and prints. */
static int run_program(const run_args *ra, xrt_client *client, interp_state *st,
                       const char *text, size_t len) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.entry = ra->entry;
  co.filename = ra->file;
  xrt_program *prog = NULL;
  xrt_executable *exe = NULL;
  int replicas = 1, rc = 0;
  xrt_status s = xrt_program_parse(text, len, &co, &prog);
  if (s) return report(s, NULL);
  st->prog = prog; /* for interpreter.run_parallel */
  st->module = xrt_program_module(prog);
  st->text = text;
  st->len = len;
  st->file = ra->file;
  if (ra->devices > 1) {
    rc = run_replicas(ra, prog, &replicas);
    co.num_replicas = replicas;
  }
  if (!rc && (s = xrt_compile_program(client, prog, &co, &exe)) != XRT_OK) rc = report(s, NULL);
  if (!rc) {
    int n = xrt_executable_num_replicas(exe) * xrt_executable_num_partitions(exe);
    rc = n > 1 ? run_devices(ra, client, exe, n) : run_one(ra, client, exe);
  }
  xrt_executable_release(exe);
  st->prog = NULL;
  st->module = NULL;
  xrt_program_release(prog);
  return rc;
}

static int cmd_run(int argc, char **argv) {
  run_args ra;
  int rc = parse_run_args(argc, argv, &ra);
  char *text = NULL;
  size_t len = 0;
  if (!rc && read_file(ra.file, &text, &len)) rc = EXIT_ERROR;
  xrt_disk_cache *cache = NULL;
  if (!rc) rc = open_disk_cache(ra.cache_dir, &cache);
  xrt_client *client = NULL;
  if (!rc) {
    xrt_client_options opt;
    xrt_client_options_init(&opt);
    opt.num_devices = ra.devices;
    if (mpi_job.on) opt.topology.process_count = 1; /* this process alone */
#ifdef XRT_HAVE_DISK_CACHE
    if (cache) opt.cache_store = xrt_disk_cache_store(cache);
#endif
    xrt_status s = xrt_client_create(&opt, &client);
    if (s) rc = report(s, NULL);
  }
  interp_state ist;
  interp_init(&ist);
  if (!rc) {
    xrt_status s = interp_register(client, &ist);
    if (s) rc = report(s, NULL);
  }
  if (!rc) rc = run_program(&ra, client, &ist, text, len);
  xrt_client_release(client);
  close_disk_cache(cache); /* after the client that used its store */
  interp_free(&ist);
  free(text);
  free(ra.inputs);
  fflush(stdout);
  return rc;
}

/* ======================================================================
 * xrt check
 * ==================================================================== */

/* Outcome of one chunk. */
typedef enum { CHUNK_PASS, CHUNK_CHECK_FAILED, CHUNK_ERROR } chunk_result;

typedef struct check_ctx {
  const char *file;
  xrt_client *client;
  int verbose;
  interp_state *interp;
  /* From the file's `// RUN:` lines: print results and match CHECK lines
   * (a `stablehlo-translate --interpret ... | FileCheck %s` line), and the
   * entry's arguments (its --args="[dense<..> : tensor<..>, ...]"). */
  int filecheck;
  const char *args;
  size_t args_len;
} check_ctx;

/* Where msg has "FILE:LINE" (possibly after a prefix such as "sim: "), or
 * NULL. */
static const char *find_location(const char *msg, const char *file) {
  size_t fl = strlen(file);
  for (const char *p = strstr(msg, file); p; p = strstr(p + 1, file))
    if (p[fl] == ':' && p[fl + 1] >= '0' && p[fl + 1] <= '9') return p;
  return NULL;
}

/* Prints msg with its location first ("F:1:2: sim: text" for "sim: F:1:2:
 * text") so editors and CI logs can jump to it; a message with no location
 * gets the chunk's line. */
static void print_located(const char *msg, const char *file, int line) {
  const char *loc = find_location(msg, file);
  if (!loc) {
    printf("%s:%d: %s", file, line, msg);
    return;
  }
  const char *p = loc + strlen(file);
  while (*p == ':' && p[1] >= '0' && p[1] <= '9') {
    p++;
    while (*p >= '0' && *p <= '9') p++;
  }
  const char *loc_end = p;
  if (*p == ':') p++;
  while (*p == ' ') p++;
  printf("%.*s: %.*s%s", (int)(loc_end - loc), loc, (int)(loc - msg), msg, p);
}

/* Prints one line for a failed chunk: the message, located at the chunk's
 * first line when the message has no location of its own. */
static chunk_result chunk_fail(const check_ctx *cx, int line, xrt_status s,
                               const char *msg) {
  print_located(msg, cx->file, line);
  if (s == XRT_CHECK_FAILED) {
    printf("\n");
    return CHUNK_CHECK_FAILED;
  }
  printf(" [%s]\n", xrt_strerror(s));
  return CHUNK_ERROR;
}

/* The line of function name in the chunk's module, or fallback. */
static int func_line(const xrt_program *prog, const char *name, int fallback) {
  const xrt_ir_module *m = xrt_program_module(prog);
  for (int32_t i = 0; m && name && i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, name) == 0 && m->funcs[i].loc.line > 0)
      return m->funcs[i].loc.line;
  return fallback;
}

/* ---- --args="[dense<...> : tensor<...>, ...]" ---- */

/* The end of the item starting at p: the next top-level ',' or end. */
static const char *item_end(const char *p, const char *end) {
  int depth = 0;
  for (; p < end; p++) {
    if (*p == '"') {
      for (p++; p < end && *p != '"'; p++)
        if (*p == '\\') p++;
    } else if (*p == '<' || *p == '[' || *p == '(' || *p == '{') {
      depth++;
    } else if (*p == '>' || *p == ']' || *p == ')' || *p == '}') {
      depth--;
    } else if (*p == ',' && depth == 0) {
      break;
    }
  }
  return p;
}

static const char *skip_blanks(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* Makes one argument buffer from `dense<..> : T` by running a program that
 * returns it as a constant (the public API's only literal parser). */
static xrt_status arg_buffer(xrt_client *c, const char *s, size_t n, xrt_buffer **out) {
  const char *end = s + n, *colon = NULL;
  int depth = 0;
  for (const char *p = s; p < end; p++) {
    if (*p == '<' || *p == '[' || *p == '(') depth++;
    else if (*p == '>' || *p == ']' || *p == ')') depth--;
    else if (*p == ':' && depth == 0) colon = p;
  }
  if (n < 6 || strncmp(s, "dense<", 6) != 0 || !colon) return XRT_INVALID_ARGUMENT;
  const char *ty = skip_blanks(colon + 1, end);
  size_t cap = 2 * n + 128;
  char *text = malloc(cap);
  if (!text) return XRT_RESOURCE_EXHAUSTED;
  int len = snprintf(text, cap,
                     "func.func @main() -> %.*s {\n  %%0 = stablehlo.constant %.*s\n"
                     "  func.return %%0 : %.*s\n}\n",
                     (int)(end - ty), ty, (int)n, s, (int)(end - ty), ty);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "--args";
  xrt_executable *e = NULL;
  xrt_status st = xrt_compile(c, text, (size_t)len, &co, &e);
  free(text);
  if (!st && xrt_executable_num_outputs(e) == 1)
    st = xrt_execute(e, xrt_client_device(c, 0), NULL, 0, out, 1, NULL);
  xrt_executable_release(e);
  return st;
}

/* Builds the --args buffers; *n_out is how many; fills msg on failure. */
static xrt_status make_args(const check_ctx *cx, xrt_buffer ***out, int *n_out,
                            char *msg, size_t cap) {
  *out = NULL;
  *n_out = 0;
  const char *p = skip_blanks(cx->args, cx->args + cx->args_len);
  const char *end = cx->args + cx->args_len;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
  if (p == end || *p != '[' || end[-1] != ']') {
    snprintf(msg, cap, "--args must be a list like [dense<1> : tensor<2xi32>, ...]");
    return XRT_INVALID_ARGUMENT;
  }
  p++;
  end--;
  xrt_buffer **bufs = calloc((size_t)(end - p) + 1, sizeof *bufs);
  if (!bufs) return XRT_RESOURCE_EXHAUSTED;
  int n = 0;
  xrt_status s = XRT_OK;
  for (p = skip_blanks(p, end); p < end && !s;) {
    const char *e = item_end(p, end), *t = e;
    while (t > p && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\n')) t--;
    int dense = t - p >= 6 && strncmp(p, "dense<", 6) == 0;
    s = arg_buffer(cx->client, p, (size_t)(t - p), &bufs[n]);
    if (s)
      snprintf(msg, cap, "--args item %d '%.*s': expected dense<...> : tensor<...>%s%s",
               n, (int)(t - p), p, dense ? ": " : "", dense ? xrt_last_error() : "");
    else
      n++;
    p = e < end ? skip_blanks(e + 1, end) : end;
  }
  if (s) {
    for (int i = 0; i < n; i++) xrt_buffer_release(bufs[i]);
    free(bufs);
    return s;
  }
  *out = bufs;
  *n_out = n;
  return XRT_OK;
}

/* Prints the results as `stablehlo-translate --interpret` does. */
static xrt_status print_interp_results(const check_ctx *cx, xrt_buffer **outs, int n) {
  for (int k = 0; k < n; k++) {
    xrt_shape shape;
    xrt_status s = xrt_buffer_shape(outs[k], &shape);
    if (s) return s;
    size_t bytes = xrt_buffer_bytes(outs[k]);
    void *host = malloc(bytes ? bytes : 1);
    if (!host) return XRT_RESOURCE_EXHAUSTED;
    s = bytes ? xrt_buffer_to_host(outs[k], host, bytes) : XRT_OK;
    if (!s) interp_emit(cx->interp, "", &shape, host);
    free(host);
    if (s) return s;
  }
  return XRT_OK;
}

/* Runs a compiled entry with args; prints its results for FileCheck. */
static chunk_result run_entry(const check_ctx *cx, int line, xrt_executable *exe,
                              xrt_buffer **args, int nin) {
  int nout = xrt_executable_num_outputs(exe);
  xrt_buffer **outs = calloc((size_t)(nout > 0 ? nout : 1), sizeof *outs);
  if (!outs) return chunk_fail(cx, line, XRT_RESOURCE_EXHAUSTED, "out of memory");
  chunk_result r = CHUNK_PASS;
  xrt_status s = xrt_execute(exe, xrt_client_device(cx->client, 0), args, nin, outs, nout, NULL);
  if (s) r = chunk_fail(cx, line, s, xrt_last_error());
  if (!s && cx->filecheck && (s = print_interp_results(cx, outs, nout)))
    r = chunk_fail(cx, line, s, xrt_last_error());
  for (int k = 0; k < nout; k++)
    if (outs[k]) xrt_buffer_release(outs[k]);
  free(outs);
  return r;
}

/* Compiles and runs one function of a parsed chunk, with the --args of
 * the RUN line when it takes arguments. */
static chunk_result check_entry(const check_ctx *cx, int line, const xrt_program *prog,
                                const xrt_compile_options *base, const char *entry) {
  xrt_compile_options co = *base;
  co.entry = entry;
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile_program(cx->client, prog, &co, &exe);
  if (s) return chunk_fail(cx, line, s, xrt_last_error());
  int nin = xrt_executable_num_inputs(exe);
  chunk_result r = CHUNK_PASS;
  xrt_buffer **args = NULL;
  int nargs = 0;
  char msg[1024];
  if (nin != 0 && cx->args) {
    s = make_args(cx, &args, &nargs, msg, sizeof msg);
    if (s) r = chunk_fail(cx, line, s, msg);
  }
  if (r == CHUNK_PASS && nin != nargs) {
    if (cx->args)
      snprintf(msg, sizeof msg, "function @%s takes %d argument%s but --args has %d",
               xrt_executable_name(exe), nin, nin == 1 ? "" : "s", nargs);
    else
      snprintf(msg, sizeof msg,
               "function @%s takes %d argument%s; check runs functions without "
               "arguments (use 'xrt run --input', or --args=\"[...]\" on the RUN line)",
               xrt_executable_name(exe), nin, nin == 1 ? "" : "s");
    r = chunk_fail(cx, func_line(prog, xrt_executable_name(exe), line),
                   XRT_INVALID_ARGUMENT, msg);
  } else if (r == CHUNK_PASS) {
    r = run_entry(cx, line, exe, args, nin);
  }
  for (int i = 0; i < nargs; i++) xrt_buffer_release(args[i]);
  free(args);
  xrt_executable_release(exe);
  return r;
}

/* ---- FileCheck: `// CHECK:` lines against the chunk's printed text ---- */

enum { FC_CHECK, FC_NEXT, FC_SAME, FC_EMPTY, FC_NOT };

typedef struct fc_line {
  int kind, line;
  const char *pat; /* not NUL-terminated */
  size_t len;
} fc_line;

/* Parses `// CHECK[-NEXT|-SAME|-LABEL|-EMPTY|-NOT][{LITERAL}]: pattern` on
 * [p, eol); other prefixes (CHECK-DENSE:) are not ours. */
static int fc_parse(const char *p, const char *eol, fc_line *out) {
  static const struct { const char *s; int kind; } sfx[] = {
      {"", FC_CHECK}, {"-NEXT", FC_NEXT}, {"-SAME", FC_SAME},
      {"-LABEL", FC_CHECK}, {"-EMPTY", FC_EMPTY}, {"-NOT", FC_NOT}};
  p = skip_blanks(p, eol);
  if (eol - p < 2 || p[0] != '/' || p[1] != '/') return 0;
  p = skip_blanks(p + 2, eol);
  if (eol - p < 5 || strncmp(p, "CHECK", 5) != 0) return 0;
  p += 5;
  for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
    size_t n = strlen(sfx[i].s);
    const char *q = p;
    if ((size_t)(eol - q) < n || strncmp(q, sfx[i].s, n) != 0) continue;
    q += n;
    if (eol - q >= 9 && strncmp(q, "{LITERAL}", 9) == 0) q += 9;
    if (q >= eol || *q != ':') continue;
    q = skip_blanks(q + 1, eol);
    const char *e = eol;
    while (e > q && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    out->kind = sfx[i].kind;
    out->pat = q;
    out->len = (size_t)(e - q);
    return 1;
  }
  return 0;
}

/* Copies [s, s+n) with runs of blanks collapsed to one space (FileCheck's
 * default whitespace handling) and leading/trailing blanks dropped. */
static size_t fc_squash(const char *s, size_t n, char *out) {
  size_t k = 0;
  int blank = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
      blank = k > 0;
      continue;
    }
    if (blank) out[k++] = ' ';
    blank = 0;
    out[k++] = s[i];
  }
  out[k] = 0;
  return k;
}

/* The output as squashed lines (one buffer, lines NUL-separated). */
typedef struct fc_text {
  char *buf;
  char **lines;
  int n;
} fc_text;

static int fc_split(const char *s, size_t n, fc_text *t) {
  t->buf = malloc(n + 2);
  t->lines = malloc((n + 2) * sizeof *t->lines);
  t->n = 0;
  if (!t->buf || !t->lines) return -1;
  size_t k = 0;
  const char *p = s, *end = s + n;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    t->lines[t->n++] = t->buf + k;
    k += fc_squash(p, (size_t)(eol - p), t->buf + k) + 1;
    p = eol + 1;
  }
  return 0;
}

/* Matches the checks in order; returns the index of the first that fails,
 * or -1.  Position: line `at`, column `col` of the last match (at = -1
 * before the first). */
static int fc_match(const fc_line *ck, int nck, const fc_text *t) {
  int at = -1;
  size_t col = 0;
  char *pat = NULL;
  size_t cap = 0;
  int bad = -1;
  for (int i = 0; i < nck && bad < 0; i++) {
    if (ck[i].len + 1 > cap) {
      cap = ck[i].len + 1;
      char *np = realloc(pat, cap);
      if (!np) { bad = i; break; }
      pat = np;
    }
    size_t pl = fc_squash(ck[i].pat, ck[i].len, pat);
    const char *hit = NULL;
    switch (ck[i].kind) {
    case FC_CHECK:
      for (int l = at < 0 ? 0 : at; l < t->n && !hit; l++) {
        const char *from = t->lines[l] + (l == at ? col : 0);
        if ((hit = strstr(from, pat)) != NULL) at = l;
      }
      break;
    case FC_NEXT:
      if (at + 1 < t->n && (hit = strstr(t->lines[at + 1], pat)) != NULL) at++;
      break;
    case FC_SAME:
      if (at >= 0) hit = strstr(t->lines[at] + col, pat);
      break;
    case FC_EMPTY:
      if (at + 1 < t->n && t->lines[at + 1][0] == 0) hit = t->lines[++at];
      break;
    case FC_NOT: { /* between the previous match and the next one */
      int until = t->n;
      for (int l = at < 0 ? 0 : at; l < until && !hit; l++)
        hit = strstr(t->lines[l] + (l == at ? col : 0), pat);
      if (hit) { bad = i; continue; }
      hit = t->n ? t->lines[at < 0 ? 0 : at] + col : "";
      pl = 0;
      break;
    }
    }
    if (!hit) bad = i;
    else if (ck[i].kind != FC_NOT) col = (size_t)(hit - t->lines[at]) + pl;
  }
  free(pat);
  return bad;
}

/* Collects the chunk's CHECK lines; *out is malloc'd. */
static int fc_collect(const char *text, size_t len, int line_offset, fc_line **out) {
  int n = 0, cap = 0;
  *out = NULL;
  const char *p = text, *end = text + len;
  for (int line = line_offset + 1; p < end; line++) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    fc_line f;
    if (fc_parse(p, eol, &f)) {
      if (n == cap) {
        cap = cap ? 2 * cap : 16;
        fc_line *nl = realloc(*out, (size_t)cap * sizeof *nl);
        if (!nl) return n;
        *out = nl;
      }
      f.line = line;
      (*out)[n++] = f;
    }
    p = eol + 1;
  }
  return n;
}

static const char *fc_kind_name(int kind) {
  static const char *const names[] = {"CHECK", "CHECK-NEXT", "CHECK-SAME", "CHECK-EMPTY",
                                      "CHECK-NOT"};
  return names[kind];
}

/* Matches the chunk's CHECK lines against what it printed. */
static chunk_result check_output(const check_ctx *cx, const char *text, size_t len,
                                 int line_offset) {
  fc_line *ck = NULL;
  int nck = fc_collect(text, len, line_offset, &ck);
  chunk_result r = CHUNK_PASS;
  if (nck > 0) {
    fc_text t;
    const outbuf *o = &cx->interp->out;
    if (fc_split(o->s ? o->s : "", o->n, &t)) {
      r = chunk_fail(cx, line_offset + 1, XRT_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      int bad = fc_match(ck, nck, &t);
      if (bad >= 0) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s:%d: %s: %s '%.*s' in the output", cx->file,
                 ck[bad].line, fc_kind_name(ck[bad].kind),
                 ck[bad].kind == FC_NOT ? "found excluded string" : "expected string not found:",
                 (int)ck[bad].len, ck[bad].pat);
        r = chunk_fail(cx, ck[bad].line, XRT_CHECK_FAILED, msg);
      }
    }
    free(t.buf);
    free(t.lines);
  }
  free(ck);
  return r;
}

static int has_main(const xrt_ir_module *m) {
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, "main") == 0) return 1;
  return 0;
}

/* Is the chunk only blanks and // comments?  (MLIR accepts it as an empty
 * module, which has nothing to run.) */
static int chunk_is_empty(const char *p, size_t len) {
  const char *end = p + len;
  while (p < end) {
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
      p++;
    } else if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
      while (p < end && *p != '\n') p++;
    } else {
      return 0;
    }
  }
  return 1;
}

/* Runs one chunk.  The entry is main or the only function, as xrt_compile
 * picks it; a chunk with several functions and no main (several tests in
 * one chunk) runs each function that takes no arguments, as the StableHLO
 * interpreter's tests expect; a chunk with no function at all passes. */
static chunk_result check_chunk(const check_ctx *cx, const char *text, size_t len,
                                int line_offset) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = cx->file;
  co.line_offset = line_offset;
  int line = line_offset + 1;
  if (chunk_is_empty(text, len)) {
    if (cx->verbose) printf("%s:%d: pass (empty)\n", cx->file, line);
    return CHUNK_PASS;
  }
  xrt_program *prog = NULL;
  interp_reset(cx->interp);
  xrt_status s = xrt_program_parse(text, len, &co, &prog);
  if (s) return chunk_fail(cx, line, s, xrt_last_error());
  const xrt_ir_module *m = xrt_program_module(prog);
  cx->interp->module = m;
  cx->interp->prog = prog; /* for interpreter.run_parallel */
  cx->interp->text = text;
  cx->interp->len = len;
  cx->interp->file = cx->file;
  cx->interp->line_offset = line_offset;
  chunk_result r = CHUNK_PASS;
  if (!m) {
    r = chunk_fail(cx, line, xrt_last_status(), xrt_last_error());
  } else if (m->num_funcs <= 1 || has_main(m)) {
    if (m->num_funcs > 0) r = check_entry(cx, line, prog, &co, NULL);
  } else {
    int ran = 0;
    for (int32_t i = 0; i < m->num_funcs && r == CHUNK_PASS; i++) {
      if (m->funcs[i].body.num_args != 0) continue;
      ran++;
      r = check_entry(cx, line, prog, &co, m->funcs[i].name);
    }
    if (!ran)
      r = chunk_fail(cx, line, XRT_NOT_FOUND,
                     "no function @main and no function without arguments to run");
  }
  if (r == CHUNK_PASS && cx->filecheck) r = check_output(cx, text, len, line_offset);
  if (r == CHUNK_PASS && cx->verbose) printf("%s:%d: pass\n", cx->file, line);
  cx->interp->module = NULL;
  cx->interp->prog = NULL;
  cx->interp->text = NULL;
  xrt_program_release(prog);
  return r;
}

/* Is the line [p, end) the split marker "// -----" (trailing blanks ok)? */
static int is_split_line(const char *p, const char *end) {
  static const char marker[] = "// -----";
  size_t n = sizeof marker - 1;
  if ((size_t)(end - p) < n || memcmp(p, marker, n) != 0) return 0;
  for (p += n; p < end; p++)
    if (*p != ' ' && *p != '\t' && *p != '\r') return 0;
  return 1;
}

/* Reads the file's `// RUN:` lines: a `stablehlo-translate --interpret`
 * line piped to a plain `FileCheck %s` (not `not ...`, no other
 * --check-prefix) turns on result printing and CHECK matching; its
 * --args="[...]" gives the entry's arguments. */
static void scan_run_lines(check_ctx *cx, const char *text, size_t len) {
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *q = skip_blanks(p, eol);
    if (eol - q > 2 && q[0] == '/' && q[1] == '/') {
      q = skip_blanks(q + 2, eol);
      if (eol - q > 4 && strncmp(q, "RUN:", 4) == 0) {
        q = skip_blanks(q + 4, eol);
        size_t n = (size_t)(eol - q);
        char *run = malloc(n + 1);
        if (run) {
          memcpy(run, q, n);
          run[n] = 0;
          int ours = strncmp(run, "not ", 4) != 0 && strstr(run, "--interpret") &&
                     strstr(run, "FileCheck") && !strstr(run, "check-prefix");
          const char *a = ours ? strstr(q, "--args=") : NULL;
          if (ours) cx->filecheck = 1;
          if (a && !cx->args) {
            a += 7;
            const char *e;
            if (*a == '"' || *a == '\'') {
              e = memchr(a + 1, *a, (size_t)(eol - a - 1));
              a++;
              if (!e) e = eol;
            } else {
              for (e = a; e < eol && *e != ' '; e++) {}
            }
            cx->args = a;
            cx->args_len = (size_t)(e - a);
          }
          free(run);
        }
      }
    }
    p = eol + 1;
  }
}

static int cmd_check(int argc, char **argv) {
  const char *file = NULL, *cache_dir = getenv("XRT_CACHE_DIR"), *v = NULL;
  int split = 0, verbose = 0;
  if (cache_dir && !*cache_dir) cache_dir = NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--split-input-file") == 0 || strcmp(argv[i], "-split-input-file") == 0)
      split = 1;
    else if (option_value(argc, argv, &i, "--cache-dir", &v)) {
      if (!v || !*v) return usage_error("%s needs a directory", "--cache-dir");
      cache_dir = v;
    }
    else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0)
      verbose = 1;
    else if (argv[i][0] == '-' && argv[i][1])
      return usage_error("check: unknown option '%s'", argv[i]);
    else if (file)
      return usage_error("check: more than one file ('%s')", argv[i]);
    else
      file = argv[i];
  }
  if (!file) return usage_error("%s: no file given", "check");
  char *text;
  size_t len;
  xrt_disk_cache *cache = NULL;
  int rc = open_disk_cache(cache_dir, &cache);
  if (rc) return rc;
  if (read_file(file, &text, &len)) {
    close_disk_cache(cache);
    return EXIT_ERROR;
  }
  interp_state ist;
  interp_init(&ist);
  ist.out.keep = 1;
  check_ctx cx;
  memset(&cx, 0, sizeof cx);
  cx.file = file;
  cx.verbose = verbose;
  cx.interp = &ist;
  scan_run_lines(&cx, text, len);
  xrt_client_options opt;
  xrt_client_options_init(&opt);
#ifdef XRT_HAVE_DISK_CACHE
  if (cache) opt.cache_store = xrt_disk_cache_store(cache);
#endif
  if (mpi_job.on) opt.topology.process_count = 1; /* this process alone */
  xrt_status s = xrt_client_create(&opt, &cx.client);
  if (!s) s = interp_register(cx.client, &ist);
  if (s) {
    xrt_client_release(cx.client);
    close_disk_cache(cache);
    interp_free(&ist);
    free(text);
    return report(s, NULL);
  }
  int passed = 0, failed = 0, errors = 0;
  const char *chunk = text, *p = text, *end = text + len;
  int line = 0, chunk_line = 0; /* lines before p; before chunk */
  while (p <= end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    int at_end = eol == end;
    if ((split && is_split_line(p, eol)) || at_end) {
      const char *stop = at_end ? end : p;
      chunk_result r = check_chunk(&cx, chunk, (size_t)(stop - chunk), chunk_line);
      passed += r == CHUNK_PASS;
      failed += r == CHUNK_CHECK_FAILED;
      errors += r == CHUNK_ERROR;
      chunk = eol + 1;
      chunk_line = line + 1;
    }
    line++;
    if (at_end) break;
    p = eol + 1;
  }
  printf("%d passed, %d failed\n", passed, failed + errors);
  fflush(stdout);
  xrt_client_release(cx.client);
  close_disk_cache(cache);
  interp_free(&ist);
  free(text);
  return errors ? EXIT_ERROR : failed ? EXIT_CHECK : EXIT_PASS;
}

/* ====================================================================== */

int main(int argc, char **argv) {
  if (argc < 2) return usage_error("%s", "no command given");
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    fputs(usage_text, stdout);
    return EXIT_PASS;
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("xrt %s\n", XRT_VERSION_STRING);
    return EXIT_PASS;
  }
  int is_run = !strcmp(cmd, "run");
  if (!is_run && strcmp(cmd, "check")) return usage_error("unknown command '%s'", cmd);
  int rc = take_mpi_flag(&argc, argv) ? mpi_begin() : 0;
  if (rc) return rc;
  int in_job = mpi_job.on;
  rc = is_run ? cmd_run(argc, argv) : cmd_check(argc, argv);
  return in_job ? mpi_end(rc) : rc;
}
