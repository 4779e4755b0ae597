// Creating and renaming files in shared directories without following, reusing or replacing what
// another user put there (private_file.h). Async-signal-safe: system calls and fixed buffers only.
#include "common/private_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace nshim {
namespace {

size_t textLength(const char* text) {
  size_t n = 0;
  while (text[n] != '\0') ++n;
  return n;
}

bool copyText(const char* text, char* out, size_t outBytes) {
  size_t n = textLength(text);
  if (n + 1 > outBytes) return false;
  for (size_t i = 0; i <= n; ++i) out[i] = text[i];
  return true;
}

}  // namespace

bool alternativeName(const char* path, int index, char* out, size_t outBytes) {
  size_t length = textLength(path);
  size_t slash = 0;  // start of the last component
  for (size_t i = 0; i < length; ++i) {
    if (path[i] == '/') slash = i + 1;
  }
  size_t dot = length;  // start of the extension: the last '.' of the last component, not its first character
  for (size_t i = length; i > slash + 1; --i) {
    if (path[i - 1] == '.') {
      dot = i - 1;
      break;
    }
  }
  char digits[12];
  int count = 0;
  for (unsigned value = static_cast<unsigned>(index); count == 0 || value > 0; value /= 10) {
    digits[count++] = static_cast<char>('0' + value % 10);
  }
  size_t needed = length + 1 + static_cast<size_t>(count) + 1;
  if (index < 1 || needed > outBytes) return false;
  size_t at = 0;
  for (size_t i = 0; i < dot; ++i) out[at++] = path[i];
  out[at++] = '.';
  while (count > 0) out[at++] = digits[--count];
  for (size_t i = dot; i < length; ++i) out[at++] = path[i];
  out[at] = '\0';
  return true;
}

int createNewFile(const char* path, mode_t mode, char* chosen, size_t chosenBytes, bool alternatives) {
  if (!copyText(path, chosen, chosenBytes)) return -ENAMETOOLONG;
  const int last = alternatives ? kNewFileAlternatives : 0;
  for (int index = 0;; ++index) {
    if (index > 0 && !alternativeName(path, index, chosen, chosenBytes)) return -ENAMETOOLONG;
    int fd = ::open(chosen, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) return fd;
    if (errno != EEXIST || index == last) return -errno;
  }
}

int renameNoReplace(const char* from, const char* to) {
#ifdef SYS_renameat2
  if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -errno;
#endif
  // No RENAME_NOREPLACE here: a hard link fails on an existing name, then the old name goes.
  if (::link(from, to) != 0) return -errno;
  ::unlink(from);
  return 0;
}

int renameToNewName(const char* from, const char* to, char* chosen, size_t chosenBytes) {
  if (!copyText(to, chosen, chosenBytes)) return -ENAMETOOLONG;
  for (int index = 0;; ++index) {
    if (index > 0 && !alternativeName(to, index, chosen, chosenBytes)) return -ENAMETOOLONG;
    int rc = renameNoReplace(from, chosen);
    if (rc != -EEXIST || index == kNewFileAlternatives) return rc;
  }
}

}  // namespace nshim
