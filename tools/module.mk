# The `ncclshim` command (tools/): perf, and the trace tools summary, diff, convert and plot. perf is
# written against nccl.h and linked to libncclshim.so (found next to it through $ORIGIN); the engine
# archive supplies only the element conversions the data checks use. The trace tools (tools/inspect/)
# read traces, workloads and reports through the trace and workload libraries (never phynet's);
# they form $(TOOLS_LIB), which the unit tests (tests/tools/) link as well. `plot` runs the Python script
# tools/plot/ncclshim_plot.py, copied next to the binary; `report` and `compare` (and phynet --html)
# run tools/report/report_main.py, copied with its modules into ncclshim_report/ next to it.
TOOLS_LIB_SRCS := $(wildcard tools/inspect/*.cc)
TOOLS_LIB_OBJS := $(TOOLS_LIB_SRCS:%.cc=$(BUILD)/obj/%.o)
TOOLS_LIB := $(BUILD)/libtools.a
TOOL_OBJS := $(BUILD)/obj/tools/ncclshim_main.o
NCCLSHIM_TOOL := $(BUILD)/ncclshim
# `ncclshim perf` runs the engine through libncclshim.so: a program of its own (perf_main.cc), which
# `ncclshim perf` executes, so that the file commands link only the formats, the model and common.
PERF_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/perf/*.cc))
NCCLSHIM_PERF := $(BUILD)/ncclshim-perf
NCCLSHIM_PLOT := $(BUILD)/ncclshim_plot.py
REPORT_PY_SRCS := $(wildcard tools/report/*.py)
REPORT_PY := $(REPORT_PY_SRCS:tools/report/%=$(BUILD)/ncclshim_report/%)
TOOLS_FILE_LIBS := $(TOOLS_LIB) $(WORKLOAD_LIB) $(TRACE_LIB) $(MODEL_LIB) $(COMMON_LIB)
TOOLS_DEP_LIBS := $(TOOLS_LIB) $(WORKLOAD_LIB) $(TRACE_LIB) $(ENGINE_LIB)

.PHONY: tools
all: $(NCCLSHIM_TOOL) $(NCCLSHIM_PERF) $(NCCLSHIM_PLOT) $(REPORT_PY)
tools: $(NCCLSHIM_TOOL) $(NCCLSHIM_PERF) $(NCCLSHIM_PLOT) $(REPORT_PY)

$(BUILD)/obj/tools/%.o: tools/%.cc $(NCCL_CFLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(NCCL_CFLAGS) -c $< -o $@

$(TOOLS_LIB): $(TOOLS_LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(NCCLSHIM_TOOL): $(TOOL_OBJS) $(TOOLS_FILE_LIBS) | $(NCCLSHIM_PERF)
	$(CXX) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(TOOLS_FILE_LIBS) $(LDLIBS)

$(NCCLSHIM_PERF): $(PERF_OBJS) $(TRACE_LIB) $(ENGINE_LIB) $(SHIM_LIB)
	$(CXX) $(LDFLAGS) -o $@ $(PERF_OBJS) $(TRACE_LIB) $(ENGINE_LIB) -L$(BUILD) -lncclshim -Wl,-rpath,'$$ORIGIN' $(LDLIBS)

$(NCCLSHIM_PLOT): tools/plot/ncclshim_plot.py
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/ncclshim_report/%.py: tools/report/%.py
	@mkdir -p $(dir $@)
	cp $< $@

# Unit tests of the trace tools (tests/tools/*.cc) need the tools library, then workload, trace and
# engine again behind it.
$(UNIT_TESTS): $(TOOLS_LIB)
$(UNIT_TESTS): LDLIBS += $(TOOLS_DEP_LIBS)
