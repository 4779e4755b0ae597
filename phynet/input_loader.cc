// Input loading: format dispatch, then scale and filters.
#include "phynet/input_loader.h"

#include "workload/aicb_workload.h"
#include "workload/chakra_workload.h"
#include "workload/dp_scale.h"
#include "workload/pytorch_et_workload.h"
#include "workload/simai_workload.h"
#include "workload/trace_workload.h"
#include "workload/workload_options.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {

Result<LoadedInput> loadInput(const ReplayOptions& options, int mpiWorldSize, int onlyRank) {
  LoadedInput loaded;
  NS_ASSIGN_OR_RETURN(loaded.format, resolveFormat(options));
  WorkloadOptions layout;
  layout.iterations = 1;  // the replay repeats; scale is applied below for every format alike
  layout.scale = 1.0;
  layout.worldSize = options.worldSize > 0 ? options.worldSize : mpiWorldSize;
  layout.tp = options.tp;
  layout.ep = options.ep;
  layout.pp = options.pp;
  layout.simai = options.simaiRules;
  layout.onlyRank = onlyRank;
  if ((options.resizeDp > 0 || options.resizeEp > 0) && loaded.format != InputFormat::kTrace) {
    return NS_ERROR(Code::kInvalidArgument,
                    "--resize applies to ncclshim traces (SimAI / AICB workloads take "
                    "--world-size, --tp, --ep, --pp)");
  }
  switch (loaded.format) {
    case InputFormat::kSimAi: {
      NS_ASSIGN_OR_RETURN(loaded.workload, loadSimAiWorkload(options.input, layout));
      break;
    }
    case InputFormat::kAicb: {
      NS_ASSIGN_OR_RETURN(loaded.workload, loadAicbWorkload(options.input, layout));
      break;
    }
    case InputFormat::kChakra: {
      ChakraOptions chakra;
      chakra.commGroupFile = options.commGroupFile;
      chakra.onlyRank = onlyRank;
      NS_ASSIGN_OR_RETURN(loaded.workload, loadChakraWorkload(options.input, chakra));
      break;
    }
    case InputFormat::kPyTorchEt: {
      PyTorchEtOptions pytorch;
      pytorch.onlyRank = onlyRank;
      NS_ASSIGN_OR_RETURN(loaded.workload, loadPyTorchEtWorkload(options.input, pytorch));
      break;
    }
    default: {
      TraceLoadStats stats;
      if (options.resizeDp > 0 || options.resizeEp > 0) {
        ShapeOptions shape;
        shape.tp = options.tp;
        shape.pp = options.pp;
        shape.cp = options.cp;
        NS_ASSIGN_OR_RETURN(loaded.workload, loadResizedTraceWorkload(options.input, options.resizeDp, options.resizeEp,
                                                                      shape, onlyRank, &loaded.notes));
        break;
      }
      NS_ASSIGN_OR_RETURN(loaded.workload, loadTraceWorkload(options.input, &stats, onlyRank));
      if (stats.cutFiles) {
        loaded.notes.push_back(
            fmt::format("{} trace file(s) were cut by a killed process; their complete lines "
                        "are replayed",
                        stats.cutFiles));
      }
      if (stats.droppedRecords) {
        loaded.notes.push_back(
            fmt::format("the recorder lost {} record(s): the validation will tell whether the "
                        "trace is still consistent",
                        stats.droppedRecords));
      }
      if (stats.skippedFailedCalls) {
        loaded.notes.push_back(
            fmt::format("{} call(s) that failed when recorded are not replayed", stats.skippedFailedCalls));
      }
      break;
    }
  }
  scaleWorkload(loaded.workload, options.scale);
  if (!loaded.workload.skipped.empty()) {
    loaded.notes.push_back("rows that move no data are not replayed: " + skippedText(loaded.workload.skipped));
  }
  loaded.filteredOut = filterWorkload(loaded.workload, options.ops, options.groups);
  return loaded;
}

}  // namespace nshim::phynet
