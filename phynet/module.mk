# phynet, the replayer (`mpirun -np N build/phynet ...`), and its test-trace generator. MPI stays in
# phynet: only phynet_main.cc and mpi_*.cc include <mpi.h>, compiled with Open MPI's flags
# (mpicxx --showme). Everything else of phynet (executors, validation across ranks, report) goes
# into $(PHYNET_LIB), which the unit tests link as well; the input formats are workload/'s.
MPICXX ?= mpicxx
MPI_CFLAGS := $(shell $(MPICXX) --showme:compile 2>/dev/null) -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1
MPI_LIBS := $(shell $(MPICXX) --showme:link 2>/dev/null)

PHYNET_MPI_SRCS := phynet/phynet_main.cc $(wildcard phynet/mpi_*.cc)
PHYNET_CORE_SRCS := $(filter-out $(PHYNET_MPI_SRCS),$(wildcard phynet/*.cc))
PHYNET_CORE_OBJS := $(PHYNET_CORE_SRCS:%.cc=$(BUILD)/obj/%.o)
PHYNET_MPI_OBJS := $(PHYNET_MPI_SRCS:%.cc=$(BUILD)/obj/%.o)
PHYNET_LIB := $(BUILD)/libphynet.a
PHYNET := $(BUILD)/phynet
PHYNET_TRACE_GEN := $(BUILD)/phynet_make_test_trace
PHYNET_FLOW := $(BUILD)/phynet_flow

.PHONY: phynet
all: $(PHYNET) $(PHYNET_TRACE_GEN) $(PHYNET_FLOW)
phynet: $(PHYNET) $(PHYNET_TRACE_GEN) $(PHYNET_FLOW)

$(PHYNET_MPI_OBJS): $(BUILD)/obj/phynet/%.o: phynet/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(MPI_CFLAGS) -c $< -o $@

$(PHYNET_LIB): $(PHYNET_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(PHYNET): $(PHYNET_MPI_OBJS) $(PHYNET_LIB) $(WORKLOAD_LIB) $(BUILD)/libtrace.a $(ENGINE_LIB)
	$(CXX) $(LDFLAGS) -o $@ $(PHYNET_MPI_OBJS) $(PHYNET_LIB) $(WORKLOAD_LIB) $(BUILD)/libtrace.a $(ENGINE_LIB) \
	  $(MPI_LIBS) $(LDLIBS)

# The generator lives one folder down so that the unit-test wildcard (tests/*/*.cc) leaves it out.
$(PHYNET_TRACE_GEN): $(BUILD)/obj/tests/phynet/tools/make_test_trace.o $(BUILD)/libtrace.a $(ENGINE_LIB)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Background flows of `phynet --jobs` (phynet/flow/: outside the library's wildcard). The RDMA flow
# opens its device and QP through the ibverbs transport (transport/ibverbs/ibverbs_write_stream.h):
# phynet may use transport/ (tests/suites/layers_tests.sh), and libibverbs is still loaded at run
# time, so the TCP flow runs where rdma-core is absent.
PHYNET_FLOW_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard phynet/flow/*.cc))
$(PHYNET_FLOW): $(PHYNET_FLOW_OBJS) $(TRANSPORT_LIB) $(COMMON_LIB)
	$(CXX) $(LDFLAGS) -o $@ $(PHYNET_FLOW_OBJS) $(TRANSPORT_LIB) $(COMMON_LIB) $(LDLIBS)

# The job file of `phynet --jobs` is TOML, read with toml++ (header-only, Debian libtomlplusplus-dev).
# Where it is missing (the GPU machine), phynet builds and --jobs says it is unavailable.
ifeq ($(wildcard /usr/include/toml++/toml.h /usr/local/include/toml++/toml.h),)
$(BUILD)/obj/phynet/job_file.o: CXXFLAGS += -DNSHIM_NO_TOMLPLUSPLUS
endif

# Unit tests of phynet (tests/phynet/*.cc) need the phynet library, then workload, trace and engine
# again.
$(UNIT_TESTS): $(PHYNET_LIB) $(WORKLOAD_LIB)
$(UNIT_TESTS): LDLIBS += $(PHYNET_LIB) $(WORKLOAD_LIB) $(BUILD)/libtrace.a $(ENGINE_LIB)
