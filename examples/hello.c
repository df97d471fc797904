/* examples/hello.c - the smallest complete xrt program.
 *
 * Compiles a StableHLO function that adds two vectors, runs it on the
 * simulator ("sim", the device plugin built into libxrt) and prints the
 * sum.  Build and run it (make examples does both):
 *
 *   cc -std=c11 hello.c $(pkg-config --cflags --libs xrt) && ./a.out
 */
#include <stdio.h>
#include <string.h>

#include "xrt.h"

/* The program, as MLIR text: what jax.jit(f).lower(a, b).as_text() prints
 * for f = lambda a, b: a + b. */
static const char *program =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %sum = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %sum : tensor<4xf32>\n"
    "}\n";

int main(void) {
  xrt_client *client = NULL;     /* owns every device, buffer, executable */
  xrt_executable *exe = NULL;
  xrt_buffer *args[2] = {NULL, NULL}, *out = NULL;
  const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  float sum[4] = {0};
  const xrt_shape shape = {.dtype = XRT_F32, .rank = 1, .dims = {4}};

  /* Every call returns a status (XRT_OK is 0), so a chain of calls can
   * stop at the first failure; xrt_last_error() then says what and where. */
  xrt_status s = xrt_client_create(NULL, &client); /* defaults: 1 sim device */
  xrt_device *dev = s ? NULL : xrt_client_device(client, 0); /* borrowed */
  /* Parse, verify and compile in one call; a mistake in the program is
   * reported as "<input>:line:col: message". */
  if (!s) s = xrt_compile(client, program, strlen(program), NULL, &exe);
  /* Copy the inputs to the device: buffers are immutable device arrays. */
  if (!s) s = xrt_buffer_from_host(client, dev, &shape, a, &args[0]);
  if (!s) s = xrt_buffer_from_host(client, dev, &shape, b, &args[1]);
  /* Run and wait; the result is a new buffer on the same device. */
  if (!s) s = xrt_execute(exe, dev, args, 2, &out, 1, NULL);
  if (!s) s = xrt_buffer_to_host(out, sum, sizeof sum);

  if (s) {
    fprintf(stderr, "hello: %s (%s)\n", xrt_last_error(), xrt_strerror(s));
  } else {
    printf("%g %g %g %g\n", sum[0], sum[1], sum[2], sum[3]); /* 11 22 33 44 */
    for (int i = 0; i < 4; i++)
      if (sum[i] != a[i] + b[i]) s = XRT_INTERNAL; /* CI runs this */
  }
  /* Releasing the client releases what is still alive on it too (buffers
   * and executables may also be released one by one, earlier). */
  xrt_client_release(client);
  return s ? 1 : 0;
}
