# A thin wrapper over CMake. The two commands a new user types:
#   make run    install what is missing (the build group only), build, run the lab
#   make test   install what is missing, build, run every test (also under ASan+UBSan)
.PHONY: all build deps run test test-asan test-tsan test-valgrind bench fuzz install format format-check clean

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
PREFIX     ?= /usr/local
TOML_TEST  ?= $(abspath ../shared/toml-test)
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

all: build

# $(call configure,DIR,FLAGS): CMake's progress goes to DIR/configure.log and
# is shown only when configuring fails: it names the package that is missing
# ("Package 'yajl' ... not found"), which CMake's error alone does not.
configure = mkdir -p $(1) && cmake -S . -B $(1) $(2) >$(1)/configure.log || \
    { cat $(1)/configure.log; exit 1; }

deps:
	@scripts/setup-deps.sh build

build: deps
	@$(call configure,$(BUILD),-DTOML_TEST_DIR=$(TOML_TEST) -DCMAKE_INSTALL_PREFIX=$(PREFIX))
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

run: build
	@scripts/run-lab.sh $(BUILD)/gpuop

# kubectl 1.32 and the toml-test cases come from no package: without them
# `make test` stops here, before installing or building anything. The tests
# are configured with GPUOP_TESTS=ON, so that a missing test package is an
# error (a plain build leaves the tests out when their packages are missing).
test:
	@scripts/check-test-prereqs.sh $(TOML_TEST)
	@scripts/setup-deps.sh build test
	@$(call configure,$(BUILD),-DGPUOP_TESTS=ON -DTOML_TEST_DIR=$(TOML_TEST) \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX))
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory test-asan test-tsan test-valgrind

# The unit tests and the TOML suite again, under AddressSanitizer + UBSan.
test-asan:
	@$(call configure,$(ASAN_BUILD),-DGPUOP_SANITIZE=ON -DGPUOP_TESTS=ON \
	    -DCMAKE_BUILD_TYPE=Debug -DTOML_TEST_DIR=$(TOML_TEST))
	@cmake --build $(ASAN_BUILD) -j $(JOBS) -- --no-print-directory
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -R '^(unit/|toml-test)'

# The embedded control plane under ThreadSanitizer, driven by kubectl: the
# controllers decide on one thread and write on others.
test-tsan:
	@$(call configure,$(TSAN_BUILD),-DGPUOP_TSAN=ON -DGPUOP_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug \
	    -DTOML_TEST_DIR=$(TOML_TEST))
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target gpuop-apiserver -- --no-print-directory
	tests/tsan/controllers.sh $(TSAN_BUILD)/gpuop-apiserver

test-valgrind:
	@scripts/run-valgrind.sh $(BUILD)

bench: build
	@scripts/setup-deps.sh bench
	@bench/run.sh $(BUILD)

fuzz:
	@scripts/setup-deps.sh build fuzz
	@fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(TOML_TEST)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

# What CI checks: every C and C++ file as the project's .clang-format has it.
format-check:
	@scripts/setup-deps.sh format
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h' '*.cpp') && \
	    echo "format-check: $$(git ls-files '*.c' '*.h' '*.cpp' | wc -l) files as .clang-format has them"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
