// Status and Result<T>: the error type every internal call returns. An error carries a code, a
// message and the file:line where it was raised, so a failure deep in a transport can be reported
// at the NCCL API with its origin. No exceptions cross module boundaries.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>
#include <variant>

namespace nshim {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // caller passed a bad value (count, type, op, root, peer, null pointer)
  kInvalidUsage,     // call not valid in this state or not supported GPU-free
  kSystemError,      // a syscall or library call failed
  kRemoteError,      // a peer failed, disconnected or disagreed
  kTimeout,          // a deadline passed
  kInternal,         // a bug in ncclshim
};

const char* codeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string toString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : value_(std::move(status)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(value_);
  }
  T& value() & { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &std::get<T>(value_); }
  T& operator*() { return std::get<T>(value_); }

 private:
  std::variant<T, Status> value_;
};

namespace detail {
std::string withLocation(const std::string& message, const char* file, int line);
}  // namespace detail

}  // namespace nshim

// Build an error Status with a fmt-formatted message and the raising file:line.
#define NS_ERROR(code, ...) \
  ::nshim::Status((code), ::nshim::detail::withLocation(fmt::format(__VA_ARGS__), __FILE__, __LINE__))

// Propagate a failing Status (or Result) to the caller.
#define NS_RETURN_IF_ERROR(expr)             \
  do {                                       \
    auto&& ns_status_ = (expr);              \
    if (!ns_status_.ok()) return ns_status_; \
  } while (0)

#define NS_CONCAT_INNER(a, b) a##b
#define NS_CONCAT(a, b) NS_CONCAT_INNER(a, b)
// Assign the value of a Result to `lhs`, or return its error.
#define NS_ASSIGN_OR_RETURN(lhs, expr)                                                        \
  auto NS_CONCAT(ns_result_, __LINE__) = (expr);                                              \
  if (!NS_CONCAT(ns_result_, __LINE__).ok()) return NS_CONCAT(ns_result_, __LINE__).status(); \
  lhs = std::move(NS_CONCAT(ns_result_, __LINE__)).value()
