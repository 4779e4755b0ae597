// Input format names and detection by content (input_format.h says the rules).
#include "workload/input_format.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "workload/input_file.h"

namespace nshim::workload {
namespace {

bool isEtName(std::string_view name) {
  std::string prefix;
  int64_t rank = 0;
  return splitEtName(name, &prefix, &rank);
}

// A directory: which format its files are, or an error listing what it holds.
Result<InputFormat> detectDirectory(const std::string& path) {
  NS_ASSIGN_OR_RETURN(const std::vector<std::string> names, listDirectory(path));
  size_t jsonl = 0, et = 0, json = 0, pytorch = 0, other = 0;
  for (const std::string& entry : names) {
    const std::string_view name = entry;
    if (name == "." || name == "..") continue;
    if (name.ends_with(".jsonl") || name.ends_with(".jsonl.part") || name.ends_with(".jsonl.zst") ||
        name.ends_with(".jsonl.zst.part"))
      ++jsonl;
    else if (isEtName(name)) ++et;
    else if (name.ends_with(".json") || name.ends_with(".json.gz")) {
      ++json;
      if (pytorch == 0 && looksLikePyTorchEt(readInputHead(path + "/" + entry, 4096))) ++pytorch;
    } else ++other;
  }
  if (jsonl) return InputFormat::kTrace;
  if (et) return InputFormat::kChakra;
  if (pytorch) return InputFormat::kPyTorchEt;
  return NS_ERROR(Code::kInvalidArgument,
                  "{}: no ncclshim trace (*.jsonl), Chakra trace (NAME.<rank>.et) or PyTorch "
                  "execution trace (*.json with \"nodes\") here ({} .json files that are not execution traces, {} "
                  "other files): give --from",
                  path, json, other);
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
  uint64_t length = 0, field = 0;
  if (!readVarint(bytes, &pos, &length) || length < 3 || pos >= bytes.size()) return false;
  const uint8_t tag = static_cast<uint8_t>(bytes[pos++]);
  if ((tag != 0x0a && tag != 0x12) || !readVarint(bytes, &pos, &field) || field == 0 || field > length - 2) {
    return false;
  }
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

bool splitEtName(std::string_view file, std::string* prefix, int64_t* rank) {
  if (!file.ends_with(".et") || file.size() < 5) return false;
  const size_t dot = file.rfind('.', file.size() - 4);
  if (dot == std::string_view::npos || dot == 0) return false;
  const std::string_view digits = file.substr(dot + 1, file.size() - 4 - dot);
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *prefix = std::string(file.substr(0, dot));
  *rank = std::stoll(std::string(digits));
  return true;
}

bool readVarint(std::string_view bytes, size_t* pos, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= bytes.size()) return false;
    const uint8_t byte = static_cast<uint8_t>(bytes[(*pos)++]);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

Result<std::vector<std::string>> listDirectory(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return NS_ERROR(Code::kInvalidArgument, "{}: cannot list the directory", dir);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Result<InputFormat> detectInputFormat(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (::stat((path + ".0.et").c_str(), &st) == 0) return InputFormat::kChakra;  // ASTRA-sim's NAME prefix
    return NS_ERROR(Code::kInvalidArgument, "{}: no such file or directory", path);
  }
  if (S_ISDIR(st.st_mode)) return detectDirectory(path);
  if (path.ends_with(".jsonl.zst") || path.ends_with(".part")) return InputFormat::kTrace;  // inflated by its reader
  const std::string bytes = readInputHead(path, 4096);  // decompressed when the file is gzip
  if (isEtName(path.substr(path.rfind('/') + 1)) || looksLikeChakra(bytes)) return InputFormat::kChakra;
  if (looksLikePyTorchEt(bytes)) return InputFormat::kPyTorchEt;
  if (isGzipFile(path)) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: gzip-compressed, and neither a Chakra nor a PyTorch execution trace "
                    "inside: decompress it (gunzip -k) and give the file",
                    path);
  }
  if (path.ends_with(".jsonl") || bytes.rfind("{\"type\":\"header\"", 0) == 0) return InputFormat::kTrace;
  if (path.ends_with(".txt")) return InputFormat::kSimAi;
  if (path.ends_with(".csv") || bytes.substr(0, bytes.find('\n')).find("comm_type") != std::string::npos) {
    return InputFormat::kAicb;
  }
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') {
    if (bytes.substr(0, bytes.find('\n')).find("\"type\"") != std::string::npos) return InputFormat::kTrace;
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: a JSON object that is neither an ncclshim trace (its first line a "
                    "\"type\":\"header\" record) nor a PyTorch execution trace (\"schema\" and \"nodes\" near its "
                    "start): give --from {}",
                    path, inputFormatChoices());
  }
  return NS_ERROR(Code::kInvalidArgument,
                  "{}: cannot tell the format: not an ncclshim trace, a Chakra trace "
                  "(NAME.<rank>.et), a PyTorch execution trace, SimAI .txt or AICB .csv: give --from {}",
                  path, inputFormatChoices());
}

}  // namespace nshim::workload
