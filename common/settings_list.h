// Every NCCLSHIM_* setting, declared once: name, kind, default, range, options and one line of help.
// Read through common/settings.h; docs/settings.md's table is `ncclshim env --markdown` of
// this list (scripts/settings_table.sh writes it, tests/suites/tools_tests.sh checks it).
//
// NS_SETTING(name, kind, default, min, max, options, help)
//   kind     kInt (decimal or 0x hex), kDouble, kBytes (512K, 2M, 1G: powers of two), kBool (0/1,
//            true/false, yes/no, on/off), kString, kChoice
//   default  as a user writes it; "" = unset
//   min/max  the accepted range of a number (inclusive)
//   options  kChoice: the choices, `|` between them, aliases after `,` (the first is the name);
//            numbers: "auto" when the word auto is accepted (read as -1), "pow2" for a power of two
// No include guard: the includer defines NS_SETTING and includes this list where it needs it.

// The shim
NS_SETTING(NCCLSHIM_MODE, kChoice, "auto", 0, 0, "auto|forward|gpufree",
           "`forward` to the real NCCL, `gpufree`, or `auto` (forward when a GPU and a real NCCL exist)")
NS_SETTING(NCCLSHIM_REAL_NCCL, kString, "", 0, 0, "",
           "the real `libnccl.so.2` to forward to when none is loaded in the process already")
NS_SETTING(NCCLSHIM_GPU_TIMING, kBool, "0", 0, 0, "",
           "`1`: time forwarded operations with CUDA events (graph-captured ones are marked, not timed)")
NS_SETTING(NCCLSHIM_DEBUG, kChoice, "WARN", 0, 0, "NONE|WARN|INFO|TRACE", "log level")
NS_SETTING(NCCLSHIM_DEBUG_FILE, kString, "", 0, 0, "", "log to this file (appended) instead of stderr")
NS_SETTING(NCCLSHIM_HOOK_DEBUG, kString, "", 0, 0, "",
           "write one line per NCCL call to this file (`%p` = pid); `noop` runs the hook without a log")
NS_SETTING(NCCLSHIM_TSC_CLOCK, kBool, "1", 0, 0, "",
           "timestamps from the TSC where the kernel's clock is the TSC and it is invariant; `0`: clock_gettime")

// Recording (FORMAT.md)
NS_SETTING(NCCLSHIM_TRACE_DIR, kString, "", 0, 0, "",
           "record every call to `<dir>/ncclshim-<host>-<pid>-rank<R>.jsonl` (FORMAT.md)")
NS_SETTING(NCCLSHIM_TRACE_MODE, kChoice, "0600", 0, 0, "0600|0640|0644|0660|0664|0666",
           "permissions of the trace files (created new, never through a symlink); folders the recorder creates are "
           "0700, or 0755 when others may read")
NS_SETTING(NCCLSHIM_TRACE_NAME, kString, "", 0, 0, "",
           "trace file name pattern, default `ncclshim-%h-%p`, under a job `ncclshim-%j-%h-%p` (`%h` host, `%p` pid, "
           "`%r` rank, `%j` SLURM_JOB_ID or TORCHELASTIC_RUN_ID)")
NS_SETTING(NCCLSHIM_TRACE_RING, kInt, "4096", 16, 16777216, "", "records per recording thread's ring")
NS_SETTING(NCCLSHIM_TRACE_FLUSH_MS, kInt, "10", 1, 60000, "", "the writer drains the rings at least this often")
NS_SETTING(NCCLSHIM_TRACE_FULL_WAIT_US, kInt, "100000", 0, 10000000, "",
           "a caller whose ring is full waits this long for the writer, then counts the record as dropped")
NS_SETTING(NCCLSHIM_TRACE_SIGNALS, kBool, "1", 0, 0, "", "flush the trace on SIGTERM and SIGINT")
NS_SETTING(NCCLSHIM_TRACE_GENERAL_PARSER, kBool, "0", 0, 0, "",
           "`1`: read traces without the operation lines' fast path (a check of that path)")
NS_SETTING(NCCLSHIM_TRACE_START, kString, "", 0, 0, "",
           "record a window only (docs/capture.md): `iter:N` at iteration N, `call:N` at call N, `time:S` S seconds "
           "after the first call, `signal` (SIGUSR2 starts and stops), `file:PATH` when PATH exists; unset: everything")
NS_SETTING(NCCLSHIM_TRACE_ITERATIONS, kInt, "0", 0, 1000000000, "",
           "the window lasts this many iterations (0: until NCCLSHIM_TRACE_SECONDS, a second SIGUSR2, the trigger "
           "file's removal, or the end)")
NS_SETTING(NCCLSHIM_TRACE_SECONDS, kDouble, "0", 0, 1e9, "", "the window lasts at most this many seconds (0: no limit)")
NS_SETTING(
    NCCLSHIM_TRACE_MAX_MB, kDouble, "0", 0, 1e9, "",
    "per file: past this many MiB on disk recording stops, with a footer that says so and one warning (0: no limit)")
NS_SETTING(NCCLSHIM_TRACE_COMPRESS, kChoice, "none", 0, 0, "none|zstd",
           "`zstd`: write `.jsonl.zst` (streaming, in the writer thread); every reader reads it as `.jsonl`")

// NCCL profiler plugin (docs/profiler_plugin.md)
NS_SETTING(
    NCCLSHIM_PROFILER, kBool, "0", 0, 0, "",
    "`1`: the preloaded library is also NCCL's profiler plugin (NCCL's algorithm, protocol, channels in the trace)")
NS_SETTING(NCCLSHIM_PROFILER_EVENTS, kInt, "auto", 0, 4095, "auto",
           "activate exactly these NCCL profiler events (a mask); auto = API, collective, p2p and proxy events")
NS_SETTING(NCCLSHIM_PROFILER_PROXY, kBool, "1", 0, 0, "", "`0`: leave NCCL's proxy events out of auto")
NS_SETTING(NCCLSHIM_PROFILER_RECORD, kBool, "1", 0, 0, "", "`0`: the plugin's callbacks run, no record is written")
NS_SETTING(NCCLSHIM_PROFILER_COUNT, kBool, "0", 0, 0, "", "`1`: count the plugin's callbacks per event type")
NS_SETTING(NCCLSHIM_PROFILER_NOOP, kBool, "0", 0, 0, "", "`1`: every callback returns at once (NCCL's own cost)")
NS_SETTING(NCCLSHIM_PROFILER_STEPS, kString, "", 0, 0, "",
           "a folder: time every network proxy step and write them there at exit (tests/gpu/wire_part.py)")

// Communicators and transports
NS_SETTING(NCCLSHIM_JOB_START_AT, kDouble, "0", 0, 1e11, "",
           "phynet: wall-clock time (Unix seconds) at which the replay starts, after connecting; set by phynet --jobs "
           "so that jobs start together (0: at once)")
NS_SETTING(NCCLSHIM_TIMEOUT, kDouble, "300", 0.001, 1e6, "",
           "seconds any wait may take before the operation fails naming the peer (at most 1e6: 11.5 days)")
NS_SETTING(
    NCCLSHIM_CHECK_CALLS, kBool, "0", 0, 0, "",
    "`1`: before each collective the ranks exchange its signature (collective, count, datatype, operator, root) and "
    "all "
    "fail a call they disagree on with `ncclInvalidUsage` naming the ranks, instead of giving wrong data; costs one "
    "16-byte allgather per collective (2 ranks, TCP: a 4-byte allreduce 7 -> 13 us)")
NS_SETTING(NCCLSHIM_BOOTSTRAP_HELLO_TIMEOUT, kDouble, "5", 0.001, 3600, "",
           "seconds a connection to a bootstrap listener may take to send its hello before it is closed; connections "
           "without the job's secret never hold a real rank's place and are summarised in one warning per listener")
NS_SETTING(
    NCCLSHIM_TRANSPORT, kChoice, "tcp", 0, 0, "tcp,socket|ibverbs,ib,roce|shm",
    "`ibverbs` for RoCEv2 (libibverbs is loaded only then); `shm` when every rank is on this host (shared memory only)")
NS_SETTING(NCCLSHIM_HOSTID, kString, "", 0, 0, "",
           "which host this process is on (as `NCCL_HOSTID`); unset: hostname/boot id/network namespace, so "
           "processes in other network namespaces or VMs are other hosts even with one hostname")
NS_SETTING(NCCLSHIM_LOCAL_RANK, kInt, "auto", 0, 1048575, "auto",
           "rank on this host for NIC lists; auto: `OMPI_COMM_WORLD_LOCAL_RANK`, `LOCAL_RANK`, `SLURM_LOCALID`, "
           "`MPI_LOCALRANKID` (phynet: else the order of ranks on the host)")
NS_SETTING(NCCLSHIM_INTRA_NODE, kChoice, "auto", 0, 0, "auto|shm|net",
           "how ranks of one host meet when a communicator spans several hosts: `shm` (auto) keeps their traffic off "
           "the NICs as NCCL keeps it on NVLink; `net` puts every pair on the network; on one host auto is `net`")
NS_SETTING(NCCLSHIM_SOCKET_IFNAME, kString, "", 0, 0, "",
           "interface the TCP transport (and both transports' bootstrap) listens on and connects from, unset: "
           "loopback; prefixes as `NCCL_SOCKET_IFNAME` (`eth`, `=eth0`, `^docker,lo`); a list `r0,r1` gives local "
           "rank i entry i mod its length (one NIC per rank)")
NS_SETTING(NCCLSHIM_SOCKET_FAMILY, kChoice, "AF_INET", 0, 0, "AF_INET,4,ipv4|AF_INET6,6,ipv6",
           "address family preferred on the interface")
NS_SETTING(NCCLSHIM_NSOCKS_PERPEER, kInt, "2", 1, 64, "",
           "TCP connections (channels) per peer, each a control socket plus `NCCL_SOCKET_NTHREADS` x "
           "`NCCL_NSOCKS_PERTHREAD` data sockets as NCCL resolves them (none on loopback; docs/socket_transport.md)")
NS_SETTING(NCCLSHIM_SOCKET_SNDBUF, kBytes, "auto", 0, 1073741824, "auto",
           "send buffer per TCP socket: auto = `NCCL_SOCKET_SNDBUF` when set, else 256K to ranks on this host (the "
           "bytes stay in cache between the "
           "two copies), the kernel's autotuning to other hosts; `0` = autotuning for all; a size = that for all")
NS_SETTING(NCCLSHIM_SOCKET_RCVBUF, kBytes, "auto", 0, 1073741824, "auto",
           "receive buffer per TCP socket: auto = `NCCL_SOCKET_RCVBUF` when set, else 1M to ranks on this host (a 1 "
           "MiB message never waits for "
           "the receive window to grow), the kernel's autotuning to other hosts; `0` = autotuning for all; a size = "
           "that for all. Above `net.core.rmem_max` it is forced (root) or left to autotuning with a warning")
NS_SETTING(NCCLSHIM_SPIN_US, kInt, "100", 0, 1000000, "",
           "microseconds a wait busy-polls (TCP, ibverbs, shared memory) before it sleeps")
NS_SETTING(NCCLSHIM_SPIN_YIELD, kBool, "1", 0, 0, "", "TCP: yield the CPU between polls while spinning")
NS_SETTING(NCCLSHIM_SHM_RING_BYTES, kBytes, "256K", 4096, 1073741824, "pow2",
           "shared-memory ring per ordered pair of ranks")

// Collective algorithms
NS_SETTING(NCCLSHIM_SLICE_BYTES, kBytes, "1M", 64, 1073741824, "", "bytes per message of the ring algorithms")
NS_SETTING(NCCLSHIM_CHUNK_BYTES, kBytes, "512K", 64, 1073741824, "", "pipelining unit of broadcast / reduce chains")
NS_SETTING(NCCLSHIM_MAX_INFLIGHT, kInt, "8", 1, 4096, "", "messages in flight per peer")
NS_SETTING(NCCLSHIM_ALGO, kChoice, "auto", 0, 0, "auto|ring|tree|pat",
           "algorithm (`tree` for allreduce, `pat` for allgather / reducescatter on one rank per host; unset: "
           "`NCCL_ALGO` when it names one); `ring` disables recursive doubling for small allreduce")
NS_SETTING(NCCLSHIM_PROTO, kChoice, "auto", 0, 0, "auto|simple|ll|ll128",
           "NCCL protocol of every collective (unset: `NCCL_PROTO` when it names one)")
NS_SETTING(NCCLSHIM_NCHANNELS, kInt, "2", 1, 64, "", "NCCL's collective channels (each on its own connection)")
NS_SETTING(NCCLSHIM_P2P_CHANNELS, kInt, "2", 1, 64, "", "NCCL's channels for point-to-point work")
NS_SETTING(NCCLSHIM_P2P_CHANNELS_PER_PEER, kInt, "0", 0, 64, "",
           "most channels of one point-to-point transfer, `0` = NCCL's rule (unset: `NCCL_NCHANNELS_PER_NET_PEER`); "
           "`NCCL_P2P_NET_CHUNKSIZE` as NCCL's")
NS_SETTING(NCCLSHIM_PXN, kBool, "0", 0, 0, "",
           "`1`: alltoall, gather and scatter blocks for another node go through the node-mate on its rail")
NS_SETTING(NCCLSHIM_RD_THRESHOLD, kBytes, "64K", 0, 1073741824, "",
           "largest allreduce that uses recursive doubling (2^k ranks); phynet: off unless set")

// ibverbs (RoCE v2)
NS_SETTING(NCCLSHIM_IB_HCA, kString, "", 0, 0, "",
           "RDMA device (`rxe0`, `mlx5_0`; `name:port`), unset: the first with a RoCE v2 GID; a list "
           "`mlx5_0,mlx5_1` gives local rank i entry i mod its length")
NS_SETTING(NCCLSHIM_IB_LIBRARY, kString, "libibverbs.so.1", 0, 0, "", "the libibverbs to load")
NS_SETTING(NCCLSHIM_IB_GID_INDEX, kInt, "auto", 0, 65535, "auto", "GID table index; auto: RoCE v2, IPv4 first")
NS_SETTING(NCCLSHIM_IB_TC, kInt, "0", 0, 255, "", "traffic class")
NS_SETTING(NCCLSHIM_IB_SL, kInt, "0", 0, 15, "", "service level")
NS_SETTING(
    NCCLSHIM_IB_QPS_PER_PEER, kInt, "1", 1, 64, "",
    "links per peer; each link is two RC QPs (our data out, the peer's data in), so credits never queue behind data")
NS_SETTING(NCCLSHIM_IB_QPS_PER_CONNECTION, kInt, "1", 1, 64, "",
           "links of each of those: a channel's messages go round robin over them, as NCCL's over its QPs per "
           "connection (else NCCL_IB_QPS_PER_CONNECTION, the environment's or the capture's)")
NS_SETTING(NCCLSHIM_IB_SPLIT_DATA_ON_QPS, kBool, "0", 0, 0, "",
           "1: every message is cut over all links of its group in equal parts (whole 128-byte blocks), as NCCL "
           "cuts a request over its QPs per connection (else NCCL_IB_SPLIT_DATA_ON_QPS, the environment's or the "
           "capture's)")
NS_SETTING(NCCLSHIM_IB_SLOTS, kInt, "4", 2, 4096, "", "receive ring slots (credits) per link")
NS_SETTING(NCCLSHIM_IB_SLOT_BYTES, kBytes, "1M", 64, 67108864, "", "payload bytes per receive slot (fragment size)")
NS_SETTING(NCCLSHIM_IB_SIGNAL_EVERY, kInt, "8", 1, 4096, "",
           "one signaled work request in this many (at most the slots)")
NS_SETTING(NCCLSHIM_IB_ZERO_COPY_MIN, kBytes, "64K", 0, 1073741824, "",
           "messages from this size between registered buffers go straight into the receiver's buffer, without ring "
           "copies; `0` = never; equal on every rank. Registered: the shim's `ncclCommRegister` buffers, phynet's "
           "buffers, the engine's staging")
NS_SETTING(NCCLSHIM_IB_TIMEOUT, kInt, "14", 1, 31, "", "QP local ACK timeout, 4.096 us * 2^value")
NS_SETTING(NCCLSHIM_IB_RETRY_CNT, kInt, "7", 0, 7, "", "QP retry count")
NS_SETTING(NCCLSHIM_IB_POST_THREAD, kInt, "auto", 0, 1, "auto",
           "`1` posts data writes from a thread, `0` inline; auto = a thread on soft-RoCE, whose `ibv_post_send` "
           "runs the transmit in the caller")

// Tools (docs/TOOLS.md)
NS_SETTING(NCCLSHIM_PYTHON, kString, "", 0, 0, "",
           "the Python 3 of `ncclshim plot`, `report`, `compare` (unset: `python3` on PATH, else `/usr/bin/python3`)")
NS_SETTING(NCCLSHIM_PLOT_SCRIPT, kString, "", 0, 0, "", "`ncclshim plot`'s script (unset: the installed one)")
NS_SETTING(NCCLSHIM_REPORT_SCRIPT, kString, "", 0, 0, "", "the HTML report generator (unset: the installed one)")
NS_SETTING(NCCLSHIM_REPORT_DEBUG, kBool, "0", 0, 0, "", "`1`: the report generator prints where it failed")
