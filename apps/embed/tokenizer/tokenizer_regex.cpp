// A small backtracking regex engine (see tokenizer_regex.h) with a memory of
// the states it explored (linear in the text): the pattern is
// parsed into a program of instructions (char, class, split, jump, lookahead,
// assertions, match) and run depth-first, alternatives in pattern order, which
// gives the leftmost-first match Oniguruma gives.
#include "embed/tokenizer/tokenizer_regex.h"

#include <algorithm>
#include <deque>

#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::tok {

namespace {

// A set of code points: ranges plus general-category tests, possibly negated.
struct CharSet {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  uint32_t categories = 0;  // bit per unicode::GeneralCategory
  bool space = false, word = false, not_space = false, not_word = false, not_digit = false;
  std::vector<uint32_t> not_categories;  // \P{..} inside a class: bit masks
  bool negated = false;

  bool contains(char32_t c) const {
    bool in = false;
    for (const auto& [a, b] : ranges)
      if (c >= a && c <= b) {
        in = true;
        break;
      }
    if (!in && categories && (categories >> unicode::general_category(c) & 1u)) in = true;
    if (!in && space && unicode::is_white_space(c)) in = true;
    if (!in && not_space && !unicode::is_white_space(c)) in = true;
    if (!in && word && is_word_char(c)) in = true;
    if (!in && not_word && !is_word_char(c)) in = true;
    if (!in && not_digit && unicode::general_category(c) != unicode::kNd) in = true;
    if (!in)
      for (uint32_t m : not_categories)
        if (!(m >> unicode::general_category(c) & 1u)) {
          in = true;
          break;
        }
    return in != negated;
  }
};

enum class Op : uint8_t { kChar, kAny, kSet, kSplit, kJmp, kLook, kBegin, kEnd, kMatch, kAtomic };

struct Inst {
  Op op;
  bool icase = false, negate = false;
  char32_t c = 0;
  int32_t x = 0, y = 0;  // kSplit: preferred, other; kJmp: target; kSet/kLook/kAtomic: index
  int32_t loop_exit = -1;  // kSplit at the head of a * or + loop: where the loop ends
};

uint32_t fold(uint32_t c) {
  uint32_t buf[3];
  return unicode::to_lower(c, buf) == 1 ? buf[0] : c;
}

}  // namespace

struct Regex::Program {
  std::vector<Inst> code;
  std::vector<CharSet> sets;
  std::vector<std::vector<Inst>> subs;  // lookahead and possessive bodies, each ending in kMatch
};

namespace {

// ---- parsing: pattern -> AST -> code

struct Node {
  enum Kind { kEmpty, kChar, kAny, kSet, kConcat, kAlt, kRepeat, kLook, kBegin, kEnd } kind = kEmpty;
  char32_t c = 0;
  bool icase = false, negate = false, greedy = true, possessive = false;
  int min = 0, max = -1;
  int set = -1;
  std::vector<Node> kids;
};

class Parser {
 public:
  Parser(std::u32string p, Regex::Program& prog) : p_(std::move(p)), prog_(prog) {}

  Result<Node> parse() {
    DLRT_ASSIGN_OR_RETURN(Node n, alternation(false));
    if (i_ < p_.size()) return error("an unbalanced ')'");
    return n;
  }

 private:
  Status error(const std::string& what) const {
    return Unsupported("regex: " + what + " at position " + std::to_string(i_) + " is not supported");
  }
  bool more() const { return i_ < p_.size(); }
  char32_t peek() const { return p_[i_]; }

  Result<Node> alternation(bool icase) {
    Node alt;
    alt.kind = Node::kAlt;
    while (true) {
      DLRT_ASSIGN_OR_RETURN(Node seq, sequence(icase));
      alt.kids.push_back(std::move(seq));
      if (more() && peek() == '|') {
        ++i_;
        continue;
      }
      break;
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  Result<Node> sequence(bool& icase) {
    Node seq;
    seq.kind = Node::kConcat;
    while (more() && peek() != '|' && peek() != ')') {
      if (p_.compare(i_, 4, U"(?i)") == 0) {
        icase = true;
        i_ += 4;
        continue;
      }
      DLRT_ASSIGN_OR_RETURN(Node atom, this->atom(icase));
      DLRT_ASSIGN_OR_RETURN(Node q, quantified(std::move(atom)));
      seq.kids.push_back(std::move(q));
    }
    return seq;
  }

  Result<Node> quantified(Node atom) {
    if (!more()) return atom;
    int mn = -1, mx = -1;
    char32_t c = peek();
    if (c == '*') mn = 0, mx = -1, ++i_;
    else if (c == '+') mn = 1, mx = -1, ++i_;
    else if (c == '?') mn = 0, mx = 1, ++i_;
    else if (c == '{') {
      size_t save = i_++;
      auto number = [&](int& out) {
        size_t start = i_;
        out = 0;
        while (more() && peek() >= '0' && peek() <= '9' && out < 100000) out = out * 10 + static_cast<int>(peek() - '0'), ++i_;
        return i_ > start;
      };
      if (!number(mn)) {
        i_ = save;  // a literal '{'
        return atom;
      }
      mx = mn;
      if (more() && peek() == ',') {
        ++i_;
        if (!number(mx)) mx = -1;
      }
      if (!more() || peek() != '}') return error("a malformed {n,m} quantifier");
      ++i_;
      if (mn > 1000 || mx > 1000) return error("a repetition count over 1000");
    } else {
      return atom;
    }
    Node rep;
    rep.kind = Node::kRepeat;
    rep.min = mn;
    rep.max = mx;
    if (more() && peek() == '?') rep.greedy = false, ++i_;
    else if (more() && peek() == '+') rep.possessive = true, ++i_;
    rep.kids.push_back(std::move(atom));
    return quantified(std::move(rep));
  }

  Result<uint32_t> category_mask(bool& negate) {
    // After \p or \P: a single letter or {Name}.
    std::u32string name;
    if (more() && peek() == '{') {
      ++i_;
      while (more() && peek() != '}') name.push_back(p_[i_++]);
      if (!more()) return error("an unterminated \\p{");
      ++i_;
    } else if (more()) {
      name.push_back(p_[i_++]);
    }
    if (!name.empty() && name[0] == '^') negate = !negate, name.erase(0, 1);
    std::string n(name.begin(), name.end());
    static const char* kNames[] = {"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
                                   "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};
    uint32_t mask = 0;
    for (uint32_t k = 0; k < 30; ++k) {
      std::string cat = kNames[k];
      if (n == cat || (n.size() == 1 && cat[0] == n[0])) mask |= 1u << k;
    }
    if (n == "L&" || n == "LC") mask = (1u << 1) | (1u << 2) | (1u << 3);
    static const std::pair<const char*, const char*> kLong[] = {
        {"Letter", "L"}, {"Mark", "M"}, {"Number", "N"}, {"Punctuation", "P"}, {"Symbol", "S"}, {"Separator", "Z"}, {"Other", "C"}};
    for (const auto& [longname, letter] : kLong)
      if (n == longname)
        for (uint32_t k = 0; k < 30; ++k)
          if (kNames[k][0] == letter[0]) mask |= 1u << k;
    if (mask == 0) return error("the property \\p{" + n + "}");
    return mask;
  }

  // One escape after '\': adds to `set` (class escapes) or gives a literal in `lit`.
  Status escape(CharSet& set, char32_t& lit, bool& is_lit) {
    if (!more()) return error("a trailing backslash");
    char32_t c = p_[i_++];
    is_lit = false;
    auto hex = [&](size_t digits) -> Result<char32_t> {
      char32_t v = 0;
      size_t k = 0;
      bool braced = digits == 0;
      if (braced) {
        if (!more() || peek() != '{') return error("a malformed \\x");
        ++i_;
      }
      while (more() && (braced ? peek() != '}' : k < digits)) {
        char32_t h = p_[i_++];
        int d = (h >= '0' && h <= '9') ? int(h - '0') : (h >= 'a' && h <= 'f') ? int(h - 'a' + 10) : (h >= 'A' && h <= 'F') ? int(h - 'A' + 10) : -1;
        if (d < 0 || v > 0x10FFFF) return error("a malformed hexadecimal escape");
        v = v * 16 + static_cast<char32_t>(d);
        ++k;
      }
      if (braced) {
        if (!more()) return error("a malformed \\x{...}");
        ++i_;
      }
      return v;
    };
    switch (c) {
      case 's': set.space = true; return Status::Ok();
      case 'S': set.not_space = true; return Status::Ok();
      case 'd': set.categories |= 1u << unicode::kNd; return Status::Ok();
      case 'D': set.not_digit = true; return Status::Ok();
      case 'w': set.word = true; return Status::Ok();
      case 'W': set.not_word = true; return Status::Ok();
      case 'h': set.ranges.push_back({'\t', '\t'}); set.categories |= 1u << unicode::kZs; return Status::Ok();
      case 'p':
      case 'P': {
        bool negate = c == 'P';
        DLRT_ASSIGN_OR_RETURN(uint32_t mask, category_mask(negate));
        if (negate) set.not_categories.push_back(mask);
        else set.categories |= mask;
        return Status::Ok();
      }
      case 't': lit = '\t'; break;
      case 'n': lit = '\n'; break;
      case 'r': lit = '\r'; break;
      case 'f': lit = '\f'; break;
      case 'v': lit = '\v'; break;
      case 'e': lit = 0x1B; break;
      case '0': lit = 0; break;
      case 'x': {
        DLRT_ASSIGN_OR_RETURN(lit, hex(more() && peek() == '{' ? 0 : 2));
        break;
      }
      case 'u': {
        DLRT_ASSIGN_OR_RETURN(lit, hex(4));
        break;
      }
      default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
          return error(std::string("the escape \\") + static_cast<char>(c));
        lit = c;
    }
    is_lit = true;
    return Status::Ok();
  }

  Result<Node> atom(bool icase) {
    char32_t c = p_[i_++];
    if (c == '(' && ++depth_ > 64) return error("groups nested over 64 deep");
    Node n;
    switch (c) {
      case '.': n.kind = Node::kAny; return n;
      case '^': n.kind = Node::kBegin; return n;
      case '$': n.kind = Node::kEnd; return n;
      case '[': return char_class(icase);
      case '(': {
        bool group_icase = icase;
        if (more() && peek() == '?') {
          ++i_;
          if (more() && (peek() == '=' || peek() == '!')) {
            n.kind = Node::kLook;
            n.negate = p_[i_++] == '!';
            DLRT_ASSIGN_OR_RETURN(Node body, alternation(icase));
            if (!more() || peek() != ')') return error("an unterminated lookahead");
            ++i_;
            --depth_;
            n.kids.push_back(std::move(body));
            return n;
          }
          if (p_.compare(i_, 2, U"i:") == 0) group_icase = true, i_ += 2;
          else if (p_.compare(i_, 3, U"-i:") == 0) group_icase = false, i_ += 3;
          else if (more() && peek() == ':') ++i_;
          else if (p_.compare(i_, 2, U"<=") == 0 || p_.compare(i_, 2, U"<!") == 0) return error("a lookbehind (?<= or (?<!");
          else if (more() && (peek() == '<' || peek() == 'P' || peek() == '\'')) return error("a named group");
          else if (more() && peek() == '>') return error("an atomic group (?>");
          else return error("the group construct (?" + std::string(1, static_cast<char>(more() ? peek() : ' ')));
        }
        DLRT_ASSIGN_OR_RETURN(Node body, alternation(group_icase));
        if (!more() || peek() != ')') return error("an unterminated group");
        ++i_;
        --depth_;
        return body;
      }
      case ')': return error("an unbalanced ')'");
      case '*':
      case '+':
      case '?': return error("a quantifier with nothing to repeat");
      case '\\': {
        if (more() && (peek() == 'A' || peek() == 'z' || peek() == 'Z')) {
          n.kind = p_[i_++] == 'A' ? Node::kBegin : Node::kEnd;
          return n;
        }
        if (more() && ((peek() >= '1' && peek() <= '9') || peek() == 'b' || peek() == 'B' || peek() == 'k' || peek() == 'G'))
          return error(std::string("the escape \\") + static_cast<char>(peek()));
        CharSet set;
        char32_t lit = 0;
        bool is_lit = false;
        DLRT_RETURN_IF_ERROR(escape(set, lit, is_lit));
        if (is_lit) {
          n.kind = Node::kChar;
          n.c = icase ? fold(lit) : lit;
          n.icase = icase;
          return n;
        }
        n.kind = Node::kSet;
        n.set = static_cast<int>(prog_.sets.size());
        prog_.sets.push_back(std::move(set));
        return n;
      }
      default:
        n.kind = Node::kChar;
        n.c = icase ? fold(c) : c;
        n.icase = icase;
        return n;
    }
  }

  Result<Node> char_class(bool icase) {
    CharSet set;
    if (more() && peek() == '^') set.negated = true, ++i_;
    bool first = true;
    while (more() && (peek() != ']' || first)) {
      first = false;
      char32_t lo = p_[i_++];
      if (lo == '[') return error("a nested character class");
      if (lo == '\\') {
        bool is_lit = false;
        DLRT_RETURN_IF_ERROR(escape(set, lo, is_lit));
        if (!is_lit) continue;
      }
      char32_t hi = lo;
      if (i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        hi = p_[i_++];
        if (hi == '\\') {
          CharSet ignored;
          bool is_lit = false;
          DLRT_RETURN_IF_ERROR(escape(ignored, hi, is_lit));
          if (!is_lit) return error("a class escape as a range end");
        }
        if (hi < lo) return error("a reversed range");
      }
      set.ranges.push_back({lo, hi});
      if (icase) {
        for (char32_t k = lo; k <= hi && k < 0x80; ++k) {
          if (k >= 'a' && k <= 'z') set.ranges.push_back({k - 32, k - 32});
          if (k >= 'A' && k <= 'Z') set.ranges.push_back({k + 32, k + 32});
        }
      }
    }
    if (!more()) return error("an unterminated character class");
    ++i_;
    Node n;
    n.kind = Node::kSet;
    n.set = static_cast<int>(prog_.sets.size());
    prog_.sets.push_back(std::move(set));
    return n;
  }

  std::u32string p_;
  size_t i_ = 0;
  int depth_ = 0;
  Regex::Program& prog_;
};

class Compiler {
 public:
  explicit Compiler(Regex::Program& prog) : prog_(prog) {}

  // Set when the program grows past kMaxRegexProgram (nested counted repetitions).
  bool too_large = false;

  void emit(const Node& n, std::vector<Inst>& code) {
    if (too_large || code.size() + in_subs_ > kMaxRegexProgram) {
      too_large = true;
      return;
    }
    switch (n.kind) {
      case Node::kEmpty: break;
      case Node::kChar: code.push_back({Op::kChar, n.icase, false, n.c, 0, 0}); break;
      case Node::kAny: code.push_back({Op::kAny, false, false, 0, 0, 0}); break;
      case Node::kSet: code.push_back({Op::kSet, false, false, 0, n.set, 0}); break;
      case Node::kBegin: code.push_back({Op::kBegin, false, false, 0, 0, 0}); break;
      case Node::kEnd: code.push_back({Op::kEnd, false, false, 0, 0, 0}); break;
      case Node::kConcat:
        for (const Node& k : n.kids) emit(k, code);
        break;
      case Node::kAlt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k < n.kids.size(); ++k) {
          if (k + 1 < n.kids.size()) {
            size_t split = code.size();
            code.push_back({Op::kSplit, false, false, 0, static_cast<int32_t>(split + 1), 0});
            emit(n.kids[k], code);
            jumps.push_back(code.size());
            code.push_back({Op::kJmp, false, false, 0, 0, 0});
            code[split].y = static_cast<int32_t>(code.size());
          } else {
            emit(n.kids[k], code);
          }
        }
        for (size_t j : jumps) code[j].x = static_cast<int32_t>(code.size());
        break;
      }
      case Node::kLook: {
        std::vector<Inst> sub;
        emit(n.kids[0], sub);
        sub.push_back({Op::kMatch, false, false, 0, 0, 0});
        code.push_back({Op::kLook, false, n.negate, 0, static_cast<int32_t>(prog_.subs.size()), 0});
        in_subs_ += sub.size();
        prog_.subs.push_back(std::move(sub));
        break;
      }
      case Node::kRepeat: {
        if (n.possessive) {
          Node plain = n;
          plain.possessive = false;
          std::vector<Inst> sub;
          emit(plain, sub);
          sub.push_back({Op::kMatch, false, false, 0, 0, 0});
          code.push_back({Op::kAtomic, false, false, 0, static_cast<int32_t>(prog_.subs.size()), 0});
          in_subs_ += sub.size();
          prog_.subs.push_back(std::move(sub));
          break;
        }
        const Node& body = n.kids[0];
        for (int k = 0; k < n.min; ++k) emit(body, code);
        if (n.max < 0) {
          size_t split = code.size();
          code.push_back({Op::kSplit, false, false, 0, 0, 0});
          emit(body, code);
          code.push_back({Op::kJmp, false, false, 0, static_cast<int32_t>(split), 0});
          set_split(code[split], static_cast<int32_t>(split + 1), static_cast<int32_t>(code.size()), n.greedy);
          code[split].loop_exit = static_cast<int32_t>(code.size());
        } else {
          std::vector<size_t> splits;
          for (int k = n.min; k < n.max; ++k) {
            splits.push_back(code.size());
            code.push_back({Op::kSplit, false, false, 0, 0, 0});
            emit(body, code);
          }
          for (size_t s : splits) set_split(code[s], static_cast<int32_t>(s + 1), static_cast<int32_t>(code.size()), n.greedy);
        }
        break;
      }
    }
  }

 private:
  size_t in_subs_ = 0;  // instructions in the finished lookahead / possessive bodies

  static void set_split(Inst& in, int32_t body, int32_t after, bool greedy) {
    in.x = greedy ? body : after;
    in.y = greedy ? after : body;
  }
  Regex::Program& prog_;
};

// The memory of one find_all: for each program (the main one and each
// lookahead / possessive body) the (instruction, position) states already
// explored without reaching a match, and the result of each body at each
// position. A state's outcome does not depend on where the attempt started
// (there are no captures and ^ $ are absolute), so a state is explored at most
// once: the run is O(instructions x text length), the bit-state method, with
// the leftmost-first answer of a plain backtracking run.
//
// Memory is taken lazily, in chunks of kChunk positions per program, only
// where a program runs; chunks wholly before the search's start position are
// freed. What is held (and the caller's backtracking stack) must stay within
// kRegexMemoBaseBytes + kRegexMemoBytesPerChar per code point: past that
// visit() and result() answer "out of memory" and the search stops.
class Memo {
 public:
  Memo(const Regex::Program& prog, size_t n) : progs_(prog.subs.size() + 1) {
    budget_ = n > (SIZE_MAX - kRegexMemoBaseBytes) / kRegexMemoBytesPerChar ? SIZE_MAX
                                                                           : kRegexMemoBaseBytes + kRegexMemoBytesPerChar * n;
    for (size_t k = 0; k < progs_.size(); ++k) {
      const auto& code = k < prog.subs.size() ? prog.subs[k] : prog.code;
      progs_[k].words = (code.size() + 63) / 64;
      progs_[k].results = k < prog.subs.size();
    }
  }
  static constexpr int64_t kUnknown = -2;
  enum class Visit { kNew, kSeen, kOutOfMemory };
  // Marks (pc, at) of program `k`; kSeen when it was marked already.
  Visit visit(size_t k, int32_t pc, size_t at) {
    uint64_t* c = chunk(k, at);
    if (!c) return Visit::kOutOfMemory;
    uint64_t* row = c + (at % kChunk) * progs_[k].words;
    uint64_t bit = uint64_t{1} << (static_cast<uint32_t>(pc) & 63u);
    uint64_t& w = row[static_cast<size_t>(pc) >> 6];
    if (w & bit) return Visit::kSeen;
    w |= bit;
    return Visit::kNew;
  }
  // The result of body `k` at `at` (kUnknown until set); null when out of memory.
  int64_t* result(size_t k, size_t at) {
    uint64_t* c = chunk(k, at);
    if (!c) return nullptr;
    return reinterpret_cast<int64_t*>(c + kChunk * progs_[k].words) + at % kChunk;
  }
  // Forgets the states of program `k` at positions [from, to]: a match went
  // through some of them, so they are not failures. Returns the positions
  // covered (the work done, charged as steps).
  size_t forget(size_t k, size_t from, size_t to) {
    Prog& p = progs_[k];
    for (size_t at = from; at <= to; ++at) {
      const size_t c = at / kChunk;
      if (c < p.first || c >= p.first + p.chunks.size()) continue;
      if (auto& chunk = p.chunks[c - p.first]) std::fill_n(chunk.get() + (at % kChunk) * p.words, p.words, uint64_t{0});
    }
    return to - from + 1;
  }
  // Frees the chunks wholly before `at` (no attempt goes back there).
  void release_before(size_t at) {
    const size_t keep = at / kChunk;
    if (keep <= released_) return;
    released_ = keep;
    size_t w = 0;
    for (size_t k : live_) {
      Prog& p = progs_[k];
      if (p.last_index < keep) p.last_index = SIZE_MAX;
      while (!p.chunks.empty() && p.first < keep) {
        if (p.chunks.front()) bytes_ -= chunk_bytes(p);
        bytes_ -= sizeof(void*);
        p.chunks.pop_front();
        ++p.first;
      }
      if (p.chunks.empty()) p.live = false;
      else live_[w++] = k;
    }
    live_.resize(w);
  }
  // Whether `extra` more bytes (the caller's stack) fit beside what is held.
  bool fits(size_t extra) const { return extra <= budget_ - bytes_; }

 private:
  static constexpr size_t kChunk = 64;
  struct Prog {
    size_t words = 0;
    bool results = false, live = false;  // live: listed in live_
    size_t first = 0;  // the chunk index of chunks[0]
    std::deque<std::unique_ptr<uint64_t[]>> chunks;  // null: not used yet
    size_t last_index = SIZE_MAX;  // the chunk last asked for (most visits are to it)
    uint64_t* last = nullptr;
  };
  static size_t chunk_bytes(const Prog& p) { return (kChunk * p.words + (p.results ? kChunk : 0)) * sizeof(uint64_t); }
  bool take(size_t bytes) {
    if (bytes > budget_ - bytes_) return false;
    bytes_ += bytes;
    return true;
  }
  // The chunk of program `k` holding position `at`, made when first used;
  // null when that would go past the budget.
  uint64_t* chunk(size_t k, size_t at) {
    Prog& p = progs_[k];
    const size_t c = at / kChunk;
    if (c == p.last_index) return p.last;
    if (p.chunks.empty()) p.first = c;
    if (!p.live) {
      p.live = true;
      live_.push_back(k);
    }
    while (c < p.first) {  // not expected (attempts move forward), but kept correct
      if (!take(sizeof(void*))) return nullptr;
      p.chunks.emplace_front();
      --p.first;
    }
    while (c >= p.first + p.chunks.size()) {
      if (!take(sizeof(void*))) return nullptr;
      p.chunks.emplace_back();
    }
    auto& slot = p.chunks[c - p.first];
    if (!slot) {
      if (!take(chunk_bytes(p))) return nullptr;
      const size_t bits = kChunk * p.words;
      slot = std::make_unique<uint64_t[]>(bits + (p.results ? kChunk : 0));  // zeroed
      if (p.results) std::fill_n(reinterpret_cast<int64_t*>(slot.get() + bits), kChunk, kUnknown);
    }
    p.last_index = c;
    p.last = slot.get();
    return p.last;
  }
  size_t budget_ = 0, bytes_ = 0;
  size_t released_ = 0;  // chunks before this one are freed
  std::vector<Prog> progs_;
  std::vector<size_t> live_;  // programs holding chunks
};

// Depth-first run of program `k` (code) from `pos`, alternatives in pattern
// order; the end of the first match found, or -1. States already explored
// (memo) fail at once.
// Steps past `limit`, or memory past the memo's budget, end the run with kOverBudget.
constexpr int64_t kOverBudget = -3;

using Stack = std::vector<std::pair<int32_t, size_t>>;

int64_t run(const Regex::Program& prog, size_t k, std::u32string_view text, size_t pos, Stack& stack, Memo& memo,
            size_t& steps, size_t limit) {
  const std::vector<Inst>& code = k < prog.subs.size() ? prog.subs[k] : prog.code;
  size_t base = stack.size();
  stack.push_back({0, pos});
  const auto over_budget = [&] {
    stack.resize(base);
    return kOverBudget;
  };
  while (stack.size() > base) {
    auto [pc, at] = stack.back();
    stack.pop_back();
    while (true) {
      Memo::Visit v = memo.visit(k, pc, at);
      if (v == Memo::Visit::kSeen) {
        // Back at a loop's head at the same position: the iteration matched
        // the empty string, and the loop ends there (Perl's and Oniguruma's
        // empty-iteration rule) unless its exit was tried already.
        const Inst& head = code[static_cast<size_t>(pc)];
        if (head.op != Op::kSplit || head.loop_exit < 0) break;
        v = memo.visit(k, head.loop_exit, at);
        if (v == Memo::Visit::kSeen) break;
        pc = head.loop_exit;
      }
      if (v == Memo::Visit::kOutOfMemory || ++steps > limit || !memo.fits(stack.size() * sizeof(stack[0])))
        return over_budget();
      const Inst& in = code[static_cast<size_t>(pc)];
      bool ok = true;
      switch (in.op) {
        case Op::kChar:
          ok = at < text.size() && (in.icase ? fold(text[at]) : text[at]) == in.c;
          if (ok) ++at, ++pc;
          break;
        case Op::kAny:
          ok = at < text.size() && text[at] != '\n';
          if (ok) ++at, ++pc;
          break;
        case Op::kSet:
          ok = at < text.size() && prog.sets[static_cast<size_t>(in.x)].contains(text[at]);
          if (ok) ++at, ++pc;
          break;
        case Op::kSplit:
          stack.push_back({in.y, at});
          pc = in.x;
          break;
        case Op::kJmp: pc = in.x; break;
        case Op::kBegin:
          ok = at == 0;
          ++pc;
          break;
        case Op::kEnd:
          ok = at == text.size();
          ++pc;
          break;
        case Op::kLook:
        case Op::kAtomic: {
          size_t sub = static_cast<size_t>(in.x);
          int64_t* slot = memo.result(sub, at);
          if (!slot) return over_budget();
          int64_t end = *slot;
          if (end == Memo::kUnknown) {
            end = run(prog, sub, text, at, stack, memo, steps, limit);
            if (end == kOverBudget) return over_budget();
            if (end >= 0) steps += memo.forget(sub, at, static_cast<size_t>(end));
            // The slot again: the run may have made chunks (never freed during a run).
            slot = memo.result(sub, at);
            if (!slot) return over_budget();
            *slot = end;
          }
          if (in.op == Op::kLook) {
            ok = (end >= 0) != in.negate;
          } else {
            ok = end >= 0;
            if (ok) at = static_cast<size_t>(end);
          }
          ++pc;
          break;
        }
        case Op::kMatch:
          stack.resize(base);
          return static_cast<int64_t>(at);
      }
      if (!ok) break;
    }
  }
  return -1;
}

}  // namespace

Result<Regex> Regex::compile(std::string_view pattern) {
  auto prog = std::make_shared<Program>();
  Parser parser(utf8_to_u32(pattern), *prog);
  auto ast = parser.parse();
  if (!ast.ok()) return Status(ast.status().code(), ast.status().message() + " (pattern " + std::string(pattern) + ")");
  Compiler compiler(*prog);
  compiler.emit(*ast, prog->code);
  if (compiler.too_large) return Unsupported("regex: the pattern expands past " + std::to_string(kMaxRegexProgram) + " instructions (counted or nested repetitions; pattern " + std::string(pattern) + ")");
  prog->code.push_back({Op::kMatch, false, false, 0, 0, 0});
  Regex r;
  r.pattern_ = std::string(pattern);
  r.program_ = std::move(prog);
  return r;
}

namespace {
thread_local bool t_budget_exceeded = false;
}  // namespace

bool take_budget_exceeded() {
  const bool was = t_budget_exceeded;
  t_budget_exceeded = false;
  return was;
}

void Regex::find_all(std::u32string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  Stack stack;
  size_t steps = 0;
  const size_t limit = kBaseSteps + kStepsPerChar * text.size();
  Memo memo(*program_, text.size());
  // Chunks before the search's start are freed as it moves on.
  const size_t main = program_->subs.size();
  size_t pos = 0;
  while (pos <= text.size()) {
    int64_t end = run(*program_, main, text, pos, stack, memo, steps, limit);
    if (end == kOverBudget) {
      t_budget_exceeded = true;
      return;
    }
    if (end < 0) {
      memo.release_before(++pos);
      continue;
    }
    size_t e = static_cast<size_t>(end);
    memo.forget(main, e, e);  // the match went through states at e
    if (e == pos) {  // an empty match: skipped, and the search moves on
      memo.release_before(++pos);
      continue;
    }
    out.push_back({pos, e});
    pos = e;
    memo.release_before(pos);
  }
}

}  // namespace dlrt::embed::tok
