// dlrt::embed::Embedder: a sentence-transformers / Hugging Face ONNX export
// folder turned into text -> vector. Uses only dlrt's public API.
//
// A model folder holds model.onnx (or onnx/model.onnx), tokenizer.json and/or
// vocab.txt, and optionally tokenizer_config.json, config.json, modules.json,
// 1_Pooling/config.json (pooling mode; default mean + L2 normalise) and
// config_sentence_transformers.json (named prompts).
//
// Thread-safety: create() builds an immutable object; tokenize() and embed*()
// may be called from many threads at once (dlrt::Session::run is thread-safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlrt/precision_choice.h"
#include "dlrt/session.h"
#include "dlrt/status.h"
#include "embed/models/kind.h"
#include "embed/tokenizer/encoding.h"

namespace dlrt::embed {

struct SparseVector;
class SpladePooling;
struct Module;

// sentence-transformers' pooling modes: the mean of the real tokens, the
// first token, the element-wise max, the mean divided by sqrt(token count)
// instead of the count, the last real token, and the mean weighted by
// position (1, 2, ... for the first, second, ... token).
enum class Pooling { kMean, kCls, kMax, kMeanSqrtLen, kLastToken, kWeightedMean };

// "mean", "cls", "max", "mean_sqrt_len_tokens", "lasttoken", "weightedmean".
const char* pooling_name(Pooling pooling);

// An Embedder's kind (kind.h) is dense (Transformer + Pooling) or sparse
// (SPLADE: MLMTransformer + SpladePooling, one weight per vocabulary token;
// see sparse.h). The kind decides which methods answer: embed*() for dense
// models, encode_sparse*() for sparse ones.

struct EmbedderOptions {
  std::string device;     // dlrt device spec ("" = DLRT_DEVICE / auto)
  bool strict = false;
  int threads = 0;
  bool warm_start = false;
  size_t max_length = 0;  // 0 = the folder's (tokenizer_config/model max), capped at model positions
  // Accelerator compile options for the session (SessionOptions::backend_options).
  std::map<std::string, std::string> backend_options;
  uint64_t max_tensor_bytes = 0;  // SessionOptions::max_tensor_bytes (0: DLRT_MAX_TENSOR_MB, config, default)
  // SessionOptions::cpu_precision; "auto" measures on the warm-up texts (token_inputs.h).
  std::string cpu_precision;
  // The modules to run instead of the folder's modules.json (a Router's route, router.h); null: the folder's.
  const std::vector<Module>* modules = nullptr;
};

struct EmbedResult {
  std::vector<std::vector<float>> vectors;  // one per input, in input order
  size_t total_tokens = 0;                  // non-padding tokens, [CLS]/[SEP] included
  dlrt::RunReport report;
};

struct SparseResult {
  std::vector<SparseVector> vectors;  // one per input, in input order
  size_t total_tokens = 0;
  dlrt::RunReport report;
};

// Per-token vectors: for each input, one vector per kept token, in token order.
struct TokenEmbedResult {
  std::vector<std::vector<std::vector<float>>> tokens;  // [input][token][value]
  size_t total_tokens = 0;                               // non-padding tokens run
  dlrt::RunReport report;
};

class Tokenizer;

// The named prompts, default prompt name and similarity function of DIR's
// config_sentence_transformers.json (as Embedder::prompts() and
// similarity_fn_name() give them). kInvalidModel for a value of the wrong type.
dlrt::Status read_prompts(const std::filesystem::path& dir, std::map<std::string, std::string>& prompts,
                          std::string& default_name, std::string& similarity_fn);

class Embedder {
 public:
  // Loads the folder and creates the session. Errors: kNotFound (no folder,
  // no model or no vocabulary), kInvalidModel (broken json, a model without
  // input_ids or without a 3-D output), kUnsupported (a tokenizer dlrt does
  // not implement; a folder of another kind than dense or sparse, kind.h: a
  // multi-vector folder, whose vectors are per token, see multi_vector.h, or a
  // reranker), and the errors of dlrt::Session::create.
  static dlrt::Result<std::unique_ptr<Embedder>> create(const std::string& model_dir,
                                                        const EmbedderOptions& options);
  // create() without the multi-vector refusal: the folder's transformer and
  // tokenizer for per-token output (embed_tokens), as MultiVectorEmbedder uses them.
  static dlrt::Result<std::unique_ptr<Embedder>> create_transformer(const std::string& model_dir,
                                                                    const EmbedderOptions& options);
  ~Embedder();
  Embedder(const Embedder&) = delete;
  Embedder& operator=(const Embedder&) = delete;

  // Tokenizes one text, truncated to max_length() tokens ([CLS]/[SEP] included).
  dlrt::Result<Encoding> tokenize(std::string_view text) const;
  // Pads the batch to its longest encoding, runs the model, pools and
  // L2-normalises when `normalize` says so (nullopt: when the folder does,
  // see normalize()). An empty batch gives an empty result. `bounds` bound
  // the model run (timeout, cancel flag): kCancelled when they stop it.
  // A batch-dependent model (batch_dependent_op() not empty) quantizes each
  // text's rows with its own int8 scales (RunOptions::item_lengths), or where
  // the runtime cannot (runs_alone()) runs each encoding alone, unpadded: every
  // text gets the vector it gets alone.
  dlrt::Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch,
                                          std::optional<bool> normalize = std::nullopt,
                                          const dlrt::RunOptions& bounds = {}) const;
  // Dense models only: on a sparse model embed*() are kInvalidArgument naming its kind.
  // tokenize + embed_encoded.
  dlrt::Result<EmbedResult> embed(const std::vector<std::string>& texts,
                                  std::optional<bool> normalize = std::nullopt) const;
  // Embeds many tokenized texts `batch_size` (>= 1) at a time, in order of
  // decreasing token count (less padding per batch); `sink(i, vector)` gets
  // the vector of encodings[i]. Stops at the first batch or sink that fails
  // and returns its status.
  using VectorSink = std::function<dlrt::Status(size_t index, std::vector<float>&& vector)>;
  dlrt::Status embed_by_length(std::vector<Encoding> encodings, size_t batch_size, std::optional<bool> normalize,
                               const VectorSink& sink) const;

  // Sparse models only (kInvalidArgument on a dense one): the SPLADE vectors
  // of tokenized texts, as embed_encoded runs them (padded batches, or one
  // text per run where runs_alone()), each reduced to its non-zero
  // values; with top_k > 0 to its top_k largest (see sparsify()).
  dlrt::Result<SparseResult> encode_sparse_encoded(const std::vector<Encoding>& batch, size_t top_k = 0,
                                                   const dlrt::RunOptions& bounds = {}) const;
  // tokenize + encode_sparse_encoded.
  dlrt::Result<SparseResult> encode_sparse(const std::vector<std::string>& texts, size_t top_k = 0) const;
  // embed_by_length for sparse vectors.
  using SparseSink = std::function<dlrt::Status(size_t index, SparseVector&& vector)>;
  dlrt::Status encode_sparse_by_length(std::vector<Encoding> encodings, size_t batch_size, size_t top_k,
                                       const SparseSink& sink) const;

  ModelKind kind() const;
  // The SpladePooling module of a sparse model (null for a dense one).
  const SpladePooling* splade_pooling() const;
  size_t dimension() const;         // vector length (a sparse model's: its vocabulary size)

  // Per-token output of the model (its last_hidden_state rows, or a
  // WeightedLayerPooling module's average of the layers, before any
  // pooling or Dense module), for the positions `keep(input, position)`
  // accepts among each encoding's own ids (padding never). Without `keep`:
  // every position up to the encoding's last attended one, as
  // sentence-transformers' encode(output_value="token_embeddings") gives.
  // Where runs_alone(), each encoding runs alone (see embed_encoded).
  using TokenFilter = std::function<bool(size_t input, size_t position)>;
  dlrt::Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds = {},
                                              const TokenFilter& keep = nullptr) const;

  size_t hidden_size() const;       // the model's per-token vector length (before Dense modules)
  std::string model_name() const;   // the folder's name, or above a generic one ("model", "onnx"): find_model_file
  size_t max_length() const;        // tokens per text, [CLS]/[SEP] included
  Pooling pooling() const;          // a dense model's (a sparse model's is SPLADE's, splade_pooling())
  // Named prompts of config_sentence_transformers.json ("query" -> "query: "),
  // prepended to a text before tokenizing when a caller asks for one, and the
  // name used when a caller names none ("" for none).
  const std::map<std::string, std::string>& prompts() const;
  const std::string& default_prompt_name() const;
  // config_sentence_transformers.json's similarity_fn_name: "cosine" (also
  // when absent), "dot", "euclidean" or "manhattan" (the last two negated
  // distances, as sentence-transformers' similarity()); "maxsim" for a
  // multi-vector folder naming PyLate's "MaxSim", "meanmaxsim" for a 6.x
  // MultiVectorEncoder folder naming it (kInvalidModel elsewhere).
  const std::string& similarity_fn_name() const;
  bool normalize() const;           // the folder asks for L2-normalised output (a Normalize module)
  dlrt::RunReport placement() const;  // where the session was placed (for /health)
  const dlrt::PrecisionChoice& precision_choice() const;  // what cpu_precision "auto" chose (for /info)
  size_t token_row_bytes() const;     // the session's widest per-token output row (token_inputs.h)
  const Tokenizer& tokenizer() const;
  // The op that makes the model's results depend on a text's batch-mates
  // (dynamic quantization with per-tensor scales, see batch_dependence.h),
  // "" when there is none; whether the model then runs one text per run
  // (its quantizers cannot take scales per text); and the batching rule that
  // follows, for summaries: "padded batches", "padded batches, int8 scales
  // per text (dynamic quantization: OP)" or "one text per run (dynamic
  // quantization: OP; WHY)".
  const std::string& batch_dependent_op() const;
  bool runs_alone() const;
  std::string batching() const;

 private:
  // embed_encoded without the kind check: a sparse model's vectors are its
  // dense SPLADE vectors (vocabulary-wide).
  dlrt::Result<EmbedResult> run_encoded(const std::vector<Encoding>& batch, std::optional<bool> normalize,
                                        const dlrt::RunOptions& bounds) const;
  // run_encoded's padded batch run.
  dlrt::Result<EmbedResult> embed_padded(const std::vector<Encoding>& batch, std::optional<bool> normalize,
                                         const dlrt::RunOptions& bounds) const;
  // The model's output for a padded batch as float [batch, length, hidden].
  struct Hidden;
  // Sets per_item for a batch-dependent model whose runs can quantize per text.
  dlrt::Status probe_per_item();
  dlrt::Result<Hidden> run_hidden(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const;
  struct Impl;
  explicit Embedder(std::unique_ptr<Impl> impl);
  // A folder whose module 0 is a static embedding (static_embedding.h): no session.
  static dlrt::Result<std::unique_ptr<Embedder>> create_static(std::unique_ptr<Impl> impl,
                                                               const std::filesystem::path& dir, const Module& input,
                                                               const EmbedderOptions& options);
  dlrt::Result<EmbedResult> embed_static(const std::vector<Encoding>& batch, std::optional<bool> normalize) const;
  // A pooled vector through the Dense / LayerNorm modules and the normalisation.
  dlrt::Result<std::vector<float>> finish_vector(std::vector<float> v, std::optional<bool> normalize) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlrt::embed
