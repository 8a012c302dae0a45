// The model-zoo check: every model and sample case of $DLRT_ZOO_DIR runs
// through `dlrt run --input ... --output-dir ...` and its outputs must match
// the expected ones within rtol 1e-3 / atol 1e-4. The same for the quantized
// and float16 variants in $DLRT_QUANT_ZOO_DIR (made by
// tests/models/make_quant_zoo.py, expected outputs from ONNX Runtime), whose
// manifest says per model how close each must come: {"rtol", "atol"}, or
// {"min_cosine"} between rows (the last axis) of each output. And the wild
// set in $DLRT_WILD_DIR (tests/models/make_wild_set.py: trained models from
// PyPI wheels, expected outputs from ONNX Runtime), laid out the same way, and
// the trained int8 set in $DLRT_TRAINED_INT8_DIR (tests/models/make_trained_int8.py),
// whose manifest also asks for optimised = DLRT_OPTIMIZE=0 bit for bit.
//
// Layout (as shared/models): <model>.onnx, <model>/<case>/<input>.npy,
// <model>/<case>/expected/<output>.npy; manifest.json, when present, lists
// the models and cases (otherwise they are discovered from the folders).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "core/npy.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;
using testing::quote;

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-4;

// How close an output must come to the expected one.
struct Tolerance {
  double rtol = kRtol, atol = kAtol;
  double min_cosine = 0;  // > 0: compare rows by cosine similarity instead
};

struct ZooCase {
  std::string model;  // name
  std::string name;   // case name
  fs::path onnx;
  std::map<std::string, fs::path> inputs;    // input name -> .npy
  std::map<std::string, fs::path> expected;  // output name -> .npy
  Tolerance tol;
  // The manifest's "bit_exact_optimized": dlrt's outputs with its optimizer
  // must equal those with DLRT_OPTIMIZE=0 bit for bit (a model with dynamic
  // quantizers, whose fusions must keep the float rounding ahead of them).
  bool bit_exact_optimized = false;
};

std::map<std::string, fs::path> npy_files(const fs::path& dir) {
  std::map<std::string, fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".npy") out[e.path().stem().string()] = e.path();
  return out;
}

// From manifest.json: {"models": {name: {"file"?: ..., "cases": {case: {"inputs": {...}, "expected": {...}}}}}}.
std::vector<ZooCase> from_manifest(const fs::path& root, std::string& error) {
  std::vector<ZooCase> cases;
  std::ifstream f(root / "manifest.json");
  auto j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.contains("models") || !j["models"].is_object()) {
    error = "manifest.json is not valid JSON with a \"models\" object";
    return cases;
  }
  for (const auto& [model, m] : j["models"].items()) {
    fs::path onnx = root / (m.contains("file") && m["file"].is_string() ? m["file"].get<std::string>() : model + ".onnx");
    if (!m.contains("cases") || !m["cases"].is_object()) continue;
    Tolerance tol;
    if (m.contains("compare") && m["compare"].is_object()) {
      const auto& cmp = m["compare"];
      tol.rtol = cmp.value("rtol", kRtol);
      tol.atol = cmp.value("atol", kAtol);
      tol.min_cosine = cmp.value("min_cosine", 0.0);
    }
    const bool bit_exact = m.value("bit_exact_optimized", false);
    for (const auto& [name, c] : m["cases"].items()) {
      ZooCase zc{model, name, onnx, {}, {}, tol, bit_exact};
      if (c.contains("inputs") && c["inputs"].is_object())
        for (const auto& [k, v] : c["inputs"].items()) zc.inputs[k] = root / v.get<std::string>();
      if (c.contains("expected") && c["expected"].is_object())
        for (const auto& [k, v] : c["expected"].items()) zc.expected[k] = root / v.get<std::string>();
      cases.push_back(std::move(zc));
    }
  }
  return cases;
}

std::vector<ZooCase> discover(const fs::path& root) {
  std::vector<ZooCase> cases;
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_regular_file() && e.path().extension() == ".onnx") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  for (const auto& onnx : models) {
    std::string model = onnx.stem().string();
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root / model, ec))
      if (e.is_directory() && fs::is_directory(e.path() / "expected")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) cases.push_back({model, d.filename().string(), onnx, npy_files(d), npy_files(d / "expected"), Tolerance{}});
  }
  return cases;
}

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out;
}

double as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return static_cast<float>(t.data<Float16>()[i]);
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kBool: return static_cast<const uint8_t*>(t.raw_data())[i];
    default: return std::nan("");
  }
}

// Compares one output; prints a line and returns false (with a failure) when it is off.
bool compare_output(const ZooCase& c, const std::string& name, const Tensor& want, const Tensor& got) {
  const Tolerance& tol = c.tol;
  double max_abs = 0, max_rel = 0, min_cos = 1;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    const double e = as_double(want, i), a = as_double(got, i);
    const double d = std::fabs(a - e);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (tol.min_cosine <= 0 && !(d <= tol.atol + tol.rtol * std::fabs(e))) ++bad;
    if (!std::isnan(d)) {
      max_abs = std::max(max_abs, d);
      max_rel = std::max(max_rel, d / (std::fabs(e) + 1e-3));
    }
  }
  std::string how;
  if (tol.min_cosine > 0) {
    const int64_t cols = want.rank() ? want.shape().back() : 1;
    const int64_t rows = cols ? want.size() / cols : 0;
    for (int64_t r = 0; r < rows; ++r) {
      double dot = 0, ne = 0, na = 0;
      for (int64_t j = r * cols; j < (r + 1) * cols; ++j) {
        const double e = as_double(want, j), a = as_double(got, j);
        dot += e * a;
        ne += e * e;
        na += a * a;
      }
      const double cos = (ne == 0 && na == 0) ? 1.0 : dot / std::sqrt(ne * na);
      if (!(cos >= tol.min_cosine)) ++bad;
      if (!(cos >= min_cos)) min_cos = cos;
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, ", min row cosine %.6f (want >= %g)", min_cos, tol.min_cosine);
    how = buf;
  }
  std::printf("zoo: %s/%s output %s %s: max abs error %.3g, max rel error %.3g (|a-e|/(|e|+1e-3))%s -> %s\n",
              c.model.c_str(), c.name.c_str(), name.c_str(), shape_to_string(want.shape()).c_str(), max_abs, max_rel,
              how.c_str(), bad ? "MISMATCH" : "ok");
  std::fflush(stdout);
  if (bad) {
    if (tol.min_cosine > 0)
      ADD_FAILURE() << "output '" << name << "': " << bad << " rows below cosine " << tol.min_cosine << " (min "
                    << min_cos << ")";
    else
      ADD_FAILURE() << "output '" << name << "': " << bad << " of " << want.size() << " elements outside rtol "
                    << tol.rtol << " / atol " << tol.atol << " (max abs error " << max_abs << ")";
  }
  return bad == 0;
}

std::string file_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Runs `cmd` (a `dlrt run ... --output-dir out`) again with DLRT_OPTIMIZE=0
// and checks that every expected output comes out with the same bytes.
bool same_bits_unoptimized(const ZooCase& c, const std::string& cmd, const fs::path& out) {
  const fs::path plain = out.string() + "_unoptimized";
  std::string unopt = cmd;
  unopt.replace(unopt.find(quote(out.string())), quote(out.string()).size(), quote(plain.string()));
  auto r = testing::run_command("DLRT_OPTIMIZE=0 " + unopt);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "with DLRT_OPTIMIZE=0: exit code " << r.exit_code << "\n" << r.output;
    return false;
  }
  bool same = true;
  for (const auto& [name, path] : c.expected) {
    const std::string file = sanitize(name) + ".npy";
    const std::string a = file_bytes(out / file), b = file_bytes(plain / file);
    if (a.empty() || a != b) {
      ADD_FAILURE() << "output '" << name << "' differs between the optimised run and DLRT_OPTIMIZE=0 (a fusion "
                    << "upstream of a dynamic quantizer changed float bits)";
      same = false;
    }
  }
  std::printf("zoo: %s/%s: optimised and DLRT_OPTIMIZE=0 outputs %s\n", c.model.c_str(), c.name.c_str(),
              same ? "equal bit for bit" : "DIFFER");
  return same;
}

// Runs every case under root through `dlrt run` and compares its outputs; prints how many match.
void run_zoo(const fs::path& root, const char* label) {
  ASSERT_TRUE(fs::is_directory(root)) << root << " is not a folder";
  ASSERT_TRUE(fs::exists(testing::dlrt_binary())) << testing::dlrt_binary() << " is missing: build the dlrt_cli target";

  std::string error;
  std::vector<ZooCase> cases = fs::exists(root / "manifest.json") ? from_manifest(root, error) : discover(root);
  ASSERT_TRUE(error.empty()) << root / "manifest.json" << ": " << error;
  ASSERT_FALSE(cases.empty()) << "no models with cases found in " << root;

  const fs::path tmp = fs::temp_directory_path() / ("dlrt_zoo_test_" + std::to_string(::getpid()));
  int passed = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.model + "/" + c.name);
    const fs::path out = tmp / c.model / c.name;
    fs::remove_all(out);
    std::string cmd = quote(testing::dlrt_binary()) + " run " + quote(c.onnx.string()) + " --output-dir " + quote(out.string());
    for (const auto& [name, path] : c.inputs) cmd += " --input " + quote(name + "=" + path.string());
    auto r = testing::run_command(cmd);
    EXPECT_FALSE(r.signaled) << "crashed: " << cmd << "\n" << r.output;
    if (r.exit_code != 0) {
      std::printf("zoo: %s/%s: dlrt run failed (exit code %d) -> MISMATCH\n", c.model.c_str(), c.name.c_str(),
                  r.exit_code);
      ADD_FAILURE() << "exit code " << r.exit_code << ": " << cmd << "\n" << r.output;
      continue;
    }
    bool case_ok = !c.expected.empty();
    for (const auto& [name, path] : c.expected) {
      auto want = read_npy_file(path.string());
      auto got = read_npy_file((out / (sanitize(name) + ".npy")).string());
      if (!want.ok() || !got.ok()) {
        ADD_FAILURE() << "output '" << name << "': " << (want.ok() ? got.status() : want.status()).to_string();
        case_ok = false;
        continue;
      }
      if (got->shape() != want->shape() || got->dtype() != want->dtype()) {
        ADD_FAILURE() << "output '" << name << "': " << dtype_name(got->dtype()) << " " << shape_to_string(got->shape())
                      << ", expected " << dtype_name(want->dtype()) << " " << shape_to_string(want->shape());
        case_ok = false;
        continue;
      }
      case_ok = compare_output(c, name, *want, *got) && case_ok;
    }
    if (c.bit_exact_optimized) case_ok = same_bits_unoptimized(c, cmd, out) && case_ok;
    passed += case_ok;
  }
  std::printf("%s: %d of %zu cases match\n", label, passed, cases.size());
  std::error_code ec;
  fs::remove_all(tmp, ec);
}

TEST(Zoo, EveryModelMatchesExpectedOutputs) {
  const char* env = std::getenv("DLRT_ZOO_DIR");
  if (!env || !*env)
    GTEST_SKIP() << "DLRT_ZOO_DIR is not set, so the model-zoo check did not run. Set it to a folder laid out like "
                    "shared/models (<model>.onnx, <model>/<case>/<input>.npy, <model>/<case>/expected/<output>.npy); "
                    ".ci/run sets it to ../shared/models when that folder exists.";
  run_zoo(env, "zoo");
}

TEST(Zoo, QuantizedVariantsMatchOnnxRuntime) {
  const char* env = std::getenv("DLRT_QUANT_ZOO_DIR");
  if (!env || !*env)
    GTEST_SKIP() << "DLRT_QUANT_ZOO_DIR is not set, so the quantized-zoo check did not run. scripts/run_tests.sh "
                    "makes it with tests/models/make_quant_zoo.py (needs the zoo and pip's onnxruntime).";
  run_zoo(env, "quantized zoo");
}

TEST(Zoo, TrainedInt8MatchesOnnxRuntime) {
  const char* env = std::getenv("DLRT_TRAINED_INT8_DIR");
  if (!env || !*env)
    GTEST_SKIP() << "DLRT_TRAINED_INT8_DIR is not set, so the trained-int8 check did not run. scripts/run_tests.sh "
                    "makes it with tests/models/make_trained_int8.py (a trained all-MiniLM-L6-v2 from a PyPI wheel, "
                    "pip's onnxruntime).";
  run_zoo(env, "trained int8 set");
}

TEST(Zoo, WildModelsMatchOnnxRuntime) {
  const char* env = std::getenv("DLRT_WILD_DIR");
  if (!env || !*env)
    GTEST_SKIP() << "DLRT_WILD_DIR is not set, so the wild-set check did not run. scripts/run_tests.sh makes it with "
                    "tests/models/make_wild_set.py (trained models from PyPI wheels, pip's onnxruntime).";
  run_zoo(env, "wild set");
}

}  // namespace
}  // namespace dlrt
