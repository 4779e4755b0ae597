// Files written into directories other users may write too (/tmp, a shared trace folder): created
// new (O_EXCL: never an existing file, never through a symlink someone planted), private by default
// (0600), and renamed without replacing what is there. Async-signal-safe (open, link, rename,
// unlink, fixed buffers, no allocation), so the trace recorder may use it inside a signal handler.
//
//   char chosen[4096];
//   int fd = createNewFile("/dir/name.jsonl", 0600, chosen, sizeof(chosen));  // or dir/name.1.jsonl
//   ...; renameNoReplace(chosen, "/dir/final.jsonl");   // -EEXIST when final.jsonl exists
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace nshim {

// Names tried after `path` itself when it is taken: "<stem>.1<ext>" .. "<stem>.<N><ext>", where
// <ext> is the part of the last component from its last '.' ("name.jsonl" -> "name.1.jsonl").
constexpr int kNewFileAlternatives = 99;

// Creates `path` (or the first free alternative name) with O_CREAT|O_EXCL|O_NOFOLLOW, write-only,
// close-on-exec, with `mode` (before the umask). Returns the fd, or -errno (-EEXIST when every
// name is taken). `chosen` (capacity `chosenBytes`) receives the name created, or the last one
// tried. With alternatives = false only `path` itself is tried.
int createNewFile(const char* path, mode_t mode, char* chosen, size_t chosenBytes, bool alternatives = true);

// The name of alternative `index` (1..kNewFileAlternatives) of `path` into `out`; false when it
// does not fit.
bool alternativeName(const char* path, int index, char* out, size_t outBytes);

// rename(from, to) that never replaces an existing `to` (renameat2 RENAME_NOREPLACE, or link and
// unlink where the file system lacks it). 0, or -errno (-EEXIST when `to` exists).
int renameNoReplace(const char* from, const char* to);

// Like renameNoReplace, but when `to` is taken the first free alternative name of it is used;
// `chosen` receives the name used. 0 or -errno.
int renameToNewName(const char* from, const char* to, char* chosen, size_t chosenBytes);

}  // namespace nshim
