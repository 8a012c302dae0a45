// Command-line parsing shared by every dlrt command: long flags only
// (--name VALUE or --name=VALUE), `--` ends the flags, anything else is
// positional. Unknown flags (with the nearest known one suggested) and
// missing values are usage errors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::cli {

// Exit codes of the dlrt binary (docs/cli.md "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitRuntimeError = 1,
  kExitUsage = 2,
  kExitBadModel = 3,
  kExitDeviceUnavailable = 4,
};

struct FlagSpec {
  std::string name;          // without the leading "--"
  bool takes_value = false;
  bool repeatable = false;
  // A boolean option: "--name" alone means true; "--name=B" or "--name B" (B one of
  // true/false/1/0/yes/no/on/off) sets it. The value is checked by parse_bool_value.
  bool optional_bool = false;
};

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // flag -> values ("" for switches)

  bool has(const std::string& flag) const { return values.count(flag) != 0; }
  // The flag's (last) value, or `def` when absent.
  std::string get(const std::string& flag, const std::string& def = "") const;
  // Every value of a repeatable flag, in order.
  std::vector<std::string> all(const std::string& flag) const;
};

// Parses argv[first..] against `specs`; "--help" and "-h" are always accepted
// (as flag "help"), and so is "--config FILE", which must name an existing
// file and is exported as DLRT_CONFIG for the runtime (and stays in the
// returned values for commands with their own settings in that file).
// Errors: kInvalidArgument with a message for the user.
// `aliases`: other flag names the command takes before parsing (dlrt serve's
// TEI flags), offered with the specs' when an unknown option gets a "did you mean".
Result<Args> parse_args(int argc, char** argv, int first, const std::vector<FlagSpec>& specs,
                        const std::vector<std::string>& aliases = {});

// "true"/"false"/"1"/"0"/"yes"/"no"/"on"/"off" (any case); nullopt otherwise.
std::optional<bool> parse_bool_value(const std::string& text);

// A whole non-negative decimal number ("4"); kInvalidArgument otherwise.
Result<int64_t> parse_nonnegative_int(const std::string& text, const std::string& what);

// The value of --precision (SessionOptions::cpu_precision): "f32", "bf16", "bf16x3" or
// "auto"; kInvalidArgument otherwise, naming `flag`.
Result<std::string> parse_precision(const std::string& text, const std::string& flag = "--precision");

// Splits "NAME=VALUE" at the first '='. kInvalidArgument when there is no
// '=' or either side is empty.
Status split_assignment(const std::string& text, const std::string& flag, std::string& name, std::string& value);

// Prints "dlrt CMD: error: MESSAGE" and a pointer to --help on stderr; returns kExitUsage.
int usage_error(const std::string& command, const std::string& message);

// Exit code for a Status from loading a model (session create, import).
int exit_code_for_model_status(const Status& s);
// Exit code for a Status from loading a model folder (embed, serve): a
// missing folder or file (kNotFound) is a bad model too.
int exit_code_for_folder_status(const Status& s);
// Exit code for a Status from running a model.
int exit_code_for_run_status(const Status& s);

}  // namespace dlrt::cli
