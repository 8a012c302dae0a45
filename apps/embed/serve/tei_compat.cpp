#include "embed/serve/tei_compat.h"

#include <string_view>

namespace dlrt::embed {
namespace {

constexpr TeiOption kTeiOptions[] = {
    {"model-id", "MODEL_ID", "model", "a local model folder; dlrt does not download from the Hugging Face Hub"},
    {"served-model-name", "SERVED_MODEL_NAME", "model_name", ""},
    {"hostname", "", "host",
     "dlrt's default is 127.0.0.1 (TEI's 0.0.0.0); HOSTNAME is not read: shells and containers set it to the machine's name"},
    {"auto-truncate", "AUTO_TRUNCATE", "truncate", ""},
    {"max-client-batch-size", "MAX_CLIENT_BATCH_SIZE", "max_inputs_per_request", "dlrt's default is 2048, OpenAI's (TEI's 32)"},
    {"max-batch-requests", "MAX_BATCH_REQUESTS", "max_batch_size", ""},
    {"max-concurrent-requests", "MAX_CONCURRENT_REQUESTS", "max_queue",
     "dlrt bounds the inputs waiting for a batch (429 beyond), not the requests"},
    {"payload-limit", "PAYLOAD_LIMIT", "max_body_bytes", ""},
    {"json-output", "JSON_OUTPUT", "json_logs", ""},
    {"default-prompt-name", "DEFAULT_PROMPT_NAME", "default_prompt_name", ""},
    {"dtype", "", "", "dlrt runs the model in the precision it was exported in: only float32 is accepted"},
    {"pooling", "", "",
     "dlrt pools as the folder's 1_Pooling/config.json says; export the model with the pooling you want"},
    {"default-prompt", "", "",
     "dlrt takes prompts from config_sentence_transformers.json: name one with --default-prompt-name"},
    {"dense-path", "", "", "dlrt reads the Dense modules that modules.json lists"},
    {"revision", "", "", "dlrt does not download models: give a local folder with --model"},
    {"hf-token", "", "", "dlrt does not download models: give a local folder with --model"},
    {"hf-api-token", "", "", "dlrt does not download models: give a local folder with --model"},
    {"huggingface-hub-cache", "", "", "dlrt does not download models: give a local folder with --model"},
    {"tokenization-workers", "", "",
     "dlrt tokenizes on the HTTP threads: --http-threads sets how many requests are served at once"},
    {"uds-path", "", "", "dlrt has no gRPC backend process to talk to"},
    {"prometheus-port", "", "", "dlrt serves its metrics at GET /metrics on --port"},
    {"otlp-endpoint", "", "", "dlrt does not export OpenTelemetry traces"},
    {"otlp-service-name", "", "", "dlrt does not export OpenTelemetry traces"},
    {"disable-spans", "", "", "dlrt does not log tracing spans"},
};

std::string flag_of_key(std::string key) {
  for (auto& c : key)
    if (c == '_') c = '-';
  return key;
}

const TeiOption* tei_option(std::string_view flag) {
  for (const TeiOption& o : kTeiOptions)
    if (flag == o.flag) return &o;
  return nullptr;
}

const ServiceConfigKey* dlrt_key_by_flag(std::string_view flag) {
  for (const ServiceConfigKey& k : service_config_keys())
    if (k.flag == flag) return &k;
  return nullptr;
}

const ServiceConfigKey* dlrt_key(std::string_view key) {
  for (const ServiceConfigKey& k : service_config_keys())
    if (k.key == key) return &k;
  return nullptr;
}

}  // namespace

std::span<const TeiOption> tei_options() { return kTeiOptions; }

Result<std::vector<std::string>> translate_serve_args(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {  // the rest is positional
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (a == "-p") {  // TEI's short --port
      out.push_back("--port");
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      out.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const std::string inline_value = eq == std::string::npos ? "" : a.substr(eq);  // "=value" or ""
    if (const TeiOption* t = tei_option(name)) {
      if (name == "dtype") {
        std::string value = eq != std::string::npos ? a.substr(eq + 1) : i + 1 < args.size() ? args[++i] : "";
        if (value == "float32") continue;  // what dlrt does anyway
        return InvalidArgument("--dtype " + value + ": " + t->note);
      }
      if (*t->key == '\0')
        return InvalidArgument("--" + name + " is a text-embeddings-inference option that dlrt serve does not have: " +
                               t->note);
      name = flag_of_key(t->key);
    } else if (name.rfind("no-", 0) == 0 && eq == std::string::npos) {
      // --no-truncate: a boolean setting turned off.
      const ServiceConfigKey* k = dlrt_key_by_flag(name.substr(3));
      if (const TeiOption* t = tei_option(name.substr(3)); !k && t && *t->key) k = dlrt_key(t->key);
      if (k && k->is_switch) {
        out.push_back("--" + k->flag + "=false");
        continue;
      }
    }
    out.push_back("--" + name + inline_value);
    // The value of an option that takes one is passed on as it is, even
    // when it starts with "--".
    const ServiceConfigKey* k = dlrt_key_by_flag(name);
    if (eq == std::string::npos && (name == "config" || (k && !k->is_switch)) && i + 1 < args.size())
      out.push_back(args[++i]);
  }
  return out;
}

Status apply_tei_env(ServiceConfig& config, const GetEnv& getenv) {
  for (const TeiOption& t : kTeiOptions) {
    if (*t.env == '\0') continue;
    const char* v = getenv(t.env);
    if (v == nullptr || *v == '\0') continue;
    if (std::string_view(t.key) == "model") config.model.clear(), config.models.clear();  // replaces the file's models
    DLRT_RETURN_IF_ERROR(set_service_config_value(config, t.key, v, t.env));
  }
  return Status::Ok();
}

}  // namespace dlrt::embed
