/*
 * common.c - helpers every command of the xrt command-line tool shares:
 * reading a file, matching an option, reporting a failed call, loading the
 * entry's arguments from --input files.  MIT licensed; see LICENSE.
 */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file into a NUL-terminated heap string (cli.h). */
int cli_read_file(const char *path, char **out, size_t *out_len) {
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

int cli_report(xrt_status s, const char *what) {
  fprintf(stderr, "xrt: %s%s%s [%s]\n", what ? what : "", what ? ": " : "",
          xrt_last_error(), xrt_strerror(s));
  return s == XRT_CHECK_FAILED ? CLI_EXIT_CHECK : CLI_EXIT_ERROR;
}

int cli_option(int argc, char **argv, int *i, const char *name,
               const char **value) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != 0) return 0;
  *value = *i + 1 < argc ? argv[++*i] : NULL;
  return 1;
}

/* What the entry takes, one line an argument, after a count mismatch. */
static void print_signature(xrt_executable *exe, int want) {
  for (int i = 0; i < want; i++) {
    xrt_shape s;
    char type[256] = "?";
    if (!xrt_executable_input_shape(exe, i, &s)) xrt_shape_format(&s, type, sizeof type);
    fprintf(stderr, "  argument %d: %s\n", i, type);
  }
}

int cli_load_npy_inputs(xrt_client *client, xrt_device *dev, xrt_executable *exe,
                        const char *const *files, int num_files, xrt_buffer **args) {
  int want = xrt_executable_num_inputs(exe);
  if (want != num_files) {
    fprintf(stderr, "xrt: @%s takes %d argument%s but %d --input file%s given\n",
            xrt_executable_name(exe), want, want == 1 ? "" : "s", num_files,
            num_files == 1 ? " was" : "s were");
    print_signature(exe, want);
    return CLI_EXIT_ERROR;
  }
  for (int i = 0; i < want; i++) {
    xrt_status s = xrt_buffer_from_npy(client, dev, files[i], &args[i]);
    if (s) return cli_report(s, NULL);
    xrt_shape got, expect;
    if (xrt_buffer_shape(args[i], &got) || xrt_executable_input_shape(exe, i, &expect))
      return cli_report(xrt_last_status(), NULL);
    char tg[256], te[256];
    xrt_shape_format(&got, tg, sizeof tg);
    xrt_shape_format(&expect, te, sizeof te);
    if (strcmp(tg, te) != 0) {
      fprintf(stderr, "xrt: %s holds %s but argument %d of @%s is %s\n", files[i], tg,
              i, xrt_executable_name(exe), te);
      return CLI_EXIT_ERROR;
    }
  }
  return 0;
}
