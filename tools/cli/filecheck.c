/*
 * filecheck.c - the FileCheck matcher of the xrt command-line tool: a
 * chunk's `// CHECK:` lines (CHECK, -NEXT, -SAME, -LABEL, -EMPTY, -NOT)
 * against what the chunk printed.  MIT licensed; see LICENSE.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  p = cli_skip_blanks(p, eol);
  if (eol - p < 2 || p[0] != '/' || p[1] != '/') return 0;
  p = cli_skip_blanks(p + 2, eol);
  if (eol - p < 5 || strncmp(p, "CHECK", 5) != 0) return 0;
  p += 5;
  for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
    size_t n = strlen(sfx[i].s);
    const char *q = p;
    if ((size_t)(eol - q) < n || strncmp(q, sfx[i].s, n) != 0) continue;
    q += n;
    if (eol - q >= 9 && strncmp(q, "{LITERAL}", 9) == 0) q += 9;
    if (q >= eol || *q != ':') continue;
    q = cli_skip_blanks(q + 1, eol);
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

/* Matches the chunk's CHECK lines against what it printed (out). */
int cli_filecheck(const char *file, const char *text, size_t len, int line_offset,
                  const char *out, size_t out_len, char *msg, size_t cap, int *line) {
  fc_line *ck = NULL;
  int nck = fc_collect(text, len, line_offset, &ck);
  int r = 0;
  if (nck > 0) {
    fc_text t;
    if (fc_split(out, out_len, &t)) {
      r = -1;
    } else {
      int bad = fc_match(ck, nck, &t);
      if (bad >= 0) {
        snprintf(msg, cap, "%s:%d: %s: %s '%.*s' in the output", file,
                 ck[bad].line, fc_kind_name(ck[bad].kind),
                 ck[bad].kind == FC_NOT ? "found excluded string" : "expected string not found:",
                 (int)ck[bad].len, ck[bad].pat);
        *line = ck[bad].line;
        r = 1;
      }
    }
    free(t.buf);
    free(t.lines);
  }
  free(ck);
  return r;
}
