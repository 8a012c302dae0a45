// RunOptions: a run stops with kCancelled once its timeout passes or its
// cancel flag is set, inside a Loop too, and the session stays usable.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "../onnx_proto_util.h"
#include "dlrt/session.h"

namespace dlrt {
namespace {

using testing::loop_model;

std::map<std::string, Tensor> feeds(int64_t m) {
  return {{"m", Tensor::scalar<int64_t>(m)}, {"x", Tensor::from_vector<float>({64}, std::vector<float>(64, 0.0f))}};
}

TEST(RunLimits, TimeoutStopsALongLoopAndTheSessionStaysUsable) {
  auto s = Session::create_from_bytes(loop_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  RunOptions o;
  o.timeout_ms = 200;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = (*s)->run(feeds(int64_t{1} << 40), o);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_NE(r.status().message().find("200 ms"), std::string::npos) << r.status().message();
  EXPECT_LT(ms, 5000) << "the run did not stop promptly";
  // Usable afterwards, and a run within its timeout is unaffected.
  auto ok = (*s)->run(feeds(5), o);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_FLOAT_EQ((*ok)[0].data<float>()[0], 5.0f);
  RunOptions bad;
  bad.timeout_ms = -1;
  EXPECT_EQ((*s)->run(feeds(1), bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(RunLimits, CancelFlagFromAnotherThread) {
  auto s = Session::create_from_bytes(loop_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  std::atomic<bool> cancel{false};
  RunOptions o;
  o.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel.store(true);
  });
  auto r = (*s)->run(feeds(int64_t{1} << 40), o);
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(std::string(status_code_name(r.status().code())), "Cancelled");
  // run_into takes the same options.
  std::map<std::string, Tensor> out{{"y", Tensor()}};  // an empty tensor: replaced by the output
  EXPECT_EQ((*s)->run_into(feeds(3), out, o).code(), StatusCode::kCancelled);  // still cancelled
  cancel.store(false);
  ASSERT_TRUE((*s)->run_into(feeds(3), out, o).ok());
  ASSERT_TRUE(out["y"].valid());
  EXPECT_FLOAT_EQ(out["y"].data<float>()[0], 3.0f);
}

}  // namespace
}  // namespace dlrt
