// Pointer misuse, one process (communicators of one rank from ncclCommInitAll): a comm pointer the
// library never handed out (unmapped, a stack or heap buffer), an unknown or spent registration
// handle, ncclMemFree of memory ncclMemAlloc did not return, a destroyed communicator whose memory
// a new one took, and a communicator destroyed while its work waits in a group. Each is an error
// with a message, never a crash, and never silently the new communicator.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "shim_checks.h"

namespace shimtest {
namespace {

// Addresses nothing maps (the null page, and one far below the program and its heap) and memory
// that is mapped but holds no communicator.
std::vector<void*> garbagePointers(void* stackBuffer, void* heapBuffer) {
  return {reinterpret_cast<void*>(uintptr_t{0x10}), reinterpret_cast<void*>(uintptr_t{0xdead0000}), stackBuffer,
          heapBuffer};
}

std::string hex(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", pointer);
  return text;
}

std::string oneRankComm(ncclComm_t* comm) {
  NT_TRY(ncclCommInitAll(comm, 1, nullptr));
  return "";
}

}  // namespace

void scenarioHandles(const Context& ctx) {
  runCheck(ctx, "garbage-comm-pointer", [&]() -> std::string {
    unsigned char stackBuffer[512];
    std::memset(stackBuffer, 0x5a, sizeof(stackBuffer));
    std::vector<unsigned char> heapBuffer(512, 0xa5);
    float data[4] = {1, 2, 3, 4};
    FirstError first;
    for (void* pointer : garbagePointers(stackBuffer, heapBuffer.data())) {
      auto comm = static_cast<ncclComm_t>(pointer);
      const std::string at = " on comm " + hex(pointer);
      int count = -1;
      void* handle = nullptr;
      first.keep(expectError(ncclCommCount(comm, &count), ncclInvalidArgument, "ncclCommCount" + at,
                             {"ncclCommCount", "not a live communicator"}));
      first.keep(expectError(ncclAllReduce(data, data, 4, ncclFloat32, ncclSum, comm, nullptr), ncclInvalidArgument,
                             "ncclAllReduce" + at, {"ncclAllReduce", "comm"}));
      first.keep(expectError(ncclSend(data, 4, ncclFloat32, 0, comm, nullptr), ncclInvalidArgument, "ncclSend" + at,
                             {"ncclSend", "comm"}));
      first.keep(expectError(ncclCommRegister(comm, data, sizeof(data), &handle), ncclInvalidArgument,
                             "ncclCommRegister" + at, {"ncclCommRegister", "comm"}));
      first.keep(expectError(ncclCommDeregister(comm, pointer), ncclInvalidArgument, "ncclCommDeregister" + at,
                             {"ncclCommDeregister", "comm"}));
      first.keep(
          expectError(ncclCommDestroy(comm), ncclInvalidArgument, "ncclCommDestroy" + at, {"ncclCommDestroy", "comm"}));
      (void)ncclGetLastError(comm);  // a string, whatever the pointer
    }
    return first.message;
  });

  runCheck(ctx, "unknown-deregister-handle", [&]() -> std::string {
    ncclComm_t comm = nullptr, other = nullptr;
    std::string error = oneRankComm(&comm);
    if (error.empty()) error = oneRankComm(&other);
    if (!error.empty()) return error;
    unsigned char stackBuffer[256];
    std::memset(stackBuffer, 0x5a, sizeof(stackBuffer));
    std::vector<float> data(1024, 1.0f);
    FirstError first;
    for (void* handle : garbagePointers(stackBuffer, data.data())) {
      first.keep(expectError(ncclCommDeregister(comm, handle), ncclInvalidArgument,
                             "ncclCommDeregister of handle " + hex(handle), {"ncclCommDeregister", "handle"}));
    }
    void* mine = nullptr;
    void* theirs = nullptr;
    NT_TRY(ncclCommRegister(comm, data.data(), data.size() * sizeof(float), &mine));
    NT_TRY(ncclCommRegister(other, data.data(), data.size() * sizeof(float), &theirs));
    first.keep(expectError(ncclCommDeregister(comm, theirs), ncclInvalidArgument,
                           "ncclCommDeregister of another communicator's handle", {"ncclCommDeregister"}));
    NT_TRY(ncclCommDeregister(comm, mine));
    first.keep(expectError(ncclCommDeregister(comm, mine), ncclInvalidArgument, "a second ncclCommDeregister",
                           {"ncclCommDeregister"}));
    NT_TRY(ncclCommDeregister(other, theirs));
    NT_TRY(ncclCommDestroy(comm));
    NT_TRY(ncclCommDestroy(other));
    return first.message;
  });

  runCheck(ctx, "mem-free-not-from-mem-alloc", [&]() -> std::string {
    unsigned char stackBuffer[256];
    std::memset(stackBuffer, 0x5a, sizeof(stackBuffer));
    FirstError first;
    first.keep(expectError(ncclMemFree(stackBuffer), ncclInvalidArgument, "ncclMemFree of a stack buffer",
                           {"ncclMemFree", "ncclMemAlloc"}));
    void* memory = nullptr;
    NT_TRY(ncclMemAlloc(&memory, 4096));
    first.keep(expectError(ncclMemFree(static_cast<char*>(memory) + 64), ncclInvalidArgument,
                           "ncclMemFree inside an allocation", {"ncclMemFree"}));
    NT_TRY(ncclMemFree(memory));
    first.keep(expectError(ncclMemFree(memory), ncclInvalidArgument, "a second ncclMemFree", {"ncclMemFree"}));
    NT_TRY(ncclMemFree(nullptr));  // as cudaFree(NULL): nothing
    return first.message;
  });

  // The new communicator is made right after the old one is freed, the same size: the allocator
  // hands it the old one's memory (the message says whether it did, for the record).
  runCheck(ctx, "destroyed-comm-address-reused", [&]() -> std::string {
    ncclComm_t old = nullptr, fresh = nullptr;
    std::string error = oneRankComm(&old);
    if (!error.empty()) return error;
    NT_TRY(ncclCommDestroy(old));
    error = oneRankComm(&fresh);
    if (!error.empty()) return error;
    const std::string which = old == fresh ? " (the new communicator has the same handle)" : "";
    int count = -1;
    int32_t one = 1, sum = 0;
    FirstError first;
    first.keep(expectError(ncclCommCount(old, &count), ncclInvalidArgument,
                           "ncclCommCount on the destroyed comm" + which, {"not a live communicator"}));
    first.keep(expectError(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, old, nullptr), ncclInvalidArgument,
                           "ncclAllReduce on the destroyed comm" + which, {"ncclAllReduce"}));
    first.keep(expectError(ncclCommDestroy(old), ncclInvalidArgument, "a second ncclCommDestroy" + which,
                           {"ncclCommDestroy"}));
    if (!first.message.empty()) return first.message;
    NT_TRY(ncclCommCount(fresh, &count));
    NT_TRY(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, fresh, nullptr));
    NT_TRY(ncclCommDestroy(fresh));
    if (count != 1 || sum != 1) {
      return "the new communicator counts " + std::to_string(count) + " ranks, allreduce gave " + std::to_string(sum);
    }
    return "";
  });

  runCheck(ctx, "comm-destroyed-inside-group", [&]() -> std::string {
    ncclComm_t comm = nullptr;
    std::string error = oneRankComm(&comm);
    if (!error.empty()) return error;
    int32_t one = 1, sum = 0;
    NT_TRY(ncclGroupStart());
    NT_TRY(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, comm, nullptr));
    NT_TRY(ncclCommDestroy(comm));
    return expectError(ncclGroupEnd(), ncclInvalidUsage, "ncclGroupEnd after destroying the group's communicator",
                       {"destroyed before ncclGroupEnd"});
  });
}

}  // namespace shimtest
