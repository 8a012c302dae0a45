// dlrt::embed::MultiVectorEmbedder: a multi-vector (late-interaction)
// model folder as PyLate saves a ColBERT model, turned into text -> one
// vector per token, and MaxSim scoring of a query against documents.
//
// The folder is an Embedder folder (model.onnx or onnx/model.onnx: the
// transformer, last_hidden_state [batch, sequence, hidden]; the tokenizer
// files) whose config_sentence_transformers.json says "model_type": "ColBERT"
// or whose modules.json lists a PyLate module (pylate.models.Dense.Dense).
// modules.json's Dense modules (PyLate's or sentence-transformers') project
// every token vector; config_sentence_transformers.json holds PyLate's
// settings:
//   query_prefix / document_prefix  a token put right after [CLS] ("[Q] ",
//                                   "[D] "; "" for none)
//   query_length / document_length  tokens per query / document, marker included
//   do_query_expansion              pad each query to query_length with the
//                                   mask token, whose vectors are kept
//   attend_to_expansion_tokens      let the model attend to those mask tokens
//   skiplist_words                  tokens left out of documents (punctuation)
// Each kept token vector is L2-normalised.
//
// sentence-transformers 6.x's own multi-vector encoder (config_sentence_transformers.json's
// "model_type": "MultiVectorEncoder", or a sentence_transformers.multi_vector_encoder module in
// modules.json) is read from its modules instead (read_encoder_config): the Transformer's
// sentence_bert_config.json (query_length, document_length, query_expansion), Dense modules on
// token_embeddings, a MultiVectorMask (skip-list, its tasks, keep_only_token_ids), Normalize on
// token_embeddings, a HierarchicalTokenPooling with pool_factor 1 (a normalisation for its tasks;
// a larger factor clusters tokens and is refused). Its prompts go by task ("query" for queries,
// "document" for documents), as encode_query / encode_document pick them; no marker tokens.
//
// Thread-safety: create() builds an immutable object; every other method may
// be called from many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dlrt/status.h"
#include "embed/models/dense.h"
#include "embed/models/embedder.h"

namespace dlrt::embed {

// True for a type only multi-vector folders have: "pylate.models.Dense.Dense",
// sentence_transformers.multi_vector_encoder.*.
bool is_multi_vector_module_type(std::string_view type);

// True when DIR's config_sentence_transformers.json has "model_type":
// "ColBERT" or "MultiVectorEncoder" or its modules.json lists a type is_multi_vector_module_type accepts.
bool is_multi_vector_folder(const std::filesystem::path& dir);

// PyLate's settings, with PyLate's defaults where the folder names none.
struct MultiVectorConfig {
  std::string query_prefix = "[Q] ";
  std::string document_prefix = "[D] ";
  size_t query_length = 32;
  size_t document_length = 180;
  bool do_query_expansion = true;
  bool attend_to_expansion_tokens = false;
  std::vector<std::string> skiplist_words;  // default: the ASCII punctuation characters

  // A sentence-transformers 6.x MultiVectorEncoder folder (the fields below; query_prefix and
  // document_prefix are then ""; query_length and document_length as create() resolves them).
  bool encoder = false;
  std::string expansion;          // query_expansion's strategy: "" (none), "fixed" or "min"
  size_t expansion_length = 0;    // its pad target (the query width's floor)
  std::string expansion_token;    // its token; "": the tokenizer's mask token, else its end-of-sequence token
  bool scores_expansion = false;  // a MultiVectorMask scores the expansion positions
  bool skip_queries = false, skip_documents = false;  // MultiVectorMask's skiplist_tasks
  std::vector<int64_t> keep_only_token_ids;           // documents keep only these (empty: all)
  bool normalize_queries = false, normalize_documents = false;
};

// True for DIR's folder a sentence-transformers 6.x MultiVectorEncoder saved.
bool is_multi_vector_encoder_folder(const std::filesystem::path& dir);

// A 6.x MultiVectorEncoder folder's settings from its modules (above); its
// Dense modules' folders in `dense`. kUnsupported for a setting dlrt does not
// implement (token pooling with pool_factor above 1, a text
// processing_kwargs override), kInvalidModel for a
// value of the wrong type or a module order the library would not run so.
Result<MultiVectorConfig> read_encoder_config(const std::filesystem::path& dir, std::vector<std::filesystem::path>& dense);

// Reads config_sentence_transformers.json of DIR. kInvalidModel for a value
// of the wrong type or a length below 3.
Result<MultiVectorConfig> read_multi_vector_config(const std::filesystem::path& dir);

// MaxSim: for each query vector the largest dot product with a document
// vector, summed over the query vectors (0 for an empty document).
float maxsim(const std::vector<std::vector<float>>& query, const std::vector<std::vector<float>>& document);
// The score a multi-vector model's similarity_fn_name names: "maxsim", or
// "meanmaxsim" (sentence-transformers 6.x: MaxSim over the query's vector
// count, at least 1).
float late_interaction_score(const std::string& similarity_fn_name, const std::vector<std::vector<float>>& query,
                             const std::vector<std::vector<float>>& document);

class MultiVectorEmbedder {
 public:
  // Errors: Embedder::create's, kInvalidModel for a marker that is not a
  // token of the tokenizer or Dense modules whose sizes do not chain, and
  // kUnsupported for a Dense module with use_residual.
  static Result<std::unique_ptr<MultiVectorEmbedder>> create(const std::string& model_dir,
                                                             const EmbedderOptions& options);
  ~MultiVectorEmbedder();
  MultiVectorEmbedder(const MultiVectorEmbedder&) = delete;
  MultiVectorEmbedder& operator=(const MultiVectorEmbedder&) = delete;

  // A query or document as the model takes it: [CLS], the marker, the text's
  // tokens cut to the query or document length, [SEP]; a query padded with
  // mask tokens when the folder expands queries. *truncated says whether the
  // text was cut.
  Result<Encoding> tokenize(std::string_view text, bool is_query, bool* truncated = nullptr) const;
  // One vector per kept token of each encoding (queries: every position when
  // expanded, else the attended ones; documents: the attended ones not in
  // the skip-list), projected by the Dense modules and L2-normalised. All
  // encodings of a call are queries, or all documents.
  Result<TokenEmbedResult> embed_encoded(const std::vector<Encoding>& batch, bool is_query,
                                         const dlrt::RunOptions& bounds = {}) const;
  // tokenize + embed_encoded.
  Result<TokenEmbedResult> embed(const std::vector<std::string>& texts, bool is_query) const;

  size_t dimension() const;  // per-token vector length, after the Dense modules
  const MultiVectorConfig& config() const;
  // The transformer and tokenizer (prompts, names, placement).
  const Embedder& base() const;

  struct Impl;  // multi_vector_impl.h (internal to models/)

 private:
  explicit MultiVectorEmbedder(std::unique_ptr<Impl> impl);
  // The 6.x MultiVectorEncoder's create, tokenize and embed_encoded (multi_vector_encoder.cpp).
  static Result<std::unique_ptr<MultiVectorEmbedder>> create_encoder(const std::string& model_dir,
                                                                     const std::filesystem::path& dir,
                                                                     const EmbedderOptions& options);
  Result<Encoding> tokenize_encoder(std::string_view text, bool is_query, bool* truncated) const;
  Result<TokenEmbedResult> embed_encoder(const std::vector<Encoding>& batch, bool is_query,
                                         const dlrt::RunOptions& bounds) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlrt::embed
