# libncclshim.so (the NCCL C API over the engine) and the shim's process tests. Only the API layer
# sees nccl.h: its flags come from scripts/fetch_nccl_headers.sh (build/nccl_cflags.txt, read when
# the recipes run). libstdc++ and libgcc are linked statically and exports.map keeps every symbol
# but nccl*/pnccl* local, so nothing clashes with the host process.
SHIM_SRCS := $(wildcard libshim/*.cc)
SHIM_OBJS := $(SHIM_SRCS:%.cc=$(BUILD)/obj/%.o)
SHIM_LIB := $(BUILD)/libncclshim.so
NCCL_CFLAGS_FILE := $(BUILD)/nccl_cflags.txt
NCCL_CFLAGS = $(shell cat $(NCCL_CFLAGS_FILE))

SHIM_TEST_SRCS := $(filter-out tests/shim/forward_% tests/shim/fake_% tests/shim/profiler_%,$(wildcard tests/shim/*.cc))
SHIM_TEST_OBJS := $(SHIM_TEST_SRCS:%.cc=$(BUILD)/obj/shimtests/%.o)
SHIM_TEST_PROGRAM := $(BUILD)/tests/nccl_api_test_program
NCCL_STUB := $(BUILD)/tests/stub/libnccl.so.2

.PHONY: shim shim-test forward-test hotpath-bench p2p-group-bench
all: $(SHIM_LIB) $(SHIM_TEST_PROGRAM)
shim: $(SHIM_LIB)

$(NCCL_CFLAGS_FILE): scripts/fetch_nccl_headers.sh
	bash scripts/fetch_nccl_headers.sh $(BUILD)

$(BUILD)/obj/libshim/%.o: libshim/%.cc $(NCCL_CFLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(NCCL_CFLAGS) -c $< -o $@

$(SHIM_LIB): $(SHIM_OBJS) $(TRACE_LIB) $(ENGINE_LIB) libshim/exports.map
	$(CXX) -shared -o $@ $(SHIM_OBJS) $(TRACE_LIB) $(ENGINE_LIB) $(LDFLAGS) -static-libstdc++ -static-libgcc \
	  -Wl,--version-script=libshim/exports.map -Wl,--no-undefined -Wl,-soname,libncclshim.so $(LDLIBS)

# The test program knows only nccl.h: it is linked against a stub libnccl.so.2 that aborts, so it
# passes only when libncclshim.so is preloaded in front of it (tests/shim/run_shim_tests.sh).
$(BUILD)/obj/shimtests/%.o: %.cc $(NCCL_CFLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++20 $(OPT) -g -Wall -Wextra -Wno-unused-parameter -MMD -MP $(NCCL_CFLAGS) -c $< -o $@

$(NCCL_STUB): tests/shim/nccl_stub.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O2 -Wl,-soname,libnccl.so.2 -o $@ $<

$(SHIM_TEST_PROGRAM): $(SHIM_TEST_OBJS) $(NCCL_STUB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $(SHIM_TEST_OBJS) $(NCCL_STUB) -Wl,-rpath,'$$ORIGIN/stub' -pthread

shim-test: $(SHIM_LIB) $(SHIM_TEST_PROGRAM)
	bash tests/shim/run_shim_tests.sh

# Forward mode (tests/suites/forward_tests.sh): a fake "real NCCL" built as libnccl.so.2 (and an
# older one lacking the 2.27 functions), the forward test program linked against it (RUNPATH, so
# LD_LIBRARY_PATH can swap in the older one), the same program as a library linked to the fake and
# as one linked to nothing (both dlopened RTLD_LOCAL by forward_loader, as Python loads PyTorch),
# and the hot-path benchmark (bench/run_hotpath_bench.sh).
FAKE_NCCL := $(BUILD)/tests/fake/libnccl.so.2
FAKE_NCCL_OLD := $(BUILD)/tests/fake_old/libnccl.so.2
FORWARD_PROGRAM := $(BUILD)/tests/forward_test_program
FORWARD_LINKED_LIB := $(BUILD)/tests/libforward_linked.so
FORWARD_UNLINKED_LIB := $(BUILD)/tests/libforward_unlinked.so
FORWARD_LOADER := $(BUILD)/tests/forward_loader
HOTPATH_BENCH := $(BUILD)/hotpath_bench
P2P_GROUP_BENCH := $(BUILD)/p2p_group_bench
FORWARD_TEST_DEPS := tests/shim/forward_test_program.cc tests/shim/forward_test_util.h tests/shim/fake_nccl_log.h \
                     $(NCCL_CFLAGS_FILE)
FORWARD_CXX = $(CXX) -std=c++20 $(OPT) -g -Wall -Wextra -Wno-unused-parameter $(NCCL_CFLAGS)
FAKE_RPATH := -Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN/fake'

all: $(FAKE_NCCL) $(FAKE_NCCL_OLD) $(FORWARD_PROGRAM) $(FORWARD_LINKED_LIB) $(FORWARD_UNLINKED_LIB) \
     $(FORWARD_LOADER) $(HOTPATH_BENCH) $(P2P_GROUP_BENCH)

# The fake's profiler side (fake_nccl_profiler.cc) drives a plugin named by NCCL_PROFILER_PLUGIN
# as NCCL 2.28 does (tests/suites/profiler_tests.sh).
FAKE_NCCL_DEPS := tests/shim/fake_nccl.c tests/shim/fake_nccl_log.h tests/shim/fake_nccl_profiler.h \
                  $(BUILD)/obj/tests/fake_nccl_profiler.o $(NCCL_CFLAGS_FILE)
$(BUILD)/obj/tests/fake_nccl_profiler.o: tests/shim/fake_nccl_profiler.cc tests/shim/fake_nccl_profiler.h \
    tests/shim/fake_profiler_rules.h libshim/nccl_profiler_abi.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++20 -fPIC -O2 -Wall -Wextra -c -o $@ $<

$(FAKE_NCCL): $(FAKE_NCCL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -fPIC -O2 -Wall $(NCCL_CFLAGS) -c -o $@.o $<
	$(CXX) -shared -Wl,-soname,libnccl.so.2 -o $@ $@.o $(BUILD)/obj/tests/fake_nccl_profiler.o -ldl -pthread

$(FAKE_NCCL_OLD): $(FAKE_NCCL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -fPIC -O2 -Wall -DFAKE_NCCL_OLD $(NCCL_CFLAGS) -c -o $@.o $<
	$(CXX) -shared -Wl,-soname,libnccl.so.2 -o $@ $@.o $(BUILD)/obj/tests/fake_nccl_profiler.o -ldl -pthread

$(FORWARD_PROGRAM): $(FORWARD_TEST_DEPS) $(FAKE_NCCL)
	$(FORWARD_CXX) -o $@ $< $(FAKE_NCCL) $(FAKE_RPATH)

$(FORWARD_LINKED_LIB): $(FORWARD_TEST_DEPS) $(FAKE_NCCL)
	$(FORWARD_CXX) -fPIC -shared -DFORWARD_TEST_LIBRARY -o $@ $< $(FAKE_NCCL) $(FAKE_RPATH)

# Linked to no NCCL: its nccl* references bind to the preloaded shim when it is dlopened.
$(FORWARD_UNLINKED_LIB): $(FORWARD_TEST_DEPS)
	$(FORWARD_CXX) -fPIC -shared -DFORWARD_TEST_LIBRARY -o $@ $<

$(FORWARD_LOADER): tests/shim/forward_loader.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++20 $(OPT) -Wall -Wextra -o $@ $< -ldl

$(HOTPATH_BENCH): bench/hotpath_bench.cc $(FAKE_NCCL) $(NCCL_CFLAGS_FILE)
	$(CXX) -std=c++20 $(OPT) -g -Wall -Wextra $(NCCL_CFLAGS) -o $@ $< $(FAKE_NCCL) -Wl,--enable-new-dtags \
	  -Wl,-rpath,'$$ORIGIN/tests/fake'

# bench/run_p2p_group_bench.sh: grouped send/recv on two communicators from one thread.
$(P2P_GROUP_BENCH): bench/p2p_group_bench.cc $(FAKE_NCCL) $(NCCL_CFLAGS_FILE)
	$(CXX) -std=c++20 $(OPT) -g -Wall -Wextra $(NCCL_CFLAGS) -o $@ $< $(FAKE_NCCL) -Wl,--enable-new-dtags \
	  -Wl,-rpath,'$$ORIGIN/tests/fake'

# The profiler plugin test (tests/suites/profiler_tests.sh): a rank program against the fake NCCL and
# the trace checker (it reads traces, so it links the trace library).
PROFILER_TEST_PROGRAM := $(BUILD)/tests/profiler_test_program
PROFILER_TRACE_CHECK := $(BUILD)/tests/profiler_trace_check
all: $(PROFILER_TEST_PROGRAM) $(PROFILER_TRACE_CHECK)

$(PROFILER_TEST_PROGRAM): tests/shim/profiler_test_program.cc tests/shim/forward_test_util.h $(FAKE_NCCL) $(NCCL_CFLAGS_FILE)
	$(FORWARD_CXX) -o $@ $< $(FAKE_NCCL) $(FAKE_RPATH)

$(PROFILER_TRACE_CHECK): tests/shim/profiler_trace_check.cc tests/shim/fake_profiler_rules.h $(TRACE_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -o $@ $< $(TRACE_LIB) $(ENGINE_LIB) $(LDFLAGS) $(LDLIBS)

forward-test: all
	bash tests/suites/forward_tests.sh

hotpath-bench: $(SHIM_LIB) $(HOTPATH_BENCH)
	bash bench/run_hotpath_bench.sh

p2p-group-bench: $(SHIM_LIB) $(P2P_GROUP_BENCH)
	bash bench/run_p2p_group_bench.sh

# The recording path builds records on the stack and in the ring: merged into wide stores, their
# constant fields would be loaded from .rodata, lines a job's work has evicted
# (docs/profiler_plugin.md, "sixth pass"); as scalar stores they are immediates.
HOT_PATH_OBJS := $(addprefix $(BUILD)/obj/libshim/,api_ops.o api_comm.o api_misc.o api_call.o trace_bridge.o \
                   record_hook.o profiler_plugin.o) $(BUILD)/obj/trace/recorder.o
$(HOT_PATH_OBJS): CXXFLAGS += -fno-tree-slp-vectorize -fno-store-merging
