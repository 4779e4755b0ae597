# The libFuzzer targets (fuzz/*_fuzz.cc), built with clang into $(FUZZ_BUILD): `make -f fuzz/fuzz.mk`
# from the repository root (tests/suites/fuzz_tests.sh does, then runs each target for a bounded
# time). The parsers under test and what they call are compiled from their sources with coverage,
# ASan and UBSan into one archive; each target links only what it uses from it. Not part of `make
# all`: it needs clang (14 is what scripts/setup.sh's machines have) and is slow to build.
FUZZ_CXX ?= clang++-14
FUZZ_BUILD ?= build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CXXFLAGS := -std=c++20 -O1 -g -Wall -Wextra -Wno-unused-parameter -I. -I$(FUZZ_BUILD)/gen -MMD -MP \
  $(FUZZ_SAN)

FUZZ_TARGETS := trace_reader simai_workload aicb_workload bootstrap unique_id chakra_et pytorch_et
FUZZ_LIB_SRCS := $(wildcard common/*.cc) model/datatype.cc collectives/float_convert.cc model/algorithm.cc \
  transport/bootstrap/socket.cc transport/bootstrap/nic_list.cc transport/bootstrap/unique_id.cc transport/bootstrap/bootstrap.cc transport/bootstrap/bootstrap_root.cc \
  transport/bootstrap/bootstrap_messages.cc transport/bootstrap/hello_acceptor.cc \
  trace/trace_reader.cc trace/trace_reader_nccl.cc trace/op_line_scan.cc trace/json_line.cc trace/trace_format.cc trace/trace_format_nccl.cc trace/trace_validate.cc trace/zstd_stream.cc \
  workload/simai_workload.cc workload/aicb_workload.cc workload/rank_layout.cc workload/workload.cc \
  workload/workload_check.cc workload/p2p_order_check.cc workload/workload_transform.cc workload/trace_workload.cc \
  workload/uneven_alltoall.cc \
  workload/source_line.cc workload/chakra_file.cc workload/chakra_groups.cc workload/chakra_workload.cc workload/input_file.cc \
  workload/input_format.cc \
  $(wildcard workload/pytorch_et_*.cc)
# Compressed traces (trace/zstd_stream.cc) as the main build has them: with zstd.h, libzstd.
ifneq ($(wildcard /usr/include/zstd.h),)
FUZZ_ZSTD_LIBS := -lzstd
$(FUZZ_BUILD)/obj/trace/zstd_stream.o: FUZZ_CXXFLAGS += -DNSHIM_HAVE_ZSTD=1
endif
FUZZ_LIB_OBJS := $(FUZZ_LIB_SRCS:%.cc=$(FUZZ_BUILD)/obj/%.o) $(FUZZ_BUILD)/obj/gen/workload/chakra_et.pb.o
FUZZ_LIB := $(FUZZ_BUILD)/libfuzzed.a
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%_fuzz)

.PHONY: fuzzers
fuzzers: $(FUZZ_BINS)

# Chakra's schema subset, compiled by protoc (the Chakra reader needs protobuf: scripts/setup.sh).
$(FUZZ_BUILD)/gen/workload/chakra_et.pb.cc $(FUZZ_BUILD)/gen/workload/chakra_et.pb.h: workload/chakra_et.proto
	@mkdir -p $(FUZZ_BUILD)/gen
	protoc -I. --cpp_out=$(FUZZ_BUILD)/gen $<

$(FUZZ_BUILD)/obj/gen/workload/chakra_et.pb.o: $(FUZZ_BUILD)/gen/workload/chakra_et.pb.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# Library objects get coverage without libFuzzer's main; the targets link it.
$(FUZZ_BUILD)/obj/%.o: %.cc | $(FUZZ_BUILD)/gen/workload/chakra_et.pb.h
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/%_fuzz: $(FUZZ_BUILD)/obj/fuzz/%_fuzz.o $(FUZZ_LIB)
	$(FUZZ_CXX) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ -pthread -ldl $(shell pkg-config --libs protobuf) -lz $(FUZZ_ZSTD_LIBS)

-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
