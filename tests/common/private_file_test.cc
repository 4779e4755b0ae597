// common/private_file: new files never reuse or follow what is at the name (the next ".N" name
// instead), and a rename never replaces.
#include "common/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "tests/catch.h"

namespace nshim {
namespace {

struct ScratchDir {
  std::string path;
  ScratchDir() {
    char pattern[] = "/tmp/ncclshim-private-file-XXXXXX";
    path = mkdtemp(pattern) ? pattern : "";
  }
  ~ScratchDir() { (void)!std::system(("rm -rf " + path).c_str()); }
};

std::string alternative(const char* path, int index) {
  char out[256];
  return alternativeName(path, index, out, sizeof(out)) ? out : "<does not fit>";
}

}  // namespace

TEST_CASE("alternative names put the number before the extension of the last component", "[common][shared]") {
  CHECK(alternative("/d/ncclshim-h-1-rank0.jsonl", 1) == "/d/ncclshim-h-1-rank0.1.jsonl");
  CHECK(alternative("/d/name", 12) == "/d/name.12");
  CHECK(alternative("/d.x/name", 2) == "/d.x/name.2");
  CHECK(alternative("/d/.hidden", 3) == "/d/.hidden.3");
  char small[8];
  CHECK_FALSE(alternativeName("/d/name.jsonl", 1, small, sizeof(small)));
}

TEST_CASE("createNewFile skips names that exist, symlinks included, and renameNoReplace keeps the target",
          "[common][shared]") {
  ScratchDir dir;
  REQUIRE_FALSE(dir.path.empty());
  const std::string wanted = dir.path + "/t.jsonl";
  REQUIRE(symlink("/nonexistent-target", wanted.c_str()) == 0);  // dangling: O_CREAT alone would create the target
  char chosen[512];
  int fd = createNewFile(wanted.c_str(), 0600, chosen, sizeof(chosen));
  REQUIRE(fd >= 0);
  close(fd);
  CHECK(std::string(chosen) == dir.path + "/t.1.jsonl");
  CHECK(access("/nonexistent-target", F_OK) != 0);
  CHECK(createNewFile(wanted.c_str(), 0600, chosen, sizeof(chosen), false) == -EEXIST);

  const std::string from = dir.path + "/from";
  close(open(from.c_str(), O_WRONLY | O_CREAT, 0600));
  CHECK(renameNoReplace(from.c_str(), (dir.path + "/t.1.jsonl").c_str()) == -EEXIST);
  CHECK(renameToNewName(from.c_str(), wanted.c_str(), chosen, sizeof(chosen)) == 0);
  CHECK(std::string(chosen) == dir.path + "/t.2.jsonl");
  CHECK(access(from.c_str(), F_OK) != 0);
}

}  // namespace nshim
