/* examples/pmap_train.c - data-parallel training with variables on 8
 * simulated devices.
 *
 * Fits y = x . w (linear regression, mean squared error) by plain SGD,
 * w <- w - lr * grad, the way JAX's pmap trains: every device holds a
 * copy of the parameters w (a variable, replicated over the 8 devices)
 * and its own slice of the batch (a sharded array); each step computes
 * the local gradient, sums it over the devices with all_reduce and
 * updates w in place.  The same steps run on the host in plain C, and the
 * program checks that both agree.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "xrt.h"

enum { DEVICES = 8, ROWS = 2 /* per device */, N = DEVICES * ROWS, F = 4, STEPS = 5 };
static const float lr = 0.1f;

/* One step on one device: (w, x, y) -> (new w, loss of the whole batch).
 * The constant is lr * 2 / N = 0.1 * 2 / 16, the gradient's scale of the
 * mean squared error. */
#define ALL_REDUCE_SUM(T)                                                    \
  "({\n"                                                                     \
  "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"                            \
  "      %s = stablehlo.add %a, %b : tensor<f32>\n"                          \
  "      stablehlo.return %s : tensor<f32>\n"                                \
  "  }) {replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>}" \
  " : (" T ") -> " T "\n"
static const char *program =
    "func.func @main(%w: tensor<4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xf32>)\n"
    "    -> (tensor<4xf32>, tensor<f32>) {\n"
    "  %pred = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]\n"
    "      : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2xf32>\n"
    "  %err = stablehlo.subtract %pred, %y : tensor<2xf32>\n"
    "  %g_local = stablehlo.dot_general %err, %x, contracting_dims = [0] x [0]\n"
    "      : (tensor<2xf32>, tensor<2x4xf32>) -> tensor<4xf32>\n"
    "  %g = \"stablehlo.all_reduce\"(%g_local) " ALL_REDUCE_SUM("tensor<4xf32>")
    "  %scale = stablehlo.constant dense<0.0125> : tensor<4xf32>\n"
    "  %step = stablehlo.multiply %g, %scale : tensor<4xf32>\n"
    "  %w_new = stablehlo.subtract %w, %step : tensor<4xf32>\n"
    "  %sq = stablehlo.multiply %err, %err : tensor<2xf32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %l_local = stablehlo.reduce(%sq init: %zero) applies stablehlo.add\n"
    "      across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %l = \"stablehlo.all_reduce\"(%l_local) " ALL_REDUCE_SUM("tensor<f32>")
    "  func.return %w_new, %l : tensor<4xf32>, tensor<f32>\n"
    "}\n";

/* The same step on the host; returns the loss (sum of squared errors). */
static float host_step(float *w, float x[N][F], const float *y) {
  float g[F] = {0}, loss = 0;
  for (int i = 0; i < N; i++) {
    float err = -y[i];
    for (int j = 0; j < F; j++) err += x[i][j] * w[j];
    for (int j = 0; j < F; j++) g[j] += err * x[i][j];
    loss += err * err;
  }
  for (int j = 0; j < F; j++) w[j] -= lr * 2.0f / N * g[j];
  return loss;
}

/* A batch from y = x . (1, -2, 3, 0.5) with x in a small grid. */
static void make_batch(float x[N][F], float *y) {
  const float w_true[F] = {1, -2, 3, 0.5f};
  for (int i = 0; i < N; i++) {
    y[i] = 0;
    for (int j = 0; j < F; j++) {
      x[i][j] = (float)((i * 7 + j * 3) % 5 - 2) / 2.0f;
      y[i] += x[i][j] * w_true[j];
    }
  }
}

int main(void) {
  float x[N][F], y[N], w_host[F] = {0}, w_dev[F], losses[DEVICES];
  bool agree = true; /* the devices' results match the host's */
  make_batch(x, y);

  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = DEVICES;
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = DEVICES;  /* replica i runs on device i */
  xrt_client *client = NULL;
  xrt_executable *exe = NULL;
  xrt_variable *w = NULL;
  xrt_sharded_array *xs = NULL, *ys = NULL;
  xrt_device *devs[DEVICES];

  xrt_status s = xrt_client_create(&o, &client);
  for (int d = 0; d < DEVICES && !s; d++) devs[d] = xrt_client_device(client, d);
  if (!s) s = xrt_compile(client, program, strlen(program), &co, &exe);

  /* w: the whole vector on every device (one mesh dimension, Replicated). */
  xrt_sharding_spec replicated;
  xrt_sharding_spec_init(&replicated, 1);
  replicated.num_mesh_dims = 1;
  replicated.mesh[0] = (xrt_mesh_mapping){.kind = XRT_MESH_REPLICATED, .replicas = DEVICES};
  const xrt_shape w_shape = {.dtype = XRT_F32, .rank = 1, .dims = {F}};
  const xrt_variable_format w_format = {&replicated, devs, DEVICES};
  const float w0[F] = {0};
  if (!s) s = xrt_variable_create(client, "w", &w_shape, w0, &w_format, &w);

  /* x and y: rows split into 8 chunks, chunk k on device k (the mesh
   * dimension walks sharded axis 0). */
  xrt_sharding_spec by_rows;
  xrt_sharding_spec_init(&by_rows, 2);
  by_rows.dims[0] = (xrt_dim_sharding){.kind = XRT_DIM_CHUNKED, .num_chunks = 1, .chunks = {DEVICES}};
  by_rows.num_mesh_dims = 1;
  by_rows.mesh[0] = (xrt_mesh_mapping){.kind = XRT_MESH_SHARDED_AXIS, .axis = 0};
  const xrt_shape x_shape = {.dtype = XRT_F32, .rank = 2, .dims = {N, F}};
  if (!s) s = xrt_sharded_array_from_host(client, &x_shape, x, &by_rows, devs, DEVICES, &xs);
  xrt_sharding_spec y_rows = by_rows;
  y_rows.rank = 1;
  const xrt_shape y_shape = {.dtype = XRT_F32, .rank = 1, .dims = {N}};
  if (!s) s = xrt_sharded_array_from_host(client, &y_shape, y, &y_rows, devs, DEVICES, &ys);

  for (int step = 0; step < STEPS && !s; step++) {
    /* Output 0 replaces argument 0 (the variable w, donated in place);
     * output 1, the loss, comes back as a new sharded array (one scalar
     * per device, stacked: shape [8]). */
    const xrt_variable_arg args[3] = {{.variable = w}, {.array = xs}, {.array = ys}};
    const int updates[2] = {0, -1};
    xrt_sharded_array *outs[2] = {NULL, NULL};
    s = xrt_execute_variables(exe, args, 3, updates, outs, 2, NULL);
    if (!s) s = xrt_sharded_array_to_host(outs[1], losses, sizeof losses);
    xrt_sharded_array_release(outs[1]);
    if (s) break;
    float expect = host_step(w_host, x, y); /* the loss before this step */
    printf("step %d: loss %.6f (host %.6f)\n", step, losses[0], expect);
    for (int d = 0; d < DEVICES; d++)
      if (fabsf(losses[d] - expect) > 1e-4f * (1 + expect)) agree = false;
  }
  if (!s) s = xrt_variable_to_host(w, w_dev, sizeof w_dev);
  if (!s) {
    printf("w = %g %g %g %g (host %g %g %g %g)\n", w_dev[0], w_dev[1], w_dev[2],
           w_dev[3], w_host[0], w_host[1], w_host[2], w_host[3]);
    for (int j = 0; j < F; j++)
      if (fabsf(w_dev[j] - w_host[j]) > 1e-5f) agree = false;
  } else {
    fprintf(stderr, "pmap_train: %s (%s)\n", xrt_last_error(), xrt_strerror(s));
  }
  if (!agree) fprintf(stderr, "pmap_train: the devices and the host disagree\n");
  xrt_variable_release(w);
  xrt_client_release(client); /* also releases xs, ys and the executable */
  return s || !agree ? 1 : 0;
}
