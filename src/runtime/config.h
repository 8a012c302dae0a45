// The runtime's config file: TOML, read on every session create so edits and
// in-process environment changes take effect without a restart.
//
// Where: $DLRT_CONFIG (set by the CLI's --config FILE; a missing file is an
// error), else $XDG_CONFIG_HOME/dlrt/config.toml, else
// ~/.config/dlrt/config.toml (a missing default file is fine: no settings).
//
// Keys (top level; tables such as [serve] belong to applications and are
// ignored here; any other top-level key is an error, so a typo is caught):
//   device    = "openvino:NPU,cpu"   device spec, as for --device
//   strict    = true                 fallback becomes an error
//   threads   = 4                    CPU intra-op threads (0 = one per core)
//   cache_dir = "/var/cache/dlrt"    blob cache folder
//   cpu_precision = "f32"            CPU matmul precision (f32, bf16, bf16x3, auto)
//   max_tensor_mb = 4096             largest tensor a run may allocate, MiB
//
// Precedence, everywhere: API option or CLI flag, then environment variable
// (DLRT_DEVICE, DLRT_STRICT, DLRT_CACHE_DIR, DLRT_MAX_TENSOR_MB), then this
// file, then defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "dlrt/status.h"

namespace dlrt {

struct RuntimeConfig {
  std::string path;   // the file read; empty when none was found
  std::optional<std::string> device;
  std::optional<bool> strict;
  std::optional<int> threads;
  std::optional<std::string> cache_dir;
  std::optional<std::string> cpu_precision;
  std::optional<uint64_t> max_tensor_mb;
};

// The session settings the environment gives, read together in this one
// place at every session create (so in-process changes apply to the next
// session) and passed down from there. The table of every variable, with
// defaults and meanings, is core/env.h (`dlrt --help-env`).
struct RuntimeEnv {
  std::optional<std::string> device;         // DLRT_DEVICE, when non-empty
  std::optional<bool> strict;                // DLRT_STRICT: 1/true/yes/on; other non-empty values false
  std::optional<std::string> cpu_precision;  // DLRT_CPU_PRECISION, when non-empty
  bool optimize = true;                      // DLRT_OPTIMIZE: 0/false/off turn optimisation off
  std::set<std::string> disabled_passes;     // DLRT_DISABLE_PASSES, comma-separated
  bool cache = true;                         // DLRT_CACHE=0 turns the blob cache off
  std::optional<std::string> cache_dir;      // DLRT_CACHE_DIR, when non-empty
  std::string default_cache_dir;             // $XDG_CACHE_HOME/dlrt, else ~/.cache/dlrt, else empty
  uint64_t cache_max_mb = 2048;              // DLRT_CACHE_MAX_MB (a malformed value keeps the default)
};
RuntimeEnv read_runtime_env();

// The path the config is read from and whether it must exist ($DLRT_CONFIG).
std::string runtime_config_path(bool* required = nullptr);

// Reads the config file. Errors (kInvalidArgument) name the file and, for a
// parse error, the line and column; for a bad key or value, the key.
Result<RuntimeConfig> load_runtime_config();

// Same from TOML text (for tests); `path` only labels messages.
Result<RuntimeConfig> parse_runtime_config(const std::string& text, const std::string& path);

}  // namespace dlrt
