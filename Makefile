# dlrt: two-command quick start (`make demo`, `make test`) and build helpers.
# Builds go to build/ (Release) and build-asan/ (ASan + UBSan); warnings are
# errors (WERROR=OFF to relax).

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_ARM64 ?= build-arm64
# Optimisation of `make fuzz`'s build (executions per second). `make test`'s fuzz
# smoke run needs no fuzz build: dlrt_fuzz_smoke is part of $(BUILD) (cmake/fuzz.cmake).
FUZZ_CXX_FLAGS ?= -O2 -g -DNDEBUG
FUZZ_SECONDS ?= 600
JOBS       ?= $(shell nproc)
WERROR     ?= ON
PYTHON     ?= /usr/bin/python3
TESTDATA   ?= /usr/share/libonnx-testdata/data
DEMO_MODEL := $(BUILD)/test_models/conv_net.onnx
# The model zoo for the zoo tests: $DLRT_ZOO_DIR, else ../shared/models when it is there.
ZOO_DIR    ?= $(or $(DLRT_ZOO_DIR),$(if $(wildcard ../shared/models/.),$(abspath ../shared/models)))
# ccache hashes paths under the source tree relative to the build folder, so a
# build folder at the same depth (the wheel's, build-wheel-<tag>) reuses the
# objects of build/ instead of compiling the library again.
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: all deps deps-build deps-arm64 build build-arm64 build-arm64-tests test-arm64 test-avx2-cpu demo test test-quick test-asan fuzz fuzz-build update-expected wheel wheel-arm64 sdist test-sdist clean

all: build

deps:
	@bash scripts/install_deps.sh test

# Only what the build needs (no clang, PoCL or test data): `make demo`.
deps-build:
	@bash scripts/install_deps.sh build

# Configure (once) and build everything in Release.
build:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLRT_WERROR=$(WERROR)
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD)/test_models/STAMP: tests/models/make_test_models.py
	$(PYTHON) tests/models/make_test_models.py $(BUILD)/test_models

# The aarch64 Linux cross build (docs/platforms.md): Debian's cross toolchain, the :arm64
# libraries and qemu-user (scripts/install_deps.sh arm64), cmake/toolchains/aarch64-linux-gnu.cmake;
# the library and the CLI in $(BUILD_ARM64). Run with qemu-aarch64 (docs/platforms.md).
deps-arm64:
	@bash scripts/install_deps.sh arm64

build-arm64: deps-arm64
	cmake -S . -B $(BUILD_ARM64) -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLRT_WERROR=$(WERROR) \
	  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
	cmake --build $(BUILD_ARM64) -j $(JOBS) --target libdlrt.so dlrt_cli

# The cross build with its tests, run under qemu-aarch64 with the NEON kernels selected
# (scripts/test_arm64.sh; docs/platforms.md): the unit tests but the named exclusions of
# tests/arm64/excluded.txt, the ONNX conformance suites, a sample of the zoo (DLRT_ARM64_ZOO),
# and, where $(BUILD) has an x86 build, outputs against it. `.ci/run` runs it after `make test`.
build-arm64-tests:
	@bash scripts/install_deps.sh test-arm64
	cmake -S . -B $(BUILD_ARM64) -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLRT_WERROR=$(WERROR) \
	  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
	cmake --build $(BUILD_ARM64) -j $(JOBS) --target libdlrt.so dlrt_cli dlrt_tests dlrt_alloc_tests dlrt_linkage_canary \
	  dlrt_image_tests

test-arm64: build-arm64-tests
	JOBS=$(JOBS) TESTDATA=$(TESTDATA) PYTHON=$(PYTHON) bash scripts/test_arm64.sh $(BUILD_ARM64) \
	  "$(ZOO_DIR)" "$(if $(wildcard $(BUILD)/dlrt),$(BUILD))"

# The x86 build's binaries under qemu-x86_64 as CPUs with AVX2 + FMA and no AVX-512 or VNNI (an
# AMD EPYC-Milan and an Intel Haswell, QEMU's models; scripts/test_avx2_cpu.sh, docs/testing.md):
# CPU detection, the CPU kernel tests but tests/avx2cpu/excluded.txt, a zoo sample and the
# quantized zoo that `make test` made, and ONNX Runtime's saturating int8 path against the
# reference check. `.ci/run` runs it after `make test`. Emulated: it proves results, not speed.
test-avx2-cpu:
	@command -v qemu-x86_64 > /dev/null || bash scripts/install_deps.sh test-arm64
	$(MAKE) --no-print-directory build
	JOBS=$(JOBS) PYTHON=$(PYTHON) bash scripts/test_avx2_cpu.sh $(BUILD) "$(ZOO_DIR)"

# Install what is missing, build, generate a small CNN and run it once on the
# default device: outputs, where each partition ran, timings.
demo: deps-build
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLRT_WERROR=$(WERROR)
	cmake --build $(BUILD) -j $(JOBS) --target dlrt_cli
	$(MAKE) --no-print-directory $(BUILD)/test_models/STAMP
	$(BUILD)/dlrt run $(DEMO_MODEL)

# Everything (scripts/make_test.sh): install, build with warnings as errors,
# unit tests, ONNX conformance (against tests/conformance/expected_passing.txt),
# the zoo (ZOO_DIR), OpenVINO matrix, install, Python, wheel, fuzz smoke; then
# the time of each phase.
test:
	BUILD=$(BUILD) JOBS=$(JOBS) WERROR=$(WERROR) PYTHON=$(PYTHON) \
	  TESTDATA=$(TESTDATA) ZOO_DIR=$(ZOO_DIR) bash scripts/make_test.sh

# The edit-test loop (a few minutes on a built tree): the build, the unit and
# CLI tests without the slow ones (scripts/test_quick.sh says which), the
# conformance suite and the zoo. `make test` runs everything.
test-quick: deps
	$(MAKE) --no-print-directory build
	$(MAKE) --no-print-directory $(BUILD)/test_models/STAMP
	JOBS=$(JOBS) DLRT_ONNX_TESTDATA=$(TESTDATA) DLRT_ZOO_DIR=$(ZOO_DIR) bash scripts/test_quick.sh $(BUILD)

# The libFuzzer harnesses (fuzz/), built with clang, ASan and UBSan in $(BUILD_FUZZ).
fuzz-build:
	cmake -S . -B $(BUILD_FUZZ) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(FUZZ_CXX_FLAGS)" -DDLRT_FUZZ=ON -DDLRT_BUILD_TESTS=OFF -DDLRT_WERROR=OFF
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_model fuzz_npy fuzz_tokenizer fuzz_config fuzz_request fuzz_folder fuzz_ops fuzz_http \
	  fuzz_image

# Each harness for FUZZ_SECONDS (default 600), growing $(BUILD_FUZZ)/corpus; a
# crash is kept in $(BUILD_FUZZ)/crashes/ (add it to fuzz/regressions/ once fixed).
fuzz: deps fuzz-build
	$(MAKE) --no-print-directory $(BUILD)/test_models/STAMP
	DLRT_TEST_MODELS=$(abspath $(BUILD))/test_models bash scripts/run_fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

# The same under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLRT_SANITIZE=ON -DDLRT_WERROR=ON
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	$(MAKE) --no-print-directory $(BUILD_ASAN)/test_models/STAMP BUILD=$(BUILD_ASAN)
	JOBS=$(JOBS) DLRT_ONNX_TESTDATA=$(TESTDATA) DLRT_ZOO_DIR=$(ZOO_DIR) bash scripts/run_tests.sh $(BUILD_ASAN)

# The Python wheels (cp310, cp311, cp312-abi3 for 3.12+), repaired by auditwheel into
# manylinux wheels in $(WHEEL_DIR) (scripts/build_wheels.sh: pinned tools from PyPI,
# incremental in build-wheel-<tag>/).
WHEEL_DIR ?= build-wheel/wheelhouse
# With build/'s warning flags (WERROR), so ccache reuses build/'s objects.
wheel: deps
	JOBS=$(JOBS) DLRT_WHEEL_WERROR=$(WERROR) bash scripts/build_wheels.sh $(WHEEL_DIR)

# The aarch64 wheel (cp311, manylinux_2_34_aarch64) in $(WHEEL_DIR), cross-built from x86-64
# against Debian's aarch64 CPython, repaired by auditwheel and run under qemu-aarch64
# (scripts/build_wheel_arm64.sh; docs/python-wheel.md). WERROR as build-arm64/'s, whose
# objects ccache reuses.
wheel-arm64: deps-arm64
	JOBS=$(JOBS) DLRT_WHEEL_WERROR=$(WERROR) DLRT_ZOO_DIR=$(ZOO_DIR) bash scripts/build_wheel_arm64.sh $(WHEEL_DIR)

# The source distribution, dlrt-<version>.tar.gz in build-wheel/sdist (scripts/build_sdist.sh:
# the tree and the pinned onnx sources, no build folders).
sdist: deps-build
	bash scripts/build_sdist.sh

# `pip install` of that sdist in a fresh venv, then the wheel test's checks (scripts/test_sdist.sh;
# `make test` runs it after the wheels, whose objects ccache reuses for it).
test-sdist: deps-build
	JOBS=$(JOBS) DLRT_WHEEL_WERROR=$(WERROR) DLRT_ZOO_DIR=$(ZOO_DIR) bash scripts/test_sdist.sh

# Rewrites tests/conformance/expected_passing.txt from a fresh conformance run.
update-expected: build
	$(BUILD)/dlrt conformance $(TESTDATA)/node $(TESTDATA)/pytorch-converted $(TESTDATA)/pytorch-operator \
	  $(TESTDATA)/simple --list-passing tests/conformance/expected_passing.txt > $(BUILD)/conformance.log || true
	@tail -1 $(BUILD)/conformance.log
	@echo "wrote tests/conformance/expected_passing.txt ($$(wc -l < tests/conformance/expected_passing.txt) cases)"
	@bash scripts/conformance_onnx.sh $(BUILD) --update

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
