// Embedder: model folder -> tokenizer + dlrt::Session + pooling (see embedder.h).
#include "embed/models/embedder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>

#include <nlohmann/json.hpp>

#include "embed/models/batch_dependence.h"
#include "embed/models/dense.h"
#include "embed/tokenizer/file_util.h"
#include "embed/models/folder_check.h"
#include "embed/models/layer_pooling.h"
#include "embed/tokenizer/json_util.h"
#include "embed/models/length_groups.h"
#include "embed/models/modules.h"
#include "embed/models/sparse.h"
#include "embed/models/static_embedding.h"
#include "embed/models/clip.h"
#include "embed/models/multi_vector.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kMax: return "max";
    case Pooling::kMeanSqrtLen: return "mean_sqrt_len_tokens";
    case Pooling::kLastToken: return "lasttoken";
    case Pooling::kWeightedMean: return "weightedmean";
  }
  return "mean";
}

namespace {

Result<json> read_json(const fs::path& path) { return jsonu::read_optional_json(path); }

// Pooling, Dense layers and normalisation (or a sparse model's SPLADE
// pooling) from modules.json / 1_Pooling/config.json.
// `post`: the Dense and LayerNorm modules; `input`: module 0 when it is a static one;
// `layers`: a WeightedLayerPooling module.
Status read_pooling(const fs::path& dir, Pooling& pooling, bool& normalize, std::vector<Module>& post,
                    fs::path& pooling_config, json& pc, std::optional<SpladePooling>& splade,
                    std::optional<Module>& input, std::optional<Module>& layers, const std::vector<Module>* given) {
  pooling = Pooling::kMean;
  normalize = true;
  pooling_config = dir / "1_Pooling" / "config.json";
  std::vector<Module> modules;
  if (given) {
    modules = *given;
  } else {
    DLRT_ASSIGN_OR_RETURN(modules, read_modules(dir));
  }
  if (given || fs::exists(dir / "modules.json")) normalize = false;
  bool mlm = false, dense_pooling = false;
  for (const Module& m : modules) {
    switch (m.type) {
      case ModuleType::kNormalize: normalize = true; break;
      case ModuleType::kDense:
      case ModuleType::kLayerNorm: post.push_back(m); break;
      case ModuleType::kStaticEmbedding:
      case ModuleType::kSparseStaticEmbedding: input = m; break;
      case ModuleType::kPooling:
        dense_pooling = true;
        pooling_config = m.dir / "config.json";
        break;
      case ModuleType::kSpladePooling: {
        DLRT_ASSIGN_OR_RETURN(SpladePooling p, SpladePooling::load(m.dir));
        splade = p;
        break;
      }
      case ModuleType::kMLMTransformer: mlm = true; break;
      case ModuleType::kWeightedLayerPooling: layers = m; break;
      case ModuleType::kTransformer:
      case ModuleType::kDropout: break;
      case ModuleType::kMultiVectorMask:
      case ModuleType::kTokenPooling:
        return Unsupported(dir.string() + ": module \"" + m.type_name +
                           "\" belongs to a sentence-transformers MultiVectorEncoder (per-token vectors), not this "
                           "pipeline");
      case ModuleType::kRouter:
        return Unsupported(dir.string() + " is a sentence-transformers Router folder (a list of modules per route); "
                           "open it as a model (open_model, router.h), which runs the route a request picks");
    }
  }
  const std::string modules_json = (dir / "modules.json").string();
  if (mlm && !splade)
    return Unsupported(modules_json + ": an MLMTransformer without a SpladePooling module (its logits are no embedding)");
  if (splade && (dense_pooling || !post.empty() || normalize || layers))
    return Unsupported(modules_json + ": a SpladePooling module with Pooling, Dense, Normalize or "
                       "WeightedLayerPooling modules is not supported");
  const bool sparse_static = input && input->type == ModuleType::kSparseStaticEmbedding;
  if (sparse_static && (!post.empty() || normalize))
    return Unsupported(modules_json + ": a SparseStaticEmbedding with Dense, LayerNorm or Normalize modules is not supported");
  if (splade || input) return Status::Ok();
  DLRT_ASSIGN_OR_RETURN(pc, read_json(pooling_config));
  if (pc.is_null()) return Status::Ok();
  if (!pc.is_object()) return InvalidModel(pooling_config.string() + ": expected a JSON object");
  DLRT_RETURN_IF_ERROR(check_pooling_config(pooling_config, pc));
  // The mode as one string ("pooling_mode") and as sentence-transformers'
  // per-mode flags; the names are both spellings it uses.
  static const struct {
    const char* name;
    const char* flag;
    Pooling pooling;
  } kModes[] = {{"mean", "pooling_mode_mean_tokens", Pooling::kMean},
                {"cls", "pooling_mode_cls_token", Pooling::kCls},
                {"max", "pooling_mode_max_tokens", Pooling::kMax},
                {"mean_sqrt_len_tokens", "pooling_mode_mean_sqrt_len_tokens", Pooling::kMeanSqrtLen},
                {"lasttoken", "pooling_mode_lasttoken", Pooling::kLastToken},
                {"weightedmean", "pooling_mode_weightedmean_tokens", Pooling::kWeightedMean}};
  std::vector<Pooling> modes;
  const std::string mode = jsonu::get_string(pc, "pooling_mode", "");
  for (const auto& m : kModes) {
    if (mode == m.name) modes.push_back(m.pooling);
    if (jsonu::get_bool(pc, m.flag, false)) modes.push_back(m.pooling);
  }
  if (!mode.empty() && modes.empty()) {
    return Unsupported(pooling_config.string() + ": pooling_mode \"" + mode +
                       "\" is not supported (mean, cls, max, mean_sqrt_len_tokens, lasttoken, weightedmean)");
  }
  std::sort(modes.begin(), modes.end());
  modes.erase(std::unique(modes.begin(), modes.end()), modes.end());
  if (modes.size() > 1) {
    return Unsupported(pooling_config.string() + ": several pooling modes at once (concatenated) are not supported");
  }
  if (!modes.empty()) pooling = modes[0];
  return Status::Ok();
}

}  // namespace

struct Embedder::Impl {
  std::string name;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Session> session;
  TokenInputs inputs;
  size_t output_index = 0;
  DType output_dtype = DType::kFloat32;
  size_t dimension = 0;
  size_t hidden_size = 0;  // per-token vector length
  size_t max_length = 512;
  Pooling pooling = Pooling::kMean;
  bool normalize = true;
  std::map<std::string, std::string> prompts;
  std::string default_prompt_name;
  std::string similarity_fn = "cosine";
  std::vector<VectorModule> dense;  // Dense and LayerNorm modules after pooling, in modules.json's order
  std::shared_ptr<const StaticEmbedding> static_input;  // a static module 0 (no session then)
  std::string batch_dependent_op;  // "" : rows are independent, padded batches are fine
  // A batch-dependent model whose runs quantize per text (RunOptions::item_lengths):
  // padded batches then give each text its alone vector. Else it runs one text per run,
  // and per_item_refusal says why (the runtime's error on a probe batch).
  bool per_item = false;
  std::string per_item_refusal;
  ModelKind kind = ModelKind::kDense;
  std::optional<SpladePooling> splade;  // a sparse model's pooling
  std::optional<WeightedLayerPooling> layers;  // the token vectors average the layers (layer_pooling.h)
};

// Named prompts and the similarity function from config_sentence_transformers.json.
Status read_prompts(const fs::path& dir, std::map<std::string, std::string>& prompts, std::string& default_name,
                    std::string& similarity_fn) {
  const fs::path path = dir / "config_sentence_transformers.json";
  DLRT_ASSIGN_OR_RETURN(json c, read_json(path));
  if (c.is_null()) return Status::Ok();
  if (!c.is_object()) return InvalidModel(path.string() + ": expected a JSON object");
  if (auto p = c.find("prompts"); p != c.end() && !p->is_null()) {
    if (!p->is_object()) return InvalidModel(path.string() + ": \"prompts\" must map names to strings");
    for (const auto& [name, text] : p->items()) {
      if (!text.is_string()) return InvalidModel(path.string() + ": prompt \"" + name + "\" is not a string");
      prompts[name] = text.get<std::string>();
    }
  }
  if (auto d = c.find("default_prompt_name"); d != c.end() && !d->is_null() && !d->is_string())
    return InvalidModel(path.string() + ": \"default_prompt_name\" must be a string (a name in \"prompts\") or null");
  default_name = jsonu::get_string(c, "default_prompt_name", "");
  if (!default_name.empty() && !prompts.count(default_name))
    return InvalidModel(path.string() + ": default_prompt_name \"" + default_name + "\" is not one of its prompts");
  const std::string fn = jsonu::get_string(c, "similarity_fn_name", "");
  if (!fn.empty() && (fn == "MaxSim" || fn == "maxsim") && is_multi_vector_folder(dir)) {
    similarity_fn = "maxsim";  // PyLate's, 6.x's: the score of per-token vectors (multi_vector.h)
  } else if (fn == "meanmaxsim" && is_multi_vector_encoder_folder(dir)) {
    similarity_fn = fn;  // 6.x's MaxSim over the query's vector count (late_interaction_score)
  } else if (!fn.empty()) {
    if (fn != "cosine" && fn != "dot" && fn != "euclidean" && fn != "manhattan")
      return InvalidModel(path.string() + ": similarity_fn_name \"" + fn +
                          "\" is not one of cosine, dot, euclidean, manhattan");
    similarity_fn = fn;
  }
  return Status::Ok();
}

Embedder::Embedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Embedder::~Embedder() = default;

Result<std::unique_ptr<Embedder>> Embedder::create(const std::string& model_dir, const EmbedderOptions& options) {
  DLRT_ASSIGN_OR_RETURN(ModelFile file, find_model_folder(model_dir));
  if (is_clip_folder(file.dir))
    return Unsupported(file.dir.string() + " is a CLIP model (a text and a vision tower): dlrt embed and dlrt serve "
                       "open it (docs/images.md); this Embedder takes one text model");
  DLRT_RETURN_IF_ERROR(
      require_capability(model_dir, {Capability::kDense, Capability::kSparse}, "an embedder (one vector per text)"));
  return create_transformer(model_dir, options);
}

namespace {

// Loads the Dense and LayerNorm modules (`post`) into `out`, checking that
// each takes what the one before gives.
Status load_vector_modules(const std::vector<Module>& post, std::vector<VectorModule>& out) {
  for (const Module& m : post) {
    VectorModule v;
    if (m.type == ModuleType::kDense) {
      DLRT_ASSIGN_OR_RETURN(DenseLayer layer, DenseLayer::load(m.dir));
      v.dense.push_back(std::move(layer));
    } else {
      DLRT_ASSIGN_OR_RETURN(LayerNormLayer norm, LayerNormLayer::load(m.dir));
      v.norm.push_back(std::move(norm));
    }
    if (!out.empty() && out.back().out_features() != v.in_features())
      return InvalidModel(m.dir.string() + ": takes " + std::to_string(v.in_features()) +
                          " values but the module before gives " + std::to_string(out.back().out_features()));
    out.push_back(std::move(v));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Embedder>> Embedder::create_transformer(const std::string& model_dir,
                                                               const EmbedderOptions& options) {
  DLRT_ASSIGN_OR_RETURN(ModelFile file, find_model_folder(model_dir));
  const fs::path dir = file.dir;
  auto impl = std::make_unique<Impl>();
  impl->name = file.name;

  DLRT_RETURN_IF_ERROR(check_folder_configs(dir));
  std::vector<Module> post;
  std::optional<Module> static_input, layers;
  fs::path pooling_path;
  json pooling_json;
  DLRT_RETURN_IF_ERROR(read_pooling(dir, impl->pooling, impl->normalize, post, pooling_path, pooling_json,
                                    impl->splade, static_input, layers, options.modules));
  if (impl->splade) impl->kind = ModelKind::kSparse;
  DLRT_RETURN_IF_ERROR(load_vector_modules(post, impl->dense));
  if (static_input) return create_static(std::move(impl), dir, *static_input, options);
  DLRT_ASSIGN_OR_RETURN(file, find_model_file(model_dir));
  const fs::path& model_path = file.path;

  auto tok = Tokenizer::from_folder(dir.string());
  if (!tok.ok()) return tok.status();
  impl->tokenizer = std::make_unique<Tokenizer>(std::move(tok).value());
  DLRT_RETURN_IF_ERROR(check_tokenizer_ids(dir, *impl->tokenizer));

  DLRT_ASSIGN_OR_RETURN(json config, read_json(dir / "config.json"));
  DLRT_ASSIGN_OR_RETURN(json st_config, read_json(dir / "sentence_bert_config.json"));
  DLRT_RETURN_IF_ERROR(read_prompts(dir, impl->prompts, impl->default_prompt_name, impl->similarity_fn));

  // Length: option, else sentence-transformers' max_seq_length, else the tokenizer's, else 512;
  // never beyond the model's position embeddings.
  size_t max_len = options.max_length;
  if (max_len == 0) max_len = static_cast<size_t>(std::max<int64_t>(0, jsonu::get_int(st_config, "max_seq_length", 0)));
  if (max_len == 0) max_len = impl->tokenizer->configured_max_length();
  if (max_len == 0) max_len = 512;
  int64_t positions = jsonu::get_int(config, "max_position_embeddings", 0);
  if (positions > 0) max_len = std::min(max_len, static_cast<size_t>(positions));
  impl->max_length = std::max<size_t>(max_len, 2);

  DLRT_ASSIGN_OR_RETURN(impl->session, open_model_session(model_path, options, impl->tokenizer.get(), impl->max_length));
  impl->batch_dependent_op = dlrt::embed::batch_dependent_op(model_info(*impl->session));
  DLRT_ASSIGN_OR_RETURN(impl->inputs, TokenInputs::from_session(*impl->session, model_path.string()));

  // A dense model's hidden states, a sparse model's MLM logits (both 3-D).
  const auto& outs = impl->session->outputs();
  const bool sparse = impl->kind == ModelKind::kSparse;
  size_t found = outs.size();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (sparse ? outs[i].name == "logits" : (outs[i].name == "last_hidden_state" || outs[i].name == "token_embeddings")) {
      found = i;
      break;
    }
  }
  if (found == outs.size()) {
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].is_tensor && outs[i].shape.size() == 3) {
        found = i;
        break;
      }
    }
  }
  if (found == outs.size()) {
    return InvalidModel(model_path.string() + (sparse ? ": no logits (or other 3-D [batch, sequence, vocabulary]) output"
                                                      : ": no last_hidden_state (or other 3-D [batch, sequence, hidden]) output"));
  }
  impl->output_index = found;
  impl->output_dtype = outs[found].dtype;
  if (impl->output_dtype != DType::kFloat32 && impl->output_dtype != DType::kFloat16 &&
      impl->output_dtype != DType::kBFloat16) {
    return InvalidModel(model_path.string() + ": output \"" + outs[found].name + "\" must be float, not " +
                        dtype_name(impl->output_dtype));
  }
  if (sparse && outs[found].shape.size() == 3 && outs[found].shape[2] > 0) {
    const size_t vocab = static_cast<size_t>(outs[found].shape[2]);
    if (impl->splade->dimension() && impl->splade->dimension() != vocab)
      return InvalidModel(model_dir + ": the SpladePooling module's word_embedding_dimension is " +
                          std::to_string(impl->splade->dimension()) + " but the model's logits have " +
                          std::to_string(vocab) + " values per token");
    impl->dimension = vocab;
  } else if (outs[found].shape.size() == 3 && outs[found].shape[2] > 0) {
    const size_t hidden = static_cast<size_t>(outs[found].shape[2]);
    DLRT_RETURN_IF_ERROR(check_pooling_dimension(pooling_path, pooling_json, hidden));
    if (!impl->dense.empty() && impl->dense.front().in_features() != hidden)
      return InvalidModel(model_dir + ": the module after pooling takes " + std::to_string(impl->dense.front().in_features()) +
                          " values but the model's vectors have " + std::to_string(hidden));
    impl->hidden_size = hidden;
    impl->dimension = impl->dense.empty() ? hidden : impl->dense.back().out_features();
  }
  if (layers) {
    DLRT_ASSIGN_OR_RETURN(WeightedLayerPooling wlp, WeightedLayerPooling::load(layers->dir));
    // Applied only where the Transformer gives every layer, as sentence-transformers does (layer_pooling.h).
    if (jsonu::get_bool(config, "output_hidden_states", false)) {
      DLRT_RETURN_IF_ERROR(wlp.bind(outs, impl->hidden_size, model_path.string()));
      impl->layers = std::move(wlp);
    }
  }
  auto embedder = std::unique_ptr<Embedder>(new Embedder(std::move(impl)));
  DLRT_RETURN_IF_ERROR(embedder->probe_per_item());
  if (embedder->impl_->dimension == 0) {
    // Unknown statically: one tiny run tells (and warms the session up).
    DLRT_ASSIGN_OR_RETURN(Encoding empty, embedder->tokenize(""));
    auto probe = embedder->run_encoded({empty}, std::nullopt, {});
    if (!probe.ok()) return probe.status().with_context("probing the embedding size");
    embedder->impl_->dimension = probe->vectors.empty() ? 0 : probe->vectors[0].size();
    // The per-token vector size, where the model has per-token vectors (a sparse model's are its logits).
    auto tokens = embedder->embed_tokens({empty});
    if (tokens.ok() && !tokens->tokens.empty() && !tokens->tokens[0].empty())
      embedder->impl_->hidden_size = tokens->tokens[0][0].size();
  }
  return embedder;
}

Result<std::unique_ptr<Embedder>> Embedder::create_static(std::unique_ptr<Impl> impl, const fs::path& dir,
                                                          const Module& input, const EmbedderOptions& options) {
  const bool sparse = input.type == ModuleType::kSparseStaticEmbedding;
  DLRT_ASSIGN_OR_RETURN(StaticEmbedding::Loaded loaded,
                        StaticEmbedding::load(input.dir, sparse ? StaticEmbedding::Mode::kTokenWeights
                                                                : StaticEmbedding::Mode::kMeanOfRows));
  impl->static_input = std::move(loaded.module);
  impl->tokenizer = std::move(loaded.tokenizer);
  DLRT_RETURN_IF_ERROR(read_prompts(dir, impl->prompts, impl->default_prompt_name, impl->similarity_fn));
  if (sparse) {
    impl->kind = ModelKind::kSparse;
    impl->splade.reset();
  }
  impl->hidden_size = impl->static_input->dimension();
  if (!impl->dense.empty() && impl->dense.front().in_features() != impl->hidden_size)
    return InvalidModel(input.dir.string() + ": the module after the static embedding takes " +
                        std::to_string(impl->dense.front().in_features()) + " values but it gives " +
                        std::to_string(impl->hidden_size));
  impl->dimension = impl->dense.empty() ? impl->hidden_size : impl->dense.back().out_features();
  // No truncation beyond the tokenizer's own (static_embedding.h); kStaticMaxTokens bounds a request.
  size_t max_len = options.max_length ? options.max_length : impl->tokenizer->configured_max_length();
  impl->max_length = max_len ? max_len : kStaticMaxTokens;
  return std::unique_ptr<Embedder>(new Embedder(std::move(impl)));
}

Result<EmbedResult> Embedder::embed_static(const std::vector<Encoding>& batch, std::optional<bool> normalize) const {
  EmbedResult result;
  result.vectors.resize(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    std::vector<int64_t> ids;
    for (size_t t = 0; t < batch[i].ids.size(); ++t)
      if (t >= batch[i].attention_mask.size() || batch[i].attention_mask[t] != 0) ids.push_back(batch[i].ids[t]);
    result.total_tokens += ids.size();
    std::vector<float> v(impl_->static_input->dimension());
    DLRT_RETURN_IF_ERROR(impl_->static_input->embed(ids, v.data()));
    DLRT_ASSIGN_OR_RETURN(result.vectors[i], finish_vector(std::move(v), normalize));
  }
  return result;
}

Result<std::vector<float>> Embedder::finish_vector(std::vector<float> v, std::optional<bool> normalize) const {
  for (const VectorModule& d : impl_->dense) {
    if (v.size() != d.in_features())
      return RuntimeError("the module after pooling takes " + std::to_string(d.in_features()) + " values but got " +
                          std::to_string(v.size()));
    v = d.apply(v);
  }
  if (normalize.value_or(impl_->normalize)) normalize_l2(v);
  return v;
}

Result<Encoding> Embedder::tokenize(std::string_view text) const {
  return impl_->tokenizer->encode_checked(text, impl_->max_length);
}

// The error of a call that does not fit the model's kind.
static Status wrong_kind(ModelKind kind, const std::string& name) {
  if (kind == ModelKind::kSparse)
    return InvalidArgument("the model " + name +
                           " is a sparse (SPLADE) encoder: it gives sparse vectors (encode_sparse, dlrt embed --sparse, "
                           "POST /embed_sparse), not dense embeddings");
  return InvalidArgument("the model " + name + " is a dense embedding model: it has no sparse (SPLADE) vectors");
}

Result<EmbedResult> Embedder::embed_encoded(const std::vector<Encoding>& batch, std::optional<bool> normalize,
                                            const dlrt::RunOptions& bounds) const {
  if (impl_->kind != ModelKind::kDense) return wrong_kind(impl_->kind, impl_->name);
  return run_encoded(batch, normalize, bounds);
}

Result<SparseResult> Embedder::encode_sparse_encoded(const std::vector<Encoding>& batch, size_t top_k,
                                                     const dlrt::RunOptions& bounds) const {
  if (impl_->kind != ModelKind::kSparse) return wrong_kind(impl_->kind, impl_->name);
  DLRT_ASSIGN_OR_RETURN(EmbedResult r, run_encoded(batch, std::nullopt, bounds));
  SparseResult out;
  out.total_tokens = r.total_tokens;
  out.report = std::move(r.report);
  out.vectors.reserve(r.vectors.size());
  for (const std::vector<float>& v : r.vectors) out.vectors.push_back(sparsify(v, top_k));
  return out;
}

Result<SparseResult> Embedder::encode_sparse(const std::vector<std::string>& texts, size_t top_k) const {
  std::vector<Encoding> batch;
  batch.reserve(texts.size());
  for (const std::string& t : texts) {
    DLRT_ASSIGN_OR_RETURN(Encoding e, impl_->tokenizer->encode_checked(t, impl_->max_length));
    batch.push_back(std::move(e));
  }
  return encode_sparse_encoded(batch, top_k);
}

Result<EmbedResult> Embedder::run_encoded(const std::vector<Encoding>& batch, std::optional<bool> normalize,
                                          const dlrt::RunOptions& bounds) const {
  if (impl_->static_input) return embed_static(batch, normalize);
  if (batch.size() <= 1) return embed_padded(batch, normalize, bounds);
  std::vector<std::vector<size_t>> groups;
  if (runs_alone()) {
    // Dynamic quantization's scale spans the whole tensor (padding and
    // batch-mates included) and this model cannot quantize per text: each
    // text runs alone, without padding. Texts of equal length batched
    // together would still share that scale.
    for (size_t i = 0; i < batch.size(); ++i) groups.push_back({i});
  } else if (runs_on_cpu(impl_->session->placement())) {
    // On the CPU padding costs what real tokens cost: texts of very different
    // lengths run in separate batches (length_groups). An accelerator keeps
    // one batch: each new shape may cost it a compile.
    std::vector<size_t> lengths(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) lengths[i] = batch[i].ids.size();
    groups = length_groups(lengths);
  }
  if (groups.size() <= 1) return embed_padded(batch, normalize, bounds);
  EmbedResult result;
  result.vectors.resize(batch.size());
  std::vector<Encoding> part;
  for (const std::vector<size_t>& g : groups) {
    part.clear();
    for (size_t i : g) part.push_back(batch[i]);
    DLRT_ASSIGN_OR_RETURN(EmbedResult r, embed_padded(part, normalize, bounds));
    for (size_t k = 0; k < g.size(); ++k) result.vectors[g[k]] = std::move(r.vectors[k]);
    result.total_tokens += r.total_tokens;
    const double run_ms = result.report.run_ms + r.report.run_ms;
    result.report = std::move(r.report);
    result.report.run_ms = run_ms;
  }
  return result;
}

struct Embedder::Hidden {
  size_t length = 0, hidden = 0;
  std::vector<int64_t> mask;    // [batch, length], 1 for attended tokens
  size_t tokens = 0;            // attended tokens
  std::vector<Tensor> outputs;  // keeps the model's output alive
  std::vector<float> converted;  // the output as float when it is not float32
  const float* x = nullptr;     // [batch, length, hidden]
  RunReport report;
};

Result<Embedder::Hidden> Embedder::run_hidden(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const {
  Hidden out;
  const size_t b = batch.size();
  TokenInputs::Batch in;
  DLRT_RETURN_IF_ERROR(
      impl_->inputs.make_batch(batch, impl_->tokenizer->pad_id(), impl_->tokenizer->vocab_size(), impl_->max_length, in));
  const size_t len = in.length;
  out.length = len;
  out.mask = in.mask;
  out.tokens = in.tokens;
  dlrt::RunOptions options = bounds;
  if (impl_->per_item) {
    // Each text's valid rows (padding is on the right): its own int8 scales.
    options.item_lengths.resize(b);
    for (size_t i = 0; i < b; ++i) options.item_lengths[i] = static_cast<int64_t>(batch[i].ids.size());
  }
  auto outputs = impl_->session->run(in.feeds, options, &out.report);
  if (!outputs.ok()) return outputs.status();
  if (impl_->output_index >= outputs->size()) return Internal("the model returned too few outputs");
  out.outputs = std::move(outputs).value();
  const Tensor& hidden = out.outputs[impl_->output_index];
  if (hidden.rank() != 3 || hidden.dim(0) != static_cast<int64_t>(b) || hidden.dim(1) != static_cast<int64_t>(len) ||
      hidden.dim(2) <= 0) {
    return RuntimeError("the model output has shape " + shape_to_string(hidden.shape()) + ", expected [" +
                        std::to_string(b) + ", " + std::to_string(len) + ", hidden]");
  }
  out.hidden = static_cast<size_t>(hidden.dim(2));
  if (impl_->layers) {
    DLRT_RETURN_IF_ERROR(impl_->layers->apply(out.outputs, b, len, out.hidden, out.converted));
    out.x = out.converted.data();
  } else if (hidden.dtype() == DType::kFloat32) {
    out.x = hidden.data<float>();
  } else if (hidden.dtype() == DType::kFloat16 || hidden.dtype() == DType::kBFloat16) {
    out.converted.resize(static_cast<size_t>(hidden.size()));
    for (size_t i = 0; i < out.converted.size(); ++i) {
      out.converted[i] = hidden.dtype() == DType::kFloat16 ? static_cast<float>(hidden.data<Float16>()[i])
                                                          : static_cast<float>(hidden.data<BFloat16>()[i]);
    }
    out.x = out.converted.data();
  } else {
    return RuntimeError(std::string("the model output is ") + dtype_name(hidden.dtype()) + ", expected float");
  }
  return out;
}

Status Embedder::probe_per_item() {
  Impl& m = *impl_;
  if (m.batch_dependent_op.empty()) return Status::Ok();
  m.per_item = true;  // for the probe's run_hidden
  DLRT_ASSIGN_OR_RETURN(m.per_item_refusal, per_item_refusal(m.session->placement(), [&]() -> Status {
    std::vector<Encoding> probe;
    for (const char* text : {"a", "a probe of several words"}) {
      DLRT_ASSIGN_OR_RETURN(Encoding e, tokenize(text));
      probe.push_back(std::move(e));
    }
    return run_hidden(probe, {}).status();
  }));
  m.per_item = m.per_item_refusal.empty();
  return Status::Ok();
}

Result<TokenEmbedResult> Embedder::embed_tokens(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds,
                                                const TokenFilter& keep) const {
  TokenEmbedResult result;
  if (impl_->static_input)
    return Unsupported("the model " + impl_->name + " is a static embedding model: it has no per-token vectors");
  if (batch.empty()) return result;
  // As embed_encoded: where runs_alone(), each encoding runs alone.
  const bool alone = runs_alone() && batch.size() > 1;
  const size_t runs = alone ? batch.size() : 1;
  std::vector<Encoding> one(1);
  for (size_t r = 0; r < runs; ++r) {
    if (alone) one[0] = batch[r];
    const std::vector<Encoding>& part = alone ? one : batch;
    DLRT_ASSIGN_OR_RETURN(Hidden hs, run_hidden(part, bounds));
    result.total_tokens += hs.tokens;
    const double run_ms = result.report.run_ms + hs.report.run_ms;
    result.report = std::move(hs.report);
    result.report.run_ms = run_ms;
    for (size_t i = 0; i < part.size(); ++i) {
      const size_t input = alone ? r : i;
      const Encoding& e = part[i];
      size_t last = 0;  // sentence-transformers' rule: through the last attended position
      for (size_t t = 0; t < e.ids.size(); ++t)
        if (hs.mask[i * hs.length + t] != 0) last = t;
      std::vector<std::vector<float>> rows;
      for (size_t t = 0; t < e.ids.size(); ++t) {
        if (keep ? !keep(input, t) : t > last) continue;
        const float* row = hs.x + (i * hs.length + t) * hs.hidden;
        rows.emplace_back(row, row + hs.hidden);
      }
      result.tokens.push_back(std::move(rows));
    }
  }
  return result;
}

Result<EmbedResult> Embedder::embed_padded(const std::vector<Encoding>& batch, std::optional<bool> normalize,
                                           const dlrt::RunOptions& bounds) const {
  EmbedResult result;
  if (batch.empty()) return result;
  const size_t b = batch.size();
  DLRT_ASSIGN_OR_RETURN(Hidden hs, run_hidden(batch, bounds));
  const size_t len = hs.length, h = hs.hidden;
  const std::vector<int64_t>& mask = hs.mask;
  const float* x = hs.x;
  result.total_tokens = hs.tokens;
  result.report = std::move(hs.report);

  result.vectors.assign(b, std::vector<float>(h, 0.0f));
  for (size_t i = 0; i < b; ++i) {
    std::vector<float>& v = result.vectors[i];
    const float* rows = x + i * len * h;
    const int64_t* m = mask.data() + i * len;
    const Pooling pooling = impl_->pooling;
    if (impl_->splade) {
      impl_->splade->pool(rows, m, len, h, v.data());
      continue;  // no Dense or Normalize modules after SPLADE pooling
    }
    if (pooling == Pooling::kCls) {
      std::copy(rows, rows + h, v.begin());
    } else if (pooling == Pooling::kLastToken) {
      // The last real token (padding is on the right).
      size_t last = 0;
      for (size_t t = 0; t < len; ++t)
        if (m[t] != 0) last = t;
      std::copy(rows + last * h, rows + (last + 1) * h, v.begin());
    } else if (pooling == Pooling::kMean || pooling == Pooling::kMeanSqrtLen || pooling == Pooling::kWeightedMean) {
      std::vector<double> acc(h, 0.0);
      double count = 0;
      for (size_t t = 0; t < len; ++t) {
        if (m[t] == 0) continue;
        const double w = pooling == Pooling::kWeightedMean ? static_cast<double>(t + 1) : 1.0;
        count += w;
        for (size_t k = 0; k < h; ++k) acc[k] += w * rows[t * h + k];
      }
      // As sentence-transformers: the count (or the sum of the weights)
      // clamped to at least 1e-9; its square root for mean_sqrt_len.
      double denom = std::max(count, 1e-9);
      if (pooling == Pooling::kMeanSqrtLen) denom = std::sqrt(denom);
      for (size_t k = 0; k < h; ++k) v[k] = static_cast<float>(acc[k] / denom);
    } else {
      // Masked positions count as -1e9, as sentence-transformers does.
      std::fill(v.begin(), v.end(), -1e9f);
      for (size_t t = 0; t < len; ++t) {
        if (m[t] == 0) continue;
        for (size_t k = 0; k < h; ++k) v[k] = std::max(v[k], rows[t * h + k]);
      }
    }
    DLRT_ASSIGN_OR_RETURN(v, finish_vector(std::move(v), normalize));
  }
  return result;
}

Result<EmbedResult> Embedder::embed(const std::vector<std::string>& texts, std::optional<bool> normalize) const {
  std::vector<Encoding> batch;
  batch.reserve(texts.size());
  for (const std::string& t : texts) {
    DLRT_ASSIGN_OR_RETURN(Encoding e, impl_->tokenizer->encode_checked(t, impl_->max_length));
    batch.push_back(std::move(e));
  }
  return embed_encoded(batch, normalize);
}

Status Embedder::embed_by_length(std::vector<Encoding> encodings, size_t batch_size, std::optional<bool> normalize,
                                 const VectorSink& sink) const {
  return by_length(std::move(encodings), batch_size, [&](const std::vector<Encoding>& batch, const std::vector<size_t>& at) {
    DLRT_ASSIGN_OR_RETURN(EmbedResult r, embed_encoded(batch, normalize));
    for (size_t k = 0; k < at.size(); ++k) DLRT_RETURN_IF_ERROR(sink(at[k], std::move(r.vectors[k])));
    return Status::Ok();
  });
}

Status Embedder::encode_sparse_by_length(std::vector<Encoding> encodings, size_t batch_size, size_t top_k,
                                         const SparseSink& sink) const {
  return by_length(std::move(encodings), batch_size, [&](const std::vector<Encoding>& batch, const std::vector<size_t>& at) {
    DLRT_ASSIGN_OR_RETURN(SparseResult r, encode_sparse_encoded(batch, top_k));
    for (size_t k = 0; k < at.size(); ++k) DLRT_RETURN_IF_ERROR(sink(at[k], std::move(r.vectors[k])));
    return Status::Ok();
  });
}

ModelKind Embedder::kind() const { return impl_->kind; }
const SpladePooling* Embedder::splade_pooling() const { return impl_->splade ? &*impl_->splade : nullptr; }
size_t Embedder::dimension() const { return impl_->dimension; }
size_t Embedder::hidden_size() const { return impl_->hidden_size; }
std::string Embedder::model_name() const { return impl_->name; }
size_t Embedder::max_length() const { return impl_->max_length; }
Pooling Embedder::pooling() const { return impl_->pooling; }
const std::map<std::string, std::string>& Embedder::prompts() const { return impl_->prompts; }
const std::string& Embedder::default_prompt_name() const { return impl_->default_prompt_name; }
const std::string& Embedder::similarity_fn_name() const { return impl_->similarity_fn; }
bool Embedder::normalize() const { return impl_->normalize; }
RunReport Embedder::placement() const { return impl_->session ? impl_->session->placement() : RunReport{}; }
const PrecisionChoice& Embedder::precision_choice() const {
  static const PrecisionChoice none;  // a static embedding: no session
  return impl_->session ? dlrt::precision_choice(*impl_->session) : none;
}
size_t Embedder::token_row_bytes() const { return impl_->session ? dlrt::embed::token_row_bytes(*impl_->session) : 0; }
const Tokenizer& Embedder::tokenizer() const { return *impl_->tokenizer; }
const std::string& Embedder::batch_dependent_op() const { return impl_->batch_dependent_op; }
bool Embedder::runs_alone() const { return !impl_->batch_dependent_op.empty() && !impl_->per_item; }
std::string Embedder::batching() const {
  if (impl_->batch_dependent_op.empty()) return "padded batches";
  if (impl_->per_item) return "padded batches, int8 scales per text (dynamic quantization: " + impl_->batch_dependent_op + ")";
  return "one text per run (dynamic quantization: " + impl_->batch_dependent_op + "; " + impl_->per_item_refusal + ")";
}

}  // namespace dlrt::embed
