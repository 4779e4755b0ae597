// phynet report CSV -> ReportRow: header by name, then typed fields.
#include "tools/inspect/report_reader.h"

#include <charconv>
#include <cmath>
#include <map>

#include "workload/rank_layout.h"

namespace nshim::tools {
namespace {

std::vector<std::string_view> splitComma(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (true) {
    size_t comma = line.find(',', pos);
    fields.push_back(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return fields;
}

class RowParser {
 public:
  RowParser(const std::string& name, int line, const std::map<std::string, size_t>& columns,
            const std::vector<std::string_view>& fields)
      : name_(name), line_(line), columns_(columns), fields_(fields) {}

  // The field of `column` ("" when the file has no such column).
  std::string_view text(const char* column) const {
    auto it = columns_.find(column);
    return it == columns_.end() ? std::string_view() : fields_[it->second];
  }
  Status error(const char* column, std::string_view what) const {
    return NS_ERROR(Code::kInvalidArgument, "{}:{}: {}: {} {}", name_, line_, column, workload::quoted(text(column)),
                    what);
  }
  Status integer(const char* column, int64_t* out) const {
    if (!workload::parseInt(text(column), out)) return error(column, "is not an integer");
    return Status::Ok();
  }
  Status unsignedInt(const char* column, uint64_t* out) const {
    std::string_view t = text(column);
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return error(column, "is not a count");
    return Status::Ok();
  }
  Status hex(const char* column, uint64_t* out) const {
    std::string_view t = text(column);
    if (t.substr(0, 2) == "0x") t.remove_prefix(2);
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *out, 16);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return error(column, "is not a hex id");
    return Status::Ok();
  }
  // A number >= 0; empty means unknown (-1) when `optional`.
  Status number(const char* column, bool optional, double* out) const {
    std::string_view t = text(column);
    if (t.empty() && optional) {
      *out = -1;
      return Status::Ok();
    }
    if (!workload::parseNonNegative(t, out)) return error(column, "is not a number >= 0");
    return Status::Ok();
  }

 private:
  const std::string& name_;
  int line_;
  const std::map<std::string, size_t>& columns_;
  const std::vector<std::string_view>& fields_;
};

Result<ReportRow> parseRow(const RowParser& p, int line) {
  ReportRow row;
  row.line = line;
  row.op = std::string(p.text("op"));
  row.group = std::string(p.text("group"));
  row.type = std::string(p.text("type"));
  int64_t value = 0;
  NS_RETURN_IF_ERROR(p.hex("comm", &row.comm));
  NS_RETURN_IF_ERROR(p.integer("nranks", &value));
  row.nranks = static_cast<int>(value);
  NS_RETURN_IF_ERROR(p.integer("iteration", &value));
  row.iteration = static_cast<int>(value);
  NS_RETURN_IF_ERROR(p.unsignedInt("seq", &row.seq));
  NS_RETURN_IF_ERROR(p.unsignedInt("count", &row.count));
  NS_RETURN_IF_ERROR(p.unsignedInt("bytes", &row.bytes));
  NS_RETURN_IF_ERROR(p.number("time_us", false, &row.timeUs));
  NS_RETURN_IF_ERROR(p.number("busbw_gbps", false, &row.busbw));
  NS_RETURN_IF_ERROR(p.number("algbw_gbps", true, &row.algbw));
  NS_RETURN_IF_ERROR(p.number("recorded_us", true, &row.recordedUs));
  std::string_view peers = p.text("peers");
  if (!peers.empty()) {
    size_t arrow = peers.find("->");
    int64_t a = 0, b = 0;
    if (arrow == std::string_view::npos || !workload::parseInt(peers.substr(0, arrow), &a) ||
        !workload::parseInt(peers.substr(arrow + 2), &b)) {
      return p.error("peers", "is not 'sender->receiver'");
    }
    row.sender = static_cast<int>(a);
    row.receiver = static_cast<int>(b);
  }
  return row;
}

}  // namespace

Result<ReplayReportCsv> parseReportCsv(std::string_view text, const std::string& name) {
  ReplayReportCsv report;
  report.path = name;
  std::map<std::string, size_t> columns;
  for (const workload::TextLine& line : workload::splitLines(text)) {
    if (workload::isBlank(line.text)) continue;
    std::vector<std::string_view> fields = splitComma(line.text);
    if (columns.empty()) {
      if (line.text.substr(0, kReportCsvHeaderStart.size()) != kReportCsvHeaderStart) {
        return NS_ERROR(Code::kInvalidArgument, "{}:{}: not a phynet report CSV (the header starts with '{}')", name,
                        line.number, kReportCsvHeaderStart);
      }
      for (size_t i = 0; i < fields.size(); ++i) columns[std::string(fields[i])] = i;
      for (const char* required :
           {"op", "group", "comm", "nranks", "iteration", "seq", "count", "type", "bytes", "time_us", "busbw_gbps"}) {
        if (!columns.count(required)) {
          return NS_ERROR(Code::kInvalidArgument, "{}:{}: {}: missing column", name, line.number, required);
        }
      }
      continue;
    }
    if (fields.size() != columns.size()) {
      return NS_ERROR(Code::kInvalidArgument, "{}:{}: expected {} columns, found {}{}", name, line.number,
                      columns.size(), fields.size(), line.terminated ? "" : " (file cut?)");
    }
    RowParser parser(name, line.number, columns, fields);
    NS_ASSIGN_OR_RETURN(ReportRow row, parseRow(parser, line.number));
    report.rows.push_back(std::move(row));
  }
  if (columns.empty()) return NS_ERROR(Code::kInvalidArgument, "{}: empty file, not a phynet report CSV", name);
  return report;
}

Result<ReplayReportCsv> readReportCsv(const std::string& path) {
  NS_ASSIGN_OR_RETURN(std::string text, workload::readTextFile(path));
  return parseReportCsv(text, path);
}

}  // namespace nshim::tools
