// A small backtracking regex engine (see tokenizer_regex.h) with a memory of
// the states it explored (linear in the text): the program a pattern compiles
// to (regex_program.h) runs depth-first, alternatives in pattern order, which
// gives the leftmost-first match Oniguruma gives.
#include "embed/tokenizer/tokenizer_regex.h"

#include <algorithm>
#include <deque>

#include "embed/tokenizer/regex_program.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed::tok {

namespace {

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
  DLRT_ASSIGN_OR_RETURN(std::shared_ptr<Program> prog, compile_regex_program(pattern));
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
