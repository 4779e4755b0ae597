// Grows (and registers) the communicator's scratch memory.
#include "collectives/communicator.h"

#include "common/log.h"

namespace nshim {

char* Communicator::scratch(size_t bytes) {
  if (scratch_.size() >= bytes) return scratch_.data();
  scratchRegistration_.reset();
  scratch_.resize(bytes);
  auto registration = MemoryRegistration::create(*transport_, scratch_.data(), scratch_.size());
  if (registration.ok()) {
    scratchRegistration_ = std::move(registration).value();
  } else {
    NS_INFO("scratch of {} bytes not registered (staged receives copy): {}", bytes, registration.status().message());
  }
  return scratch_.data();
}

}  // namespace nshim
