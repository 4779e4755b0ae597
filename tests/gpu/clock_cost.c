/* What one clock read costs on this machine: clock_gettime(CLOCK_MONOTONIC) (what the recorder's
 * nowNs() reads, twice per recorded call), CLOCK_MONOTONIC_COARSE, and the TSC (rdtsc), each as
 * the mean over 2 million reads. When the kernel's clocksource gives no vDSO fast path (cat
 * /sys/devices/system/clocksource/clocksource0/current_clocksource), clock_gettime is a system
 * call of several hundred ns. Build: gcc -O2 -o clock_cost clock_cost.c */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double nsPerRead(clockid_t id, int reads) {
  struct timespec a, b, t;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < reads; ++i) clock_gettime(id, &t);
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / reads;
}

int main(void) {
  const int reads = 2000000;
  struct timespec a, b;
  printf("CLOCK_MONOTONIC        %.1f ns per read\n", nsPerRead(CLOCK_MONOTONIC, reads));
  printf("CLOCK_MONOTONIC_COARSE %.1f ns per read\n", nsPerRead(CLOCK_MONOTONIC_COARSE, reads));
  uint64_t sink = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < reads; ++i) sink += __rdtsc();
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("rdtsc                  %.1f ns per read (%llu)\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / reads,
         (unsigned long long)(sink & 1));
  return 0;
}
