// The unique id's file for ranks started by mpirun (id_file.h): a private directory of this user,
// a name both ranks derive from their launcher, a private file renamed into place, owner checks.
#include "tools/perf/id_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nshim::perf {
namespace {

// Empty when `dir` is a real directory (not a symlink) of this user that nobody else may enter;
// otherwise why not.
std::string privateDirProblem(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return fmt::format("cannot examine it: {}", std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != geteuid()) return fmt::format("it is owned by uid {}, not by you (uid {})", st.st_uid, geteuid());
  if ((st.st_mode & 077) != 0)
    return fmt::format("its mode is {:04o}: others may enter it (0700 expected)", st.st_mode & 07777);
  return "";
}

// The launcher's start time (field 22 of /proc/<pid>/stat), so that a file left by an earlier
// launcher with the same pid is never taken for this one's; "" when unreadable.
std::string startTimeOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int index = 3; index <= 22 && (fields >> field); ++index) {
    if (index == 22) return field;
  }
  return "";
}

}  // namespace

Result<std::string> defaultIdFilePath() {
  std::string dir;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime == '/') {
    if (std::string problem = privateDirProblem(runtime); problem.empty()) {
      dir = runtime;
    } else {
      std::fprintf(stderr, "ncclshim perf: not using XDG_RUNTIME_DIR=%s for the unique id: %s\n", runtime,
                   problem.c_str());
    }
  }
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = fmt::format("{}/ncclshim-{}", tmp && *tmp == '/' ? tmp : "/tmp", geteuid());
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return NS_ERROR(Code::kSystemError, "cannot create {} for the unique id: {} (or use --id-file)", dir,
                      std::strerror(errno));
    }
    if (std::string problem = privateDirProblem(dir); !problem.empty()) {
      return NS_ERROR(Code::kInvalidUsage, "refusing {} for the unique id: {}; remove it, or use --id-file", dir,
                      problem);
    }
  }
  const pid_t launcher = getppid();
  std::string started = startTimeOf(launcher);
  return fmt::format("{}/ncclshim-perf-{}{}{}.id", dir, launcher, started.empty() ? "" : "-", started);
}

Status writeIdFile(const std::string& path, const std::string& text) {
  std::string temporary = path + ".XXXXXX";
  int fd = mkstemp(temporary.data());  // new (O_EXCL), 0600, a name nobody could plant in advance
  if (fd < 0) return NS_ERROR(Code::kSystemError, "cannot create a file next to {}: {}", path, std::strerror(errno));
  int err = 0;
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) err = errno ? errno : EIO;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) err = errno;
  if (err == 0) return Status::Ok();
  ::unlink(temporary.c_str());
  return NS_ERROR(Code::kSystemError, "cannot write the unique id to {}: {}", path, std::strerror(err));
}

IdFileState readIdFile(const std::string& path, std::string* text, std::string* why) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return IdFileState::kMissing;
    *why = errno == ELOOP ? "it is a symbolic link" : std::strerror(errno);
    return IdFileState::kForeign;
  }
  struct stat st;
  IdFileState state = IdFileState::kRead;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = "it is not a regular file";
    state = IdFileState::kForeign;
  } else if (st.st_uid != geteuid()) {
    *why = fmt::format("it is owned by uid {}, not by you (uid {})", st.st_uid, geteuid());
    state = IdFileState::kForeign;
  } else {
    char buffer[256];
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    text->assign(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  }
  ::close(fd);
  return state;
}

IdFileRemover::~IdFileRemover() { ::unlink(path_.c_str()); }

}  // namespace nshim::perf
