/* libFuzzer target: the .npy reader.  xrt.h reads .npy only from a path,
 * so each input is written to one temporary file (per process) and read
 * by xrt_buffer_from_npy and xrt_variable_create_from_npy; a buffer that
 * loads is read back to host memory.  Error statuses are fine; crashes,
 * leaks and UBSan reports are findings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"


static xrt_client *fuzz_client;
static char fuzz_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_remove_file(void) { unlink(fuzz_path); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_client = fuzz_client_create();
  snprintf(fuzz_path, sizeof fuzz_path, "/tmp/xrt-fuzz-npy-%ld.npy",
           (long)getpid());
  atexit(fuzz_remove_file);
  return 0;
}

static int fuzz_write_file(const uint8_t *data, size_t size) {
  FILE *f = fopen(fuzz_path, "wb");
  if (!f) return 0;
  int ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

/* Reads the buffer back (exercises the sizes the reader recorded). */
static void fuzz_read_back(xrt_buffer *buf) {
  size_t b = xrt_buffer_bytes(buf);
  void *host = malloc(b ? b : 1);
  if (host) xrt_buffer_to_host(buf, host, b);
  free(host);
}

/* A one-device, unsharded variable of the given rank. */
static void fuzz_variable(int rank) {
  xrt_sharding_spec spec;
  xrt_sharding_spec_init(&spec, rank);
  xrt_device *dev = xrt_client_device(fuzz_client, 0);
  xrt_variable_format fmt = {&spec, &dev, 1};
  xrt_variable *var = NULL;
  if (xrt_variable_create_from_npy(fuzz_client, "fuzz", fuzz_path, &fmt,
                                   &var) == XRT_OK)
    xrt_variable_release(var);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!fuzz_write_file(data, size)) return 0;
  xrt_device *dev = xrt_client_device(fuzz_client, 0);
  xrt_buffer *buf = NULL;
  int rank = size ? data[size - 1] % 4 : 0;
  if (xrt_buffer_from_npy(fuzz_client, dev, fuzz_path, &buf) == XRT_OK) {
    xrt_shape s;
    if (xrt_buffer_shape(buf, &s) == XRT_OK) rank = s.rank;
    fuzz_read_back(buf);
    xrt_buffer_release(buf);
  }
  fuzz_variable(rank);
  return 0;
}
