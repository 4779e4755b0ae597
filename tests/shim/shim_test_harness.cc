// Implementation of the process-test harness: check lines, id files, typed element conversions.
#include "shim_test_harness.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace shimtest {

bool runCheck(const Context& ctx, const std::string& name, const std::function<std::string()>& fn) {
  std::string why = fn();
  for (char& c : why) {
    if (c == '\n') c = ' ';
  }
  if (why.empty()) {
    std::printf("CHECK PASS %s/%s\n", ctx.scenario.c_str(), name.c_str());
  } else {
    std::printf("CHECK FAIL %s/%s: %s\n", ctx.scenario.c_str(), name.c_str(), why.c_str());
  }
  std::fflush(stdout);
  return why.empty();
}

std::string ncclFailure(ncclResult_t result, const std::string& what, ncclComm_t comm) {
  if (result == ncclSuccess) return "";
  return what + " returned " + std::to_string(result) + " (" + ncclGetErrorString(result) +
         "): " + ncclGetLastError(comm);
}

std::string expectError(ncclResult_t result, ncclResult_t want, const std::string& call,
                        std::initializer_list<const char*> needles) {
  std::string last = ncclGetLastError(nullptr);
  if (result != want) {
    return call + " returned " + std::to_string(result) + ", expected " + std::to_string(want) +
           " (last error: " + last + ")";
  }
  for (const char* needle : needles) {
    if (last.find(needle) == std::string::npos) {
      return call + ": ncclGetLastError does not mention '" + needle + "': " + last;
    }
  }
  return "";
}

double secondsNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void touchFile(const Context& ctx, const std::string& name) {
  std::string path = ctx.dir + "/" + name;
  std::ofstream(path + ".tmp") << ctx.rank << "\n";
  std::rename((path + ".tmp").c_str(), path.c_str());
}

bool waitForFile(const Context& ctx, const std::string& name, double seconds) {
  std::string path = ctx.dir + "/" + name;
  double end = secondsNow() + seconds;
  struct stat st;
  while (stat(path.c_str(), &st) != 0) {
    if (secondsNow() > end) return false;
    usleep(5000);
  }
  return true;
}

bool shareUniqueId(const Context& ctx, const std::string& name, ncclUniqueId* id, std::string* error) {
  std::string file = name + ".id";
  if (ctx.rank == 0) {
    ncclResult_t result = ncclGetUniqueId(id);
    if (result != ncclSuccess) {
      *error = ncclFailure(result, "ncclGetUniqueId");
      return false;
    }
    std::string path = ctx.dir + "/" + file;
    std::ofstream out(path + ".tmp", std::ios::binary);
    out.write(id->internal, sizeof(id->internal));
    out.close();
    std::rename((path + ".tmp").c_str(), path.c_str());
    return true;
  }
  if (!waitForFile(ctx, file, 30)) {
    *error = "no unique id from rank 0 in " + ctx.dir + "/" + file;
    return false;
  }
  std::ifstream in(ctx.dir + "/" + file, std::ios::binary);
  in.read(id->internal, sizeof(id->internal));
  return true;
}

std::string initComm(const Context& ctx, const std::string& idName, ncclComm_t* comm) {
  ncclUniqueId id;
  std::string error;
  if (!shareUniqueId(ctx, idName, &id, &error)) return error;
  return ncclFailure(ncclCommInitRank(comm, ctx.nranks, id, ctx.rank), "ncclCommInitRank");
}

// ---- Element conversions ---------------------------------------------------------------------

namespace {

struct FloatFormat {
  int expBits;
  int manBits;
  int bias;
  bool ieeeSpecials;  // all-ones exponent is inf/NaN (not for e4m3, whose only NaN is S.1111.111)
};

FloatFormat formatOf(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16: return {5, 10, 15, true};
    case ncclBfloat16: return {8, 7, 127, true};
    case ncclFloat8e4m3: return {4, 3, 7, false};
    default: return {5, 2, 15, true};  // ncclFloat8e5m2
  }
}

double decodeSmallFloat(uint32_t bits, FloatFormat f) {
  uint32_t man = bits & ((1u << f.manBits) - 1);
  uint32_t exp = (bits >> f.manBits) & ((1u << f.expBits) - 1);
  bool negative = (bits >> (f.manBits + f.expBits)) & 1;
  uint32_t expMax = (1u << f.expBits) - 1;
  double value;
  if (f.ieeeSpecials && exp == expMax) {
    value = man == 0 ? INFINITY : NAN;
  } else if (!f.ieeeSpecials && exp == expMax && man == (1u << f.manBits) - 1) {
    value = NAN;
  } else if (exp == 0) {
    value = std::ldexp(static_cast<double>(man), 1 - f.bias - f.manBits);
  } else {
    value = std::ldexp(static_cast<double>(man + (1u << f.manBits)), static_cast<int>(exp) - f.bias - f.manBits);
  }
  return negative ? -value : value;
}

// Encodes an exactly representable normal value (or zero).
uint32_t encodeSmallFloat(double value, FloatFormat f) {
  uint32_t sign = value < 0 ? 1u << (f.manBits + f.expBits) : 0;
  double magnitude = std::fabs(value);
  if (magnitude == 0) return sign;
  int exponent = static_cast<int>(std::floor(std::log2(magnitude)));
  double fraction = magnitude / std::ldexp(1.0, exponent) - 1.0;
  uint32_t man = static_cast<uint32_t>(std::lround(fraction * (1 << f.manBits)));
  return sign | (static_cast<uint32_t>(exponent + f.bias) << f.manBits) | man;
}

}  // namespace

size_t typeSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    default: return 8;
  }
}

const char* typeName(ncclDataType_t type) {
  static const char* kNames[] = {"int8",    "uint8",   "int32",   "uint32",   "int64",   "uint64",
                                 "float16", "float32", "float64", "bfloat16", "fp8e4m3", "fp8e5m2"};
  return type >= 0 && type < ncclNumTypes ? kNames[type] : "invalid";
}

bool isFloatType(ncclDataType_t type) {
  return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 || type == ncclBfloat16 ||
         type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
}

double roundingTolerance(ncclDataType_t type) {
  switch (type) {
    case ncclFloat8e5m2: return 0.26;
    case ncclFloat8e4m3: return 0.13;
    case ncclBfloat16: return 0.01;
    case ncclFloat16: return 0.002;
    case ncclFloat32: return 1e-6;
    case ncclFloat64: return 1e-12;
    default: return 0;
  }
}

void storeValue(ncclDataType_t type, void* buffer, size_t i, double v) {
  char* p = static_cast<char*>(buffer);
  switch (type) {
    case ncclInt8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case ncclUint8: reinterpret_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case ncclInt32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case ncclUint32: reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
    case ncclInt64: reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case ncclUint64: reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
    case ncclFloat32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); break;
    case ncclFloat64: reinterpret_cast<double*>(p)[i] = v; break;
    case ncclFloat16:
    case ncclBfloat16:
      reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(encodeSmallFloat(v, formatOf(type)));
      break;
    default: reinterpret_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(encodeSmallFloat(v, formatOf(type))); break;
  }
  if (loadValue(type, buffer, i) != v) {
    std::fprintf(stderr, "test bug: %g is not exactly representable in %s\n", v, typeName(type));
    std::abort();
  }
}

double loadValue(ncclDataType_t type, const void* buffer, size_t i) {
  const char* p = static_cast<const char*>(buffer);
  switch (type) {
    case ncclInt8: return reinterpret_cast<const int8_t*>(p)[i];
    case ncclUint8: return reinterpret_cast<const uint8_t*>(p)[i];
    case ncclInt32: return reinterpret_cast<const int32_t*>(p)[i];
    case ncclUint32: return reinterpret_cast<const uint32_t*>(p)[i];
    case ncclInt64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case ncclUint64: return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
    case ncclFloat32: return reinterpret_cast<const float*>(p)[i];
    case ncclFloat64: return reinterpret_cast<const double*>(p)[i];
    case ncclFloat16:
    case ncclBfloat16: return decodeSmallFloat(reinterpret_cast<const uint16_t*>(p)[i], formatOf(type));
    default: return decodeSmallFloat(reinterpret_cast<const uint8_t*>(p)[i], formatOf(type));
  }
}

std::string compare(const std::string& what, const Buffer& got, size_t offset, size_t count,
                    const std::function<double(size_t)>& expected, bool rounded) {
  const double tolerance = rounded ? roundingTolerance(got.type) : 0;
  for (size_t i = 0; i < count; ++i) {
    double want = expected(i);
    double have = got.get(offset + i);
    bool ok = rounded && isFloatType(got.type) ? std::fabs(have - want) <= tolerance * std::max(1.0, std::fabs(want))
                                               : have == want;
    if (!ok) {
      std::ostringstream message;
      message << what << " (" << typeName(got.type) << ", " << count << " elements): element " << i << " is " << have
              << ", expected " << want;
      return message.str();
    }
  }
  return "";
}

}  // namespace shimtest
