// Helpers of the forwarding test program (forward_test_program.cc), header-only so the program can
// also be built as a shared library: check lines, the expected fake-NCCL log, the record hook's
// debug log, and files shared between rank processes.
#pragma once

#include <nccl.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fwdtest {

struct Context {
  std::string scenario;
  int rank = 0;
  int nranks = 1;
  std::string dir;
};

inline int& failures() {
  static int count = 0;
  return count;
}

// Prints "CHECK PASS <scenario>/<name>" or "CHECK FAIL <scenario>/<name>: <why>".
inline bool check(const Context& ctx, const std::string& name, bool ok, const std::string& why = "") {
  if (ok) {
    std::printf("CHECK PASS %s/%s\n", ctx.scenario.c_str(), name.c_str());
  } else {
    std::printf("CHECK FAIL %s/%s: %s\n", ctx.scenario.c_str(), name.c_str(), why.c_str());
    ++failures();
  }
  std::fflush(stdout);
  return ok;
}

inline std::string format(const char* fmt, ...) {
  char line[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  return line;
}

inline std::vector<std::string> readLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline bool startsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// The calls the program made, in order, as the fake NCCL should have logged them.
class Expected {
 public:
  template <typename... Args>
  void add(const char* fmt, Args... args) {
    lines_.push_back(format(fmt, args...));
  }
  // A call the fake NCCL makes itself from inside the previous one (through the exported symbol,
  // as NCCL's ncclBcast calls ncclBroadcast): in its log, but not a call of the program's.
  template <typename... Args>
  void addInner(const char* fmt, Args... args) {
    lines_.push_back(format(fmt, args...));
    inner_.push_back(lines_.back());
  }
  const std::vector<std::string>& lines() const { return lines_; }
  // The program's calls per function name (the first word of each line).
  std::map<std::string, int> counts() const {
    std::map<std::string, int> result;
    for (const std::string& line : lines_) ++result[line.substr(0, line.find(' '))];
    for (const std::string& line : inner_) --result[line.substr(0, line.find(' '))];
    return result;
  }

 private:
  std::vector<std::string> lines_;
  std::vector<std::string> inner_;
};

// "" when `actual` is `expected` line for line; lines of `ignorable` functions may be interleaved
// (the shim's own size/rank/device queries while its record hook is on).
inline std::string compareLog(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
                              const std::vector<std::string>& ignorable) {
  size_t e = 0;
  size_t a = 0;
  while (e < expected.size() || a < actual.size()) {
    if (e < expected.size() && a < actual.size() && expected[e] == actual[a]) {
      ++e;
      ++a;
      continue;
    }
    bool skip = false;
    for (const std::string& name : ignorable) skip = skip || (a < actual.size() && startsWith(actual[a], name + " "));
    if (skip) {
      ++a;
      continue;
    }
    return format("line %zu: expected [%s], the fake NCCL logged [%s]", a + 1,
                  e < expected.size() ? expected[e].c_str() : "(end)", a < actual.size() ? actual[a].c_str() : "(end)");
  }
  return "";
}

// One line of the record hook's debug log (NCCLSHIM_HOOK_DEBUG): key=value fields; "new" repeats.
struct HookLine {
  std::map<std::string, std::string> fields;
  std::vector<std::vector<std::string>> created;  // comm, commId, nranks, rank, device, parentId, splitSeq, color, key

  std::string get(const std::string& key) const {
    auto it = fields.find(key);
    return it != fields.end() ? it->second : "";
  }
};

inline std::vector<HookLine> readHookLog(const std::string& path) {
  std::vector<HookLine> result;
  for (const std::string& text : readLines(path)) {
    HookLine line;
    std::istringstream words(text);
    for (std::string word; words >> word;) {
      size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      std::string key = word.substr(0, eq);
      std::string value = word.substr(eq + 1);
      if (key == "new") {
        std::vector<std::string> parts;
        std::istringstream items(value);
        for (std::string item; std::getline(items, item, ',');) parts.push_back(item);
        line.created.push_back(parts);
      } else {
        line.fields[key] = value;
      }
    }
    result.push_back(line);
  }
  return result;
}

// NCCLSHIM_HOOK_DEBUG's path for this process ("" when the hook log is off).
inline std::string hookLogPath() {
  const char* value = std::getenv("NCCLSHIM_HOOK_DEBUG");
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "noop") == 0) return "";
  std::string path = value;
  size_t at = path.find("%p");
  if (at != std::string::npos) path.replace(at, 2, std::to_string(getpid()));
  return path;
}

// Rank 0 publishes `bytes` as <dir>/<name>; the others wait for it (false after 30 s).
inline bool publish(const Context& ctx, const std::string& name, const void* data, size_t bytes) {
  std::string path = ctx.dir + "/" + name;
  std::ofstream(path + ".tmp", std::ios::binary).write(static_cast<const char*>(data), bytes);
  return std::rename((path + ".tmp").c_str(), path.c_str()) == 0;
}

inline bool fetch(const Context& ctx, const std::string& name, void* data, size_t bytes) {
  std::string path = ctx.dir + "/" + name;
  for (int tries = 0; tries < 6000; ++tries) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(static_cast<char*>(data), bytes)) return true;
    usleep(5000);
  }
  return false;
}

}  // namespace fwdtest
