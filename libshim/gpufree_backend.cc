// The GPU-free backend's table (gpufree_backend.h): each entry is ncclshim's own definition.
#include "libshim/gpufree_backend.h"

namespace nshim {

const NcclFunctions& gpufreeBackend() {
  static const NcclFunctions table = [] {
    NcclFunctions functions;
#define NS_GPUFREE_ENTRY(name) functions.nccl##name = &gpufree::nccl##name;
    NS_NCCL_API_FUNCTIONS(NS_GPUFREE_ENTRY)
#undef NS_GPUFREE_ENTRY
    return functions;
  }();
  return table;
}

}  // namespace nshim
