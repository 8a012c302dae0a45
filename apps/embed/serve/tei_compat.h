// text-embeddings-inference (TEI) compatibility of `dlrt serve`'s settings:
// TEI's launcher flags (text-embeddings-router --model-id ...) and, where it
// is safe, their environment variables, taken as aliases of dlrt's settings;
// the TEI flags dlrt has no meaning for are refused with the reason.
//
// Precedence (docs/serve-settings.md "Settings"): the TOML file, then TEI's
// environment variables, then DLRT_* variables, then flags (dlrt's and
// TEI's alike; one setting given by both is an error).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "embed/serve/service_config.h"

namespace dlrt::embed {

struct TeiOption {
  const char* flag;  // TEI's flag without "--": "model-id"
  const char* env;   // TEI's variable that dlrt reads ("MODEL_ID"); "" when dlrt does not read it
  const char* key;   // the dlrt setting it sets ("model"); "" when dlrt has none
  const char* note;  // how it differs from TEI's (alias), or why dlrt has no such setting (refused)
};

// Every flag of TEI's launcher that is not already spelled as dlrt's
// (--port, --api-key, --max-batch-tokens, --cors-allow-origin are the same).
std::span<const TeiOption> tei_options();

// Rewrites `dlrt serve` arguments to dlrt's own spelling: TEI's flags to the
// settings they alias (--model-id X -> --model X, --auto-truncate[=B] ->
// --truncate[=B], --json-output -> --json-logs), -p to --port, and
// --no-<switch> to --<switch>=false for every boolean setting. A TEI flag
// dlrt has no meaning for is kInvalidArgument naming it and why; so is
// --dtype other than float32 (dlrt runs the model as exported).
Result<std::vector<std::string>> translate_serve_args(const std::vector<std::string>& args);

// Applies the TEI environment variables of tei_options() that `getenv`
// returns non-empty (MODEL_ID, AUTO_TRUNCATE, ...).
Status apply_tei_env(ServiceConfig& config, const GetEnv& getenv);

}  // namespace dlrt::embed
