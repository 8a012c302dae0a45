// The model-zoo check: every model and sample case of $DLRT_ZOO_DIR runs
// through a Session (one per model, default options as `dlrt run` has them)
// and its outputs must match
// the expected ones within rtol 1e-3 / atol 1e-4. The same for the quantized
// and float16 variants in $DLRT_QUANT_ZOO_DIR (made by
// tests/models/make_quant_zoo.py, expected outputs from ONNX Runtime), whose
// manifest says per model how close each must come: {"rtol", "atol"}, or
// {"min_cosine"} between rows (the last axis) of each output. And the wild
// set in $DLRT_WILD_DIR (tests/models/make_wild_set.py: trained models from
// PyPI wheels, expected outputs from ONNX Runtime), laid out the same way, and
// the trained int8 set in $DLRT_TRAINED_INT8_DIR (tests/models/make_trained_int8.py),
// whose manifest also asks for optimised = unoptimised (DLRT_OPTIMIZE=0) bit for bit.
//
// Layout (as shared/models): <model>.onnx, <model>/<case>/<input>.npy,
// <model>/<case>/expected/<output>.npy; manifest.json, when present, lists
// the models and cases (otherwise they are discovered from the folders).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "dlrt/session.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

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

// Each output of one run as tensors, keyed as `dlrt run --output-dir` names its
// files (without ".npy"): the output's name with characters outside
// [A-Za-z0-9._-] replaced by '_'; a sequence's items as NAME.0, NAME.1 ...,
// a map's keys and values as NAME.keys and NAME.values.
using RunOutputs = std::map<std::string, Tensor>;

Result<RunOutputs> run_case(const Session& session, const ZooCase& c) {
  std::map<std::string, Value> feeds;
  for (const auto& [name, path] : c.inputs) {
    auto t = read_npy_file(path.string());
    if (!t.ok()) return Status(t.status().code(), "input '" + name + "': " + t.status().message());
    feeds.emplace(name, Value::of(std::move(*t)));
  }
  auto values = session.run_values(feeds);
  if (!values.ok()) return values.status();
  RunOutputs out;
  const auto& infos = session.outputs();
  for (size_t i = 0; i < values->size() && i < infos.size(); ++i) {
    Value& v = (*values)[i];
    const std::string name = sanitize(infos[i].name);
    switch (v.kind) {
      case Value::Kind::kTensor: out[name] = std::move(v.tensor); break;
      case Value::Kind::kSequence:
        for (size_t k = 0; k < v.sequence.size(); ++k) out[name + "." + std::to_string(k)] = std::move(v.sequence[k]);
        break;
      case Value::Kind::kMap:
      case Value::Kind::kMapSequence:
        out[name + ".keys"] = std::move(v.keys);
        out[name + ".values"] = std::move(v.values);
        break;
      case Value::Kind::kNone: break;
    }
  }
  return out;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Runs the case again on `plain` (a session of the same model made with
// optimize = false, as DLRT_OPTIMIZE=0 makes it) and checks that every
// expected output comes out with the same bits as `got`.
bool same_bits_unoptimized(const ZooCase& c, const Session& plain, const RunOutputs& got) {
  auto unopt = run_case(plain, c);
  if (!unopt.ok()) {
    ADD_FAILURE() << "without optimisation: " << unopt.status().to_string();
    return false;
  }
  bool same = true;
  for (const auto& [name, path] : c.expected) {
    const auto a = got.find(sanitize(name));
    const auto b = unopt->find(sanitize(name));
    if (a == got.end() || b == unopt->end() || !same_bytes(a->second, b->second)) {
      ADD_FAILURE() << "output '" << name << "' differs between the optimised run and DLRT_OPTIMIZE=0 (a fusion "
                    << "upstream of a dynamic quantizer changed float bits)";
      same = false;
    }
  }
  std::printf("zoo: %s/%s: optimised and DLRT_OPTIMIZE=0 outputs %s\n", c.model.c_str(), c.name.c_str(),
              same ? "equal bit for bit" : "DIFFER");
  return same;
}

// Runs every case under root and compares its outputs; prints how many match.
// One session per model (with the options `dlrt run` uses by default) runs
// all of its cases in order, as an application runs one session many times,
// so the later cases also check a session run again with other shapes; a
// process per case would spend most of the time creating sessions.
void run_zoo(const fs::path& root, const char* label) {
  ASSERT_TRUE(fs::is_directory(root)) << root << " is not a folder";

  std::string error;
  std::vector<ZooCase> cases = fs::exists(root / "manifest.json") ? from_manifest(root, error) : discover(root);
  ASSERT_TRUE(error.empty()) << root / "manifest.json" << ": " << error;
  ASSERT_FALSE(cases.empty()) << "no models with cases found in " << root;

  int passed = 0;
  std::unique_ptr<Session> session, plain;
  Status create_error;
  fs::path loaded;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.model + "/" + c.name);
    if (c.onnx != loaded) {
      loaded = c.onnx;
      session.reset();
      plain.reset();
      auto s = Session::create(c.onnx.string());
      create_error = s.ok() ? Status() : s.status();
      if (s.ok()) session = std::move(*s);
      if (s.ok() && c.bit_exact_optimized) {
        SessionOptions options;
        options.optimize = false;
        auto p = Session::create(c.onnx.string(), options);
        if (p.ok()) plain = std::move(*p);
        else create_error = Status(p.status().code(), "without optimisation: " + p.status().message());
      }
    }
    Result<RunOutputs> got = create_error.ok() ? run_case(*session, c) : Result<RunOutputs>(create_error);
    if (!got.ok()) {
      std::printf("zoo: %s/%s: failed (%s) -> MISMATCH\n", c.model.c_str(), c.name.c_str(),
                  got.status().to_string().c_str());
      ADD_FAILURE() << c.onnx << ": " << got.status().to_string();
      continue;
    }
    bool case_ok = !c.expected.empty();
    for (const auto& [name, path] : c.expected) {
      auto want = read_npy_file(path.string());
      const auto it = got->find(sanitize(name));
      if (!want.ok() || it == got->end()) {
        ADD_FAILURE() << "output '" << name << "': "
                      << (want.ok() ? "the model has no output of that name" : want.status().to_string());
        case_ok = false;
        continue;
      }
      const Tensor& out = it->second;
      if (out.shape() != want->shape() || out.dtype() != want->dtype()) {
        ADD_FAILURE() << "output '" << name << "': " << dtype_name(out.dtype()) << " " << shape_to_string(out.shape())
                      << ", expected " << dtype_name(want->dtype()) << " " << shape_to_string(want->shape());
        case_ok = false;
        continue;
      }
      case_ok = compare_output(c, name, *want, out) && case_ok;
    }
    if (c.bit_exact_optimized && plain) case_ok = same_bits_unoptimized(c, *plain, *got) && case_ok;
    passed += case_ok;
  }
  std::printf("%s: %d of %zu cases match\n", label, passed, cases.size());
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
