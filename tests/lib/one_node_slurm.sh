# Sourced by tests that launch under Slurm: a one-node Slurm (Debian's slurm-wlm: slurmctld and
# slurmd in the foreground of this script, auth/none, state and logs in a private folder) that
# offers SLURM_TEST_CPUS task slots on this host whatever its core count.
#   slurm_start <dir>   writes <dir>/slurm.conf, starts both daemons, waits until the node is idle;
#                       exports SLURM_CONF; returns non-zero (with the daemons' logs) if it is not
#   slurm_stop          stops them (also run at exit by the caller's trap)
slurm_pids=()

slurm_start() {
  local dir=$1 host i
  host=$(hostname -s)
  mkdir -p -m 0700 "$dir/state" "$dir/spool"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=ncclshim-test
SlurmctldHost=$host
SlurmctldPort=${SLURM_TEST_PORT:-16817}
SlurmdPort=$(( ${SLURM_TEST_PORT:-16817} + 1 ))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host CPUs=${SLURM_TEST_CPUS:-8} State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
  chmod 0600 "$dir/slurm.conf"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
  slurm_pids+=($!)
  slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
  slurm_pids+=($!)
  for i in $(seq 1 60); do
    sinfo -h -N -o "%t" 2>/dev/null | grep -qx "idle" && return 0
    sleep 0.5
  done
  echo "slurm did not come up; sinfo: $(sinfo -N 2>&1 | tail -2)"
  tail -5 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/*.out 2>/dev/null
  return 1
}

slurm_stop() {
  local pid
  for pid in "${slurm_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${slurm_pids[@]}"; do wait "$pid" 2>/dev/null; done
  slurm_pids=()
}
