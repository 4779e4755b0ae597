#!/usr/bin/env bash
# Two hosts with real RoCEv2 between them: two QEMU/TCG VMs (virtme-ng), each with its own kernel,
# its own virtio NIC per rail (r0, r1, ...) with soft-RoCE on it (rxe0 on r0, rxe1 on r1; MTU 4500,
# so the RoCE path MTU is 4096) and its own addresses (rail i: 10.88.i.1 in VM A, 10.88.i.2 in VM B),
# rail i of A joined to rail i of B by a QEMU UDP socket link: like a switch port, it drops frames
# for a VM that stopped reading instead of stalling the sender (a stream link would back up into the
# live VM's virtio queue, and its rxe then spins on the full queue and freezes it). Each VM runs
# sshd with keys made for this run, so mpirun on VM A starts ranks on VM B the way users launch
# across hosts (ssh). QEMU's filter-dump records every frame of each rail on the host:
# RUN_DIR/rail<i>.pcap.
#
# Usage: vm_pair.sh [--rails N] [--] COMMAND...
#   COMMAND runs as root on VM A, in the repository root, once VM B answers ssh, with in its
#   environment VM_PAIR_DIR (the run folder, writable in both VMs), VM_PAIR_SSH (the rsh agent for
#   mpirun: "ssh -F <config>") and VM_PAIR_RAILS. Exit status: COMMAND's; 124 when it did not finish.
#   COMMAND can freeze VM B mid-run (a host that hangs or loses its link): it creates
#   $VM_PAIR_DIR/stop-b and the host sends SIGSTOP to B's QEMU.
# Environment: VM_PAIR_LINK [udp]: stream joins the rails by TCP instead: no frame lost between two
#   running VMs (benchmarks), but freezing B then freezes A too. VM_PAIR_CAPTURE [1]: 0 records no pcap.
#   VM_PAIR_DIR [build/vm-pair]  VM_TIMEOUT [900]  VM_MEMORY [1G]  VM_INSTALL as in
#   scripts/vm_tools.sh. When the VMs cannot be had it prints SKIPPED and
#   '0 passed, 0 failed, 1 skipped' and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
RAILS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rails) RAILS=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--rails N] [--] COMMAND..." >&2; exit 2; }
DIR=${VM_PAIR_DIR:-$ROOT/build/vm-pair}
VM_TIMEOUT=${VM_TIMEOUT:-900}
VM_MEMORY=${VM_MEMORY:-1G}
LINK=${VM_PAIR_LINK:-udp}
CAPTURE=${VM_PAIR_CAPTURE:-1}
case "$LINK" in udp|stream) ;; *) echo "vm_pair.sh: VM_PAIR_LINK must be udp or stream, not '$LINK'" >&2; exit 2 ;; esac
B_MATCH="qemu-system.*mac=52:54:00:aa:00:02"  # VM B's QEMU

skip() {
  echo "SKIPPED: two-VM RoCE bed unavailable: $*"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
}
source "$ROOT/scripts/vm_tools.sh"  # ensure_vm_tools, pick_vm_kernel
ensure_vm_tools openssh-server
KERNEL=$(pick_vm_kernel)
[ -n "$KERNEL" ] && [ -r "$KERNEL" ] || skip "no kernel image with rdma_rxe in /boot"
[ -x /usr/sbin/sshd ] || skip "sshd is missing (openssh-server)"
[ -n "$DIR" ] && [ "$DIR" != "/" ] || skip "bad VM_PAIR_DIR '$DIR'"
rm -rf "$DIR" && mkdir -p "$DIR" || skip "cannot create $DIR"
DIR=$(cd "$DIR" && pwd)

# ---- keys and ssh configuration made for this run
ssh-keygen -q -t ed25519 -N "" -f "$DIR/host_key" && ssh-keygen -q -t ed25519 -N "" -f "$DIR/id" ||
  skip "ssh-keygen failed"
cp "$DIR/id.pub" "$DIR/authorized_keys"
printf '%s\n' "ListenAddress 0.0.0.0" "HostKey $DIR/host_key" "PermitRootLogin prohibit-password" \
  "PubkeyAuthentication yes" "PasswordAuthentication no" "AuthorizedKeysFile $DIR/authorized_keys" \
  "StrictModes no" "UsePAM yes" >"$DIR/sshd_config"
printf '%s\n' "Host *" "  IdentityFile $DIR/id" "  StrictHostKeyChecking no" "  UserKnownHostsFile /dev/null" \
  "  LogLevel ERROR" "  BatchMode yes" "  ConnectTimeout 10" >"$DIR/ssh_config"

free_port() {  # a UDP port free on 127.0.0.1 now
  python3 -c 'import socket; s=socket.socket(type=socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
qemu_a="" qemu_b=""
for ((i = 0; i < RAILS; i++)); do
  port_a=$(free_port) port_b=$(free_port)
  if [ "$LINK" = stream ]; then
    link_a="listen=127.0.0.1:$port_a" link_b="connect=127.0.0.1:$port_a"
  else
    link_a="udp=127.0.0.1:$port_b,localaddr=127.0.0.1:$port_a" link_b="udp=127.0.0.1:$port_a,localaddr=127.0.0.1:$port_b"
  fi
  qemu_a+=" -netdev socket,id=n$i,$link_a -device virtio-net-pci,netdev=n$i,mac=52:54:00:aa:0$i:01"
  [ "$CAPTURE" = 1 ] && qemu_a+=" -object filter-dump,id=f$i,netdev=n$i,file=$DIR/rail$i.pcap"
  qemu_b+=" -netdev socket,id=n$i,$link_b -device virtio-net-pci,netdev=n$i,mac=52:54:00:aa:0$i:02"
done

printf -v COMMAND '%q ' "$@"
# The set-up both VMs run: rails named r<i> by MAC, addresses, rxe<i> on r<i>, sshd.
write_inner() {  # write_inner <a|b> <index 1|2>
  local vm=$1 index=$2 f="$DIR/inner_$1.sh"
  {
    echo '#!/bin/bash'
    echo "exec >'$DIR/vm_$vm.log' 2>&1"
    echo 'read -r uptime _ </proc/uptime'
    echo "echo \"vm $vm: kernel \$(uname -r), booted in \${uptime} s\" | tee '$DIR/started_$vm'"
    echo "fail() { echo \"vm $vm: setup failed: \$*\"; echo 97 >'$DIR/rc_$vm'; sync; exit 97; }"
    echo 'modprobe rdma_rxe || fail "modprobe rdma_rxe"'
    echo 'ip link set lo up'
    echo "for ((i = 0; i < $RAILS; i++)); do"
    echo "  nic=\$(ip -o link | awk -v mac=\"52:54:00:aa:0\$i:0$index\" '\$0 ~ mac { sub(/:\$/, \"\", \$2); print \$2 }')"
    echo "  [ -n \"\$nic\" ] || fail \"no NIC with MAC 52:54:00:aa:0\$i:0$index\""
    echo '  ip link set "$nic" name "r$i" || fail "rename $nic"'
    echo '  ip link set "r$i" mtu 4500 up || fail "r$i up"'
    echo "  ip addr add \"10.88.\$i.$index/24\" dev \"r\$i\" || fail \"address on r\$i\""
    echo '  rdma link add "rxe$i" type rxe netdev "r$i" || fail "rdma link add rxe$i"'
    echo 'done'
    echo "for ((i = 0; i < $RAILS; i++)); do"
    echo '  for t in $(seq 1 100); do ibv_devinfo -d "rxe$i" 2>/dev/null | grep -q PORT_ACTIVE && break; sleep 0.1; done'
    echo "  ibv_devinfo -d \"rxe\$i\" | grep -E 'hca_id|state|active_mtu' | sed 's/^/vm $vm: /'"
    echo 'done'
    echo 'ulimit -l unlimited'
    echo 'mkdir -p /run/sshd'
    echo "/usr/sbin/sshd -f '$DIR/sshd_config' -E '$DIR/sshd_$vm.log' || fail sshd"
    echo "echo \"vm $vm: ready: \$(ip -br addr | grep '^r' | tr '\n' ' ')\""
  } >"$f"
}
write_inner a 1
write_inner b 2
{
  echo "touch '$DIR/ready_b'"
  echo 'sleep 100000'
} >>"$DIR/inner_b.sh"
{
  echo "for t in \$(seq 1 240); do ssh -F '$DIR/ssh_config' 10.88.0.2 true 2>/dev/null && break; sleep 0.5; done"
  echo "ssh -F '$DIR/ssh_config' 10.88.0.2 true || fail 'VM B does not answer ssh on 10.88.0.2'"
  echo 'echo "vm a: VM B answers ssh"'
  echo "export VM_PAIR_DIR='$DIR' VM_PAIR_SSH='ssh -F $DIR/ssh_config' VM_PAIR_RAILS=$RAILS"
  echo "cd '$ROOT'"
  echo "echo 'vm a: running: $COMMAND'"
  echo 'start=$EPOCHREALTIME'
  echo "$COMMAND"
  echo 'rc=$?'
  echo "echo \"vm a: command exited \$rc after \$(awk -v a=\"\$start\" -v b=\"\$EPOCHREALTIME\" 'BEGIN { printf \"%.1f\", b - a }') s\""
  echo "echo \$rc >'$DIR/rc_a'"
  echo 'sync'
} >>"$DIR/inner_a.sh"
chmod +x "$DIR"/inner_*.sh

env_args=()
while IFS='=' read -r name _; do
  case "$name" in NCCLSHIM_*|BENCH_*) env_args+=("$(printf '%q' "$name=${!name}")") ;; esac
done < <(env)
boot() {  # boot <a|b> <qemu options>
  timeout --kill-after=10 "$VM_TIMEOUT" vng --disable-kvm --cpus 1 --memory "$VM_MEMORY" --run "$KERNEL" \
    --user root --rwdir "$DIR" --qemu-opts="$2" --exec "env ${env_args[*]} $DIR/inner_$1.sh" \
    </dev/null >"$DIR/console_$1.log" 2>&1
}
echo "vm-pair: booting two VMs ($(basename "$KERNEL"), TCG, $RAILS rail(s)); logs in $DIR"
start=$SECONDS
boot a "$qemu_a" &
pid_a=$!
[ "$LINK" = stream ] && sleep 2  # A listens on the rails' sockets; B connects to them
boot b "$qemu_b" &
pid_b=$!
# Freeze B when A's command asks for it.
(
  while kill -0 "$pid_a" 2>/dev/null; do
    if [ -f "$DIR/stop-b" ]; then
      pkill -STOP -f "$B_MATCH" && echo "vm-pair: VM B stopped (SIGSTOP) at $(date +%T)" >>"$DIR/host.log"
      rm -f "$DIR/stop-b"
    fi
    sleep 0.2
  done
) &
watcher=$!
wait "$pid_a"
vm_rc=$?
pkill -CONT -f "$B_MATCH" 2>/dev/null
pkill -KILL -f "$B_MATCH" 2>/dev/null
wait "$pid_b" 2>/dev/null
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
elapsed=$((SECONDS - start))
if [ ! -f "$DIR/started_a" ] || [ ! -f "$DIR/started_b" ]; then
  for vm in a b; do echo "---- VM $vm console (last lines)"; tail -n 15 "$DIR/console_$vm.log"; done
  skip "a VM did not start (vng exit $vm_rc after ${elapsed} s)"
fi
for vm in b a; do
  echo "---- VM $vm log"
  cat "$DIR/vm_$vm.log"
done
[ -f "$DIR/host.log" ] && cat "$DIR/host.log"
echo "---- end of VM logs"
if [ ! -f "$DIR/rc_a" ]; then
  echo "vm-pair: the command did not finish (vng exit $vm_rc after ${elapsed} s; VM_TIMEOUT=$VM_TIMEOUT)"
  exit 124
fi
rc=$(cat "$DIR/rc_a")
echo "vm-pair: round trip ${elapsed} s, command exit $rc"
exit "$rc"
