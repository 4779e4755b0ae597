// The job file of `phynet --jobs`: a good file reads into hosts and jobs; bad input is refused
// with the file, the line and the key named (unknown key, unknown host, missing NIC, NICs two
// jobs share without share_nics, a background key on a replay, TOML syntax).
#include "phynet/job_file.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

const char* kHead = R"(launcher = ["mpirun", "--allow-run-as-root"]
exec = ["agent"]
timeout_s = 30
[hosts.h1]
address = "10.99.0.1"
nics = { r0 = "10.100.1.1", r1 = "10.100.1.2" }
[hosts.h2]
address = "10.99.0.2"
nics = { r0 = "10.100.2.1" }
)";  // 9 lines: a job appended starts on line 10

std::string refusal(const std::string& jobs) {
  Result<JobFile> f = parseJobFile(std::string(kHead) + jobs, "jobs.toml");
  REQUIRE_FALSE(f.ok());
  return f.status().message();
}

TEST_CASE("job file: hosts, a replay and a background flow", "[phynet][jobs]") {
  Result<JobFile> f = parseJobFile(std::string(kHead) + R"([[job]]
name = "dp"
input = "examples/traces/megatron_dp2"
hosts = ["h1", "h2"]
ranks_per_host = 2
nics = ["r0"]
start_ms = 250
args = ["--verify"]
[[job]]
name = "load"
kind = "background"
hosts = ["h2", "h1"]
nics = ["r0"]
rate_mbit = 100
on_ms = 50
off_ms = 50
)",
                                   "jobs.toml");
  REQUIRE(f.ok());
  CHECK(f->timeoutS == 30);
  CHECK(f->launcher == std::vector<std::string>{"mpirun", "--allow-run-as-root"});
  REQUIRE(f->hosts.size() == 2);
  CHECK(f->host("h1")->nics.at("r1") == "10.100.1.2");
  REQUIRE(f->jobs.size() == 2);
  CHECK(f->jobs[0].kind == JobKind::kReplay);
  CHECK(f->jobs[0].line == 10);
  CHECK(f->jobs[0].ranksPerHost == 2);
  CHECK(f->jobs[0].startMs == 250);
  CHECK(f->jobs[0].args == std::vector<std::string>{"--verify"});
  CHECK(f->jobs[1].kind == JobKind::kBackground);
  CHECK(f->jobs[1].rateMbit == 100);
  CHECK(f->jobs[1].offMs == 50);
}

TEST_CASE("job file: bad input names file, line and key", "[phynet][jobs]") {
  const std::string job = "[[job]]\nname = \"a\"\ninput = \"t\"\nhosts = [\"h1\", \"h2\"]\nnics = [\"r0\"]\n";
  CHECK(
      refusal(job + "colour = \"red\"\n") ==
      "jobs.toml:15: key 'colour': unknown key in [[job]] (known: alone_busbw_gbps, alone_time_s, args, hosts, input, "
      "kind, name, nics, off_ms, on_ms, port, ranks_per_host, rate_mbit, seconds, start_ms)");
  CHECK(refusal("[[job]]\nname = \"a\"\ninput = \"t\"\nhosts = [\"h1\", \"h9\"]\n") ==
        "jobs.toml:13: key 'hosts': no host 'h9' in [hosts]");
  CHECK(refusal("[[job]]\nname = \"a\"\ninput = \"t\"\nhosts = [\"h1\", \"h2\"]\nnics = [\"r1\"]\n") ==
        "jobs.toml:14: key 'nics': host 'h2' has no NIC 'r1'");
  CHECK(refusal(job + job.substr(0, 8) + "name = \"b\"\n" + job.substr(19)) ==
        "jobs.toml:15: key 'nics': job 'b' uses NIC r0 of host h1, as job 'a' does (set share_nics = true to allow)");
  CHECK(refusal(job + "rate_mbit = 5\n") == "jobs.toml:15: key 'rate_mbit': belongs to kind = \"background\"");
  CHECK(refusal(job + "ranks_per_host = 0\n") == "jobs.toml:15: key 'ranks_per_host': 0 is outside [1, 1024]");
  CHECK(refusal(job + "start_ms = \"soon\"\n") == "jobs.toml:15: key 'start_ms': must be a number");
  CHECK(refusal(job + job) == "jobs.toml:16: key 'name': job 'a' twice");
  CHECK(refusal("[[job]]\nname = \"a\"\nkind = \"background\"\nhosts = [\"h1\"]\nnics = [\"r0\"]\nrate_mbit = 1\n") ==
        "jobs.toml:13: key 'hosts': a background flow needs [sender, receiver]");
  CHECK(refusal("[[job\n").find("jobs.toml:10:") == 0);
  Result<JobFile> noLauncher = parseJobFile("[hosts.h1]\naddress = \"x\"\n", "j.toml");
  REQUIRE_FALSE(noLauncher.ok());
  CHECK(noLauncher.status().message() == "j.toml:1: key 'launcher': missing");
}

}  // namespace
}  // namespace nshim::phynet
