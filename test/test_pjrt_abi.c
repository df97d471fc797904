/* test_pjrt_abi.c - src/pjrt/pjrt_abi.h against the PJRT C API 0.60 ABI.
 *
 * Builds a table of every struct size, member offset and size,
 * *_STRUCT_SIZE value and enum constant (the list is test/pjrt_abi_fields.h)
 * from our header, checks that it is consistent with itself, and, when the
 * build found upstream's pjrt_c_api.h in ../shared/pjrt
 * (XRT_TEST_HAVE_UPSTREAM_PJRT, with test/pjrt_abi_upstream.c linked in),
 * compares it row by row with the same table built from upstream's header.
 * Every mismatch is reported by name before the test fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../src/pjrt/pjrt_abi.h"
#include "pjrt_abi_fields.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Number of function entries of PJRT_Api at version 0.60. */
#define API_FUNCTIONS 104

/* The strictest alignment of a member type of the ABI: padding is shorter. */
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define MAX_ALIGN \
  MAX2(_Alignof(void *), MAX2(_Alignof(int64_t), _Alignof(size_t)))

static const xrt_pjrt_abi_entry ours[] = {
#define XRT_PJRT_STRUCT(S) {#S, XRT_PJRT_KIND_STRUCT, (long long)sizeof(S), 0},
#define XRT_PJRT_FIELD(S, f)                                       \
  {#S "." #f, XRT_PJRT_KIND_FIELD, (long long)offsetof(S, f),      \
   (long long)sizeof(((S *)0)->f)},
#define XRT_PJRT_STRUCT_SIZE(S, f)                                 \
  {#S "_STRUCT_SIZE", XRT_PJRT_KIND_STRUCT_SIZE,                   \
   (long long)(S##_STRUCT_SIZE),                                   \
   (long long)(offsetof(S, f) + sizeof(((S *)0)->f))},
#define XRT_PJRT_ENUM(E) {#E, XRT_PJRT_KIND_ENUM, (long long)(E), 0},
#include "pjrt_abi_fields.h"
    {"PJRT_API_MAJOR", XRT_PJRT_KIND_VALUE, PJRT_API_MAJOR, 0},
    {"PJRT_API_MINOR", XRT_PJRT_KIND_VALUE, PJRT_API_MINOR, 0},
};

#ifdef XRT_TEST_HAVE_UPSTREAM_PJRT
extern const xrt_pjrt_abi_entry xrt_pjrt_abi_upstream[];
extern const size_t xrt_pjrt_abi_upstream_count;
#endif

static size_t count_kind(int kind) {
  size_t n = 0;
  for (size_t i = 0; i < COUNT(ours); i++) n += ours[i].kind == kind;
  return n;
}

/* Checks the rows of one struct, ours[s] (its STRUCT row) to the row before
 * `end`: members in order, inside the struct, with no gap larger than
 * padding (so a member left out of the list shows), and the last one ending
 * within padding of the struct's end; *_STRUCT_SIZE as PJRT_STRUCT_SIZE
 * computes it.  Returns the number of problems, each printed. */
static int check_struct(size_t s, size_t end) {
  const xrt_pjrt_abi_entry *st = &ours[s];
  const long long pad = (long long)MAX_ALIGN;
  long long prev_off = -1, prev_end = 0, max_end = 0;
  int bad = 0, nfields = 0;
  for (size_t i = s + 1; i < end; i++) {
    const xrt_pjrt_abi_entry *e = &ours[i];
    if (e->kind == XRT_PJRT_KIND_FIELD) {
      nfields++;
      if (e->a + e->b > st->a) {
        print_error("%s: ends at %lld, past sizeof %lld\n", e->name,
                    e->a + e->b, st->a);
        bad++;
      }
      /* Members of an anonymous union share their offset. */
      if (e->a != prev_off) {
        if (e->a < prev_end || e->a - prev_end >= pad) {
          print_error("%s: at offset %lld after a member ending at %lld "
                      "(out of order, or a member missing from the list)\n",
                      e->name, e->a, prev_end);
          bad++;
        }
        prev_off = e->a;
        prev_end = e->a + e->b;
      } else if (e->a + e->b > prev_end) {
        prev_end = e->a + e->b;
      }
      if (prev_end > max_end) max_end = prev_end;
    } else if (e->kind == XRT_PJRT_KIND_STRUCT_SIZE) {
      if (e->a != e->b || e->a > st->a) {
        print_error("%s is %lld, its member ends at %lld (sizeof %s %lld)\n",
                    e->name, e->a, e->b, st->name, st->a);
        bad++;
      }
    }
  }
  if (nfields == 0 || st->a - max_end >= pad) {
    print_error("%s: sizeof %lld but its %d listed members end at %lld "
                "(a member missing from the list?)\n",
                st->name, st->a, nfields, max_end);
    bad++;
  }
  return bad;
}

static void test_self_consistency(void **state) {
  (void)state;
  int bad = 0;
  for (size_t i = 0; i < COUNT(ours); i++) {
    if (ours[i].kind != XRT_PJRT_KIND_STRUCT) continue;
    size_t end = i + 1;
    while (end < COUNT(ours) && ours[end].kind != XRT_PJRT_KIND_STRUCT &&
           ours[end].kind != XRT_PJRT_KIND_ENUM)
      end++;
    bad += check_struct(i, end);
  }
  /* Row names are unique. */
  for (size_t i = 0; i < COUNT(ours); i++)
    for (size_t j = i + 1; j < COUNT(ours); j++)
      if (strcmp(ours[i].name, ours[j].name) == 0) {
        print_error("%s: listed twice\n", ours[i].name);
        bad++;
      }
  printf("checked our header alone: %zu structs, %zu fields, "
         "%zu *_STRUCT_SIZE, %zu enum constants\n",
         count_kind(XRT_PJRT_KIND_STRUCT), count_kind(XRT_PJRT_KIND_FIELD),
         count_kind(XRT_PJRT_KIND_STRUCT_SIZE),
         count_kind(XRT_PJRT_KIND_ENUM));
  assert_int_equal(bad, 0);
}

/* The function table: 104 entries after struct_size, extension_start and
 * pjrt_api_version, every one listed, and the version macros. */
static void test_api_table(void **state) {
  (void)state;
  size_t listed = 0;
  for (size_t i = 0; i < COUNT(ours); i++)
    listed += ours[i].kind == XRT_PJRT_KIND_FIELD &&
              strncmp(ours[i].name, "PJRT_Api.", 9) == 0;
  size_t first = offsetof(PJRT_Api, PJRT_Error_Destroy);
  size_t fns = (sizeof(PJRT_Api) - first) / sizeof(PJRT_Error_Destroy *);
  assert_int_equal(first, offsetof(PJRT_Api, pjrt_api_version) +
                              sizeof(PJRT_Api_Version));
  assert_int_equal(fns, API_FUNCTIONS);
  assert_int_equal(listed, 3 + API_FUNCTIONS);
  assert_int_equal(PJRT_Api_STRUCT_SIZE, sizeof(PJRT_Api));
  assert_int_equal(
      offsetof(PJRT_Api, PJRT_Client_CreateBuffersForAsyncHostToDevice),
      first + (API_FUNCTIONS - 1) * sizeof(PJRT_Error_Destroy *));
  assert_int_equal(PJRT_API_MAJOR, 0);
  assert_int_equal(PJRT_API_MINOR, 60);

  /* A table fills in and calls like upstream's. */
  PJRT_Api api;
  memset(&api, 0, sizeof api);
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
  assert_null(api.PJRT_Client_Create);
  assert_int_equal(api.pjrt_api_version.minor_version, 60);
}

static void test_upstream(void **state) {
  (void)state;
#ifdef XRT_TEST_HAVE_UPSTREAM_PJRT
  int bad = 0;
  size_t n = xrt_pjrt_abi_upstream_count;
  if (n != COUNT(ours)) {
    print_error("table sizes differ: ours %zu rows, upstream %zu\n",
                COUNT(ours), n);
    bad++;
    if (n > COUNT(ours)) n = COUNT(ours);
  }
  for (size_t i = 0; i < n; i++) {
    const xrt_pjrt_abi_entry *o = &ours[i], *u = &xrt_pjrt_abi_upstream[i];
    if (strcmp(o->name, u->name) != 0 || o->kind != u->kind) {
      print_error("row %zu: ours is %s, upstream's %s\n", i, o->name,
                  u->name);
      bad++;
      continue;
    }
    if (o->a == u->a && o->b == u->b) continue;
    bad++;
    switch (o->kind) {
      case XRT_PJRT_KIND_STRUCT:
        print_error("sizeof %s: ours %lld, upstream %lld\n", o->name, o->a,
                    u->a);
        break;
      case XRT_PJRT_KIND_FIELD:
        print_error("%s: ours at offset %lld size %lld, upstream at offset "
                    "%lld size %lld\n",
                    o->name, o->a, o->b, u->a, u->b);
        break;
      case XRT_PJRT_KIND_STRUCT_SIZE:
        print_error("%s: ours %lld, upstream %lld\n", o->name, o->a, u->a);
        break;
      default:
        print_error("%s: ours %lld, upstream %lld\n", o->name, o->a, u->a);
        break;
    }
  }
  printf("compared with upstream pjrt_c_api.h: %zu rows (%zu structs, %zu "
         "fields, %zu *_STRUCT_SIZE, %zu enum constants, 2 version macros), "
         "%d differ\n",
         COUNT(ours), count_kind(XRT_PJRT_KIND_STRUCT),
         count_kind(XRT_PJRT_KIND_FIELD),
         count_kind(XRT_PJRT_KIND_STRUCT_SIZE),
         count_kind(XRT_PJRT_KIND_ENUM), bad);
  assert_int_equal(bad, 0);
#else
  printf("skipped upstream comparison: ../shared/pjrt not found "
         "(checked our header alone)\n");
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_self_consistency),
      cmocka_unit_test(test_api_table),
      cmocka_unit_test(test_upstream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
