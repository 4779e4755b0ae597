// The host and NIC sections of phynet's report: text tables after the per-rank counts, and the
// JSON members "nics" and "host_pairs" plus each rank's endpoint and per-peer bytes.
#pragma once

#include <cstdio>
#include <string>

#include "phynet/report.h"

namespace nshim::phynet {

// Per (host, NIC) and per host pair, at most `maxRows` lines each (all are in the JSON).
void printHostTraffic(FILE* out, const ReplayReport& report, int maxRows);

// ,"host":..,"host_id":..,"local_rank":..,"nic":..,"address":..,"port":..,"gid":..,"peer_bytes":[..]
// for rank `rank` ("" when the endpoints are unknown).
std::string rankEndpointJson(const ReplayReport& report, int rank);

// ,"hosts":N,"nics":[..],"host_pairs":[..] ("" when the endpoints are unknown).
std::string hostTrafficJson(const ReplayReport& report);

}  // namespace nshim::phynet
