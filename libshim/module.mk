# libncclshim.so (the NCCL C API over the engine) and the shim's process tests. Only the API layer
# sees nccl.h: its flags come from scripts/fetch_nccl_headers.sh (build/nccl_cflags.txt, read when
# the recipes run). libstdc++ and libgcc are linked statically and exports.map keeps every symbol
# but nccl*/pnccl* local, so nothing clashes with the host process.
SHIM_SRCS := $(wildcard libshim/*.cc)
SHIM_OBJS := $(SHIM_SRCS:%.cc=$(BUILD)/obj/%.o)
SHIM_LIB := $(BUILD)/libncclshim.so
NCCL_CFLAGS_FILE := $(BUILD)/nccl_cflags.txt
NCCL_CFLAGS = $(shell cat $(NCCL_CFLAGS_FILE))

SHIM_TEST_SRCS := $(wildcard tests/shim/*.cc)
SHIM_TEST_OBJS := $(SHIM_TEST_SRCS:%.cc=$(BUILD)/obj/shimtests/%.o)
SHIM_TEST_PROGRAM := $(BUILD)/tests/nccl_api_test_program
NCCL_STUB := $(BUILD)/tests/stub/libnccl.so.2

.PHONY: shim shim-test
all: $(SHIM_LIB) $(SHIM_TEST_PROGRAM)
shim: $(SHIM_LIB)

$(NCCL_CFLAGS_FILE): scripts/fetch_nccl_headers.sh
	bash scripts/fetch_nccl_headers.sh $(BUILD)

$(BUILD)/obj/libshim/%.o: libshim/%.cc $(NCCL_CFLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(NCCL_CFLAGS) -c $< -o $@

$(SHIM_LIB): $(SHIM_OBJS) $(ENGINE_LIB) libshim/exports.map
	$(CXX) -shared -o $@ $(SHIM_OBJS) $(ENGINE_LIB) $(LDFLAGS) -static-libstdc++ -static-libgcc \
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
