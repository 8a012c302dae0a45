# DLRT_CACHE_SIZES reaches `dlrt devices` and the GEMM's block sizes (a 1 MiB
# L2 / 32 KiB L1d machine: Cascade Lake), and a bad value is reported, not used.
add_test(NAME cli.devices_cache_override COMMAND dlrt_cli devices)
set_tests_properties(cli.devices_cache_override PROPERTIES ENVIRONMENT "DLRT_CACHE_SIZES=l1d:32K,l2:1M,l3:1408K"
  PASS_REGULAR_EXPRESSION "caches=\"L1d 32 KiB, L2 1 MiB[^\"]*, L3 1408 KiB per core \\([a-z]+\\+DLRT_CACHE_SIZES\\)\"")
add_test(NAME cli.devices_cache_override_invalid COMMAND dlrt_cli devices)
set_tests_properties(cli.devices_cache_override_invalid PROPERTIES ENVIRONMENT "DLRT_CACHE_SIZES=l1d:lots"
  PASS_REGULAR_EXPRESSION "ignoring DLRT_CACHE_SIZES='l1d:lots': 'lots' is not a size")
add_test(NAME gemm.blocking_follows_cache_override COMMAND dlrt_gemm_isa --filter no-such-shape --reps 1)
set_tests_properties(gemm.blocking_follows_cache_override PROPERTIES ENVIRONMENT "DLRT_CACHE_SIZES=l1d:32K,l2:1M,l1d_ways:8"
  PASS_REGULAR_EXPRESSION "# blocks: 8x48 kc 128 mc 1024 nc 480, 6x16 kc 256 mc 510 nc [0-9]+")
