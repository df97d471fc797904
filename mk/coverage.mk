# mk/coverage.mk - test coverage (gcc --coverage, read by gcovr).
#
#   make coverage   builds the library, tools and tests with coverage
#                   counters (COV=1: build-cov, build-cov-mpi), runs what
#                   `make test` runs (the test programs, the CLI and
#                   conformance scripts, the interpreter suite), the MPI
#                   tests, and the test programs and interpreter suite again
#                   with the portable and the AVX2 kernels (make test-isa,
#                   light: XRT_TEST_LIGHT=1 leaves the largest cases, whose
#                   code is the same for every ISA, to the first run),
#                   then prints per source file of src/ the share of
#                   lines and of branches taken
#                   ("coverage.<file>.lines = N", "... .branches = N") and
#                   the totals, writes an HTML report to build-cov/html/,
#                   and fails when a total is below test/coverage_required.txt
#                   (the ratchet: raise those figures as tests are added).

COV_DIRS := build-cov build-cov-mpi

coverage-deps:
	@sh tools/deps.sh coverage

# Counts start from zero: the .gcda files of an earlier run are removed.
coverage: | coverage-deps deps
	@for d in $(COV_DIRS); do \
	  [ -d $$d ] && find $$d -name '*.gcda' -delete; done; true
	@$(MAKE) --no-print-directory COV=1 test; s1=$$?; \
	 $(MAKE) --no-print-directory COV=1 test-mpi; s2=$$?; \
	 XRT_TEST_LIGHT=1 $(MAKE) --no-print-directory COV=1 test-isa TEST_ISA=portable; s3=$$?; \
	 XRT_TEST_LIGHT=1 $(MAKE) --no-print-directory COV=1 test-isa TEST_ISA=avx2; s4=$$?; \
	 sh tools/coverage.sh test/coverage_required.txt $(COV_DIRS) || exit 1; \
	 [ $$s1$$s2$$s3$$s4 = 0000 ] || { echo "coverage: tests failed"; exit 1; }

.PHONY: coverage coverage-deps
