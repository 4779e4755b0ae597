// Reading and checking the job file (job_file.h). toml++ is used without exceptions: a parse error
// comes back as a value with its line and column. Every key is checked against the keys its table
// may hold, so a misspelt key is an error, not a silently ignored setting.
#include "phynet/job_file.h"

#ifndef NSHIM_NO_TOMLPLUSPLUS
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>
#endif

#include <fstream>
#include <set>
#include <sstream>

namespace nshim::phynet {
#ifndef NSHIM_NO_TOMLPLUSPLUS
namespace {

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Status error(const toml::node* node, std::string_view key, const std::string& what) const {
    int line = node ? static_cast<int>(node->source().begin.line) : 0;
    return Status(Code::kInvalidArgument, fmt::format("{}:{}: key '{}': {}", path_, line, key, what));
  }

  Status onlyKeys(const toml::table& table, std::string_view where, const std::set<std::string_view>& allowed) const {
    for (const auto& [key, node] : table) {
      if (!allowed.count(key.str())) {
        std::string list;
        for (std::string_view k : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
        return error(&node, key.str(), fmt::format("unknown key in {} (known: {})", where, list));
      }
    }
    return Status::Ok();
  }

  Status string(const toml::table& t, std::string_view key, bool required, std::string* out) const {
    const toml::node* n = t.get(key);
    if (!n) return required ? error(&t, key, "missing") : Status::Ok();
    if (!n->is_string()) return error(n, key, "must be a string");
    *out = n->value<std::string>().value_or("");
    if (out->empty()) return error(n, key, "must not be empty");
    return Status::Ok();
  }

  Status strings(const toml::table& t, std::string_view key, bool required, std::vector<std::string>* out) const {
    const toml::node* n = t.get(key);
    if (!n) return required ? error(&t, key, "missing") : Status::Ok();
    const toml::array* a = n->as_array();
    if (!a) return error(n, key, "must be an array of strings");
    out->clear();
    for (const toml::node& e : *a) {
      if (!e.is_string()) return error(&e, key, "must be an array of strings");
      out->push_back(e.value<std::string>().value_or(""));
    }
    if (required && out->empty()) return error(n, key, "must not be empty");
    return Status::Ok();
  }

  Status number(const toml::table& t, std::string_view key, double lo, double hi, double* out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::Ok();
    if (!n->is_number()) return error(n, key, "must be a number");
    double v = n->value<double>().value_or(0);
    if (v < lo || v > hi) return error(n, key, fmt::format("{} is outside [{}, {}]", v, lo, hi));
    *out = v;
    return Status::Ok();
  }

  Status boolean(const toml::table& t, std::string_view key, bool* out) const {
    const toml::node* n = t.get(key);
    if (!n) return Status::Ok();
    if (!n->is_boolean()) return error(n, key, "must be true or false");
    *out = n->value<bool>().value_or(false);
    return Status::Ok();
  }

  Status host(const std::string& name, const toml::node& node, FabricHost* out) const {
    const toml::table* t = node.as_table();
    if (!t) return error(&node, name, "a host must be a table (address, nics)");
    NS_RETURN_IF_ERROR(onlyKeys(*t, "host " + name, {"address", "nics"}));
    out->name = name;
    NS_RETURN_IF_ERROR(string(*t, "address", true, &out->address));
    const toml::node* nics = t->get("nics");
    if (!nics) return Status::Ok();
    const toml::table* nt = nics->as_table();
    if (!nt) return error(nics, "nics", "must be a table NIC = \"address\"");
    for (const auto& [nic, address] : *nt) {
      if (!address.is_string()) return error(&address, nic.str(), "a NIC's address must be a string");
      out->nics[std::string(nic.str())] = address.value<std::string>().value_or("");
    }
    return Status::Ok();
  }

  Status job(const toml::table& t, const JobFile& file, JobSpec* out) const {
    out->line = static_cast<int>(t.source().begin.line);
    NS_RETURN_IF_ERROR(
        onlyKeys(t, "[[job]]",
                 {"name", "kind", "input", "hosts", "ranks_per_host", "nics", "start_ms", "args", "alone_time_s",
                  "alone_busbw_gbps", "rate_mbit", "on_ms", "off_ms", "seconds", "port"}));
    NS_RETURN_IF_ERROR(string(t, "name", true, &out->name));
    std::string kind = "replay";
    NS_RETURN_IF_ERROR(string(t, "kind", false, &kind));
    if (kind == "background") out->kind = JobKind::kBackground;
    else if (kind != "replay") return error(t.get("kind"), "kind", "must be \"replay\" or \"background\"");
    NS_RETURN_IF_ERROR(strings(t, "hosts", true, &out->hosts));
    for (size_t i = 0; i < out->hosts.size(); ++i) {
      if (!file.host(out->hosts[i]))
        return error(t.get("hosts"), "hosts", fmt::format("no host '{}' in [hosts]", out->hosts[i]));
      for (size_t j = 0; j < i; ++j)
        if (out->hosts[j] == out->hosts[i])
          return error(t.get("hosts"), "hosts", fmt::format("host '{}' twice", out->hosts[i]));
    }
    NS_RETURN_IF_ERROR(strings(t, "nics", false, &out->nics));
    for (const std::string& h : out->hosts) {
      for (const std::string& nic : out->nics) {
        if (!file.host(h)->nics.count(nic))
          return error(t.get("nics"), "nics", fmt::format("host '{}' has no NIC '{}'", h, nic));
      }
    }
    NS_RETURN_IF_ERROR(number(t, "start_ms", 0, 3.6e6, &out->startMs));
    if (out->kind == JobKind::kReplay) {
      NS_RETURN_IF_ERROR(string(t, "input", true, &out->input));
      double perHost = 1;
      NS_RETURN_IF_ERROR(number(t, "ranks_per_host", 1, 1024, &perHost));
      out->ranksPerHost = static_cast<int>(perHost);
      NS_RETURN_IF_ERROR(strings(t, "args", false, &out->args));
      NS_RETURN_IF_ERROR(number(t, "alone_time_s", 0, 1e6, &out->aloneTimeS));
      NS_RETURN_IF_ERROR(number(t, "alone_busbw_gbps", 0, 1e6, &out->aloneBusbwGBps));
      for (std::string_view k : {"rate_mbit", "on_ms", "off_ms", "seconds", "port"})
        if (t.get(k)) return error(t.get(k), k, "belongs to kind = \"background\"");
    } else {
      if (out->hosts.size() != 2) return error(t.get("hosts"), "hosts", "a background flow needs [sender, receiver]");
      if (out->nics.size() != 1) return error(&t, "nics", "a background flow needs one NIC, [\"nic\"]");
      for (std::string_view k : {"input", "ranks_per_host", "args", "alone_time_s", "alone_busbw_gbps"})
        if (t.get(k)) return error(t.get(k), k, "belongs to kind = \"replay\"");
      NS_RETURN_IF_ERROR(number(t, "rate_mbit", 0.001, 1e6, &out->rateMbit));
      if (!t.get("rate_mbit")) return error(&t, "rate_mbit", "missing");
      NS_RETURN_IF_ERROR(number(t, "on_ms", 0, 3.6e6, &out->onMs));
      NS_RETURN_IF_ERROR(number(t, "off_ms", 0, 3.6e6, &out->offMs));
      if (out->offMs > 0 && out->onMs <= 0) return error(t.get("off_ms"), "off_ms", "needs on_ms > 0");
      NS_RETURN_IF_ERROR(number(t, "seconds", 0, 3.6e6, &out->seconds));
      double port = 0;
      NS_RETURN_IF_ERROR(number(t, "port", 1024, 65535, &port));
      out->port = static_cast<int>(port);
    }
    return Status::Ok();
  }

  // Two jobs on one host's NIC, unless share_nics = true. Background flows load a link on purpose.
  Status nicOverlap(const JobFile& file, const toml::array& jobs) const {
    if (file.shareNics) return Status::Ok();
    std::map<std::string, std::string> owner;  // "host/nic" -> job
    for (size_t j = 0; j < file.jobs.size(); ++j) {
      const JobSpec& job = file.jobs[j];
      if (job.kind != JobKind::kReplay) continue;
      for (const std::string& h : job.hosts) {
        for (const std::string& nic : job.nics) {
          auto [it, fresh] = owner.emplace(h + "/" + nic, job.name);
          if (!fresh)
            return error(jobs.get(j), "nics",
                         fmt::format("job '{}' uses NIC {} of host {}, as job '{}' does (set "
                                     "share_nics = true to allow)",
                                     job.name, nic, h, it->second));
        }
      }
    }
    return Status::Ok();
  }

  Result<JobFile> read(const std::string& text) const {
    toml::parse_result parsed = toml::parse(text, path_);
    if (!parsed) {
      const toml::parse_error& e = parsed.error();
      return Status(Code::kInvalidArgument, fmt::format("{}:{}:{}: {}", path_, e.source().begin.line,
                                                        e.source().begin.column, e.description()));
    }
    const toml::table& root = parsed.table();
    JobFile file;
    file.path = path_;
    NS_RETURN_IF_ERROR(
        onlyKeys(root, "the top level", {"launcher", "exec", "timeout_s", "launch_s", "share_nics", "hosts", "job"}));
    NS_RETURN_IF_ERROR(strings(root, "launcher", true, &file.launcher));
    NS_RETURN_IF_ERROR(strings(root, "exec", false, &file.exec));
    NS_RETURN_IF_ERROR(number(root, "timeout_s", 1, 86400, &file.timeoutS));
    NS_RETURN_IF_ERROR(number(root, "launch_s", 0, 600, &file.launchS));
    NS_RETURN_IF_ERROR(boolean(root, "share_nics", &file.shareNics));
    const toml::table* hosts = root.get_as<toml::table>("hosts");
    if (!hosts || hosts->empty()) return error(&root, "hosts", "missing: [hosts.NAME] tables with address and nics");
    for (const auto& [name, node] : *hosts) {
      file.hosts.emplace_back();
      NS_RETURN_IF_ERROR(host(std::string(name.str()), node, &file.hosts.back()));
    }
    const toml::array* jobs = root.get_as<toml::array>("job");
    if (!jobs || jobs->empty()) return error(&root, "job", "missing: one [[job]] table or more");
    std::set<std::string> names;
    for (const toml::node& node : *jobs) {
      const toml::table* t = node.as_table();
      if (!t) return error(&node, "job", "must be a table");
      file.jobs.emplace_back();
      NS_RETURN_IF_ERROR(job(*t, file, &file.jobs.back()));
      if (!names.insert(file.jobs.back().name).second)
        return error(t->get("name"), "name", fmt::format("job '{}' twice", file.jobs.back().name));
      if (file.jobs.back().kind == JobKind::kBackground && !file.exec.size())
        return error(&node, "exec", "a background job needs the top-level exec (how to run a command on a host)");
    }
    NS_RETURN_IF_ERROR(nicOverlap(file, *jobs));
    return file;
  }

 private:
  std::string path_;
};

}  // namespace
#endif

const FabricHost* JobFile::host(const std::string& name) const {
  for (const FabricHost& h : hosts)
    if (h.name == name) return &h;
  return nullptr;
}

#ifndef NSHIM_NO_TOMLPLUSPLUS
Result<JobFile> parseJobFile(const std::string& text, const std::string& path) { return Reader(path).read(text); }
#else
Result<JobFile> parseJobFile(const std::string&, const std::string& path) {
  return NS_ERROR(Code::kInvalidUsage,
                  "{}: phynet was built without toml++ (libtomlplusplus-dev): --jobs is unavailable", path);
}
#endif

Result<JobFile> readJobFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NS_ERROR(Code::kInvalidArgument, "{}: cannot open the job file", path);
  std::stringstream text;
  text << in.rdbuf();
  return parseJobFile(text.str(), path);
}

}  // namespace nshim::phynet
