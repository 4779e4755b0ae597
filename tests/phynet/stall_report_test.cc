// A stalled replay says so: a transport wait that sleeps notes its peer (transport/core/wait_note.h) and
// clears the note when it returns; the stall line names rank, communicator, op and the peer's
// global rank.
#include <thread>

#include "phynet/stall_report.h"
#include "tests/catch.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim::phynet {

TEST_CASE("a sleeping transport wait notes its peer until it returns", "[phynet]") {
  std::vector<std::unique_ptr<Transport>> transports = createInProcessTransports(3);
  Transport& waiter = *transports[0];
  CHECK(waiter.waitNote().read().peer == -1);
  char byte = 0;
  Request recv;
  REQUIRE(waiter.postRecv(2, 7, &byte, 1, &recv).ok());
  std::thread wait([&] { CHECK(waitOne(waiter, &recv, Deadline::after(30)).ok()); });
  WaitNote::Snapshot seen;
  for (int i = 0; i < 2000 && seen.peer < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seen = waiter.waitNote().read();
  }
  CHECK(seen.peer == 2);
  CHECK_FALSE(seen.isSend);
  CHECK(seen.sinceNs > 0);
  CHECK(seen.sinceNs <= nowNs());
  char one = 1;
  Request send;
  REQUIRE(transports[2]->postSend(0, 7, &one, 1, &send).ok());
  REQUIRE(waitOne(*transports[2], &send, Deadline::after(30)).ok());
  wait.join();
  CHECK(byte == 1);
  CHECK(waiter.waitNote().read().peer == -1);
}

TEST_CASE("a wait note tells sends from receives", "[phynet]") {
  WaitNote note;
  note.set(5, true, 123);
  WaitNote::Snapshot s = note.read();
  CHECK(s.peer == 5);
  CHECK(s.isSend);
  CHECK(s.sinceNs == 123);
  note.set(0, false, 456);
  s = note.read();
  CHECK(s.peer == 0);
  CHECK_FALSE(s.isSend);
  note.clear();
  CHECK(note.read().peer == -1);
}

TEST_CASE("the stall line names rank, communicator, op and the peer's global rank", "[phynet]") {
  CommGroup dp{0x1234, {4, 9}, "dp"};
  WorkOp op;
  op.kind = OpKind::kAllReduce;
  op.seq = 1234;
  op.source = SourceLine("w.txt", 7);
  CHECK(stallLine(4, 5.04, dp, op, 3, 1, {1, false, 1}) ==
        "phynet: rank 4 waits 5.0 s on comm 0x0000000000001234 (dp) allreduce seq 1234 (iteration 3, w.txt:7) "
        "for rank 9 (a receive from it)");
  op.kind = OpKind::kSend;
  op.source = SourceLine();
  CHECK(stallLine(9, 31.0, dp, op, 0, 4, {0, true, 1}) ==
        "phynet: rank 9 waits 31.0 s on comm 0x0000000000001234 (dp) send seq 1234 (iteration 0, first of a group "
        "of 4 ops) for rank 4 (a send to it)");
}

}  // namespace nshim::phynet
