/* mpi_peer_bench: an nccl-tests-style benchmark of Open MPI collectives, the peer ncclshim is compared to.
 *
 * Usage: mpirun -np N mpi_peer_bench -o <all_reduce|all_gather|reduce_scatter|broadcast|alltoall>
 *                  [-b minBytes] [-e maxBytes] [-f factor] [-w warmup] [-n iters] [-c 0|1]
 *
 * Conventions follow nccl-tests: "size" is the whole buffer in bytes (for allgather, reducescatter and
 * alltoall the total of all ranks' blocks), "count" is the count passed to the NCCL call (the full
 * buffer for allreduce/broadcast, one rank's block for allgather/reducescatter, one peer's block for
 * alltoall). Time is the batch time / iters, max over ranks (a barrier opens each batch).
 * algbw = size / time; busbw = algbw * factor. Names, buffers and factors are the collectives'
 * descriptors (common/collective_descriptor.h, header-only), the same table `ncclshim perf` reads:
 * that is why this file is C++ (build: mpicxx -std=c++20 -I. -O2 -o mpi_peer_bench bench/mpi_peer_bench.cc).
 *
 * Data are integer-valued floats, so every result is checked exactly. Out-of-place: the output of the
 * last timed iteration is checked (the input never changes). In-place: the timed loop overwrites its
 * own input, so, as nccl-tests does, the input is set again and one more (untimed) call is checked.
 * MPI_Bcast has a single buffer: its in-place column is MPI_Bcast itself, and its out-of-place column
 * is what an MPI program must do for NCCL's out-of-place semantics (the root's recvbuff receives a
 * copy of its sendbuff): a memcpy at the root, then MPI_Bcast of recvbuff.
 */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/collective_descriptor.h"

using CollKind = nshim::CollectiveKind;
constexpr CollKind kAllReduce = CollKind::kAllReduce, kAllGather = CollKind::kAllGather,
                   kReduceScatter = CollKind::kReduceScatter, kBroadcast = CollKind::kBroadcast,
                   kAllToAll = CollKind::kAllToAll;

/* The collectives this peer runs; the rest of what the table says of them is their descriptor's. */
typedef struct {
  CollKind kind;
  int hasInPlace; /* the MPI call accepts MPI_IN_PLACE */
} CollInfo;

static const CollInfo kColls[] = {
    {kAllReduce, 1}, {kAllGather, 1}, {kReduceScatter, 1}, {kBroadcast, 1}, {kAllToAll, 1},
};
static const int kNumColls = sizeof(kColls) / sizeof(kColls[0]);

using nshim::describe;
static const char* nameOf(CollKind kind) { return describe(kind).ncclTestsName; } /* as given to -o */
static const char* redopOf(CollKind kind) { return describe(kind).reduces ? "sum" : "none"; }
static int rootOf(CollKind kind) { return describe(kind).rooted ? 0 : -1; } /* the root column */
static const CollInfo* infoOf(CollKind kind) {
  for (int k = 0; k < kNumColls; k++) {
    if (kColls[k].kind == kind) return &kColls[k];
  }
  return &kColls[0];
}

typedef struct {
  CollKind kind;
  size_t minBytes, maxBytes;
  double factor;
  int warmup, iters, check;
} Options;

/* Element counts of one size, as nccl-tests' getCollByteCount computes them. */
typedef struct {
  size_t paramCount; /* the count column and the count given to the call */
  size_t sendCount;  /* elements in the send buffer */
  size_t recvCount;  /* elements in the receive buffer */
} Counts;

static int gRank, gSize;

static void die(const char* msg) {
  if (gRank == 0) fprintf(stderr, "mpi_peer_bench: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* Parses "64", "1K", "4M", "1G" (powers of 1024, as nccl-tests does). */
static size_t parseSize(const char* text) {
  char* end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (errno != 0 || end == text || value < 0) die("bad size argument");
  switch (*end) {
    case 'k':
    case 'K':
      value *= 1024.0;
      end++;
      break;
    case 'm':
    case 'M':
      value *= 1024.0 * 1024.0;
      end++;
      break;
    case 'g':
    case 'G':
      value *= 1024.0 * 1024.0 * 1024.0;
      end++;
      break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') end++;
  if (*end != '\0') die("bad size suffix (use K, M or G)");
  return (size_t)value;
}

static void usage(void) {
  if (gRank != 0) return;
  fprintf(stderr,
          "usage: mpirun -np N mpi_peer_bench -o <all_reduce|all_gather|reduce_scatter|broadcast|alltoall>\n"
          "       [-b minBytes] [-e maxBytes] [-f factor] [-w warmupIters] [-n iters] [-c check(0/1)]\n");
}

static Options parseOptions(int argc, char** argv) {
  Options opt = {kAllReduce, 1024, 1024, 2.0, 5, 20, 1};
  int haveOp = 0;
  int c;
  while ((c = getopt(argc, argv, "o:b:e:f:w:n:c:h")) != -1) {
    switch (c) {
      case 'o': {
        int found = 0;
        for (int k = 0; k < kNumColls; k++) {
          if (strcmp(optarg, nameOf(kColls[k].kind)) == 0) {
            opt.kind = kColls[k].kind;
            found = 1;
          }
        }
        if (!found) {
          usage();
          die("unknown collective for -o");
        }
        haveOp = 1;
        break;
      }
      case 'b': opt.minBytes = parseSize(optarg); break;
      case 'e': opt.maxBytes = parseSize(optarg); break;
      case 'f': opt.factor = atof(optarg); break;
      case 'w': opt.warmup = atoi(optarg); break;
      case 'n': opt.iters = atoi(optarg); break;
      case 'c': opt.check = atoi(optarg); break;
      case 'h':
        usage();
        MPI_Finalize();
        exit(0);
      default: usage(); die("bad option");
    }
  }
  if (!haveOp) {
    usage();
    die("-o <collective> is required");
  }
  if (opt.factor <= 1.0) die("-f must be greater than 1");
  if (opt.iters < 1 || opt.warmup < 0) die("-n must be >= 1 and -w >= 0");
  if (opt.minBytes > opt.maxBytes) die("-b is larger than -e");
  return opt;
}

static Counts countsFor(CollKind kind, size_t bytes) {
  const nshim::CollectiveShape shape = nshim::shapeOfTotal(describe(kind), bytes / sizeof(float), gSize);
  Counts c;
  c.paramCount = shape.count;
  c.sendCount = shape.sendElems;
  c.recvCount = shape.recvElems;
  return c;
}

/* busbw factor per collective (nccl-tests'). */
static double busFactor(CollKind kind) { return nshim::busBandwidthFactor(describe(kind), gSize); }

/* Rank r's input element i: a small integer, so sums over ranks are exact in float. */
static inline float inputValue(int r, size_t i) {
  return (float)(int)(((i * 7u + (size_t)r * 13u + 1u) & 127u)) - 64.0f;
}

static inline float sumOverRanks(size_t i) {
  float s = 0.0f;
  for (int r = 0; r < gSize; r++) s += inputValue(r, i);
  return s;
}

/* Fills the buffer the call reads (sendbuf, or recvbuf in place) with this rank's input. */
static void fillInput(CollKind kind, int inPlace, const Counts* c, float* sendbuf, float* recvbuf) {
  if (!inPlace) {
    for (size_t i = 0; i < c->sendCount; i++) sendbuf[i] = inputValue(gRank, i);
    for (size_t i = 0; i < c->recvCount; i++) recvbuf[i] = NAN;
    return;
  }
  if (kind == kAllGather) {
    /* This rank's block sits at its own offset of the output. */
    for (size_t i = 0; i < c->recvCount; i++) recvbuf[i] = NAN;
    for (size_t i = 0; i < c->paramCount; i++) recvbuf[(size_t)gRank * c->paramCount + i] = inputValue(gRank, i);
  } else {
    size_t n = c->sendCount > c->recvCount ? c->sendCount : c->recvCount;
    for (size_t i = 0; i < n; i++) recvbuf[i] = inputValue(gRank, i);
  }
}

/* Broadcast's root writes its data into the one buffer MPI_Bcast uses. */
static void fillBroadcast(int inPlace, const Counts* c, float* sendbuf, float* recvbuf) {
  for (size_t i = 0; i < c->recvCount; i++) {
    recvbuf[i] = (gRank == 0 && inPlace) ? inputValue(0, i) : NAN;
    if (!inPlace) sendbuf[i] = (gRank == 0) ? inputValue(0, i) : NAN;
  }
}

/* Counts wrong elements of the result in recvbuf (exact comparison). */
static long long countWrong(CollKind kind, const Counts* c, const float* recvbuf) {
  long long wrong = 0;
  size_t pc = c->paramCount;
  switch (kind) {
    case kAllReduce:
      for (size_t i = 0; i < c->recvCount; i++) wrong += recvbuf[i] != sumOverRanks(i);
      break;
    case kBroadcast:
      for (size_t i = 0; i < c->recvCount; i++) wrong += recvbuf[i] != inputValue(0, i);
      break;
    case kAllGather:
      for (int s = 0; s < gSize; s++)
        for (size_t j = 0; j < pc; j++) wrong += recvbuf[(size_t)s * pc + j] != inputValue(s, j);
      break;
    case kReduceScatter:
      for (size_t j = 0; j < pc; j++) wrong += recvbuf[j] != sumOverRanks((size_t)gRank * pc + j);
      break;
    case kAllToAll:
      for (int s = 0; s < gSize; s++)
        for (size_t j = 0; j < pc; j++) wrong += recvbuf[(size_t)s * pc + j] != inputValue(s, (size_t)gRank * pc + j);
      break;
    default: break;
  }
  return wrong;
}

static void runColl(CollKind kind, int inPlace, const Counts* c, float* sendbuf, float* recvbuf) {
  int pc = (int)c->paramCount;
  void* in = inPlace ? MPI_IN_PLACE : (void*)sendbuf;
  int rc = MPI_SUCCESS;
  switch (kind) {
    case kAllReduce: rc = MPI_Allreduce(in, recvbuf, pc, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case kAllGather: rc = MPI_Allgather(in, pc, MPI_FLOAT, recvbuf, pc, MPI_FLOAT, MPI_COMM_WORLD); break;
    case kReduceScatter: rc = MPI_Reduce_scatter_block(in, recvbuf, pc, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case kBroadcast:
      if (!inPlace && gRank == 0) memcpy(recvbuf, sendbuf, (size_t)pc * sizeof(float));
      rc = MPI_Bcast(recvbuf, pc, MPI_FLOAT, 0, MPI_COMM_WORLD);
      break;
    case kAllToAll: rc = MPI_Alltoall(in, pc, MPI_FLOAT, recvbuf, pc, MPI_FLOAT, MPI_COMM_WORLD); break;
    default: break;
  }
  if (rc != MPI_SUCCESS) die("MPI collective failed");
}

typedef struct {
  double timeUs, algbw, busbw;
  long long wrong; /* -1: not checked */
} Result;

/* Warmup, one timed batch, then the check. Returns rank-0-visible, max-over-ranks numbers. */
static Result measure(const Options* opt, int inPlace, const Counts* c, float* sendbuf, float* recvbuf) {
  CollKind kind = opt->kind;
  if (kind == kBroadcast) fillBroadcast(inPlace, c, sendbuf, recvbuf);
  else fillInput(kind, inPlace, c, sendbuf, recvbuf);
  for (int i = 0; i < opt->warmup; i++) runColl(kind, inPlace, c, sendbuf, recvbuf);

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < opt->iters; i++) runColl(kind, inPlace, c, sendbuf, recvbuf);
  double local = (MPI_Wtime() - t0) / opt->iters;
  double sec = 0.0;
  MPI_Allreduce(&local, &sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  Result res;
  size_t sizeBytes = (c->sendCount > c->recvCount ? c->sendCount : c->recvCount) * sizeof(float);
  res.timeUs = sec * 1e6;
  res.algbw = sec > 0.0 ? (double)sizeBytes / 1e9 / sec : 0.0;
  res.busbw = res.algbw * busFactor(kind);
  res.wrong = -1;
  if (opt->check) {
    if (inPlace && kind != kBroadcast) {
      fillInput(kind, inPlace, c, sendbuf, recvbuf);
      runColl(kind, inPlace, c, sendbuf, recvbuf);
    }
    long long wrong = countWrong(kind, c, recvbuf);
    MPI_Allreduce(&wrong, &res.wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  }
  return res;
}

/* nccl-tests' time formatting: fewer decimals as the number grows. */
static void printResult(const Result* r) {
  char timeStr[32];
  if (r->timeUs >= 10000.0) snprintf(timeStr, sizeof timeStr, "%7.0f", r->timeUs);
  else if (r->timeUs >= 100.0) snprintf(timeStr, sizeof timeStr, "%7.1f", r->timeUs);
  else snprintf(timeStr, sizeof timeStr, "%7.2f", r->timeUs);
  if (r->wrong >= 0) printf("  %7s  %6.2f  %6.2f  %5g", timeStr, r->algbw, r->busbw, (double)r->wrong);
  else printf("  %7s  %6.2f  %6.2f  %5s", timeStr, r->algbw, r->busbw, "N/A");
}

static void printHeader(const Options* opt) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  char* nl = strchr(version, '\n');
  if (nl) *nl = '\0';
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  int pids[1] = {(int)getpid()};
  int* all = gRank == 0 ? static_cast<int*>(malloc(sizeof(int) * (size_t)gSize)) : NULL;
  MPI_Gather(pids, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (gRank != 0) return;
  printf("# mpi_peer_bench %s: %s, %d ranks\n", nameOf(opt->kind), version, gSize);
  printf(
      "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %g(factor) warmup iters: %d iters: %d "
      "agg iters: 1 validation: %d graph: 0\n",
      opt->minBytes, opt->maxBytes, opt->factor, opt->warmup, opt->iters, opt->check);
  printf("#\n# Using devices\n");
  for (int r = 0; r < gSize; r++)
    printf("#  Rank %2d Group  0 Pid %6d on %10s device  0 [cpu] host memory\n", r, all[r], host);
  free(all);
  if (!infoOf(opt->kind)->hasInPlace)
    printf("# note: no MPI_IN_PLACE for this call; in-place columns repeat out-of-place\n");
  printf("#\n");
  printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "",
         "", "");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
         "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "",
         "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  fflush(stdout);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  Options opt = parseOptions(argc, argv);
  const CollInfo* info = infoOf(opt.kind);

  /* One pair of buffers sized for the largest step, touched once so page faults stay out of timing. */
  Counts most = countsFor(opt.kind, opt.maxBytes);
  size_t sendElems = most.sendCount ? most.sendCount : 1;
  size_t recvElems = (most.recvCount > most.sendCount ? most.recvCount : most.sendCount);
  if (recvElems == 0) recvElems = 1;
  float* sendbuf = static_cast<float*>(malloc(sendElems * sizeof(float)));
  float* recvbuf = static_cast<float*>(malloc(recvElems * sizeof(float)));
  if (!sendbuf || !recvbuf) die("out of memory");
  memset(sendbuf, 0, sendElems * sizeof(float));
  memset(recvbuf, 0, recvElems * sizeof(float));

  printHeader(&opt);
  double busbwSum = 0.0;
  int busbwCount = 0;
  long long wrongTotal = 0;
  for (size_t bytes = opt.minBytes; bytes <= opt.maxBytes;) {
    Counts c = countsFor(opt.kind, bytes);
    Result oop = measure(&opt, 0, &c, sendbuf, recvbuf);
    Result ip = info->hasInPlace ? measure(&opt, 1, &c, sendbuf, recvbuf) : oop;
    if (gRank == 0) {
      size_t sizeBytes = (c.sendCount > c.recvCount ? c.sendCount : c.recvCount) * sizeof(float);
      printf("%12zu  %12zu  %8s  %6s  %6d", sizeBytes, c.paramCount, "float", redopOf(opt.kind), rootOf(opt.kind));
      printResult(&oop);
      printResult(&ip);
      printf("\n");
      fflush(stdout);
    }
    busbwSum += oop.busbw + ip.busbw;
    busbwCount += 2;
    wrongTotal += (oop.wrong > 0 ? oop.wrong : 0) + (info->hasInPlace && ip.wrong > 0 ? ip.wrong : 0);
    size_t next = (size_t)((double)bytes * opt.factor);
    if (next <= bytes) next = bytes + 1;
    bytes = next;
  }
  if (gRank == 0) {
    printf("# Out of bounds values : %lld %s\n", wrongTotal, wrongTotal == 0 ? "OK" : "FAILED");
    printf("# Avg bus bandwidth    : %g \n", busbwCount ? busbwSum / busbwCount : 0.0);
    printf("#\n");
    fflush(stdout);
  }
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return wrongTotal == 0 ? 0 : 1;
}
