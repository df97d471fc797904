# mk/mpi.mk - several processes over MPI (src/mpi; see "Multi-process" in
# xrt.h).
#
#   make test-mpi    each test/mpi/test_mpi_*.c under mpirun with 2 and 4
#                    processes, the CLI's MPI cases and the interpreter
#                    suite across processes, on the XRT_MPI=1 build
#                    (build-mpi, or build-asan-mpi with SAN=1), plus the
#                    plain xrt (build, build-asan) for the "without MPI"
#                    cases.  `make XRT_MPI=1 test-mpi` is the same.
#   make bench-mpi   bench/mpi/bench_mpi*.c under mpirun with 2 processes

MPIRUN := mpirun --allow-run-as-root --oversubscribe
MPI_NPROCS ?= 2 4
MPI_TESTS := $(patsubst test/mpi/%.c,%,$(sort $(wildcard test/mpi/test_mpi_*.c)))
MPI_BENCHES := $(patsubst bench/mpi/%.c,%,$(sort $(wildcard bench/mpi/bench_mpi*.c)))
# The two configurations test-mpi uses, whatever XRT_MPI says.
MPI_CONF := build$(SAN_SUFFIX)-mpi
PLAIN_CONF := build$(SAN_SUFFIX)

$(BUILD)/mpi/test_%: test/mpi/test_%.c test/mpi/mpi_util.h $(TEST_HDRS) $(LIB_A) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) -lcmocka $(LDLIBS)

$(BUILD)/mpi/bench_%: bench/mpi/bench_%.c bench/bench_util.h $(LIB_A) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

mpi-deps:
	@sh tools/deps.sh mpi

# A test that hangs (a lost peer) is killed after 5 minutes.  Under SAN=1,
# LeakSanitizer ignores what Open MPI itself keeps (test/mpi/lsan.supp;
# the slow unwinder sees through its unloaded components).
MPI_SANENV := ASAN_OPTIONS="fast_unwind_on_malloc=0 $$ASAN_OPTIONS" \
  LSAN_OPTIONS="suppressions=$(CURDIR)/test/mpi/lsan.supp $$LSAN_OPTIONS"
MPIRUN_X := $(MPIRUN) -x ASAN_OPTIONS -x LSAN_OPTIONS
test-mpi: | mpi-deps deps
	$(MAKE) --no-print-directory XRT_MPI=0 BUILD=$(PLAIN_CONF) $(PLAIN_CONF)/xrt
	$(MAKE) --no-print-directory XRT_MPI=1 BUILD=$(MPI_CONF) \
	  MPI_SHARE_OBJS=$(PLAIN_CONF) $(MPI_TESTS:%=$(MPI_CONF)/mpi/%) \
	  $(MPI_CONF)/xrt
	@$(MPI_SANENV) sh tools/run_tests.sh "mpi" $(foreach t,$(MPI_TESTS),$(foreach \
	  np,$(MPI_NPROCS),"timeout 300 $(MPIRUN_X) -np $(np) $(MPI_CONF)/mpi/$(t)")) \
	  "env XRT_BIN=$(MPI_CONF)/xrt XRT_BIN_PLAIN=$(PLAIN_CONF)/xrt MPIRUN='$(MPIRUN_X)' sh test/mpi/test_cli_mpi.sh" \
	  "env XRT_BIN=$(MPI_CONF)/xrt MPI_NPROCS='$(MPI_NPROCS)' MPIRUN='$(MPIRUN_X)' sh test/mpi/run_interpret_mpi.sh"

bench-mpi: | mpi-deps deps
	$(MAKE) --no-print-directory XRT_MPI=1 BUILD=$(MPI_CONF) $(MPI_BENCHES:%=$(MPI_CONF)/mpi/%)
	@for b in $(MPI_BENCHES); do \
	  timeout 600 $(MPIRUN) -np 2 $(MPI_CONF)/mpi/$$b || exit 1; \
	done

.PHONY: test-mpi bench-mpi mpi-deps
