// The Chakra and PyTorch execution-trace readers and the Chakra writer of a build without their
// libraries (workload/module.mk compiles this file instead of them when protoc, libprotobuf or
// nlohmann's JSON header is missing): each says what to install.
#include "workload/chakra_export.h"
#include "workload/chakra_workload.h"
#include "workload/pytorch_et_workload.h"

namespace nshim::workload {
namespace {

constexpr const char* kWhy = "this ncclshim was built without protobuf and nlohmann-json, which Chakra and PyTorch "
                             "execution traces need (install protobuf-compiler, libprotobuf-dev and "
                             "nlohmann-json3-dev, then rebuild)";

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
