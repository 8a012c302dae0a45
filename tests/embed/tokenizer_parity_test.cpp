// Parity with Hugging Face's tokenizers for the three families: each
// tokenizer.json that tests/embed/make_tokenizer_parity.py trained (WordPiece,
// Unigram with NFKC or the precompiled charsmap and Metaspace, byte-level BPE)
// must give the same ids, type ids and offsets as `tokenizers` on every line.
// scripts/run_tests.sh makes the folder and sets DLRT_TOKENIZER_PARITY_DIR;
// without it the test skips with the reason. Also hand-checked cases of the
// parts (regex, precompiled lookups, truncation) and the errors.
#include <gtest/gtest.h>

#include <chrono>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_regex.h"
#include "embed_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using testing::read_lines;

// Character index of each byte offset (Python reports offsets in characters).
std::vector<size_t> char_index(const std::string& s) {
  std::vector<size_t> out(s.size() + 1, 0);
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    out[i] = chars;
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      out[i] = chars;
      ++chars;
    } else {
      out[i] = chars - 1;
    }
  }
  out[s.size()] = chars;
  return out;
}

struct FamilyResult {
  size_t records = 0, ids = 0, bad_ids = 0, bad_offsets = 0, decoded = 0, bad_decoded = 0;
};

FamilyResult check_family(const fs::path& dir) {
  FamilyResult r;
  auto tok = Tokenizer::from_json_file((dir / "tokenizer.json").string());
  EXPECT_TRUE(tok.ok()) << dir << ": " << tok.status().to_string();
  if (!tok.ok()) return r;
  auto lines = read_lines(dir / "reference.jsonl");
  EXPECT_GT(lines.size(), 3000u) << dir;
  size_t max_length = tok->configured_max_length();
  for (size_t i = 1; i < lines.size(); ++i) {
    auto j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded()) {
      ADD_FAILURE() << dir << " line " << i << " is not JSON";
      continue;
    }
    std::string text = j["text"].get<std::string>();
    bool pair = j.contains("pair");
    std::string second = pair ? j["pair"].get<std::string>() : "";
    Tokenizer::Offsets offsets;
    Encoding e = pair ? tok->encode_pair(text, second, max_length, &offsets) : tok->encode(text, max_length, &offsets);
    auto want = j["ids"].get<std::vector<int64_t>>();
    auto want_types = j["type_ids"].get<std::vector<int64_t>>();
    ++r.records;
    r.ids += want.size();
    // decode() of the reference ids, with and without the special tokens.
    for (const char* key : {"decoded", "decoded_all"}) {
      if (!j.contains(key)) continue;
      auto text_back = tok->decode(want, std::string(key) == "decoded");
      ++r.decoded;
      if (!text_back.ok() || *text_back != j[key].get<std::string>()) {
        if (++r.bad_decoded <= 5)
          ADD_FAILURE() << dir.filename() << ": " << key << " differs for " << nlohmann::json(text).dump() << "\n  dlrt: "
                        << (text_back.ok() ? nlohmann::json(*text_back).dump() : text_back.status().to_string())
                        << "\n  HF:   " << j[key].dump();
      }
    }
    if (e.ids != want || e.type_ids != want_types) {
      if (++r.bad_ids <= 5) {
        std::string got, exp;
        for (auto id : e.ids) got += "'" + tok->id_to_token(id) + "' ";
        for (auto id : want) exp += "'" + tok->id_to_token(id) + "' ";
        ADD_FAILURE() << dir.filename() << ": ids differ for " << nlohmann::json(text).dump()
                      << (pair ? " + " + nlohmann::json(second).dump() : "") << "\n  dlrt: " << got << "\n  HF:   " << exp;
      }
      continue;
    }
    // Offsets, in characters of the text each token came from.
    auto ca = char_index(text), cb = char_index(second);
    std::vector<int> seq(want.size(), 0);
    if (pair && j.contains("sequence_ids"))
      for (size_t k = 0; k < want.size(); ++k) seq[k] = j["sequence_ids"][k].is_number() ? j["sequence_ids"][k].get<int>() : 0;
    bool same = offsets.size() == want.size();
    for (size_t k = 0; same && k < offsets.size(); ++k) {
      const auto& idx = seq[k] == 1 ? cb : ca;
      auto [b, f] = offsets[k];
      if (b >= idx.size() || f >= idx.size()) {
        same = false;
        break;
      }
      same = idx[b] == j["offsets"][k][0].get<size_t>() && idx[f] == j["offsets"][k][1].get<size_t>();
    }
    if (!same && ++r.bad_offsets <= 5) {
      std::string got;
      for (size_t k = 0; k < offsets.size(); ++k) {
        const auto& idx = seq[k] == 1 ? cb : ca;
        got += "[" + std::to_string(offsets[k].first < idx.size() ? idx[offsets[k].first] : 9999) + "," +
               std::to_string(offsets[k].second < idx.size() ? idx[offsets[k].second] : 9999) + "] ";
      }
      ADD_FAILURE() << dir.filename() << ": offsets differ for " << nlohmann::json(text).dump() << "\n  dlrt: " << got
                    << "\n  HF:   " << j["offsets"].dump();
    }
  }
  return r;
}

TEST(EmbedTokenizerParity, ThreeFamiliesMatchHuggingFace) {
  const char* env = std::getenv("DLRT_TOKENIZER_PARITY_DIR");
  if (!env || !*env)
    GTEST_SKIP() << "DLRT_TOKENIZER_PARITY_DIR is not set (scripts/run_tests.sh makes the folder with "
                    "tests/embed/make_tokenizer_parity.py and sets it)";
  fs::path root(env);
  ASSERT_TRUE(fs::exists(root / "STAMP")) << root << " has no STAMP: make_tokenizer_parity.py did not finish";
  std::vector<fs::path> dirs;
  for (const auto& d : fs::directory_iterator(root))
    if (fs::exists(d.path() / "tokenizer.json")) dirs.push_back(d.path());
  std::sort(dirs.begin(), dirs.end());
  ASSERT_GE(dirs.size(), 3u);
  for (const fs::path& d : dirs) {
    FamilyResult r = check_family(d);
    std::printf("tokenizer parity %s: %zu encodings, %zu ids, %zu with other ids, %zu with other offsets, "
                "%zu decodes, %zu with other text\n",
                d.filename().c_str(), r.records, r.ids, r.bad_ids, r.bad_offsets, r.decoded, r.bad_decoded);
    EXPECT_EQ(r.bad_ids, 0u) << d.filename();
    EXPECT_EQ(r.bad_offsets, 0u) << d.filename();
    EXPECT_GT(r.decoded, 3000u) << d.filename();
    EXPECT_EQ(r.bad_decoded, 0u) << d.filename();
  }
}

// ---------------------------------------------------------------- parts

std::vector<std::string> matches(const std::string& pattern, const std::string& text) {
  auto re = tok::Regex::compile(pattern);
  EXPECT_TRUE(re.ok()) << re.status().to_string();
  if (!re.ok()) return {};
  std::u32string t = utf8_to_u32(text);
  std::vector<std::pair<size_t, size_t>> m;
  re->find_all(t, m);
  std::vector<std::string> out;
  for (auto [b, e] : m) {
    std::string s;
    for (size_t k = b; k < e; ++k) append_utf8(t[k], s);
    out.push_back(s);
  }
  return out;
}

TEST(EmbedTokenizerParts, Regex) {
  EXPECT_EQ(matches(" {2,}", "a  b   c d"), (std::vector<std::string>{"  ", "   "}));
  // GPT-2's pattern.
  const std::string gpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  EXPECT_EQ(matches(gpt2, "I'll see  you\tat 10:30 café!"),
            (std::vector<std::string>{"I", "'ll", " see", " ", " you", "\t", "at", " 10", ":", "30", " café", "!"}));
  // Qwen2 / cl100k-style: case-insensitive contractions, up to 3 digits, newlines.
  const std::string qwen =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  EXPECT_EQ(matches(qwen, "DON'T 123\n\nok"), (std::vector<std::string>{"DON", "'T", " ", "1", "2", "3", "\n\n", "ok"}));
  EXPECT_EQ(matches(R"(\p{N}{1,3})", "12345"), (std::vector<std::string>{"123", "45"}));
  EXPECT_EQ(matches(R"(a++b|a)", "aaa"), (std::vector<std::string>{"a", "a", "a"}));  // possessive: no backtracking
  EXPECT_EQ(matches(R"([^a-c]+)", "abxyzc"), (std::vector<std::string>{"xyz"}));
  // Runaway patterns end: an empty loop, exponential backtracking, deep nesting, huge counts.
  EXPECT_EQ(matches(R"((a*)*b)", std::string(40, 'a')), std::vector<std::string>{});
  EXPECT_EQ(tok::Regex::compile(std::string(100, '(') + "a" + std::string(100, ')')).status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(tok::Regex::compile("((a{1000}){1000}){1000}").status().code(), StatusCode::kUnsupported);
  for (const char* bad : {R"((?<=a)b)", R"((a)\1)", R"([a)", R"(\p{Greek})", R"((?<name>a))"}) {
    auto re = tok::Regex::compile(bad);
    EXPECT_EQ(re.status().code(), StatusCode::kUnsupported) << bad;
  }
}

// Patterns that backtrack exponentially or quadratically run in time linear in
// the text (before: 12.5 s for (a|a)*b on 1,000 a's), with the same matches.
TEST(EmbedTokenizerParts, RegexIsLinear) {
  for (const char* pattern : {"(a|a)*b", "(a|aa)*c", "(a*)*b", "(?:a+)+b", "(a|a)*(?=b)", "(a|a)*+b"}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(matches(pattern, std::string(20000, 'a')), std::vector<std::string>{}) << pattern;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 2.0) << pattern;
  }
  EXPECT_EQ(matches("(a|a)*b", "aaab xab"), (std::vector<std::string>{"aaab", "ab"}));
  EXPECT_EQ(matches("(a*)*b", "aaab"), (std::vector<std::string>{"aaab"}));
  EXPECT_EQ(matches("(a|ab)(c|bcd)", "abcd"), (std::vector<std::string>{"abcd"}));
  EXPECT_EQ(matches("a|ab", "ab"), (std::vector<std::string>{"a"}));  // leftmost-first, not longest
  EXPECT_EQ(matches("x*", "xx"), (std::vector<std::string>{"xx"}));
  // GPT-2's pattern on a long text whose spaces all go through \s+(?!\S).
  const std::string gpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "word  ";
  const auto m = matches(gpt2, text);
  ASSERT_EQ(m.size(), 4000u);
  EXPECT_EQ(m[0], "word");
  EXPECT_EQ(m[1], " ");
  EXPECT_EQ(m[2], " word");
  EXPECT_EQ(m.back(), "  ");
  EXPECT_EQ(tok::Regex::compile("(a{100}){300}").status().code(), StatusCode::kUnsupported);  // 30000 instructions
  // Quantifiers on quantifiers (x++++...) double the program at each level:
  // refused at once, not after 2^100 copies (a fuzzer's find).
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(tok::Regex::compile(R"(\p{N})" + std::string(100, '+')).status().code(), StatusCode::kUnsupported);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_TRUE(tok::Regex::compile(R"(\p{N}++)").ok());
}

// A program large enough to take more than kStepsPerChar steps a character
// stops at the budget and says so; patterns of real tokenizers stay far below.
TEST(EmbedTokenizerParts, RegexStepBudget) {
  auto big = tok::Regex::compile("(?:a{1,200}){1,50}b");  // 10000 instructions
  ASSERT_TRUE(big.ok()) << big.status().to_string();
  tok::take_budget_exceeded();
  std::vector<std::pair<size_t, size_t>> m;
  const std::u32string as(100000, U'a');
  const auto start = std::chrono::steady_clock::now();
  big->find_all(as, m);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_TRUE(tok::take_budget_exceeded());
  EXPECT_FALSE(tok::take_budget_exceeded());  // taking clears it
  big->find_all(U"aab", m);
  EXPECT_FALSE(tok::take_budget_exceeded());
  EXPECT_EQ(m.back(), (std::pair<size_t, size_t>{0, 3}));
  const std::string gpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  for (const std::string& text : {std::string(100000, ' ') + "x", std::string(50000, '1') + std::string(50000, '!')}) {
    matches(gpt2, text);
    EXPECT_FALSE(tok::take_budget_exceeded());
  }
}

// A small byte-level BPE written by hand: merges, offsets, truncation, pair.
TEST(EmbedTokenizerParts, ByteLevelBpeByHand) {
  nlohmann::json j = {
      {"version", "1.0"},
      {"added_tokens", {{{"id", 0}, {"content", "<s>"}, {"special", true}}, {{"id", 1}, {"content", "</s>"}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", {{"type", "RobertaProcessing"}, {"sep", {"</s>", 1}}, {"cls", {"<s>", 0}}, {"trim_offsets", true}, {"add_prefix_space", false}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"vocab", {{"<s>", 0}, {"</s>", 1}, {"h", 2}, {"i", 3}, {"Ġ", 4}, {"hi", 5}, {"Ġhi", 6}}},
        {"merges", {"h i", "Ġ hi"}}}}};
  auto t = Tokenizer::from_json_string(j.dump());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->family(), "BPE");
  Tokenizer::Offsets off;
  Encoding e = t->encode("hi hi", 0, &off);
  EXPECT_EQ(e.ids, (std::vector<int64_t>{0, 5, 6, 1}));
  ASSERT_EQ(off.size(), 4u);
  EXPECT_EQ(off[2], (std::pair<size_t, size_t>{3, 5}));  // trim_offsets leaves the space out
  EXPECT_EQ(t->encode("hi hi hi", 3).ids, (std::vector<int64_t>{0, 5, 1}));
  EXPECT_EQ(t->encode_pair("hi", "hi").ids, (std::vector<int64_t>{0, 5, 1, 1, 5, 1}));
  // Dropout would make ids random: refused, naming it.
  j["model"]["dropout"] = 0.1;
  auto d = Tokenizer::from_json_string(j.dump());
  EXPECT_EQ(d.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(d.status().message().find("dropout"), std::string::npos);
}

TEST(EmbedTokenizerParts, UnsupportedComponentsAreNamed) {
  auto base = [] {
    return nlohmann::json{{"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"vocab", {{"[UNK]", 0}, {"a", 1}}}}}};
  };
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* name;
  } cases[] = {
      {"normalizer", {{"type", "ByteLevel"}}, "ByteLevel"},
      {"pre_tokenizer", {{"type", "UnicodeScripts"}}, "UnicodeScripts"},
      {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(?<=a)b"}}}, {"behavior", "Isolated"}}, "lookbehind"},
      {"post_processor", {{"type", "Fancy"}}, "Fancy"},
  };
  for (const Case& c : cases) {
    auto j = base();
    j[c.key] = c.value;
    auto t = Tokenizer::from_json_string(j.dump());
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupported) << c.value.dump();
    EXPECT_NE(t.status().message().find(c.name), std::string::npos) << t.status().to_string();
  }
  auto j = base();
  j["model"] = {{"type", "Mystery"}};
  EXPECT_EQ(Tokenizer::from_json_string(j.dump()).status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace dlrt::embed
