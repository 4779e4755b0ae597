// The recorder's drain: merges the rings of all threads by their records' merge keys (times, each
// ring in its own order), numbers the records in that order (`n`), formats each as a JSON line into
// a fixed buffer and writes it to the per-process file, which is created with the first record and
// renamed once the global rank is known. The file is always a new one (common/private_file.h: a
// name taken, by a symlink or anything else, gets a ".1" before the extension, said in the log) and
// private unless NCCLSHIM_TRACE_MODE says otherwise. A file that cannot be created or written is
// announced at once, the file ends where the write failed, and the records lost are counted and
// announced at close. Runs under drainLock_ in the writer thread, in flush()/close(), or in a
// signal handler: async-signal-safe calls only (open, write, rename, clock_gettime), no allocation.
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/clock.h"
#include "common/log.h"
#include "common/private_file.h"
#include "trace/line_buffer.h"
#include "trace/recorder.h"

namespace nshim::trace {
namespace {

void storeFirstError(std::atomic<int>& slot, int err) {
  int expected = 0;
  slot.compare_exchange_strong(expected, err);
}

// The lines of `data` that are not complete in the file, less the non-record lines at its end.
uint64_t recordLinesIn(const char* data, size_t length, size_t tailNonRecords) {
  uint64_t lines = 0;
  for (size_t i = 0; i < length; ++i) lines += data[i] == '\n';
  return lines > tailNonRecords ? lines - tailNonRecords : 0;
}

// strerror without its locale machinery (async-signal-safe: a constant string).
const char* errorText(int err) {
  const char* text = strerrordesc_np(err);
  return text ? text : "unknown error";
}

}  // namespace

uint64_t Recorder::drainLocked(bool allowReclaim) {
  int active = 0;
  uint64_t liveDrops = 0;
  for (auto& entry : rings_) {
    RecordRing* ring = entry.load(std::memory_order_acquire);
    if (ring == nullptr) continue;
    liveDrops += ring->drops();
    uint64_t tail = ring->readTail();
    uint64_t head = ring->readHead();
    if (head != tail) {
      merge_[active] = ring;
      mergePos_[active] = tail;
      mergeEnd_[active] = head;
      ++active;
    }
  }
  uint64_t emitted = 0;
  if (active > 0 && cut_) {
    // The file reached its size limit: the records are counted, not written.
    for (int i = 0; i < active; ++i) {
      cutRecords_.fetch_add(mergeEnd_[i] - mergePos_[i], std::memory_order_relaxed);
      merge_[i]->consumeTo(mergeEnd_[i]);
    }
    active = 0;
  }
  if (active > 0 && fd_ < 0 && (fileFailed_ || !openFileLocked())) {
    // No file: the records cannot be kept; count them so the loss is visible in stats() and at close.
    for (int i = 0; i < active; ++i) {
      unwritten_ += mergeEnd_[i] - mergePos_[i];
      merge_[i]->consumeTo(mergeEnd_[i]);
    }
    active = 0;
  }
  while (active > 0) {
    int best = 0;
    uint64_t bestKey = merge_[0]->slotAt(mergePos_[0]).key;
    for (int i = 1; i < active; ++i) {
      uint64_t key = merge_[i]->slotAt(mergePos_[i]).key;
      if (key < bestKey) {
        bestKey = key;
        best = i;
      }
    }
    emitSlot(merge_[best]->slotAt(mergePos_[best]));
    ++emitted;
    ++mergePos_[best];
    // Hand slots back as we go so that a producer waiting on a full ring waits for 256 records,
    // not for the whole ring.
    if ((mergePos_[best] & 255) == 0) merge_[best]->consumeTo(mergePos_[best]);
    if (mergePos_[best] == mergeEnd_[best]) {
      merge_[best]->consumeTo(mergeEnd_[best]);
      --active;
      merge_[best] = merge_[active];
      mergePos_[best] = mergePos_[active];
      mergeEnd_[best] = mergeEnd_[active];
    }
  }
  flushOut();  // first: a write failing here counts its records in unwritten_
  uint64_t totalDrops = reclaimedDrops_ + liveDrops + unregisteredDrops_.load() + unwritten_;
  if (totalDrops > dropsReported_) {
    if (fd_ >= 0) {
      size_t n = formatDropsLine(totalDrops - dropsReported_, totalDrops, line_, sizeof(line_));
      emitLine(line_, n);
      ++outTailNonRecords_;
    }
    dropsReported_ = totalDrops;
  }
  flushOut();
  if (allowReclaim) {
    // Rings of threads that exited, once empty, go back (their drops stay counted).
    for (auto& entry : rings_) {
      RecordRing* ring = entry.load(std::memory_order_acquire);
      if (ring && ring->orphaned() && ring->readHead() == ring->readTail()) {
        entry.store(nullptr, std::memory_order_release);
        reclaimedDrops_ += ring->drops();
        ring->release();
      }
    }
  }
  return emitted;
}

void Recorder::emitSlot(const RingSlot& slot) {
  if (cut_) {
    cutRecords_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  size_t n = 0;
  const uint64_t lineN = nextLineN_;
  std::atomic<uint64_t>* written = &ops_;  // the count of this kind of line
  if (slot.kind == SlotKind::kComm) {
    CommRecord record = slot.comm;
    if (record.host[0] == '\0') copyFixed(record.host, sizeof(record.host), header_.host);
    if (record.pid == 0) record.pid = static_cast<int32_t>(header_.pid);
    bool creates = record.event == CommEvent::kInit || record.event == CommEvent::kSplit;
    if (globalRank_.load(std::memory_order_relaxed) == kNoRank && creates) {
      adoptRankLocked(record.globalRank != kNoRank ? record.globalRank : record.rank);
    }
    if (record.globalRank == kNoRank) record.globalRank = globalRank_.load(std::memory_order_relaxed);
    n = formatCommLine(record, lineN, line_, sizeof(line_));
    written = &comms_;
  } else if (slot.kind == SlotKind::kTask) {
    n = formatTaskLine(slot.task, lineN, line_, sizeof(line_));
    written = &tasks_;
  } else if (slot.kind == SlotKind::kStep) {
    n = formatStepLine(slot.step, lineN, line_, sizeof(line_));
    written = &steps_;
  } else if (slot.kind == SlotKind::kProxy) {
    n = formatProxyLine(slot.proxy, lineN, line_, sizeof(line_));
    written = &proxies_;
  } else {
    const OpRecord* record = &slot.op;
    OpRecord sized;
    if (record->bytes == kBytesByWriter) {  // left to the writer by the API frame (trace_record.h)
      sized = *record;
      sized.bytes = traceBytes(sized.op, sized.count, sized.datatype, sized.nranks);
      record = &sized;
    }
    n = formatOpLine(*record, lineN, line_, sizeof(line_));
  }
  // NCCLSHIM_TRACE_MAX_MB: the line would take the file past its limit (what is not compressed yet
  // counted whole, so a compressed file stays under it too).
  if (config_.maxBytes > 0 && fileBytes_ + outLen_ + n > config_.maxBytes) {
    cutLocked();
    cutRecords_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ++nextLineN_;
  written->fetch_add(1, std::memory_order_relaxed);
  emitLine(line_, n);
}

void Recorder::emitLine(const char* line, size_t length) {
  if (length == 0) return;
  if (outLen_ + length > sizeof(out_)) flushOut();
  std::memcpy(out_ + outLen_, line, length);
  outLen_ += length;
}

// Writes out_. On the first failure (disk full, I/O error) the file is closed where it ends (cut,
// possibly inside a line) and every record not complete in it, now or later, is counted as lost.
void Recorder::flushOut() {
  if (zstd_ != nullptr && fd_ >= 0 && (outLen_ > 0 || endFrame_)) {
    if (!zstd_->compress(out_, outLen_, endFrame_, &Recorder::zstdSink, this)) {
      if (fd_ >= 0) {  // zstd itself failed (the sink closes the file on a write error)
        storeFirstError(writeErrno_, EIO);
        ::close(fd_);
        fd_ = -1;
        fileFailed_ = true;
        warnLocked("cannot compress", path_, EIO);
      }
      unwritten_ += recordLinesIn(out_, outLen_, outTailNonRecords_);
    }
  } else {
    const size_t done = writeAllLocked(out_, outLen_);
    if (done < outLen_) unwritten_ += recordLinesIn(out_ + done, outLen_ - done, outTailNonRecords_);
  }
  outLen_ = 0;
  outTailNonRecords_ = 0;
}

bool Recorder::zstdSink(void* self, const char* data, size_t length) {
  return static_cast<Recorder*>(self)->writeAllLocked(data, length) == length;
}

// On the first failure (disk full, I/O error) the file is closed where it ends (cut, possibly
// inside a line) and every record not complete in it, now or later, is counted as lost.
size_t Recorder::writeAllLocked(const char* data, size_t length) {
  size_t done = 0;
  while (fd_ >= 0 && done < length) {
    ssize_t n = ::write(fd_, data + done, length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      storeFirstError(writeErrno_, err);
      ::close(fd_);
      fd_ = -1;
      fileFailed_ = true;
      warnLocked("cannot write", path_, err);
      break;
    }
    done += static_cast<size_t>(n);
    fileBytes_ += static_cast<uint64_t>(n);
  }
  return done;
}

// NCCLSHIM_TRACE_MAX_MB reached: what is held is written, then a footer that says so, and the file
// gets its final name; later records are only counted (stats().cut). Said once on stderr.
void Recorder::cutLocked() {
  if (cut_) return;
  flushOut();
  writeFooterLocked("cut", 0);  // cut_ is set inside, with the footer's fields
  LineBuffer message(note_, sizeof(note_));
  message.put("trace: ");
  message.put(std::string_view(path_));
  message.put(" reached NCCLSHIM_TRACE_MAX_MB (");
  message.putUint(config_.maxBytes);
  message.put(" bytes): recording stopped there; its footer says so (cut), later records are counted, not written");
  logLocked(message.view());
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// The first failure to create or write the file, once per process: on stderr (the log) at once.
void Recorder::warnLocked(const char* what, const char* path, int err) {
  if (lossWarned_) return;
  lossWarned_ = true;
  LineBuffer message(note_, sizeof(note_));
  message.put("trace: ");
  message.put(std::string_view(what));
  message.put(' ');
  message.put(std::string_view(path));
  message.put(": ");
  message.put(std::string_view(errorText(err)));
  message.put("; records of this process are lost from here on (their count is printed at exit)");
  logLocked(message.view());
}

// How many records the trace lacks because its file failed, once, at close or at a fatal signal.
void Recorder::reportLossLocked() {
  if (lossReported_ || !fileFailed_ || dropsReported_ == 0) return;
  lossReported_ = true;
  LineBuffer message(note_, sizeof(note_));
  message.put("trace: ");
  message.putUint(dropsReported_);
  message.put(" records lost: ");
  message.put(std::string_view(path_[0] ? path_ : config_.dir.c_str()));
  message.put(" could not be written (");
  message.put(std::string_view(errorText(writeErrno_.load())));
  message.put(path_[0] ? "); the file is cut where the writing stopped" : ")");
  logLocked(message.view());
}

// A warning from under the drain lock: through the log, or in a signal handler straight to stderr
// with the log's prefix (no allocation there).
void Recorder::logLocked(std::string_view message) {
  if (!config_.warnings) return;
  if (!inSignal_) {
    logWrite(LogLevel::kWarn, message);
    return;
  }
  char prefix[128];
  LineBuffer head(prefix, sizeof(prefix));
  head.put(std::string_view(header_.host));
  head.put(':');
  head.putInt(header_.pid);
  head.put(" ncclshim WARN ");
  char newline[] = "\n";
  iovec parts[3] = {{prefix, head.size()}, {const_cast<char*>(message.data()), message.size()}, {newline, 1}};
  (void)!::writev(STDERR_FILENO, parts, 3);
}

// <dir>/<pattern>.jsonl[.zst][.part]: %h host, %p pid, %r global rank ("unknown" before it is
// known), %j the job ("nojob" without one), %% '%'. A pattern without %r gets "-rank<R>" appended
// once the rank is known. Written as .part until its first footer (completeFileLocked).
void Recorder::buildPath(char* out, size_t capacity, int32_t rank, bool partial) const {
  LineBuffer path(out, capacity - 1);
  path.put(config_.dir);
  path.put('/');
  const std::string& pattern = config_.namePattern;
  bool sawRank = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      path.put(pattern[i]);
      continue;
    }
    char token = pattern[++i];
    if (token == 'h') {
      path.put(header_.host);
    } else if (token == 'p') {
      path.putInt(header_.pid);
    } else if (token == 'j') {
      path.put(config_.job.empty() ? std::string_view("nojob") : std::string_view(config_.job));
    } else if (token == 'r') {
      sawRank = true;
      if (rank == kNoRank) path.put("unknown");
      else path.putInt(rank);
    } else {
      path.put(token);
    }
  }
  if (!sawRank && rank != kNoRank) {
    path.put("-rank");
    path.putInt(rank);
  }
  path.put(".jsonl");
  if (config_.compress) path.put(".zst");
  if (partial) path.put(".part");
  out[path.size()] = '\0';
}

bool Recorder::openFileLocked() {
  int32_t rank = globalRank_.load(std::memory_order_relaxed);
  char* wanted = wantedPath_;  // members, not the stack: this may run on a signal's small stack
  buildPath(wanted, kPathBytes, rank, true);
  int fd = createNewFile(wanted, config_.fileMode, path_, sizeof(path_));
  if (fd < 0) {
    storeFirstError(writeErrno_, -fd);
    fileFailed_ = true;
    path_[0] = '\0';
    warnLocked("cannot create", wanted, -fd);
    return false;
  }
  (void)::fchmod(fd, config_.fileMode);  // exactly the mode asked for, whatever the umask
  fd_ = fd;
  if (std::strcmp(wanted, path_) != 0) noteOtherName(wanted);
  header_.globalRank = rank;
  emitLine(line_, formatHeaderLine(header_, line_, sizeof(line_)));
  ++outTailNonRecords_;
  flushOut();
  return fd_ >= 0;
}

// The file's name was taken (a file of an earlier process, or one planted there): said each time.
void Recorder::noteOtherName(const char* wanted) {
  LineBuffer message(note_, sizeof(note_));
  message.put("trace: ");
  message.put(std::string_view(wanted));
  message.put(" exists (not replaced, not followed); writing ");
  message.put(std::string_view(path_));
  logLocked(message.view());
}

void Recorder::adoptRankLocked(int32_t rank) {
  if (rank < 0) return;
  globalRank_.store(rank, std::memory_order_relaxed);
  if (fd_ < 0) return;
  char* renamed = wantedPath_;
  buildPath(renamed, kPathBytes, rank, !complete_);
  if (std::strcmp(renamed, path_) == 0) return;
  flushOut();
  if (fd_ < 0) return;  // the write failed: the file stays under its first name, cut
  char* chosen = chosenPath_;
  if (int rc = renameToNewName(path_, renamed, chosen, kPathBytes); rc != 0) {
    storeFirstError(writeErrno_, -rc);
    return;
  }
  std::memcpy(path_, chosen, sizeof(path_));
  if (std::strcmp(renamed, chosen) != 0) noteOtherName(renamed);
}

void Recorder::writeFooterLocked(const char* reason, int signal) {
  if (reason != lastReason_) copyFixed(lastReason_, sizeof(lastReason_), reason);
  lastSignal_ = signal;
  if (fd_ < 0) return;  // nothing was recorded: no file at all
  TraceFooter footer{};
  footer.comms = comms_.load();
  footer.ops = ops_.load();
  footer.tasks = tasks_.load();
  footer.proxies = proxies_.load();
  footer.steps = steps_.load();
  footer.records = footer.comms + footer.ops + footer.tasks + footer.proxies + footer.steps;
  if (std::strcmp(reason, "cut") == 0) {
    cut_ = true;
    copyFixed(footer.cut, sizeof(footer.cut), "max_mb");
    footer.maxBytes = config_.maxBytes;
  }
  footer.dropped = dropsReported_;
  footer.invalid = invalid_.load();
  footer.globalRank = globalRank_.load(std::memory_order_relaxed);
  footer.signal = signal;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  footer.endRealtimeNs = int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  footer.endMonotonicNs = nowNs();
  copyFixed(footer.reason, sizeof(footer.reason), lastReason_);
  emitLine(line_, formatFooterLine(footer, line_, sizeof(line_)));
  ++outTailNonRecords_;
  endFrame_ = true;  // zstd: a footer ends its frame, so the file is whole where it stops
  flushOut();
  endFrame_ = false;
  if (!complete_ && fd_ >= 0) completeFileLocked();
}

// The file is complete (it has a footer): from <name>.part to <name>, never over another file.
void Recorder::completeFileLocked() {
  complete_ = true;
  char* final = wantedPath_;
  buildPath(final, kPathBytes, globalRank_.load(std::memory_order_relaxed), false);
  char* chosen = chosenPath_;
  if (int rc = renameToNewName(path_, final, chosen, kPathBytes); rc != 0) {
    storeFirstError(writeErrno_, -rc);
    return;
  }
  std::memcpy(path_, chosen, sizeof(path_));
  if (std::strcmp(final, chosen) != 0) noteOtherName(final);
}

}  // namespace nshim::trace
