// AliasedMemory: a memfd of the physical size mapped repeatedly (MAP_FIXED over a reserved range).
#include "phynet/aliased_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace nshim::phynet {
namespace {

size_t roundUp(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }

}  // namespace

AliasedMemory::~AliasedMemory() { release(); }

AliasedMemory::AliasedMemory(AliasedMemory&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)), size_(std::exchange(other.size_, 0)),
      physical_(std::exchange(other.physical_, 0)) {}

AliasedMemory& AliasedMemory::operator=(AliasedMemory&& other) noexcept {
  if (this != &other) {
    release();
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    physical_ = std::exchange(other.physical_, 0);
  }
  return *this;
}

void AliasedMemory::release() {
  if (base_ != nullptr) ::munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
  physical_ = 0;
}

Result<AliasedMemory> AliasedMemory::create(size_t bytes, size_t physical) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  physical = roundUp(std::max<size_t>(physical, 1), page);
  const size_t size = roundUp(std::max<size_t>(bytes, 1), physical);
  const int fd = ::memfd_create("phynet-staging", MFD_CLOEXEC);
  if (fd < 0) return NS_ERROR(Code::kInternal, "memfd_create: {}", std::strerror(errno));
  auto closeFd = [fd] { ::close(fd); };
  if (::ftruncate(fd, static_cast<off_t>(physical)) != 0) {
    Status error =
        NS_ERROR(Code::kInternal, "ftruncate of a {}-byte staging buffer: {}", physical, std::strerror(errno));
    closeFd();
    return error;
  }
  void* reserved = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) {
    Status error = NS_ERROR(Code::kInternal, "reserving {} bytes of address space: {}", size, std::strerror(errno));
    closeFd();
    return error;
  }
  AliasedMemory memory;
  memory.base_ = static_cast<char*>(reserved);
  memory.size_ = size;
  memory.physical_ = physical;
  for (size_t offset = 0; offset < size; offset += physical) {
    void* at =
        ::mmap(memory.base_ + offset, physical, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0);
    if (at == MAP_FAILED) {
      Status error =
          NS_ERROR(Code::kInternal, "mapping the staging buffer at offset {}: {}", offset, std::strerror(errno));
      closeFd();
      return error;  // `memory` unmaps the range
    }
  }
  closeFd();  // the mappings keep the memory
  return memory;
}

}  // namespace nshim::phynet
