# workload/: the replay's input formats and what is derived from them without running anything —
# the workload model, the SimAI, AICB and trace readers, the rank layout, transforms and checks,
# the point-to-point order check. Built into $(WORKLOAD_LIB), which phynet, the tools, the unit
# tests and the fuzzers use; it depends on the trace library and the engine's headers only.
WORKLOAD_SRCS := $(wildcard workload/*.cc)
WORKLOAD_OBJS := $(WORKLOAD_SRCS:%.cc=$(BUILD)/obj/%.o)

$(WORKLOAD_LIB): $(WORKLOAD_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The unit tests of the formats (tests/phynet/*, tests/tools/*) reach it through the phynet and
# tools libraries' link lines, which name it after them.
