// A model as serve, the CLI and Python use it once the registry (registry.h)
// has opened its folder: what every kind has (EmbedModel: its kind, its
// tokenizer, its limits and settings, where it runs) and what only some kinds
// can do, each a small capability interface (text in -> dense out, sparse out,
// per-token out; pair scoring). A kind's model implements the interfaces of
// the capabilities its registry row (registry.h) lists; as<T>() answers for it.
//
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlrt/precision_choice.h"
#include "dlrt/session.h"
#include "dlrt/status.h"
#include "embed/image/image.h"
#include "embed/models/embedder.h"
#include "embed/models/kind.h"
#include "embed/models/score_activation.h"
#include "embed/models/sparse.h"
#include "embed/tokenizer/encoding.h"

namespace dlrt::embed {

class EmbedModel {
 public:
  virtual ~EmbedModel() = default;
  virtual ModelKind kind() const = 0;
  // The interface of capability T (DenseOut, SparseOut, PerTokenOut,
  // PairScorer) when the model's kind has it, else null.
  template <class T>
  const T* as() const {
    return T::in(kind()) ? dynamic_cast<const T*>(this) : nullptr;
  }

  // ---- tokenizing ----
  // One text, truncated to max_length(); *truncated says whether it was longer.
  virtual Result<Encoding> tokenize(std::string_view text, bool* truncated) const = 0;
  // tokenize() that also gives the text's ids before the cut in *tokens (0:
  // not known), from the same pass (a 413's count without tokenizing twice).
  virtual Result<Encoding> tokenize_counted(std::string_view text, bool* truncated, size_t* tokens) const {
    *tokens = 0;
    return tokenize(text, truncated);
  }
  // tokenize_counted for a query (true) or a document (false), as
  // sentence-transformers' encode_query / encode_document: a Router folder's
  // model (router.h) tokenizes for that route and tags the encoding with it
  // (kInvalidArgument when it has none); other models have one route.
  virtual Result<Encoding> tokenize_for(std::string_view text, std::optional<bool> is_query, bool* truncated,
                                        size_t* tokens) const {
    return tokenize_counted(text, truncated, tokens);
  }
  // One text as tokenize() does, with each token's byte offsets [start, stop)
  // into `text` in `offsets` ((0, 0) for the special tokens the tokenizer
  // adds); the default leaves `offsets` empty (not known).
  virtual Result<Encoding> tokenize_with_offsets(std::string_view text,
                                                 std::vector<std::pair<size_t, size_t>>& offsets) const {
    offsets.clear();
    return tokenize(text, nullptr);
  }
  // A token's text and whether it is a special token (for /tokenize).
  virtual std::string token_text(int64_t id) const { return ""; }
  virtual bool is_special_token(int64_t id) const { return false; }
  // Text of token ids (the tokenizer's decoder), for /decode.
  virtual Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
    return Unsupported("this model's tokenizer cannot decode");
  }
  // Token ids are in [0, vocab_size()) (0: not known, not checked).
  virtual size_t vocab_size() const { return 0; }
  // The id a padded batch fills its rows with (the tokenizer's pad token).
  virtual int64_t pad_id() const { return 0; }

  // ---- what the model is ----
  // Values per vector: a dense model's, a sparse model's vocabulary, a
  // per-token model's per token, a classifier's labels.
  virtual size_t dimension() const = 0;
  virtual std::string model_name() const = 0;
  virtual size_t max_length() const = 0;
  virtual dlrt::RunReport placement() const = 0;
  // What cpu_precision "auto" measured and chose (null: no session of its own).
  virtual const dlrt::PrecisionChoice* precision_choice() const { return nullptr; }
  // The bytes a padded token adds to a run's outputs (its widest per-token
  // output row; 0: not known), for the memory budget max_batch_mb.
  virtual size_t token_row_bytes() const { return 0; }
  // Vectors come out pooled but not normalised; the caller normalises, by
  // default when normalizes() (the folder asks for it).
  virtual bool normalizes() const { return false; }
  virtual std::string pooling() const { return ""; }
  // True when a text's result would depend on its batch-mates (dynamic
  // quantization that cannot take scales per text, see batch_dependence.h):
  // the batcher then runs one input per batch. batching() says which rule applies (/info's "batching").
  virtual bool batch_dependent() const { return false; }
  virtual std::string batching() const { return "padded batches"; }
  // The text of a named prompt (config_sentence_transformers.json), and the
  // name used when a request names none ("" for none).
  virtual std::optional<std::string> prompt(const std::string& name) const { return std::nullopt; }
  virtual std::string default_prompt_name() const { return ""; }
  virtual std::vector<std::string> prompt_names() const { return {}; }
  // The folder's similarity function (Embedder::similarity_fn_name), for /similarity.
  virtual std::string similarity_fn_name() const { return "cosine"; }
};

// Text in -> one dense vector per text (Capability::kDense).
class DenseOut {
 public:
  static bool in(ModelKind kind) { return has_capability(kind, Capability::kDense); }
  virtual ~DenseOut() = default;
  // Pooled, not normalised; `bounds` bound the run (a run past them is kCancelled).
  virtual Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch,
                                            const dlrt::RunOptions& bounds) const = 0;
};

// Decoded images in -> one dense vector per image, in the space of the
// model's text vectors (Capability::kImage; the kind's DenseOut embeds texts).
class ImageOut {
 public:
  static bool in(ModelKind kind) { return has_capability(kind, Capability::kImage); }
  virtual ~ImageOut() = default;
  // Preprocessed as the folder's image processor asks; pooled, not
  // normalised. kInvalidArgument for an image the preprocessing refuses.
  virtual Result<EmbedResult> embed_images(std::span<const image::Image> images,
                                           const dlrt::RunOptions& bounds) const = 0;
};

// Text in -> one sparse vector per text, its non-zero values (Capability::kSparse).
class SparseOut {
 public:
  static bool in(ModelKind kind) { return has_capability(kind, Capability::kSparse); }
  virtual ~SparseOut() = default;
  virtual Result<SparseResult> encode_sparse(const std::vector<Encoding>& batch,
                                             const dlrt::RunOptions& bounds) const = 0;
  // The folder's SPLADE pooling (strategy, activation); null for a sparse static embedding.
  virtual const SpladePooling* splade_pooling() const { return nullptr; }
};

// Text in -> one vector per token (Capability::kPerToken; kMaxSim models score by them).
class PerTokenOut {
 public:
  static bool in(ModelKind kind) {
    return has_capability(kind, Capability::kPerToken) || has_capability(kind, Capability::kMaxSim);
  }
  virtual ~PerTokenOut() = default;
  // Values per token vector; by default the model's dimension() (a dense
  // model's is its hidden size, dimension() its pooled vector's).
  virtual size_t token_dimension() const {
    const auto* m = dynamic_cast<const EmbedModel*>(this);
    return m ? m->dimension() : 0;
  }
  // A multi-vector model tokenizes queries and documents apart; others ignore is_query.
  virtual Result<Encoding> tokenize_tokens(std::string_view text, bool is_query, bool* truncated) const = 0;
  virtual Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool is_query,
                                                const dlrt::RunOptions& bounds) const = 0;
  // True when a query takes the "query" prompt and a document the "document"
  // one unless a prompt is named (sentence-transformers 6.x's encode_query /
  // encode_document on a MultiVectorEncoder); PyLate's markers need none.
  virtual bool prompts_by_task() const { return false; }
};

// (query, document) or a text in -> logits per label (Capability::kPairScore, kClassify).
class PairScorer {
 public:
  static bool in(ModelKind kind) {
    return has_capability(kind, Capability::kPairScore) || has_capability(kind, Capability::kClassify);
  }
  virtual ~PairScorer() = default;
  // labels() names the logits' columns (one: a reranker's score).
  virtual std::vector<std::string> labels() const = 0;
  // What the folder names for sentence-transformers' CrossEncoder to apply to
  // a row of logits (score_activation.h); the library's default here.
  virtual ScoreActivation score_activation() const { return ScoreActivation::library_default(labels().size()); }
  // Whether tokenize_rerank takes a task instruction (an LLM reranker's prompt).
  virtual bool takes_instruction() const { return false; }
  // A pair; a classifier of single texts takes none (kUnsupported).
  virtual Result<Encoding> tokenize_pair(std::string_view first, std::string_view second, bool* truncated) const {
    return Unsupported("this model does not take text pairs");
  }
  // A (query, document) pair for /rerank and /v1/rerank with a task
  // instruction ("": the model's default); only LLM rerankers take one.
  virtual Result<Encoding> tokenize_rerank(std::string_view query, std::string_view document,
                                           const std::string& instruction, bool* truncated) const {
    if (!instruction.empty()) return InvalidArgument("'instruction' is for LLM rerankers; the served model takes none");
    return tokenize_pair(query, document, truncated);
  }
  // tokenize_rerank of (query, documents[i]) for every document, the query
  // tokenized once where the model allows; (*truncated)[i] says whether pair
  // i was cut. kOutOfRange: the query alone fills the model's length.
  virtual Result<std::vector<Encoding>> tokenize_rerank_all(std::string_view query,
                                                            const std::vector<std::string>& documents,
                                                            const std::string& instruction,
                                                            std::vector<uint8_t>* truncated) const;
  // Logits, one row per encoding; `bounds` as DenseOut's.
  virtual Result<std::vector<std::vector<float>>> classify(const std::vector<Encoding>& batch,
                                                           const dlrt::RunOptions& bounds) const = 0;
};

}  // namespace dlrt::embed
