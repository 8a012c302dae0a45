// dlrt serve's models as probes see them: each model's state and the
// server's, and the handlers of /health, /ready, /live, /metrics and TEI's GET / and /ping
// (handlers.h). Which model a request goes to is call.cpp's.
#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/serve/handlers.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

std::string iso_time(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// /health's fields of one state, with the model's name and sizes when it serves.
json health_json(const HealthInfo& h, const ModelRef& ref) {
  json j = {{"status", h.status},     {"backend", h.backend}, {"device", h.device},
            {"degraded", h.degraded}, {"since", h.since},     {"reason", h.reason}};
  if (ref.model) {
    j["model"] = ref.name;
    j["dimension"] = ref.model->dimension();
    j["max_tokens"] = ref.model->max_length();
  }
  return j;
}

// One model's /health fields: its name whether it serves or not.
json model_health_json(const HealthInfo& h, const ModelRef& ref) {
  json j = health_json(h, ref);
  j["model"] = ref.name;
  return j;
}

}  // namespace

HealthInfo EmbedServer::model_state(const ModelRef& ref) const {
  HealthInfo h;
  const std::shared_ptr<const EmbedModel>& m = ref.model;
  const std::string& device_error = ref.device_error;
  const std::string& load_error = ref.load_error;
  if (m) {
    dlrt::RunReport p = m->placement();
    h.backend = "cpu";
    h.device = "cpu:0";
    for (const auto& part : p.partitions) {
      if (part.backend != "cpu") {
        h.backend = part.backend;
        h.device = part.device;
      }
      if (part.degraded && !h.degraded) {
        h.degraded = true;
        h.reason = part.reason;
      }
    }
    if (!device_error.empty() && !h.degraded) {
      h.degraded = true;
      h.reason = "strict mode: the last batch failed: " + device_error;
    }
  }
  if (!m && !load_error.empty()) {
    h.status = "failed";
    h.http_status = 503;
    h.reason = load_error;
  } else if (!m) {
    h.status = "loading";
    h.http_status = 503;
    h.reason = "loading and compiling the model";
  } else if (h.degraded) {
    h.status = h.reason.rfind("warm start", 0) == 0 ? "warming" : "degraded";
  } else {
    h.status = "ok";
  }
  return h;
}

void EmbedServer::stamp_since(const std::string& key, HealthInfo& h) const {
  if (draining_.load()) {
    h.status = "draining";
    h.http_status = 503;
    if (h.reason.empty()) h.reason = "shutting down: finishing in-flight requests, refusing new ones";
  }
  std::lock_guard<std::mutex> lk(mu_);
  const std::string state = h.status + "|" + h.backend + "|" + h.device + "|" + h.reason;
  auto& [last, since] = health_since_[key];
  if (state != last) {
    last = state;
    since = std::chrono::system_clock::now();
  }
  h.since = iso_time(since);
}

HealthInfo EmbedServer::health() const {
  const std::vector<ModelRef> all = registry_.all();
  HealthInfo h = model_state(all.front());  // the default's backend and device
  if (all.size() > 1) {
    // Several models: loading while any loads, failed when all failed,
    // otherwise the worst of those serving, degraded when some failed.
    std::vector<std::string> loading, failed, degraded;
    std::string warming;
    for (const ModelRef& r : all) {
      const HealthInfo m = model_state(r);
      if (h.backend.empty() && !m.backend.empty()) h.backend = m.backend, h.device = m.device;
      if (m.status == "loading") loading.push_back(r.name);
      else if (m.status == "failed") failed.push_back("model " + r.name + " failed to load: " + m.reason);
      else if (m.status == "warming" && warming.empty()) warming = "model " + r.name + ": " + m.reason;
      else if (m.status == "degraded") degraded.push_back("model " + r.name + ": " + m.reason);
    }
    auto join = [](const std::vector<std::string>& v) {
      std::string out;
      for (const auto& x : v) out += (out.empty() ? "" : "; ") + x;
      return out;
    };
    h.http_status = 200;
    h.degraded = !degraded.empty() || !failed.empty();
    if (!loading.empty()) {
      h.status = "loading";
      h.http_status = 503;
      h.reason = "loading " + std::to_string(loading.size()) + " of " + std::to_string(all.size()) + " models: " +
                 join(loading);
    } else if (failed.size() == all.size()) {
      h.status = "failed";
      h.http_status = 503;
      h.reason = join(failed);
    } else if (!warming.empty()) {
      h.status = "warming";
      h.reason = warming;
    } else if (h.degraded) {
      h.status = "degraded";
      failed.insert(failed.end(), degraded.begin(), degraded.end());
      h.reason = join(failed);
    } else {
      h.status = "ok";
      h.reason.clear();
    }
  }
  stamp_since("", h);
  return h;
}

std::optional<HealthInfo> EmbedServer::model_health(const std::string& name) const {
  std::optional<ModelRef> ref = registry_.find(name);
  if (!ref) return std::nullopt;
  HealthInfo h = model_state(*ref);
  stamp_since("model:" + ref->config.name, h);
  return h;
}

Reply handle_health(Call& c) {
  const EmbedServer& server = c.server();
  Reply r;
  if (const std::string& name = server_util::path_model(); !name.empty()) {  // /models/NAME/health: that model's
    std::optional<ModelRef> ref = server.models().find(name);
    if (!ref) {
      c.model_named("", &r);  // the 404 naming the served models
      return r;
    }
    const HealthInfo h = *server.model_health(name);
    r.status = h.http_status;
    r.body = model_health_json(h, *ref).dump(-1, ' ', false, json::error_handler_t::replace);
    return r;
  }
  // The server's, the default model's name and sizes, then each model's.
  const HealthInfo h = server.health();
  const std::vector<ModelRef> all = server.models().all();
  json j = health_json(h, all.front());
  json models = json::array();
  for (const ModelRef& ref : all) models.push_back(model_health_json(*server.model_health(ref.config.name), ref));
  j["models"] = std::move(models);
  r.status = h.http_status;
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

Reply handle_metrics(Call& c) {
  const EmbedServer& server = c.server();
  MetricsGauges g;
  for (const ModelRef& ref : server.models().all()) {
    ModelGauges mg;
    mg.model = ref.name;
    if (ref.batcher) {
      mg.queue_depth = ref.batcher->queue_depth();
      mg.batches_running = ref.batcher->batches_running();
    }
    const HealthInfo h = server.model_state(ref);
    mg.ready = ref.model != nullptr;
    mg.failed = h.status == "failed";
    mg.degraded = h.degraded;
    g.queue_depth += mg.queue_depth;
    g.batches_running += mg.batches_running;
    if (!mg.model.empty()) g.models.push_back(std::move(mg));
  }
  g.requests_in_flight = server.requests_in_flight();
  g.degraded = server.health().degraded;
  g.ready = server.models().default_model().model != nullptr;
  g.draining = server.draining();
  Reply r;
  r.body = server.metrics().render(g);
  r.content_type = "text/plain; version=0.0.4";
  return r;
}

// Readiness and liveness for a load balancer or Kubernetes' probes.
Reply handle_ready(Call& c) {
  const HealthInfo h = c.server().health();
  const bool ready = h.status == "ok" || h.status == "degraded";
  Reply r;
  r.status = ready ? 200 : 503;
  r.body = json({{"ready", ready}, {"status", h.status}}).dump();
  return r;
}

Reply handle_live(Call& c) {
  const HealthInfo h = c.server().health();
  Reply r;
  r.status = h.status == "failed" ? 503 : 200;
  r.body = json({{"live", r.status == 200}, {"status", h.status}}).dump();
  return r;
}

Reply handle_tei_health(Call& c) {
  const std::string& name = server_util::path_model();
  const std::optional<HealthInfo> h = name.empty() ? c.server().health() : c.server().model_health(name);
  Reply r;
  if (!h) {
    c.model_named("", &r);  // the 404 naming the served models
    return r;
  }
  if (h->http_status == 200) {
    r.content_type = "text/plain";
    return r;
  }
  return c.error(503, "Unhealthy", "unhealthy");
}

}  // namespace dlrt::embed
