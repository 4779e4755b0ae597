# Sourced by the VM scripts (scripts/soft_roce_vm.sh, tests/multihost/vm_pair.sh): installs what a
# QEMU/TCG soft-RoCE VM run needs when it is missing, and picks the kernel. The caller defines
# skip() (print why and leave without failing). VM_INSTALL=0: only check.

# Everything the VM runs need; installed only when missing. Extra packages may be given.
ensure_vm_tools() {
  local packages=(qemu-system-x86 linux-image-amd64 busybox-static rdma-core ibverbs-utils ibverbs-providers
                  libibverbs-dev perftest iproute2 python3-pip "$@") missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    [ "${VM_INSTALL:-1}" = 1 ] || skip "missing packages: ${missing[*]} (VM_INSTALL=0)"
    echo "vm-tools: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    $sudo apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || skip "could not install ${missing[*]}"
  fi
  if ! command -v vng >/dev/null 2>&1; then
    [ "${VM_INSTALL:-1}" = 1 ] || skip "virtme-ng (vng) is not installed (VM_INSTALL=0)"
    echo "vm-tools: pip install virtme-ng"
    pip install -q virtme-ng >/dev/null 2>&1 || pip3 install -q --break-system-packages virtme-ng >/dev/null 2>&1 ||
      skip "could not pip install virtme-ng"
    hash -r
    command -v vng >/dev/null 2>&1 || skip "vng not on PATH after pip install virtme-ng"
  fi
}

# The newest installed kernel that ships rdma_rxe (VM_KERNEL overrides).
pick_vm_kernel() {
  if [ -n "${VM_KERNEL:-}" ]; then echo "$VM_KERNEL"; return; fi
  local image version
  for image in $(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V -r); do
    version=${image#/boot/vmlinuz-}
    if ls /lib/modules/"$version"/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko* >/dev/null 2>&1; then
      echo "$image"
      return
    fi
  done
}
