// Harness of the shim's process tests, written only against nccl.h (and POSIX): named checks that
// print one result line each, unique-id exchange between rank processes through files, NCCL error
// formatting, and typed element access for every ncclDataType_t (including the 16- and 8-bit floats,
// converted here by hand so the test depends on nothing of ncclshim).
#pragma once

#include <nccl.h>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace shimtest {

// One rank's view of a scenario run.
struct Context {
  std::string scenario;
  int rank = 0;
  int nranks = 1;
  std::string dir;  // scratch directory shared by the ranks of the scenario
};

// Keeps the first of several error messages ("" = success).
struct FirstError {
  std::string message;
  void keep(const std::string& error) {
    if (message.empty()) message = error;
  }
};

// Runs fn and prints "CHECK PASS <scenario>/<name>" or "CHECK FAIL <scenario>/<name>: <why>".
// fn returns "" on success. Returns true on success.
bool runCheck(const Context& ctx, const std::string& name, const std::function<std::string()>& fn);

// "" on ncclSuccess, else "<what> returned <result string>: <ncclGetLastError>".
std::string ncclFailure(ncclResult_t result, const std::string& what, ncclComm_t comm = nullptr);
// "" when `result` is `want` and ncclGetLastError(nullptr) mentions every needle.
std::string expectError(ncclResult_t result, ncclResult_t want, const std::string& call,
                        std::initializer_list<const char*> needles);
#define NT_TRY(call)                                                                  \
  do {                                                                                \
    ncclResult_t nt_result_ = (call);                                                 \
    if (nt_result_ != ncclSuccess) return ::shimtest::ncclFailure(nt_result_, #call); \
  } while (0)

// Rank 0 creates a unique id and publishes it as <dir>/<name>.id; the other ranks wait for it.
// Returns false (with *error set) when it does not appear in time.
bool shareUniqueId(const Context& ctx, const std::string& name, ncclUniqueId* id, std::string* error);
// Creates the communicator of the scenario's ranks through a shared id.
std::string initComm(const Context& ctx, const std::string& idName, ncclComm_t* comm);
// File flags between ranks: touch and wait (false on timeout).
void touchFile(const Context& ctx, const std::string& name);
bool waitForFile(const Context& ctx, const std::string& name, double seconds);

double secondsNow();

// Typed element access.
size_t typeSize(ncclDataType_t type);
const char* typeName(ncclDataType_t type);
bool isFloatType(ncclDataType_t type);
// Stores an exactly representable value (aborts the test on a value the type cannot hold exactly).
void storeValue(ncclDataType_t type, void* buffer, size_t index, double value);
double loadValue(ncclDataType_t type, const void* buffer, size_t index);
// Relative tolerance for results that are rounded (Avg, PreMulSum) in a float type.
double roundingTolerance(ncclDataType_t type);
inline constexpr ncclDataType_t kAllTypes[] = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                               ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                               ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

// A host buffer of `count` elements of `type`.
struct Buffer {
  ncclDataType_t type = ncclFloat32;
  std::vector<unsigned char> bytes;
  Buffer(ncclDataType_t t, size_t count) : type(t), bytes(count * typeSize(t) + 1, 0xA5) {}
  void* data() { return bytes.data(); }
  void* at(size_t element) { return bytes.data() + element * typeSize(type); }
  void set(size_t i, double v) { storeValue(type, bytes.data(), i, v); }
  double get(size_t i) const { return loadValue(type, bytes.data(), i); }
};

// Compares count elements of `got` (from element `offset`) against expected(i); exact unless
// `rounded`. Returns "" or a message naming the first bad element.
std::string compare(const std::string& what, const Buffer& got, size_t offset, size_t count,
                    const std::function<double(size_t)>& expected, bool rounded = false);

}  // namespace shimtest
