# trace/: the recorder library ($(TRACE_LIB): recorder, reader, validator; linked into the unit
# tests here and into libncclshim.so by libshim/module.mk), the `ncclshim-trace` command (dump a
# trace as JSON Lines or CSV, validate it) and the recording micro-benchmark `bench_record`.
TRACE_MAIN_SRCS := trace/trace_cli.cc trace/bench_record.cc
TRACE_SRCS := $(filter-out $(TRACE_MAIN_SRCS),$(wildcard trace/*.cc))
TRACE_OBJS := $(TRACE_SRCS:%.cc=$(BUILD)/obj/%.o)
TRACE_LIB := $(BUILD)/libtrace.a
TRACE_CLI := $(BUILD)/ncclshim-trace
BENCH_RECORD := $(BUILD)/bench_record

.PHONY: trace
all: $(TRACE_LIB) $(TRACE_CLI) $(BENCH_RECORD)
trace: $(TRACE_LIB) $(TRACE_CLI) $(BENCH_RECORD)

$(TRACE_LIB): $(TRACE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The unit tests link the trace library. The top Makefile's recipe lists this prerequisite after
# the engine archive, so the engine is named once more behind it (for Status and logging).
$(UNIT_TESTS): $(TRACE_LIB)
$(UNIT_TESTS): LDLIBS += $(ENGINE_LIB)

$(TRACE_CLI): $(BUILD)/obj/trace/trace_cli.o $(TRACE_LIB) $(ENGINE_LIB)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BENCH_RECORD): $(BUILD)/obj/trace/bench_record.o $(TRACE_LIB) $(ENGINE_LIB)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS)
