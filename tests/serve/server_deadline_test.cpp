// Issue 41: a request's deadline (request_timeout_ms) stops its model run.
// The model behind the server here is a real dlrt::Session made slow on
// purpose: a Loop whose trip count comes from the token ids, so "slow" runs
// 2^40 iterations. The client gets a 504 JSON error, the run returns
// kCancelled, every request of the batch is answered, and the server's only
// worker is free again for the next request.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "../onnx_proto_util.h"
#include "dlrt/session.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using testing::body_json;
using testing::TestServer;

// Each word is one token: "slow" is id 2^40, any other word id 3. A batch
// runs the Loop max(ids) times; every vector is {trip count x4}.
class SlowLoopModel final : public EmbedModel, public DenseOut, public PairScorer {
 public:
  explicit SlowLoopModel(bool classifier) : classifier_(classifier) {
    auto s = dlrt::Session::create_from_bytes(dlrt::testing::loop_model());
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    if (s.ok()) session_ = std::move(s).value();
  }
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    Encoding e;
    size_t i = 0;
    while (i < text.size()) {
      size_t j = text.find(' ', i);
      if (j == std::string_view::npos) j = text.size();
      if (j > i) e.ids.push_back(text.substr(i, j - i) == "slow" ? int64_t{1} << 40 : 3);
      i = j + 1;
    }
    if (truncated) *truncated = false;
    e.type_ids.assign(e.ids.size(), 0);
    e.attention_mask.assign(e.ids.size(), 1);
    return e;
  }
  Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const override {
    DLRT_ASSIGN_OR_RETURN(auto rows, run(batch, bounds));
    EmbedResult r;
    r.vectors = std::move(rows);
    return r;
  }
  Result<std::vector<std::vector<float>>> classify(const std::vector<Encoding>& batch,
                                                   const dlrt::RunOptions& bounds) const override {
    return run(batch, bounds);
  }
  ModelKind kind() const override { return classifier_ ? ModelKind::kCrossEncoder : ModelKind::kDense; }
  std::vector<std::string> labels() const override { return {"score"}; }
  size_t dimension() const override { return classifier_ ? 1 : 4; }
  std::string model_name() const override { return "slow-loop"; }
  size_t max_length() const override { return 16; }
  dlrt::RunReport placement() const override { return session_->placement(); }
  int cancelled_runs() const { return cancelled_.load(); }

 private:
  Result<std::vector<std::vector<float>>> run(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const {
    int64_t trips = 0;
    for (const Encoding& e : batch)
      for (int64_t id : e.ids) trips = std::max(trips, id);
    auto out = session_->run(
        {{"m", Tensor::scalar<int64_t>(trips)}, {"x", Tensor::from_vector<float>({64}, std::vector<float>(64, 0.0f))}},
        bounds);
    if (!out.ok()) {
      if (out.status().code() == StatusCode::kCancelled) ++cancelled_;
      return out.status();
    }
    const float v = (*out)[0].data<float>()[0];
    return std::vector<std::vector<float>>(batch.size(), std::vector<float>(dimension(), v));
  }

  bool classifier_;
  std::unique_ptr<dlrt::Session> session_;
  mutable std::atomic<int> cancelled_{0};
};

ServiceConfig one_worker(int timeout_ms, int max_wait_ms) {
  ServiceConfig c;
  c.request_timeout_ms = timeout_ms;
  c.pool_size = 1;  // a run that did not stop would hold the only worker
  c.max_wait_ms = max_wait_ms;
  return c;
}

bool wait_cancelled(const SlowLoopModel& m, int n) {
  for (int i = 0; i < 500 && m.cancelled_runs() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return m.cancelled_runs() >= n;
}

void expect_timeout(const httplib::Result& r) {
  ASSERT_TRUE(r) << "no response: " << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 504) << r->body;
  auto j = body_json(r);
  const std::string message = j["error"].is_object() ? j["error"]["message"].get<std::string>() : j["error"].get<std::string>();
  EXPECT_NE(message.find("request_timeout_ms"), std::string::npos) << r->body;
}

TEST(ServeDeadline, SlowRunIsStoppedWith504AndTheWorkerServesTheNextRequest) {
  TestServer t(one_worker(300, 0), /*with_model=*/false);
  auto m = std::make_shared<SlowLoopModel>(false);
  t.server->set_model(m);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = t.post("/embed", R"({"inputs":"a slow text"})");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  expect_timeout(r);
  EXPECT_EQ(body_json(r)["error_type"], "Backend");  // TEI's error_type of a 5xx
  EXPECT_LT(ms, 5000);
  ASSERT_TRUE(wait_cancelled(*m, 1)) << "the model run went on past the request's deadline";
  // The OpenAI route says the same in its error shape.
  auto o = t.post("/v1/embeddings", R"({"input":"slow"})");
  expect_timeout(o);
  EXPECT_EQ(body_json(o)["error"]["type"], "timeout");
  ASSERT_TRUE(wait_cancelled(*m, 2));
  // The only worker is free: a fast request is answered.
  auto fast = t.post("/embed", R"({"inputs":"a fast text","normalize":false})");
  ASSERT_TRUE(fast);
  ASSERT_EQ(fast->status, 200) << fast->body;
  EXPECT_EQ(body_json(fast)[0][0], 3.0);
  EXPECT_EQ(t.get("/health")->status, 200);
}

TEST(ServeDeadline, EveryRequestOfAStoppedBatchIsAnswered) {
  ServiceConfig c = one_worker(400, 150);
  c.max_batch_size = 8;
  TestServer t(c, /*with_model=*/false);
  auto m = std::make_shared<SlowLoopModel>(false);
  t.server->set_model(m);
  std::vector<int> status(4, 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i)
    clients.emplace_back([&, i] {
      auto r = t.post("/embed", i == 0 ? R"({"inputs":"slow"})" : R"({"inputs":"fast"})");
      if (!r) return;
      status[i] = r->status;
      if (r->status == 504) expect_timeout(r);
      if (r->status == 200) {
        EXPECT_EQ(body_json(r)[0][0], 3.0);
      }
    });
  for (auto& th : clients) th.join();
  EXPECT_EQ(status[0], 504);
  for (int i = 1; i < 4; ++i) {
    EXPECT_TRUE(status[i] == 200 || status[i] == 504) << i << ": " << status[i];
  }
  ASSERT_TRUE(wait_cancelled(*m, 1));
  auto fast = t.post("/embed", R"({"inputs":"fast"})");
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->status, 200) << fast->body;
}

TEST(ServeDeadline, ClassifierRoutesStopAtTheDeadlineToo) {
  TestServer t(one_worker(300, 0), /*with_model=*/false);
  auto m = std::make_shared<SlowLoopModel>(true);
  t.server->set_model(m);
  auto r = t.post("/predict", R"({"inputs":"slow"})");
  expect_timeout(r);
  EXPECT_EQ(m->cancelled_runs(), 1);  // /predict runs on the HTTP thread: stopped before the answer
  auto fast = t.post("/predict", R"({"inputs":"fast"})");
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->status, 200) << fast->body;
}

}  // namespace
}  // namespace dlrt::embed
