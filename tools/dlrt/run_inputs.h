// Inputs and reports shared by the commands that run a model (dlrt run,
// dlrt bench): the --input/--shape flags, feeds from .npy files or random
// values, and the JSON form of a RunReport.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "dlrt/session.h"
#include "dlrt/tensor.h"

namespace dlrt::cli {

// Milliseconds since t0.
double ms_since(std::chrono::steady_clock::time_point t0);

// "[1, sequence, 384]": the model's declared shape, dynamic dims by name or "?".
std::string declared_shape(const TensorInfo& info);

// Prints "dlrt COMMAND: error: MESSAGE" on stderr; returns `code`.
int command_error(const std::string& command, const std::string& message, int code);

// What --input NAME=FILE and --shape NAME=DIMS asked for.
struct InputFlags {
  std::map<std::string, std::string> files;  // input name -> .npy path
  std::map<std::string, Shape> shapes;       // input name -> shape of its random value
};

// Reads the repeatable --input and --shape flags of `args`. Returns kExitOk,
// or prints a usage error for `command` and returns kExitUsage.
int parse_input_flags(const Args& args, const std::string& command, InputFlags& out);

struct PreparedInput {
  std::string name;
  std::string source;  // "random" or the .npy path
  Tensor tensor;
};

// Checks every name in `flags` against the session's inputs (for --shape, an
// input or a named dim, ONNX's dim_param: --shape sequence=128) and makes one
// tensor per model input: from its .npy file, else random. A random input's
// dynamic dims are --shape's; else a named dim's size, from --shape NAME=N or
// from an input given with --shape or --input that has the same named dim
// (--shape input_ids=1x128 sizes attention_mask [batch, sequence] too); else 1. Returns kExitOk, or prints the error for
// `command` and returns its exit code (kExitUsage for a bad flag,
// kExitRuntimeError for an unreadable or mismatched file).
int prepare_inputs(const Session& session, const InputFlags& flags, std::mt19937_64& rng, const std::string& command,
                   std::vector<PreparedInput>& out);

// For --precision auto: the --input files as the one canary input set when
// they give every input of the model at `path` (read without a session);
// none otherwise (auto then generates its inputs).
std::vector<std::map<std::string, Tensor>> canary_from_input_files(const std::string& path, const InputFlags& flags);

// The batch a run of `inputs` holds: dim 0 of the first input whose dim 0 is
// dynamic, else of the first input with a dim; 1 for scalars only.
int64_t batch_size_of(const Session& session, const std::vector<PreparedInput>& inputs);

// The feeds of Session::run for prepared inputs.
std::map<std::string, Tensor> feeds_of(const std::vector<PreparedInput>& inputs);

// [{"name","dtype","shape","source"}] as `dlrt run --json` prints its inputs.
nlohmann::json inputs_json(const std::vector<PreparedInput>& inputs);

// [{"backend","device","node_count","degraded","reason","time_ms"}, plus
// "precision" and "vector_isa" on CPU partitions], one per partition: the
// "report" of `dlrt run --json`.
nlohmann::json report_json(const RunReport& report);

// A partition's device as the text reports print it: "cpu:0, avx2 vectors" on
// the CPU, the device alone elsewhere.
std::string device_label(const PartitionReport& p);

}  // namespace dlrt::cli
