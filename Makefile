# Thin front over CMake.  `make run` and `make test` set the machine up
# first when something is missing (scripts/setup.sh is idempotent and does
# nothing once everything is there).
BUILD      ?= build
BUILD_SAN  ?= build-san
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
export XDG_RUNTIME_DIR ?= /tmp/wgml-xdg-$(shell id -u)

WGPU_STAMP := third_party/wgpu-native/.wheel-sha256

.PHONY: all setup build run test test-full soak check-memory bench-dispatch install clean

all: build

$(WGPU_STAMP):
	bash scripts/setup.sh

setup:
	bash scripts/setup.sh

$(BUILD)/CMakeCache.txt: $(WGPU_STAMP)
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: $(WGPU_STAMP) $(BUILD)/CMakeCache.txt
	@mkdir -p $(XDG_RUNTIME_DIR) && chmod 700 $(XDG_RUNTIME_DIR)
	cmake --build $(BUILD) -j $(JOBS)

# The main job: a language model generating text on the GPU (the default
# model, SmolLM2-135M-Instruct Q4_1, is fetched by scripts/setup.sh into
# models/ and checked against its pinned sha256), after naming the adapter.
MODEL ?= $(or $(WGML_MODEL_DIR),models)/SmolLM2-135M-Instruct.Q4_1.gguf
PROMPT ?= The three primary colors are
run: setup build
	@./$(BUILD)/wgml info | head -n 3
	@test -f "$(MODEL)" || { echo "make run: $(MODEL) is missing: run scripts/fetch_model.sh smollm2 (or set MODEL=path.gguf)"; exit 1; }
	./$(BUILD)/wgml generate -m "$(MODEL)" -p "$(PROMPT)" -n 64 --temp 0

# Two programs at a time: a cold run (CI's clean clone) is mostly lavapipe
# compiling kernels, one thread a pipeline, so two use both cores of a CI
# machine: 372 s against 801 s one at a time (2 cores, 2026-11-26; in
# 2026-11-23 two at once had made the wait-heavy elementwise tests 6x
# slower, which no longer happens: 80 s against 92 alone).
TEST_JOBS ?= 2
test: setup build
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS) -LE full

# Everything, the "full" label too (tests/CMakeLists.txt says why it is apart).
test-full: setup build
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)

# Randomized: every op test over SEEDS fresh seeds in every mode (CI's
# `make test` uses fixed seeds).  Prints the first failing seed.
SEEDS ?= 10
soak: setup build
	bash scripts/soak.sh $(BUILD) $(SEEDS)

# Host code under AddressSanitizer + UBSan (GPU driver libraries are not
# instrumented; leaks inside them are suppressed).
check-memory: setup build
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DWGML_SANITIZE=ON
	cmake --build $(BUILD_SAN) -j $(JOBS)
	cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j 1
	# host-only code (no GPU driver in the process) also under valgrind
	valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  ./$(BUILD)/tests/test_quant_ref tests/quant_vectors > /dev/null

bench-dispatch: build
	./$(BUILD)/wgml bench dispatch

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_SAN)
