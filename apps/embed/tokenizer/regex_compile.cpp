// Regex patterns to programs (regex_program.h): the pattern is parsed into a
// syntax tree, which is compiled into instructions (char, class, split, jump,
// lookahead, assertions, match).
#include "embed/tokenizer/regex_program.h"

#include <string>

#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed::tok {
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

}  // namespace

Result<std::shared_ptr<Regex::Program>> compile_regex_program(std::string_view pattern) {
  auto prog = std::make_shared<Regex::Program>();
  Parser parser(utf8_to_u32(pattern), *prog);
  auto ast = parser.parse();
  if (!ast.ok()) return Status(ast.status().code(), ast.status().message() + " (pattern " + std::string(pattern) + ")");
  Compiler compiler(*prog);
  compiler.emit(*ast, prog->code);
  if (compiler.too_large) return Unsupported("regex: the pattern expands past " + std::to_string(kMaxRegexProgram) + " instructions (counted or nested repetitions; pattern " + std::string(pattern) + ")");
  prog->code.push_back({Op::kMatch, false, false, 0, 0, 0});
  return prog;
}

}  // namespace dlrt::embed::tok
