/*
 * pjrt_abi_upstream.c - the layout table of test/pjrt_abi_fields.h, built
 * from upstream's PJRT header (pjrt_c_api.h, found through
 * -I../shared/pjrt), for test_pjrt_abi to compare with the same table built
 * from src/pjrt/pjrt_abi.h.  Compiled only when ../shared/pjrt has the
 * header (see mk/test.mk); this file must not include any header of ours
 * besides the list.
 */
#include <stddef.h>

#include "pjrt_c_api.h"

#include "pjrt_abi_fields.h"

const xrt_pjrt_abi_entry xrt_pjrt_abi_upstream[] = {
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

const size_t xrt_pjrt_abi_upstream_count =
    sizeof xrt_pjrt_abi_upstream / sizeof xrt_pjrt_abi_upstream[0];
