# Sourced by the fault tests: waiting for the forked ranks of a launcher to be busy.

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# wait_for_busy_ranks <launcher pid> <ranks> <CPU ticks each> <seconds>: fills the array `ranks` with
# the launcher's children in fork order (rank 0 first) once there are <ranks> of them and each has
# used that much CPU (past the set-up, inside the collectives), or when the seconds run out.
wait_for_busy_ranks() {
  local launcher=$1 want=$2 ticks=$3 tenths=$(($4 * 10)) busy p
  ranks=()
  for _ in $(seq 1 "$tenths"); do
    sleep 0.1
    mapfile -t ranks < <(pgrep -P "$launcher" | sort -n)
    [ "${#ranks[@]}" -eq "$want" ] || continue
    busy=0
    for p in "${ranks[@]}"; do [ "$(cpu_ticks "$p")" -ge "$ticks" ] && busy=$((busy + 1)); done
    [ "$busy" -eq "$want" ] && return 0
  done
  return 1
}
