# The recurrent layers' step split over threads (ops/rnn_loop.h) taken on
# every shape of RnnThreads: a 64 KiB L2 puts each layer's R past it.
add_test(NAME rnn.split_steps_small_l2 COMMAND dlrt_tests --gtest_filter=RnnThreads.*)
set_tests_properties(rnn.split_steps_small_l2 PROPERTIES ENVIRONMENT "DLRT_CACHE_SIZES=l2:64K;DLRT_TEST_EXPECT_SPLIT_STEPS=1")
