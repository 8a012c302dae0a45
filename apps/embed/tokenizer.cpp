// BERT WordPiece tokenizer (see tokenizer.h). The steps follow Hugging Face
// tokenizers' BertNormalizer, BertPreTokenizer, WordPiece and the template
// post-processor; character classes come from unicode_tables (generated).
#include "embed/tokenizer.h"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "embed/file_util.h"
#include "embed/json_util.h"
#include "embed/unicode_tables.h"

namespace dlrt::embed {

using json = nlohmann::json;

// ---------------------------------------------------------------- UTF-8

std::u32string utf8_to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(c);
      ++i;
      continue;
    }
    int len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
    if (len == 0) {  // stray continuation byte or 0xF8..0xFF
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    int k = 1;
    for (; k < len && i + k < n; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) break;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (k < len || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) {
      out.push_back(0xFFFD);
      i += std::max(k, 1);
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

namespace {

// The largest token id a tokenizer.json may use (the vocabulary's and the added tokens'):
// ids index a table of that many entries.
constexpr int64_t kMaxTokenId = int64_t{1} << 26;

// The ranges BERT calls Chinese characters (CJK Unified Ideographs and extensions,
// compatibility ideographs); Hiragana, Katakana and Hangul are not among them.
bool is_chinese_char(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Rust's char::is_whitespace (U+0009..U+000D and U+0085 are class kOther or kSpace in the table).
bool is_whitespace(uint32_t cp) {
  if ((cp >= 0x9 && cp <= 0xD) || cp == 0x20 || cp == 0x85) return true;
  return cp > 0x7F && unicode::char_class(cp) == unicode::kSpace;
}

// ASCII punctuation (including $+<=>^`|~) or a Unicode P* character.
bool is_punctuation(uint32_t cp) {
  if (cp < 0x80) return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
  return unicode::char_class(cp) == unicode::kPunct;
}

// Canonical ordering: stable sort by combining class within each run of non-starters.
void canonical_order(std::u32string& s, size_t from) {
  size_t i = from, n = s.size();
  while (i < n) {
    if (unicode::combining_class(s[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && unicode::combining_class(s[j]) != 0) ++j;
    if (j - i > 1) {
      std::stable_sort(s.begin() + i, s.begin() + j, [](char32_t a, char32_t b) {
        return unicode::combining_class(a) < unicode::combining_class(b);
      });
    }
    i = j;
  }
}

Result<std::string> read_file(const std::string& path) { return read_folder_file(path); }

}  // namespace

// ---------------------------------------------------------------- loading

Status Tokenizer::finish() {
  auto unk = vocab_.find(unk_token_);
  if (unk == vocab_.end()) return InvalidModel("the vocabulary has no unknown token \"" + unk_token_ + "\"");
  unk_id_ = unk->second;
  if (auto pad = vocab_.find(pad_token_); pad != vocab_.end()) pad_id_ = pad->second;
  if (default_specials_) {
    for (const std::string* name : {&pad_token_, &unk_token_, &cls_token_, &sep_token_, &mask_token_}) {
      auto it = vocab_.find(*name);
      if (it == vocab_.end()) continue;
      AddedToken t;
      t.content = *name;
      t.id = it->second;
      added_.push_back(t);
    }
    auto cls = vocab_.find(cls_token_), sep = vocab_.find(sep_token_);
    if (cls == vocab_.end() || sep == vocab_.end()) {
      return InvalidModel("the vocabulary has no \"" + cls_token_ + "\" or \"" + sep_token_ + "\" token");
    }
    prefix_ids_ = {cls->second};
    suffix_ids_ = {sep->second};
    prefix_types_ = {0};
    suffix_types_ = {0};
  }
  added_u32_.clear();
  for (const AddedToken& t : added_) added_u32_.push_back(utf8_to_u32(t.content));
  return Status::Ok();
}

Result<Tokenizer> Tokenizer::from_vocab(std::vector<std::string> tokens, const NormalizerConfig& normalizer) {
  Tokenizer t;
  t.norm_ = normalizer;
  t.id_to_token_ = std::move(tokens);
  for (size_t i = 0; i < t.id_to_token_.size(); ++i) {
    t.vocab_.emplace(t.id_to_token_[i], static_cast<int64_t>(i));  // first id wins on duplicates
  }
  if (t.vocab_.empty()) return InvalidModel("the vocabulary is empty");
  DLRT_RETURN_IF_ERROR(t.finish());
  return t;
}

Result<Tokenizer> Tokenizer::from_vocab_file(const std::string& path, const NormalizerConfig& normalizer) {
  DLRT_ASSIGN_OR_RETURN(std::string text, read_file(path));
  std::vector<std::string> tokens;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    // HF's load_vocab strips the trailing newline (and a \r); tokens keep inner spaces.
    while (!line.empty() && (line.back() == '\r')) line.pop_back();
    tokens.push_back(std::move(line));
    pos = nl + 1;
  }
  auto r = from_vocab(std::move(tokens), normalizer);
  if (!r.ok()) return r.status().with_context(path);
  return r;
}

Result<Tokenizer> Tokenizer::from_json_file(const std::string& path) {
  DLRT_ASSIGN_OR_RETURN(std::string text, read_file(path));
  auto r = from_json_string(text);
  if (!r.ok()) return r.status().with_context(path);
  return r;
}

Result<Tokenizer> Tokenizer::from_json_string(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidModel("not valid JSON");
  Tokenizer t;
  t.default_specials_ = false;

  const json* model = jsonu::member(j, "model");
  if (!model || !model->is_object()) return InvalidModel("no \"model\" object");
  std::string type = jsonu::get_string(*model, "type", "");
  if (type.empty() && jsonu::member(*model, "continuing_subword_prefix")) type = "WordPiece";
  if (type != "WordPiece") {
    return Unsupported("tokenizer model \"" + type + "\" is not supported (only BERT WordPiece)");
  }
  t.unk_token_ = jsonu::get_string(*model, "unk_token", "[UNK]");
  t.continuing_prefix_ = jsonu::get_string(*model, "continuing_subword_prefix", "##");
  t.max_input_chars_per_word_ = static_cast<size_t>(jsonu::get_int(*model, "max_input_chars_per_word", 100));
  const json* vocab = jsonu::member(*model, "vocab");
  if (!vocab || !vocab->is_object() || vocab->empty()) return InvalidModel("model.vocab is missing or empty");
  int64_t max_id = -1;
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > kMaxTokenId) {
      return InvalidModel("model.vocab[\"" + it.key() + "\"] is not a valid id");
    }
    int64_t id = it.value().get<int64_t>();
    t.vocab_[it.key()] = id;
    max_id = std::max(max_id, id);
  }
  t.id_to_token_.assign(static_cast<size_t>(max_id + 1), std::string());
  for (const auto& [tok, id] : t.vocab_) t.id_to_token_[static_cast<size_t>(id)] = tok;

  // Normalizer.
  const json* norm = jsonu::member(j, "normalizer");
  if (norm && !norm->is_null()) {
    std::string ntype = jsonu::get_string(*norm, "type", "");
    if (ntype != "BertNormalizer") {
      return Unsupported("normalizer \"" + ntype + "\" is not supported (only BertNormalizer)");
    }
    t.norm_.clean_text = jsonu::get_bool(*norm, "clean_text", true);
    t.norm_.handle_chinese_chars = jsonu::get_bool(*norm, "handle_chinese_chars", true);
    t.norm_.lowercase = jsonu::get_bool(*norm, "lowercase", true);
    const json* sa = jsonu::member(*norm, "strip_accents");
    if (sa && sa->is_boolean()) t.norm_.strip_accents = sa->get<bool>();
  } else {
    t.norm_ = NormalizerConfig{false, false, false, false};
  }
  const json* pre = jsonu::member(j, "pre_tokenizer");
  if (pre && !pre->is_null()) {
    std::string ptype = jsonu::get_string(*pre, "type", "");
    if (ptype != "BertPreTokenizer") {
      return Unsupported("pre_tokenizer \"" + ptype + "\" is not supported (only BertPreTokenizer)");
    }
  }

  // Added tokens.
  if (const json* added = jsonu::member(j, "added_tokens"); added && added->is_array()) {
    for (const json& a : *added) {
      AddedToken at;
      at.content = jsonu::get_string(a, "content", "");
      at.id = jsonu::get_int(a, "id", -1);
      if (at.content.empty() || at.id < 0) return InvalidModel("an added_tokens entry has no content or id");
      if (at.id > kMaxTokenId)
        return InvalidModel("added_tokens[\"" + at.content + "\"] has id " + std::to_string(at.id) + ", over the " +
                            std::to_string(kMaxTokenId) + " a vocabulary can have");
      at.single_word = jsonu::get_bool(a, "single_word", false);
      at.lstrip = jsonu::get_bool(a, "lstrip", false);
      at.rstrip = jsonu::get_bool(a, "rstrip", false);
      at.normalized = jsonu::get_bool(a, "normalized", false);
      at.special = jsonu::get_bool(a, "special", false);
      if (static_cast<size_t>(at.id) >= t.id_to_token_.size()) t.id_to_token_.resize(static_cast<size_t>(at.id) + 1);
      if (t.id_to_token_[static_cast<size_t>(at.id)].empty()) t.id_to_token_[static_cast<size_t>(at.id)] = at.content;
      t.added_.push_back(std::move(at));
    }
  }

  // Post-processor: [CLS] A [SEP] from TemplateProcessing or BertProcessing.
  const json* post = jsonu::member(j, "post_processor");
  if (post && !post->is_null()) {
    std::string ptype = jsonu::get_string(*post, "type", "");
    if (ptype == "BertProcessing") {
      const json* cls = jsonu::member(*post, "cls");
      const json* sep = jsonu::member(*post, "sep");
      if (!cls || !sep || !cls->is_array() || !sep->is_array() || cls->size() != 2 || sep->size() != 2 ||
          !(*cls)[1].is_number_integer() || !(*sep)[1].is_number_integer()) {
        return InvalidModel("BertProcessing needs cls and sep as [token, id]");
      }
      t.prefix_ids_ = {(*cls)[1].get<int64_t>()};
      t.suffix_ids_ = {(*sep)[1].get<int64_t>()};
      t.prefix_types_ = {0};
      t.suffix_types_ = {0};
    } else if (ptype == "TemplateProcessing") {
      const json* single = jsonu::member(*post, "single");
      const json* specials = jsonu::member(*post, "special_tokens");
      if (!single || !single->is_array()) return InvalidModel("TemplateProcessing has no \"single\" template");
      bool seen_sequence = false;
      for (const json& piece : *single) {
        if (const json* seq = jsonu::member(piece, "Sequence")) {
          seen_sequence = true;
          t.sequence_type_id_ = jsonu::get_int(*seq, "type_id", 0);
          continue;
        }
        const json* sp = jsonu::member(piece, "SpecialToken");
        if (!sp) return InvalidModel("TemplateProcessing: unknown template piece");
        std::string name = jsonu::get_string(*sp, "id", "");
        int64_t type_id = jsonu::get_int(*sp, "type_id", 0);
        const json* entry = specials ? jsonu::member(*specials, name) : nullptr;
        const json* ids = entry ? jsonu::member(*entry, "ids") : nullptr;
        if (!ids || !ids->is_array()) return InvalidModel("TemplateProcessing: special token \"" + name + "\" has no ids");
        for (const json& id : *ids) {
          if (!id.is_number_integer()) return InvalidModel("TemplateProcessing: bad id for \"" + name + "\"");
          (seen_sequence ? t.suffix_ids_ : t.prefix_ids_).push_back(id.get<int64_t>());
          (seen_sequence ? t.suffix_types_ : t.prefix_types_).push_back(type_id);
        }
      }
    } else {
      return Unsupported("post_processor \"" + ptype + "\" is not supported (BertProcessing or TemplateProcessing)");
    }
  }

  // Padding and truncation settings.
  if (const json* pad = jsonu::member(j, "padding"); pad && pad->is_object()) {
    t.pad_token_ = jsonu::get_string(*pad, "pad_token", t.pad_token_);
  }
  if (const json* trunc = jsonu::member(j, "truncation"); trunc && trunc->is_object()) {
    int64_t m = jsonu::get_int(*trunc, "max_length", 0);
    if (m > 0) t.configured_max_length_ = static_cast<size_t>(m);
  }
  DLRT_RETURN_IF_ERROR(t.finish());
  if (const json* pad = jsonu::member(j, "padding"); pad && pad->is_object()) {
    int64_t id = jsonu::get_int(*pad, "pad_id", -1);
    if (id >= 0) t.pad_id_ = id;
  }
  return t;
}

Result<Tokenizer> Tokenizer::from_folder(const std::string& dir) {
  std::string config_path = dir + "/tokenizer_config.json";
  json config = json::object();
  {
    std::ifstream probe(config_path);
    if (probe) {
      DLRT_ASSIGN_OR_RETURN(std::string text, read_file(config_path));
      config = json::parse(text, nullptr, false);
      if (config.is_discarded() || !config.is_object()) return InvalidModel(config_path + ": not a valid JSON object");
    }
  }
  Result<Tokenizer> r = Status(StatusCode::kNotFound, "");
  std::ifstream has_json(dir + "/tokenizer.json");
  std::ifstream has_vocab(dir + "/vocab.txt");
  if (has_json) {
    r = from_json_file(dir + "/tokenizer.json");
  } else if (has_vocab) {
    NormalizerConfig n;
    n.lowercase = jsonu::get_bool(config, "do_lower_case", true);
    n.handle_chinese_chars = jsonu::get_bool(config, "tokenize_chinese_chars", true);
    if (const json* sa = jsonu::member(config, "strip_accents"); sa && sa->is_boolean()) n.strip_accents = sa->get<bool>();
    n.clean_text = true;
    Tokenizer proto;
    auto name = [&](const char* key, std::string& out) {
      const json* v = jsonu::member(config, key);
      if (v && v->is_string()) out = v->get<std::string>();
      if (v && v->is_object()) out = jsonu::get_string(*v, "content", out);
    };
    // The special token names must be known before from_vocab resolves them.
    std::vector<std::string> tokens;
    {
      DLRT_ASSIGN_OR_RETURN(std::string text, read_file(dir + "/vocab.txt"));
      size_t pos = 0;
      while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(pos, nl - pos);
        while (!line.empty() && line.back() == '\r') line.pop_back();
        tokens.push_back(std::move(line));
        pos = nl + 1;
      }
    }
    Tokenizer t;
    t.norm_ = n;
    name("unk_token", t.unk_token_);
    name("cls_token", t.cls_token_);
    name("sep_token", t.sep_token_);
    name("pad_token", t.pad_token_);
    name("mask_token", t.mask_token_);
    t.id_to_token_ = std::move(tokens);
    for (size_t i = 0; i < t.id_to_token_.size(); ++i) t.vocab_.emplace(t.id_to_token_[i], static_cast<int64_t>(i));
    if (t.vocab_.empty()) return InvalidModel(dir + "/vocab.txt: the vocabulary is empty");
    Status s = t.finish();
    if (!s.ok()) return s.with_context(dir + "/vocab.txt");
    r = std::move(t);
  } else {
    return NotFound(dir + ": no tokenizer.json or vocab.txt");
  }
  if (!r.ok()) return r.status();
  Tokenizer t = std::move(r).value();
  if (t.configured_max_length_ == 0) {
    // model_max_length is 1e30 when the model sets none; ignore such values.
    const json* m = jsonu::member(config, "model_max_length");
    if (m && m->is_number() && m->get<double>() > 0 && m->get<double>() < 1e7) {
      t.configured_max_length_ = static_cast<size_t>(m->get<double>());
    }
  }
  return t;
}

// ---------------------------------------------------------------- encoding

void Tokenizer::normalize(const std::u32string& in, std::u32string& out) const {
  out.clear();
  out.reserve(in.size() + 8);
  for (char32_t c : in) {
    uint32_t cp = c;
    if (norm_.clean_text) {
      if (cp == 0 || cp == 0xFFFD) continue;
      unicode::CharClass cls = unicode::char_class(cp);
      if (cls == unicode::kOther) continue;
      if (cls == unicode::kSpace) cp = ' ';
    }
    if (norm_.handle_chinese_chars && is_chinese_char(cp)) {
      out.push_back(' ');
      out.push_back(cp);
      out.push_back(' ');
      continue;
    }
    out.push_back(cp);
  }
  if (norm_.strip_accents.value_or(norm_.lowercase)) {
    std::u32string nfd;
    nfd.reserve(out.size() + 8);
    uint32_t buf[4];
    for (char32_t c : out) {
      int n = unicode::decompose(c, buf);
      for (int i = 0; i < n; ++i) nfd.push_back(buf[i]);
    }
    canonical_order(nfd, 0);
    out.clear();
    for (char32_t c : nfd) {
      if (c >= 0x300 && unicode::char_class(c) == unicode::kMn) continue;  // no Mn below U+0300
      out.push_back(c);
    }
  }
  if (norm_.lowercase) {
    std::u32string low;
    low.reserve(out.size());
    uint32_t buf[3];
    for (char32_t c : out) {
      int n = unicode::to_lower(c, buf);
      for (int i = 0; i < n; ++i) low.push_back(buf[i]);
    }
    out.swap(low);
  }
}

void Tokenizer::wordpiece(std::u32string_view word, std::vector<int64_t>& ids) const {
  if (word.size() > max_input_chars_per_word_) {
    ids.push_back(unk_id_);
    return;
  }
  std::string utf8;
  std::vector<size_t> offsets;  // byte offset of each char, plus the end
  offsets.reserve(word.size() + 1);
  for (char32_t c : word) {
    offsets.push_back(utf8.size());
    append_utf8(c, utf8);
  }
  offsets.push_back(utf8.size());
  size_t before = ids.size();
  std::string candidate;
  size_t start = 0, n = word.size();
  while (start < n) {
    size_t end = n;
    int64_t found = -1;
    while (start < end) {
      candidate.clear();
      if (start > 0) candidate += continuing_prefix_;
      candidate.append(utf8, offsets[start], offsets[end] - offsets[start]);
      auto it = vocab_.find(candidate);
      if (it != vocab_.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) {
      ids.resize(before);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(found);
    start = end;
  }
}

void Tokenizer::encode_segment(const std::u32string& segment, std::vector<int64_t>& ids) const {
  std::u32string norm;
  normalize(segment, norm);
  size_t i = 0, n = norm.size();
  while (i < n) {
    uint32_t c = norm[i];
    if (is_whitespace(c)) {
      ++i;
      continue;
    }
    if (is_punctuation(c)) {
      wordpiece(std::u32string_view(norm).substr(i, 1), ids);
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && !is_whitespace(norm[j]) && !is_punctuation(norm[j])) ++j;
    wordpiece(std::u32string_view(norm).substr(i, j - i), ids);
    i = j;
  }
}

std::vector<int64_t> Tokenizer::encode_ids(std::string_view text) const {
  std::u32string u = utf8_to_u32(text);
  std::vector<int64_t> ids;
  ids.reserve(u.size() / 3 + 4);
  // Split on added tokens (leftmost, longest), matched in the raw text.
  size_t seg_start = 0, i = 0, n = u.size();
  auto word_char = [](uint32_t c) { return !is_whitespace(c) && !is_punctuation(c); };
  while (i < n) {
    size_t best = 0, best_len = 0;
    for (size_t k = 0; k < added_u32_.size(); ++k) {
      const std::u32string& a = added_u32_[k];
      if (a.size() <= best_len || a.size() > n - i || a[0] != u[i]) continue;
      if (u.compare(i, a.size(), a) != 0) continue;
      if (added_[k].single_word &&
          ((i > 0 && word_char(u[i - 1])) || (i + a.size() < n && word_char(u[i + a.size()])))) {
        continue;
      }
      best = k;
      best_len = a.size();
    }
    if (best_len == 0) {
      ++i;
      continue;
    }
    size_t seg_end = i;
    if (added_[best].lstrip) {
      while (seg_end > seg_start && is_whitespace(u[seg_end - 1])) --seg_end;
    }
    if (seg_end > seg_start) encode_segment(u.substr(seg_start, seg_end - seg_start), ids);
    ids.push_back(added_[best].id);
    i += best_len;
    if (added_[best].rstrip) {
      while (i < n && is_whitespace(u[i])) ++i;
    }
    seg_start = i;
  }
  if (seg_start < n) encode_segment(u.substr(seg_start), ids);
  return ids;
}

Encoding Tokenizer::encode(std::string_view text, size_t max_length) const {
  std::vector<int64_t> body = encode_ids(text);
  size_t specials = prefix_ids_.size() + suffix_ids_.size();
  if (max_length > 0) {
    size_t room = max_length > specials ? max_length - specials : 0;
    if (body.size() > room) body.resize(room);
  }
  Encoding e;
  size_t total = specials + body.size();
  e.ids.reserve(total);
  e.type_ids.reserve(total);
  e.ids.insert(e.ids.end(), prefix_ids_.begin(), prefix_ids_.end());
  e.type_ids.insert(e.type_ids.end(), prefix_types_.begin(), prefix_types_.end());
  e.ids.insert(e.ids.end(), body.begin(), body.end());
  e.type_ids.insert(e.type_ids.end(), body.size(), sequence_type_id_);
  e.ids.insert(e.ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  e.type_ids.insert(e.type_ids.end(), suffix_types_.begin(), suffix_types_.end());
  e.attention_mask.assign(e.ids.size(), 1);
  return e;
}

std::vector<std::string> Tokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> out;
  for (int64_t id : encode_ids(text)) out.push_back(id_to_token(id));
  return out;
}

std::optional<int64_t> Tokenizer::token_to_id(const std::string& token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string& Tokenizer::id_to_token(int64_t id) const {
  static const std::string kEmpty;
  if (id < 0 || static_cast<size_t>(id) >= id_to_token_.size()) return kEmpty;
  return id_to_token_[static_cast<size_t>(id)];
}

}  // namespace dlrt::embed
