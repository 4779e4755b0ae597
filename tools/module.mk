# The `ncclshim` command (tools/): perf today; trace tools join it. It is written against nccl.h
# and linked to libncclshim.so (found next to it through $ORIGIN); the engine archive supplies only
# the element conversions the data checks use.
TOOL_SRCS := tools/ncclshim_main.cc $(wildcard tools/perf/*.cc)
TOOL_OBJS := $(TOOL_SRCS:%.cc=$(BUILD)/obj/%.o)
NCCLSHIM_TOOL := $(BUILD)/ncclshim

all: $(NCCLSHIM_TOOL)

$(BUILD)/obj/tools/%.o: tools/%.cc $(NCCL_CFLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(NCCL_CFLAGS) -c $< -o $@

$(NCCLSHIM_TOOL): $(TOOL_OBJS) $(ENGINE_LIB) $(SHIM_LIB)
	$(CXX) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(ENGINE_LIB) -L$(BUILD) -lncclshim -Wl,-rpath,'$$ORIGIN' $(LDLIBS)
