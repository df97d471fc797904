/* fuzz_util.h - what the fuzz targets share. */
#ifndef XRT_FUZZ_UTIL_H
#define XRT_FUZZ_UTIL_H

#include <stdlib.h>

#include "xrt.h"

/* Device memory of the targets' clients: large enough for the programs
 * and files they run, small enough that a huge declared size fails. */
#define FUZZ_DEVICE_MEMORY (64u << 20)

/* The one-device, one-thread simulator client a target runs on; aborts
 * (a harness failure, not a finding) if it cannot be made. */
static inline xrt_client *fuzz_client_create(void) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 1;
  o.threads_per_device = 1;
  o.device_memory_bytes = FUZZ_DEVICE_MEMORY;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK) abort();
  return c;
}

#endif
