// Input format names and detection by content (input_format.h says the rules).
#include "workload/input_format.h"

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>

#include "workload/input_file.h"
#include "workload/source_line.h"

namespace nshim::workload {
namespace {

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string head(const std::string& path, size_t bytes) { return readInputHead(path, bytes); }

bool isEtName(std::string_view name) {
  if (!endsWith(name, ".et") || name.size() < 6) return false;
  const size_t end = name.size() - 3;
  size_t start = end;
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  return start < end && start > 1 && name[start - 1] == '.';
}

// A directory: which format its files are, or an error listing what it holds.
Result<InputFormat> detectDirectory(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  if (!d) return NS_ERROR(Code::kInvalidArgument, "{}: cannot list the directory", path);
  size_t jsonl = 0, et = 0, json = 0, pytorch = 0, other = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (endsWith(name, ".jsonl") || endsWith(name, ".jsonl.part")) ++jsonl;
    else if (isEtName(name)) ++et;
    else if (endsWith(name, ".json") || endsWith(name, ".json.gz")) {
      ++json;
      if (pytorch == 0 && looksLikePyTorchEt(head(path + "/" + std::string(name), 4096))) ++pytorch;
    } else ++other;
  }
  ::closedir(d);
  if (jsonl) return InputFormat::kTrace;
  if (et) return InputFormat::kChakra;
  if (pytorch) return InputFormat::kPyTorchEt;
  return NS_ERROR(Code::kInvalidArgument, "{}: no ncclshim trace (*.jsonl), Chakra trace (NAME.<rank>.et) or PyTorch "
                  "execution trace (*.json with \"nodes\") here ({} .json files that are not execution traces, {} "
                  "other files): give --from", path, json, other);
}

}  // namespace

const char* inputFormatName(InputFormat format) {
  switch (format) {
    case InputFormat::kAuto: return "auto";
    case InputFormat::kTrace: return "trace";
    case InputFormat::kSimAi: return "simai";
    case InputFormat::kAicb: return "aicb";
    case InputFormat::kChakra: return "chakra";
    case InputFormat::kPyTorchEt: return "pytorch-et";
  }
  return "unknown";
}

const char* inputFormatTitle(InputFormat format) {
  switch (format) {
    case InputFormat::kTrace: return "ncclshim trace";
    case InputFormat::kSimAi: return "SimAI workload";
    case InputFormat::kAicb: return "AICB workload";
    case InputFormat::kChakra: return "Chakra execution trace";
    case InputFormat::kPyTorchEt: return "PyTorch execution trace";
    default: return "auto";
  }
}

bool parseInputFormat(std::string_view text, InputFormat* out) {
  for (InputFormat f : {InputFormat::kAuto, InputFormat::kTrace, InputFormat::kSimAi, InputFormat::kAicb,
                        InputFormat::kChakra, InputFormat::kPyTorchEt}) {
    if (text == inputFormatName(f)) {
      *out = f;
      return true;
    }
  }
  return false;
}

const char* inputFormatChoices() { return "auto, trace, simai, aicb, chakra, pytorch-et"; }

bool looksLikeChakra(std::string_view bytes) {
  // A varint length, then GlobalMetadata's first field: the version (tag 0x0a) as short printable
  // text, or an attribute (tag 0x12) whose own first field is its name (tag 0x0a).
  size_t pos = 0;
  auto varint = [&](uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (pos >= bytes.size()) return false;
      const uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  };
  uint64_t length = 0, field = 0;
  if (!varint(&length) || length < 3 || pos >= bytes.size()) return false;
  const uint8_t tag = static_cast<uint8_t>(bytes[pos++]);
  if ((tag != 0x0a && tag != 0x12) || !varint(&field) || field == 0 || field + 2 > length) return false;
  if (tag == 0x12) return pos < bytes.size() && static_cast<uint8_t>(bytes[pos]) == 0x0a;
  if (field > 32 || pos + field > bytes.size()) return false;
  for (size_t i = 0; i < field; ++i) {
    const char c = bytes[pos + i];
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

bool looksLikePyTorchEt(std::string_view bytes) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || bytes[first] != '{') return false;
  return bytes.find("\"schema\"") != std::string_view::npos && bytes.find("\"nodes\"") != std::string_view::npos;
}

Result<InputFormat> detectInputFormat(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (::stat((path + ".0.et").c_str(), &st) == 0) return InputFormat::kChakra;  // ASTRA-sim's NAME prefix
    return NS_ERROR(Code::kInvalidArgument, "{}: no such file or directory", path);
  }
  if (S_ISDIR(st.st_mode)) return detectDirectory(path);
  const std::string bytes = head(path, 4096);  // decompressed when the file is gzip
  if (isEtName(path.substr(path.rfind('/') + 1)) || looksLikeChakra(bytes)) return InputFormat::kChakra;
  if (looksLikePyTorchEt(bytes)) return InputFormat::kPyTorchEt;
  if (isGzipFile(path)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: gzip-compressed, and neither a Chakra nor a PyTorch execution trace "
                    "inside: decompress it (gunzip -k) and give the file", path);
  }
  if (endsWith(path, ".jsonl") || bytes.rfind("{\"type\":\"header\"", 0) == 0) return InputFormat::kTrace;
  if (endsWith(path, ".txt")) return InputFormat::kSimAi;
  if (endsWith(path, ".csv") || bytes.substr(0, bytes.find('\n')).find("comm_type") != std::string::npos) {
    return InputFormat::kAicb;
  }
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') {
    if (bytes.substr(0, bytes.find('\n')).find("\"type\"") != std::string::npos) return InputFormat::kTrace;
    return NS_ERROR(Code::kInvalidArgument, "{}: a JSON object that is neither an ncclshim trace (its first line a "
                    "\"type\":\"header\" record) nor a PyTorch execution trace (\"schema\" and \"nodes\" near its "
                    "start): give --from {}", path, inputFormatChoices());
  }
  return NS_ERROR(Code::kInvalidArgument, "{}: cannot tell the format: not an ncclshim trace, a Chakra trace "
                  "(NAME.<rank>.et), a PyTorch execution trace, SimAI .txt or AICB .csv: give --from {}", path,
                  inputFormatChoices());
}

}  // namespace nshim::workload
