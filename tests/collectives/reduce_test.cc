// Tests of the host reduction kernels and the low-precision float conversions: exhaustive
// decode/encode checks against a reference built from ldexp, rounding at every midpoint, every
// type and operation against a double reference, wrapping, PreMulSum scaling, Avg division and
// aliasing of the output with an input.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "collectives/reduce.h"
#include "model/datatype.h"
#include "tests/catch.h"

namespace nshim {
namespace {

// A small float format (sign, E exponent bits, M mantissa bits) and our codec for it.
struct Format {
  const char* name;
  DataType type;
  int exponentBits;
  int mantissaBits;
  bool ieee;  // all-ones exponent is inf/NaN; otherwise only the all-ones pattern is NaN (e4m3)
  float (*decode)(uint32_t);
  uint32_t (*encode)(float);
};

const Format kFormats[] = {
    {"half", DataType::kFloat16, 5, 10, true, [](uint32_t b) { return halfToFloat(uint16_t(b)); },
     [](float f) -> uint32_t { return floatToHalf(f); }},
    {"bfloat16", DataType::kBfloat16, 8, 7, true, [](uint32_t b) { return bfloat16ToFloat(uint16_t(b)); },
     [](float f) -> uint32_t { return floatToBfloat16(f); }},
    {"e4m3", DataType::kFp8E4M3, 4, 3, false, [](uint32_t b) { return fp8e4m3ToFloat(uint8_t(b)); },
     [](float f) -> uint32_t { return floatToFp8e4m3(f); }},
    {"e5m2", DataType::kFp8E5M2, 5, 2, true, [](uint32_t b) { return fp8e5m2ToFloat(uint8_t(b)); },
     [](float f) -> uint32_t { return floatToFp8e5m2(f); }},
};

uint32_t signBit(const Format& f) { return 1u << (f.exponentBits + f.mantissaBits); }
uint32_t magnitudeMask(const Format& f) { return signBit(f) - 1; }
uint32_t numCodes(const Format& f) { return signBit(f) << 1; }
uint32_t infCode(const Format& f) { return ((1u << f.exponentBits) - 1) << f.mantissaBits; }
// Largest finite magnitude code.
uint32_t maxFiniteCode(const Format& f) { return f.ieee ? infCode(f) - 1 : magnitudeMask(f) - 1; }

bool isNanCode(const Format& f, uint32_t code) {
  const uint32_t mag = code & magnitudeMask(f);
  return f.ieee ? mag > infCode(f) : mag == magnitudeMask(f);
}

// Value of a magnitude code as if the format had no special values (so the code after the largest
// finite one is the next power of two).
double plainMagnitude(const Format& f, uint32_t mag) {
  const int bias = (1 << (f.exponentBits - 1)) - 1;
  const int e = int(mag >> f.mantissaBits);
  const int m = int(mag & ((1u << f.mantissaBits) - 1));
  if (e == 0) return std::ldexp(m, 1 - bias - f.mantissaBits);
  return std::ldexp((1 << f.mantissaBits) + m, e - bias - f.mantissaBits);
}

double referenceDecode(const Format& f, uint32_t code) {
  const uint32_t mag = code & magnitudeMask(f);
  double v;
  if (isNanCode(f, code)) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (f.ieee && mag == infCode(f)) {
    v = std::numeric_limits<double>::infinity();
  } else {
    v = plainMagnitude(f, mag);
  }
  return (code & signBit(f)) ? -v : v;
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

TEST_CASE("low-precision floats decode like the reference for every bit pattern", "[reduce]") {
  for (const Format& f : kFormats) {
    INFO(f.name);
    std::vector<std::string> bad;
    for (uint32_t code = 0; code < numCodes(f); ++code) {
      const float got = f.decode(code);
      const double want = referenceDecode(f, code);
      const bool ok = std::isnan(want)
                          ? std::isnan(got)
                          : std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(static_cast<float>(want));
      if (!ok && bad.size() < 8) bad.push_back(hex(code) + " -> " + std::to_string(got));
    }
    CHECK(bad == std::vector<std::string>{});
  }
}

TEST_CASE("low-precision floats round trip for every bit pattern; NaN stays NaN", "[reduce]") {
  for (const Format& f : kFormats) {
    INFO(f.name);
    std::vector<std::string> bad;
    for (uint32_t code = 0; code < numCodes(f); ++code) {
      const uint32_t back = f.encode(f.decode(code));
      const bool ok =
          isNanCode(f, code) ? isNanCode(f, back) && (back & signBit(f)) == (code & signBit(f)) : back == code;
      if (!ok && bad.size() < 8) bad.push_back(hex(code) + " -> " + hex(back));
    }
    CHECK(bad == std::vector<std::string>{});
  }
}

// At the midpoint between every pair of neighbouring codes (including the largest finite value
// and the code after it: inf, or NaN for e4m3) ties go to even, and one float ulp either side
// goes to the nearer code. Both signs.
TEST_CASE("float to low-precision rounds to nearest even at every midpoint", "[reduce]") {
  for (const Format& f : kFormats) {
    INFO(f.name);
    std::vector<std::string> bad;
    for (uint32_t h = 0; h <= maxFiniteCode(f); ++h) {
      const double lo = plainMagnitude(f, h);
      const double hi = plainMagnitude(f, h + 1);
      const float mid = static_cast<float>((lo + hi) / 2);
      if (static_cast<double>(mid) != (lo + hi) / 2) bad.push_back("inexact mid " + hex(h));
      const uint32_t even = (h % 2 == 0) ? h : h + 1;
      const float above = std::nextafter(mid, std::numeric_limits<float>::infinity());
      const float below = std::nextafter(mid, 0.0f);
      for (uint32_t sign : {0u, signBit(f)}) {
        const float s = sign ? -1.0f : 1.0f;
        if (f.encode(s * mid) != (even | sign)) bad.push_back("mid of " + hex(h | sign));
        if (f.encode(s * above) != ((h + 1) | sign)) bad.push_back("above " + hex(h | sign));
        if (f.encode(s * below) != (h | sign)) bad.push_back("below " + hex(h | sign));
      }
      if (bad.size() > 8) break;
    }
    CHECK(bad == std::vector<std::string>{});
  }
}

TEST_CASE("known values of the low-precision floats", "[reduce]") {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float nanLowPayload = std::bit_cast<float>(0x7f800001u);  // would truncate to inf
  SECTION("half") {
    CHECK(floatToHalf(1.0f) == 0x3c00);
    CHECK(floatToHalf(-2.5f) == 0xc100);
    CHECK(floatToHalf(65504.0f) == 0x7bff);
    CHECK(halfToFloat(0x7bff) == 65504.0f);
    CHECK(halfToFloat(0x0001) == std::ldexp(1.0f, -24));
    CHECK(halfToFloat(0x0400) == std::ldexp(1.0f, -14));
    CHECK(floatToHalf(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(floatToHalf(std::ldexp(1.0f, -25)) == 0x0000);         // tie to even: zero
    CHECK(floatToHalf(std::ldexp(3.0f, -25)) == 0x0002);         // tie to even: 2 ulps
    CHECK(floatToHalf(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie to even
    CHECK(floatToHalf(1.0f + std::ldexp(3.0f, -11)) == 0x3c02);  // tie to even
    CHECK(floatToHalf(2049.0f) == 0x6800);                       // 2048
    CHECK(floatToHalf(2051.0f) == 0x6802);                       // 2052
    CHECK(floatToHalf(65519.0f) == 0x7bff);
    CHECK(floatToHalf(65520.0f) == 0x7c00);
    CHECK(floatToHalf(-1e10f) == 0xfc00);
    CHECK(floatToHalf(kInf) == 0x7c00);
    CHECK(floatToHalf(-0.0f) == 0x8000);
    CHECK((floatToHalf(nanLowPayload) & 0x7fff) > 0x7c00);
  }
  SECTION("bfloat16") {
    CHECK(floatToBfloat16(1.0f) == 0x3f80);
    CHECK(floatToBfloat16(-2.5f) == 0xc020);
    CHECK(bfloat16ToFloat(0x0001) == std::ldexp(1.0f, -133));
    CHECK(floatToBfloat16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
    CHECK(floatToBfloat16(1.0f + std::ldexp(3.0f, -8)) == 0x3f82);
    CHECK(floatToBfloat16(257.0f) == 0x4380);
    CHECK(floatToBfloat16(259.0f) == 0x4382);
    CHECK(floatToBfloat16(std::numeric_limits<float>::max()) == 0x7f80);
    CHECK(floatToBfloat16(-kInf) == 0xff80);
    CHECK((floatToBfloat16(nanLowPayload) & 0x7fff) > 0x7f80);
  }
  SECTION("fp8 e4m3: max 448, no infinities, overflow is NaN") {
    CHECK(floatToFp8e4m3(1.0f) == 0x38);
    CHECK(floatToFp8e4m3(-2.5f) == 0xc2);
    CHECK(floatToFp8e4m3(448.0f) == 0x7e);
    CHECK(fp8e4m3ToFloat(0x7e) == 448.0f);
    CHECK(fp8e4m3ToFloat(0x01) == std::ldexp(1.0f, -9));
    CHECK(fp8e4m3ToFloat(0x08) == std::ldexp(1.0f, -6));
    CHECK(std::isnan(fp8e4m3ToFloat(0x7f)));
    CHECK(std::isnan(fp8e4m3ToFloat(0xff)));
    CHECK(floatToFp8e4m3(1.0625f) == 0x38);  // tie to even
    CHECK(floatToFp8e4m3(1.1875f) == 0x3a);  // tie to even
    CHECK(floatToFp8e4m3(464.0f) == 0x7e);   // tie between 448 and the NaN slot: 448
    CHECK(floatToFp8e4m3(465.0f) == 0x7f);
    CHECK(floatToFp8e4m3(1e9f) == 0x7f);
    CHECK(floatToFp8e4m3(kInf) == 0x7f);
    CHECK(floatToFp8e4m3(-kInf) == 0xff);
  }
  SECTION("fp8 e5m2: max 57344, has infinities") {
    CHECK(floatToFp8e5m2(1.0f) == 0x3c);
    CHECK(floatToFp8e5m2(-2.5f) == 0xc1);
    CHECK(floatToFp8e5m2(57344.0f) == 0x7b);
    CHECK(fp8e5m2ToFloat(0x7b) == 57344.0f);
    CHECK(fp8e5m2ToFloat(0x01) == std::ldexp(1.0f, -16));
    CHECK(fp8e5m2ToFloat(0x7c) == kInf);
    CHECK(floatToFp8e5m2(1.125f) == 0x3c);  // tie to even
    CHECK(floatToFp8e5m2(1.375f) == 0x3e);  // tie to even
    CHECK(floatToFp8e5m2(61440.0f) == 0x7c);
    CHECK(floatToFp8e5m2(61439.0f) == 0x7b);
    CHECK(floatToFp8e5m2(-kInf) == 0xfc);
    CHECK(isNanCode(kFormats[3], floatToFp8e5m2(nanLowPayload)));
  }
}

TEST_CASE("loadAsDouble/storeFromDouble saturate integers and round floats once", "[reduce]") {
  std::vector<unsigned char> buf(16);
  auto roundTrip = [&](DataType t, double v) {
    storeFromDouble(t, buf.data(), 1, v);
    return loadAsDouble(t, buf.data(), 1);
  };
  CHECK(roundTrip(DataType::kInt8, 300.0) == 127);
  CHECK(roundTrip(DataType::kInt8, -300.0) == -128);
  CHECK(roundTrip(DataType::kInt8, -7.9) == -7);
  CHECK(roundTrip(DataType::kUint8, -5.0) == 0);
  CHECK(roundTrip(DataType::kUint32, 4294967295.0) == 4294967295.0);
  CHECK(roundTrip(DataType::kInt32, std::nan("")) == 0);
  CHECK(roundTrip(DataType::kInt64, 1e30) == std::ldexp(1.0, 63));
  CHECK(roundTrip(DataType::kUint64, 1e30) == std::ldexp(1.0, 64));
  CHECK(roundTrip(DataType::kFloat64, 0.1) == 0.1);
  CHECK(roundTrip(DataType::kFloat32, 0.1) == static_cast<double>(0.1f));
  // Just above a half tie, by less than a float ulp: a plain double->float->half rounds to 1.0.
  CHECK(roundTrip(DataType::kFloat16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)) == 1.0 + std::ldexp(1.0, -10));
  CHECK(roundTrip(DataType::kFloat16, 1.0 + std::ldexp(1.0, -11)) == 1.0);
  CHECK(roundTrip(DataType::kBfloat16, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)) == 1.0 + std::ldexp(1.0, -7));
  CHECK(roundTrip(DataType::kFp8E4M3, 448.0) == 448.0);
  CHECK(std::isnan(roundTrip(DataType::kFp8E4M3, 1e300)));
  CHECK(roundTrip(DataType::kFp8E5M2, 1e300) == std::numeric_limits<double>::infinity());
}

constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,    DataType::kInt32,   DataType::kUint32,
                                  DataType::kInt64,   DataType::kUint64,   DataType::kFloat16, DataType::kFloat32,
                                  DataType::kFloat64, DataType::kBfloat16, DataType::kFp8E4M3, DataType::kFp8E5M2};
constexpr ReduceKind kBaseKinds[] = {ReduceKind::kSum, ReduceKind::kProd, ReduceKind::kMax, ReduceKind::kMin};

double applyKind(ReduceKind kind, double a, double b) {
  switch (kind) {
    case ReduceKind::kProd: return a * b;
    case ReduceKind::kMax: return a < b ? b : a;
    case ReduceKind::kMin: return b < a ? b : a;
    default: return a + b;
  }
}

// Values representable in every type: integers -8..8 (0..15 unsigned); quarters for floats.
std::vector<unsigned char> makeInput(DataType t, size_t n, int salt) {
  std::vector<unsigned char> buf(n * dataTypeSize(t));
  const bool isSigned = t == DataType::kInt8 || t == DataType::kInt32 || t == DataType::kInt64;
  for (size_t i = 0; i < n; ++i) {
    const int k = int((i * 7 + size_t(salt) * 13) % 17);
    double v = isSigned ? k - 8 : k - 1 < 0 ? 15 : k - 1;
    if (isFloatType(t)) v = (k - 8) * (i % 3 == 0 ? 0.25 : 1.0);
    storeFromDouble(t, buf.data(), i, v);
  }
  return buf;
}

// Compares buf against reference values rounded to the type; NaN matches NaN.
std::vector<std::string> mismatches(DataType t, const std::vector<unsigned char>& buf,
                                    const std::vector<double>& want) {
  std::vector<std::string> bad;
  std::vector<unsigned char> ref(buf.size());
  for (size_t i = 0; i < want.size(); ++i) {
    storeFromDouble(t, ref.data(), i, want[i]);
    const size_t s = dataTypeSize(t);
    const double got = loadAsDouble(t, buf.data(), i);
    const bool ok = std::isnan(want[i]) ? std::isnan(got) : std::memcmp(&buf[i * s], &ref[i * s], s) == 0;
    if (!ok && bad.size() < 8) {
      bad.push_back("[" + std::to_string(i) + "] got " + std::to_string(got) + " want " +
                    std::to_string(loadAsDouble(t, ref.data(), i)));
    }
  }
  return bad;
}

TEST_CASE("every type and operation matches a double reference, with and without aliasing", "[reduce]") {
  for (size_t n : {size_t(1), size_t(37), size_t(1100)}) {
    for (DataType t : kAllTypes) {
      for (ReduceKind kind : kBaseKinds) {
        INFO(dataTypeName(t) << " " << reduceKindName(kind) << " n=" << n);
        const auto a = makeInput(t, n, 1);
        const auto b = makeInput(t, n, 2);
        std::vector<double> want(n);
        for (size_t i = 0; i < n; ++i) {
          want[i] = applyKind(kind, loadAsDouble(t, a.data(), i), loadAsDouble(t, b.data(), i));
        }
        std::vector<unsigned char> out(a.size(), 0xab);
        reduceTo(t, kind, out.data(), a.data(), b.data(), n);
        CHECK(mismatches(t, out, want) == std::vector<std::string>{});

        auto inA = a;  // out == a
        reduceTo(t, kind, inA.data(), inA.data(), b.data(), n);
        CHECK(mismatches(t, inA, want) == std::vector<std::string>{});

        auto inB = b;  // out == b
        reduceTo(t, kind, inB.data(), a.data(), inB.data(), n);
        CHECK(mismatches(t, inB, want) == std::vector<std::string>{});

        auto inout = a;
        reduceInto(t, kind, inout.data(), b.data(), n);
        CHECK(mismatches(t, inout, want) == std::vector<std::string>{});

        auto self = a;  // out == a == b
        std::vector<double> wantSelf(n);
        for (size_t i = 0; i < n; ++i) {
          const double x = loadAsDouble(t, a.data(), i);
          wantSelf[i] = applyKind(kind, x, x);
        }
        reduceTo(t, kind, self.data(), self.data(), self.data(), n);
        CHECK(mismatches(t, self, wantSelf) == std::vector<std::string>{});
      }
    }
  }
}

// All bit patterns, including NaN, inf, subnormals and overflow: fp8 every pair, half and
// bfloat16 random pairs. Sums and products of two such values rounded through float are correctly
// rounded, so they must equal the double result rounded once.
TEST_CASE("low-precision reductions of arbitrary bit patterns are correctly rounded", "[reduce]") {
  std::mt19937 rng(12345);
  for (const Format& f : kFormats) {
    const size_t bytes = dataTypeSize(f.type);
    const size_t n = 1 << 16;
    std::vector<unsigned char> a(n * bytes), b(n * bytes);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t x = bytes == 1 ? uint32_t(i & 0xff) : uint32_t(rng() & 0xffff);
      const uint32_t y = bytes == 1 ? uint32_t(i >> 8) : uint32_t(rng() & 0xffff);
      std::memcpy(&a[i * bytes], &x, bytes);  // little-endian low bytes
      std::memcpy(&b[i * bytes], &y, bytes);
    }
    for (ReduceKind kind : kBaseKinds) {
      INFO(f.name << " " << reduceKindName(kind));
      std::vector<double> want(n);
      for (size_t i = 0; i < n; ++i) {
        want[i] = applyKind(kind, loadAsDouble(f.type, a.data(), i), loadAsDouble(f.type, b.data(), i));
      }
      std::vector<unsigned char> out(a.size());
      reduceTo(f.type, kind, out.data(), a.data(), b.data(), n);
      CHECK(mismatches(f.type, out, want) == std::vector<std::string>{});
      auto inB = b;  // out == b: the operand order (which NaN max/min keeps) must not change
      reduceTo(f.type, kind, inB.data(), a.data(), inB.data(), n);
      CHECK(mismatches(f.type, inB, want) == std::vector<std::string>{});
    }
  }
}

template <class T>
T reduceOne(DataType t, ReduceKind kind, T a, T b) {
  T out;
  reduceTo(t, kind, &out, &a, &b, 1);
  return out;
}

TEST_CASE("integer sums and products wrap; max/min respect signedness", "[reduce]") {
  constexpr auto kSum = ReduceKind::kSum;
  constexpr auto kProd = ReduceKind::kProd;
  CHECK(reduceOne<int8_t>(DataType::kInt8, kSum, 127, 1) == -128);
  CHECK(reduceOne<int8_t>(DataType::kInt8, kProd, 16, 16) == 0);
  CHECK(reduceOne<int8_t>(DataType::kInt8, kProd, -128, -1) == -128);
  CHECK(reduceOne<uint8_t>(DataType::kUint8, kSum, 255, 2) == 1);
  CHECK(reduceOne<int32_t>(DataType::kInt32, kSum, INT32_MAX, 1) == INT32_MIN);
  CHECK(reduceOne<int32_t>(DataType::kInt32, kProd, 65536, 65536) == 0);
  CHECK(reduceOne<uint32_t>(DataType::kUint32, kSum, 0xffffffffu, 2) == 1u);
  CHECK(reduceOne<int64_t>(DataType::kInt64, kSum, INT64_MIN, -1) == INT64_MAX);
  CHECK(reduceOne<int64_t>(DataType::kInt64, kProd, INT64_MAX, 2) == -2);
  CHECK(reduceOne<uint64_t>(DataType::kUint64, kProd, UINT64_MAX, 2) == UINT64_MAX - 1);
  CHECK(reduceOne<int8_t>(DataType::kInt8, ReduceKind::kMax, -1, 1) == 1);
  CHECK(reduceOne<uint8_t>(DataType::kUint8, ReduceKind::kMax, 255, 1) == 255);
  CHECK(reduceOne<int64_t>(DataType::kInt64, ReduceKind::kMin, -5, INT64_MAX) == -5);
  CHECK(reduceOne<uint64_t>(DataType::kUint64, ReduceKind::kMin, UINT64_MAX, 3) == 3u);
  // kAvg and kPreMulSum combine with sum.
  CHECK(reduceOne<int32_t>(DataType::kInt32, ReduceKind::kAvg, 3, 4) == 7);
  CHECK(reduceOne<float>(DataType::kFloat32, ReduceKind::kPreMulSum, 0.5f, 0.25f) == 0.75f);
}

TEST_CASE("scaleBy multiplies by the typed scalar, in place or not", "[reduce]") {
  ReduceOp op;
  op.kind = ReduceKind::kPreMulSum;
  SECTION("integers use intScalar and wrap") {
    op.intScalar = 3;
    op.floatScalar = 100.0;  // must be ignored
    std::vector<int32_t> in{1, -2, 3, INT32_MAX}, out(4);
    scaleBy(DataType::kInt32, out.data(), in.data(), 4, op);
    CHECK(out == std::vector<int32_t>{3, -6, 9, int32_t(uint32_t(INT32_MAX) * 3u)});
    std::vector<int8_t> small{100, -100};
    scaleBy(DataType::kInt8, small.data(), small.data(), 2, op);
    CHECK(small == std::vector<int8_t>{44, -44});
    op.intScalar = -1;
    std::vector<uint64_t> u{1, 5};
    scaleBy(DataType::kUint64, u.data(), u.data(), 2, op);
    CHECK(u == std::vector<uint64_t>{UINT64_MAX, UINT64_MAX - 4});
  }
  SECTION("float and double scale in their own precision") {
    op.floatScalar = 0.1;
    std::vector<float> f{1.0f, 3.0f, -7.0f};
    std::vector<float> fo(3);
    scaleBy(DataType::kFloat32, fo.data(), f.data(), 3, op);
    for (int i = 0; i < 3; ++i) CHECK(fo[i] == f[i] * 0.1f);
    std::vector<double> d{1.0, 3.0, -7.0};
    scaleBy(DataType::kFloat64, d.data(), d.data(), 3, op);
    CHECK(d == std::vector<double>{1.0 * 0.1, 3.0 * 0.1, -7.0 * 0.1});
  }
  SECTION("16- and 8-bit floats scale in float and round once") {
    // 1/3, and 1 + half an ulp of each format (products of 1.0 are exact ties).
    for (double scalar : {1.0 / 3.0, 1 + 0x1p-11, 1 + 0x1p-8, 1 + 0x1p-4, 1 + 0x1p-3}) {
      op.floatScalar = scalar;
      for (const Format& fmt : kFormats) {
        INFO(fmt.name << " scalar " << scalar);
        const size_t n = 1300;  // several blocks
        const size_t bytes = dataTypeSize(fmt.type);
        std::vector<unsigned char> in(n * bytes), out(n * bytes);
        for (size_t i = 0; i < n; ++i) storeFromDouble(fmt.type, in.data(), i, double(i % 97) - 48);
        scaleBy(fmt.type, out.data(), in.data(), n, op);
        std::vector<std::string> bad;
        for (size_t i = 0; i < n; ++i) {
          const float x = static_cast<float>(loadAsDouble(fmt.type, in.data(), i));
          uint32_t got = 0;
          std::memcpy(&got, &out[i * bytes], bytes);
          const uint32_t want = fmt.encode(x * static_cast<float>(scalar));
          if (got != want && bad.size() < 8) bad.push_back(std::to_string(i) + ": " + hex(got));
        }
        CHECK(bad == std::vector<std::string>{});
        scaleBy(fmt.type, in.data(), in.data(), n, op);  // in place
        CHECK(in == out);
      }
    }
  }
}

// max/min keep x86 semantics with NaN (the first operand wins when unordered); whichever buffer
// the output aliases, the result is the same.
TEST_CASE("float max/min with NaN do not depend on which input the output aliases", "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ReduceKind kind : {ReduceKind::kMax, ReduceKind::kMin}) {
    INFO(reduceKindName(kind));
    const std::vector<float> a{nan, 1.0f, nan, -2.0f, 5.0f, nan, 0.0f, 3.0f, nan};
    const std::vector<float> b{1.0f, nan, nan, 4.0f, nan, -1.0f, nan, 2.0f, 7.0f};
    std::vector<float> out(a.size());
    reduceTo(DataType::kFloat32, kind, out.data(), a.data(), b.data(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(std::isnan(out[i]) == std::isnan(a[i]));  // first operand wins
    }
    auto inA = a;
    reduceTo(DataType::kFloat32, kind, inA.data(), inA.data(), b.data(), a.size());
    auto inB = b;
    reduceTo(DataType::kFloat32, kind, inB.data(), a.data(), inB.data(), a.size());
    CHECK(std::memcmp(inA.data(), out.data(), out.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(inB.data(), out.data(), out.size() * sizeof(float)) == 0);
    const std::vector<double> da(a.begin(), a.end()), db(b.begin(), b.end());
    auto dB = db;
    reduceTo(DataType::kFloat64, kind, dB.data(), da.data(), dB.data(), da.size());
    for (size_t i = 0; i < da.size(); ++i) CHECK(std::isnan(dB[i]) == std::isnan(da[i]));
  }
}

TEST_CASE("divideBy divides integers like C++ and floats in float precision", "[reduce]") {
  std::vector<int32_t> i32{7, -7, 8, INT32_MIN};
  divideBy(DataType::kInt32, i32.data(), i32.size(), 2);
  CHECK(i32 == std::vector<int32_t>{3, -3, 4, INT32_MIN / 2});
  std::vector<uint8_t> u8{255, 3};
  divideBy(DataType::kUint8, u8.data(), u8.size(), 4);
  CHECK(u8 == std::vector<uint8_t>{63, 0});
  std::vector<int8_t> i8{-128, 127};
  divideBy(DataType::kInt8, i8.data(), i8.size(), 200);  // divisor wider than the type
  CHECK(i8 == std::vector<int8_t>{0, 0});
  std::vector<uint64_t> u64{UINT64_MAX};
  divideBy(DataType::kUint64, u64.data(), 1, 3);
  CHECK(u64[0] == UINT64_MAX / 3);
  std::vector<int64_t> i64{-9};
  divideBy(DataType::kInt64, i64.data(), 1, 1);
  CHECK(i64[0] == -9);
  std::vector<float> f{1.0f, 3.0f};
  divideBy(DataType::kFloat32, f.data(), 2, 3);
  CHECK(f == std::vector<float>{1.0f / 3.0f, 1.0f});
  std::vector<double> d{1.0};
  divideBy(DataType::kFloat64, d.data(), 1, 3);
  CHECK(d[0] == 1.0 / 3.0);
  std::vector<uint16_t> h(700, floatToHalf(1.0f));
  divideBy(DataType::kFloat16, h.data(), h.size(), 3);
  CHECK(h == std::vector<uint16_t>(700, 0x3555));
  std::vector<uint16_t> bf{floatToBfloat16(1.0f)};
  divideBy(DataType::kBfloat16, bf.data(), 1, 3);
  CHECK(bf[0] == floatToBfloat16(1.0f / 3.0f));
  std::vector<uint8_t> e4{floatToFp8e4m3(7.0f)};
  divideBy(DataType::kFp8E4M3, e4.data(), 1, 2);
  CHECK(e4[0] == 0x46);  // 3.5
  std::vector<uint8_t> e5{floatToFp8e5m2(7.0f)};
  divideBy(DataType::kFp8E5M2, e5.data(), 1, 2);
  CHECK(fp8e5m2ToFloat(e5[0]) == 3.5f);
}

TEST_CASE("data type sizes and names", "[reduce]") {
  CHECK(dataTypeSize(DataType::kInt8) == 1);
  CHECK(dataTypeSize(DataType::kFp8E5M2) == 1);
  CHECK(dataTypeSize(DataType::kFloat16) == 2);
  CHECK(dataTypeSize(DataType::kBfloat16) == 2);
  CHECK(dataTypeSize(DataType::kUint32) == 4);
  CHECK(dataTypeSize(DataType::kFloat64) == 8);
  CHECK(std::string(dataTypeName(DataType::kFloat16)) == "half");
  CHECK(std::string(dataTypeName(DataType::kFp8E4M3)) == "f8e4m3");
  CHECK(std::string(dataTypeName(DataType::kUint64)) == "uint64");
  CHECK(std::string(reduceKindName(ReduceKind::kPreMulSum)) == "premulsum");
  CHECK(std::string(reduceKindName(ReduceKind::kAvg)) == "avg");
  CHECK(isValidDataType(0));
  CHECK(isValidDataType(11));
  CHECK_FALSE(isValidDataType(12));
  CHECK_FALSE(isValidDataType(-1));
  CHECK(isFloatType(DataType::kBfloat16));
  CHECK(isFloatType(DataType::kFp8E4M3));
  CHECK_FALSE(isFloatType(DataType::kUint64));
  size_t total = 0;
  for (DataType t : kAllTypes) total += dataTypeSize(t);
  CHECK(total == 1 + 1 + 4 + 4 + 8 + 8 + 2 + 4 + 8 + 2 + 1 + 1);
}

}  // namespace
}  // namespace nshim
