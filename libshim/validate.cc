// Implementation of the API argument checks.
#include "libshim/validate.h"

#include <cstdint>
#include <string>

namespace nshim {

// Byte counts above this are refused; the engine tags and slices stay well inside 64 bits.
static constexpr size_t kMaxBytes = size_t{1} << 56;

Result<ShimComm*> checkComm(const char* fn, void* handle) {
  if (handle == nullptr) return NS_ERROR(Code::kInvalidArgument, "{}: comm is NULL", fn);
  ShimComm* comm = ShimComm::fromHandle(handle);
  if (comm == nullptr) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: comm {} is not a live communicator (destroyed, or not created by "
                    "ncclshim)",
                    fn, handle);
  }
  return comm;
}

Status checkDataType(const char* fn, int type) {
  if (!isValidDataType(type)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: invalid datatype {} (valid: 0..{}, ncclInt8..ncclFloat8e5m2)", fn,
                    type, kNumDataTypes - 1);
  }
  return Status::Ok();
}

Status checkCount(const char* fn, const char* name, size_t count, DataType type, size_t elementsPerCount) {
  size_t limit = kMaxBytes / dataTypeSize(type) / (elementsPerCount > 0 ? elementsPerCount : 1);
  if (count > limit) {
    std::string across = elementsPerCount > 1 ? fmt::format(" across {} ranks", elementsPerCount) : "";
    return NS_ERROR(Code::kInvalidArgument, "{}: {} {} is too large (more than 2^56 bytes of {}{})", fn, name, count,
                    dataTypeName(type), across);
  }
  return Status::Ok();
}

Status checkBuffer(const char* fn, const char* name, const void* buffer, size_t count) {
  if (count > 0 && buffer == nullptr) {
    return NS_ERROR(Code::kInvalidArgument, "{}: {} is NULL with count {}", fn, name, count);
  }
  return Status::Ok();
}

Status checkRank(const char* fn, const char* name, int value, int nranks) {
  if (value < 0 || value >= nranks) {
    return NS_ERROR(Code::kInvalidArgument, "{}: {} {} is out of range [0, {})", fn, name, value, nranks);
  }
  return Status::Ok();
}

Status checkNotNull(const char* fn, const char* name, const void* pointer) {
  if (pointer == nullptr) return NS_ERROR(Code::kInvalidArgument, "{}: {} is NULL", fn, name);
  return Status::Ok();
}

}  // namespace nshim
