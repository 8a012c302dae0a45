// The tokenizer facade (see tokenizer.h): loading tokenizer.json or vocab.txt
// into a pipeline of parts (tokenizer_parts.h) and running it as Hugging
// Face's tokenizers do: added tokens split off (raw ones before
// normalisation, normalised ones after), normalizer, pre-tokenizer, model,
// truncation, post-processor.
#include "embed/tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/added_matcher.h"
#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer_decode.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed {

using json = nlohmann::json;

// ---------------------------------------------------------------- the pipeline

namespace {
thread_local std::chrono::steady_clock::time_point t_deadline{};  // TokenizeDeadline
thread_local bool t_deadline_passed = false;

// True (and noted) once this thread's TokenizeDeadline has passed.
bool deadline_passed() {
  if (t_deadline == std::chrono::steady_clock::time_point{} || std::chrono::steady_clock::now() < t_deadline) return false;
  t_deadline_passed = true;
  return true;
}
}  // namespace

TokenizeDeadline::TokenizeDeadline(std::chrono::steady_clock::time_point deadline) : previous_(t_deadline) {
  t_deadline = deadline;
}
TokenizeDeadline::~TokenizeDeadline() { t_deadline = previous_; }

enum class TruncationStrategy { kLongestFirst, kOnlyFirst, kOnlySecond };

struct Tokenizer::Pipeline {
  std::unique_ptr<tok::Normalizer> normalizer;
  std::unique_ptr<tok::PreTokenizer> pre_tokenizer;
  std::unique_ptr<tok::Model> model;
  std::unique_ptr<tok::PostProcessor> post;
  std::unordered_map<std::string, int64_t> vocab;  // model vocabulary, then the added tokens
  std::vector<std::string> by_id;
  std::vector<AddedToken> added;
  tok::AddedMatcher raw, normalized;
  std::vector<uint8_t> special_by_id;  // 1 for the id of a special added token
  TruncationStrategy strategy = TruncationStrategy::kLongestFirst;
  bool truncate_left = false;
  // decode(): the file's decoder (none: tokens joined with spaces), or why it cannot decode.
  std::unique_ptr<tok::Decoder> decoder;
  Status decoder_error;
};

namespace {

using tok::AddedSplit;
using tok::NormText;

// The input as code points, each aligned to its bytes (invalid UTF-8: U+FFFD).
void decode_text(std::string_view s, NormText& t) {
  t.chars = utf8_to_u32(s);
  t.align.resize(t.chars.size());
  size_t i = 0, n = s.size(), k = 0;
  while (i < n && k < t.chars.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 1;
    if (t.chars[k] != 0xFFFD || (i + 2 < n && c == 0xEF && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
                                 static_cast<unsigned char>(s[i + 2]) == 0xBD)) {
      len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    } else {  // mirror utf8_to_u32's resynchronisation for an invalid sequence
      int want = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
      if (want == 0) {
        len = 1;
      } else {
        size_t m = 1;
        while (m < static_cast<size_t>(want) && i + m < n && (static_cast<unsigned char>(s[i + m]) & 0xC0) == 0x80) ++m;
        len = m;
      }
    }
    len = std::min(len, n - i);
    t.align[k] = {static_cast<uint32_t>(i), static_cast<uint32_t>(i + len)};
    i += len;
    ++k;
  }
  t.orig_start = 0;
}

std::pair<uint32_t, uint32_t> span_of(const NormText& t, size_t b, size_t e) {
  if (b >= e || e > t.align.size()) return {t.orig_start, t.orig_start};
  return {t.align[b].start, t.align[e - 1].end};
}

// What t.slice(0, size) gives, without the copy (t is left empty): a split
// over all of a long text.
NormText take_whole(NormText& t) {
  NormText out = std::move(t);
  if (!out.align.empty()) out.orig_start = out.align.front().start;
  return out;
}

// One sequence through added tokens, normalizer, pre-tokenizer and model.
void encode_sequence(const Tokenizer::Pipeline& p, std::string_view text, int64_t type_id, tok::Encoded& out) {
  NormText whole;
  decode_text(text, whole);
  std::vector<NormText> pieces;
  std::vector<AddedSplit> raw_splits, norm_splits;
  tok::find_added(p.raw, p.added, whole.chars, raw_splits);
  // The deadline is checked between the passes over the text (each linear in it), not only per piece.
  if (deadline_passed()) return;
  for (const AddedSplit& rs : raw_splits) {
    if (rs.id >= 0) {
      NormText a = whole.slice(rs.b, rs.e);
      a.added_id = rs.id;
      pieces.push_back(std::move(a));
      continue;
    }
    // One split over the whole text (no added token in it) takes the text itself, not a copy.
    NormText seg = raw_splits.size() == 1 && rs.b == 0 && rs.e == whole.chars.size() && rs.e > 0
                       ? take_whole(whole)
                       : whole.slice(rs.b, rs.e);
    if (rs.b == rs.e) seg.orig_start = rs.b < whole.align.size() ? whole.align[rs.b].start : static_cast<uint32_t>(text.size());
    if (p.normalizer) {
      p.normalizer->normalize(seg);
      if (!tok::normalized_fits(seg, seg.chars.size()) || deadline_passed()) return;
      tok::charge_normalized(seg.chars.size());
    }
    if (p.normalized.empty()) {
      if (!seg.chars.empty()) pieces.push_back(std::move(seg));
      continue;
    }
    tok::find_added(p.normalized, p.added, seg.chars, norm_splits);
    for (const AddedSplit& ns : norm_splits) {
      if (ns.b == ns.e) continue;
      NormText piece = norm_splits.size() == 1 && ns.b == 0 && ns.e == seg.chars.size() ? take_whole(seg)
                                                                                        : seg.slice(ns.b, ns.e);
      piece.added_id = ns.id;
      pieces.push_back(std::move(piece));
    }
  }
  if (deadline_passed()) return;
  // The pre-tokenizer gives the model one word at a time (a long input's words are never all held).
  std::vector<tok::ModelToken> toks;
  size_t words = 0;
  bool stopped = false;
  auto word = [&](const NormText& w) {
    if (stopped || (++words % 256 == 0 && (stopped = deadline_passed()))) return;
    if (w.added_id >= 0) {
      out.push(w.added_id, type_id, span_of(w, 0, w.chars.size()), false, true);
      return;
    }
    if (w.chars.empty()) return;
    toks.clear();
    p.model->tokenize(w.chars, toks);
    for (const tok::ModelToken& t : toks) out.push(t.id, type_id, span_of(w, t.begin, t.end), false, false);
  };
  for (NormText& piece : pieces) {
    if (p.pre_tokenizer && piece.added_id < 0) p.pre_tokenizer->split(piece, [&](NormText&& w) { word(w); });
    else word(piece);
    piece = NormText();  // tokenized: a long input's text is released as its tokens come
    if (stopped) return;
  }
}

// The sizes Hugging Face's truncate_encodings (without overflow) leaves
// sequences of sizes n[0] and, for a pair, n[1] (max_length already without
// the post-processor's tokens; 0 keeps nothing).
std::array<size_t, 2> kept_sizes(std::array<size_t, 2> n, bool pair, size_t max_length, TruncationStrategy strategy) {
  if (!pair) n[1] = 0;
  if (max_length == 0) return {0, 0};
  const size_t total = n[0] + n[1];
  if (total <= max_length) return n;
  size_t to_remove = total - max_length;
  if (strategy == TruncationStrategy::kLongestFirst && pair) {
    size_t n1 = n[0], n2 = n[1];
    bool swap = n1 > n2;
    if (swap) std::swap(n1, n2);
    n2 = n1 > max_length ? n1 : std::max(n1, max_length - n1);
    if (n1 + n2 > max_length) {
      n1 = max_length / 2;
      n2 = n1 + max_length % 2;
    }
    if (swap) std::swap(n1, n2);
    return {std::min(n[0], n1), std::min(n[1], n2)};
  }
  size_t target = (strategy == TruncationStrategy::kOnlySecond && pair) ? 1 : 0;
  if (strategy == TruncationStrategy::kLongestFirst) target = 0;
  // Hugging Face refuses a sequence too short to take the cut; dlrt cuts what it can.
  n[target] = n[target] > to_remove ? n[target] - to_remove : 0;
  return n;
}

void truncate(std::vector<tok::Encoded>& encs, size_t max_length, TruncationStrategy strategy, bool left) {
  const bool pair = encs.size() == 2;
  const std::array<size_t, 2> kept =
      kept_sizes({encs[0].total(), pair ? encs[1].total() : 0}, pair, max_length, strategy);
  for (size_t i = 0; i < encs.size(); ++i) encs[i].truncate(kept[i], left);
}

// Bounds what `e` (sequence `index` of one or a pair) stores to the tokens
// truncation to max_length (without the post-processor's tokens) can keep:
// kept_sizes never keeps more than that of a single sequence, of either
// sequence under longest_first, or of the sequence only_first/only_second cuts.
void bound_stored(tok::Encoded& e, size_t index, bool pair, size_t max_length, TruncationStrategy strategy, bool left) {
  const bool cut_here = !pair || strategy == TruncationStrategy::kLongestFirst ||
                        (strategy == TruncationStrategy::kOnlyFirst) == (index == 0);
  if (!cut_here) return;
  e.keep = max_length;
  e.keep_last = left;
}

// `n` tokens of `e` from its start (or its end when `left`), as e.truncate(n, left) would leave it.
tok::Encoded kept_part(const tok::Encoded& e, size_t n, bool left) {
  n = std::min(n, e.size());
  const size_t from = left ? e.size() - n : 0;
  auto part = [&](const auto& v) {
    return std::decay_t<decltype(v)>(v.begin() + static_cast<std::ptrdiff_t>(from),
                                     v.begin() + static_cast<std::ptrdiff_t>(from + n));
  };
  tok::Encoded out;
  out.ids = part(e.ids);
  out.type_ids = part(e.type_ids);
  out.offsets = part(e.offsets);
  out.special = part(e.special);
  out.added = part(e.added);
  return out;
}

}  // namespace

namespace tok {

bool take_deadline_passed() { return std::exchange(t_deadline_passed, false); }

}  // namespace tok

// ---------------------------------------------------------------- loading

namespace {

Result<std::string> read_file(const std::string& path) { return read_folder_file(path); }

// Whether the folder has an entry `path` (after symbolic links), whatever its type.
bool present(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// The vocabulary by id with the added tokens in, and token -> id (added tokens win).
void index_vocabulary(Tokenizer::Pipeline& p) {
  p.by_id = p.model->vocab();
  p.vocab.clear();
  p.vocab.reserve(p.by_id.size() + p.added.size());
  for (size_t i = p.by_id.size(); i-- > 0;)
    if (!p.by_id[i].empty() || i == 0) p.vocab[p.by_id[i]] = static_cast<int64_t>(i);  // the first id wins
  for (const AddedToken& a : p.added) {
    if (static_cast<size_t>(a.id) >= p.by_id.size()) p.by_id.resize(static_cast<size_t>(a.id) + 1);
    if (p.by_id[static_cast<size_t>(a.id)].empty()) p.by_id[static_cast<size_t>(a.id)] = a.content;
    p.vocab[a.content] = a.id;
  }
  p.special_by_id.assign(p.by_id.size(), 0);
  for (const AddedToken& a : p.added)
    if (a.special) p.special_by_id[static_cast<size_t>(a.id)] = 1;
}

void build_added_matchers(Tokenizer::Pipeline& p) {
  std::vector<std::u32string> raw, norm;
  std::vector<size_t> raw_idx, norm_idx;
  for (size_t k = 0; k < p.added.size(); ++k) {
    const AddedToken& a = p.added[k];
    if (a.normalized && p.normalizer) {
      NormText t;
      decode_text(a.content, t);
      p.normalizer->normalize(t);
      norm.push_back(t.chars);
      norm_idx.push_back(k);
    } else if (a.normalized) {
      norm.push_back(utf8_to_u32(a.content));
      norm_idx.push_back(k);
    } else {
      raw.push_back(utf8_to_u32(a.content));
      raw_idx.push_back(k);
    }
  }
  tok::build_matcher(p.raw, std::move(raw), std::move(raw_idx));
  tok::build_matcher(p.normalized, std::move(norm), std::move(norm_idx));
}

Result<std::unique_ptr<tok::Model>> make_model(const json& model) {
  std::string type = jsonu::get_string(model, "type", "");
  if (type.empty()) {  // files from before "type" was written
    if (jsonu::member(model, "merges")) type = "BPE";
    else if (const json* v = jsonu::member(model, "vocab"); v && v->is_array()) type = "Unigram";
    else if (jsonu::member(model, "continuing_subword_prefix")) type = "WordPiece";
    else type = "WordLevel";
  }
  if (type == "WordPiece") return tok::make_wordpiece_json(model);
  if (type == "Unigram") return tok::make_unigram_json(model);
  if (type == "BPE") return tok::make_bpe_json(model);
  if (type == "WordLevel") return tok::make_wordlevel_json(model);
  return Unsupported("tokenizer model \"" + type + "\" is not supported (WordPiece, Unigram, BPE, WordLevel)");
}

}  // namespace

Result<Tokenizer> Tokenizer::from_vocab(std::vector<std::string> tokens, const NormalizerConfig& normalizer) {
  // BertTokenizerFast's pipeline over vocab.txt; the special tokens are those of the five BERT names present.
  return from_vocab_named(std::move(tokens), normalizer, {});
}

Result<Tokenizer> Tokenizer::from_vocab_named(std::vector<std::string> tokens, const NormalizerConfig& normalizer,
                                              const SpecialNames& names) {
  auto p = std::make_shared<Pipeline>();
  tok::BertNormalizerOptions o;
  o.clean_text = normalizer.clean_text;
  o.handle_chinese_chars = normalizer.handle_chinese_chars;
  o.lowercase = normalizer.lowercase;
  if (normalizer.strip_accents) o.strip_accents = *normalizer.strip_accents ? 1 : 0;
  p->normalizer = tok::make_bert_normalizer(o);
  p->pre_tokenizer = tok::make_bert_pre_tokenizer();
  DLRT_ASSIGN_OR_RETURN(p->model, tok::make_wordpiece(std::move(tokens), names.unk, "##", 100));
  const auto& vocab = p->model->vocab();
  auto find = [&](const std::string& name) -> int64_t {
    for (size_t i = 0; i < vocab.size(); ++i)
      if (vocab[i] == name) return static_cast<int64_t>(i);
    return -1;
  };
  for (const std::string* name : {&names.pad, &names.unk, &names.cls, &names.sep, &names.mask}) {
    int64_t id = find(*name);
    if (id < 0) continue;
    AddedToken t;
    t.content = *name;
    t.id = id;
    p->added.push_back(t);
  }
  int64_t cls = find(names.cls), sep = find(names.sep);
  if (cls < 0 || sep < 0) return InvalidModel("the vocabulary has no \"" + names.cls + "\" or \"" + names.sep + "\" token");
  p->post = tok::make_bert_processing(cls, sep);
  p->decoder = tok::make_wordpiece_decoder("##", true);
  index_vocabulary(*p);
  build_added_matchers(*p);
  Tokenizer t;
  t.norm_ = normalizer;
  t.added_ = p->added;
  t.unk_id_ = p->model->unk_id();
  int64_t pad = find(names.pad);
  t.pad_id_ = pad >= 0 ? pad : 0;
  t.p_ = std::move(p);
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
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(text, ""));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidModel("not valid JSON");
  auto p = std::make_shared<Pipeline>();
  Tokenizer t;
  t.norm_ = NormalizerConfig{false, false, false, false};

  const json* model = jsonu::member(j, "model");
  if (!model || !model->is_object()) return InvalidModel("no \"model\" object");
  DLRT_ASSIGN_OR_RETURN(p->model, make_model(*model));
  if (const json* norm = jsonu::member(j, "normalizer"); norm && !norm->is_null()) {
    DLRT_ASSIGN_OR_RETURN(p->normalizer, tok::make_normalizer(*norm));
    if (jsonu::get_string(*norm, "type", "") == "BertNormalizer") {
      t.norm_.clean_text = jsonu::get_bool(*norm, "clean_text", true);
      t.norm_.handle_chinese_chars = jsonu::get_bool(*norm, "handle_chinese_chars", true);
      t.norm_.lowercase = jsonu::get_bool(*norm, "lowercase", true);
      if (const json* sa = jsonu::member(*norm, "strip_accents"); sa && sa->is_boolean()) t.norm_.strip_accents = sa->get<bool>();
    }
  }
  if (const json* pre = jsonu::member(j, "pre_tokenizer"); pre && !pre->is_null()) {
    DLRT_ASSIGN_OR_RETURN(p->pre_tokenizer, tok::make_pre_tokenizer(*pre));
  }

  if (const json* added = jsonu::member(j, "added_tokens"); added && added->is_array()) {
    for (const json& a : *added) {
      AddedToken at;
      at.content = jsonu::get_string(a, "content", "");
      at.id = jsonu::get_int(a, "id", -1);
      if (at.content.empty() || at.id < 0) return InvalidModel("an added_tokens entry has no content or id");
      if (at.id > tok::kMaxTokenId)
        return InvalidModel("added_tokens[\"" + at.content + "\"] has id " + std::to_string(at.id) + ", over the " +
                            std::to_string(tok::kMaxTokenId) + " a vocabulary can have");
      at.single_word = jsonu::get_bool(a, "single_word", false);
      at.lstrip = jsonu::get_bool(a, "lstrip", false);
      at.rstrip = jsonu::get_bool(a, "rstrip", false);
      at.normalized = jsonu::get_bool(a, "normalized", false);
      at.special = jsonu::get_bool(a, "special", false);
      p->added.push_back(std::move(at));
    }
  }
  const size_t tokens = p->model->vocab().size() + p->added.size();
  for (const AddedToken& a : p->added)
    DLRT_RETURN_IF_ERROR(tok::check_dense_id("added_tokens[\"" + a.content + "\"]", a.id, tokens));
  index_vocabulary(*p);
  build_added_matchers(*p);

  if (const json* post = jsonu::member(j, "post_processor"); post && !post->is_null()) {
    DLRT_ASSIGN_OR_RETURN(p->post, tok::make_post_processor(*post, p->vocab));
  }
  // An unsupported decoder does not stop encoding: decode() reports it.
  if (const json* dec = jsonu::member(j, "decoder"); dec && !dec->is_null()) {
    auto d = tok::make_decoder(*dec);
    if (d.ok()) p->decoder = std::move(d).value();
    else p->decoder_error = d.status();
  }
  if (const json* trunc = jsonu::member(j, "truncation"); trunc && trunc->is_object()) {
    int64_t m = jsonu::get_int(*trunc, "max_length", 0);
    if (m > 0) t.configured_max_length_ = static_cast<size_t>(m);
    std::string strategy = jsonu::get_string(*trunc, "strategy", "LongestFirst");
    if (strategy == "LongestFirst" || strategy == "longest_first") p->strategy = TruncationStrategy::kLongestFirst;
    else if (strategy == "OnlyFirst" || strategy == "only_first") p->strategy = TruncationStrategy::kOnlyFirst;
    else if (strategy == "OnlySecond" || strategy == "only_second") p->strategy = TruncationStrategy::kOnlySecond;
    else return Unsupported("truncation strategy \"" + strategy + "\" is not supported");
    std::string direction = jsonu::get_string(*trunc, "direction", "Right");
    if (direction == "Left" || direction == "left") p->truncate_left = true;
    else if (direction != "Right" && direction != "right") return Unsupported("truncation direction \"" + direction + "\" is not supported");
  }
  t.unk_id_ = p->model->unk_id();
  t.pad_id_ = 0;
  for (const char* name : {"[PAD]", "<pad>"})
    if (auto it = p->vocab.find(name); it != p->vocab.end()) {
      t.pad_id_ = it->second;
      break;
    }
  if (const json* pad = jsonu::member(j, "padding"); pad && pad->is_object()) {
    if (auto it = p->vocab.find(jsonu::get_string(*pad, "pad_token", "")); it != p->vocab.end()) t.pad_id_ = it->second;
    int64_t id = jsonu::get_int(*pad, "pad_id", -1);
    if (id >= 0) t.pad_id_ = id;
  }
  t.added_ = p->added;
  t.p_ = std::move(p);
  return t;
}

Result<Tokenizer> Tokenizer::from_folder(const std::string& dir) {
  std::string config_path = dir + "/tokenizer_config.json";
  json config = json::object();
  // Presence is a stat (never an open, which would wait on a FIFO); the read
  // refuses anything but a regular file.
  if (present(config_path)) {
    DLRT_ASSIGN_OR_RETURN(std::string text, read_file(config_path));
    DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(text, config_path));
    config = json::parse(text, nullptr, false);
    if (config.is_discarded() || !config.is_object()) return InvalidModel(config_path + ": not a valid JSON object");
  }
  Result<Tokenizer> r = Status(StatusCode::kNotFound, "");
  if (present(dir + "/tokenizer.json")) {
    r = from_json_file(dir + "/tokenizer.json");
  } else if (present(dir + "/vocab.txt")) {
    NormalizerConfig n;
    n.lowercase = jsonu::get_bool(config, "do_lower_case", true);
    n.handle_chinese_chars = jsonu::get_bool(config, "tokenize_chinese_chars", true);
    if (const json* sa = jsonu::member(config, "strip_accents"); sa && sa->is_boolean()) n.strip_accents = sa->get<bool>();
    n.clean_text = true;
    SpecialNames names;
    auto name = [&](const char* key, std::string& out) {
      const json* v = jsonu::member(config, key);
      if (v && v->is_string()) out = v->get<std::string>();
      if (v && v->is_object()) out = jsonu::get_string(*v, "content", out);
    };
    name("unk_token", names.unk);
    name("cls_token", names.cls);
    name("sep_token", names.sep);
    name("pad_token", names.pad);
    name("mask_token", names.mask);
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
    if (tokens.empty()) return InvalidModel(dir + "/vocab.txt: the vocabulary is empty");
    auto v = from_vocab_named(std::move(tokens), n, names);
    if (!v.ok()) return v.status().with_context(dir + "/vocab.txt");
    r = std::move(v);
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

namespace {
// The normalised text an encode of `bytes` input bytes may produce (tokenizer_limits.h).
size_t normalized_budget(size_t bytes) {
  return bytes > (SIZE_MAX - kNormalizedSlack) / kMaxNormalizedGrowth ? SIZE_MAX
                                                                         : kMaxNormalizedGrowth * bytes + kNormalizedSlack;
}
}  // namespace

namespace {
// The post-processor's special tokens around `encs` (truncated already), as one Encoding.
Encoding finish_encoding(const Tokenizer::Pipeline& p, std::vector<tok::Encoded>& encs, std::string_view a,
                         const std::string_view* b, Tokenizer::Offsets* offsets) {
  tok::PostContext ctx;
  ctx.vocab = &p.by_id;
  ctx.texts[0] = a;
  ctx.texts[1] = b ? *b : std::string_view();
  if (p.post) p.post->process(encs, ctx);
  tok::merge_encodings(encs);
  tok::Encoded& e = encs[0];
  Encoding out;
  out.ids = std::move(e.ids);
  out.type_ids = std::move(e.type_ids);
  out.attention_mask.assign(out.ids.size(), 1);
  if (offsets) {
    offsets->clear();
    offsets->reserve(e.offsets.size());
    for (const auto& [s, f] : e.offsets) offsets->push_back({s, f});
  }
  return out;
}
}  // namespace

Encoding Tokenizer::encode_impl(std::string_view a, const std::string_view* b, size_t max_length, Offsets* offsets,
                                size_t* untruncated) const {
  const Pipeline& p = *p_;
  const tok::NormalizedBudget budget(normalized_budget(a.size() + (b ? b->size() : 0)));
  std::vector<tok::Encoded> encs(b ? 2 : 1);
  const size_t specials = p.post ? p.post->added_tokens(b != nullptr) : 0;
  if (max_length > 0)
    for (size_t i = 0; i < encs.size(); ++i)
      bound_stored(encs[i], i, b != nullptr, max_length > specials ? max_length - specials : 0, p.strategy,
                   p.truncate_left);
  encode_sequence(p, a, 0, encs[0]);
  if (b) encode_sequence(p, *b, 1, encs[1]);
  if (untruncated) *untruncated = encs[0].total() + (b ? encs[1].total() : 0) + specials;
  if (max_length > 0) truncate(encs, max_length > specials ? max_length - specials : 0, p.strategy, p.truncate_left);
  return finish_encoding(p, encs, a, b, offsets);
}

size_t Tokenizer::First::tokens() const { return encoded_ ? encoded_->size() : 0; }

Tokenizer::First Tokenizer::encode_first(std::string_view text) const {
  const tok::NormalizedBudget budget(normalized_budget(text.size()));
  auto e = std::make_shared<tok::Encoded>();
  encode_sequence(*p_, text, 0, *e);
  First f;
  f.encoded_ = std::move(e);
  f.text_ = std::string(text);
  return f;
}

Encoding Tokenizer::encode_pair_first(const First& first, std::string_view second, size_t max_length,
                                      size_t* untruncated) const {
  const Pipeline& p = *p_;
  const tok::NormalizedBudget budget(normalized_budget(second.size()));
  std::vector<tok::Encoded> encs(2);
  const size_t specials = p.post ? p.post->added_tokens(true) : 0;
  if (max_length > 0)
    bound_stored(encs[1], 1, true, max_length > specials ? max_length - specials : 0, p.strategy, p.truncate_left);
  encode_sequence(p, second, 1, encs[1]);
  std::array<size_t, 2> kept = {first.tokens(), encs[1].total()};
  if (untruncated) *untruncated = kept[0] + kept[1] + specials;
  if (max_length > 0) kept = kept_sizes(kept, true, max_length > specials ? max_length - specials : 0, p.strategy);
  // Only the part of the first text that stays is copied, whatever its length.
  if (first.encoded_) encs[0] = kept_part(*first.encoded_, kept[0], p.truncate_left);
  encs[1].truncate(kept[1], p.truncate_left);
  return finish_encoding(p, encs, first.text_, &second, nullptr);
}

Encoding Tokenizer::encode(std::string_view text, size_t max_length, Offsets* offsets) const {
  return encode_impl(text, nullptr, max_length, offsets);
}

Encoding Tokenizer::encode_pair(std::string_view first, std::string_view second, size_t max_length, Offsets* offsets) const {
  return encode_impl(first, &second, max_length, offsets);
}

std::vector<std::string> Tokenizer::tokenize(std::string_view text) const {
  tok::Encoded e;
  const tok::NormalizedBudget budget(normalized_budget(text.size()));
  encode_sequence(*p_, text, 0, e);
  std::vector<std::string> out;
  out.reserve(e.size());
  for (int64_t id : e.ids) out.push_back(id_to_token(id));
  return out;
}

std::optional<int64_t> Tokenizer::token_to_id(const std::string& token) const {
  auto it = p_->vocab.find(token);
  if (it == p_->vocab.end()) return std::nullopt;
  return it->second;
}

const std::string& Tokenizer::id_to_token(int64_t id) const {
  static const std::string kEmpty;
  if (id < 0 || static_cast<size_t>(id) >= p_->by_id.size()) return kEmpty;
  return p_->by_id[static_cast<size_t>(id)];
}

size_t Tokenizer::vocab_size() const { return p_->by_id.size(); }

bool Tokenizer::is_special(int64_t id) const {
  return id >= 0 && static_cast<size_t>(id) < p_->special_by_id.size() &&
         p_->special_by_id[static_cast<size_t>(id)] != 0;
}

Result<std::string> Tokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  if (!p_->decoder_error.ok()) return p_->decoder_error;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= p_->by_id.size())
      return InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary (" +
                             std::to_string(p_->by_id.size()) + " tokens)");
    if (skip_special_tokens && p_->special_by_id[static_cast<size_t>(id)] != 0) continue;
    tokens.push_back(p_->by_id[static_cast<size_t>(id)]);
  }
  std::string out;
  if (!p_->decoder) {
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  DLRT_RETURN_IF_ERROR(p_->decoder->decode_chain(tokens));
  for (const std::string& t : tokens) out += t;
  return out;
}

std::string Tokenizer::family() const { return p_->model->family(); }

}  // namespace dlrt::embed
