// A dlrt serve server on loopback for the server tests (server_test.cpp,
// server_deadline_test.cpp): the fake model by default, serving on a thread.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "embed/serve/server.h"
#include "fake_model.h"

namespace dlrt::embed::testing {

// A server on 127.0.0.1:<any port> with the fake model, serving on a thread.
struct TestServer {
  explicit TestServer(ServiceConfig c = {}, bool with_model = true) {
    c.host = "127.0.0.1";
    c.port = 0;
    if (c.model.empty()) c.model = "fake";
    server = std::make_unique<EmbedServer>(c);
    Status s = server->bind();
    EXPECT_TRUE(s.ok()) << s.to_string();
    model = std::make_shared<FakeModel>();
    if (with_model) server->set_model(model);
    thread = std::thread([this] { server->run(); });
  }
  ~TestServer() { stop(); }
  void stop() {
    if (!thread.joinable()) return;
    model->open_gate();
    server->shutdown();
    thread.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server->port());
    c.set_read_timeout(20, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }
  httplib::Result post(const std::string& path, const std::string& body) const {
    return client().Post(path.c_str(), body, "application/json");
  }
  httplib::Result get(const std::string& path) const { return client().Get(path.c_str()); }

  std::unique_ptr<EmbedServer> server;
  std::shared_ptr<FakeModel> model;
  std::thread thread;
};

inline nlohmann::json body_json(const httplib::Result& r) {
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r->body;
  return j;
}

}  // namespace dlrt::embed::testing
