#include "cli_args.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/spelling.h"
#include "dlrt/cpu_precision.h"

namespace dlrt::cli {

std::string Args::get(const std::string& flag, const std::string& def) const {
  auto it = values.find(flag);
  return it == values.end() || it->second.empty() ? def : it->second.back();
}

std::vector<std::string> Args::all(const std::string& flag) const {
  auto it = values.find(flag);
  return it == values.end() ? std::vector<std::string>{} : it->second;
}

Result<Args> parse_args(int argc, char** argv, int first, const std::vector<FlagSpec>& specs,
                        const std::vector<std::string>& aliases) {
  Args out;
  bool flags_done = false;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (flags_done || a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      flags_done = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      out.values["help"].push_back("");
      continue;
    }
    // -v: --verbose, for the commands that have it.
    if (a == "-v" && std::any_of(specs.begin(), specs.end(), [](const FlagSpec& s) { return s.name == "verbose"; }))
      a = "--verbose";
    if (a.rfind("--", 0) != 0) return InvalidArgument("unknown option '" + a + "' (options are spelled --name)");
    std::string name = a.substr(2);
    std::string value;
    bool has_inline = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline = true;
    }
    static const FlagSpec kConfig{"config", true, false};  // every command takes --config FILE
    const FlagSpec* spec = name == kConfig.name ? &kConfig : nullptr;
    for (const auto& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) {
      std::vector<std::string> names = {kConfig.name, "help"};
      for (const auto& s : specs) names.push_back(s.name);
      names.insert(names.end(), aliases.begin(), aliases.end());
      const std::string near = spelling::closest(name, names);
      return InvalidArgument("unknown option '--" + name + "'" + (near.empty() ? "" : " (did you mean --" + near + "?)"));
    }
    if (spec->optional_bool) {
      // "--truncate false" keeps working; "--truncate" alone means true.
      if (!has_inline) value = i + 1 < argc && parse_bool_value(argv[i + 1]) ? argv[++i] : "true";
    } else if (spec->takes_value) {
      if (!has_inline) {
        if (i + 1 >= argc) return InvalidArgument("option '--" + name + "' needs a value");
        value = argv[++i];
      }
    } else if (has_inline) {
      return InvalidArgument("option '--" + name + "' takes no value");
    }
    auto& vals = out.values[name];
    if (!spec->repeatable && !vals.empty()) return InvalidArgument("option '--" + name + "' given more than once");
    vals.push_back(value);
  }
  if (out.has("config")) {
    // The runtime reads its config file from DLRT_CONFIG (runtime/config.h):
    // the flag wins over an inherited variable, and applications see it too.
    const std::string path = out.get("config");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      return InvalidArgument("config file '" + path + "' given with --config does not exist or is not a file");
    setenv("DLRT_CONFIG", path.c_str(), 1);
  }
  return out;
}

std::optional<bool> parse_bool_value(const std::string& text) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  return std::nullopt;
}

Result<int64_t> parse_nonnegative_int(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 18) return InvalidArgument(what + " must be a non-negative integer, got '" + text + "'");
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return InvalidArgument(what + " must be a non-negative integer, got '" + text + "'");
    v = v * 10 + (c - '0');
  }
  return v;
}

Result<std::string> parse_precision(const std::string& text, const std::string& flag) {
  if (!is_cpu_precision(text)) return InvalidArgument(flag + " must be f32, bf16, bf16x3 or auto, not '" + text + "'");
  return text;
}

Status split_assignment(const std::string& text, const std::string& flag, std::string& name, std::string& value) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return InvalidArgument("--" + flag + " expects NAME=VALUE, got '" + text + "'");
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return Status::Ok();
}

int usage_error(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "dlrt %s: error: %s\n(see 'dlrt %s --help')\n", command.c_str(), message.c_str(), command.c_str());
  return kExitUsage;
}

int exit_code_for_model_status(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidModel:
    case StatusCode::kUnsupported:
    case StatusCode::kIoError: return kExitBadModel;
    case StatusCode::kDeviceUnavailable: return kExitDeviceUnavailable;
    case StatusCode::kInvalidArgument: return kExitUsage;  // e.g. a malformed --device spec
    default: return kExitRuntimeError;
  }
}

int exit_code_for_folder_status(const Status& s) {
  return s.code() == StatusCode::kNotFound ? kExitBadModel : exit_code_for_model_status(s);
}

int exit_code_for_run_status(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kDeviceUnavailable: return kExitDeviceUnavailable;
    default: return kExitRuntimeError;
  }
}

}  // namespace dlrt::cli
