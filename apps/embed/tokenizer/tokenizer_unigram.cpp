// The Unigram model (SentencePiece; see tokenizer_parts.h): the best-scoring
// segmentation of a piece by Viterbi over the vocabulary's log-probabilities,
// with an unknown piece for a character no single-character piece covers
// (score: the lowest score minus 10), adjacent unknowns fused, and byte
// fallback (<0xXX> pieces) when the file asks for it. Ties keep the path found
// first, as Hugging Face's tokenizers do.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_limits.h"
#include "embed/tokenizer/tokenizer_parts.h"

namespace dlrt::embed::tok {

namespace {

// A byte trie of the pieces: nodes with sorted child edges, root by table.
class ByteTrie {
 public:
  void build(std::vector<std::pair<std::string, int64_t>> keys) {
    std::sort(keys.begin(), keys.end());  // duplicates: the later id last
    nodes_.clear();
    edges_.clear();
    nodes_.push_back({0, 0, -1});
    struct Work {
      uint32_t node;
      size_t lo, hi, depth;
    };
    std::vector<Work> stack{{0, 0, keys.size(), 0}};
    while (!stack.empty()) {
      Work w = stack.back();
      stack.pop_back();
      size_t lo = w.lo;
      while (lo < w.hi && keys[lo].first.size() == w.depth) nodes_[w.node].value = keys[lo++].second;
      nodes_[w.node].first = static_cast<uint32_t>(edges_.size());
      std::vector<Work> kids;
      for (size_t i = lo; i < w.hi;) {
        unsigned char b = static_cast<unsigned char>(keys[i].first[w.depth]);
        size_t j = i;
        while (j < w.hi && static_cast<unsigned char>(keys[j].first[w.depth]) == b) ++j;
        uint32_t child = static_cast<uint32_t>(nodes_.size());
        nodes_.push_back({0, 0, -1});
        edges_.push_back({b, child});
        kids.push_back({child, i, j, w.depth + 1});
        i = j;
      }
      nodes_[w.node].count = static_cast<uint32_t>(kids.size());
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
    }
    root_.fill(0);
    for (uint32_t e = 0; e < nodes_[0].count; ++e) root_[edges_[e].byte] = edges_[e].child;
  }
  // Calls fn(length, id) for each piece that prefixes s[from..], shortest first.
  template <typename Fn>
  void prefixes(const std::string& s, size_t from, Fn fn) const {
    if (from >= s.size()) return;
    uint32_t node = root_[static_cast<unsigned char>(s[from])];
    size_t i = from + 1;
    while (node != 0) {
      if (nodes_[node].value >= 0) fn(i - from, nodes_[node].value);
      if (i >= s.size()) return;
      unsigned char b = static_cast<unsigned char>(s[i++]);
      const Node& n = nodes_[node];
      const Edge* first = edges_.data() + n.first;
      const Edge* last = first + n.count;
      const Edge* it = std::lower_bound(first, last, b, [](const Edge& e, unsigned char v) { return e.byte < v; });
      node = (it != last && it->byte == b) ? it->child : 0;
    }
  }

 private:
  struct Node {
    uint32_t first, count;
    int64_t value;
  };
  struct Edge {
    unsigned char byte;
    uint32_t child;
  };
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::array<uint32_t, 256> root_{};
};

class Unigram final : public Model {
 public:
  void tokenize(std::u32string_view piece, std::vector<ModelToken>& out) const override {
    std::string s;
    s.reserve(piece.size() * 2);
    std::vector<uint32_t> char_at;  // byte offset -> code point index
    char_at.reserve(piece.size() * 2 + 1);
    for (size_t i = 0; i < piece.size(); ++i) {
      size_t before = s.size();
      append_utf8(piece[i], s);
      char_at.insert(char_at.end(), s.size() - before, static_cast<uint32_t>(i));
    }
    char_at.push_back(static_cast<uint32_t>(piece.size()));
    size_t size = s.size();
    struct Best {
      int64_t id = -1;
      double score = 0;
      int64_t start = -1;
    };
    std::vector<Best> best(size + 1);
    size_t at = 0;
    while (at < size) {
      double here = best[at].score;
      unsigned char lead = static_cast<unsigned char>(s[at]);
      size_t mblen = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
      bool single = false;
      trie_.prefixes(s, at, [&](size_t len, int64_t id) {
        Best& t = best[at + len];
        double cand = scores_[static_cast<size_t>(id)] + here;
        if (t.start < 0 || cand > t.score) t = {id, cand, static_cast<int64_t>(at)};
        if (len == mblen) single = true;
      });
      if (!single) {
        Best& t = best[at + mblen];
        double cand = unk_score_ + here;
        if (t.start < 0 || cand > t.score) t = {unk_, cand, static_cast<int64_t>(at)};
      }
      at += mblen;
    }
    // Back from the end; adjacent unknowns become one token.
    struct Tok {
      int64_t id;
      size_t b, e;
    };
    std::vector<Tok> toks;
    size_t end = size;
    while (end > 0) {
      const Best& node = best[end];
      size_t start = static_cast<size_t>(node.start);
      if (node.id == unk_ && !toks.empty() && toks.back().id == unk_ && toks.back().b == end && fuse_pending_) {
        toks.back().b = start;
      } else {
        toks.push_back({node.id, start, end});
      }
      end = start;
    }
    std::reverse(toks.begin(), toks.end());
    for (const Tok& t : toks) {
      uint32_t cb = char_at[t.b], ce = char_at[t.e];
      int64_t id = t.id;
      if (id == unk_) {  // a fused unknown may be a piece after all
        auto it = vocab_.find(s.substr(t.b, t.e - t.b));
        if (it != vocab_.end()) id = it->second;
      }
      if (id == unk_ && byte_fallback_) {
        bool all = true;
        for (size_t k = t.b; k < t.e && all; ++k) all = byte_ids_[static_cast<unsigned char>(s[k])] >= 0;
        if (all) {
          for (size_t k = t.b; k < t.e; ++k) out.push_back({byte_ids_[static_cast<unsigned char>(s[k])], cb, ce});
          continue;
        }
      }
      out.push_back({id, cb, ce});
    }
  }
  const char* family() const override { return "Unigram"; }
  const std::vector<std::string>& vocab() const override { return by_id_; }
  int64_t unk_id() const override { return unk_; }

  std::vector<std::string> by_id_;
  std::vector<double> scores_;
  std::unordered_map<std::string, int64_t> vocab_;
  ByteTrie trie_;
  int64_t unk_ = -1;
  double unk_score_ = 0;
  bool byte_fallback_ = false, fuse_pending_ = true;
  std::array<int64_t, 256> byte_ids_{};
};

}  // namespace

Result<std::unique_ptr<Model>> make_unigram_json(const json& j) {
  auto m = std::make_unique<Unigram>();
  const json* vocab = jsonu::member(j, "vocab");
  if (!vocab || !vocab->is_array() || vocab->empty()) return InvalidModel("Unigram: model.vocab is missing or empty");
  if (vocab->size() > static_cast<size_t>(kMaxTokenId)) return InvalidModel("Unigram: model.vocab is too large");
  double min_score = INFINITY;
  std::vector<std::pair<std::string, int64_t>> keys;
  keys.reserve(vocab->size());
  for (const json& e : *vocab) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
      return InvalidModel("Unigram: a model.vocab entry is not [piece, score]");
    int64_t id = static_cast<int64_t>(m->by_id_.size());
    std::string piece = e[0].get<std::string>();
    if (piece.size() > kMaxUnigramPieceBytes)
      return InvalidModel("Unigram: a model.vocab piece of " + std::to_string(piece.size()) +
                          " bytes; the limit is " + std::to_string(kMaxUnigramPieceBytes));
    double score = e[1].get<double>();
    m->by_id_.push_back(piece);
    m->scores_.push_back(score);
    m->vocab_[piece] = id;  // a duplicate piece: the later id, as Hugging Face
    min_score = std::min(min_score, score);
    if (!piece.empty()) keys.push_back({std::move(piece), id});
  }
  m->unk_score_ = min_score - 10.0;
  const json* unk = jsonu::member(j, "unk_id");
  if (unk && unk->is_number_integer()) {
    int64_t u = unk->get<int64_t>();
    if (u < 0 || u >= static_cast<int64_t>(m->by_id_.size())) return InvalidModel("Unigram: unk_id is not in the vocabulary");
    m->unk_ = u;
  } else {
    return Unsupported("Unigram without an unk_id is not supported");
  }
  m->byte_fallback_ = jsonu::get_bool(j, "byte_fallback", false);
  m->byte_ids_.fill(-1);
  if (m->byte_fallback_) {
    char name[8];
    for (int b = 0; b < 256; ++b) {
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      auto it = m->vocab_.find(name);
      if (it != m->vocab_.end()) m->byte_ids_[static_cast<size_t>(b)] = it->second;
    }
  }
  // The lattice looks a piece's score up by its (last) id.
  for (auto& [piece, id] : keys) id = m->vocab_[piece];
  m->trie_.build(std::move(keys));
  return std::unique_ptr<Model>(std::move(m));
}

}  // namespace dlrt::embed::tok
