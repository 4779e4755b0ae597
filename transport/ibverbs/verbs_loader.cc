// dlopen of libibverbs and the symbol table of VerbsApi. A missing library or symbol is an error
// naming the file and what to install, returned to whoever chose the ibverbs transport.
#include "transport/ibverbs/verbs_loader.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>

#include "common/log.h"
#include "common/settings.h"

namespace nshim {
namespace {

struct Loaded {
  VerbsApi api;
  Status status;
};

template <typename Fn>
bool bind(void* handle, const char* symbol, Fn* out, std::string* missing) {
  void* address = dlsym(handle, symbol);
  *out = reinterpret_cast<Fn>(address);
  if (address == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + symbol;
  return address != nullptr;
}

Loaded load() {
  Loaded loaded;
  std::string file = settingString(Setting::NCCLSHIM_IB_LIBRARY);
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.status = NS_ERROR(Code::kSystemError,
                             "the ibverbs transport needs {} but it could not be loaded ({}): install rdma-core's "
                             "libibverbs1 and a provider package (ibverbs-providers), or use the TCP transport",
                             file, why ? why : "unknown error");
    return loaded;
  }
  VerbsApi& api = loaded.api;
  std::string missing;
  bind(handle, "ibv_get_device_list", &api.getDeviceList, &missing);
  bind(handle, "ibv_free_device_list", &api.freeDeviceList, &missing);
  bind(handle, "ibv_get_device_name", &api.getDeviceName, &missing);
  bind(handle, "ibv_open_device", &api.openDevice, &missing);
  bind(handle, "ibv_close_device", &api.closeDevice, &missing);
  bind(handle, "ibv_query_device", &api.queryDevice, &missing);
  bind(handle, "ibv_query_port", &api.queryPortCompat, &missing);
  bind(handle, "ibv_query_gid", &api.queryGid, &missing);
  bind(handle, "ibv_alloc_pd", &api.allocPd, &missing);
  bind(handle, "ibv_dealloc_pd", &api.deallocPd, &missing);
  bind(handle, "ibv_reg_mr", &api.regMr, &missing);
  bind(handle, "ibv_dereg_mr", &api.deregMr, &missing);
  bind(handle, "ibv_create_comp_channel", &api.createCompChannel, &missing);
  bind(handle, "ibv_destroy_comp_channel", &api.destroyCompChannel, &missing);
  bind(handle, "ibv_create_cq", &api.createCq, &missing);
  bind(handle, "ibv_destroy_cq", &api.destroyCq, &missing);
  bind(handle, "ibv_get_cq_event", &api.getCqEvent, &missing);
  bind(handle, "ibv_ack_cq_events", &api.ackCqEvents, &missing);
  bind(handle, "ibv_create_qp", &api.createQp, &missing);
  bind(handle, "ibv_modify_qp", &api.modifyQp, &missing);
  bind(handle, "ibv_destroy_qp", &api.destroyQp, &missing);
  bind(handle, "ibv_wc_status_str", &api.wcStatusStr, &missing);
  bind(handle, "ibv_port_state_str", &api.portStateStr, &missing);
  if (!missing.empty()) {
    loaded.status =
        NS_ERROR(Code::kSystemError, "{} lacks the symbols {}: it is too old or not libibverbs", file, missing);
    return loaded;
  }
  std::string optional;
  bind(handle, "_ibv_query_gid_ex", &api.queryGidEx, &optional);  // absent before rdma-core 31
  NS_INFO("loaded {}{}", file, api.queryGidEx ? "" : " (without ibv_query_gid_ex: GID types from sysfs)");
  return loaded;
}

}  // namespace

int VerbsApi::queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const {
  verbs_context* extended = verbs_get_ctx_op(context, query_port);
  if (extended != nullptr) return extended->query_port(context, port, attr, sizeof(*attr));
  std::memset(attr, 0, sizeof(*attr));
  return queryPortCompat(context, port, attr);
}

Result<const VerbsApi*> loadVerbs() {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // never freed: the library stays loaded for the process
  std::call_once(once, [] { loaded = new Loaded(load()); });
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

}  // namespace nshim
