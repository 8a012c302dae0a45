#include "core/env.h"

#include "core/spelling.h"

#include <cassert>
#include <cstdlib>
#include <string_view>

#include <unistd.h>

namespace dlrt::env {

namespace {

// Keep each meaning to one sentence; docs/environment.md is generated from it
// (`dlrt --help-env --markdown`) and a test checks the two agree.
constexpr Variable kVariables[] = {
    // Sessions: read by the runtime's config layer at every session create.
    {"DLRT_DEVICE", "auto", "session",
     "device spec when no --device or SessionOptions::device is given (docs/devices.md)"},
    {"DLRT_STRICT", "0", "session",
     "1/true: every fallback is an error; 0/false overrides strict = true in the config file"},
    {"DLRT_CONFIG", "$XDG_CONFIG_HOME/dlrt/config.toml or ~/.config/dlrt/config.toml", "session",
     "config file path (what --config sets); a named file that is missing is an error"},
    {"DLRT_CPU_PRECISION", "f32", "session",
     "f32, bf16, bf16x3 or auto (the fastest of them within a bound of f32 on canary inputs, measured at create: "
     "[performance-precision.md](performance-precision.md#choosing-the-precision-auto)): "
     "CPU MatMul, Gemm and Conv against constant weights on AMX tiles with bf16x3 (f32 "
     "with a warning where the CPU has no AMX-BF16), MatMul and Gemm against constant weights in one bf16 pass "
     "with bf16 (AVX512-BF16, on aarch64 BF16; f32 with a warning where it is missing, "
     "[performance-precision.md](performance-precision.md#cpu-precision-bf16-avx512-bf16)); --precision and "
     "SessionOptions::cpu_precision win over it"},
    {"DLRT_OPTIMIZE", "1", "session", "0: no graph optimisation (folding, fusion) at session create"},
    {"DLRT_DISABLE_PASSES", "(none)", "session", "comma-separated optimizer pass names to skip (docs/optimizer.md)"},
    {"DLRT_CACHE", "1", "session", "0: turn the compiled-blob cache off"},
    {"DLRT_CACHE_DIR", "$XDG_CACHE_HOME/dlrt or ~/.cache/dlrt", "session", "compiled-blob cache folder"},
    {"DLRT_CACHE_MAX_MB", "2048", "session", "blob cache size limit in MiB (least recently used entries go first)"},
    // Process-wide: read once (or on each use) where they apply.
    {"DLRT_LOG_LEVEL", "warn", "process", "debug, info, warn, error or off"},
    {"DLRT_MAX_TENSOR_MB", "half the memory available (physical, cgroup, RLIMIT_AS)", "process",
     "the largest single tensor a run may allocate, in MiB (read once per process)"},
    {"DLRT_SPIN_US", "100", "process",
     "microseconds CPU worker threads spin for the next parallel section before they sleep (0: sleep at once)"},
    // CPU kernels: process-wide switches, read once.
    {"DLRT_CPU_ISA", "what the CPU has", "cpu", "cap the CPU kernels' vector ISA: generic, neon, avx2 or avx512"},
    {"DLRT_CACHE_SIZES", "what cpuid (else sysfs) reports", "cpu",
     "cache sizes per core the CPU kernels size their blocks for, e.g. l1d:32K,l2:1M,l3:1408K (also l1d_ways, l2_ways)"},
    {"DLRT_CPU_FEATURES_OFF", "none", "cpu",
     "CPU extensions to treat as absent, as `dlrt devices` names them, e.g. avx512_vnni,avx_vnni,amx_int8 (on aarch64 "
     "dotprod, i8mm, bf16): the kernels choose what a CPU without them runs (the vector width is DLRT_CPU_ISA's)"},
    {"DLRT_CPU_AMX_INT8", "off", "cpu",
     "on: the int8 GEMM runs on AMX tiles where the CPU and OS allow (off by default until verified on AMX hardware)"},
    {"DLRT_HUGE_PAGES", "1", "cpu", "0: packed CPU weights on ordinary pages instead of transparent huge pages"},
    {"DLRT_CONV_DIRECT", "(unset: the shapes where it is faster)", "cpu",
     "float Conv's AVX-512/AVX2 direct path: 0 off, 1 for every shape it can run"},
    {"DLRT_FLUSH_SUBNORMALS", "1", "cpu",
     "0: Conv, Gemm, MatMul and recurrent kernels keep the caller's subnormal-float mode instead of flushing "
     "subnormals to zero (slower where a model makes subnormals; results differ by < 1.2e-38)"},
    {"DLRT_CONV_WINOGRAD", "1", "cpu", "0: 3x3 stride-1 convs never run as Winograd"},
    {"DLRT_GEMM_PACK_A", "0", "cpu",
     "1: MatMul/Gemm against pre-packed weights pack the activations instead of reading them in place (A/B timing)"},
    // Backends and plugins.
    {"DLRT_PLUGINS", "(none)", "backends",
     "comma-separated plugin backend names to register (libdlrt_plugin_<name>.so)"},
    {"DLRT_PLUGIN_<NAME>_LIB", "the loader path", "backends", "file or folder of plugin <name>'s library"},
    {"DLRT_OPENCL_LIB", "the loader path, then well-known places", "opencl", "file or folder of the OpenCL ICD loader"},
    {"DLRT_OPENCL_PROFILE", "(unset)", "opencl", "set: finish after every step and log the time per kernel (slow)"},
    {"DLRT_CUDA_LIB_PATH", "the loader path, the CUDA toolkit, then pip wheels", "cuda",
     "colon-separated files or folders holding libcuda.so.1, libnvrtc.so.* and libcublas.so.*; when set, the only place searched"},
    {"DLRT_CUDA_PROFILE", "(unset)", "cuda", "set: synchronise after every launch and log the time per kernel (slow)"},
    {"DLRT_CUDA_NO_GRAPHS", "(unset)", "cuda", "set: launch a partition's kernels one by one instead of replaying a CUDA graph"},
    {"DLRT_CUDA_NO_CUBLAS", "(unset)", "cuda", "set: run GEMMs on dlrt's own kernels even when cuBLAS is installed"},
    {"OPENVINO_LIB_PATH", "the loader path, then pip wheels and /opt/intel/openvino*", "openvino",
     "file or folder of libopenvino_c.so"},
    {"DLRT_OPENVINO_NO_PYTHON", "0", "openvino",
     "1: do not ask python3 for its site-packages when looking for OpenVINO"},
    {"DLRT_OPENVINO_INFER_REQUESTS", "OpenVINO's optimum", "openvino", "infer requests per compiled partition"},
    {"DLRT_OPENVINO_REQUEST_TIMEOUT_MS", "60000", "openvino", "how long a caller waits for a free infer request"},
    {"DLRT_OPENVINO_ELEMENT_NUMBERING", "(refuse an unknown release)", "openvino",
     "2024 or 2025: accept an OpenVINO newer than dlrt knows, with that element-type numbering"},
    {"DLRT_CANARY", "auto", "openvino",
     "auto, recheck or skip: the compatibility check of an untested vendor release (docs/openvino.md)"},
    {"DLRT_CANARY_TIMEOUT_S", "120", "openvino", "how long the compatibility check's child process may take"},
    {"DLRT_CANARY_EXE", "dlrt beside the program or library", "openvino", "the dlrt executable the check runs"},
    {"DLRT_CANARY_CHILD", "(unset)", "openvino", "internal: set to 1 in the compatibility check's child process"},
    // Applications (apps/embed, dlrt serve): read through their own config (docs/serve-settings.md).
    {"DLRT_THREADS", "0", "serve", "dlrt serve: intra-op threads per run (0: one per core)"},
    {"DLRT_SERVE_<KEY>", "the serve.toml value", "serve", "dlrt serve: any [serve] setting, e.g. DLRT_SERVE_PORT"},
    {"DLRT_TEST_<NAME>", "(unset)", "tests", "switches of the test plugins and doubles built with the tests (tests/)"},
    {"DLRT_PROGRESS", "1 when stderr is a terminal", "cli",
     "dlrt embed: 1 shows progress and a summary on stderr even when it is not a terminal, 0 never (--quiet wins)"},
};

bool matches(std::string_view pattern, std::string_view name) {
  const size_t hole = pattern.find("<NAME>") != std::string_view::npos ? pattern.find("<NAME>") : pattern.find("<KEY>");
  if (hole == std::string_view::npos) return pattern == name;
  const size_t hole_end = pattern.find('>', hole) + 1;
  const std::string_view head = pattern.substr(0, hole), tail = pattern.substr(hole_end);
  if (name.size() <= head.size() + tail.size()) return false;
  if (name.substr(0, head.size()) != head || name.substr(name.size() - tail.size()) != tail) return false;
  for (char c : name.substr(head.size(), name.size() - head.size() - tail.size()))
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::span<const Variable> variables() { return kVariables; }

bool known(const std::string& name) {
  for (const Variable& v : kVariables)
    if (matches(v.name, name)) return true;
  return false;
}

const char* get(const char* name) {
  assert(std::string_view(name).substr(0, 5) != "DLRT_" || known(name));
  return std::getenv(name);  // NOLINT(concurrency-mt-unsafe): dlrt never sets variables
}

const char* get_nonempty(const char* name) {
  const char* v = get(name);
  return v && *v ? v : nullptr;
}

std::vector<std::string> names_with_prefix(std::string_view prefix) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    if (entry.substr(0, prefix.size()) == prefix) out.emplace_back(entry.substr(0, entry.find('=')));
  }
  return out;
}

std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names,
                                                   const std::vector<std::string>& concrete) {
  std::vector<std::string> candidates = concrete;
  for (const Variable& v : kVariables)
    if (std::string_view(v.name).find('<') == std::string_view::npos) candidates.push_back(v.name);
  // The pattern entries `concrete` speaks for: a name under one of them must be listed.
  auto listed_pattern = [&](const std::string& name) {
    for (const Variable& v : kVariables) {
      if (std::string_view(v.name).find('<') == std::string_view::npos || !matches(v.name, name)) continue;
      for (const std::string& c : concrete)
        if (matches(v.name, c)) return true;
    }
    return false;
  };
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n.rfind("DLRT_", 0) != 0) continue;
    bool ok = false;
    for (const std::string& c : concrete) ok = ok || c == n;
    if (!ok) ok = known(n) && !listed_pattern(n);
    if (ok) continue;
    const std::string near = spelling::closest(n, candidates);
    out.push_back(n + " is not a dlrt variable and is ignored" + (near.empty() ? "" : " (did you mean " + near + "?)"));
  }
  return out;
}

std::string help_text() {
  std::string out =
      "Environment variables dlrt reads (flags and API options win over them; they win over the "
      "config file):\n";
  const char* area = "";
  for (const Variable& v : kVariables) {
    if (std::string_view(area) != v.area) {
      area = v.area;
      out += std::string("\n") + area + ":\n";
    }
    out += "  " + pad(v.name, 34) + v.meaning + "\n";
    out += "  " + pad("", 34) + "default: " + v.default_value + "\n";
  }
  return out;
}

std::string markdown_table() {
  std::string out = "| variable | area | default | meaning |\n|---|---|---|---|\n";
  for (const Variable& v : kVariables)
    out += std::string("| `") + v.name + "` | " + v.area + " | " + v.default_value + " | " + v.meaning + " |\n";
  return out;
}

}  // namespace dlrt::env
