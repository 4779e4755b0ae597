// Helper programs: fork + execvp + waitpid (subprocess.h).
#include "common/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/settings.h"

namespace nshim {

int runProgram(const std::vector<std::string>& args, bool quietStderr) {
  if (args.empty()) return 127;
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    if (quietStderr) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, STDERR_FILENO);
    }
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string executableDir() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  std::string exe(path, static_cast<size_t>(n));
  size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "." : exe.substr(0, slash);
}

std::string findPython(const char* module) {
  std::vector<std::string> candidates;
  if (settingIsSet(Setting::NCCLSHIM_PYTHON)) candidates.push_back(settingString(Setting::NCCLSHIM_PYTHON));
  else candidates = {"python3", "/usr/bin/python3"};
  for (const std::string& python : candidates) {
    if (runProgram({python, "-c", std::string("import ") + module}, true) == 0) return python;
  }
  return "";
}

}  // namespace nshim
