// Cache sizes per core: the sysfs probe against a fake tree, the
// DLRT_CACHE_SIZES syntax, and the running machine's (plausible sizes).
#include "device/cpu_caches.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "fake_sysfs.h"

namespace dlrt::device {
namespace {

using testing::FakeTree;

void cache_index(FakeTree& t, int index, int level, const std::string& type, const std::string& size, int ways,
                 const std::string& shared) {
  const std::string d = "sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
  t.write(d + "level", std::to_string(level) + "\n");
  t.write(d + "type", type + "\n");
  t.write(d + "size", size + "\n");
  t.write(d + "ways_of_associativity", std::to_string(ways) + "\n");
  t.write(d + "shared_cpu_list", shared + "\n");
}

TEST(CpuCaches, SysfsPerCoreShares) {
  FakeTree t;
  // Two threads per core; an L3 of 22 MiB shared by 32 threads (16 cores).
  cache_index(t, 0, 1, "Data", "32K", 8, "0,16");
  cache_index(t, 1, 1, "Instruction", "32K", 8, "0,16");
  cache_index(t, 2, 2, "Unified", "1024K", 16, "0,16");
  cache_index(t, 3, 3, "Unified", "22528K", 11, "0-31");
  const CpuCaches c = probe_cpu_caches(t.root());
  EXPECT_EQ(c.source, "sysfs");
  EXPECT_EQ(c.l1d, 32 << 10);
  EXPECT_EQ(c.l1d_ways, 8);
  EXPECT_EQ(c.l2, 1 << 20);
  EXPECT_EQ(c.l2_ways, 16);
  EXPECT_EQ(c.l3, (22528 << 10) / 16);
}

TEST(CpuCaches, NoTreeGivesDefaults) {
  FakeTree t;
  const CpuCaches c = probe_cpu_caches(t.root());
  EXPECT_EQ(c.source, "default");
  EXPECT_EQ(c.l1d, 32 << 10);
  EXPECT_EQ(c.l2, 1 << 20);
  EXPECT_EQ(c.l3, 1 << 20);
}

TEST(CpuCaches, ImplausibleSysfsSizesFallBack) {
  FakeTree t;
  cache_index(t, 0, 1, "Data", "1K", 8, "0");
  cache_index(t, 2, 2, "Unified", "junk", 16, "0");
  const CpuCaches c = probe_cpu_caches(t.root());
  EXPECT_EQ(c.l1d, 32 << 10);
  EXPECT_EQ(c.l2, 1 << 20);
}

TEST(CpuCaches, OverrideSyntax) {
  CpuCaches c;
  c.l1d = 48 << 10, c.l1d_ways = 12, c.l2 = 2 << 20, c.l2_ways = 16, c.l3 = 4 << 20, c.source = "cpuid";
  CpuCaches o = c;
  EXPECT_EQ(apply_cache_override("l1d:32K,l2:1M", &o), "");
  EXPECT_EQ(o.l1d, 32 << 10);
  EXPECT_EQ(o.l1d_ways, 0);  // another machine's ways are unknown unless given
  EXPECT_EQ(o.l2, 1 << 20);
  EXPECT_EQ(o.l3, 4 << 20);
  EXPECT_EQ(o.source, "cpuid+DLRT_CACHE_SIZES");
  o = c;
  EXPECT_EQ(apply_cache_override("l3:1.375M,l1d_ways:8,l2:1048576", &o), "");
  EXPECT_EQ(o.l3, 1441792);
  EXPECT_EQ(o.l1d_ways, 8);
  EXPECT_EQ(o.l2, 1 << 20);
  for (const char* bad : {"l1d", "l1d:", "l1d:32Q", "l4:1M", "l1d:1K", "l1d:4M,l2:1M", "l1d_ways:0", "l2:1M,,"}) {
    o = c;
    const std::string err = apply_cache_override(bad, &o);
    EXPECT_FALSE(err.empty()) << bad;
    EXPECT_EQ(err.find('\n'), std::string::npos) << bad;
    EXPECT_EQ(o.l1d, c.l1d) << bad;  // unchanged on error
    EXPECT_EQ(o.l2, c.l2) << bad;
  }
}

// The codes as AMD's and Intel's manuals list them (QEMU's EPYC models give 6 for an 8-way L2).
TEST(CpuCaches, AmdAssociativityCodes) {
  const std::pair<unsigned, int> codes[] = {{0x1, 1}, {0x2, 2},   {0x4, 4},   {0x6, 8},   {0x8, 16},  {0xa, 32},
                                             {0xb, 48}, {0xc, 64}, {0xd, 96}, {0xe, 128}, {0x9, 0}, {0xf, 0}};
  for (const auto& [code, ways] : codes) EXPECT_EQ(amd_cache_ways(code), ways) << code;
  EXPECT_EQ(amd_cache_ways(0x16u), 8);  // only the low four bits
}

TEST(CpuCaches, ThisMachineIsPlausible) {
  const CpuCaches& c = cpu_caches();
  EXPECT_GE(c.l1d, 4 << 10);
  EXPECT_LE(c.l1d, 4 << 20);
  EXPECT_GE(c.l2, c.l1d);
  EXPECT_GE(c.l3, 0);
  EXPECT_FALSE(c.source.empty());
  const std::string d = describe_cpu_caches(c);
  EXPECT_EQ(d.rfind("L1d ", 0), 0u) << d;
}

TEST(CpuCaches, Describe) {
  CpuCaches c;
  c.l1d = 48 << 10, c.l1d_ways = 12, c.l2 = 2 << 20, c.l2_ways = 16, c.l3 = 1441792, c.source = "cpuid";
  EXPECT_EQ(describe_cpu_caches(c), "L1d 48 KiB (12-way), L2 2 MiB (16-way), L3 1408 KiB per core (cpuid)");
  c.l3 = 0;
  c.l1d_ways = 0;
  EXPECT_EQ(describe_cpu_caches(c), "L1d 48 KiB, L2 2 MiB (16-way), no L3 (cpuid)");
}

}  // namespace
}  // namespace dlrt::device
