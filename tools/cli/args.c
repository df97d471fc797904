/*
 * args.c - the --args parser of the xrt command-line tool: the arguments a
 * `// RUN:` line gives the entry function, as
 * --args="[dense<...> : tensor<...>, ...]", made into buffers.  MIT
 * licensed; see LICENSE.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Skips blanks and newlines; used by every scanner of the tool. */
const char *cli_skip_blanks(const char *p, const char *end) {
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
  const char *ty = cli_skip_blanks(colon + 1, end);
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
xrt_status cli_make_args(xrt_client *client, const char *args, size_t args_len,
                         xrt_buffer ***out, int *n_out, char *msg, size_t cap) {
  *out = NULL;
  *n_out = 0;
  const char *p = cli_skip_blanks(args, args + args_len);
  const char *end = args + args_len;
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
  for (p = cli_skip_blanks(p, end); p < end && !s;) {
    const char *e = item_end(p, end), *t = e;
    while (t > p && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\n')) t--;
    int dense = t - p >= 6 && strncmp(p, "dense<", 6) == 0;
    s = arg_buffer(client, p, (size_t)(t - p), &bufs[n]);
    if (s)
      snprintf(msg, cap, "--args item %d '%.*s': expected dense<...> : tensor<...>%s%s",
               n, (int)(t - p), p, dense ? ": " : "", dense ? xrt_last_error() : "");
    else
      n++;
    p = e < end ? cli_skip_blanks(e + 1, end) : end;
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
