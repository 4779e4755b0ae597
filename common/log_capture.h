// Holds back log lines for a while (RAII): while a LogCapture lives, the lines that pass the level
// are kept ("WARN text", in order, at most kMaxLines, then a count) instead of being written, so
// that a caller can merge what many processes said (phynet prints each distinct load warning once,
// with the ranks that gave it). The previous sink is restored on destruction.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"

namespace nshim {

class LogCapture final : public LogSink {
 public:
  static constexpr size_t kMaxLines = 100;

  LogCapture();
  ~LogCapture() override;
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  void write(LogLevel level, std::string_view message) override;
  // The lines kept so far ("WARN text"; newlines inside a message become spaces), then, if lines
  // were dropped, "WARN N more log lines not shown"; the capture is emptied.
  std::vector<std::string> take();

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
  size_t dropped_ = 0;
  LogSink* previous_;
};

}  // namespace nshim
