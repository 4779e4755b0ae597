// The file through which ranks of `ncclshim perf` started by mpirun pass rank 0's unique id (its
// root address and secret). Without --id-file it lives in a directory only this user can enter:
// $XDG_RUNTIME_DIR when that is this user's and private, else ${TMPDIR:-/tmp}/ncclshim-<uid>,
// created 0700 and refused when another user owns it or it is open to others; it is named after
// the launcher (mpirun's pid and start time), so the ranks of one mpirun agree on it without talking.
// Rank 0 writes a private temporary file and renames it into place; the others read only a
// regular file owned by this user (a planted file or symlink is ignored, with a note), and rank 0
// removes the file when the run ends.
#pragma once

#include <string>

#include "common/status.h"

namespace nshim::perf {

// The default id file of this job (creates and checks the private directory).
Result<std::string> defaultIdFilePath();

// Writes `text` to `path` (0600, through a new temporary file in its directory and a rename).
Status writeIdFile(const std::string& path, const std::string& text);

enum class IdFileState { kMissing, kRead, kForeign };
// Reads `path` into `text` when it is a regular file of this user (kRead); kForeign (with the
// reason in `why`) when something else is there: a symlink, another user's file, not a file.
IdFileState readIdFile(const std::string& path, std::string* text, std::string* why);

// Removes the id file when the run ends (rank 0).
class IdFileRemover {
 public:
  explicit IdFileRemover(std::string path) : path_(std::move(path)) {}
  ~IdFileRemover();
  IdFileRemover(const IdFileRemover&) = delete;
  IdFileRemover& operator=(const IdFileRemover&) = delete;

 private:
  std::string path_;
};

}  // namespace nshim::perf
