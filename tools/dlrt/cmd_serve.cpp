// dlrt serve --model DIR: the embedding server (apps/embed/serve/server.h).
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "core/env.h"
#include "embed/models/embedder.h"
#include "embed/serve/docs_page.h"
#include "embed/serve/server.h"
#include "embed/serve/service_config.h"
#include "embed/models/token_inputs.h"
#include "embed/serve/tei_compat.h"

namespace dlrt::cli {
namespace {

using embed::ServiceConfig;

std::string help_text() {
  std::string s =
      "usage: dlrt serve --model DIR [--device SPEC] [--host 127.0.0.1] [--port 8080] [--config FILE] [options]\n"
      "       dlrt serve --model NAME=DIR --model NAME=DIR ... [options]   (several models in one server)\n"
      "\n"
      "Serves sentence embeddings of a sentence-transformers / Hugging Face ONNX export folder over HTTP/1.1:\n"
      "  POST /v1/embeddings  OpenAI-compatible {\"input\": \"text\" | [\"text\", ...] | token ids, \"dimensions\"?}\n"
      "                       (also POST /embeddings); unit vectors unless \"normalize\": false\n"
      "  POST /embed          TEI-style {\"inputs\": \"text\" | [...], \"normalize\"? (default true), \"truncate\"?,\n"
      "                       \"prompt_name\"?}\n"
      "  POST /embed_sparse   TEI-style, sparse (SPLADE) folders {\"inputs\", \"top_k\"?} -> [[{index, value}, ...]]\n"
      "  POST /embed_all      TEI-style per-token vectors {\"inputs\", \"is_query\"? (multi-vector folders)}\n"
      "  POST /similarity     TEI-style {\"inputs\": {\"source_sentence\", \"sentences\"}} -> scores\n"
      "  POST /tokenize       TEI-style {\"inputs\": \"text\" | [...]} -> tokens\n"
      "  POST /decode         TEI-style {\"ids\": [...] | [[...], ...]} -> texts\n"
      "  POST /rerank         TEI-style {\"query\", \"texts\"} (cross-encoders, LLM rerankers, multi-vector)\n"
      "  POST /v1/rerank      Cohere/Jina-style {\"query\", \"documents\", \"top_n\"?}\n"
      "  POST /v2/rerank      Cohere v2 (cohere.ClientV2): as /v1/rerank, with \"meta\"\n"
      "  POST /v2/embed       Cohere v2 (cohere.ClientV2) {\"input_type\", \"texts\" | \"images\" | \"inputs\",\n"
      "                       \"embedding_types\"?}; POST /v1/embed, Cohere v1's\n"
      "  POST /predict        TEI-style classifiers {\"inputs\": text | [a, b] | [...]}\n"
      "  GET  /v1/models      OpenAI's model list;  GET /info  TEI's model info\n"
      "  GET  /health         {status, backend, device, degraded, since, reason};  GET /ready, /live  probes\n"
      "  GET  /metrics        Prometheus text\n"
      "  GET  /openapi.json   the OpenAPI document (also GET /api-doc/openapi.json)\n"
      "  GET  /docs           " + embed::docs_page_summary() + "\n"
      "  POST /, /invocations TEI's root routes: /embed, /rerank or /predict by the model's kind;\n"
      "  GET  /, /ping        TEI's health\n"
      "Several models: a request picks one by its \"model\" field or a /models/NAME/ route prefix\n"
      "(/models/NAME/embed, ...); none picks the first (or --default-model). They share pool_size\n"
      "and the memory limit; one that fails to load is reported on /health and the others serve.\n"
      "The model is loaded, compiled and run once before the server reports ready (with --warm-start\n"
      "it serves on the CPU while the accelerator compiles). SIGTERM or SIGINT stops it gracefully:\n"
      "new requests are refused, in-flight ones finish; a second signal exits at once.\n"
      "\n"
      "Settings come from the TOML file (--config FILE, else $DLRT_CONFIG when set; top-level device,\n"
      "strict, threads, cache_dir, max_tensor_mb and a [serve] table with the other keys), then\n"
      "environment variables, then these flags (each overrides the one before); see\n"
      "docs/serve-settings.md.\n"
      "\n"
      "options (flag, env var, meaning):\n"
      "  --config FILE         TOML settings file\n";
  for (const auto& k : embed::service_config_keys()) {
    std::string flag = "  --" + k.flag + (k.is_switch ? "[=B]" : " V");
    if (flag.size() < 24) flag.resize(24, ' ');
    else flag += ' ';
    s += flag + k.env + ": " + k.help + "\n";
  }
  s += "  (B: true/false, 1/0, yes/no or on/off; a boolean flag alone means true, --no-FLAG means false,\n"
       "   e.g. --no-truncate)\n"
       "text-embeddings-inference's launcher flags work where dlrt has the setting:\n";
  for (const auto& t : embed::tei_options()) {
    if (!*t.key) continue;
    std::string flag = t.key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (flag != t.flag) s += std::string("  --") + t.flag + " = --" + flag + "\n";
  }
  s += "  -p = --port; TEI's variables MODEL_ID, AUTO_TRUNCATE, ... are read under the DLRT_ ones\n"
       "  (docs/migrate.md); its other flags are refused with the reason\n"
       "  -h, --help            this help\n"
       "\n"
       "exit codes: 0 ok (stopped by a signal), 1 runtime error (cannot listen, warm-up failed), 2 usage\n"
       "            error, 3 missing, invalid or unsupported model folder, 4 requested device unavailable\n"
       "            in strict mode\n";
  return s;
}

// The model of folder `path` in `model`, opened as its kind (open_model:
// a reranker serves /rerank and /predict, a multi-vector model /embed_all and
// /rerank by MaxSim, an embedding model the embedding routes).
Status load_model(const std::string& path, const embed::EmbedderOptions& eo,
                  std::shared_ptr<const embed::EmbedModel>& model) {
  DLRT_ASSIGN_OR_RETURN(model, embed::open_model(path, eo));
  return Status::Ok();
}

// Why the server's default_prompt_name cannot serve `model` ("" when it can:
// unset, or a prompt of the model).
std::string default_prompt_error(const ServiceConfig& config, const embed::EmbedModel& model) {
  const std::string& name = config.default_prompt_name;
  if (name.empty() || model.prompt(name)) return "";
  std::string names;
  for (const std::string& p : model.prompt_names()) names += (names.empty() ? "" : ", ") + p;
  return "default_prompt_name '" + name + "' is not a prompt of the model (" +
         (names.empty() ? "it has none" : "it has " + names) + ")";
}

int serve_fail(const std::string& message, int code) {
  std::fprintf(stderr, "dlrt serve: error: %s\n", message.c_str());
  return code;
}

// --config (or DLRT_CONFIG), the environment and the flags as one
// ServiceConfig; kExitOk or the error's code.
int resolve_config(const Args& args, ServiceConfig& config) {
  std::string config_file = args.get("config");
  if (config_file.empty()) {
    if (const char* c = env::get("DLRT_CONFIG"); c && *c) config_file = c;
  } else {
    setenv("DLRT_CONFIG", config_file.c_str(), 1);  // the runtime reads the same file
  }
  std::vector<std::pair<std::string, std::string>> flags;
  for (const auto& k : embed::service_config_keys()) {
    if (k.key == "model") {
      for (const std::string& v : args.all(k.flag)) flags.emplace_back(k.key, v);  // repeatable
    } else if (args.has(k.flag)) {
      flags.emplace_back(k.key, args.get(k.flag));
    }
  }
  auto resolved = embed::resolve_service_config(config_file, [](const char* n) { return env::get(n); }, flags);
  if (!resolved.ok()) {
    if (resolved.status().code() == StatusCode::kIoError) return serve_fail(resolved.status().message(), kExitUsage);
    return usage_error("serve", resolved.status().message());
  }
  config = *resolved;
  return kExitOk;
}

// Waits for SIGTERM / SIGINT (blocked in every thread) until `done`: the
// first drains the server, a second one or the drain timeout exits.
void watch_signals(const sigset_t& sigs, const std::atomic<bool>& done, embed::EmbedServer& server,
                   embed::ServeLog& log, const ServiceConfig& config) {
  timespec slice{0, 200'000'000};
  bool draining = false;
  auto drain_start = std::chrono::steady_clock::now();
  while (!done.load()) {
    int sig = sigtimedwait(&sigs, nullptr, &slice);
    if (sig == SIGTERM || sig == SIGINT) {
      if (draining) {
        log.warning("second signal: exiting now");
        std::_Exit(kExitRuntimeError);
      }
      draining = true;
      drain_start = std::chrono::steady_clock::now();
      log.warning(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": finishing in-flight requests, refusing new ones");
      server.shutdown();
    }
    if (draining && std::chrono::steady_clock::now() - drain_start > std::chrono::milliseconds(config.drain_timeout_ms)) {
      log.error("requests still running after " + std::to_string(config.drain_timeout_ms) +
                " ms (drain_timeout_ms): exiting");
      std::_Exit(kExitRuntimeError);
    }
  }
}

embed::EmbedderOptions served_model_options(const ServiceConfig& config) {
  embed::EmbedderOptions eo;
  eo.device = config.device;
  eo.strict = config.strict;
  eo.threads = config.threads;
  eo.warm_start = config.warm_start;
  eo.max_tensor_bytes = static_cast<uint64_t>(config.max_tensor_mb) << 20;
  eo.cpu_precision = config.cpu_precision;
  // The server batches concurrent requests: ask accelerators to compile for
  // throughput (OpenVINO's PERFORMANCE_HINT; declined on OpenVINO's CPU device,
  // see docs/openvino.md).
  eo.backend_options["default_performance_hint"] = "THROUGHPUT";
  return eo;
}

struct LoadOutcome {
  int first_failure = kExitOk;  // the exit code of the first model that failed
  size_t served = 0;
  bool stopped = false;  // the server was stopped while loading
  std::string ready_names;  // the served models, in order
};

// Each model in turn, the default first; one that cannot be loaded is
// reported (its /health: failed) and the others serve.
LoadOutcome load_models(embed::EmbedServer& server, embed::ServeLog& log, const ServiceConfig& config,
                        const std::vector<embed::ServedModelConfig>& models) {
  const embed::EmbedderOptions eo = served_model_options(config);
  LoadOutcome out;
  for (const embed::ServedModelConfig& spec : models) {
    const std::string label = spec.name.empty() ? spec.path : "model " + spec.name + " (" + spec.path + ")";
    auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const embed::EmbedModel> model;
    Status loaded = load_model(spec.path, eo, model);
    int code = kExitOk;
    if (!loaded.ok()) {
      log.error("cannot load " + label + ": " + loaded.to_string());
      code = exit_code_for_folder_status(loaded);
    } else if (Status s = embed::warm_up(*model); !s.ok()) {
      loaded = s;
      log.error("warm-up run of " + label + " failed: " + s.to_string());
      code = exit_code_for_run_status(s);
    } else if (std::string e = default_prompt_error(config, *model); !e.empty()) {
      loaded = InvalidArgument(e);
      log.error(label + ": " + e);
      code = kExitUsage;
    }
    if (code != kExitOk) {
      server.set_load_error(spec.name, loaded.message());
      if (out.first_failure == kExitOk) out.first_failure = code;
      continue;
    }
    if (server.draining()) {
      out.stopped = true;
      return out;
    }
    double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    server.set_model(spec.name, model);
    ++out.served;
    out.ready_names += (out.ready_names.empty() ? "" : ", ") + (spec.name.empty() ? model->model_name() : spec.name);
    embed::HealthInfo h = *server.model_health(spec.name);
    log.info("ready in " + std::to_string(static_cast<long long>(load_ms)) + " ms: model " +
             (spec.name.empty() ? model->model_name() : spec.name) + " (dimension " + std::to_string(model->dimension()) +
             ", max " + std::to_string(model->max_length()) + " tokens) on " + h.device + " (" + h.status + ")" +
             (h.reason.empty() ? "" : ": " + h.reason));
  }
  return out;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  std::vector<FlagSpec> specs = {{"config", true, false}};
  for (const auto& k : embed::service_config_keys())
    specs.push_back({k.flag, !k.is_switch, k.key == "model", k.is_switch});
  // TEI's launcher flags, -p and --no-<switch> in dlrt's spelling (tei_compat.h).
  auto translated = embed::translate_serve_args(std::vector<std::string>(argv + std::min(argc, 2), argv + argc));
  if (!translated.ok()) return usage_error("serve", translated.status().message());
  std::vector<char*> args_in = {argv[0], argv[1]};
  for (std::string& a : *translated) args_in.push_back(a.data());
  // A misspelt TEI flag is suggested as itself (--max-clint-batch-size: --max-client-batch-size).
  std::vector<std::string> tei_flags;
  for (const auto& t : embed::tei_options()) tei_flags.push_back(t.flag);
  auto parsed = parse_args(static_cast<int>(args_in.size()), args_in.data(), 2, specs, tei_flags);
  if (!parsed.ok()) return usage_error("serve", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(help_text().c_str(), stdout);
    return kExitOk;
  }
  if (!args.positional.empty())
    return usage_error("serve", "unexpected argument '" + args.positional[0] + "' (the model folder goes after --model)");

  ServiceConfig config;
  if (int rc = resolve_config(args, config); rc != kExitOk) return rc;
  if (!config.cache_dir.empty()) setenv("DLRT_CACHE_DIR", config.cache_dir.c_str(), 1);

  // Signals go to one thread (sigwait); block them before any thread starts.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  embed::EmbedServer server(config);
  if (Status s = server.bind(); !s.ok()) return serve_fail(s.message(), kExitRuntimeError);
  embed::ServeLog& log = server.log();
  // DLRT_* variables that are not dlrt's (a misspelt setting): once, at start.
  std::vector<std::string> serve_variables;
  for (const auto& k : embed::service_config_keys()) serve_variables.push_back(k.env);
  for (const std::string& w : env::unknown_variable_warnings(env::names_with_prefix("DLRT_"), serve_variables))
    log.warning(w);
  const std::vector<embed::ServedModelConfig> models = embed::served_models(config);
  std::string loading;
  for (const auto& m : models) loading += (loading.empty() ? "" : ", ") + (m.name.empty() ? m.path : m.name + "=" + m.path);
  log.info(std::string("listening on ") + (config.tls_cert.empty() ? "http" : "https") + "://" + config.host + ":" +
           std::to_string(server.port()) + " (loading " + loading + ")");

  std::atomic<bool> done{false};
  std::thread signal_thread([&] { watch_signals(sigs, done, server, log, config); });
  std::thread http_thread([&] { server.run(); });
  auto finish = [&](int code) {
    server.shutdown();
    http_thread.join();
    done.store(true);
    signal_thread.join();
    return code;
  };

  // The server exits when no model can be loaded.
  const LoadOutcome loaded = load_models(server, log, config, models);
  if (loaded.stopped) return finish(kExitOk);
  if (loaded.served == 0) return finish(loaded.first_failure);
  // One line once every model serves: what scripts wait for (each "ready in" is one model's).
  if (loaded.served == models.size())
    log.info("all models ready (" + std::to_string(loaded.served) + " of " + std::to_string(models.size()) +
             "): " + loaded.ready_names);
  else
    log.warning("serving " + std::to_string(loaded.served) + " of " + std::to_string(models.size()) +
                " models; /health names the ones that failed");

  http_thread.join();
  done.store(true);
  signal_thread.join();
  log.info("stopped (" + std::to_string(server.metrics().requests_total()) + " requests, " +
           std::to_string(server.metrics().errors_total()) + " errors)");
  return kExitOk;
}

}  // namespace dlrt::cli
