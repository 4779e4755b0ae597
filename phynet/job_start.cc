// Waiting for the shared start of `phynet --jobs` (job_start.h).
#include "phynet/job_start.h"

#include <time.h>

#include "common/settings.h"

namespace nshim::phynet {

double waitForJobStart() {
  double at = settingDouble(Setting::NCCLSHIM_JOB_START_AT);
  if (at <= 0) return 0;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  double nowS = static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
  if (nowS >= at) return nowS - at;
  timespec until{};
  until.tv_sec = static_cast<time_t>(at);
  until.tv_nsec = static_cast<long>((at - static_cast<double>(until.tv_sec)) * 1e9);
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, nullptr) != 0) {}
  return 0;
}

}  // namespace nshim::phynet
