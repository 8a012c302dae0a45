// A text model folder's file and session, encode_within, TokenInputs (token_inputs.h).
#include "embed/models/token_inputs.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

#include "dlrt/model_info.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;

namespace {

// Folder names that say nothing about the model ("model", "onnx"): the
// reported name comes from a folder above them instead.
bool generic_folder_name(const std::string& name) {
  static const char* const kGeneric[] = {"", ".", "..", "model", "models", "onnx", "export", "exported",
                                         "output", "out", "snapshot", "snapshots", "weights", "main"};
  for (const char* g : kGeneric)
    if (name == g) return true;
  return false;
}

// "owner/name" or "name-v2": a relative path of at most two plain parts, as
// Hugging Face hub ids are spelled.
bool looks_like_hub_id(const std::string& text) {
  if (text.empty() || text[0] == '.' || text[0] == '/' || text[0] == '~' || text.back() == '/') return false;
  if (std::count(text.begin(), text.end(), '/') > 1) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

Status missing_folder(const std::string& model_dir) {
  if (!looks_like_hub_id(model_dir))
    return NotFound("model folder \"" + model_dir + "\" does not exist or is not a folder");
  const std::string repo = model_dir.find('/') == std::string::npos ? "OWNER/" + model_dir : model_dir;
  const std::string local = model_dir.substr(model_dir.find('/') + 1);
  return NotFound("model folder \"" + model_dir + "\" does not exist; it looks like a Hugging Face hub id, and dlrt "
                  "does not download models: get the folder with `git lfs install && git clone https://huggingface.co/" +
                  repo + "` (or `huggingface-cli download " + repo + " --local-dir " + local + "`) and pass its path");
}

}  // namespace

std::filesystem::path model_folder_of(const std::string& model) {
  std::error_code ec;
  const fs::path p(model);
  if (!fs::is_regular_file(p, ec)) return p;
  fs::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  // onnx/model.onnx of an export: the folder is the one above onnx/.
  if (dir.filename() == "onnx" && !fs::exists(dir / "tokenizer.json", ec) && !fs::exists(dir / "vocab.txt", ec))
    dir = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  return dir;
}

Result<ModelFile> find_model_folder(const std::string& model_dir) {
  std::error_code ec;
  ModelFile f;
  const bool given_file = !model_dir.empty() && fs::is_regular_file(model_dir, ec);
  f.dir = given_file ? model_folder_of(model_dir) : fs::path(model_dir);
  if (model_dir.empty() || !fs::is_directory(f.dir, ec)) return missing_folder(model_dir);
  // The name: the folder's, else (a generic one such as "model" or "onnx") the
  // nearest folder above it whose name is not.
  const fs::path canonical = fs::weakly_canonical(f.dir, ec);
  fs::path named = ec ? fs::absolute(f.dir, ec) : canonical;
  f.name = named.filename().string();
  for (fs::path up = named; generic_folder_name(f.name) && up.has_parent_path() && up != up.parent_path();) {
    up = up.parent_path();
    if (!generic_folder_name(up.filename().string())) f.name = up.filename().string();
  }
  if (generic_folder_name(f.name)) f.name = "model";
  return f;
}

Result<ModelFile> find_model_file(const std::string& model_dir) {
  DLRT_ASSIGN_OR_RETURN(ModelFile f, find_model_folder(model_dir));
  std::error_code ec;
  const bool given_file = fs::is_regular_file(model_dir, ec);
  if (given_file && fs::path(model_dir).extension() == ".onnx") {
    f.path = fs::path(model_dir);
    return f;
  }
  for (const char* candidate : {"model.onnx", "onnx/model.onnx"})
    if (fs::is_regular_file(f.dir / candidate, ec)) {
      f.path = f.dir / candidate;
      return f;
    }
  // PyTorch weights only (what TEI and SentenceTransformer.save use): name the export.
  for (const char* weights : {"model.safetensors", "pytorch_model.bin"})
    if (fs::is_regular_file(f.dir / weights, ec))
      return NotFound(model_dir + ": no model.onnx or onnx/model.onnx in the model folder, only PyTorch weights (" +
                      weights + "), which dlrt does not run; export them to ONNX first: pip install optimum-onnx, then "
                      "optimum-cli export onnx --model " + model_dir + " --task feature-extraction " +
                      (f.dir / "onnx").string() +
                      " (--task text-classification for a cross-encoder, fill-mask for a SPLADE model)");
  return NotFound(model_dir + ": no model.onnx or onnx/model.onnx in the model folder");
}

namespace {

// Texts of a few lengths, run as one padded batch and the first alone.
constexpr const char* kWarmUpTexts[] = {
    "warm up the model before serving",
    "The quick brown fox jumps over the lazy dog.",
    "Canary inputs measure how far a faster precision moves the vectors from float32 on text like the texts "
    "the model serves: sentences of several lengths, with punctuation, numbers (3.14, 2026) and rarer words.",
};

// The feeds of the warm-up texts for the model at `path`; none when the
// model's inputs are not token inputs (then "auto" generates its own).
std::vector<std::map<std::string, Tensor>> warm_up_feeds(const fs::path& path, const Tokenizer& tokenizer,
                                                         size_t max_length) {
  auto info = read_model_info(path.string());
  if (!info.ok()) return {};
  std::vector<TensorInfo> declared;
  for (const ModelValueInfo& v : info->inputs)
    declared.push_back({v.name, v.dtype, v.shape, v.dim_names, v.kind == "tensor", v.type});
  auto inputs = TokenInputs::from_inputs(declared, path.string());
  if (!inputs.ok()) return {};
  std::vector<Encoding> texts;
  for (const char* text : kWarmUpTexts) {
    auto e = tokenizer.encode_checked(text, max_length);
    if (!e.ok()) return {};
    texts.push_back(std::move(e).value());
  }
  std::vector<std::map<std::string, Tensor>> out;
  for (const auto& batch : {texts, std::vector<Encoding>{texts[0]}}) {
    TokenInputs::Batch b;
    if (!inputs->make_batch(batch, tokenizer.pad_id(), tokenizer.vocab_size(), max_length, b).ok()) return {};
    std::map<std::string, Tensor> owned;  // the batch's tensors view its buffers: copies outlive it
    for (const auto& [name, t] : b.feeds) {
      auto copy = t.clone();
      if (!copy.ok()) return {};
      owned[name] = std::move(copy).value();
    }
    out.push_back(std::move(owned));
  }
  return out;
}

bool wants_auto(const EmbedderOptions& options) {
  if (!options.cpu_precision.empty()) return options.cpu_precision == "auto";
  const char* env = std::getenv("DLRT_CPU_PRECISION");
  return env && std::string_view(env) == "auto";
}

}  // namespace

Result<std::unique_ptr<Session>> open_model_session(const fs::path& path, const EmbedderOptions& options,
                                                    const Tokenizer* tokenizer, size_t max_length,
                                                    const std::vector<std::string>& outputs) {
  SessionOptions so;
  so.outputs = outputs;
  so.cpu_precision = options.cpu_precision;
  if (tokenizer && wants_auto(options)) so.canary_inputs = warm_up_feeds(path, *tokenizer, max_length);
  so.device = options.device;
  so.strict = options.strict;
  so.threads = options.threads;
  so.warm_start = options.warm_start;
  so.backend_options = options.backend_options;
  so.max_tensor_bytes = options.max_tensor_bytes;
  auto session = Session::create(path.string(), so);
  if (!session.ok()) return session.status().with_context(path.string());
  return std::move(session).value();
}

size_t token_row_bytes(const Session& session) {
  size_t widest = 0;
  for (const TensorInfo& out : session.outputs()) {
    if (!out.is_tensor || out.shape.size() < 3) continue;
    size_t row = dtype_size(out.dtype);
    for (size_t d = 2; d < out.shape.size() && row > 0; ++d) {
      const int64_t n = out.shape[d];
      row = n > 0 && static_cast<uint64_t>(n) <= SIZE_MAX / row ? row * static_cast<size_t>(n) : 0;
    }
    widest = std::max(widest, row);
  }
  return widest;
}

Result<Encoding> encode_within(size_t max_length, bool* truncated,
                               const std::function<Result<Encoding>(size_t limit, size_t* untruncated)>& encode,
                               size_t* tokens) {
  size_t untruncated = 0;
  DLRT_ASSIGN_OR_RETURN(Encoding e, encode(max_length, &untruncated));
  untruncated = std::max(untruncated, e.ids.size());
  if (truncated) *truncated = max_length > 0 && untruncated > max_length;
  if (tokens) *tokens = untruncated;
  return e;
}

Result<TokenInputs> TokenInputs::from_session(const Session& session, const std::string& what) {
  return from_inputs(session.inputs(), what);
}

Result<TokenInputs> TokenInputs::from_inputs(const std::vector<TensorInfo>& inputs, const std::string& what) {
  TokenInputs t;
  bool has_ids = false;
  for (const TensorInfo& in : inputs) {
    Input mi{in.name, Kind::kIds, in.dtype, {}};
    if (in.name == "input_ids") mi.kind = Kind::kIds, has_ids = true;
    else if (in.name == "attention_mask") mi.kind = Kind::kMask;
    else if (in.name == "token_type_ids") mi.kind = Kind::kTypes;
    else if (in.name == "position_ids") mi.kind = Kind::kPositions;
    else if (in.name.rfind("past_key_values.", 0) == 0) mi.kind = Kind::kPast;
    else
      return InvalidModel(what + ": model input \"" + in.name +
                          "\" is not one of input_ids, attention_mask, token_type_ids, position_ids, past_key_values.*");
    if (mi.kind == Kind::kPast) {
      // A decoder's key/value cache: empty, as for the first step of generation.
      const auto& s = in.shape;
      if (s.size() != 4 || s[1] <= 0 || s[3] <= 0 ||
          (in.dtype != DType::kFloat32 && in.dtype != DType::kFloat16 && in.dtype != DType::kBFloat16))
        return InvalidModel(what + ": model input \"" + in.name +
                            "\" must be a float [batch, heads, past, head_size] cache with heads and head_size fixed, not " +
                            dtype_name(in.dtype) + " " + shape_to_string(s));
      mi.shape = s;
      t.inputs_.push_back(mi);
      continue;
    }
    if (in.dtype != DType::kInt64 && in.dtype != DType::kInt32)
      return InvalidModel(what + ": model input \"" + in.name + "\" must be int64 or int32, not " + dtype_name(in.dtype));
    t.inputs_.push_back(mi);
  }
  if (!has_ids) return InvalidModel(what + ": the model has no \"input_ids\" input");
  return t;
}

Status TokenInputs::make_batch(const std::vector<Encoding>& batch, int64_t pad_id, size_t vocab_size,
                               size_t max_length, Batch& out) const {
  const size_t b = batch.size();
  size_t len = 0;
  for (size_t i = 0; i < b; ++i) {
    const Encoding& e = batch[i];
    if (e.ids.empty()) return InvalidArgument("encoding " + std::to_string(i) + " has no ids");
    if ((!e.attention_mask.empty() && e.attention_mask.size() != e.ids.size()) ||
        (!e.type_ids.empty() && e.type_ids.size() != e.ids.size()))
      return InvalidArgument("encoding " + std::to_string(i) + ": ids, type_ids and attention_mask differ in length");
    if (e.ids.size() > max_length)
      return InvalidArgument("encoding " + std::to_string(i) + " has " + std::to_string(e.ids.size()) +
                             " tokens, more than the model's " + std::to_string(max_length));
    for (int64_t id : e.ids)
      if (id < 0 || static_cast<size_t>(id) >= vocab_size)
        return InvalidArgument("encoding " + std::to_string(i) + " has token id " + std::to_string(id) +
                               " outside the vocabulary");
    len = std::max(len, e.ids.size());
  }
  const size_t n = b * len;
  out.length = len;
  out.ids.assign(n, pad_id);
  out.mask.assign(n, 0);
  out.types.assign(n, 0);
  out.positions.assign(n, 0);
  for (size_t i = 0; i < b; ++i) {
    const Encoding& e = batch[i];
    for (size_t t = 0; t < e.ids.size(); ++t) {
      out.ids[i * len + t] = e.ids[t];
      out.mask[i * len + t] = e.attention_mask.empty() ? 1 : e.attention_mask[t];
      out.types[i * len + t] = e.type_ids.empty() ? 0 : e.type_ids[t];
    }
    for (size_t t = 0; t < len; ++t) out.positions[i * len + t] = static_cast<int64_t>(t);
  }
  out.tokens = 0;
  for (int64_t m : out.mask) out.tokens += m != 0;
  const Shape shape{static_cast<int64_t>(b), static_cast<int64_t>(len)};
  out.feeds.clear();
  out.narrow.clear();
  out.narrow.reserve(inputs_.size());
  for (const Input& in : inputs_) {
    if (in.kind == Kind::kPast) {
      DLRT_ASSIGN_OR_RETURN(out.feeds[in.name], Tensor::allocate(in.dtype, {static_cast<int64_t>(b), in.shape[1], 0, in.shape[3]}));
      continue;
    }
    std::vector<int64_t>* src = in.kind == Kind::kIds     ? &out.ids
                                : in.kind == Kind::kMask  ? &out.mask
                                : in.kind == Kind::kTypes ? &out.types
                                                          : &out.positions;
    if (in.dtype == DType::kInt64) {
      out.feeds[in.name] = Tensor::view(DType::kInt64, shape, src->data());
    } else {
      out.narrow.emplace_back(src->begin(), src->end());
      out.feeds[in.name] = Tensor::view(DType::kInt32, shape, out.narrow.back().data());
    }
  }
  return Status::Ok();
}

}  // namespace dlrt::embed
