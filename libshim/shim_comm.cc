// ShimComm: handle validation, life-cycle state, error bookkeeping and buffer registrations of a
// GPU-free communicator.
#include "libshim/shim_comm.h"

#include "common/log.h"

namespace nshim {

ShimComm::ShimComm(int rank, int nranks, int device, CommFabric fabric, uint64_t commId, bool blocking)
    : rank_(rank), nranks_(nranks), device_(device), fabric_(fabric), commId_(commId), blocking_(blocking) {}

ShimComm::~ShimComm() { magic_ = 0; }

ShimComm* ShimComm::fromHandle(void* handle) {
  auto* comm = static_cast<ShimComm*>(handle);
  return comm != nullptr && comm->magic_ == kMagic ? comm : nullptr;
}

std::string ShimComm::describe() const {
  return fmt::format("rank {} of {} (comm {:#018x})", rank_, nranks_, commId_);
}

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
      return NS_ERROR(Code::kInvalidUsage, "{} is not connected yet (its ncclCommInitRank is still pending "
                      "in an unfinished group)", describe());
    case State::kFailed:
      return Status(asyncError_.code(),
                    fmt::format("{} could not be created: {}", describe(), asyncError_.message()));
    case State::kFinalized:
      return NS_ERROR(Code::kInvalidUsage, "{} was finalized; no operation may be issued on it", describe());
    case State::kAborted:
      return NS_ERROR(Code::kInvalidUsage, "{} was aborted", describe());
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

void ShimComm::registerBuffer(const void* buf, size_t bytes) {
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

void ShimComm::deregisterBuffer(const void* buf) {
  auto it = registrations_.find(buf);
  if (it != registrations_.end() && --it->second.handles == 0) registrations_.erase(it);
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
