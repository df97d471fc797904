// interpreter.probe inside run_parallel participants: with `xrt check
// --mpi` under mpirun the participant of replica 1 probes on another
// process than @main's checks run on, and every process must still see
// both probes for check.expect_serialized_eq.
func.func @f0() -> tensor<2xi64> {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %1 = interpreter.probe %0, probe_id = "out" : tensor<2xi64>
  func.return %1 : tensor<2xi64>
}

func.func @f1() -> tensor<2xi64> {
  %0 = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %1 = stablehlo.add %0, %0 : tensor<2xi64>
  %2 = interpreter.probe %1, probe_id = "twice" : tensor<2xi64>
  func.return %2 : tensor<2xi64>
}

func.func @main() {
  %r:2 = "interpreter.run_parallel"() {
    programs = [[@f0], [@f1]]
  } : () -> (tensor<2xi64>, tensor<2xi64>)
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = stablehlo.constant dense<[6, 8]> : tensor<2xi64>
  check.expect_serialized_eq %a, probe_id = "out" : tensor<2xi64>
  check.expect_serialized_eq %b, probe_id = "twice" : tensor<2xi64>
  check.expect_eq_const %r#1, dense<[6, 8]> : tensor<2xi64>
  func.return
}
