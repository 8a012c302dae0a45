// Post-processors of tokenizer.json (see tokenizer_parts.h):
// TemplateProcessing (single and pair templates with special tokens and type
// ids), BertProcessing, RobertaProcessing, ByteLevel (offsets without the
// spaces a token starts or ends with) and Sequence.
#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::tok {

void Encoded::push(int64_t id, int64_t type_id, std::pair<uint32_t, uint32_t> offset, bool is_special, bool is_added) {
  if (!keep_last && ids.size() >= keep) {
    ++dropped;
    return;
  }
  ids.push_back(id);
  type_ids.push_back(type_id);
  offsets.push_back(offset);
  special.push_back(is_special ? 1 : 0);
  added.push_back(is_added ? 1 : 0);
  // The last `keep`: the oldest half dropped once 2 * keep are held (amortised O(1) a token).
  if (keep_last && ids.size() >= keep && ids.size() - keep >= keep) {
    const size_t n = ids.size() - keep;
    truncate(keep, true);
    dropped += n;
  }
}

void Encoded::append(const Encoded& o) {
  ids.insert(ids.end(), o.ids.begin(), o.ids.end());
  type_ids.insert(type_ids.end(), o.type_ids.begin(), o.type_ids.end());
  offsets.insert(offsets.end(), o.offsets.begin(), o.offsets.end());
  special.insert(special.end(), o.special.begin(), o.special.end());
  added.insert(added.end(), o.added.begin(), o.added.end());
}

void Encoded::truncate(size_t n, bool from_left) {
  if (n >= ids.size()) return;
  auto cut = [&](auto& v) {
    if (from_left) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(n));
    else v.resize(n);
  };
  cut(ids);
  cut(type_ids);
  cut(offsets);
  cut(special);
  cut(added);
}

void merge_encodings(std::vector<Encoded>& encodings) {
  while (encodings.size() > 1) {
    encodings[0].append(encodings[1]);
    encodings.erase(encodings.begin() + 1);
  }
}

namespace {

// ByteLevel's offset trimming: a token's leading and trailing spaces ('Ġ' in
// the vocabulary's text, whitespace in an added token's) are left out of its
// offsets, except the one space a prefix-space pre-tokenizer added to the first.
// Hugging Face's Python API trims whole characters (it works on character
// offsets), so the byte offsets here move by whole characters of the input.
void trim_offsets(std::vector<Encoded>& encodings, const PostContext& ctx, bool add_prefix_space) {
  constexpr char32_t kSpaceChar = 0x120;
  auto is_continuation = [](std::string_view s, size_t at) {
    return at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80;
  };
  for (size_t e = 0; e < encodings.size(); ++e) {
    Encoded& enc = encodings[e];
    std::string_view src = ctx.texts[e < 2 ? e : 0];
    for (size_t i = 0; i < enc.size(); ++i) {
      auto& off = enc.offsets[i];
      std::u32string text;
      if (enc.added[i]) {
        if (off.second <= src.size() && off.first <= off.second) text = utf8_to_u32(src.substr(off.first, off.second - off.first));
      } else if (enc.ids[i] >= 0 && static_cast<size_t>(enc.ids[i]) < ctx.vocab->size()) {
        text = utf8_to_u32((*ctx.vocab)[static_cast<size_t>(enc.ids[i])]);
      }
      auto space = [&](char32_t c) { return c == kSpaceChar || unicode::is_white_space(c); };
      size_t lead = 0, trail = 0;
      while (lead < text.size() && space(text[lead])) ++lead;
      while (trail < text.size() && space(text[text.size() - 1 - trail])) ++trail;
      if (lead == 0 && trail == 0) continue;
      if (lead > 0) {
        bool first = i == 0 || off.first == 0;
        if (first && add_prefix_space && lead == 1) lead = 0;
        size_t at = off.first;
        for (size_t k = 0; k < lead && at < off.second; ++k) {
          ++at;
          while (at < off.second && is_continuation(src, at)) ++at;
        }
        off.first = static_cast<uint32_t>(std::min<size_t>(at, off.second));
      }
      if (trail > 0) {
        size_t at = off.second;
        size_t chars = 0;
        for (size_t k = 0; k < off.second; ++k) chars += !is_continuation(src, k);
        if (chars >= trail) {
          for (size_t k = 0; k < trail && at > off.first; ++k) {
            --at;
            while (at > off.first && is_continuation(src, at)) --at;
          }
          off.second = static_cast<uint32_t>(std::max<size_t>(at, off.first));
        }
      }
    }
  }
}

struct TemplatePiece {
  bool is_sequence;
  int which;  // sequence: 0 = A, 1 = B
  int64_t type_id;
  std::vector<int64_t> ids;  // special token
};

class TemplateProcessor final : public PostProcessor {
 public:
  TemplateProcessor(std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair)
      : single_(std::move(single)), pair_(std::move(pair)) {}
  size_t added_tokens(bool pair) const override {
    size_t n = 0;
    for (const auto& p : pair ? pair_ : single_) n += p.ids.size();
    return n;
  }
  void process(std::vector<Encoded>& encs, const PostContext&) const override {
    const auto& tmpl = encs.size() > 1 ? pair_ : single_;
    Encoded out;
    for (const TemplatePiece& p : tmpl) {
      if (!p.is_sequence) {
        for (int64_t id : p.ids) out.push(id, p.type_id, {0, 0}, true, false);
        continue;
      }
      if (static_cast<size_t>(p.which) >= encs.size()) continue;
      size_t from = out.size();
      out.append(encs[static_cast<size_t>(p.which)]);
      for (size_t k = from; k < out.size(); ++k) out.type_ids[k] = p.type_id;
    }
    encs.assign(1, std::move(out));
  }

 private:
  std::vector<TemplatePiece> single_, pair_;
};

// BertProcessing and RobertaProcessing: CLS A SEP [ (SEP) B SEP ].
class ClsSepProcessor final : public PostProcessor {
 public:
  ClsSepProcessor(int64_t cls, int64_t sep, bool roberta, bool trim, bool add_prefix_space)
      : cls_(cls), sep_(sep), roberta_(roberta), trim_(trim), prefix_(add_prefix_space) {}
  size_t added_tokens(bool pair) const override { return pair ? (roberta_ ? 4 : 3) : 2; }
  void process(std::vector<Encoded>& encs, const PostContext& ctx) const override {
    if (roberta_ && trim_) trim_offsets(encs, ctx, prefix_);
    Encoded out;
    out.push(cls_, 0, {0, 0}, true, false);
    size_t from = out.size();
    out.append(encs[0]);
    for (size_t k = from; k < out.size(); ++k) out.type_ids[k] = 0;
    out.push(sep_, 0, {0, 0}, true, false);
    if (encs.size() > 1) {
      int64_t type = roberta_ ? 0 : 1;
      if (roberta_) out.push(sep_, 0, {0, 0}, true, false);
      from = out.size();
      out.append(encs[1]);
      for (size_t k = from; k < out.size(); ++k) out.type_ids[k] = type;
      out.push(sep_, type, {0, 0}, true, false);
    }
    encs.assign(1, std::move(out));
  }

 private:
  int64_t cls_, sep_;
  bool roberta_, trim_, prefix_;
};

class ByteLevelProcessor final : public PostProcessor {
 public:
  ByteLevelProcessor(bool trim, bool add_prefix_space) : trim_(trim), prefix_(add_prefix_space) {}
  size_t added_tokens(bool) const override { return 0; }
  void process(std::vector<Encoded>& encs, const PostContext& ctx) const override {
    if (trim_) trim_offsets(encs, ctx, prefix_);
  }

 private:
  bool trim_, prefix_;
};

class SequenceProcessor final : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> parts) : parts_(std::move(parts)) {}
  size_t added_tokens(bool pair) const override {
    size_t n = 0;
    for (const auto& p : parts_) n += p->added_tokens(pair);
    return n;
  }
  void process(std::vector<Encoded>& encs, const PostContext& ctx) const override {
    for (const auto& p : parts_) p->process(encs, ctx);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

Result<int64_t> token_pair(const json& j, const char* key, const char* owner) {
  const json* v = jsonu::member(j, key);
  if (!v || !v->is_array() || v->size() != 2 || !(*v)[1].is_number_integer())
    return InvalidModel(std::string(owner) + " needs " + key + " as [token, id]");
  return (*v)[1].get<int64_t>();
}

Result<std::vector<TemplatePiece>> parse_template(const json* list, const json* specials, const char* name) {
  std::vector<TemplatePiece> out;
  if (!list || !list->is_array()) return InvalidModel(std::string("TemplateProcessing has no \"") + name + "\" template");
  for (const json& piece : *list) {
    TemplatePiece p{};
    if (const json* seq = jsonu::member(piece, "Sequence")) {
      std::string id = jsonu::get_string(*seq, "id", "A");
      if (id != "A" && id != "B") return InvalidModel("TemplateProcessing: sequence \"" + id + "\" is neither A nor B");
      p.is_sequence = true;
      p.which = id == "A" ? 0 : 1;
      p.type_id = jsonu::get_int(*seq, "type_id", 0);
    } else if (const json* sp = jsonu::member(piece, "SpecialToken")) {
      std::string name_ = jsonu::get_string(*sp, "id", "");
      p.type_id = jsonu::get_int(*sp, "type_id", 0);
      const json* entry = specials ? jsonu::member(*specials, name_) : nullptr;
      const json* ids = entry ? jsonu::member(*entry, "ids") : nullptr;
      if (!ids || !ids->is_array()) return InvalidModel("TemplateProcessing: special token \"" + name_ + "\" has no ids");
      for (const json& id : *ids) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxTokenId)
          return InvalidModel("TemplateProcessing: bad id for \"" + name_ + "\"");
        p.ids.push_back(id.get<int64_t>());
      }
    } else {
      return InvalidModel("TemplateProcessing: unknown template piece " + piece.dump());
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::unique_ptr<PostProcessor> make_bert_processing(int64_t cls_id, int64_t sep_id) {
  return std::make_unique<ClsSepProcessor>(cls_id, sep_id, false, false, false);
}

Result<std::unique_ptr<PostProcessor>> make_post_processor(const json& j,
                                                           const std::unordered_map<std::string, int64_t>& vocab,
                                                           size_t depth) {
  (void)vocab;
  DLRT_RETURN_IF_ERROR(check_component_depth("post_processor", depth));
  std::string type = jsonu::get_string(j, "type", "");
  if (type == "TemplateProcessing") {
    const json* specials = jsonu::member(j, "special_tokens");
    DLRT_ASSIGN_OR_RETURN(auto single, parse_template(jsonu::member(j, "single"), specials, "single"));
    const json* pair_list = jsonu::member(j, "pair");
    std::vector<TemplatePiece> pair;
    if (pair_list && !pair_list->is_null()) {
      DLRT_ASSIGN_OR_RETURN(pair, parse_template(pair_list, specials, "pair"));
    } else {  // no pair template: A then B, as single's pieces around each
      pair = single;
      for (const TemplatePiece& p : single) {
        TemplatePiece q = p;
        if (q.is_sequence) q.which = 1;
        pair.push_back(q);
      }
    }
    return std::unique_ptr<PostProcessor>(new TemplateProcessor(std::move(single), std::move(pair)));
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    DLRT_ASSIGN_OR_RETURN(int64_t cls, token_pair(j, "cls", type.c_str()));
    DLRT_ASSIGN_OR_RETURN(int64_t sep, token_pair(j, "sep", type.c_str()));
    bool roberta = type == "RobertaProcessing";
    return std::unique_ptr<PostProcessor>(new ClsSepProcessor(cls, sep, roberta, jsonu::get_bool(j, "trim_offsets", true),
                                                              jsonu::get_bool(j, "add_prefix_space", true)));
  }
  if (type == "ByteLevel")
    return std::unique_ptr<PostProcessor>(
        new ByteLevelProcessor(jsonu::get_bool(j, "trim_offsets", true), jsonu::get_bool(j, "add_prefix_space", true)));
  if (type == "Sequence") {
    const json* list = jsonu::member(j, "processors");
    if (!list || !list->is_array()) return InvalidModel("post_processor Sequence has no \"processors\" list");
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (const json& p : *list) {
      DLRT_ASSIGN_OR_RETURN(auto part, make_post_processor(p, vocab, depth + 1));
      parts.push_back(std::move(part));
    }
    return std::unique_ptr<PostProcessor>(new SequenceProcessor(std::move(parts)));
  }
  return Unsupported("post_processor \"" + type +
                     "\" is not supported (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence)");
}

}  // namespace dlrt::embed::tok
