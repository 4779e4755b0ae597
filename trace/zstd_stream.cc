// zstd streams for trace files (zstd_stream.h). Compiled with NSHIM_HAVE_ZSTD=1 where zstd.h
// exists (the Makefile checks), else every entry says what to install.
#include "trace/zstd_stream.h"

#include <new>

#if defined(NSHIM_HAVE_ZSTD) && NSHIM_HAVE_ZSTD
#include <zstd.h>
#endif

namespace nshim::trace {

bool startsWithZstdMagic(const unsigned char* b, size_t length) {
  return length >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd;
}

const char* zstdMissingText() {
  return "this build has no zstd support: install libzstd-dev (scripts/setup.sh) and rebuild";
}

#if defined(NSHIM_HAVE_ZSTD) && NSHIM_HAVE_ZSTD

bool zstdAvailable() { return true; }

ZstdCompressor::~ZstdCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(stream_)); }

std::unique_ptr<ZstdCompressor> ZstdCompressor::create(int level) {
  std::unique_ptr<ZstdCompressor> out(new (std::nothrow) ZstdCompressor());
  if (!out) return nullptr;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (cctx == nullptr) return nullptr;
  out->stream_ = cctx;
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  // A first (empty) compression allocates the work memory now, off the later paths.
  ZSTD_outBuffer o{out->buffer_, sizeof(out->buffer_), 0};
  ZSTD_inBuffer i{"", 0, 0};
  if (ZSTD_isError(ZSTD_compressStream2(cctx, &o, &i, ZSTD_e_flush))) return nullptr;
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
  return out;
}

bool ZstdCompressor::compress(const char* in, size_t size, bool endFrame, Sink sink, void* context) {
  auto* cctx = static_cast<ZSTD_CCtx*>(stream_);
  ZSTD_inBuffer input{in, size, 0};
  const ZSTD_EndDirective mode = endFrame ? ZSTD_e_end : ZSTD_e_flush;
  for (;;) {
    ZSTD_outBuffer output{buffer_, sizeof(buffer_), 0};
    const size_t remaining = ZSTD_compressStream2(cctx, &output, &input, mode);
    if (ZSTD_isError(remaining)) return false;
    if (output.pos > 0 && !sink(context, buffer_, output.pos)) return false;
    if (remaining == 0 && input.pos == input.size) return true;
  }
}

void ZstdCompressor::reset() { ZSTD_CCtx_reset(static_cast<ZSTD_CCtx*>(stream_), ZSTD_reset_session_only); }

ZstdDecompressor::~ZstdDecompressor() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(stream_)); }

std::unique_ptr<ZstdDecompressor> ZstdDecompressor::create() {
  std::unique_ptr<ZstdDecompressor> out(new (std::nothrow) ZstdDecompressor());
  if (!out) return nullptr;
  out->stream_ = ZSTD_createDCtx();
  if (out->stream_ == nullptr) return nullptr;
  return out;
}

std::string ZstdDecompressor::step(const char* in, size_t inSize, size_t* inPos, char* out, size_t outSize,
                                   size_t* outPos) {
  ZSTD_inBuffer input{in, inSize, *inPos};
  ZSTD_outBuffer output{out, outSize, *outPos};
  const size_t hint = ZSTD_decompressStream(static_cast<ZSTD_DCtx*>(stream_), &output, &input);
  *inPos = input.pos;
  *outPos = output.pos;
  if (ZSTD_isError(hint)) return ZSTD_getErrorName(hint);
  frameEnded_ = hint == 0;
  return "";
}

#else

bool zstdAvailable() { return false; }
ZstdCompressor::~ZstdCompressor() = default;
std::unique_ptr<ZstdCompressor> ZstdCompressor::create(int) { return nullptr; }
bool ZstdCompressor::compress(const char*, size_t, bool, Sink, void*) { return false; }
void ZstdCompressor::reset() {}
ZstdDecompressor::~ZstdDecompressor() = default;
std::unique_ptr<ZstdDecompressor> ZstdDecompressor::create() { return nullptr; }
std::string ZstdDecompressor::step(const char*, size_t, size_t*, char*, size_t, size_t*) { return zstdMissingText(); }

#endif

}  // namespace nshim::trace
