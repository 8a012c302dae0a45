// Load test: 32 concurrent keep-alive clients for 20 s (DLRT_SERVE_LOAD_SECONDS
// overrides) against the server with a real Embedder on loopback: the zoo's
// minilm_l6 folder when DLRT_ZOO_DIR is set, else the tiny generated folder
// (the test prints which). Zero errors; p50/p99 latency and throughput printed.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "embed/serve/server.h"
#include "serve_model_folder.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

TEST(ServeLoad, ThirtyTwoClientsForTwentySeconds) {
  fs::path dir = testing::serve_temp_dir("load");
  std::string why;
  std::string folder = testing::make_minilm_folder(dir / "minilm", &why);
  std::string which = "zoo minilm_l6 (" + folder + ")";
  if (folder.empty()) {
    ASSERT_TRUE(testing::make_tiny_model_folder(dir / "tiny"));
    folder = (dir / "tiny").string();
    which = "tiny generated folder (" + why + ")";
  }
  std::printf("[ load     ] model: %s\n", which.c_str());
  EmbedderOptions eo;
  eo.device = "cpu";
  auto embedder = Embedder::create(folder, eo);
  if (!embedder.ok()) {
    fs::remove_all(dir);
    GTEST_SKIP() << "the Embedder cannot load " << folder << ": " << embedder.status().to_string();
  }
  auto model = embedder_model(std::shared_ptr<const Embedder>(std::move(embedder).value()));
  ASSERT_TRUE(warm_up(*model).ok());

  ServiceConfig c;
  c.model = folder;
  c.host = "127.0.0.1";
  c.port = 0;
  c.pool_size = 2;
  c.max_batch_size = 32;
  c.max_wait_ms = 2;
  c.http_threads = 64;
  EmbedServer server(c);
  ASSERT_TRUE(server.bind().ok());
  server.set_model(model);
  std::thread serving([&] { server.run(); });

  double seconds = 20;
  if (const char* s = std::getenv("DLRT_SERVE_LOAD_SECONDS"); s && *s) seconds = std::max(1.0, std::atof(s));
  constexpr int kClients = 32;
  constexpr size_t kMaxRequestsPerClient = 100000;  // bound in requests as well as time
  std::vector<std::vector<double>> latencies(kClients);
  std::atomic<int> errors{0};
  std::atomic<size_t> inputs{0};
  std::string first_error;
  std::mutex err_mu;
  auto t0 = Clock::now();
  auto until = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t)
    clients.emplace_back([&, t] {
      httplib::Client cli("127.0.0.1", server.port());
      cli.set_keep_alive(true);
      cli.set_tcp_nodelay(true);
      cli.set_read_timeout(60, 0);
      for (size_t i = 0; i < kMaxRequestsPerClient && Clock::now() < until; ++i) {
        size_t n = 1 + (t + i) % 2;  // 1 or 2 inputs per request
        std::string body = "{\"input\":[";
        for (size_t k = 0; k < n; ++k)
          body += (k ? ",\"" : "\"") + testing::serve_sentence(6 + (t * 7 + i + k) % 20, t * 100003 + i * 7 + k) + "\"";
        body += "]}";
        auto s = Clock::now();
        auto r = cli.Post("/v1/embeddings", body, "application/json");
        latencies[t].push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
        if (!r || r->status != 200) {
          ++errors;
          std::lock_guard<std::mutex> lk(err_mu);
          if (first_error.empty())
            first_error = (r ? std::to_string(r->status) + " " + r->body : httplib::to_string(r.error())) +
                          " after " + std::to_string(std::chrono::duration<double>(s - t0).count()) + " s, request " +
                          std::to_string(i) + " of client " + std::to_string(t);
        } else {
          inputs += n;
        }
      }
    });
  for (auto& c : clients) c.join();
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::string metrics = server.metrics().render({});
  server.shutdown();
  serving.join();

  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  ASSERT_FALSE(all.empty());
  auto pct = [&](double q) { return all[std::min(all.size() - 1, static_cast<size_t>(q * all.size()))]; };
  // Mean batch size from the metrics text.
  auto value_of = [&](const std::string& name) {
    auto p = metrics.find("\n" + name + " ");
    return p == std::string::npos ? 0.0 : std::atof(metrics.c_str() + p + name.size() + 2);
  };
  double batches = value_of("dlrt_batch_size_count"), batch_inputs = value_of("dlrt_batch_size_sum");
  std::printf("[ load     ] %d clients, %.1f s: %zu requests, %zu inputs, %d errors\n", kClients, wall, all.size(),
              inputs.load(), errors.load());
  std::printf("[ load     ] latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", pct(0.5), pct(0.9), pct(0.99),
              all.back());
  std::printf("[ load     ] throughput: %.1f requests/s, %.1f inputs/s; %.0f batches, mean batch %.1f inputs\n",
              all.size() / wall, inputs.load() / wall, batches, batches > 0 ? batch_inputs / batches : 0.0);
  EXPECT_EQ(errors.load(), 0) << "first error: " << first_error;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dlrt::embed
