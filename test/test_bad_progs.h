/*
 * test_bad_progs.h - tables of programs that the parser, the verifier or a
 * rewrite refuses, each with its status, the "file:line:col:" its message
 * starts with and a fragment of the message (test_parse_errors.c,
 * test_parse_ops_errors.c, test_verify_errors.c,
 * test_verify_linalg_errors.c, test_chlo_errors.c), and the one-op
 * program builders they share.
 */
#ifndef XRT_TEST_BAD_PROGS_H
#define XRT_TEST_BAD_PROGS_H

#include "test_util.h"

#define IA XRT_INVALID_ARGUMENT
#define UN XRT_UNIMPLEMENTED

/* @main of one op (written out in op, generic or pretty) of one, two or
 * three operands of types ti (ta, tb, tc) and a result of type to. */
#define U1(op, ti, to)                                                       \
  "func.func @main(%a: " ti ") -> " to " {\n  %0 = " op " : (" ti ") -> " to \
  "\n  func.return %0 : " to "\n}\n"
#define B2(op, ta, tb, to)                                                    \
  "func.func @main(%a: " ta ", %b: " tb ") -> " to " {\n  %0 = " op " : (" ta \
  ", " tb ") -> " to "\n  func.return %0 : " to "\n}\n"
#define T3(op, ta, tb, tc, to)                                 \
  "func.func @main(%a: " ta ", %b: " tb ", %c: " tc ") -> " to \
  " {\n  %0 = " op " : (" ta ", " tb ", " tc ") -> " to        \
  "\n  func.return %0 : " to "\n}\n"

typedef struct tu_bad_prog {
  const char *text;
  xrt_status code;         /* XRT_OK: any failure */
  const char *where, *sub; /* the message's prefix, a fragment (or NULL) */
} tu_bad_prog;

/* Each program of the table cases must fail to parse as it says. */
static inline void tu_bad_progs(const tu_bad_prog *cases, size_t n) {
  for (size_t i = 0; i < n; i++)
    tu_parse_fails(cases[i].text, NULL, cases[i].code, cases[i].where,
                   cases[i].sub);
}
#define TU_BAD_PROGS(cases) tu_bad_progs((cases), TU_COUNT(cases))

/* A cmocka test function name running the table cases. */
#define TU_BAD_PROGS_TEST(name, cases)                                      \
  static void name(void **state) {                                         \
    (void)state;                                                           \
    TU_BAD_PROGS(cases);                                                   \
  }

#endif /* XRT_TEST_BAD_PROGS_H */
