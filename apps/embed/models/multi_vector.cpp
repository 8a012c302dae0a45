// MultiVectorEmbedder: PyLate ColBERT folders (see multi_vector.h).
#include "embed/models/multi_vector.h"
#include "embed/models/multi_vector_impl.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/json_util.h"
#include "embed/models/modules.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::optional<int64_t> multi_vector_token_id(const Tokenizer& tok, const std::string& token) {
  if (auto id = tok.token_to_id(token)) return id;
  for (const AddedToken& t : tok.added_tokens())
    if (t.content == token) return t.id;
  return std::nullopt;
}

std::string special_token_name(const fs::path& dir, const char* key) {
  for (const char* file : {"tokenizer_config.json", "special_tokens_map.json"}) {
    auto j = jsonu::read_optional_json(dir / file);
    if (!j.ok() || !j->is_object()) continue;
    auto m = j->find(key);
    if (m == j->end()) continue;
    if (m->is_string()) return m->get<std::string>();
    if (m->is_object()) return jsonu::get_string(*m, "content", "");
  }
  return "";
}

namespace {

std::string mask_token_name(const fs::path& dir) {
  std::string name = special_token_name(dir, "mask_token");
  return name.empty() ? "[MASK]" : name;
}

// The Dense modules modules.json lists, in order, after the Transformer
// (read_modules checks the types and paths; a multi-vector folder may list
// no Pooling, Normalize or sparse modules).
Result<std::vector<DenseLayer>> read_dense_modules(const fs::path& dir) {
  std::vector<DenseLayer> out;
  DLRT_ASSIGN_OR_RETURN(std::vector<Module> modules, read_modules(dir));
  for (const Module& m : modules) {
    if (m.type == ModuleType::kTransformer) continue;
    if (m.type != ModuleType::kDense)
      return Unsupported((dir / "modules.json").string() + ": module type \"" + m.type_name +
                         "\" in a multi-vector folder (dlrt takes a Transformer and Dense modules: "
                         "sentence_transformers.models.Dense or pylate.models.Dense.Dense)");
    DLRT_ASSIGN_OR_RETURN(json config, jsonu::read_optional_json(m.dir / "config.json"));
    if (config.is_object() && jsonu::get_bool(config, "use_residual", false))
      return Unsupported((m.dir / "config.json").string() + ": a Dense module with use_residual is not supported");
    DLRT_ASSIGN_OR_RETURN(DenseLayer layer, DenseLayer::load(m.dir));
    if (!out.empty() && out.back().out_features() != layer.in_features())
      return InvalidModel(m.dir.string() + ": in_features " + std::to_string(layer.in_features()) +
                          " but the module before gives " + std::to_string(out.back().out_features()));
    out.push_back(std::move(layer));
  }
  return out;
}

}  // namespace

bool is_multi_vector_module_type(std::string_view type) {
  return type == "pylate.models.Dense.Dense" || type.rfind("sentence_transformers.multi_vector_encoder.", 0) == 0;
}

bool is_multi_vector_folder(const fs::path& dir) {
  auto st = jsonu::read_optional_json(dir / "config_sentence_transformers.json");
  if (st.ok() && st->is_object() && jsonu::get_string(*st, "model_type", "") == "ColBERT") return true;
  if (is_multi_vector_encoder_folder(dir)) return true;
  auto modules = jsonu::read_optional_json(dir / "modules.json");
  if (!modules.ok() || !modules->is_array()) return false;
  for (const json& m : *modules)
    if (is_multi_vector_module_type(jsonu::get_string(m, "type", ""))) return true;
  return false;
}

Result<MultiVectorConfig> read_multi_vector_config(const fs::path& dir) {
  const fs::path path = dir / "config_sentence_transformers.json";
  MultiVectorConfig c;
  for (char ch = '!'; ch <= '~'; ++ch)
    if (std::ispunct(static_cast<unsigned char>(ch))) c.skiplist_words.emplace_back(1, ch);
  DLRT_ASSIGN_OR_RETURN(json j, jsonu::read_optional_json(path));
  if (j.is_null()) return c;
  if (!j.is_object()) return InvalidModel(path.string() + ": expected a JSON object");
  auto string_of = [&](const char* key, std::string& out) -> Status {
    auto f = j.find(key);
    if (f == j.end() || f->is_null()) return Status::Ok();
    if (!f->is_string()) return InvalidModel(path.string() + ": \"" + key + "\" must be a string");
    out = f->get<std::string>();
    return Status::Ok();
  };
  auto length_of = [&](const char* key, size_t& out) -> Status {
    auto f = j.find(key);
    if (f == j.end() || f->is_null()) return Status::Ok();
    if (!f->is_number_unsigned() || f->get<uint64_t>() < 3 || f->get<uint64_t>() > (1u << 20))
      return InvalidModel(path.string() + ": \"" + key + "\" must be a whole number of tokens, at least 3");
    out = static_cast<size_t>(f->get<uint64_t>());
    return Status::Ok();
  };
  auto bool_of = [&](const char* key, bool& out) -> Status {
    auto f = j.find(key);
    if (f == j.end() || f->is_null()) return Status::Ok();
    if (!f->is_boolean()) return InvalidModel(path.string() + ": \"" + key + "\" must be true or false");
    out = f->get<bool>();
    return Status::Ok();
  };
  DLRT_RETURN_IF_ERROR(string_of("query_prefix", c.query_prefix));
  DLRT_RETURN_IF_ERROR(string_of("document_prefix", c.document_prefix));
  DLRT_RETURN_IF_ERROR(length_of("query_length", c.query_length));
  DLRT_RETURN_IF_ERROR(length_of("document_length", c.document_length));
  DLRT_RETURN_IF_ERROR(bool_of("do_query_expansion", c.do_query_expansion));
  DLRT_RETURN_IF_ERROR(bool_of("attend_to_expansion_tokens", c.attend_to_expansion_tokens));
  if (auto f = j.find("skiplist_words"); f != j.end() && !f->is_null()) {
    if (!f->is_array()) return InvalidModel(path.string() + ": \"skiplist_words\" must be a list of strings");
    c.skiplist_words.clear();
    for (const json& w : *f) {
      if (!w.is_string()) return InvalidModel(path.string() + ": \"skiplist_words\" must be a list of strings");
      c.skiplist_words.push_back(w.get<std::string>());
    }
  }
  // PyLate: without expansion there are no expansion tokens to attend to.
  if (!c.do_query_expansion) c.attend_to_expansion_tokens = false;
  return c;
}

float maxsim(const std::vector<std::vector<float>>& query, const std::vector<std::vector<float>>& document) {
  double total = 0;
  if (document.empty()) return 0.0f;
  for (const auto& q : query) {
    double best = -std::numeric_limits<double>::infinity();
    for (const auto& d : document) {
      double dot = 0;
      for (size_t k = 0; k < q.size() && k < d.size(); ++k) dot += static_cast<double>(q[k]) * d[k];
      best = std::max(best, dot);
    }
    total += best;
  }
  return static_cast<float>(total);
}

float late_interaction_score(const std::string& similarity_fn_name, const std::vector<std::vector<float>>& query,
                             const std::vector<std::vector<float>>& document) {
  const float score = maxsim(query, document);
  if (similarity_fn_name != "meanmaxsim") return score;
  return score / static_cast<float>(std::max<size_t>(query.size(), 1));
}

MultiVectorEmbedder::MultiVectorEmbedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MultiVectorEmbedder::~MultiVectorEmbedder() = default;

Result<std::unique_ptr<MultiVectorEmbedder>> MultiVectorEmbedder::create(const std::string& model_dir,
                                                                         const EmbedderOptions& options) {
  DLRT_ASSIGN_OR_RETURN(ModelFile file, find_model_file(model_dir));
  if (is_multi_vector_encoder_folder(file.dir)) return create_encoder(model_dir, file.dir, options);
  auto impl = std::make_unique<Impl>();
  DLRT_ASSIGN_OR_RETURN(impl->config, read_multi_vector_config(file.dir));
  DLRT_ASSIGN_OR_RETURN(impl->dense, read_dense_modules(file.dir));
  DLRT_ASSIGN_OR_RETURN(impl->base, Embedder::create_transformer(model_dir, options));
  const Tokenizer& tok = impl->base->tokenizer();
  const size_t hidden = impl->base->hidden_size();
  if (!impl->dense.empty() && impl->dense.front().in_features() != hidden)
    return InvalidModel(file.dir.string() + ": the Dense module takes " +
                        std::to_string(impl->dense.front().in_features()) + " values but the model's token vectors have " +
                        std::to_string(hidden));
  impl->dimension = impl->dense.empty() ? hidden : impl->dense.back().out_features();
  // Each marker is one token: PyLate adds it to the tokenizer and inserts its id after [CLS].
  auto marker = [&](const std::string& prefix, const char* key, std::optional<int64_t>& out) -> Status {
    if (prefix.empty()) return Status::Ok();
    out = multi_vector_token_id(tok, prefix);
    if (!out)
      return InvalidModel(file.dir.string() + ": the " + key + " \"" + prefix +
                          "\" of config_sentence_transformers.json is not a token of the tokenizer");
    return Status::Ok();
  };
  DLRT_RETURN_IF_ERROR(marker(impl->config.query_prefix, "query_prefix", impl->query_marker));
  DLRT_RETURN_IF_ERROR(marker(impl->config.document_prefix, "document_prefix", impl->document_marker));
  const size_t limit = impl->base->max_length();
  if (impl->config.query_length > limit || impl->config.document_length > limit)
    return InvalidModel(file.dir.string() + ": query_length " + std::to_string(impl->config.query_length) +
                        " or document_length " + std::to_string(impl->config.document_length) +
                        " is over the model's " + std::to_string(limit) + " tokens");
  const std::string mask = mask_token_name(file.dir);
  if (auto id = multi_vector_token_id(tok, mask)) {
    impl->mask_id = *id;
  } else if (impl->config.do_query_expansion) {
    return InvalidModel(file.dir.string() + ": query expansion needs the mask token \"" + mask +
                        "\", which the tokenizer lacks");
  } else {
    impl->mask_id = tok.pad_id();
  }
  // A skip-list word that is not a token stands for the unknown token, as
  // PyLate's lookup makes it.
  for (const std::string& w : impl->config.skiplist_words) {
    if (auto id = multi_vector_token_id(tok, w)) impl->skiplist.insert(*id);
    else if (tok.unk_id() >= 0) impl->skiplist.insert(tok.unk_id());
  }
  return std::unique_ptr<MultiVectorEmbedder>(new MultiVectorEmbedder(std::move(impl)));
}

Result<Encoding> MultiVectorEmbedder::tokenize(std::string_view text, bool is_query, bool* truncated) const {
  const MultiVectorConfig& c = impl_->config;
  if (c.encoder) return tokenize_encoder(text, is_query, truncated);
  const std::optional<int64_t>& marker = is_query ? impl_->query_marker : impl_->document_marker;
  const size_t length = is_query ? c.query_length : c.document_length;
  const size_t limit = marker ? length - 1 : length;
  const Tokenizer& tok = impl_->base->tokenizer();
  DLRT_ASSIGN_OR_RETURN(Encoding e, encode_within(limit, truncated,
                                                  [&](size_t n, size_t* untruncated) {
                                                    return tok.encode_checked(text, n, nullptr, untruncated);
                                                  }));
  if (e.attention_mask.size() != e.ids.size()) e.attention_mask.assign(e.ids.size(), 1);
  if (e.type_ids.size() != e.ids.size()) e.type_ids.assign(e.ids.size(), 0);
  if (is_query && c.do_query_expansion) {
    e.ids.resize(limit, impl_->mask_id);
    e.attention_mask.resize(limit, 0);
    e.type_ids.resize(limit, 0);
  }
  if (marker && !e.ids.empty()) {
    e.ids.insert(e.ids.begin() + 1, *marker);
    e.attention_mask.insert(e.attention_mask.begin() + 1, 1);
    e.type_ids.insert(e.type_ids.begin() + 1, 0);
  }
  if (is_query && c.attend_to_expansion_tokens) std::fill(e.attention_mask.begin(), e.attention_mask.end(), 1);
  return e;
}

Result<TokenEmbedResult> MultiVectorEmbedder::embed_encoded(const std::vector<Encoding>& batch, bool is_query,
                                                            const dlrt::RunOptions& bounds) const {
  if (impl_->config.encoder) return embed_encoder(batch, is_query, bounds);
  const bool all = is_query && impl_->config.do_query_expansion;
  auto keep = [&](size_t input, size_t t) {
    const Encoding& e = batch[input];
    if (all) return true;
    if (!e.attention_mask.empty() && e.attention_mask[t] == 0) return false;
    return is_query || !impl_->skiplist.count(e.ids[t]);
  };
  DLRT_ASSIGN_OR_RETURN(TokenEmbedResult r, impl_->base->embed_tokens(batch, bounds, keep));
  for (auto& rows : r.tokens) {
    for (auto& v : rows) {
      for (const DenseLayer& d : impl_->dense) v = d.apply(v);
      normalize_l2(v);
    }
  }
  return r;
}

Result<TokenEmbedResult> MultiVectorEmbedder::embed(const std::vector<std::string>& texts, bool is_query) const {
  std::vector<Encoding> batch;
  batch.reserve(texts.size());
  for (const std::string& t : texts) {
    DLRT_ASSIGN_OR_RETURN(Encoding e, tokenize(t, is_query));
    batch.push_back(std::move(e));
  }
  return embed_encoded(batch, is_query);
}

size_t MultiVectorEmbedder::dimension() const { return impl_->dimension; }
const MultiVectorConfig& MultiVectorEmbedder::config() const { return impl_->config; }
const Embedder& MultiVectorEmbedder::base() const { return *impl_->base; }

}  // namespace dlrt::embed
