#!/usr/bin/env bash
# A multi-host test bed on one machine: N "hosts" as network namespaces, each with a management NIC
# (eth0, 10.99.0.K/24 on bridge nsbed-mgmt, for MPI and its launch) and R fabric NICs, one per
# rail (r0, r1, ...: 10.100.K.(i+1)/16 on bridge nsbed-fab). Each fabric NIC answers ARP only for its
# own address and sends what is bound to its address out of itself (policy routing, as on a real
# multi-NIC host), so a rank bound to its NIC's address puts its flows on that NIC's veth and the
# kernel counters of each veth count what crossed it. IPv6 is off in the namespaces so that no
# neighbour discovery adds to the counters. mpirun reaches a host through `agent` (an rsh agent
# that enters the namespace; hosts are named by their management address 10.99.0.K).
#
#   netns_bed.sh up HOSTS RAILS      create (after removing any leftover bed)
#   netns_bed.sh down                remove everything
#   netns_bed.sh agent HOST CMD...   run CMD in HOST's namespace (Open MPI's plm_rsh_agent)
#   netns_bed.sh counters            "host nic tx_bytes rx_bytes" of every fabric NIC, as the host sees it
set -euo pipefail
PREFIX=nsbed
MGMT_BR=${PREFIX}-mgmt
FAB_BR=${PREFIX}-fab

host_ns() { echo "${PREFIX}$1"; }          # namespace of host K
host_of_address() { echo "${1##*.}"; }     # 10.99.0.K -> K

down() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${PREFIX}[0-9]" || true); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$MGMT_BR" 2>/dev/null || true
  ip link del "$FAB_BR" 2>/dev/null || true
  # A deleted namespace's veths go away asynchronously; a quick `up` after `down` would find them.
  local link
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^${PREFIX}[0-9]" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  rm -rf /tmp/nsbed-session
}

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

up() {
  local hosts=$1 rails=$2 k i ns
  down
  ip link add "$MGMT_BR" type bridge && ip addr add 10.99.0.254/24 dev "$MGMT_BR" && ip link set "$MGMT_BR" up
  ip link add "$FAB_BR" type bridge && ip link set "$FAB_BR" up
  # The bridges only switch: a host firewall on bridged frames would otherwise see them.
  sysctl -qw net.bridge.bridge-nf-call-iptables=0 2>/dev/null || true
  for ((k = 1; k <= hosts; k++)); do
    ns=$(host_ns "$k")
    ip netns add "$ns"
    in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
      net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.all.rp_filter=0 \
      net.ipv4.conf.default.rp_filter=0
    in_ns "$ns" ip link set lo up
    ip link add "${PREFIX}${k}m" type veth peer name eth0 netns "$ns"
    ip link set "${PREFIX}${k}m" master "$MGMT_BR" up
    in_ns "$ns" ip addr add "10.99.0.$k/24" dev eth0
    in_ns "$ns" ip link set eth0 up
    for ((i = 0; i < rails; i++)); do
      local nic="r$i" address="10.100.$k.$((i + 1))"
      ip link add "${PREFIX}${k}r$i" type veth peer name "$nic" netns "$ns"
      ip link set "${PREFIX}${k}r$i" master "$FAB_BR" up
      in_ns "$ns" sysctl -qw "net.ipv4.conf.$nic.rp_filter=0"
      in_ns "$ns" ip addr add "$address/16" dev "$nic"
      in_ns "$ns" ip link set "$nic" up
      in_ns "$ns" ip rule add from "$address" table $((100 + i))
      in_ns "$ns" ip route add 10.100.0.0/16 dev "$nic" src "$address" table $((100 + i))
    done
  done
}

agent() {
  # Open MPI calls: agent [options...] HOST COMMAND...; options it may pass are ignored.
  while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
  local host=$1; shift
  local ns; ns=$(host_ns "$(host_of_address "$host")")
  # The namespaces share one filesystem and hostname: each host's daemon gets its own session
  # directory, or the daemons race on one /tmp/ompi.<hostname> (a daemon's mkdir failing, hwloc's
  # shared topology file written by two daemons at once: orted segfaults, 2 of 40 launches here).
  mkdir -p "/tmp/nsbed-session/$ns"
  OMPI_MCA_orte_tmpdir_base="/tmp/nsbed-session/$ns" exec ip netns exec "$ns" /bin/sh -c "$*"
}

counters() {
  local link host nic
  for link in /sys/class/net/${PREFIX}[0-9]*r[0-9]*; do
    link=$(basename "$link")
    host=${link#"$PREFIX"}; host=${host%%r*}; nic=r${link##*r}
    # The host-side end of the veth: what it receives the namespace sent, and the reverse.
    echo "$host $nic $(cat "/sys/class/net/$link/statistics/rx_bytes") $(cat "/sys/class/net/$link/statistics/tx_bytes")"
  done
}

case "${1:-}" in
  up) up "$2" "$3" ;;
  down) down ;;
  agent) shift; agent "$@" ;;
  counters) counters ;;
  *) echo "usage: $0 up HOSTS RAILS | down | agent HOST CMD... | counters" >&2; exit 2 ;;
esac
