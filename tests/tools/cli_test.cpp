// The dlrt CLI as a user sees it: exit codes, messages, JSON, files written.
// Drives the built binary (target dlrt_cli) on models from
// tests/models/make_test_models.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "core/npy.h"
#include "dlrt/dlrt.h"

namespace dlrt {
namespace {

using testing::CommandResult;
using testing::quote;
using testing::run_command;

namespace fs = std::filesystem;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(testing::dlrt_binary()))
      GTEST_FAIL() << testing::dlrt_binary() << " is missing: build the dlrt_cli target (ninja dlrt_cli)";
    std::string err;
    models_ = testing::test_models_dir(&err);
    ASSERT_FALSE(models_.empty()) << err;
    tmp_ = fs::temp_directory_path() / ("dlrt_cli_test_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  CommandResult dlrt(const std::string& args) { return run_command(quote(testing::dlrt_binary()) + " " + args); }
  std::string model(const std::string& name) { return quote(models_ + "/" + name); }

  std::string models_;
  fs::path tmp_;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Non-zero exit with `code`, no crash, and every word of `needles` in the message.
void expect_clean_error(const CommandResult& r, int code, const std::vector<std::string>& needles) {
  EXPECT_FALSE(r.signaled) << "crashed with signal " << r.signal << ":\n" << r.output;
  EXPECT_EQ(r.exit_code, code) << r.output;
  EXPECT_EQ(r.output.find("core dumped"), std::string::npos) << r.output;
  for (const auto& n : needles) EXPECT_NE(lower(r.output).find(lower(n)), std::string::npos) << "no '" << n << "' in:\n" << r.output;
}

// One version source (CMake's project version): the CLI, the library and
// the header agree.
TEST_F(CliTest, VersionIsTheProjectVersion) {
  for (const char* flag : {"--version", "version"}) {
    auto r = dlrt(flag);
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_EQ(r.output, std::string("dlrt ") + DLRT_VERSION_STRING + "\n") << flag;
  }
  EXPECT_STREQ(dlrt::version(), DLRT_VERSION_STRING);
  EXPECT_EQ(std::string(DLRT_VERSION_STRING), std::to_string(DLRT_VERSION_MAJOR) + "." +
                                                  std::to_string(DLRT_VERSION_MINOR) + "." +
                                                  std::to_string(DLRT_VERSION_PATCH));
}

TEST_F(CliTest, HelpAndUsageErrors) {
  auto r = dlrt("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("usage: dlrt"), std::string::npos);
  for (const char* cmd : {"run", "inspect", "conformance"}) {
    r = dlrt(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.output.find(std::string("usage: dlrt ") + cmd), std::string::npos) << r.output;
  }
  expect_clean_error(dlrt(""), 2, {"usage"});
  expect_clean_error(dlrt("frobnicate"), 2, {"unknown command 'frobnicate'"});
  expect_clean_error(dlrt("run"), 2, {"missing MODEL"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --bogus"), 2, {"unknown option '--bogus'"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --threads abc"), 2, {"--threads"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --input"), 2, {"needs a value"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --input x"), 2, {"NAME=VALUE"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --json=yes"), 2, {"takes no value"});
  expect_clean_error(dlrt("inspect"), 2, {"missing MODEL"});
  expect_clean_error(dlrt("inspect " + model("mlp.onnx") + " --nope"), 2, {"--nope"});
  expect_clean_error(dlrt("conformance"), 2, {"missing DIR"});
  expect_clean_error(dlrt("conformance /nonexistent/folder"), 2, {"not a folder"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --device bogus"), 2, {"bogus"});
}

TEST_F(CliTest, RunPrintsOutputsPlacementAndTimings) {
  auto r = dlrt("run " + model("conv_net.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* s : {"logits: float32 [1, 10]", "values: [", "min ", "mean ", "placement:", "partition 0:", "cpu",
                        "timings: session_create", " run "})
    EXPECT_NE(r.output.find(s), std::string::npos) << "no '" << s << "' in:\n" << r.output;
}

TEST_F(CliTest, RunWithInputFileMatchesNumpy) {
  auto r = dlrt("run " + model("mlp.onnx") + " --input x=" + model("mlp_input.npy") + " --output-dir " + quote(tmp_.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto got = read_npy_file((tmp_ / "probs.npy").string());
  auto want = read_npy_file(models_ + "/mlp_expected.npy");
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  ASSERT_EQ(got->shape(), want->shape());
  for (int64_t i = 0; i < want->size(); ++i) EXPECT_NEAR(got->data<float>()[i], want->data<float>()[i], 1e-5) << i;
}

TEST_F(CliTest, RunJsonHasOutputsReportAndTimings) {
  auto r = dlrt("run " + model("mlp.onnx") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "not JSON:\n" << r.output;
  ASSERT_TRUE(j["outputs"].is_array());
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "probs");
  EXPECT_EQ(j["outputs"][0]["dtype"], "float32");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::array({2, 3}));
  ASSERT_TRUE(j["report"].is_array());
  ASSERT_GE(j["report"].size(), 1u);
  for (const char* k : {"backend", "device", "node_count", "degraded", "reason"})
    EXPECT_TRUE(j["report"][0].contains(k)) << k << " missing in " << j["report"].dump();
  EXPECT_EQ(j["report"][0]["backend"], "cpu");
  EXPECT_EQ(j["report"][0]["node_count"], 6);
  EXPECT_TRUE(j["timings_ms"]["session_create"].is_number());
  EXPECT_TRUE(j["timings_ms"]["run"].is_number());
}

// Every --json printer writes bytes that are not UTF-8 (here in the model's path) as U+FFFD
// instead of aborting in the JSON library.
TEST_F(CliTest, JsonOutputSurvivesBytesThatAreNotUtf8) {
  const fs::path odd = tmp_ / "m\xff\xfe.onnx";
  fs::copy_file(models_ + "/mlp.onnx", odd);
  for (const std::string& cmd : {std::string("run"), std::string("inspect"), std::string("bench --iterations 1 --warmup 0")}) {
    SCOPED_TRACE(cmd);
    const std::string verb = cmd.substr(0, cmd.find(' '));
    auto r = dlrt(verb + " " + quote(odd.string()) + cmd.substr(verb.size()) + " --json");
    EXPECT_FALSE(r.signaled) << r.output;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = nlohmann::json::parse(r.output.substr(std::min(r.output.find('{'), r.output.size())), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << r.output;
    EXPECT_NE(r.output.find("\xef\xbf\xbd"), std::string::npos) << "no U+FFFD for the bad bytes:\n" << r.output;
  }
}

// An input file that never ends is read up to a bound, then refused with a clear error.
TEST_F(CliTest, EndlessInputFileIsRefused) {
  auto r = run_command(testing::memory_limit_prefix() + quote(testing::dlrt_binary()) + " run " + model("mlp.onnx") +
                       " --input x=/dev/zero");
  EXPECT_FALSE(r.signaled) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("endless stream"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("core dumped"), std::string::npos) << r.output;
}

// A shape that would allocate more than the tensor memory budget fails at once with the node
// and the sizes, whatever made it (here Resize scales from an input); DLRT_MAX_TENSOR_MB sets
// the budget.
TEST_F(CliTest, TensorsOverTheMemoryBudgetFailClearly) {
  const std::string resize = "run " + model("resize_scales_input.onnx") + " --input scales=";
  for (const char* scale : {"1e10", "1e9", "3e8"}) {
    SCOPED_TRACE(scale);
    auto start = std::chrono::steady_clock::now();
    auto r = run_command(testing::memory_limit_prefix() + quote(testing::dlrt_binary()) + " " + resize +
                         model(std::string("bad/resize_scales_") + scale + ".npy"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_FALSE(r.signaled) << r.output;
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("node 'resize_by_input' (Resize)"), std::string::npos) << r.output;
    EXPECT_TRUE(r.output.find("over the") != std::string::npos || r.output.find("overflows 64 bits") != std::string::npos)
        << r.output;
    EXPECT_LT(seconds, 10) << "the budget must be checked before the work, not after";
  }
  // Scale 300: a 1200 x 1200 float32 output, 5.5 MiB.
  const std::string by_300 = resize + model("bad/resize_scales_300.npy");
  auto small = run_command("DLRT_MAX_TENSOR_MB=1 " + quote(testing::dlrt_binary()) + " " + by_300);
  EXPECT_EQ(small.exit_code, 1) << small.output;
  EXPECT_NE(small.output.find("would allocate 5.5 MiB, over the 1.0 MiB limit (DLRT_MAX_TENSOR_MB)"), std::string::npos)
      << small.output;
  EXPECT_EQ(run_command("DLRT_MAX_TENSOR_MB=64 " + quote(testing::dlrt_binary()) + " " + by_300).exit_code, 0);
}

TEST_F(CliTest, OutputDirSanitisesNames) {
  auto r = dlrt("run " + model("dynamic_batch.onnx") + " --output-dir " + quote((tmp_ / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(tmp_ / "out" / "scores_out_0.npy")) << r.output;
  EXPECT_FALSE(fs::exists(tmp_ / "out" / "scores"));
}

TEST_F(CliTest, ShapeFlagSetsDynamicDims) {
  auto r = dlrt("run " + model("dynamic_batch.onnx") + " --shape x=1x128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::array({1, 128}));
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::array({1, 128}));
  // Without --shape, dynamic dims default to 1.
  r = dlrt("run " + model("dynamic_batch.onnx") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["outputs"][0]["shape"], nlohmann::json::array({1, 1}));
  expect_clean_error(dlrt("run " + model("dynamic_batch.onnx") + " --shape x=1x2x3"), 2, {"rank 2"});
  expect_clean_error(dlrt("run " + model("dynamic_batch.onnx") + " --shape y=4"), 2, {"no input or named dim 'y'", "named dims: batch, seq"});
  expect_clean_error(dlrt("run " + model("dynamic_batch.onnx") + " --shape x=1xz"), 2, {"bad shape"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --shape x=3x4"), 2, {"fixed to 2"});
}

TEST_F(CliTest, SubgraphsAndExternalDataRun) {
  auto r = dlrt("run " + model("external_data.onnx") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 40 nested Ifs: past protobuf's default nesting limit, still a valid model.
  r = dlrt("run " + model("nested_if.onnx") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto nested = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(nested.is_discarded()) << r.output;
  EXPECT_EQ(nested["outputs"][0]["shape"], nlohmann::json::array({3})) << r.output;
  r = dlrt("inspect " + model("if_model.onnx") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  // Subgraph nodes are counted in the histogram.
  EXPECT_EQ(j["op_histogram"]["If"], 1);
  EXPECT_EQ(j["op_histogram"]["Add"], 1);
  EXPECT_EQ(j["op_histogram"]["Neg"], 1);
  EXPECT_EQ(j["node_count"], 3);
}

TEST_F(CliTest, InspectReportsOpsetsHistogramAndParameters) {
  auto r = dlrt("inspect " + model("mlp.onnx") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["opsets"]["ai.onnx"], 17);
  EXPECT_EQ(j["op_histogram"]["MatMul"], 2);
  EXPECT_EQ(j["op_histogram"]["Softmax"], 1);
  EXPECT_EQ(j["parameter_count"], 4 * 8 + 8 + 8 * 3 + 3);
  EXPECT_EQ(j["parameter_bytes"], 4 * (4 * 8 + 8 + 8 * 3 + 3));
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["outputs"][0]["name"], "probs");
  r = dlrt("inspect " + model("dynamic_batch.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("x: float32 [batch, seq]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("parameters: 1 (4 bytes"), std::string::npos) << r.output;
}

// --device cpu names what each partition computes in: int8 products with the
// kernel this CPU runs (dynamic int8, and static QDQ after its rewrite into
// integer ops), float16 values held as float32.
TEST_F(CliTest, InspectNamesThePrecisionOfEachPartition) {
  auto r = dlrt("inspect " + model("int8_matmul.onnx") + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("computes in f32, int8 "), std::string::npos) << r.output;
  r = dlrt("inspect " + model("qdq_matmul.onnx") + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("computes in f32, int8 "), std::string::npos) << r.output;
  r = dlrt("inspect " + model("qdq_matmul.onnx") + " --device cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  ASSERT_EQ(j["placement"].size(), 1u) << r.output;
  EXPECT_EQ(j["placement"][0]["precision"].get<std::string>().rfind("f32, int8 ", 0), 0u) << r.output;
  EXPECT_EQ(j["op_histogram"]["QuantizeLinear"], 2) << "the histogram is the model's, as declared";
  // With the optimizer off the QDQ model runs as float ops, and says so.
  r = run_command("env DLRT_OPTIMIZE=0 " + quote(testing::dlrt_binary()) + " inspect " + model("qdq_matmul.onnx") +
                  " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("computes in f32\n"), std::string::npos) << r.output;
  r = dlrt("inspect " + model("fp16_mlp.onnx") + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("computes in f32, float16 storage"), std::string::npos) << r.output;
  r = dlrt("inspect " + model("mlp.onnx") + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("computes in f32\n"), std::string::npos) << r.output;
  for (const char* m : {"int8_matmul.onnx", "qdq_matmul.onnx", "fp16_mlp.onnx"}) {
    r = dlrt(std::string("run ") + model(m));
    EXPECT_EQ(r.exit_code, 0) << m << ": " << r.output;
  }
}

// Every CPU partition names the vector ISA its kernels ran with, in the JSON
// report and the text; DLRT_CPU_ISA caps it (generic runs on every CPU).
TEST_F(CliTest, RunReportNamesTheVectorIsa) {
  const std::string bin = quote(testing::dlrt_binary());
  auto r = run_command("env DLRT_CPU_ISA=generic " + bin + " run " + model("mlp.onnx") + " --device cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  ASSERT_FALSE(j["report"].empty()) << r.output;
  EXPECT_EQ(j["report"][0]["vector_isa"], "generic") << r.output;
  r = run_command("env -u DLRT_CPU_ISA " + bin + " run " + model("mlp.onnx") + " --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.output.find("(cpu:0, avx512 vectors)") != std::string::npos ||
              r.output.find("(cpu:0, avx2 vectors)") != std::string::npos ||
              r.output.find("(cpu:0, neon vectors)") != std::string::npos ||
              r.output.find("(cpu:0, generic vectors)") != std::string::npos)
      << r.output;
}

struct BadModel {
  const char* file;
  int exit_code;
  std::vector<std::string> needles;
};

// Keeps test names readable (gtest would print the struct's bytes).
void PrintTo(const BadModel& b, std::ostream* os) { *os << b.file; }

class CliBadModelTest : public CliTest, public ::testing::WithParamInterface<BadModel> {};

TEST_P(CliBadModelTest, RunFailsCleanlyNamingTheProblem) {
  const BadModel& b = GetParam();
  expect_clean_error(dlrt("run " + model(std::string("bad/") + b.file)), b.exit_code, b.needles);
}

TEST_P(CliBadModelTest, InspectFailsCleanly) {
  const BadModel& b = GetParam();
  auto r = dlrt("inspect " + model(std::string("bad/") + b.file));
  EXPECT_FALSE(r.signaled) << r.output;
  // Some problems (an op without a kernel, a shape too large to feed) only show when running.
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    BadModels, CliBadModelTest,
    ::testing::Values(BadModel{"truncated.onnx", 3, {"truncated.onnx", "not a valid onnx"}},
                      BadModel{"not_onnx.onnx", 3, {"not_onnx.onnx", "not a valid onnx"}},
                      BadModel{"empty.onnx", 3, {"empty.onnx", "empty"}},
                      BadModel{"custom_op.onnx", 3, {"FancyCustomOp", "com.example", "opset 1", "my_custom_node"}},
                      BadModel{"opset29.onnx", 3, {"opset 29"}},
                      BadModel{"opset99.onnx", 3, {"opset 99"}},
                      BadModel{"external_escape.onnx", 3, {"../x.bin", "escapes"}},
                      BadModel{"external_absolute.onnx", 3, {"/etc/passwd", "absolute"}},
                      BadModel{"external_missing.onnx", 3, {"missing.bin"}},
                      BadModel{"external_length_past_end.onnx", 3, {"short.bin", "past the end"}},
                      BadModel{"external_offset_past_end.onnx", 3, {"short.bin", "past the end"}},
                      BadModel{"short_initializer.onnx", 3, {"(tensor name: w)", "8 bytes"}},
                      BadModel{"overflow_initializer.onnx", 3, {"(tensor name: w)", "product overflow"}},
                      BadModel{"overflow_input.onnx", 1, {"input 'x'", "overflows 64 bits"}},
                      BadModel{"cycle.onnx", 3, {"cycle"}},
                      BadModel{"conv_stride0.onnx", 3, {"conv_stride0", "strides must be positive"}},
                      BadModel{"convtranspose_rank2.onnx", 3, {"convt_rank2", "rank 3 or more"}},
                      BadModel{"undefined_input.onnx", 3, {"reads_nothing", "input 'nowhere' is not"}},
                      BadModel{"scan_no_count.onnx", 3, {"scan_no_count", "the required attribute 'num_scan_inputs' is missing"}},
                      BadModel{"split0.onnx", 3, {"split0", "split must be positive"}},
                      BadModel{"stft_rank1.onnx", 3, {"stft_rank1", "rank 3", "got rank 1"}},
                      BadModel{"opset_huge.onnx", 3, {"version 4294967313", "no opset"}},
                      BadModel{"complex_input.onnx", 3, {"input 'x'", "COMPLEX64"}}),
    [](const ::testing::TestParamInfo<BadModel>& info) {
      std::string n = info.param.file;
      return n.substr(0, n.find('.'));
    });

TEST_F(CliTest, BadInputsFailCleanly) {
  const std::string mlp = "run " + model("mlp.onnx");
  expect_clean_error(dlrt(mlp + " --input y=" + model("mlp_input.npy")), 2, {"no input 'y'", "inputs: x"});
  expect_clean_error(dlrt(mlp + " --input x=" + model("bad/wrong_dtype.npy")), 1, {"input 'x'", "float32", "int64"});
  expect_clean_error(dlrt(mlp + " --input x=" + model("bad/wrong_rank.npy")), 1, {"input 'x'", "rank 2", "[8]"});
  expect_clean_error(dlrt(mlp + " --input x=" + model("bad/malformed.npy")), 1, {"malformed.npy", "truncated"});
  expect_clean_error(dlrt(mlp + " --input x=" + model("bad/fortran.npy")), 1, {"fortran.npy", "Fortran"});
  expect_clean_error(dlrt(mlp + " --input x=" + model("bad/empty.onnx")), 1, {"empty.onnx", "bad magic"});
  expect_clean_error(dlrt(mlp + " --input x=/nonexistent.npy"), 1, {"/nonexistent.npy", "cannot open"});
  expect_clean_error(dlrt("run /nonexistent/model.onnx"), 3, {"/nonexistent/model.onnx"});
}

TEST_F(CliTest, StrictModeWithUnavailableDeviceExits4) {
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --device npu --strict"), 4, {"npu"});
  // The cpu backend has one device: cpu:7 names nothing (it ran on cpu:0 with exit 0).
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --device cpu:7 --strict"), 4, {"cpu:7", "cpu:0"});
  EXPECT_EQ(dlrt("run " + model("mlp.onnx") + " --device cpu:0 --strict").exit_code, 0);
  // Without --strict it falls back to the CPU and says so.
  auto r = dlrt("run " + model("mlp.onnx") + " --device npu --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

// Issue 3's acceptance check, through the environment as a user would do it.
TEST_F(CliTest, EnvDeviceNpuFallsBackVisiblyOrExits4WhenStrict) {
  auto r = run_command("env -u DLRT_STRICT -u DLRT_CONFIG DLRT_DEVICE=npu " + quote(testing::dlrt_binary()) + " run " +
                       model("mlp.onnx") + " --json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  ASSERT_EQ(j["report"].size(), 1u);
  EXPECT_EQ(j["report"][0]["backend"], "cpu");
  EXPECT_EQ(j["report"][0]["degraded"], true);
  EXPECT_NE(j["report"][0]["reason"].get<std::string>().find("npu"), std::string::npos) << j["report"].dump();
  auto strict = run_command("env -u DLRT_CONFIG DLRT_DEVICE=npu DLRT_STRICT=1 " + quote(testing::dlrt_binary()) +
                            " run " + model("mlp.onnx"));
  expect_clean_error(strict, 4, {"npu", "strict", "fix:"});
}

// --config FILE: the file's settings apply, flags and environment win over it.
TEST_F(CliTest, ConfigFileSettingsAndPrecedence) {
  const std::string cfg = (tmp_ / "dlrt.toml").string();
  std::ofstream(cfg) << "device = \"npu\"\nstrict = true\n";
  const std::string env = "env -u DLRT_DEVICE -u DLRT_STRICT -u DLRT_CONFIG ";
  const std::string bin = quote(testing::dlrt_binary());
  expect_clean_error(run_command(env + bin + " run " + model("mlp.onnx") + " --config " + quote(cfg)), 4, {"npu"});
  EXPECT_EQ(run_command(env + bin + " run " + model("mlp.onnx") + " --config " + quote(cfg) + " --device cpu").exit_code, 0);
  EXPECT_EQ(run_command(env + "DLRT_DEVICE=cpu " + bin + " run " + model("mlp.onnx") + " --config " + quote(cfg)).exit_code, 0);
  EXPECT_EQ(run_command(env + "DLRT_STRICT=0 " + bin + " run " + model("mlp.onnx") + " --config " + quote(cfg)).exit_code, 0);
  // DLRT_CONFIG is the same as --config.
  expect_clean_error(run_command(env + "DLRT_CONFIG=" + quote(cfg) + " " + bin + " run " + model("mlp.onnx")), 4, {"npu"});
  expect_clean_error(dlrt("run " + model("mlp.onnx") + " --config " + quote((tmp_ / "missing.toml").string())), 2,
                     {"missing.toml", "does not exist"});
  std::ofstream(cfg) << "devcie = \"cpu\"\n";
  expect_clean_error(run_command(env + bin + " run " + model("mlp.onnx") + " --config " + quote(cfg)), 2, {"devcie"});
}

TEST_F(CliTest, ConformanceLinesTotalsAndExitCode) {
  const std::string cases = model("conformance_cases");
  auto r = dlrt("conformance " + cases);
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exit_code, 1) << r.output;  // mlp_wrong fails
  for (const char* s : {"PASS conformance_cases/mlp_ok\n", "FAIL conformance_cases/mlp_wrong: ",
                        "UNSUPPORTED conformance_cases/custom_op: ", "SKIP conformance_cases/test_momentum_case: training-only\n",
                        "conformance: 1 passed, 1 failed, 1 unsupported\n"})
    EXPECT_NE(r.output.find(s), std::string::npos) << "no '" << s << "' in:\n" << r.output;

  r = dlrt("conformance " + model("conformance_cases/mlp_ok"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("conformance: 1 passed, 0 failed, 0 unsupported"), std::string::npos) << r.output;

  r = dlrt("conformance " + cases + " --json");
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["passed"], 1);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["unsupported"], 1);
  EXPECT_EQ(j["skipped"], 1);
  EXPECT_EQ(j["cases"].size(), 4u);
}

TEST_F(CliTest, ConformanceListPassingAndExpect) {
  const std::string cases = model("conformance_cases");
  const std::string list = (tmp_ / "passing.txt").string();
  auto r = dlrt("conformance " + cases + " --list-passing " + quote(list));
  std::ifstream f(list);
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "conformance_cases/mlp_ok\n");

  // Everything expected passes: exit 0 even though another case fails.
  r = dlrt("conformance " + cases + " --expect " + quote(list));
  EXPECT_EQ(r.exit_code, 0) << r.output;

  // An expected case that fails, and one that does not exist: exit 1, both named.
  const std::string expect = (tmp_ / "expect.txt").string();
  std::ofstream(expect) << "# comment\nconformance_cases/mlp_ok\nconformance_cases/mlp_wrong\n\nconformance_cases/gone\n";
  r = dlrt("conformance " + cases + " --expect " + quote(expect));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("REGRESSION conformance_cases/mlp_wrong: FAIL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("REGRESSION conformance_cases/gone: not run"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("REGRESSION conformance_cases/mlp_ok"), std::string::npos) << r.output;
  expect_clean_error(dlrt("conformance " + cases + " --expect /nonexistent.txt"), 2, {"/nonexistent.txt"});
}

}  // namespace
}  // namespace dlrt
