/*
 * test/win/cmocka_mingw.c - the part of cmocka that xrt's tests use, for
 * the Windows build only.
 *
 * Debian has no mingw-w64 build of cmocka, so `make windows` compiles the
 * tests against the real /usr/include/cmocka.h (through
 * test/win/include/cmocka.h) and links this file: the functions that
 * header's macros call (_assert_int_equal, _assert_true, _fail,
 * _cmocka_run_group_tests, _test_malloc, ...).  Like cmocka, each test runs
 * under setjmp and a failed assertion longjmps out of it; teardown still
 * runs; the runner prints cmocka's "[ RUN      ]" lines and returns the
 * number of failed tests.  Linux builds link the real libcmocka.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Where the running test returns to when an assertion fails; NULL outside
 * a test (a failure there ends the program, as in cmocka). */
static jmp_buf *cm_jump;

void vprint_message(const char *const format, va_list args) {
  vprintf(format, args);
  fflush(stdout);
}

void vprint_error(const char *const format, va_list args) {
  vfprintf(stderr, format, args);
  fflush(stderr);
}

void print_message(const char *const format, ...) {
  va_list ap;
  va_start(ap, format);
  vprint_message(format, ap);
  va_end(ap);
}

void print_error(const char *const format, ...) {
  va_list ap;
  va_start(ap, format);
  vprint_error(format, ap);
  va_end(ap);
}

static void cm_stop(const char *file, int line) {
  print_error("%s:%d: error: Failure!\n", file, line);
  if (!cm_jump) exit(1);
  longjmp(*cm_jump, 1);
}

void _fail(const char *const file, const int line) { cm_stop(file, line); }

/* Set by skip(): the running test ends without failing, as in cmocka. */
static int cm_skipped;

void _skip(const char *const file, const int line) {
  (void)file;
  (void)line;
  cm_skipped = 1;
  if (!cm_jump) exit(0);
  longjmp(*cm_jump, 2);
}

void _assert_true(const LargestIntegralType result,
                  const char *const expression, const char *const file,
                  const int line) {
  if (result) return;
  print_error("%s\n", expression);
  cm_stop(file, line);
}

void _assert_return_code(const LargestIntegralType result, size_t rlen,
                         const LargestIntegralType error,
                         const char *const expression, const char *const file,
                         const int line) {
  /* result is negative when its top bit (of rlen bytes) is set */
  LargestIntegralType sign = (LargestIntegralType)1 << (rlen * 8 - 1);
  if (!(result & sign)) return;
  print_error("%s < 0, errno(%llu): %s\n", expression,
              (unsigned long long)error, strerror((int)error));
  cm_stop(file, line);
}

void _assert_int_equal(const LargestIntegralType a, const LargestIntegralType b,
                       const char *const file, const int line) {
  if (a == b) return;
  print_error("%llu (%#llx) != %llu (%#llx)\n", (unsigned long long)a,
              (unsigned long long)a, (unsigned long long)b,
              (unsigned long long)b);
  cm_stop(file, line);
}

void _assert_int_not_equal(const LargestIntegralType a,
                           const LargestIntegralType b, const char *const file,
                           const int line) {
  if (a != b) return;
  print_error("%llu (%#llx) == %llu (%#llx)\n", (unsigned long long)a,
              (unsigned long long)a, (unsigned long long)b,
              (unsigned long long)b);
  cm_stop(file, line);
}

void _assert_float_equal(const float a, const float b, const float epsilon,
                         const char *const file, const int line) {
  if (a == b || fabsf(a - b) <= epsilon) return;
  print_error("%f != %f (epsilon %f)\n", (double)a, (double)b,
              (double)epsilon);
  cm_stop(file, line);
}

void _assert_float_not_equal(const float a, const float b, const float epsilon,
                             const char *const file, const int line) {
  if (!(a == b || fabsf(a - b) <= epsilon)) return;
  print_error("%f == %f (epsilon %f)\n", (double)a, (double)b,
              (double)epsilon);
  cm_stop(file, line);
}

void _assert_string_equal(const char *const a, const char *const b,
                          const char *const file, const int line) {
  if (a && b && strcmp(a, b) == 0) return;
  if (!a && !b) return;
  print_error("\"%s\" != \"%s\"\n", a ? a : "(null)", b ? b : "(null)");
  cm_stop(file, line);
}

void _assert_string_not_equal(const char *const a, const char *const b,
                              const char *file, const int line) {
  if ((a || b) && (!a || !b || strcmp(a, b) != 0)) return;
  print_error("\"%s\" == \"%s\"\n", a ? a : "(null)", b ? b : "(null)");
  cm_stop(file, line);
}

/* The first differing byte, or size. */
static size_t cm_mem_diff(const void *a, const void *b, size_t size) {
  const unsigned char *x = (const unsigned char *)a;
  const unsigned char *y = (const unsigned char *)b;
  size_t i = 0;
  while (i < size && x[i] == y[i]) i++;
  return i;
}

void _assert_memory_equal(const void *const a, const void *const b,
                          const size_t size, const char *const file,
                          const int line) {
  size_t i = a && b ? cm_mem_diff(a, b, size) : 0;
  if (a && b && i == size) return;
  if (a && b)
    print_error("difference at offset %zu: 0x%02x != 0x%02x (%zu bytes)\n",
                i, ((const unsigned char *)a)[i],
                ((const unsigned char *)b)[i], size);
  else
    print_error("memory comparison with NULL\n");
  cm_stop(file, line);
}

void _assert_memory_not_equal(const void *const a, const void *const b,
                              const size_t size, const char *const file,
                              const int line) {
  if (a && b && cm_mem_diff(a, b, size) < size) return;
  print_error("%zu bytes are equal\n", size);
  cm_stop(file, line);
}

void _assert_in_range(const LargestIntegralType value,
                      const LargestIntegralType minimum,
                      const LargestIntegralType maximum,
                      const char *const file, const int line) {
  if (value >= minimum && value <= maximum) return;
  print_error("%llu is not within the range %llu-%llu\n",
              (unsigned long long)value, (unsigned long long)minimum,
              (unsigned long long)maximum);
  cm_stop(file, line);
}

void _assert_not_in_range(const LargestIntegralType value,
                          const LargestIntegralType minimum,
                          const LargestIntegralType maximum,
                          const char *const file, const int line) {
  if (value < minimum || value > maximum) return;
  print_error("%llu is within the range %llu-%llu\n",
              (unsigned long long)value, (unsigned long long)minimum,
              (unsigned long long)maximum);
  cm_stop(file, line);
}

/* test_malloc and friends: plain allocation (no leak tracking; the
 * Linux runs of the same tests under ASan check leaks). */
void *_test_malloc(const size_t size, const char *file, const int line) {
  (void)file;
  (void)line;
  return malloc(size);
}

void *_test_calloc(const size_t number_of_elements, const size_t size,
                   const char *file, const int line) {
  (void)file;
  (void)line;
  return calloc(number_of_elements, size);
}

void *_test_realloc(void *ptr, const size_t size, const char *file,
                    const int line) {
  (void)file;
  (void)line;
  return realloc(ptr, size);
}

void _test_free(void *const ptr, const char *file, const int line) {
  (void)file;
  (void)line;
  free(ptr);
}

/* Runs f(state) under setjmp: 0 when it returned or skipped, 1 when an
 * assertion failed in it. */
static int cm_run_guarded(CMUnitTestFunction f, void **state) {
  jmp_buf here;
  jmp_buf *volatile outer = cm_jump;
  int failed = 0;
  switch (setjmp(here)) { /* a context C11 7.13.1.1 allows */
  case 0:
    cm_jump = &here;
    f(state);
    break;
  case 1:
    failed = 1;
    break;
  default: /* skipped */
    break;
  }
  cm_jump = outer;
  return failed;
}

/* Fixtures return nonzero to fail; an assertion in one fails it too. */
static CMFixtureFunction cm_fixture;
static int cm_fixture_rc;
static void cm_fixture_call(void **state) { cm_fixture_rc = cm_fixture(state); }

static int cm_run_fixture(CMFixtureFunction f, void **state) {
  if (!f) return 0;
  cm_fixture = f;
  cm_fixture_rc = 0;
  return cm_run_guarded(cm_fixture_call, state) || cm_fixture_rc != 0;
}

/* One test with its fixtures: 0 passed, 1 failed. */
static int cm_run_one(const struct CMUnitTest *t, void *group_state) {
  void *state = t->initial_state ? t->initial_state : group_state;
  print_message("[ RUN      ] %s\n", t->name);
  cm_skipped = 0;
  int failed = cm_run_fixture(t->setup_func, &state);
  if (!failed) {
    failed = t->test_func ? cm_run_guarded(t->test_func, &state) : 0;
    failed |= cm_run_fixture(t->teardown_func, &state);
  }
  print_message("%s %s\n",
                failed       ? "[  FAILED  ]"
                : cm_skipped ? "[  SKIPPED ]"
                             : "[       OK ]",
                t->name);
  return failed;
}

int _cmocka_run_group_tests(const char *group_name,
                            const struct CMUnitTest *const tests,
                            const size_t num_tests,
                            CMFixtureFunction group_setup,
                            CMFixtureFunction group_teardown) {
  void *group_state = NULL;
  size_t failed = 0, tests_failed = 0;
  print_message("[==========] %s: Running %zu test(s).\n", group_name,
                num_tests);
  if (cm_run_fixture(group_setup, &group_state)) {
    print_error("[  ERROR   ] %s: group setup failed\n", group_name);
    return (int)(num_tests ? num_tests : 1);
  }
  char *failed_names = (char *)calloc(num_tests ? num_tests : 1, 1);
  for (size_t i = 0; i < num_tests; i++) {
    int f = cm_run_one(&tests[i], group_state);
    if (failed_names) failed_names[i] = (char)f;
    tests_failed += (size_t)f;
  }
  failed = tests_failed;
  if (cm_run_fixture(group_teardown, &group_state)) {
    print_error("[  ERROR   ] %s: group teardown failed\n", group_name);
    failed++;
  }
  print_message("[==========] %s: %zu test(s) run.\n", group_name, num_tests);
  print_message("[  PASSED  ] %zu test(s).\n", num_tests - tests_failed);
  if (failed) {
    print_message("[  FAILED  ] %s: %zu test(s), listed below:\n", group_name,
                  failed);
    for (size_t i = 0; failed_names && i < num_tests; i++)
      if (failed_names[i]) print_message("[  FAILED  ] %s\n", tests[i].name);
  }
  free(failed_names);
  return (int)failed;
}
