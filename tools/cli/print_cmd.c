/*
 * print_cmd.c - `xrt print FILE [-o OUT]`: the program FILE holds, written
 * as StableHLO text in xrt_program_print's canonical form (so that two
 * files of one program, in pretty or generic syntax, with or without
 * locations, print the same).  MIT licensed; see LICENSE.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PRINT_OK = 0, PRINT_ERROR = 2 }; /* main.c's exit codes */

static int print_usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "xrt: print: %s%s%s\nusage: xrt print FILE [-o OUT] "
          "(see xrt --help)\n", msg, arg ? " " : "", arg ? arg : "");
  return PRINT_ERROR;
}

/* Writes text to path ("-" or NULL: stdout); 0 or an exit code. */
static int print_write(const char *path, const char *text, size_t len) {
  int to_stdout = !path || !strcmp(path, "-");
  FILE *f = to_stdout ? stdout : fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "xrt: %s: %s\n", path, strerror(errno));
    return PRINT_ERROR;
  }
  int bad = fwrite(text, 1, len, f) != len;
  bad |= to_stdout ? fflush(f) != 0 : fclose(f) != 0;
  if (bad) {
    fprintf(stderr, "xrt: %s: write error\n", to_stdout ? "stdout" : path);
    return PRINT_ERROR;
  }
  return PRINT_OK;
}

int cmd_print(int argc, char **argv) {
  const char *file = NULL, *out = NULL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (i + 1 >= argc) return print_usage_error(a, "needs a file");
      out = argv[++i];
    } else if (!strncmp(a, "--output=", 9)) {
      out = a + 9;
    } else if (a[0] == '-' && a[1]) {
      return print_usage_error("unknown option", a);
    } else if (file) {
      return print_usage_error("more than one file:", a);
    } else {
      file = a;
    }
  }
  if (!file) return print_usage_error("no file given", NULL);
  size_t len = 0;
  char *src = NULL; /* bytes: text or bytecode alike */
  if (cli_read_file(file, &src, &len)) return PRINT_ERROR;
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = file;
  xrt_program *prog = NULL;
  char *text = NULL;
  size_t n = 0;
  xrt_status s = xrt_program_parse(src, len, &o, &prog);
  if (!s) s = xrt_program_print(prog, &text, &n);
  free(src);
  xrt_program_release(prog);
  if (s) {
    fprintf(stderr, "xrt: %s [%s]\n", xrt_last_error(), xrt_strerror(s));
    return PRINT_ERROR;
  }
  int rc = print_write(out, text, n);
  free(text);
  return rc;
}
