// Staging memory for replays that do not check data (phynet/aliased_memory.h, --staging): a large
// buffer backed by a small region mapped over and over it, and the option that sets its size.
#include <cstring>
#include <string>
#include <vector>

#include "phynet/aliased_memory.h"
#include "phynet/op_runner.h"
#include "phynet/replay_options.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

TEST_CASE("aliased memory: every physical-sized stretch of the buffer is the same memory", "[phynet][staging]") {
  auto memory = AliasedMemory::create((10 << 20) + 5, 1 << 20);
  INFO(memory.status().toString());
  REQUIRE(memory.ok());
  CHECK(memory->size() == 11u << 20);  // rounded up to a multiple of the physical size
  CHECK(memory->physical() == 1u << 20);
  char* base = memory->data();
  CHECK(base[123] == 0);  // zero-filled
  base[123] = 42;
  CHECK(base[(1 << 20) + 123] == 42);
  CHECK(base[(10 << 20) + 123] == 42);
  std::memset(base + (7 << 20), 7, 1 << 20);  // a whole stretch written through another alias
  CHECK(base[0] == 7);
  CHECK(base[(1 << 20) - 1] == 7);
  AliasedMemory moved = std::move(memory).value();
  CHECK(moved.data() == base);
}

TEST_CASE("an arena with staging backs large buffers with the staging size only", "[phynet][staging]") {
  CommArena arena;
  arena.setStaging(4 << 20);
  arena.reserve(BufferNeed{64u << 20, 2u << 20});
  CHECK(arena.bytes() == (4u << 20) + (2u << 20));  // the send side is staged, the small receive side whole
  arena.send()[5] = 9;
  CHECK(arena.send()[(60 << 20) + 5] == 9);
  CHECK(arena.recv()[(2 << 20) - 1] == 0);
  CommArena whole;
  whole.reserve(BufferNeed{64u << 20, 1});
  CHECK(whole.bytes() == (64u << 20) + 1);
}

Result<ReplayOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "phynet");
  args.push_back("trace_dir");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return parseReplayOptions(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE("--staging takes a size or 'whole' and refuses anything else", "[phynet][staging]") {
  auto byDefault = parse({});
  REQUIRE(byDefault.ok());
  CHECK(byDefault->stagingBytes == -1);  // NCCL's: 2 x NCCL_BUFFSIZE
  auto sized = parse({"--staging", "16M"});
  REQUIRE(sized.ok());
  CHECK(sized->stagingBytes == 16 << 20);
  auto whole = parse({"--staging", "whole"});
  REQUIRE(whole.ok());
  CHECK(whole->stagingBytes == 0);
  for (const char* bad : {"1K", "lots", "-3"}) {
    auto refused = parse({"--staging", bad});
    INFO(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("--staging") != std::string::npos);
  }
}

}  // namespace
}  // namespace nshim::phynet
