# workload/: the replay's input formats and what is derived from them without running anything —
# the workload model, the SimAI, AICB, trace, Chakra and PyTorch execution-trace readers, the Chakra
# writer, the rank layout, transforms and checks, the point-to-point order check. Built into
# $(WORKLOAD_LIB), which phynet, the tools, the unit tests and the fuzzers use; it depends on the
# trace library and the engine's headers only.
#
# Chakra files are protobuf, PyTorch execution traces JSON, either often gzipped: with protoc and
# libprotobuf (Debian protobuf-compiler, libprotobuf-dev), nlohmann's JSON header (nlohmann-json3-dev)
# and zlib (zlib1g-dev), chakra_et.proto
# is compiled into $(BUILD)/gen/workload/ and every program that links the workload library links
# $(WORKLOAD_LDLIBS). Without them (the GPU machine has no package registry) both readers and the
# Chakra writer are replaced by foreign_formats_unavailable.cc, which says what to install, and their
# tests are left out (HAVE_FOREIGN_FORMAT_LIBS is decided in the top Makefile).
FOREIGN_FORMAT_SRCS := workload/chakra_file.cc workload/chakra_groups.cc workload/chakra_workload.cc \
  workload/chakra_export.cc workload/input_file.cc $(wildcard workload/pytorch_et_*.cc)
WORKLOAD_SRCS := $(filter-out workload/foreign_formats_unavailable.cc $(FOREIGN_FORMAT_SRCS),$(wildcard workload/*.cc))
ifeq ($(HAVE_FOREIGN_FORMAT_LIBS),yes)
CHAKRA_PB_H := $(BUILD)/gen/workload/chakra_et.pb.h
CHAKRA_PB_OBJ := $(BUILD)/obj/gen/workload/chakra_et.pb.o
WORKLOAD_OBJS := $(WORKLOAD_SRCS:%.cc=$(BUILD)/obj/%.o) $(FOREIGN_FORMAT_SRCS:%.cc=$(BUILD)/obj/%.o) $(CHAKRA_PB_OBJ)
WORKLOAD_LDLIBS := $(shell pkg-config --libs protobuf) -lz

$(BUILD)/gen/workload/chakra_et.pb.cc $(CHAKRA_PB_H): workload/chakra_et.proto
	@mkdir -p $(BUILD)/gen
	$(PROTOC) -I. --cpp_out=$(BUILD)/gen $<

$(CHAKRA_PB_OBJ): $(BUILD)/gen/workload/chakra_et.pb.cc $(CHAKRA_PB_H)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -Wno-extra -c $< -o $@

# Whatever includes the generated header waits for it.
$(WORKLOAD_OBJS) $(TOOLS_LIB_OBJS) $(TEST_OBJS) $(PHYNET_CORE_OBJS) $(PHYNET_MPI_OBJS): | $(CHAKRA_PB_H)
else
WORKLOAD_OBJS := $(WORKLOAD_SRCS:%.cc=$(BUILD)/obj/%.o) $(BUILD)/obj/workload/foreign_formats_unavailable.o
WORKLOAD_LDLIBS :=
$(info note: protoc, libprotobuf, nlohmann/json.hpp or zlib.h not found: built without the Chakra and PyTorch ET readers)
endif

$(WORKLOAD_LIB): $(WORKLOAD_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Programs that link the workload library.
$(UNIT_TESTS) $(PHYNET) $(NCCLSHIM_TOOL): LDLIBS += $(WORKLOAD_LDLIBS)

# The unit tests of the formats (tests/phynet/*, tests/tools/*) reach it through the phynet and
# tools libraries' link lines, which name it after them.
