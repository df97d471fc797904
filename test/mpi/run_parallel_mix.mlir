// interpreter.run_parallel with 2 replicas x 2 partitions for `xrt run
// --mpi` (test/mpi/test_cli_mpi.sh): an all_reduce over the replicas, the
// participants' ids, a host transfer from partition 0 to partition 1 of
// each replica (channel 7 in replica 0, 8 in replica 1) and a print in each
// participant.  Under mpirun the
// participants spread over the processes; the output must not change.
func.func @p0(%x : tensor<2xi64>, %t : !stablehlo.token) -> (tensor<2xi64>, tensor<2xui32>, !stablehlo.token) {
  %sum = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %s = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {
    replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
    channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>
  } : (tensor<2xi64>) -> tensor<2xi64>
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  %r1 = stablehlo.reshape %r : (tensor<ui32>) -> tensor<1xui32>
  %p1 = stablehlo.reshape %p : (tensor<ui32>) -> tensor<1xui32>
  %ids = stablehlo.concatenate %r1, %p1, dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
  %sent = "stablehlo.send"(%sum, %t) {
    channel_handle = #stablehlo.channel_handle<handle = 7, type = 2>,
    is_host_transfer = true
  } : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
  interpreter.print %ids : tensor<2xui32>
  func.return %sum, %ids, %sent : tensor<2xi64>, tensor<2xui32>, !stablehlo.token
}

func.func @p1(%x : tensor<2xi64>, %t : !stablehlo.token) -> (tensor<2xi64>, tensor<2xui32>, !stablehlo.token) {
  %got:2 = "stablehlo.recv"(%t) {
    channel_handle = #stablehlo.channel_handle<handle = 7, type = 3>,
    is_host_transfer = true
  } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
  %y = stablehlo.multiply %got#0, %x : tensor<2xi64>
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  %r1 = stablehlo.reshape %r : (tensor<ui32>) -> tensor<1xui32>
  %p1 = stablehlo.reshape %p : (tensor<ui32>) -> tensor<1xui32>
  %ids = stablehlo.concatenate %r1, %p1, dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
  interpreter.print %ids : tensor<2xui32>
  func.return %y, %ids, %got#1 : tensor<2xi64>, tensor<2xui32>, !stablehlo.token
}

func.func @q0(%x : tensor<2xi64>, %t : !stablehlo.token) -> (tensor<2xi64>, tensor<2xui32>, !stablehlo.token) {
  %sum = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %s = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {
    replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
    channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>
  } : (tensor<2xi64>) -> tensor<2xi64>
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  %r1 = stablehlo.reshape %r : (tensor<ui32>) -> tensor<1xui32>
  %p1 = stablehlo.reshape %p : (tensor<ui32>) -> tensor<1xui32>
  %ids = stablehlo.concatenate %r1, %p1, dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
  %sent = "stablehlo.send"(%sum, %t) {
    channel_handle = #stablehlo.channel_handle<handle = 8, type = 2>,
    is_host_transfer = true
  } : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
  interpreter.print %ids : tensor<2xui32>
  func.return %sum, %ids, %sent : tensor<2xi64>, tensor<2xui32>, !stablehlo.token
}

func.func @q1(%x : tensor<2xi64>, %t : !stablehlo.token) -> (tensor<2xi64>, tensor<2xui32>, !stablehlo.token) {
  %got:2 = "stablehlo.recv"(%t) {
    channel_handle = #stablehlo.channel_handle<handle = 8, type = 3>,
    is_host_transfer = true
  } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
  %y = stablehlo.multiply %got#0, %x : tensor<2xi64>
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  %r1 = stablehlo.reshape %r : (tensor<ui32>) -> tensor<1xui32>
  %p1 = stablehlo.reshape %p : (tensor<ui32>) -> tensor<1xui32>
  %ids = stablehlo.concatenate %r1, %p1, dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
  interpreter.print %ids : tensor<2xui32>
  func.return %y, %ids, %got#1 : tensor<2xi64>, tensor<2xui32>, !stablehlo.token
}

func.func @main() -> (tensor<2xi64>, tensor<2xui32>, tensor<2xi64>, tensor<2xui32>, tensor<2xi64>, tensor<2xui32>, tensor<2xi64>, tensor<2xui32>) {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
  %c = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %d = stablehlo.constant dense<[100, 200]> : tensor<2xi64>
  %t = stablehlo.after_all : !stablehlo.token
  %r:12 = "interpreter.run_parallel"(%a, %t, %c, %t, %b, %t, %d, %t) {
    programs = [[@p0, @p1], [@q0, @q1]]
  } : (tensor<2xi64>, !stablehlo.token, tensor<2xi64>, !stablehlo.token, tensor<2xi64>, !stablehlo.token, tensor<2xi64>, !stablehlo.token) ->
      (tensor<2xi64>, tensor<2xui32>, !stablehlo.token, tensor<2xi64>, tensor<2xui32>, !stablehlo.token,
       tensor<2xi64>, tensor<2xui32>, !stablehlo.token, tensor<2xi64>, tensor<2xui32>, !stablehlo.token)
  func.return %r#0, %r#1, %r#3, %r#4, %r#6, %r#7, %r#9, %r#10 : tensor<2xi64>, tensor<2xui32>, tensor<2xi64>, tensor<2xui32>, tensor<2xi64>, tensor<2xui32>, tensor<2xi64>, tensor<2xui32>
}
