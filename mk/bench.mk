# mk/bench.mk - the benchmarks: bench/*.c, linked with libxrt.a, print
# KEY = NUMBER lines; their baselines (numpy, torch, OpenBLAS) are
# installed first when root.  bench-models runs the model zoo
# (bench/models) on xrt, PyTorch and ONNX Runtime.

BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

$(BUILD)/bench/%: bench/%.c bench/bench_util.h test/spec_util.h $(LIB_A) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

# bench_main also measures dispatch through libxrt_pjrt.so (xrt as a PJRT
# plugin, loaded back through xrt_pjrt.c).
$(BUILD)/bench/bench_main: bench/bench_main.c bench/bench_util.h $(LIB_A) \
                           $(BUILD)/libxrt_pjrt.so | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) \
	  -DBENCH_PJRT_PLUGIN='"$(BUILD)/libxrt_pjrt.so"' $< -o $@ $(LIB_A) $(LDLIBS)

# bench_gemm measures against OpenBLAS when it is installed, and a second
# copy of it runs on the XRT_BLAS=1 library (build-blas).
HAVE_OPENBLAS = $(if $(wildcard /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so),1)
GEMM_BENCH_BLAS = $(if $(HAVE_OPENBLAS),-DBENCH_HAVE_OPENBLAS -lopenblas)

$(BUILD)/bench/bench_gemm: bench/bench_gemm.c bench/bench_util.h $(LIB_A) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(GEMM_BENCH_BLAS) $(LDLIBS)

# Built in the XRT_BLAS=1 configuration (make XRT_BLAS=1 this-target).
$(BUILD)/bench/bench_gemm_blas: bench/bench_gemm.c bench/bench_util.h $(LIB_A) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -DBENCH_GEMM_BLAS $< -o $@ $(LIB_A) \
	  $(GEMM_BENCH_BLAS) $(LDLIBS)

# ONNX Runtime for bench-models: onnxruntime-node, npm-installed here.
MODELS_DIR := $(BUILD)/models
ORT_DIR := $(MODELS_DIR)/ort

bench-deps:
	@sh tools/deps.sh bench $(ORT_DIR)

# The baselines first (a separate make: HAVE_OPENBLAS is looked up after).
bench: bench-deps
	@$(MAKE) --no-print-directory bench-run
	@$(MAKE) --no-print-directory bench-models-run

# The model zoo: bench/models/gen.py writes each model (StableHLO text, its
# arguments and PyTorch's results as .npy) into $(MODELS_DIR)/M, then
# bench_models.py runs `xrt bench` on it against PyTorch and ONNX Runtime
# and prints model.M.* keys (BENCH_MODELS_REPS calls each, default 10).
# It needs Debian's /usr/bin/python3 with numpy and torch.
bench-models: bench-deps
	@$(MAKE) --no-print-directory bench-models-run

bench-models-run: $(XRT_BIN)
	@if /usr/bin/python3 -c 'import numpy, torch' >/dev/null 2>&1; then \
	  env -u OPENBLAS_CORETYPE /usr/bin/python3 bench/models/bench_models.py --xrt $(XRT_BIN) \
	    --out $(MODELS_DIR) --ort $(ORT_DIR) || exit 1; \
	else \
	  echo "# model.*: /usr/bin/python3 lacks numpy or torch (tools/deps.sh bench)"; \
	fi

bench-run: $(BENCH_BINS)
	@if [ -n "$(HAVE_OPENBLAS)" ]; then \
	  $(MAKE) --no-print-directory XRT_BLAS=1 build-blas/bench/bench_gemm_blas || exit 1; \
	fi
	@for b in $(BENCH_BINS) $(if $(HAVE_OPENBLAS),build-blas/bench/bench_gemm_blas); do \
	  $$b || exit 1; done

.PHONY: bench bench-deps bench-run bench-models bench-models-run
