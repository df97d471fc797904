/* fake_bad.c - misbehaves as FAKE_BAD_MODE says, read when loaded and at
 * each call: create_err, create_null, count_neg, count_huge, count_null
 * (no device_count), describe_err, describe_nokind, describe_badattrs,
 * alloc_err, alloc_null, write_err, read_err, compile_null,
 * platform_err, platform_badver, op_garbage. */
#define FAKE_NAME "fake_bad"
#define FAKE_BAD
#define FAKE_DESCRIBE
#define FAKE_OP_SUPPORT
#include "fake_plugin.h"

static xrt_plugin_api fake_api;

const xrt_plugin_api *xrt_plugin_get_api(void) {
  static const xrt_plugin_api full = {
      .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
      .abi_minor = FAKE_ABI_MINOR, FAKE_TABLE_ENTRIES,
      .platform_describe = fake_platform_describe,
      .op_support = fake_op_support};
  fake_api = full;
  if (fake_bad("count_null")) fake_api.device_count = NULL;
  return &fake_api;
}
