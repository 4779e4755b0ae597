// RAII owners of the verbs objects the ibverbs transport creates (device list, context, protection
// domain, memory region, completion channel, completion queue, queue pair). Each is a unique_ptr
// with a non-throwing deleter that calls the matching destroy verb through the loaded library and
// logs a failure instead of throwing. Members declared in creation order are destroyed in reverse,
// which is the order verbs require (QPs, then CQs, then the channel, MRs, PD, and the context last).
#pragma once

#include <memory>

#include "transport/ibverbs/verbs_loader.h"

namespace nshim {

// The loaded library (deleters only run on objects made through it, so it is there).
const VerbsApi& verbsApi();

namespace verbs_detail {
void destroyFailed(const char* what, int rc);
}  // namespace verbs_detail

#define NSHIM_VERBS_DELETER(Name, Type, call, what)       \
  struct Name {                                           \
    void operator()(Type* object) const noexcept {        \
      if (object == nullptr) return;                      \
      int rc = verbsApi().call(object);                   \
      if (rc != 0) verbs_detail::destroyFailed(what, rc); \
    }                                                     \
  }

NSHIM_VERBS_DELETER(ContextDeleter, ibv_context, closeDevice, "ibv_close_device");
NSHIM_VERBS_DELETER(PdDeleter, ibv_pd, deallocPd, "ibv_dealloc_pd");
NSHIM_VERBS_DELETER(MrDeleter, ibv_mr, deregMr, "ibv_dereg_mr");
NSHIM_VERBS_DELETER(ChannelDeleter, ibv_comp_channel, destroyCompChannel, "ibv_destroy_comp_channel");
NSHIM_VERBS_DELETER(CqDeleter, ibv_cq, destroyCq, "ibv_destroy_cq");
NSHIM_VERBS_DELETER(QpDeleter, ibv_qp, destroyQp, "ibv_destroy_qp");
#undef NSHIM_VERBS_DELETER

struct DeviceListDeleter {
  void operator()(ibv_device** list) const noexcept {
    if (list != nullptr) verbsApi().freeDeviceList(list);
  }
};

using DeviceListPtr = std::unique_ptr<ibv_device*, DeviceListDeleter>;
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using ChannelPtr = std::unique_ptr<ibv_comp_channel, ChannelDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;

// Page-aligned, zeroed host memory for registration (mmap'd, so it is never shared with the heap);
// munmap on destruction.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  static Result<PinnedBuffer> allocate(size_t bytes);
  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nshim
