#include "embed/serve/service_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <limits>

#include <toml++/toml.h>

#include "dlrt/cpu_precision.h"
#include "dlrt/session.h"
#include "embed/tokenizer/file_util.h"
#include "embed/serve/tei_compat.h"

namespace dlrt::embed {
namespace {

std::string upper_env(const std::string& key) {
  std::string s = "DLRT_SERVE_";
  for (char c : key) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string dashed(std::string key) {
  for (auto& c : key)
    if (c == '_') c = '-';
  return key;
}

ServiceConfigKey serve_key(const std::string& key, const std::string& help, bool is_switch = false) {
  return {key, false, is_switch, upper_env(key), dashed(key), help};
}

Status bad_value(const std::string& source, const std::string& value, const std::string& want) {
  return InvalidArgument(source + ": '" + value + "' is not " + want);
}

Status parse_bool(const std::string& source, const std::string& v, bool& out) {
  std::string s;
  for (char c : v) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "true" || s == "yes" || s == "on") return (out = true), Status::Ok();
  if (s == "0" || s == "false" || s == "no" || s == "off") return (out = false), Status::Ok();
  return bad_value(source, v, "a boolean (true/false/1/0)");
}

template <typename T>
Status parse_number(const std::string& source, const std::string& v, T min, T max, T& out) {
  T x{};
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || v.empty() || x < min || x > max)
    return bad_value(source, v, "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  out = x;
  return Status::Ok();
}

Status parse_int(const std::string& source, const std::string& v, int min, int max, int& out) {
  return parse_number<int>(source, v, min, max, out);
}
Status parse_size(const std::string& source, const std::string& v, size_t min, size_t& out) {
  return parse_number<size_t>(source, v, min, size_t{1} << 40, out);
}

bool toml_to_text(const toml::node& n, std::string& out);

// "NAME=DIR" or "NAME=DIR,NAME=DIR,...": appends them to `out` and returns
// true; false when `text` is a bare folder (no '=', or an existing folder of
// that name). An error for a malformed list.
Result<bool> parse_named_models(const std::string& text, const std::string& source,
                                std::vector<ServedModelConfig>& out) {
  std::error_code ec;
  if (text.find('=') == std::string::npos || std::filesystem::is_directory(text, ec)) return false;
  std::vector<ServedModelConfig> parsed;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq + 1 == item.size() || !valid_model_name(item.substr(0, eq)))
      return InvalidArgument(source + ": '" + item +
                             "' is not NAME=DIR (NAME: letters, digits and ._:/-, starting with a letter or digit; "
                             "several are separated by commas)");
    parsed.push_back({item.substr(0, eq), item.substr(eq + 1), 0});
    start = end + 1;
  }
  out.insert(out.end(), parsed.begin(), parsed.end());
  return true;
}

// A bare folder once per source (a second one would silently replace the
// first); named models accumulate.
Status set_model_value(ServiceConfig& c, const std::string& v, const std::string& source) {
  DLRT_ASSIGN_OR_RETURN(bool named, parse_named_models(v, source, c.models));
  if (named) return Status::Ok();
  if (!c.model.empty())
    return InvalidArgument("'" + source + "' given more than once: a bare model folder serves one model; to serve "
                           "several, name each: --model NAME=DIR");
  c.model = v;
  return Status::Ok();
}

// One [[serve.models]] table.
Status apply_models_table(ServiceConfig& config, const toml::node& node, const std::string& where) {
  const toml::array* list = node.as_array();
  if (!list) return InvalidArgument(where + ": must be an array of tables ([[serve.models]])");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const toml::table* t = list->get(i)->as_table();
    if (!t) return InvalidArgument(at + ": must be a table with name and path");
    ServedModelConfig m;
    for (const auto& [k, v] : *t) {
      const std::string key(k.str());
      std::string text;
      if (!toml_to_text(v, text)) return InvalidArgument(at + "." + key + ": must be a string, integer or boolean");
      if (key == "name") m.name = text;
      else if (key == "path") m.path = text;
      else if (key == "max_input_tokens") DLRT_RETURN_IF_ERROR(parse_size(at + "." + key, text, 0, m.max_input_tokens));
      else return InvalidArgument(at + "." + key + ": unknown setting (name, path, max_input_tokens)");
    }
    if (!valid_model_name(m.name))
      return InvalidArgument(at + ": 'name' must be 1-128 characters of letters, digits and ._:/-, starting with a "
                                  "letter or digit");
    if (m.path.empty()) return InvalidArgument(at + ": 'path' (the model folder) is missing");
    config.models.push_back(std::move(m));
  }
  return Status::Ok();
}

// TOML scalar -> the text set_service_config_value takes.
bool toml_to_text(const toml::node& n, std::string& out) {
  if (auto s = n.as_string()) return (out = s->get()), true;
  if (auto i = n.as_integer()) return (out = std::to_string(i->get())), true;
  if (auto b = n.as_boolean()) return (out = b->get() ? "true" : "false"), true;
  return false;
}

}  // namespace

bool valid_model_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':' && c != '/' && c != '-')
      return false;
  return true;
}

std::vector<ServedModelConfig> served_models(const ServiceConfig& config) {
  if (config.models.empty()) return {{config.model_name, config.model, 0}};
  std::vector<ServedModelConfig> out = config.models;
  auto it = std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.name == config.default_model; });
  if (it != out.end()) std::rotate(out.begin(), it, it + 1);
  return out;
}

const std::vector<ServiceConfigKey>& service_config_keys() {
  static const std::vector<ServiceConfigKey> keys = {
      {"device", true, false, "DLRT_DEVICE", "device", "device spec: auto, cpu, gpu, npu, backend[:device], comma list"},
      {"strict", true, true, "DLRT_STRICT", "strict", "no CPU fallback: failed accelerator runs answer 503"},
      {"threads", true, false, "DLRT_THREADS", "threads", "intra-op threads per run (0 = one per core)"},
      {"cache_dir", true, false, "DLRT_CACHE_DIR", "cache-dir", "compiled-blob cache folder"},
      {"max_tensor_mb", true, false, "DLRT_MAX_TENSOR_MB", "max-tensor-mb",
       "largest tensor a run may allocate, MiB; beyond it the run fails (default: half the memory available: physical, cgroup, RLIMIT_AS)"},
      {"cpu_precision", true, false, "DLRT_CPU_PRECISION", "cpu-precision",
       "CPU float matmuls: f32 (default), bf16, bf16x3, or auto (the fastest within a bound of f32 on warm-up texts, measured at load)"},
      serve_key("model", "model folder (sentence-transformers / Hugging Face ONNX export); NAME=DIR, repeated, serves several by name"),
      serve_key("default_model", "with several models: the one requests that name none get (default: the first)"),
      serve_key("model_name", "model name in responses (default: the folder's, or the folder above a generic one such as model/ or onnx/)"),
      serve_key("default_prompt_name",
                "prompt of config_sentence_transformers.json for requests that name none (default: the folder's default_prompt_name)"),
      serve_key("host", "address to listen on (default 127.0.0.1)"),
      serve_key("port", "port (default 8080; 0 = any free port, printed at startup)"),
      serve_key("warm_start", "serve on CPU while the accelerator compiles", true),
      serve_key("pool_size", "batches running at once (default 2)"),
      serve_key("http_threads", "connections served at once (default 64)"),
      serve_key("max_batch_size", "inputs per batch (default 32)"),
      serve_key("max_batch_tokens", "padded tokens per batch (default 8192)"),
      serve_key("max_batch_mb",
                "memory budget of one model run, MiB: padded tokens x the model's widest per-token output row (default 1024)"),
      serve_key("max_wait_ms", "how long a batch waits to fill up (default 2)"),
      serve_key("max_queue", "inputs waiting before requests get 429 (default 4096)"),
      serve_key("max_body_bytes", "largest request body; beyond it 413 (default 2 MiB)"),
      serve_key("max_inputs_per_request", "inputs per request; beyond it 413 (default 2048, OpenAI's, at most max_queue)"),
      serve_key("max_request_tokens", "tokens of one request's inputs after truncation; beyond it 413 (default 300000, OpenAI's)"),
      serve_key("max_input_tokens", "tokens per input; beyond it 413 or truncation (0 = model maximum)"),
      serve_key("truncate", "cut inputs longer than the limit (default true); false: refuse them with 413", true),
      serve_key("request_timeout_ms", "a request's deadline: beyond it 504 and its model run stops (default 60000)"),
      serve_key("drain_timeout_ms", "graceful shutdown: time in-flight requests get (default 30000)"),
      serve_key("read_timeout_s", "close a connection silent this long mid-request, seconds (default 5)"),
      serve_key("api_key", "require \"Authorization: Bearer KEY\" on every route but /health (prefer the env var)"),
      serve_key("cors_allow_origin", "origins browsers may call from: \"*\" or a comma list (default none)"),
      serve_key("tls_cert", "PEM certificate (chain) file: serve HTTPS (with tls_key)"),
      serve_key("tls_key", "PEM private key file for tls_cert"),
      serve_key("json_logs", "log lines as JSON objects (ts, level, msg, fields)", true),
      serve_key("access_log", "one log line per request: true or false (default true)", true),
  };
  return keys;
}

Status set_service_config_value(ServiceConfig& c, const std::string& key, const std::string& v,
                                const std::string& source) {
  constexpr int kIntMax = std::numeric_limits<int>::max();
  if (key == "device") return (c.device = v), Status::Ok();
  if (key == "strict") return parse_bool(source, v, c.strict);
  if (key == "threads") return parse_int(source, v, 0, kMaxThreads, c.threads);
  if (key == "cache_dir") return (c.cache_dir = v), Status::Ok();
  if (key == "max_tensor_mb") return parse_size(source, v, 1, c.max_tensor_mb);
  if (key == "cpu_precision") {
    if (!is_cpu_precision(v)) return bad_value(source, v, "f32, bf16, bf16x3 or auto");
    return (c.cpu_precision = v), Status::Ok();
  }
  if (key == "model") return set_model_value(c, v, source);
  if (key == "default_model") return (c.default_model = v), Status::Ok();
  if (key == "model_name") return (c.model_name = v), Status::Ok();
  if (key == "default_prompt_name") return (c.default_prompt_name = v), Status::Ok();
  if (key == "host") {
    if (v.empty()) return bad_value(source, v, "a host name or address");
    return (c.host = v), Status::Ok();
  }
  if (key == "port") return parse_int(source, v, 0, 65535, c.port);
  if (key == "warm_start") return parse_bool(source, v, c.warm_start);
  if (key == "pool_size") return parse_int(source, v, 1, 1024, c.pool_size);
  if (key == "http_threads") return parse_int(source, v, 1, 4096, c.http_threads);
  if (key == "max_batch_size") return parse_size(source, v, 1, c.max_batch_size);
  if (key == "max_batch_tokens") return parse_size(source, v, 1, c.max_batch_tokens);
  if (key == "max_batch_mb") return parse_size(source, v, 1, c.max_batch_mb);
  if (key == "max_wait_ms") return parse_int(source, v, 0, 60000, c.max_wait_ms);
  if (key == "max_queue") return parse_size(source, v, 1, c.max_queue);
  if (key == "max_body_bytes") return parse_size(source, v, 64, c.max_body_bytes);
  if (key == "max_inputs_per_request") return parse_size(source, v, 1, c.max_inputs_per_request);
  if (key == "max_request_tokens") return parse_size(source, v, 1, c.max_request_tokens);
  if (key == "max_input_tokens") return parse_size(source, v, 0, c.max_input_tokens);
  if (key == "truncate") return parse_bool(source, v, c.truncate);
  if (key == "request_timeout_ms") return parse_int(source, v, 1, kIntMax, c.request_timeout_ms);
  if (key == "drain_timeout_ms") return parse_int(source, v, 0, kIntMax, c.drain_timeout_ms);
  if (key == "read_timeout_s") return parse_int(source, v, 1, 300, c.read_timeout_s);
  if (key == "api_key") {
    for (char ch : v)
      if (static_cast<unsigned char>(ch) <= 0x20 || static_cast<unsigned char>(ch) >= 0x7f)
        return InvalidArgument(source + ": the API key must be printable ASCII without spaces");
    return (c.api_key = v), Status::Ok();
  }
  if (key == "cors_allow_origin") return (c.cors_allow_origin = v), Status::Ok();
  if (key == "tls_cert") return (c.tls_cert = v), Status::Ok();
  if (key == "tls_key") return (c.tls_key = v), Status::Ok();
  if (key == "json_logs") return parse_bool(source, v, c.json_logs);
  if (key == "access_log") return parse_bool(source, v, c.access_log);
  return InvalidArgument(source + ": unknown setting '" + key + "'");
}

Status apply_service_config_toml(ServiceConfig& config, const std::string& text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return InvalidArgument(path + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) + ": " +
                           std::string(e.description()));
  }
  auto key_info = [](const std::string& key, bool top) -> const ServiceConfigKey* {
    for (const auto& k : service_config_keys())
      if (k.key == key && k.top_level == top) return &k;
    return nullptr;
  };
  for (const auto& [k, node] : root) {
    std::string key(k.str());
    if (node.is_table()) {
      if (key != "serve") continue;  // another application's table
      for (const auto& [sk, snode] : *node.as_table()) {
        std::string skey(sk.str());
        std::string where = path + ": serve." + skey;
        if (skey == "models") {
          DLRT_RETURN_IF_ERROR(apply_models_table(config, snode, where));
          continue;
        }
        if (!key_info(skey, false)) return InvalidArgument(where + ": unknown setting");
        std::string text_value;
        if (!toml_to_text(snode, text_value)) return InvalidArgument(where + ": must be a string, integer or boolean");
        DLRT_RETURN_IF_ERROR(set_service_config_value(config, skey, text_value, where));
      }
      continue;
    }
    std::string where = path + ": " + key;
    if (!key_info(key, true))
      return InvalidArgument(where + ": unknown top-level setting (server settings go in the [serve] table)");
    std::string text_value;
    if (!toml_to_text(node, text_value)) return InvalidArgument(where + ": must be a string, integer or boolean");
    DLRT_RETURN_IF_ERROR(set_service_config_value(config, key, text_value, where));
  }
  return Status::Ok();
}

Status apply_service_config_file(ServiceConfig& config, const std::string& path) {
  auto text = read_folder_file(path, size_t{16} << 20);
  if (!text.ok()) return text.status().with_context("config file");
  return apply_service_config_toml(config, *text, path);
}

Status apply_service_config_env(ServiceConfig& config, const GetEnv& getenv) {
  for (const auto& k : service_config_keys()) {
    const char* v = getenv(k.env.c_str());
    if (v == nullptr || *v == '\0') continue;
    if (k.key == "model") config.model.clear(), config.models.clear();  // replaces the file's models
    DLRT_RETURN_IF_ERROR(set_service_config_value(config, k.key, v, k.env));
  }
  return Status::Ok();
}

Status validate_service_config(const ServiceConfig& c) {
  if (c.model.empty() && c.models.empty())
    return InvalidArgument("no model folder: give --model DIR, or --model NAME=DIR for each of several (or serve.model, "
                           "[[serve.models]], DLRT_SERVE_MODEL)");
  if (!c.model.empty() && !c.models.empty())
    return InvalidArgument("a bare model folder (" + c.model + ") serves one model; to serve several, name each: --model NAME=DIR");
  if (!c.models.empty() && !c.model_name.empty())
    return InvalidArgument("model_name names the one bare model folder; named models (NAME=DIR) are served by their names");
  for (size_t i = 0; i < c.models.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (c.models[i].name == c.models[j].name)
        return InvalidArgument("two models are named '" + c.models[i].name + "': each served model needs its own name");
  if (!c.default_model.empty()) {
    bool found = false;
    std::string names;
    for (const auto& m : c.models) found = found || m.name == c.default_model, names += (names.empty() ? "" : ", ") + m.name;
    if (!found)
      return InvalidArgument("default_model '" + c.default_model + "' is not a served model" +
                             (names.empty() ? std::string(" (it needs models named NAME=DIR)") : " (served: " + names + ")"));
  }
  if (inputs_per_request_limit(c) > c.max_queue)
    return InvalidArgument("max_inputs_per_request (" + std::to_string(inputs_per_request_limit(c)) +
                           ") must not exceed max_queue (" + std::to_string(c.max_queue) +
                           "): such a request could never be queued");
  if (c.http_threads < 2) return InvalidArgument("http_threads must be at least 2");
  if (c.tls_cert.empty() != c.tls_key.empty())
    return InvalidArgument("tls_cert and tls_key go together: give both to serve HTTPS, or neither");
  return Status::Ok();
}

Result<ServiceConfig> resolve_service_config(const std::string& file, const GetEnv& getenv,
                                             const std::vector<std::pair<std::string, std::string>>& flags) {
  ServiceConfig c;
  if (!file.empty()) DLRT_RETURN_IF_ERROR(apply_service_config_file(c, file));
  DLRT_RETURN_IF_ERROR(apply_tei_env(c, getenv));
  DLRT_RETURN_IF_ERROR(apply_service_config_env(c, getenv));
  // --model flags replace the models of the file and the environment.
  for (const auto& [key, value] : flags)
    if (key == "model") {
      c.model.clear();
      c.models.clear();
      break;
    }
  for (const auto& [key, value] : flags) {
    std::string flag = "--" + dashed(key);
    DLRT_RETURN_IF_ERROR(set_service_config_value(c, key, value, flag));
  }
  DLRT_RETURN_IF_ERROR(validate_service_config(c));
  return c;
}

}  // namespace dlrt::embed
