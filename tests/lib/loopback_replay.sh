# Sourced by the test scripts that replay on one machine (from the repository root, with $phynet set).
# run <np> <log> <phynet args...>: phynet under mpirun over loopback TCP, bounded to 300 s (or
# $RUN_LIMIT_S); the exit status is mpirun's (124 past the bound), the output goes to <log>.
run() {
  local np=$1 log=$2; shift 2
  timeout "${RUN_LIMIT_S:-300}" mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl self,tcp \
    --mca btl_tcp_if_include lo "$phynet" --ifname lo "$@" >"$log" 2>&1
}
