// sentence-transformers 6.x MultiVectorEncoder folders: their settings read
// from the modules (multi_vector.h's read_encoder_config).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "embed/models/modules.h"
#include "embed/models/multi_vector.h"
#include "embed/models/multi_vector_impl.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A module's task list ("tasks", "skiplist_tasks"): a string or a list of strings; `fallback` when absent.
Status read_tasks(const json& c, const char* key, const fs::path& path, bool& query, bool& document,
                  bool fallback_document) {
  query = false;
  document = fallback_document;
  auto f = c.find(key);
  if (f == c.end() || f->is_null()) return Status::Ok();
  std::vector<json> names = f->is_array() ? f->get<std::vector<json>>() : std::vector<json>{*f};
  document = false;
  for (const json& n : names) {
    if (!n.is_string()) return InvalidModel(path.string() + ": \"" + key + "\" must be a string or a list of strings");
    query = query || n.get<std::string>() == "query";
    document = document || n.get<std::string>() == "document";
  }
  return Status::Ok();
}

Result<json> read_object(const fs::path& path) {
  DLRT_ASSIGN_OR_RETURN(json j, jsonu::read_optional_json(path));
  if (j.is_null()) return json::object();
  if (!j.is_object()) return InvalidModel(path.string() + ": expected a JSON object");
  return j;
}

// query_length / document_length: null or a whole number of tokens (0 when null).
Status read_length(const json& c, const char* key, const fs::path& path, size_t& out) {
  auto f = c.find(key);
  if (f == c.end() || f->is_null()) return Status::Ok();
  if (!f->is_number_unsigned() || f->get<uint64_t>() < 2 || f->get<uint64_t>() > (1u << 20))
    return InvalidModel(path.string() + ": \"" + key + "\" must be null or a whole number of tokens, at least 2");
  out = static_cast<size_t>(f->get<uint64_t>());
  return Status::Ok();
}

// The Transformer's sentence_bert_config.json: lengths and query expansion.
Status read_transformer(const fs::path& dir, MultiVectorConfig& c) {
  const fs::path path = dir / "sentence_bert_config.json";
  DLRT_ASSIGN_OR_RETURN(json j, read_object(path));
  const std::string task = jsonu::get_string(j, "transformer_task", "feature-extraction");
  if (task != "feature-extraction")
    return Unsupported(path.string() + ": transformer_task \"" + task +
                       "\" (dlrt's multi-vector encoder runs a feature-extraction transformer's hidden states)");
  if (auto p = j.find("processing_kwargs"); p != j.end() && !p->is_null() && !(p->is_object() && p->empty()))
    return Unsupported(path.string() + ": processing_kwargs (tokenizer overrides) in a multi-vector encoder are not "
                       "implemented");
  DLRT_RETURN_IF_ERROR(read_length(j, "query_length", path, c.query_length));
  DLRT_RETURN_IF_ERROR(read_length(j, "document_length", path, c.document_length));
  auto e = j.find("query_expansion");
  if (e == j.end() || e->is_null()) return Status::Ok();
  const std::string bad = path.string() + ": query_expansion must be {\"strategy\": \"fixed\" or \"min\", \"length\": "
                                          "a whole number of tokens, \"attend\": true or false, \"token\": null or a token}";
  if (!e->is_object()) return InvalidModel(bad);
  c.expansion = jsonu::get_string(*e, "strategy", "");
  if (c.expansion != "fixed" && c.expansion != "min") return InvalidModel(bad);
  auto length = e->find("length");
  if (length == e->end() || !length->is_number_unsigned() || length->get<uint64_t>() < 1 ||
      length->get<uint64_t>() > (1u << 20))
    return InvalidModel(bad);
  c.expansion_length = static_cast<size_t>(length->get<uint64_t>());
  if (auto a = e->find("attend"); a != e->end() && !a->is_null()) {
    if (!a->is_boolean()) return InvalidModel(bad);
    c.attend_to_expansion_tokens = a->get<bool>();
  }
  if (auto t = e->find("token"); t != e->end() && !t->is_null()) {
    if (!t->is_string()) return InvalidModel(bad);
    c.expansion_token = t->get<std::string>();
  }
  if (c.query_length && c.query_length < c.expansion_length)
    return InvalidModel(path.string() + ": query_length " + std::to_string(c.query_length) +
                        " is below query_expansion's length " + std::to_string(c.expansion_length));
  return Status::Ok();
}

Status read_mask(const Module& m, MultiVectorConfig& c) {
  const fs::path path = m.dir / "config.json";
  DLRT_ASSIGN_OR_RETURN(json j, read_object(path));
  c.scores_expansion = true;
  c.skiplist_words.clear();
  if (auto w = j.find("skiplist_words"); w != j.end() && !w->is_null()) {
    if (!w->is_array()) return InvalidModel(path.string() + ": \"skiplist_words\" must be a list of strings");
    for (const json& x : *w) {
      if (!x.is_string()) return InvalidModel(path.string() + ": \"skiplist_words\" must be a list of strings");
      c.skiplist_words.push_back(x.get<std::string>());
    }
  }
  DLRT_RETURN_IF_ERROR(read_tasks(j, "skiplist_tasks", path, c.skip_queries, c.skip_documents, true));
  if (auto k = j.find("keep_only_token_ids"); k != j.end() && !k->is_null()) {
    if (!k->is_array()) return InvalidModel(path.string() + ": \"keep_only_token_ids\" must be null or a list of ids");
    for (const json& x : *k) {
      if (!x.is_number_integer()) return InvalidModel(path.string() + ": \"keep_only_token_ids\" must be a list of ids");
      c.keep_only_token_ids.push_back(x.get<int64_t>());
    }
  }
  return Status::Ok();
}

// HierarchicalTokenPooling: pool_factor 1 (or below) clusters nothing, and
// normalises the tokens of its tasks when normalize_embeddings (absent: false, as the library loads it).
Status read_token_pooling(const Module& m, MultiVectorConfig& c) {
  const fs::path path = m.dir / "config.json";
  DLRT_ASSIGN_OR_RETURN(json j, read_object(path));
  auto f = j.find("pool_factor");
  if (f != j.end() && !f->is_null() && !f->is_number())
    return InvalidModel(path.string() + ": \"pool_factor\" must be a number");
  const double factor = f == j.end() || f->is_null() ? 1.0 : f->get<double>();
  if (factor > 1.0)
    return Unsupported(path.string() + ": HierarchicalTokenPooling with pool_factor " + std::to_string(factor) +
                       " (Ward clustering of a document's token vectors into fewer) is not implemented; dlrt runs "
                       "pool_factor 1, which keeps every token");
  bool query = false, document = false;
  DLRT_RETURN_IF_ERROR(read_tasks(j, "tasks", path, query, document, true));
  if (jsonu::get_bool(j, "normalize_embeddings", false)) {
    c.normalize_queries = c.normalize_queries || query;
    c.normalize_documents = c.normalize_documents || document;
  }
  return Status::Ok();
}

}  // namespace

bool is_multi_vector_encoder_folder(const fs::path& dir) {
  auto st = jsonu::read_optional_json(dir / "config_sentence_transformers.json");
  if (st.ok() && st->is_object() && jsonu::get_string(*st, "model_type", "") == "MultiVectorEncoder") return true;
  auto modules = jsonu::read_optional_json(dir / "modules.json");
  if (!modules.ok() || !modules->is_array()) return false;
  for (const json& m : *modules)
    if (jsonu::get_string(m, "type", "").rfind("sentence_transformers.multi_vector_encoder.", 0) == 0) return true;
  return false;
}

Result<MultiVectorConfig> read_encoder_config(const fs::path& dir, std::vector<fs::path>& dense) {
  MultiVectorConfig c;
  c.encoder = true;
  c.query_prefix = c.document_prefix = "";
  c.query_length = c.document_length = 0;
  c.do_query_expansion = false;
  c.skiplist_words.clear();
  // Its similarity_fn_name ("maxsim" or "meanmaxsim") is the base Embedder's (embedder.cpp).
  DLRT_RETURN_IF_ERROR(read_object(dir / "config_sentence_transformers.json").status());
  DLRT_ASSIGN_OR_RETURN(std::vector<Module> modules, read_modules(dir));
  const std::string where = (dir / "modules.json").string();
  bool normalized = false, pooled = false, masked = false;
  for (size_t i = 0; i < modules.size(); ++i) {
    const Module& m = modules[i];
    const std::string at = where + ": module " + std::to_string(i) + " (" + m.type_name + ")";
    // Dense and Normalize act on the key their config names; a 6.x save names token_embeddings.
    std::string input = m.type == ModuleType::kDense ? "token_embeddings" : "sentence_embedding";
    if ((m.type == ModuleType::kDense || m.type == ModuleType::kNormalize) && m.dir != dir) {
      DLRT_ASSIGN_OR_RETURN(json mc, read_object(m.dir / "config.json"));
      input = jsonu::get_string(mc, "module_input_name", input);
    }
    switch (m.type) {
      case ModuleType::kTransformer: DLRT_RETURN_IF_ERROR(read_transformer(m.dir, c)); break;
      case ModuleType::kDense:
        if (input != "token_embeddings")
          return Unsupported(at + " reads \"" + input + "\"; a multi-vector encoder's Dense reads token_embeddings");
        if (normalized || pooled) return InvalidModel(at + " comes after a normalisation, which dlrt applies last");
        dense.push_back(m.dir);
        break;
      case ModuleType::kNormalize:
        // On sentence_embedding (absent here) the library's Normalize does nothing.
        if (input == "token_embeddings") c.normalize_queries = c.normalize_documents = normalized = true;
        break;
      case ModuleType::kMultiVectorMask:
        if (masked) return InvalidModel(at + " is a second MultiVectorMask");
        masked = true;
        DLRT_RETURN_IF_ERROR(read_mask(m, c));
        break;
      case ModuleType::kTokenPooling:
        pooled = true;
        DLRT_RETURN_IF_ERROR(read_token_pooling(m, c));
        break;
      case ModuleType::kDropout: break;
      default:
        return Unsupported(at + " in a multi-vector encoder (dlrt takes Transformer, Dense, MultiVectorMask, "
                           "Normalize and HierarchicalTokenPooling)");
    }
  }
  if (modules.empty() || modules[0].type != ModuleType::kTransformer)
    return InvalidModel(where + ": a multi-vector encoder's module 0 must be its Transformer");
  return c;
}

namespace {

using Impl = MultiVectorEmbedder::Impl;

// The query and document lengths the library tokenizes at: query_length /
// document_length, else the model's; a "fixed" expansion's length for queries,
// at least a "min" expansion's. Then the expansion token and the token ids.
Status resolve_encoder(Impl& impl, const fs::path& dir) {
  MultiVectorConfig& c = impl.config;
  const Tokenizer& tok = impl.base->tokenizer();
  const size_t limit = impl.base->max_length();
  if (!c.document_length) c.document_length = limit;
  if (!c.query_length) c.query_length = limit;
  if (c.expansion == "fixed") c.query_length = c.expansion_length;
  if (c.expansion == "min") c.query_length = std::max(c.query_length, c.expansion_length);
  if (c.query_length > limit || c.document_length > limit)
    return InvalidModel(dir.string() + ": the query length " + std::to_string(c.query_length) + " or document length " +
                        std::to_string(c.document_length) + " is over the model's " + std::to_string(limit) + " tokens");
  if (!c.expansion.empty()) {
    DLRT_ASSIGN_OR_RETURN(json tc, read_object(dir / "tokenizer_config.json"));
    if (jsonu::get_string(tc, "padding_side", "right") == "left")
      return Unsupported(dir.string() + ": query expansion with a left-padding tokenizer (expansion tokens in front "
                         "of the query) is not implemented");
    // The library's choice: the configured token, else the mask token, else the end-of-sequence token.
    std::string name = c.expansion_token;
    if (name.empty()) name = special_token_name(dir, "mask_token");
    if (name.empty() || !multi_vector_token_id(tok, name)) name = special_token_name(dir, "eos_token");
    auto id = name.empty() ? std::nullopt : multi_vector_token_id(tok, name);
    if (!id)
      return InvalidModel(dir.string() + ": query expansion's token " +
                          (name.empty() ? std::string("(no mask or end-of-sequence token)") : "\"" + name + "\"") +
                          " is not a token of the tokenizer");
    impl.mask_id = *id;
  }
  // A skip-list word that is no single token is dropped, as the library's MultiVectorMask drops it.
  for (const std::string& w : c.skiplist_words)
    if (auto id = multi_vector_token_id(tok, w)) impl.skiplist.insert(*id);
  impl.keep_only.insert(c.keep_only_token_ids.begin(), c.keep_only_token_ids.end());
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<MultiVectorEmbedder>> MultiVectorEmbedder::create_encoder(const std::string& model_dir,
                                                                                 const fs::path& dir,
                                                                                 const EmbedderOptions& options) {
  auto impl = std::make_unique<Impl>();
  std::vector<fs::path> dense_dirs;
  DLRT_ASSIGN_OR_RETURN(impl->config, read_encoder_config(dir, dense_dirs));
  for (const fs::path& d : dense_dirs) {
    DLRT_ASSIGN_OR_RETURN(DenseLayer layer, DenseLayer::load(d, "token_embeddings"));
    if (!impl->dense.empty() && impl->dense.back().out_features() != layer.in_features())
      return InvalidModel(d.string() + ": in_features " + std::to_string(layer.in_features()) +
                          " but the module before gives " + std::to_string(impl->dense.back().out_features()));
    impl->dense.push_back(std::move(layer));
  }
  // The base Embedder runs the Transformer alone: the other modules are read above.
  DLRT_ASSIGN_OR_RETURN(std::vector<Module> modules, read_modules(dir));
  const std::vector<Module> transformer{modules.front()};
  EmbedderOptions base_options = options;
  base_options.modules = &transformer;
  DLRT_ASSIGN_OR_RETURN(impl->base, Embedder::create_transformer(model_dir, base_options));
  const size_t hidden = impl->base->hidden_size();
  if (!impl->dense.empty() && impl->dense.front().in_features() != hidden)
    return InvalidModel(dir.string() + ": the Dense module takes " + std::to_string(impl->dense.front().in_features()) +
                        " values but the model's token vectors have " + std::to_string(hidden));
  impl->dimension = impl->dense.empty() ? hidden : impl->dense.back().out_features();
  DLRT_RETURN_IF_ERROR(resolve_encoder(*impl, dir));
  return std::unique_ptr<MultiVectorEmbedder>(new MultiVectorEmbedder(std::move(impl)));
}

// As the library's Transformer.preprocess: the text cut at the task's length;
// a query shorter than the expansion length filled up to it with the
// expansion token (attended only with "attend").
Result<Encoding> MultiVectorEmbedder::tokenize_encoder(std::string_view text, bool is_query, bool* truncated) const {
  const MultiVectorConfig& c = impl_->config;
  const Tokenizer& tok = impl_->base->tokenizer();
  DLRT_ASSIGN_OR_RETURN(Encoding e, encode_within(is_query ? c.query_length : c.document_length, truncated,
                                                  [&](size_t n, size_t* untruncated) {
                                                    return tok.encode_checked(text, n, nullptr, untruncated);
                                                  }));
  if (e.attention_mask.size() != e.ids.size()) e.attention_mask.assign(e.ids.size(), 1);
  if (e.type_ids.size() != e.ids.size()) e.type_ids.assign(e.ids.size(), 0);
  if (is_query && !c.expansion.empty() && e.ids.size() < c.expansion_length) {
    e.ids.resize(c.expansion_length, impl_->mask_id);
    e.attention_mask.resize(c.expansion_length, c.attend_to_expansion_tokens ? 1 : 0);
    e.type_ids.resize(c.expansion_length, 0);
  }
  return e;
}

// As MultiVectorMask: the attended tokens, a query's expansion positions too
// (its only unattended ones); less the skip-list's ids on its tasks, and on
// documents those outside keep_only_token_ids. Then Dense and the normalisations.
Result<TokenEmbedResult> MultiVectorEmbedder::embed_encoder(const std::vector<Encoding>& batch, bool is_query,
                                                            const dlrt::RunOptions& bounds) const {
  const MultiVectorConfig& c = impl_->config;
  const bool skip = is_query ? c.skip_queries : c.skip_documents;
  const bool expansion_kept = is_query && c.scores_expansion && !c.expansion.empty();
  auto keep = [&](size_t input, size_t t) {
    const Encoding& e = batch[input];
    const bool attended = e.attention_mask.empty() || e.attention_mask[t] != 0;
    if (!attended && !expansion_kept) return false;
    if (skip && impl_->skiplist.count(e.ids[t])) return false;
    return is_query || impl_->keep_only.empty() || impl_->keep_only.count(e.ids[t]) > 0;
  };
  DLRT_ASSIGN_OR_RETURN(TokenEmbedResult r, impl_->base->embed_tokens(batch, bounds, keep));
  const bool normalize = is_query ? c.normalize_queries : c.normalize_documents;
  for (auto& rows : r.tokens) {
    for (auto& v : rows) {
      for (const DenseLayer& d : impl_->dense) v = d.apply(v);
      if (normalize) normalize_l2(v);
    }
  }
  return r;
}

}  // namespace dlrt::embed
