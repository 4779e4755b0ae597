// The RDMA background flow of phynet_flow (job key transport = "rdma"): a sender that posts paced
// RDMA writes over an RC QP into the sink's registered buffer, on the RDMA device whose RoCE v2 GID
// holds each side's NIC address. The QP records and the final byte count travel over a TCP side
// channel on the flow's port. Every error ends the flow with one line naming the device and host.
#pragma once

#include <csignal>
#include <string>

namespace nshim::phynet {

int rdmaSink(const std::string& address, int port, const volatile std::sig_atomic_t& stop);
int rdmaSend(const std::string& from, const std::string& toAddress, int port, double mbit, double onMs, double offMs,
             double seconds, double startAtWallS, const volatile std::sig_atomic_t& stop);

}  // namespace nshim::phynet
