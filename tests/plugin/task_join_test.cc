// The profiler plugin's task handle contents (libshim/profiler_task_join.h): NCCL's function names
// to their numbers as the plugin sees them (zero-padded fields), and the ticket round trip.
#include <cstring>

#include "libshim/profiler_task_join.h"
#include "tests/catch.h"
#include "trace/trace_record.h"

namespace nshim::profiler {
namespace {

// A record's field holding `name` as makeTaskRecord + copyName leave it: zero-padded.
void fill(char (&field)[trace::kNcclNameBytes], const char* name) {
  std::memset(field, 0, sizeof(field));
  std::strncpy(field, name, sizeof(field) - 1);
}

TEST_CASE("ncclFuncNumber names every function of NCCL's table and nothing else", "[plugin]") {
  char field[trace::kNcclNameBytes];
  for (uint32_t i = 1; i < 16; ++i) {
    fill(field, kNcclFuncNames[i]);
    CHECK(ncclFuncNumber(field) == i);
  }
  // Unknown names, prefixes, extensions, and names that differ only past the first word.
  for (const char* other : {"", "A", "All", "AllReduc", "AllReduceX", "ReduceScatte", "ReduceScatteR", "ReduceScatterX",
                            "SendRecv2", "Sen", "allreduce", "Broadcast ", "WaitSignaL", "PutSignalXYZW"}) {
    fill(field, other);
    CHECK(ncclFuncNumber(field) == 0);
  }
}

TEST_CASE("a task's ticket carries its call's sequence number, whether it was joined, and its function", "[plugin]") {
  for (uint64_t seq : {uint64_t{0}, uint64_t{1}, uint64_t{123456789}, (uint64_t{1} << 56) - 1}) {
    for (bool joined : {false, true}) {
      for (uint32_t func = 0; func < 16; ++func) {
        const TaskJoin back = taskJoinOf(taskJoinTicket(TaskJoin{seq, joined, func}));
        CHECK(back.seq == seq);
        CHECK(back.joined == joined);
        CHECK(back.func == func);
      }
    }
  }
}

}  // namespace
}  // namespace nshim::profiler
