#include "runtime/config.h"

#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <toml++/toml.h>

#include "core/env.h"
#include "core/file_io.h"
#include "dlrt/cpu_precision.h"
#include "dlrt/session.h"

namespace dlrt {

namespace fs = std::filesystem;

std::string runtime_config_path(bool* required) {
  if (required) *required = false;
  if (const char* p = env::get_nonempty("DLRT_CONFIG")) {
    if (required) *required = true;
    return p;
  }
  if (const char* x = env::get_nonempty("XDG_CONFIG_HOME")) return std::string(x) + "/dlrt/config.toml";
  if (const char* h = env::get_nonempty("HOME")) return std::string(h) + "/.config/dlrt/config.toml";
  return "";
}

RuntimeEnv read_runtime_env() {
  RuntimeEnv e;
  if (const char* v = env::get_nonempty("DLRT_DEVICE")) e.device = v;
  if (const char* v = env::get_nonempty("DLRT_STRICT")) {
    const std::string s(v);
    e.strict = s == "1" || s == "true" || s == "yes" || s == "on";
  }
  if (const char* v = env::get_nonempty("DLRT_CPU_PRECISION")) e.cpu_precision = v;
  if (const char* v = env::get("DLRT_OPTIMIZE")) {
    const std::string s(v);
    e.optimize = !(s == "0" || s == "false" || s == "off");
  }
  if (const char* v = env::get("DLRT_DISABLE_PASSES")) {
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) e.disabled_passes.insert(item);
  }
  if (const char* v = env::get("DLRT_CACHE"); v && std::string(v) == "0") e.cache = false;
  if (const char* v = env::get_nonempty("DLRT_CACHE_DIR")) e.cache_dir = v;
  if (const char* x = env::get_nonempty("XDG_CACHE_HOME")) e.default_cache_dir = std::string(x) + "/dlrt";
  else if (const char* h = env::get_nonempty("HOME")) e.default_cache_dir = std::string(h) + "/.cache/dlrt";
  if (const char* m = env::get_nonempty("DLRT_CACHE_MAX_MB")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(m, &end, 10);
    if (end && *end == '\0') e.cache_max_mb = v;
  }
  return e;
}

namespace {

// toml++ 3.3 (Debian 12) reaches an unreachable branch, undefined behaviour,
// when it asks whether a character in U+00A1..U+0499, U+2C5E..U+3057 (but
// U+3000) or U+FB26..U+FEFE is whitespace, which its parser does at places
// in the text that vary (fuzz/fuzz_config.cpp found them: U+FEF7 before a
// key, U+0491 inside a broken value). A config file holding one is refused
// here, naming the line, column and code point, before toml++ sees it.
Status check_toml_safe_characters(const std::string& text, const std::string& path) {
  int line = 1, column = 0;
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    ++column;
    if (b == '\n') {
      ++line;
      column = 0;
    }
    if (b < 0x80) {
      ++i;
      continue;
    }
    // A UTF-8 sequence (malformed ones are left to toml++, which reports them).
    const int len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    uint32_t c = len == 1 ? b : b & (0x7F >> len);
    for (int k = 1; k < len && i + k < text.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    i += static_cast<size_t>(len);
    const bool unsafe = (c >= 0xA1 && c <= 0x499) || (c >= 0x2C5E && c <= 0x3057 && c != 0x3000) ||
                        (c >= 0xFB26 && c <= 0xFEFE);
    if (unsafe) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "U+%04X", static_cast<unsigned>(c));
      return InvalidArgument("config file " + path + ": line " + std::to_string(line) + ", column " +
                             std::to_string(column) + ": character " + cp +
                             " is not supported in config files (the TOML parser mishandles it)");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<RuntimeConfig> parse_runtime_config(const std::string& text, const std::string& path) {
  RuntimeConfig cfg;
  cfg.path = path;
  DLRT_RETURN_IF_ERROR(check_toml_safe_characters(text, path));
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << "config file " << path << ": line " << e.source().begin.line << ", column " << e.source().begin.column
        << ": " << e.description();
    return InvalidArgument(msg.str());
  }
  auto bad = [&](const std::string& key, const std::string& want) {
    return InvalidArgument("config file " + path + ": '" + key + "' must be " + want);
  };
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (node.is_table()) continue;  // an application's section, e.g. [serve]
    if (k == "device") {
      auto v = node.value<std::string>();
      if (!v) return bad(k, "a string such as \"auto\" or \"openvino:NPU,cpu\"");
      cfg.device = *v;
    } else if (k == "strict") {
      auto v = node.value<bool>();
      if (!v) return bad(k, "true or false");
      cfg.strict = *v;
    } else if (k == "threads") {
      auto v = node.value<int64_t>();
      if (!v || *v < 0 || *v > kMaxThreads)
        return bad(k, "an integer from 0 (one per core) to " + std::to_string(kMaxThreads));
      cfg.threads = static_cast<int>(*v);
    } else if (k == "cache_dir") {
      auto v = node.value<std::string>();
      if (!v || v->empty()) return bad(k, "a non-empty path string");
      cfg.cache_dir = *v;
    } else if (k == "cpu_precision") {
      auto v = node.value<std::string>();
      if (!v || !is_cpu_precision(*v)) return bad(k, "\"f32\", \"bf16\", \"bf16x3\" or \"auto\"");
      cfg.cpu_precision = *v;
    } else if (k == "max_tensor_mb") {
      auto v = node.value<int64_t>();
      if (!v || *v < 1 || *v >= (int64_t{1} << 44)) return bad(k, "an integer number of MiB from 1 to 2^44 - 1");
      cfg.max_tensor_mb = static_cast<uint64_t>(*v);
    } else {
      return InvalidArgument("config file " + path + ": unknown key '" + k +
                             "' (known: device, strict, threads, cache_dir, cpu_precision, max_tensor_mb; application "
                             "settings go in a table such as [serve])");
    }
  }
  return cfg;
}

Result<RuntimeConfig> load_runtime_config() {
  bool required = false;
  const std::string path = runtime_config_path(&required);
  if (path.empty()) return RuntimeConfig{};
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (required)
      return InvalidArgument("config file " + path + " (from DLRT_CONFIG or --config) does not exist; fix the path "
                             "or unset DLRT_CONFIG");
    return RuntimeConfig{};
  }
  auto text = read_whole_file(path, size_t{16} << 20);
  if (!text.ok()) return text.status().with_context("config file");
  return parse_runtime_config(*text, path);
}

}  // namespace dlrt
