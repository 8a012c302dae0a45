// dlrt's environment variables: the one table of every DLRT_* variable (its
// default and meaning) and the one place they are read. `dlrt --help-env`
// and docs/environment.md are generated from this table, and a test checks
// that every DLRT_ name in src/ and tools/ is in it.
//
// Layers read a variable through get() where its value is process-wide by
// nature (log level, CPU ISA cap, kernel switches, vendor library paths);
// session settings (device, strict, cache, optimizer) are gathered by the
// runtime's config layer (runtime/config.h) and passed down from there.
//
// Thread-safety: everything here may be called from any thread (the table is
// constant; get() reads the environment, which dlrt never writes).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dlrt::env {

struct Variable {
  const char* name;           // "DLRT_CACHE_DIR"; "<NAME>" marks a part the user picks
  const char* default_value;  // what applies when it is unset, in words
  const char* area;           // "session", "cpu", "openvino", ... (groups the help)
  const char* meaning;        // one sentence: what it does and its values
};

// Every variable dlrt reads, grouped by area.
std::span<const Variable> variables();

// Whether `name` is in the table (a "<NAME>" entry matches any upper-case part).
bool known(const std::string& name);

// The value of `name`, or null when unset. A DLRT_ name must be in the table
// (debug builds check); other names (HOME, XDG_CONFIG_HOME) are read as they are.
const char* get(const char* name);

// Same, with an empty value treated as unset.
const char* get_nonempty(const char* name);

// The names of the variables set in this process that start with `prefix`
// (for warnings about misspelt DLRT_ names).
std::vector<std::string> names_with_prefix(std::string_view prefix);

// One warning for each DLRT_* name in `names` that dlrt does not read, naming
// the nearest known name (DLRT_DEVCE: "... is not a dlrt variable and is
// ignored (did you mean DLRT_DEVICE?)"). A name that fits a "<KEY>" entry of the table
// is known only when `concrete` lists it (an application's own names, such as
// dlrt serve's DLRT_SERVE_PORT) or, without such a list for that entry, always.
// DLRT_TEST_* (the test plugins' own) are left alone.
std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names,
                                                   const std::vector<std::string>& concrete);

// The table as `dlrt --help-env` prints it (plain text), and as the Markdown
// table of docs/environment.md.
std::string help_text();
std::string markdown_table();

}  // namespace dlrt::env
