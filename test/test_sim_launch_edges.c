/*
 * test_sim_launch_edges.c - send / recv between the devices of one launch
 * (src/sim/launch.c) through the public API: one program whose replica 0
 * sends and replica 1 receives (a stablehlo.if on replica_id), run with
 * xrt_execute_multi (xrt.send / xrt.recv host functions are registered,
 * as the core asks, and must not be called).
 *
 * - a message that carries a token only (no bytes), and an empty tensor
 *   with a non-empty one, arrive, with the values checked;
 * - a recv whose size differs from the send's fails with
 *   INVALID_ARGUMENT naming the channel and both sizes.
 * Issue #25 (coverage of src/sim/launch.c).
 */
#include "test_util.h"

/* The core wants a host function for every send and recv; the simulator
 * calls it only for is_host_transfer ones, none here: counted to check. */
static int g_host_calls;
static xrt_status host_never(void *user, xrt_host_call *call) {
  (void)user;
  g_host_calls++;
  return xrt_host_call_fail(call, XRT_INTERNAL, "not a host transfer");
}

/* Runs src on 2 replicas, in[p] (4 x i32) as each one's argument; the
 * outputs (nout of them, out_bytes[j] each) into out[p][j].  Returns the
 * launch's status; its message in tu_msg. */
static xrt_status run2(const char *src, const int32_t in[2][4], int nout,
                       const size_t *out_bytes, void *out[2][2]) {
  xrt_client *c = tu_client(2, 0, 0);
  assert_int_equal(
      xrt_client_register_host_function(c, "xrt.send", host_never, NULL),
      XRT_OK);
  assert_int_equal(
      xrt_client_register_host_function(c, "xrt.recv", host_never, NULL),
      XRT_OK);
  g_host_calls = 0;
  xrt_executable *e = tu_compile(c, src, 2, NULL);
  xrt_shape sh = TU_SHAPE(XRT_S32, 4);
  xrt_buffer *args[2][1], *outs[2][2];
  memset(outs, 0, sizeof outs);
  for (int p = 0; p < 2; p++)
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, p), &sh,
                                          in[p], &args[p][0]),
                     XRT_OK);
  xrt_buffer *const *lists[2] = {args[0], args[1]};
  xrt_buffer **olists[2] = {outs[0], outs[1]};
  xrt_event *done = NULL;
  tu_msg[0] = 0;
  xrt_status s = xrt_execute_multi(e, lists, 2, 1, olists, nout, NULL, &done);
  if (s == XRT_OK) s = xrt_event_await(done);
  if (s != XRT_OK) tu_save_error();
  for (int p = 0; s == XRT_OK && p < 2; p++)
    for (int j = 0; j < nout; j++)
      assert_int_equal(xrt_buffer_to_host(outs[p][j], out[p][j], out_bytes[j]),
                       XRT_OK);
  if (done) xrt_event_release(done);
  for (int p = 0; p < 2; p++) {
    for (int j = 0; j < nout; j++)
      if (outs[p][j]) xrt_buffer_release(outs[p][j]);
    xrt_buffer_release(args[p][0]);
  }
  xrt_executable_release(e);
  xrt_client_release(c);
  assert_int_equal(g_host_calls, 0);
  return s;
}

#define PRELUDE                                                             \
  "module @m attributes {mhlo.num_replicas = 2 : i32} {\n"                  \
  "func.func @main(%a: tensor<4xi32>) -> (tensor<4xi32>, tensor<0xi32>) {\n" \
  "  %t = stablehlo.after_all : !stablehlo.token\n"                         \
  "  %id = stablehlo.replica_id : tensor<ui32>\n"                           \
  "  %z = stablehlo.constant dense<0> : tensor<ui32>\n"                     \
  "  %p = stablehlo.compare EQ, %id, %z : (tensor<ui32>, tensor<ui32>) "    \
  "-> tensor<i1>\n"                                                        \
  "  %e = stablehlo.constant dense<> : tensor<0xi32>\n"

/* Replica 0 sends a token alone on channel 2, then (after it) an empty
 * tensor and a plus one on channel 3; replica 1 receives channel 3 first
 * (passing over the older message of channel 2), then channel 2. */
static const char *kTokenAndEmpty =
    PRELUDE
    "  %r:2 = \"stablehlo.if\"(%p) ({\n"
    "    %s0 = \"stablehlo.send\"(%t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}\n"
    "      : (!stablehlo.token) -> !stablehlo.token\n"
    "    %one = stablehlo.constant dense<1> : tensor<4xi32>\n"
    "    %b = stablehlo.add %a, %one : tensor<4xi32>\n"
    "    %s1 = \"stablehlo.send\"(%e, %b, %s0) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>}\n"
    "      : (tensor<0xi32>, tensor<4xi32>, !stablehlo.token) -> "
    "!stablehlo.token\n"
    "    stablehlo.return %a, %e : tensor<4xi32>, tensor<0xi32>\n"
    "  }, {\n"
    "    %q:3 = \"stablehlo.recv\"(%t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>}\n"
    "      : (!stablehlo.token) -> (tensor<0xi32>, tensor<4xi32>, "
    "!stablehlo.token)\n"
    "    %q0 = \"stablehlo.recv\"(%q#2) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}\n"
    "      : (!stablehlo.token) -> !stablehlo.token\n"
    "    stablehlo.return %q#1, %q#0 : tensor<4xi32>, tensor<0xi32>\n"
    "  }) : (tensor<i1>) -> (tensor<4xi32>, tensor<0xi32>)\n"
    "  return %r#0, %r#1 : tensor<4xi32>, tensor<0xi32>\n"
    "}\n}\n";

static void test_token_and_empty_messages(void **state) {
  (void)state;
  const int32_t in[2][4] = {{3, -4, 5, 100}, {0, 0, 0, 0}};
  int32_t got[2][4], e0[1], e1[1];
  void *out[2][2] = {{got[0], e0}, {got[1], e1}};
  const size_t bytes[2] = {sizeof got[0], 0};
  xrt_status s = run2(kTokenAndEmpty, in, 2, bytes, out);
  if (s != XRT_OK) fail_msg("%s: %s", xrt_strerror(s), tu_msg);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(got[0][i], in[0][i]);
    assert_int_equal(got[1][i], in[0][i] + 1);
  }
}

/* Replica 0 sends 4 x i32 (16 bytes); replica 1 expects 2 x i32. */
static const char *kSizeMismatch =
    PRELUDE
    "  %r = \"stablehlo.if\"(%p) ({\n"
    "    %s0 = \"stablehlo.send\"(%a, %t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>}\n"
    "      : (tensor<4xi32>, !stablehlo.token) -> !stablehlo.token\n"
    "    %h = stablehlo.slice %a [0:2] : (tensor<4xi32>) -> tensor<2xi32>\n"
    "    stablehlo.return %h : tensor<2xi32>\n"
    "  }, {\n"
    "    %q:2 = \"stablehlo.recv\"(%t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>}\n"
    "      : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)\n"
    "    stablehlo.return %q#0 : tensor<2xi32>\n"
    "  }) : (tensor<i1>) -> tensor<2xi32>\n"
    "  %c = stablehlo.concatenate %r, %r, dim = 0 : (tensor<2xi32>, "
    "tensor<2xi32>) -> tensor<4xi32>\n"
    "  return %c, %e : tensor<4xi32>, tensor<0xi32>\n"
    "}\n}\n";

static void test_recv_size_mismatch(void **state) {
  (void)state;
  const int32_t in[2][4] = {{1, 2, 3, 4}, {0, 0, 0, 0}};
  int32_t got[2][4], e0[1], e1[1];
  void *out[2][2] = {{got[0], e0}, {got[1], e1}};
  const size_t bytes[2] = {sizeof got[0], 0};
  xrt_status s = run2(kSizeMismatch, in, 2, bytes, out);
  assert_int_equal(s, XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg,
                     "recv on channel 5 expects 8 bytes, the send had 16");
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_token_and_empty_messages),
        cmocka_unit_test(test_recv_size_mismatch))
