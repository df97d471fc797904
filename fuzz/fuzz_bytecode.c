/* libFuzzer target: portable artifacts (MLIR bytecode of VHLO) -> read ->
 * parse + verify.  Every input is made to start with the bytecode magic,
 * so that all of it exercises the reader.  Any crash, leak or UBSan report
 * is a finding; error statuses are fine.  Build and run: see
 * fuzz/README.md. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

/* Larger inputs only take longer, they reach no other code. */
#define FUZZ_MAX_BYTES (256 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_BYTES) return 0;
  char *buf = malloc(size + 4);
  if (!buf) return 0;
  memcpy(buf, "ML\xefR", 4);
  /* inputs from the seeds already have the magic: keep them as they are */
  size_t n = size >= 4 && !memcmp(data, "ML\xefR", 4) ? 0 : 4;
  memcpy(buf + n, data, size);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "fuzz.mlir.bc";
  xrt_program *p = NULL;
  if (xrt_program_parse(buf, size + n, &o, &p) == XRT_OK) xrt_program_release(p);
  free(buf);
  return 0;
}
