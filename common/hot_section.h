// Where the recording hot path's globals and code go. A recorded call (the API frame, the trace
// recorder's push, the profiler plugin's callbacks) runs after the job has cooled the caches and
// the TLB; on a VM each page it touches can cost a two-level page walk. The flags and pointers
// every such call reads (NSHIM_HOT_DATA) share one section, which the linker keeps in one piece,
// so they sit on one or two pages instead of one page per library; the functions of the path
// (NSHIM_HOT_CODE: GCC's `hot`, placed in .text.hot) are likewise next to each other instead of
// spread over 2 MB of code. docs/profiler_plugin.md, "third pass", has the measurements.
#pragma once

#define NSHIM_HOT_DATA __attribute__((section("nshim_hot_data")))
#define NSHIM_HOT_CODE __attribute__((hot))
