// The BPE model (GPT-2/RoBERTa byte-level BPE and classic BPE; see
// tokenizer_parts.h): a piece starts as one symbol per character (with the
// continuing-subword prefix and end-of-word suffix when the file has them,
// <0xXX> byte pieces or [UNK] for characters outside the vocabulary), then the
// adjacent pair of lowest merge rank is merged, leftmost first, until no pair
// has a merge. `ignore_merges` takes a piece that is in the vocabulary whole.
// Dropout (random merges) is refused: it would not give repeatable ids.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <queue>

#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"

namespace dlrt::embed::tok {

namespace {

class Bpe final : public Model {
 public:
  void tokenize(std::u32string_view piece, std::vector<ModelToken>& out) const override {
    uint32_t n = static_cast<uint32_t>(piece.size());
    std::string& buf = scratch();
    if (ignore_merges_) {
      buf.clear();
      for (char32_t c : piece) append_utf8(c, buf);
      auto it = vocab_.find(buf);
      if (it != vocab_.end()) {
        out.push_back({it->second, 0, n});
        return;
      }
    }
    struct Sym {
      int64_t id;
      uint32_t b, e;
      int32_t prev, next;
    };
    std::vector<Sym> syms;
    syms.reserve(piece.size());
    auto add = [&](int64_t id, uint32_t b, uint32_t e) {
      int32_t k = static_cast<int32_t>(syms.size());
      syms.push_back({id, b, e, k - 1, -1});
      if (k > 0) syms[static_cast<size_t>(k - 1)].next = k;
    };
    int64_t unk_b = -1, unk_e = -1;
    auto flush_unk = [&]() {
      if (unk_b >= 0) add(unk_, static_cast<uint32_t>(unk_b), static_cast<uint32_t>(unk_e));
      unk_b = -1;
    };
    for (uint32_t i = 0; i < n; ++i) {
      char32_t c = piece[i];
      int64_t id = -1;
      bool plain = (i == 0 || prefix_.empty()) && (i + 1 < n || suffix_.empty());
      if (plain && c < small_ids_.size()) {
        id = small_ids_[c];
      } else {
        buf.clear();
        if (i > 0) buf += prefix_;
        append_utf8(c, buf);
        if (i + 1 == n) buf += suffix_;
        auto it = vocab_.find(buf);
        if (it != vocab_.end()) id = it->second;
      }
      if (id >= 0) {
        flush_unk();
        add(id, i, i + 1);
        continue;
      }
      if (byte_fallback_) {
        if (plain) {
          buf.clear();
          append_utf8(c, buf);
        }
        bool all = true;
        for (unsigned char b : buf) all = all && byte_ids_[b] >= 0;
        if (all) {
          for (unsigned char b : buf) add(byte_ids_[b], i, i + 1);
          continue;
        }
      }
      if (unk_ < 0) continue;  // no unknown token: the character is dropped, as in Hugging Face
      if (unk_b >= 0 && fuse_unk_) {
        unk_e = i + 1;
      } else {
        flush_unk();
        unk_b = i;
        unk_e = i + 1;
      }
    }
    flush_unk();
    if (syms.size() > 1) merge(syms);
    for (const Sym& s : syms)
      if (s.id != kDead) out.push_back({s.id, s.b, s.e});
  }
  const char* family() const override { return "BPE"; }
  const std::vector<std::string>& vocab() const override { return by_id_; }
  int64_t unk_id() const override { return unk_; }

  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> by_id_;
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> merges_;  // (left << 32 | right) -> (rank, merged id)
  std::string prefix_, suffix_;
  int64_t unk_ = -1;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  std::array<int64_t, 512> small_ids_{};  // the id of a code point below 512 on its own, or -1
  std::array<int64_t, 256> byte_ids_{};

 private:
  static constexpr int64_t kDead = -2;

  static std::string& scratch() {
    thread_local std::string s;
    return s;
  }

  template <typename Sym>
  void merge(std::vector<Sym>& syms) const {
    struct Cand {
      uint32_t rank, pos;
      int64_t id;
      bool operator<(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }  // min-heap
    };
    auto find = [&](int64_t a, int64_t b) -> const std::pair<uint32_t, uint32_t>* {
      auto it = merges_.find(static_cast<uint64_t>(a) << 32 | static_cast<uint64_t>(b));
      return it == merges_.end() ? nullptr : &it->second;
    };
    std::priority_queue<Cand> queue;
    for (size_t k = 0; k + 1 < syms.size(); ++k)
      if (auto m = find(syms[k].id, syms[k + 1].id)) queue.push({m->first, static_cast<uint32_t>(k), m->second});
    while (!queue.empty()) {
      Cand top = queue.top();
      queue.pop();
      Sym& s = syms[top.pos];
      if (s.id == kDead || s.next < 0) continue;
      Sym& right = syms[static_cast<size_t>(s.next)];
      auto m = find(s.id, right.id);
      if (!m || m->second != top.id) continue;  // an expired candidate
      s.id = top.id;
      s.e = right.e;
      int32_t after = right.next;
      right.id = kDead;
      s.next = after;
      if (after >= 0) syms[static_cast<size_t>(after)].prev = static_cast<int32_t>(top.pos);
      if (s.prev >= 0)
        if (auto pm = find(syms[static_cast<size_t>(s.prev)].id, s.id))
          queue.push({pm->first, static_cast<uint32_t>(s.prev), pm->second});
      if (after >= 0)
        if (auto nm = find(s.id, syms[static_cast<size_t>(after)].id)) queue.push({nm->first, top.pos, nm->second});
    }
  }
};

const std::string* optional_string(const json& j, const char* key, std::string& storage, Status& error) {
  const json* v = jsonu::member(j, key);
  if (!v || v->is_null()) return nullptr;
  if (!v->is_string()) {
    error = InvalidModel(std::string("BPE: ") + key + " is not a string");
    return nullptr;
  }
  storage = v->get<std::string>();
  return &storage;
}

}  // namespace

Result<std::unique_ptr<Model>> make_bpe_json(const json& j) {
  auto m = std::make_unique<Bpe>();
  if (const json* d = jsonu::member(j, "dropout"); d && !d->is_null() && !(d->is_number() && d->get<double>() == 0.0))
    return Unsupported("BPE dropout " + d->dump() + " is not supported (it makes tokenization random); set it to null");
  DLRT_RETURN_IF_ERROR(read_vocab_map(j, "BPE", m->vocab_, m->by_id_));
  Status error = Status::Ok();
  std::string unk, prefix, suffix;
  const std::string* unk_token = optional_string(j, "unk_token", unk, error);
  if (optional_string(j, "continuing_subword_prefix", prefix, error)) m->prefix_ = prefix;
  if (optional_string(j, "end_of_word_suffix", suffix, error)) m->suffix_ = suffix;
  DLRT_RETURN_IF_ERROR(error);
  if (unk_token) {
    auto it = m->vocab_.find(*unk_token);
    if (it == m->vocab_.end()) return InvalidModel("BPE: the unknown token \"" + *unk_token + "\" is not in the vocabulary");
    m->unk_ = it->second;
  }
  m->fuse_unk_ = jsonu::get_bool(j, "fuse_unk", false);
  m->byte_fallback_ = jsonu::get_bool(j, "byte_fallback", false);
  m->ignore_merges_ = jsonu::get_bool(j, "ignore_merges", false);
  m->small_ids_.fill(-1);
  for (char32_t c = 0; c < m->small_ids_.size(); ++c) {
    std::string s;
    append_utf8(c, s);
    auto it = m->vocab_.find(s);
    if (it != m->vocab_.end()) m->small_ids_[c] = it->second;
  }
  m->byte_ids_.fill(-1);
  char name[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = m->vocab_.find(name);
    if (it != m->vocab_.end()) m->byte_ids_[static_cast<size_t>(b)] = it->second;
  }
  const json* merges = jsonu::member(j, "merges");
  if (!merges || !merges->is_array()) return InvalidModel("BPE: model.merges is missing");
  m->merges_.reserve(merges->size());
  uint32_t rank = 0;
  for (const json& e : *merges) {
    std::string a, b;
    if (e.is_string()) {
      const std::string& s = e.get_ref<const std::string&>();
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        return InvalidModel("BPE: the merge \"" + s + "\" is not two tokens");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      a = e[0].get<std::string>();
      b = e[1].get<std::string>();
    } else {
      return InvalidModel("BPE: a merge is neither \"a b\" nor [\"a\", \"b\"]");
    }
    auto ia = m->vocab_.find(a), ib = m->vocab_.find(b);
    if (ia == m->vocab_.end() || ib == m->vocab_.end())
      return InvalidModel("BPE: the merge \"" + a + " " + b + "\" names a token that is not in the vocabulary");
    std::string merged = a + (b.compare(0, m->prefix_.size(), m->prefix_) == 0 ? b.substr(m->prefix_.size()) : b);
    auto im = m->vocab_.find(merged);
    if (im == m->vocab_.end()) return InvalidModel("BPE: the merge of \"" + a + " " + b + "\" gives \"" + merged + "\", not in the vocabulary");
    m->merges_[static_cast<uint64_t>(ia->second) << 32 | static_cast<uint64_t>(ib->second)] = {rank++, static_cast<uint32_t>(im->second)};
  }
  return std::unique_ptr<Model>(std::move(m));
}

}  // namespace dlrt::embed::tok
