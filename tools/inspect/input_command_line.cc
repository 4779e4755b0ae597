// The file commands' input options (input_command_line.h).
#include "tools/inspect/input_command_line.h"

#include <tuple>

#include "common/command_line.h"
#include "workload/input_format.h"
#include "workload/workload_options.h"

namespace nshim::tools {

void addInputOptions(CLI::App& app, InputOptions* options) {
  const std::string group = "input options";
  addValueOption(
      app, "--from", "KIND",
      [options](const std::string& value) {
        workload::InputFormat format;
        if (value != "report" && !workload::parseInputFormat(value, &format)) {
          refuseValue(fmt::format("--from: '{}' is not one of {}, report", value, workload::inputFormatChoices()));
        }
        options->format = value;
      },
      "the input's format: auto (default), trace, simai, aicb, report, chakra, pytorch-et")
      ->group(group);
  addValueOption(
      app, "--comm-group", "FILE", [options](const std::string& value) { options->commGroupFile = value; },
      "Chakra: ASTRA-sim's comm-group JSON (default: comm_group.json beside the files)")
      ->group(group);
  const std::tuple<const char*, int*, const char*> layout[] = {
      {"--world-size", &options->worldSize, "SimAI / AICB: ranks in the job (default: from the file)"},
      {"--tp", &options->tp, "SimAI / AICB: tensor-parallel size (default: from the file), as phynet's"},
      {"--ep", &options->ep, "SimAI / AICB: expert-parallel size (default: from the file), as phynet's"},
      {"--pp", &options->pp, "SimAI / AICB: pipeline-parallel size (default: from the file), as phynet's"}};
  for (auto [name, target, help] : layout) {
    const std::string flag = name;
    addValueOption(
        app, flag, "N",
        [flag, target](const std::string& value) {
          int64_t number = 0;
          if (!parseCount(value, &number) || number < 1 || number > (1 << 24)) {
            refuseValue(fmt::format("{}: '{}' is not a positive integer", flag, value));
          }
          *target = static_cast<int>(number);
        },
        help)
        ->group(group);
  }
  addValueOption(
      app, "--simai-rules", "LIST",
      [options](const std::string& value) {
        std::string problem;
        if (!workload::parseSimAiRules(value, &options->simaiRules, &problem)) refuseValue("--simai-rules: " + problem);
      },
      "the rules to follow (all; none; or a list of min-fwd-4096, micro-first-layer,\n"
      "no-broadcast, pp-per-microbatch; default SimAI's own: the first three), as\n"
      "phynet's option")
      ->group(group);
}

}  // namespace nshim::tools
