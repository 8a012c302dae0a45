// dlrt embed --model DIR [TEXT... | --file LINES.txt]: text -> embedding vectors
// with a sentence-transformers / Hugging Face model folder (apps/embed).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "core/npy.h"
#include "commands.h"
#include "embed/models/kind.h"
#include "embed/models/output_type.h"
#include "embed/models/prepare_inputs.h"
#include "embed/models/registry.h"
#include "embed/models/sparse.h"
#include "embed_clip.h"
#include "embed_tokens.h"
#include "json_out.h"
#include "progress.h"
#include "text_lines.h"
#include "vector_output.h"

namespace dlrt::cli {
namespace {

constexpr const char* kEmbedHelp =
    "usage: dlrt embed --model DIR [options] [TEXT...]\n"
    "       dlrt embed --model CLIP_DIR --image FILE...\n"
    "\n"
    "Embeds each TEXT (or each line of --file) with the model folder DIR: a\n"
    "sentence-transformers / Hugging Face ONNX export (model.onnx or onnx/model.onnx,\n"
    "tokenizer.json or vocab.txt, optional tokenizer_config.json, config.json,\n"
    "modules.json, 1_Pooling/config.json). Prints one vector per line (space-separated)\n"
    "unless --json or --npy is given. A multi-vector (ColBERT / PyLate) folder gives one\n"
    "vector per token, as --tokens prints them. A CLIP folder (onnx/text_model.onnx and\n"
    "onnx/vision_model.onnx) embeds texts, or with --image image files, into one space.\n"
    "\n"
    "options:\n"
    "  --model DIR        the model folder (required; its model.onnx names it too)\n"
    "  --device SPEC      auto, cpu, gpu, npu, a backend or backend:device (default: DLRT_DEVICE, else auto)\n"
    "  --strict           fail instead of falling back to another device\n"
    "  --threads N        CPU threads (0: one per core)\n"
    "  --cpu-precision P  CPU float matmuls: f32 (default), bf16, bf16x3, or auto (the fastest within a\n"
    "                     bound of f32 on warm-up texts, measured at load: docs/performance-precision.md).\n"
    "                     Also DLRT_CPU_PRECISION\n"
    "  --file PATH        read the texts from PATH, one per line ('-': standard input)\n"
    "  --batch N          texts per model run (default 32; texts of similar token counts run together;\n"
    "                     a dynamically quantized model gives each text its own int8 scales:\n"
    "                     see docs/embed-batching.md)\n"
    "  --max-length N     tokens per text, [CLS]/[SEP] included (default: the folder's)\n"
    "  --prompt-name NAME put the folder's prompt NAME (config_sentence_transformers.json's \"prompts\")\n"
    "                     in front of each text (default: its default_prompt_name, as dlrt serve does)\n"
    "  --prompt TEXT      put TEXT in front of each text instead (--prompt '': no prompt at all)\n"
    "  --quiet            no progress or summary on stderr\n"
    "  --progress         progress and a summary on stderr even when it is not a terminal (they show\n"
    "                     by default on a terminal; DLRT_PROGRESS=1 or 0 sets the default)\n"
    "  --json             print one JSON object {model, dimension, pooling, normalized, max_length, batching,\n"
    "                     data: [{index, tokens, embedding}]}\n"
    "  --npy OUT.npy      write the vectors as a float32 [count, dimension] .npy file\n"
    "  --tokens           one vector per token instead of one per text: the model's token vectors (as\n"
    "                     sentence-transformers' output_value=\"token_embeddings\"), one per line, an empty\n"
    "                     line after each text's; --json gives data: [{index, tokens, embeddings}]\n"
    "  --query, --document  embed the texts as queries or documents (sentence-transformers' encode_query /\n"
    "                     encode_document): the folder's \"query\" (\"document\", \"passage\", \"corpus\") prompt\n"
    "                     unless --prompt or --prompt-name says otherwise, and a Router folder's query or\n"
    "                     document route; a multi-vector folder: queries (the default, as PyLate's encode)\n"
    "                     or documents\n"
    "  --sparse           a sparse (SPLADE) model folder (modules.json: MLMTransformer + SpladePooling):\n"
    "                     print each text's non-zero weights as INDEX:VALUE pairs, indices ascending\n"
    "                     (--json: data: [{index, tokens, indices, values}]); required for such a folder\n"
    "  --top-k K          with --sparse, keep each text's K largest weights (default: all non-zero)\n"
    "  --precision TYPE   float32 (the default), int8, uint8, binary or ubinary: the vectors quantized as\n"
    "                     sentence-transformers' quantize_embeddings does (docs/embed-output-types.md);\n"
    "                     --npy writes int8 / uint8 arrays, binary types one bit per dimension, packed\n"
    "  --calibration F.npy  int8 / uint8: the per-dimension ranges from these float [rows, dimension]\n"
    "                     calibration embeddings (a [2, dimension] file of minimums and maximums is its\n"
    "                     own ranges); without it the ranges of the texts embedded (two at least)\n"
    "  --image            the arguments (or --file's lines) are image files (JPEG, PNG, WebP, GIF) for a\n"
    "                     CLIP folder's vision tower; unit vectors in the space of its texts'\n"
    "  -h, --help         this help\n"
    "\n"
    "exit codes: 0 ok, 1 run error, 2 usage, 3 bad model folder, 4 device unavailable\n";

// A [count, cols] array of `descr` ('<f4', '|i1', '|u1') whose rows `row(i)` gives as bytes.
template <class RowBytes>
bool write_npy(const std::string& path, const char* descr, size_t count, size_t cols, RowBytes row) {
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(count) + ", " + std::to_string(cols) + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) return false;
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char le[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
  f.write(le, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (size_t i = 0; i < count; ++i) {
    const std::string_view bytes = row(i);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  return static_cast<bool>(f);
}

// "embedded 5000 texts (61234 tokens) in 12.3 s: 406.5 texts/s on cpu:0"
std::string summary_line(size_t count, const std::vector<size_t>& tokens, double seconds,
                         const embed::EmbedModel& embedder) {
  size_t total_tokens = 0;
  for (size_t t : tokens) total_tokens += t;
  std::string devices;
  for (const auto& p : embedder.placement().partitions)
    if (devices.find(p.device) == std::string::npos) devices += (devices.empty() ? "" : ", ") + p.device;
  char buf[256];
  std::snprintf(buf, sizeof buf, "embedded %zu texts (%zu tokens) in %.2f s: %.1f texts/s on %s", count, total_tokens,
                seconds, seconds > 0 ? static_cast<double>(count) / seconds : 0.0,
                devices.empty() ? "cpu:0" : devices.c_str());
  const PrecisionChoice* precision = embedder.precision_choice();
  return precision && precision->automatic ? std::string(buf) + ", cpu precision auto: " + precision->reason
                                           : std::string(buf);
}

// --sparse: the texts' sparse vectors, printed as INDEX:VALUE pairs or --json.
int embed_sparse(const embed::EmbedModel& embedder, std::vector<embed::Encoding> encodings,
                 const std::vector<size_t>& tokens, size_t batch, size_t top_k, const Args& args) {
  const embed::SparseOut& sparse = *embedder.as<embed::SparseOut>();
  const size_t count = encodings.size();
  std::vector<embed::SparseVector> vectors(count);
  Progress progress(progress_wanted(args.has("quiet"), args.has("progress")), "embedding", "texts", count);
  size_t done = 0;
  progress.update(0);
  const Status encoded = embed::encode_sparse_inputs(sparse, std::move(encodings), batch, top_k,
                                                     [&](size_t i, embed::SparseVector&& v) {
                                                       vectors[i] = std::move(v);
                                                       progress.update(++done);
                                                       return Status::Ok();
                                                     });
  if (!encoded.ok()) {
    progress.finish("stopped after " + std::to_string(done) + " of " + std::to_string(count) + " texts");
    std::fprintf(stderr, "dlrt embed: error: %s\n", encoded.to_string().c_str());
    return exit_code_for_run_status(encoded);
  }
  progress.finish(summary_line(count, tokens, progress.seconds(), embedder));
  if (args.has("json")) {
    const embed::SpladePooling* pooling = sparse.splade_pooling();
    nlohmann::ordered_json j;
    j["model"] = embedder.model_name();
    j["kind"] = embed::model_kind_name(embedder.kind());
    j["dimension"] = embedder.dimension();
    // A SparseStaticEmbedding has no pooling: a weight per token present.
    j["pooling"] = pooling ? nlohmann::ordered_json{{"strategy", pooling->strategy_name()},
                                                    {"activation", pooling->activation_name()}}
                           : nlohmann::ordered_json{{"strategy", "static"}, {"activation", nullptr}};
    j["top_k"] = top_k ? nlohmann::ordered_json(top_k) : nlohmann::ordered_json(nullptr);
    j["max_length"] = embedder.max_length();
    j["batching"] = embedder.batching();
    nlohmann::ordered_json data = nlohmann::ordered_json::array();
    for (size_t i = 0; i < count; ++i) {
      nlohmann::ordered_json item;
      item["index"] = i;
      item["tokens"] = tokens[i];
      item["indices"] = vectors[i].indices;
      item["values"] = vectors[i].values;
      data.push_back(std::move(item));
    }
    j["data"] = std::move(data);
    print_json(j, -1);
    return kExitOk;
  }
  std::string out;
  char buf[64];
  for (const embed::SparseVector& v : vectors) {
    for (size_t k = 0; k < v.indices.size(); ++k) {
      std::snprintf(buf, sizeof buf, k ? " %lld:%.7g" : "%lld:%.7g", static_cast<long long>(v.indices[k]),
                    static_cast<double>(v.values[k]));
      out += buf;
    }
    out += '\n';
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

// The flags that exclude or need each other; kExitOk or the usage error's code.
int check_embed_flags(const Args& args) {
  if (!args.has("model") || args.get("model").empty()) return usage_error("embed", "missing --model DIR");
  if (args.has("json") && args.has("npy")) return usage_error("embed", "--json and --npy exclude each other");
  if (args.has("file") && !args.positional.empty()) return usage_error("embed", "give TEXT arguments or --file, not both");
  if (args.has("prompt") && args.has("prompt-name")) return usage_error("embed", "--prompt and --prompt-name exclude each other");
  if (args.has("quiet") && args.has("progress")) return usage_error("embed", "--quiet and --progress exclude each other");
  if (args.has("top-k") && !args.has("sparse")) return usage_error("embed", "--top-k needs --sparse");
  if (args.has("npy") && args.has("sparse")) return usage_error("embed", "--npy writes dense vectors: with --sparse use --json");
  if (args.has("tokens") && args.has("sparse")) return usage_error("embed", "--tokens and --sparse exclude each other");
  if (args.has("precision")) {
    auto type = embed::output_type_from_name(args.get("precision"));
    if (!type)
      return usage_error("embed", "--precision must be one of " + std::string(embed::output_type_names()) + ", not '" +
                                      args.get("precision") + "'");
    if (*type != embed::OutputType::kFloat32 && (args.has("sparse") || args.has("tokens")))
      return usage_error("embed", "--precision applies to dense vectors (one per text), not --sparse or --tokens");
    if (args.has("calibration") && !embed::needs_ranges(*type))
      return usage_error("embed", "--calibration applies to --precision int8 and uint8");
  } else if (args.has("calibration")) {
    return usage_error("embed", "--calibration needs --precision int8 or uint8");
  }
  return kExitOk;
}

// --top-k, --device, --strict, --cpu-precision, --threads, --batch and --max-length; kExitOk or the usage error's code.
int parse_embed_options(const Args& args, embed::EmbedderOptions& opt, size_t& batch, size_t& top_k) {
  top_k = 0;
  if (args.has("top-k")) {
    auto v = parse_nonnegative_int(args.get("top-k"), "--top-k");
    if (!v.ok()) return usage_error("embed", v.status().message());
    if (*v == 0) return usage_error("embed", "--top-k must be at least 1");
    top_k = static_cast<size_t>(*v);
  }
  opt.device = args.get("device");
  opt.strict = args.has("strict");
  if (args.has("cpu-precision")) {
    auto precision = parse_precision(args.get("cpu-precision"), "--cpu-precision");
    if (!precision.ok()) return usage_error("embed", precision.status().message());
    opt.cpu_precision = *precision;
  }
  batch = 32;
  for (const char* flag : {"threads", "batch", "max-length"}) {
    if (!args.has(flag)) continue;
    auto v = parse_nonnegative_int(args.get(flag), std::string("--") + flag);
    if (!v.ok()) return usage_error("embed", v.status().message());
    if (std::strcmp(flag, "threads") == 0) opt.threads = static_cast<int>(std::min<int64_t>(*v, 1024));
    if (std::strcmp(flag, "batch") == 0) {
      if (*v == 0) return usage_error("embed", "--batch must be at least 1");
      batch = static_cast<size_t>(*v);
    }
    if (std::strcmp(flag, "max-length") == 0) {
      if (*v == 1) return usage_error("embed", "--max-length must be 0 (the folder's) or at least 2");
      opt.max_length = static_cast<size_t>(*v);
    }
  }
  return kExitOk;
}

// The prompt: --prompt's text, --prompt-name's, else the folder's default
// prompt (as dlrt serve does for a request without prompt_name). kExitOk or
// the usage error's code.
int resolve_prompt(const Args& args, const embed::EmbedModel& model, std::string& prompt) {
  prompt = args.get("prompt");
  if (args.has("prompt")) return kExitOk;
  auto name = args.has("prompt-name") ? std::optional<std::string>(args.get("prompt-name")) : std::nullopt;
  // --query / --document: encode_query's prompt (a multi-vector folder's queries take PyLate's markers instead).
  const bool task = args.has("query") || args.has("document");
  // A 6.x MultiVectorEncoder's task prompt, the query's without a flag (its texts are then queries).
  const auto* per_token = model.as<embed::PerTokenOut>();
  const bool by_task = per_token && per_token->prompts_by_task();
  if (!name && (by_task || (task && !embed::has_capability(model.kind(), embed::Capability::kMaxSim))))
    name = embed::task_prompt_name(model, !args.has("document"));
  if (auto p = embed::resolve_prompt(model, name, "")) {
    prompt = *p;
    return kExitOk;
  }
  std::string names;
  for (const std::string& n : model.prompt_names()) names += (names.empty() ? "" : ", ") + n;
  return usage_error("embed", "the model has no prompt named '" + *name + "' (its prompts: " +
                                  (names.empty() ? "none" : names) + ")");
}

// --tokens, and any text of a multi-vector (ColBERT) folder: one vector per token.
int embed_per_token(const Args& args, std::shared_ptr<const embed::EmbedModel> model, std::vector<std::string> texts,
                    size_t batch, bool multi_vector) {
  if (args.has("npy")) return usage_error("embed", "per-token vectors differ in count per text: use --json, not --npy");
  TokenEmbedJob job;
  if (int rc = resolve_prompt(args, *model, job.prompt); rc != kExitOk) return rc;
  job.model = std::move(model);
  job.texts = std::move(texts);
  job.multi_vector = multi_vector;
  job.is_query = !args.has("document");
  job.batch = batch;
  job.json = args.has("json");
  job.quiet = args.has("quiet");
  job.progress = args.has("progress");
  return embed_tokens(job);
}

// The fields of a dense --json answer before "data"; "precision" after
// "dimension" for a quantized one.
nlohmann::ordered_json dense_json_head(const embed::EmbedModel& embedder, const char* precision) {
  nlohmann::ordered_json j;
  j["model"] = embedder.model_name();
  j["dimension"] = embedder.dimension();
  if (precision) j["precision"] = precision;
  j["pooling"] = embedder.pooling();
  j["normalized"] = embedder.normalizes();
  j["max_length"] = embedder.max_length();
  j["batching"] = embedder.batching();
  return j;
}

// Dense vectors to --npy, --json or stdout (one line per text).
int print_dense(const Args& args, const embed::EmbedModel& embedder, const std::vector<std::vector<float>>& vectors,
                const std::vector<size_t>& tokens) {
  if (args.has("npy")) {
    auto row = [&](size_t i) {
      return std::string_view(reinterpret_cast<const char*>(vectors[i].data()), vectors[i].size() * sizeof(float));
    };
    if (!write_npy(args.get("npy"), "<f4", vectors.size(), embedder.dimension(), row)) {
      std::fprintf(stderr, "dlrt embed: error: cannot write %s\n", args.get("npy").c_str());
      return kExitRuntimeError;
    }
    return kExitOk;
  }
  if (args.has("json"))
    print_vectors_json(dense_json_head(embedder, nullptr), "embedding", vectors, &tokens);
  else
    print_vector_lines(vectors);
  return kExitOk;
}

// --precision int8 / uint8 / binary / ubinary: all texts' vectors quantized at once (as
// quantize_embeddings on encode's result), to --npy, --json or stdout.
int print_quantized(const Args& args, const embed::EmbedModel& embedder, const std::vector<std::vector<float>>& vectors,
                    const std::vector<size_t>& tokens, embed::OutputType type) {
  embed::QuantizationSource source;
  std::vector<float> calibration;  // float64 files rounded to float32: the same ranges (rounding keeps order)
  if (args.has("calibration")) {
    const std::string& path = args.get("calibration");
    auto t = read_npy_file(path);
    if (!t.ok()) return usage_error("embed", "--calibration: " + t.status().message());
    const bool f32 = t->dtype() == DType::kFloat32;
    if ((!f32 && t->dtype() != DType::kFloat64) || t->rank() != 2 || t->dim(0) < 1)
      return usage_error("embed", "--calibration: " + path +
                                      " must hold a float32 or float64 [rows, dimension] array with at least one row");
    if (static_cast<size_t>(t->dim(1)) != embedder.dimension())
      return usage_error("embed", "--calibration: " + path + " has " + std::to_string(t->dim(1)) +
                                      " values per row, the model's vectors " + std::to_string(embedder.dimension()));
    calibration.resize(static_cast<size_t>(t->size()));
    for (size_t i = 0; i < calibration.size(); ++i)
      calibration[i] = f32 ? t->data<float>()[i] : static_cast<float>(t->data<double>()[i]);
    source.calibration = calibration.data();
    source.calibration_rows = static_cast<size_t>(t->dim(0));
  }
  std::vector<uint8_t> bytes;
  if (std::string e = embed::quantize_rows(vectors, type, source, &bytes); !e.empty())
    return usage_error("embed", "--precision " + std::string(embed::output_type_name(type)) + ": " + e);
  const size_t row_bytes = embed::quantized_bytes(type, embedder.dimension());
  auto row = [&](size_t i) { return std::string_view(reinterpret_cast<const char*>(bytes.data()) + i * row_bytes, row_bytes); };
  auto numbers = [&](size_t i) {
    std::vector<int> v(row_bytes);
    for (size_t k = 0; k < row_bytes; ++k) v[k] = embed::quantized_value(type, bytes[i * row_bytes + k]);
    return v;
  };
  if (args.has("npy")) {
    if (!write_npy(args.get("npy"), embed::is_signed(type) ? "|i1" : "|u1", vectors.size(), row_bytes, row)) {
      std::fprintf(stderr, "dlrt embed: error: cannot write %s\n", args.get("npy").c_str());
      return kExitRuntimeError;
    }
    return kExitOk;
  }
  if (args.has("json")) {
    nlohmann::ordered_json j = dense_json_head(embedder, embed::output_type_name(type));
    nlohmann::ordered_json data = nlohmann::ordered_json::array();
    for (size_t i = 0; i < vectors.size(); ++i)
      data.push_back({{"index", i}, {"tokens", tokens[i]}, {"embedding", numbers(i)}});
    j["data"] = std::move(data);
    print_json(j, -1);
    return kExitOk;
  }
  std::string out;
  for (size_t i = 0; i < vectors.size(); ++i) {
    const std::vector<int> v = numbers(i);
    for (size_t k = 0; k < v.size(); ++k) out += (k ? " " : "") + std::to_string(v[k]);
    out += '\n';
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

// Every text is tokenized first (a tokenizer error is exit 1), then embedded
// `batch` at a time, longest first, each vector going back to its text's place.
int embed_texts(const Args& args, const embed::EmbedModel& model, std::vector<std::string> texts, size_t batch,
                size_t top_k) {
  // Prompt, tokens and the cut at the model's length as dlrt serve's (models/prepare_inputs.h).
  embed::InputOptions in;
  if (args.has("query") || args.has("document")) in.is_query = args.has("query");
  if (int rc = resolve_prompt(args, model, in.prompt); rc != kExitOk) return rc;
  std::vector<embed::Encoding> encodings;
  if (auto e = embed::prepare_inputs(model, texts, in, encodings)) {
    std::fprintf(stderr, "dlrt embed: error: %s\n", e->status.to_string().c_str());
    return kExitRuntimeError;
  }
  std::vector<size_t> tokens;  // per text, for --json
  for (const embed::Encoding& e : encodings) tokens.push_back(e.ids.size());
  if (model.as<embed::SparseOut>()) return embed_sparse(model, std::move(encodings), tokens, batch, top_k, args);
  std::vector<std::vector<float>> vectors(texts.size());
  Progress progress(progress_wanted(args.has("quiet"), args.has("progress")), "embedding", "texts", texts.size());
  size_t done = 0;
  progress.update(0);
  const Status embedded = embed::embed_inputs(*model.as<embed::DenseOut>(), std::move(encodings), batch,
                                              model.normalizes(), [&](size_t i, std::vector<float>&& v) {
                                                vectors[i] = std::move(v);
                                                progress.update(++done);
                                                return Status::Ok();
                                              });
  if (!embedded.ok()) {
    progress.finish("stopped after " + std::to_string(done) + " of " + std::to_string(texts.size()) + " texts");
    std::fprintf(stderr, "dlrt embed: error: %s\n", embedded.to_string().c_str());
    return exit_code_for_run_status(embedded);
  }
  progress.finish(summary_line(texts.size(), tokens, progress.seconds(), model));
  const auto type = embed::output_type_from_name(args.has("precision") ? args.get("precision") : "float32");
  if (type && *type != embed::OutputType::kFloat32) return print_quantized(args, model, vectors, tokens, *type);
  return print_dense(args, model, vectors, tokens);
}

// A clip folder's texts or --image files (embed_clip.h); kNotClip for any other folder.
constexpr int kNotClip = -1;
int embed_clip_folder(const Args& args, const embed::EmbedderOptions& opt, std::vector<std::string>& inputs,
                      size_t batch) {
  const std::string& model = args.get("model");
  const embed::ModelKind kind = embed::detect_kind(model);
  const bool clip = embed::has_capability(kind, embed::Capability::kImage);
  if (!clip && !args.has("image")) return kNotClip;
  if (!clip)
    return usage_error("embed", embed::kind_refusal(kind, {embed::Capability::kImage}, "the model " + model, "--image"));
  for (const char* flag : {"tokens", "sparse", "precision", "calibration", "prompt", "prompt-name", "query", "document"})
    if (args.has(flag))
      return usage_error("embed", std::string("--") + flag + " does not apply to a CLIP folder (" + model + ")");
  ClipEmbedJob job;
  job.model = model;
  job.options = opt;
  job.inputs = std::move(inputs);
  job.images = args.has("image");
  job.batch = batch;
  job.json = args.has("json");
  if (args.has("npy")) job.npy = args.get("npy");
  return embed_clip(job);
}

}  // namespace

int cmd_embed(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2,
                           {{"model", true}, {"device", true}, {"strict"}, {"threads", true}, {"file", true},
                            {"batch", true}, {"max-length", true}, {"json"}, {"npy", true},
                            {"prompt-name", true}, {"prompt", true}, {"quiet"}, {"progress"}, {"tokens"},
                            {"query"}, {"document"}, {"sparse"}, {"top-k", true}, {"precision", true},
                            {"calibration", true}, {"cpu-precision", true}, {"image"}});
  if (!parsed.ok()) return usage_error("embed", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kEmbedHelp, stdout);
    return kExitOk;
  }
  if (int rc = check_embed_flags(args); rc != kExitOk) return rc;
  embed::EmbedderOptions opt;
  size_t batch = 32, top_k = 0;
  if (int rc = parse_embed_options(args, opt, batch, top_k); rc != kExitOk) return rc;

  std::vector<std::string> texts = args.positional;
  if (args.has("file")) {
    if (int rc = read_text_file("embed", args.get("file"), texts); rc != kExitOk) return rc;
  }
  if (texts.empty() && !args.has("file")) return usage_error("embed", "no TEXT given (or use --file PATH)");

  if (int rc = embed_clip_folder(args, opt, texts, batch); rc != kNotClip) return rc;
  if (args.has("query") && args.has("document")) return usage_error("embed", "--query and --document exclude each other");
  // The registry opens the folder as its kind, refusing one that gives no vectors.
  const bool tokens = args.has("tokens");
  auto opened = tokens ? embed::open_model(args.get("model"), opt, {embed::Capability::kPerToken}, "dlrt embed --tokens")
                       : embed::open_model(args.get("model"), opt,
                                           {embed::Capability::kDense, embed::Capability::kSparse,
                                            embed::Capability::kMaxSim},
                                           "dlrt embed");
  if (!opened.ok()) {
    std::fprintf(stderr, "dlrt embed: error: %s\n", opened.status().to_string().c_str());
    return exit_code_for_folder_status(opened.status());
  }
  const std::shared_ptr<const embed::EmbedModel> model = std::move(opened).value();
  const bool multi_vector = embed::has_capability(model->kind(), embed::Capability::kMaxSim);
  if ((args.has("query") || args.has("document")) && tokens && !multi_vector)
    return usage_error("embed", "--query and --document with --tokens need a multi-vector (ColBERT) folder; " +
                                    args.get("model") + " is not one (without --tokens they embed queries or documents)");
  if (multi_vector && args.has("precision") && args.get("precision") != "float32" && args.get("precision") != "float")
    return usage_error("embed", args.get("model") + " is a multi-vector (ColBERT) folder: --precision applies to one "
                                                    "vector per text");
  if (multi_vector && args.has("sparse"))
    return usage_error("embed", args.get("model") + " is a multi-vector (ColBERT) folder: --sparse needs a sparse (SPLADE) model folder");
  if (multi_vector || tokens) return embed_per_token(args, model, std::move(texts), batch, multi_vector);

  const bool sparse = model->as<embed::SparseOut>() != nullptr;
  if (sparse && !args.has("sparse"))
    return usage_error("embed", "the model " + model->model_name() +
                                    " is a sparse (SPLADE) encoder: add --sparse for its sparse vectors");
  if (!sparse && args.has("sparse"))
    return usage_error("embed", "the model " + model->model_name() +
                                    " is a dense embedding model: --sparse needs a sparse (SPLADE) model folder");
  return embed_texts(args, *model, std::move(texts), batch, top_k);
}

}  // namespace dlrt::cli
