// Settings of `dlrt serve`: a TOML file, then environment variables, then
// command-line flags (each overrides the one before), then validation.
//
// File layout (the top-level keys are the runtime's own, see
// src/runtime/config.h; the [serve] table belongs to this server):
//
//   device    = "gpu,cpu"        # dlrt device spec            env DLRT_DEVICE     flag --device
//   strict    = false            # no CPU fallback: 503 instead env DLRT_STRICT     flag --strict
//   threads   = 0                # intra-op threads (0 = cores) env DLRT_THREADS    flag --threads
//   cache_dir = "/var/cache/dlrt"                               env DLRT_CACHE_DIR  flag --cache-dir
//   max_tensor_mb = 4096         # largest tensor of a run     env DLRT_MAX_TENSOR_MB flag --max-tensor-mb
//   cpu_precision = "auto"       # f32, bf16, bf16x3 or auto   env DLRT_CPU_PRECISION flag --cpu-precision
//   [serve]
//   model = "/models/all-MiniLM-L6-v2"                          env DLRT_SERVE_MODEL flag --model
//   (several models: `model = "NAME=DIR"`, --model NAME=DIR repeated, DLRT_SERVE_MODEL=
//   "NAME=DIR,NAME=DIR", or [[serve.models]] tables {name, path, max_input_tokens?};
//   default_model names the one a request that names none gets, else the first)
//   host = "127.0.0.1"
//   port = 8080
//   ...every ServiceConfig field below, env DLRT_SERVE_<KEY>, flag --<key with '-'>.
//
// An unknown key at the top level or in [serve] is an error (typos are
// caught); other tables are left to other applications.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed {

// One model of a server that serves several by name (--model NAME=DIR, [[serve.models]]).
struct ServedModelConfig {
  std::string name;             // what requests name it by: OpenAI's "model", /models/NAME/...
  std::string path;             // model folder
  size_t max_input_tokens = 0;  // 0: the server's max_input_tokens
};

struct ServiceConfig {
  // Runtime (top-level keys).
  std::string device;     // "" = DLRT_DEVICE / auto
  bool strict = false;    // accelerator failure -> 503 instead of CPU fallback
  int threads = 0;        // intra-op threads per run, 0 = one per core
  std::string cache_dir;  // compiled-blob cache ("" = dlrt's default)
  size_t max_tensor_mb = 0;  // largest tensor a run may allocate, MiB (0 = the runtime's default)
  std::string cpu_precision;  // SessionOptions::cpu_precision ("" = the runtime's default, f32)
  // [serve]
  std::string model;       // model folder (sentence-transformers / HF ONNX export)
  std::string model_name;  // name reported in responses ("" = the folder's)
  std::string default_prompt_name;  // prompt for requests that name none ("" = the folder's default_prompt_name)
  // Named models (instead of `model`); the first, or default_model, answers
  // requests that name none.
  std::vector<ServedModelConfig> models;
  std::string default_model;
  std::string host = "127.0.0.1";
  int port = 8080;              // 0 = any free port (printed at startup)
  bool warm_start = false;      // serve on CPU while the accelerator compiles
  int pool_size = 2;            // batches running at once
  int http_threads = 64;        // connections served at once (keep-alive clients hold one each)
  size_t max_batch_size = 32;   // inputs per batch
  size_t max_batch_tokens = 8192;  // padded tokens per batch (inputs x longest)
  size_t max_batch_mb = 1024;      // a run's memory budget: padded tokens x the model's widest per-token output row
  int max_wait_ms = 2;          // how long a batch waits to fill up
  size_t max_queue = 4096;      // inputs waiting; beyond it requests get 429
  size_t max_body_bytes = 2 << 20;       // request body; beyond it 413
  size_t max_inputs_per_request = 0;     // beyond it 413; 0: inputs_per_request_limit's default
  size_t max_request_tokens = 300000;    // tokens of one request's inputs (OpenAI's bound); beyond it 413
  size_t max_input_tokens = 0;  // per input, [CLS]/[SEP] included; 0 = the model's maximum
  bool truncate = true;         // cut long inputs to the limit (as TEI, sentence-transformers); false: 413
  int request_timeout_ms = 60000;  // a request's deadline: beyond it 504, its model run stops
  int drain_timeout_ms = 30000;    // graceful shutdown: in-flight requests get this long
  int read_timeout_s = 5;          // a connection silent this long while sending a request is closed
  // Security and operations.
  std::string api_key;            // non-empty: every route but /health needs "Authorization: Bearer <key>"
  std::string cors_allow_origin;  // "*" or comma-separated origins allowed to call from a browser ("" = none)
  std::string tls_cert, tls_key;  // PEM files: serve HTTPS (both or neither)
  bool json_logs = false;         // log lines as JSON objects
  bool access_log = true;         // one log line per request
};

// The models to serve, the default first: `models` (default_model moved to
// the front), or the one bare `model` folder named `model_name` ("": the
// folder's name, known once loaded).
std::vector<ServedModelConfig> served_models(const ServiceConfig& config);

// A served model's name: 1-128 characters of [A-Za-z0-9._:/-], starting with a letter or digit.
bool valid_model_name(const std::string& name);

// Every settable key: its name in the file ("port"), whether it is a
// top-level (runtime) key or a [serve] key, and its env var and flag.
struct ServiceConfigKey {
  std::string key;
  bool top_level = false;
  bool is_switch = false;  // a bool: --flag alone means true; --flag=B / --flag B set it
  std::string env;         // DLRT_SERVE_PORT
  std::string flag;        // "port" (for --port)
  std::string help;
};
const std::vector<ServiceConfigKey>& service_config_keys();

// Sets one key from text ("8080", "true", "gpu"); `source` labels errors
// ("DLRT_SERVE_PORT", "--port", "serve.toml: serve.port"). kInvalidArgument
// for an unknown key or a bad value.
Status set_service_config_value(ServiceConfig& config, const std::string& key, const std::string& value,
                                const std::string& source);

// Applies a TOML document (text; `path` labels messages) on top of `config`.
Status apply_service_config_toml(ServiceConfig& config, const std::string& text, const std::string& path);
// Same from a file (kIoError when unreadable).
Status apply_service_config_file(ServiceConfig& config, const std::string& path);

// Applies every environment variable of service_config_keys() that `getenv`
// returns non-empty.
using GetEnv = std::function<const char*(const char*)>;
Status apply_service_config_env(ServiceConfig& config, const GetEnv& getenv);

// The inputs one request may send: max_inputs_per_request, else OpenAI's
// 2048 (what OpenAI clients send at most), within max_queue.
inline size_t inputs_per_request_limit(const ServiceConfig& c) {
  return c.max_inputs_per_request ? c.max_inputs_per_request : std::min<size_t>(2048, c.max_queue);
}

// Consistency checks (ranges, max_inputs_per_request <= max_queue, ...).
Status validate_service_config(const ServiceConfig& config);

// file (when non-empty) -> TEI's environment variables (tei_compat.h) -> DLRT_*
// env -> flags (key -> value; "true" for switches) -> validate.
Result<ServiceConfig> resolve_service_config(const std::string& file, const GetEnv& getenv,
                                             const std::vector<std::pair<std::string, std::string>>& flags);

}  // namespace dlrt::embed
