# The kernel, optimizer and model tests again as other CPUs would run them:
# the same binary with its ISA capped (DLRT_CPU_ISA), another machine's caches
# (DLRT_CACHE_SIZES) and without the extensions it lacks (DLRT_CPU_FEATURES_OFF),
# so that a path only a CPU we do not have takes (an AVX2 tile, an int8 tile
# without VNNI, a portable loop, a block size from a smaller L2) runs in every
# `make test`. The process, server, device and source-scanning tests are left
# out (the CLI's, the other backends', the differential one against them): they
# do not depend on the CPU kernels, or only through tests that already run here,
# and run once in the main pass.
#   other_cpus.avx2_l2_512k   AVX2 without VNNI, a 512 KiB L2 (Zen 2/3 class); with the zoo
#   other_cpus.avx512_l2_1m   AVX-512 with VNNI, no BF16/FP16/AMX, a 1 MiB L2 (Cascade
#                             Lake class); on a CPU without AVX-512, AVX2 again
#   other_cpus.portable       the portable C++ kernels (no zoo: minutes there)
# What a Cascade Lake lacks of a Sapphire Rapids (a comma list; ctest splits ENVIRONMENT at ';').
set(DLRT_NEWER_X86_EXTENSIONS "avx512_bf16,avx512_fp16,amx_tile,amx_bf16,amx_int8")
set(DLRT_OTHER_CPUS_SKIP
  "OvDouble*:ServeLoad*:RealOpenVino*:Cuda*:CliTest*:*CliBadModelTest*:BenchCliTest*:CompileCli*:DevicesCliTest*:EmbedCli*:EmbedSparseCli*:MultiVectorCli*:RerankCli*:Serve*:Fallback*:MemoryLimitProcess*:Batcher*:OpenClTest*:Zoo.OpenCl*:Differential*:MissingOpenVino*:PluginBackend*:FileIo*:ThreadPool*:RunLimits*:DeviceDiscovery*:DynamicLibrary*:EnvTable*")
add_test(NAME other_cpus.avx2_l2_512k COMMAND dlrt_tests --gtest_brief=1 --gtest_filter=-${DLRT_OTHER_CPUS_SKIP})
set_tests_properties(other_cpus.avx2_l2_512k PROPERTIES
  ENVIRONMENT "DLRT_CPU_ISA=avx2;DLRT_CACHE_SIZES=l1d:32K,l2:512K,l3:32M;DLRT_CPU_FEATURES_OFF=${DLRT_NEWER_X86_EXTENSIONS},avx512_vnni,avx_vnni")
add_test(NAME other_cpus.avx512_l2_1m COMMAND dlrt_tests --gtest_brief=1 --gtest_filter=-${DLRT_OTHER_CPUS_SKIP})
set_tests_properties(other_cpus.avx512_l2_1m PROPERTIES
  ENVIRONMENT "DLRT_CACHE_SIZES=l1d:32K,l2:1M,l3:1408K;DLRT_CPU_FEATURES_OFF=${DLRT_NEWER_X86_EXTENSIONS},avx_vnni")
add_test(NAME other_cpus.portable COMMAND dlrt_tests --gtest_brief=1 --gtest_filter=-${DLRT_OTHER_CPUS_SKIP}:Zoo*)
set_tests_properties(other_cpus.portable PROPERTIES ENVIRONMENT "DLRT_CPU_ISA=generic")
