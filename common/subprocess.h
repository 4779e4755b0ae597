// Running a helper program and waiting for it (the tools' Python plotters and report pages):
// fork + execvp, the exit status back, stderr optionally silenced; and the folder of the running
// binary, where those helpers are installed.
#pragma once

#include <string>
#include <vector>

namespace nshim {

// Runs argv (argv[0] looked up on PATH) and returns its exit status: 127 when it could not be
// started, 128 + signal when a signal ended it. Its stderr goes to /dev/null when `quietStderr`.
int runProgram(const std::vector<std::string>& argv, bool quietStderr);

// The folder of /proc/self/exe ("." when unknown).
std::string executableDir();

// The first Python 3 that can `import module`: $NCCLSHIM_PYTHON when set (the only candidate then),
// else python3 on PATH, then /usr/bin/python3. "" when none can.
std::string findPython(const char* module);

}  // namespace nshim
