// zstd streams for trace files (NCCLSHIM_TRACE_COMPRESS=zstd, `.jsonl.zst`): the writer's
// compressor, fed a drain's lines at a time and flushed at each (so a killed process leaves every
// flushed line readable), and the readers' decompressor, which turns a file back into its JSON
// Lines text as it is read. Frames may follow each other (a footer written after a close, or after
// the size limit cut the file, starts a new one). Built without zstd.h (libzstd-dev), both say so
// when asked for (zstdAvailable() false).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nshim::trace {

bool zstdAvailable();
// "install libzstd-dev and rebuild" when not available.
const char* zstdMissingText();

// The four bytes every zstd frame starts with (28 b5 2f fd).
bool startsWithZstdMagic(const unsigned char* bytes, size_t length);

class ZstdCompressor {
 public:
  ~ZstdCompressor();
  // nullptr when built without zstd or out of memory. Allocates its work memory now, so that
  // compressing later (maybe in a signal handler) does not.
  static std::unique_ptr<ZstdCompressor> create(int level);
  // Output sink: writes `size` bytes, false when it could not (compression stops).
  using Sink = bool (*)(void* context, const char* data, size_t size);
  // Compresses `size` bytes of `in` and flushes them (endFrame: ends the frame too); every piece of
  // output goes to sink. False on a zstd error or when the sink fails.
  bool compress(const char* in, size_t size, bool endFrame, Sink sink, void* context);
  // Forgets the frame under way (a fork child starts its own file).
  void reset();

 private:
  ZstdCompressor() = default;
  void* stream_ = nullptr;  // ZSTD_CCtx
  char buffer_[1 << 16];
};

class ZstdDecompressor {
 public:
  ~ZstdDecompressor();
  static std::unique_ptr<ZstdDecompressor> create();
  // Decompresses from `in` (advancing *inPos) into `out` (advancing *outPos). Returns "" or the
  // error's text.
  std::string step(const char* in, size_t inSize, size_t* inPos, char* out, size_t outSize, size_t* outPos);
  // Whether the last step ended a frame exactly (false: the input stopped inside one).
  bool atFrameEnd() const { return frameEnded_; }

 private:
  ZstdDecompressor() = default;
  void* stream_ = nullptr;  // ZSTD_DCtx
  bool frameEnded_ = true;
};

}  // namespace nshim::trace
