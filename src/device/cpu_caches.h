// The data caches of one CPU core, for sizing the CPU kernels' blocks (GEMM
// KC/MC/NC): L1d and L2 of a core, and a core's share of the last-level cache
// (its size divided by the cores that share it). Probed once: cpuid (Intel
// leaf 4, AMD leaf 0x8000001D, else AMD's 0x80000005/0x80000006), else
// /sys/devices/system/cpu/cpu0/cache, else sysconf, else conservative
// defaults (32 KiB, 1 MiB, 1 MiB per core). DLRT_CACHE_SIZES overrides any
// part ("l1d:32K,l2:1M"), to size the blocks as another machine would.
//
// Thread-safety: cpu_caches() may be called from any thread; it probes once.
#pragma once

#include <cstdint>
#include <string>

namespace dlrt::device {

struct CpuCaches {
  int64_t l1d = 0;     // bytes, one core's L1 data cache
  int64_t l2 = 0;      // bytes, one core's L2 (a cluster's L2 divided by its cores)
  int64_t l3 = 0;      // bytes, one core's share of the L3 (0: none)
  int l1d_ways = 0;    // associativity, 0 when unknown
  int l2_ways = 0;
  std::string source;  // "cpuid", "sysfs", "sysconf" or "default"; "+DLRT_CACHE_SIZES" when overridden
};

// The caches of the CPU this process runs on, DLRT_CACHE_SIZES applied (an
// invalid value is reported once on stderr and ignored).
const CpuCaches& cpu_caches();

// The probe alone, without the override. `root` prefixes the sysfs paths
// (tests); cpuid is asked only when `root` is empty.
CpuCaches probe_cpu_caches(const std::string& root = "");

// The ways of an associativity code of cpuid leaf 0x80000006 (L2 ECX[15:12],
// L3 EDX[15:12]; AMD's and Intel's encoding), 0 when it gives no count.
int amd_cache_ways(unsigned code);

// Applies a DLRT_CACHE_SIZES value to `caches`: comma-separated key:value
// pairs, keys l1d, l2, l3 (bytes, with an optional K, M or G suffix of 1024
// powers) and l1d_ways, l2_ways. Returns "" on success, else a one-line error
// (then `caches` is unchanged).
std::string apply_cache_override(const std::string& spec, CpuCaches* caches);

// "L1d 48 KiB (12-way), L2 2 MiB (16-way), L3 240 MiB per core (cpuid)".
std::string describe_cpu_caches(const CpuCaches& c);

}  // namespace dlrt::device
