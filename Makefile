# ncclshim build. `make` builds the engine, the shim, the tools and the tests; `make test` runs the
# test suite; `make bench` runs the TCP benchmark against Open MPI and Gloo, then measures every
# figure README.md and docs/ state for this machine beside the stated one (BENCH_QUICK=1: a quick
# subset of the figures only, a few minutes). Dependencies: scripts/setup.sh.
CXX ?= g++
BUILD ?= build
OPT ?= -O2
SAN ?=
CXXFLAGS := -std=c++20 $(OPT) -g -fPIC -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter \
            -I. -I$(BUILD)/gen -MMD -MP $(SAN) $(EXTRA_CXXFLAGS)
LDFLAGS := $(SAN) -pthread
LDLIBS := -ldl

# The engine is four archives, one per layer, always linked in the layers' order (collectives,
# then transport, then model, then common): a single pass over them resolves only downward
# references, so an include that runs back up a layer (tests/suites/layers_tests.sh) also fails to
# link. model/ (what NCCL would decide: tuner, layouts, schedules, the per-call choice) is below
# collectives/ and workload/ alike; the file commands link it without the engine.
COMMON_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard common/*.cc))
TRANSPORT_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard transport/*.cc transport/*/*.cc))
MODEL_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard model/*.cc))
COLLECTIVES_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard collectives/*.cc))
COMMON_LIB := $(BUILD)/libcommon.a
MODEL_LIB := $(BUILD)/libmodel.a
TRANSPORT_LIB := $(BUILD)/libtransport.a
COLLECTIVES_LIB := $(BUILD)/libcollectives.a
ENGINE_LIB := $(COLLECTIVES_LIB) $(TRANSPORT_LIB) $(MODEL_LIB) $(COMMON_LIB)
# The formats library (workload/module.mk), named here because phynet's and the tools' rules,
# read before it, link it.
WORKLOAD_LIB := $(BUILD)/libworkload.a

# The Chakra and PyTorch execution-trace readers need protoc, libprotobuf, nlohmann's JSON header and
# zlib (workload/module.mk); without them they say what to install, and their tests are left out.
PROTOC ?= protoc
HAVE_FOREIGN_FORMAT_LIBS := $(shell command -v $(PROTOC) >/dev/null 2>&1 && pkg-config --exists protobuf 2>/dev/null \
  && [ -e /usr/include/nlohmann/json.hpp ] && [ -e /usr/include/zlib.h ] && echo yes)
FOREIGN_FORMAT_TEST_SRCS := $(if $(HAVE_FOREIGN_FORMAT_LIBS),,$(wildcard tests/*/chakra_*_test.cc tests/*/pytorch_et_*_test.cc))

# CLI11 (header-only, Debian / Ubuntu libcli11-dev) reads every command line (common/command_line.h):
# from the system include path, else from $(BUILD)/cli11/include, the copy scripts/setup.sh makes of
# /usr/include/CLI (never committed), which travels with $(BUILD) to a machine without a registry
# (the GPU machine). Without either, nothing that parses a command line builds: say so once, plainly.
CLI11_SYSTEM := $(wildcard /usr/include/CLI/CLI.hpp /usr/local/include/CLI/CLI.hpp)
CLI11_COPY := $(wildcard $(BUILD)/cli11/include/CLI/CLI.hpp)
ifeq ($(CLI11_SYSTEM),)
ifneq ($(CLI11_COPY),)
CXXFLAGS += -isystem $(BUILD)/cli11/include
else ifneq ($(filter-out setup run test check bench clean,$(or $(MAKECMDGOALS),all)),)
$(error CLI11 not found (CLI/CLI.hpp in /usr/include or $(BUILD)/cli11/include): install the package libcli11-dev \
  (bash scripts/setup.sh does), or copy /usr/include/CLI of a machine that has it to $(BUILD)/cli11/include/CLI)
endif
endif

# zstd (libzstd-dev) for compressed traces (NCCLSHIM_TRACE_COMPRESS=zstd, `.jsonl.zst`): without its
# header the trace library is built without it and says what to install when asked for.
HAVE_ZSTD := $(shell [ -e /usr/include/zstd.h ] && echo yes)
ifeq ($(HAVE_ZSTD),yes)
LDLIBS += -lzstd
$(BUILD)/obj/trace/zstd_stream.o: CXXFLAGS += -DNSHIM_HAVE_ZSTD=1
else
$(info note: zstd.h not found (libzstd-dev): built without compressed traces)
endif

# Unit tests: every .cc under tests/<area>/ except the shim's process-test program (libshim/module.mk).
TEST_SRCS := $(filter-out tests/shim/% $(FOREIGN_FORMAT_TEST_SRCS),$(wildcard tests/*/*.cc)) tests/test_main.cc tests/test_util.cc
# TEST_OBJ_BUILD: where the test objects come from; the sanitizer suite links the main build's
# (uninstrumented test code) against its ASan engine instead of compiling 60 test files again.
TEST_OBJ_BUILD ?= $(BUILD)
TEST_OBJS := $(TEST_SRCS:%.cc=$(TEST_OBJ_BUILD)/obj/%.o)
UNIT_TESTS := $(BUILD)/unit_tests
REDUCE_SPEED := $(BUILD)/reduce_speed
SHM_BENCH := $(BUILD)/shm_bench

.PHONY: all test check main bench clean engine setup run
all: $(UNIT_TESTS) $(REDUCE_SPEED) $(SHM_BENCH)
engine: $(ENGINE_LIB)

$(BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# Reduction kernels are the hot loop of every reduce: let the compiler vectorise them.
$(BUILD)/obj/collectives/reduce.o: CXXFLAGS += -O3

$(COMMON_LIB): $(COMMON_OBJS)
$(MODEL_LIB): $(MODEL_OBJS)
$(TRANSPORT_LIB): $(TRANSPORT_OBJS)
$(COLLECTIVES_LIB): $(COLLECTIVES_OBJS)
$(ENGINE_LIB):
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(UNIT_TESTS): $(TEST_OBJS) $(ENGINE_LIB)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# bench/reduce_speed.cc: copy and sum speed of this machine (used to explain the verbs benchmark).
$(REDUCE_SPEED): $(BUILD)/obj/bench/reduce_speed.o $(ENGINE_LIB)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# bench/shm_bench.cc: the shared-memory transport against memcpy (bench/shm_bench.sh).
$(SHM_BENCH): $(BUILD)/obj/bench/shm_bench.o $(ENGINE_LIB)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The README's two commands. Each installs what is missing first, then builds. `make run` installs
# and builds only what the main job runs (phynet, ncclshim); `make test` adds the test toolchain
# (setup.sh --tests) and runs every suite; `make check` is the fast tier of the development loop
# (tests/suites/README.md says which suites).
setup:
	bash scripts/setup.sh --tests

run:
	bash scripts/setup.sh && $(MAKE) --no-print-directory -j$$(nproc) main && bash scripts/run_main_job.sh

test:
	bash scripts/setup.sh --tests && $(MAKE) --no-print-directory -j$$(nproc) all && bash tests/run_all.sh

check:
	bash scripts/setup.sh --tests && $(MAKE) --no-print-directory -j$$(nproc) all && bash tests/run_all.sh --fast

bench:
	bash scripts/setup.sh --tests && $(MAKE) --no-print-directory -j$$(nproc) all && \
	if [ -n "$(BENCH_QUICK)" ]; then python3 bench/stated_figures.py --quick; \
	else bash bench/run_bench.sh && python3 bench/stated_figures.py; fi

clean:
	rm -rf $(BUILD)

# Each component with more than sources (the shim, trace, tools, phynet) has a module.mk. Archives
# used across modules are named here so every module sees them whatever the include order.
TRACE_LIB := $(BUILD)/libtrace.a
include $(wildcard */module.mk)

# What the main job (scripts/run_main_job.sh) runs: nothing of the tests.
main: $(PHYNET) $(NCCLSHIM_TOOL)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
