// The Chakra and PyTorch execution-trace readers and the Chakra writer of a build without their
// libraries (workload/module.mk compiles this file instead of them when protoc, libprotobuf or
// nlohmann's JSON header is missing): each says what to install.
#include <cstdint>
#include <fstream>

#include "workload/chakra_export.h"
#include "workload/chakra_workload.h"
#include "workload/input_file.h"
#include "workload/pytorch_et_workload.h"

namespace nshim::workload {
namespace {

constexpr const char* kWhy =
    "this ncclshim was built without protobuf, nlohmann-json and zlib, which Chakra and PyTorch "
    "execution traces need (install protobuf-compiler, libprotobuf-dev, nlohmann-json3-dev "
    "and zlib1g-dev, then rebuild)";

}  // namespace

Result<ChakraFileSet> findChakraFiles(const std::string& path) {
  return NS_ERROR(Code::kInvalidUsage, "{}: {}", path, kWhy);
}

Result<Workload> loadChakraWorkload(const std::string& path, const ChakraOptions&) {
  return NS_ERROR(Code::kInvalidUsage, "{}: {}", path, kWhy);
}

Result<Workload> parseChakraWorkload(const std::vector<std::string>&, const std::vector<std::string>&,
                                     const std::string&, const ChakraOptions&) {
  return NS_ERROR(Code::kInvalidUsage, "{}", kWhy);
}

// Plain files only: gzip needs zlib.
std::string readInputHead(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

bool isGzipFile(const std::string& path) {
  const std::string magic = readInputHead(path, 2);
  return magic.size() == 2 && static_cast<uint8_t>(magic[0]) == 0x1f && static_cast<uint8_t>(magic[1]) == 0x8b;
}

Result<std::string> readInputFile(const std::string& path, size_t) {
  return NS_ERROR(Code::kInvalidUsage, "{}: {}", path, kWhy);
}

Result<ChakraExport> exportChakra(const Workload&) { return NS_ERROR(Code::kInvalidUsage, "{}", kWhy); }

Result<Workload> loadPyTorchEtWorkload(const std::string& path, const PyTorchEtOptions&) {
  return NS_ERROR(Code::kInvalidUsage, "{}: {}", path, kWhy);
}

Result<Workload> parsePyTorchEtRank(std::string_view, const std::string& name, const PyTorchEtOptions&) {
  return NS_ERROR(Code::kInvalidUsage, "{}: {}", name, kWhy);
}

Result<Workload> parsePyTorchEtRanks(const std::vector<std::string_view>&, const std::vector<std::string>&,
                                     const PyTorchEtOptions&) {
  return NS_ERROR(Code::kInvalidUsage, "{}", kWhy);
}

}  // namespace nshim::workload
