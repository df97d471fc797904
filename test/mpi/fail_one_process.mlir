// A check.* op that fails inside one participant of interpreter.run_parallel:
// the participant of replica 1, which `xrt check --mpi` under
// `mpirun -np 2` runs on process 1 alone.  Every process must exit non-zero
// (test/mpi/test_cli_mpi.sh); process 0 reports process 1's failure.
func.func @good() -> tensor<2xi32> {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

func.func @bad() -> tensor<2xi32> {
  %0 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[3, 5]> : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

func.func @main() {
  %r:2 = "interpreter.run_parallel"() {
    programs = [[@good], [@bad]]
  } : () -> (tensor<2xi32>, tensor<2xi32>)
  check.expect_eq_const %r#0, dense<[1, 2]> : tensor<2xi32>
  func.return
}
