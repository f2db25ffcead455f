# sigpu: the README's two commands and a few helpers. CMake does the real work.
#
#   make demo     build the CLI and run `sigpu demo` on its built-in inputs
#   make test     build, run the CPU tests (ctest -LE gpu), check the installed library
#                 (scripts/check-install), then the fuzz smoke run
#   make build    configure build/ and build everything
#   make install  build, then install into PREFIX (default /usr/local): lib, headers, CMake
#                 package, pkg-config file, bin/sigpu, man page
#   make python   build the Python package into build/python (PYTHONPATH=build/python python3)
#   make check-install   build, then install into a temporary prefix and build and run
#                 examples/consumer against it
#   make fuzz     build the libFuzzer targets with clang + ASan/UBSan in build-fuzz/, run each
#   make format   clang-format -i every source file   (make check-format: list what would change)
#   make bundle   build for sm_90 and pack .device/ for the GPU machine (scripts/device-bundle)
#   make clean    remove build/, build-fuzz/, build-device/ and .device/
#
# Every target that builds first installs missing Debian packages (scripts/install-deps, needs
# root then), so one command works on a fresh Debian 12 machine. Knobs: JOBS, BUILD_TYPE,
# CMAKE_FLAGS (extra -D options for build/), FUZZ_SECONDS (per target), PREFIX, VERBOSE=1.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DEFAULT_GOAL := build

BUILD        ?= build
FUZZ_BUILD   ?= build-fuzz
JOBS         ?= 2
BUILD_TYPE   ?= Release
CMAKE_FLAGS  ?=
FUZZ_SECONDS ?= 60
PREFIX       ?= /usr/local
SOURCE_DIRS  := src include tools tests bench fuzz python/src

# A stock CUDA install leaves nvcc outside PATH; CMake finds the CUDA backend through it.
ifeq ($(shell command -v nvcc),)
  ifneq ($(wildcard /usr/local/cuda/bin/nvcc),)
    export PATH := $(PATH):/usr/local/cuda/bin
  endif
endif

# Ninja and make both print a line per step; without VERBOSE only warnings and errors show.
ifeq ($(VERBOSE),1)
  QUIET_STEPS := cat
else
  QUIET_STEPS := { grep -vE '^\[ *[0-9]+(/[0-9]+\]|%\]) |^Re-running CMake|^-- (GLOB mismatch|Configuring done|Generating done|Build files have been)' || true; }
endif

.NOTPARALLEL:
.PHONY: all demo test build configure deps ctest check-install install fuzz fuzz-build format \
  check-format bundle clean python

all: build

deps:
	@bash scripts/install-deps --check >/dev/null || bash scripts/install-deps

# Configure once; afterwards the build tool re-runs CMake when a CMakeLists.txt changes.
configure: $(BUILD)/CMakeCache.txt
$(BUILD)/CMakeCache.txt: | deps
	@echo "configure: $(BUILD)/ ($(BUILD_TYPE))"
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) \
	  >$(BUILD).configure.log 2>&1 || { cat $(BUILD).configure.log; rm -f $@; exit 1; }
	@grep -E 'sigpu|CUDA' $(BUILD).configure.log | grep -vE '^-- (Check|Detecting|Looking)' || true
	@mv -f $(BUILD).configure.log $(BUILD)/configure.log

build: configure
	@echo "build: $(BUILD)/ -j$(JOBS)"
	@cmake --build $(BUILD) -j $(JOBS) 2>&1 | $(QUIET_STEPS)

demo: deps configure
	@cmake --build $(BUILD) -j $(JOBS) --target sigpu_cli 2>&1 | $(QUIET_STEPS)
	$(BUILD)/bin/sigpu demo

python: deps configure
	@cmake --build $(BUILD) -j $(JOBS) --target sigpu_python_info 2>&1 | $(QUIET_STEPS)

# Passing tests are left out of the console (all of it is in build/ctest.log); failures show
# with their output. The fuzz smoke run follows, then ctest's summary is repeated last.
ctest: build
	@echo "ctest: $(BUILD)/ -LE gpu -j$(JOBS)"
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE gpu >$(BUILD)/ctest.log 2>&1 \
	  && rc=0 || rc=$$?; \
	grep -vE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed +[0-9.]+ sec$$|^ +Start +[0-9]+: |^Test project |^Internal ctest changing|^$$' \
	  $(BUILD)/ctest.log || true; \
	exit $$rc

check-install: build
	@bash scripts/check-install $(BUILD)

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

test: deps ctest check-install fuzz
	@grep -E 'tests passed|Total Test time' $(BUILD)/ctest.log

$(FUZZ_BUILD)/CMakeCache.txt: | deps
	@echo "configure: $(FUZZ_BUILD)/ (clang, libFuzzer, ASan/UBSan, no CUDA)"
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSIGPU_FUZZ=ON -DSIGPU_SANITIZE=ON -DSIGPU_CUDA=OFF -DBUILD_TESTING=OFF \
	  >$(FUZZ_BUILD).configure.log 2>&1 || { cat $(FUZZ_BUILD).configure.log; rm -f $@; exit 1; }
	@mv -f $(FUZZ_BUILD).configure.log $(FUZZ_BUILD)/configure.log

fuzz-build: $(FUZZ_BUILD)/CMakeCache.txt
	@echo "build: $(FUZZ_BUILD)/ fuzz targets -j$(JOBS)"
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets 2>&1 | $(QUIET_STEPS)

fuzz: deps fuzz-build
	@bash fuzz/run-smoke $(FUZZ_BUILD) $(FUZZ_SECONDS)

format:
	@find $(SOURCE_DIRS) -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' \
	  -o -name '*.cuh' \) -print0 2>/dev/null | xargs -0 -r clang-format -i

check-format:
	@bash scripts/check-format

bundle:
	@bash scripts/device-bundle

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) build-device build-python .device
