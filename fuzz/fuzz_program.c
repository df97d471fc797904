/* libFuzzer target: StableHLO text -> parse + verify -> compile on the
 * simulator -> (small programs only) one execution on zero-filled inputs.
 * Any crash, leak or UBSan report is a finding; error statuses are fine.
 * Build and run: see fuzz/README.md. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

/* Caps that keep one input well under libFuzzer's timeout: executions
 * only for programs whose inputs and outputs are small, and never for
 * ops whose running time does not depend on the data size (loops, calls
 * out to the host). */
#define FUZZ_MAX_TEXT (64 * 1024)
#define FUZZ_MAX_IO_BYTES (256 * 1024)
#define FUZZ_MAX_ARGS 16

static xrt_client *fuzz_client;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_client = fuzz_client_create();
  return 0;
}

static int fuzz_mentions(const uint8_t *data, size_t size, const char *word) {
  size_t n = strlen(word);
  for (size_t i = 0; i + n <= size; i++)
    if (memcmp(data + i, word, n) == 0) return 1;
  return 0;
}

/* Whether the program may take unbounded time or block on zero inputs. */
static int fuzz_may_not_terminate(const uint8_t *data, size_t size) {
  static const char *const words[] = {"while", "custom_call", "infeed",
                                      "outfeed", "send", "recv", "call"};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (fuzz_mentions(data, size, words[i])) return 1;
  return 0;
}

static size_t fuzz_output_bytes(xrt_executable *exe, int n) {
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    xrt_shape s;
    if (xrt_executable_output_shape(exe, i, &s) != XRT_OK) return SIZE_MAX;
    total += xrt_shape_bytes(&s);
  }
  return total;
}

static void fuzz_run_once(xrt_executable *exe) {
  int nin = xrt_executable_num_inputs(exe);
  int nout = xrt_executable_num_outputs(exe);
  if (nin < 0 || nout < 0 || nin > FUZZ_MAX_ARGS || nout > FUZZ_MAX_ARGS)
    return;
  if (fuzz_output_bytes(exe, nout) > FUZZ_MAX_IO_BYTES) return;
  xrt_device *dev = xrt_client_device(fuzz_client, 0);
  xrt_buffer *args[FUZZ_MAX_ARGS] = {0}, *outs[FUZZ_MAX_ARGS] = {0};
  size_t in_bytes = 0;
  int made = 0;
  for (; made < nin; made++) {
    xrt_shape s;
    if (xrt_executable_input_shape(exe, made, &s) != XRT_OK) break;
    size_t b = xrt_shape_bytes(&s);
    in_bytes += b;
    if (in_bytes > FUZZ_MAX_IO_BYTES) break;
    void *zeros = calloc(1, b ? b : 1);
    if (!zeros) break;
    xrt_status st = xrt_buffer_from_host(fuzz_client, dev, &s, zeros, &args[made]);
    free(zeros);
    if (st != XRT_OK) break;
  }
  if (made == nin &&
      xrt_execute(exe, dev, args, nin, outs, nout, NULL) == XRT_OK) {
    for (int i = 0; i < nout; i++) {
      size_t b = xrt_buffer_bytes(outs[i]);
      void *host = malloc(b ? b : 1);
      if (host) xrt_buffer_to_host(outs[i], host, b);
      free(host);
      xrt_buffer_release(outs[i]);
    }
  }
  for (int i = 0; i < made; i++) xrt_buffer_release(args[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_TEXT) return 0;
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "fuzz.mlir";
  xrt_program *prog = NULL;
  if (xrt_program_parse((const char *)data, size, &co, &prog) != XRT_OK)
    return 0;
  xrt_executable *exe = NULL;
  if (xrt_compile_program(fuzz_client, prog, NULL, &exe) == XRT_OK) {
    if (!fuzz_may_not_terminate(data, size)) fuzz_run_once(exe);
    xrt_executable_release(exe);
  }
  xrt_program_release(prog);
  return 0;
}
