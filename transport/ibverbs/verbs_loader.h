// libibverbs, loaded at run time: dlopen("libibverbs.so.1") the first time the ibverbs transport is
// chosen, so that nothing in ncclshim links against it (libncclshim.so loads on hosts without
// rdma-core). The table holds the exported verbs functions the transport calls; the data-path verbs
// (ibv_post_send, ibv_post_recv, ibv_poll_cq, ibv_req_notify_cq) are inline in <infiniband/verbs.h>
// and call the provider through the context's ops, so they need no symbol. Only the ibverbs files
// of transport/ include this header.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "common/status.h"

namespace nshim {

struct VerbsApi {
  ibv_device** (*getDeviceList)(int* count) = nullptr;
  void (*freeDeviceList)(ibv_device** list) = nullptr;
  const char* (*getDeviceName)(ibv_device* device) = nullptr;
  ibv_context* (*openDevice)(ibv_device* device) = nullptr;
  int (*closeDevice)(ibv_context* context) = nullptr;
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr) = nullptr;
  // The exported ibv_query_port takes the old, shorter attribute struct; see queryPort() below.
  int (*queryPortCompat)(ibv_context* context, uint8_t port, ibv_port_attr* attr) = nullptr;
  int (*queryGid)(ibv_context* context, uint8_t port, int index, ibv_gid* gid) = nullptr;
  // rdma-core >= 31; null on older libraries (the GID type then comes from sysfs).
  int (*queryGidEx)(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry, uint32_t flags,
                    size_t entrySize) = nullptr;
  ibv_pd* (*allocPd)(ibv_context* context) = nullptr;
  int (*deallocPd)(ibv_pd* pd) = nullptr;
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access) = nullptr;
  int (*deregMr)(ibv_mr* mr) = nullptr;
  ibv_comp_channel* (*createCompChannel)(ibv_context* context) = nullptr;
  int (*destroyCompChannel)(ibv_comp_channel* channel) = nullptr;
  ibv_cq* (*createCq)(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel,
                      int compVector) = nullptr;
  int (*destroyCq)(ibv_cq* cq) = nullptr;
  int (*getCqEvent)(ibv_comp_channel* channel, ibv_cq** cq, void** cqContext) = nullptr;
  void (*ackCqEvents)(ibv_cq* cq, unsigned int count) = nullptr;
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr) = nullptr;
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int mask) = nullptr;
  int (*destroyQp)(ibv_qp* qp) = nullptr;
  const char* (*wcStatusStr)(ibv_wc_status status) = nullptr;
  const char* (*portStateStr)(ibv_port_state state) = nullptr;

  // ibv_query_port as <infiniband/verbs.h> does it: the provider's extended query when the context
  // has one, else the exported compat symbol on a zeroed attribute struct.
  int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const;
};

// Loads libibverbs once per process (NCCLSHIM_IB_LIBRARY overrides the file name) and returns the
// table, or an error that says what to install. Thread-safe; the library is never unloaded.
Result<const VerbsApi*> loadVerbs();

}  // namespace nshim
