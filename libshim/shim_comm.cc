// ShimComm: handle validation, life-cycle state, error bookkeeping and buffer registrations of a
// GPU-free communicator.
#include "libshim/shim_comm.h"

#include <atomic>

#include "common/hot_section.h"
#include "common/log.h"
#include "libshim/handle_table.h"

namespace nshim {
namespace {

constexpr uint32_t kMaxLiveComms = 1u << 14;  // far above what jobs create (the record hook's table holds 4096)

HandleTable gCommHandles(/*tag=*/0xc5, kMaxLiveComms);

// Registration handles are numbered, never reused, and looked up only in their communicator's map.
constexpr uintptr_t kRegistrationTag = 0xa7;
std::atomic<uint64_t> gNextRegistration{1};

}  // namespace

ShimComm::ShimComm(int rank, int nranks, int device, CommFabric fabric, uint64_t commId, bool blocking)
    : rank_(rank), nranks_(nranks), device_(device), fabric_(fabric), commId_(commId), blocking_(blocking) {}

Result<std::unique_ptr<ShimComm>> ShimComm::create(int rank, int nranks, int device, CommFabric fabric, uint64_t commId,
                                                   bool blocking) {
  std::unique_ptr<ShimComm> comm(new ShimComm(rank, nranks, device, fabric, commId, blocking));
  comm->handle_ = gCommHandles.add(comm.get());
  if (comm->handle_ == nullptr) {
    return NS_ERROR(Code::kSystemError, "more than {} live communicators in this process; destroy some first",
                    kMaxLiveComms);
  }
  return comm;
}

// The handle dies first: from here on no call finds this communicator.
ShimComm::~ShimComm() { gCommHandles.remove(handle_); }

NSHIM_HOT_CODE ShimComm* ShimComm::fromHandle(const void* handle) noexcept {
  return static_cast<ShimComm*>(gCommHandles.find(handle));
}

std::string ShimComm::describe() const { return fmt::format("rank {} of {} (comm {:#018x})", rank_, nranks_, commId_); }

Status ShimComm::attach(std::unique_ptr<Communicator> engine) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (state_ == State::kAborted) {
    engine->transport().abort("communicator aborted while connecting");
    return NS_ERROR(Code::kInvalidUsage, "{}: aborted while connecting", describe());
  }
  engine_ = std::move(engine);
  state_ = State::kReady;
  return Status::Ok();
}

void ShimComm::failSetup(const Status& status) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (state_ == State::kConnecting) state_ = State::kFailed;
  if (asyncError_.ok()) asyncError_ = status;
}

Status ShimComm::checkUsable() const {
  std::lock_guard<std::mutex> lock(stateMutex_);
  switch (state_) {
    case State::kReady:
      if (asyncError_.ok()) return Status::Ok();
      return Status(asyncError_.code(),
                    fmt::format("{} failed earlier and must be destroyed or aborted; first error: {}", describe(),
                                asyncError_.message()));
    case State::kConnecting:
      return NS_ERROR(Code::kInvalidUsage,
                      "{} is not connected yet (its ncclCommInitRank is still pending "
                      "in an unfinished group)",
                      describe());
    case State::kFailed:
      return Status(asyncError_.code(), fmt::format("{} could not be created: {}", describe(), asyncError_.message()));
    case State::kFinalized:
      return NS_ERROR(Code::kInvalidUsage, "{} was finalized; no operation may be issued on it", describe());
    case State::kAborted: return NS_ERROR(Code::kInvalidUsage, "{} was aborted", describe());
  }
  return NS_ERROR(Code::kInternal, "{}: unknown state", describe());
}

void ShimComm::recordFailure(const Status& status) {
  // Argument and usage errors are found before anything is sent: the peers are unaffected.
  if (status.ok() || status.code() == Code::kInvalidArgument || status.code() == Code::kInvalidUsage) return;
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (!asyncError_.ok()) return;
  asyncError_ = status;
  if (engine_) engine_->transport().abort(status.message());
}

Status ShimComm::asyncError() const {
  std::lock_guard<std::mutex> lock(stateMutex_);
  return asyncError_;
}

void ShimComm::recordCallMismatch(const Status& status) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (asyncError_.ok()) asyncError_ = status;
}

void* ShimComm::registerBuffer(const void* buf, size_t bytes) {
  const uint64_t number = gNextRegistration.fetch_add(1, std::memory_order_relaxed);
  const void* handle = reinterpret_cast<const void*>(uintptr_t{number} << 8 | kRegistrationTag);
  const void* registered = buf != nullptr && bytes > 0 ? buf : nullptr;
  registrationHandles_.emplace(handle, registered);
  if (registered != nullptr) registerWithTransport(buf, bytes);
  return const_cast<void*>(handle);
}

void ShimComm::registerWithTransport(const void* buf, size_t bytes) {
  BufferRegistration& entry = registrations_[buf];
  if (entry.handles++ > 0 || !checkUsable().ok()) return;
  auto registration = MemoryRegistration::create(engine_->transport(), buf, bytes);
  if (registration.ok()) {
    entry.transport = std::move(registration).value();
  } else {
    NS_INFO("{}: ncclCommRegister of {} bytes at {} stays a host buffer without zero copy: {}", describe(), bytes, buf,
            registration.status().message());
  }
}

bool ShimComm::deregisterBuffer(const void* handle) {
  auto found = registrationHandles_.find(handle);
  if (found == registrationHandles_.end()) return false;
  const void* buf = found->second;
  registrationHandles_.erase(found);
  auto it = buf != nullptr ? registrations_.find(buf) : registrations_.end();
  if (it != registrations_.end() && --it->second.handles == 0) registrations_.erase(it);
  return true;
}

void ShimComm::markFinalized() {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (state_ == State::kReady) state_ = State::kFinalized;
}

void ShimComm::abortTransport(const std::string& reason) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  state_ = State::kAborted;
  if (engine_) engine_->transport().abort(reason);
}

}  // namespace nshim
