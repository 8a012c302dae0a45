// Added tokens (tokenizer.json's added_tokens) matched by one automaton:
// the same splits as a leftmost-longest scan that tries every token at every
// position (with single_word, lstrip and rstrip), on generated token sets and
// texts; work per input code point bounded whatever the tokens (sets built
// or generated to be adversarial for a per-token scan); special-token lookups
// by table; a pair's first text tokenized once for many second texts; and
// vocabulary sizes that would make work per character unbounded refused.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

struct AddedSpec {
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false;
};

// WordPiece over the single letters of `letters` (and their ## forms), split
// on whitespace, with `added` after them (ids in order).
json letters_tokenizer(const std::string& letters, const std::vector<AddedSpec>& added) {
  json vocab = json::object();
  vocab["[UNK]"] = 0;
  for (char c : letters) {
    vocab[std::string(1, c)] = vocab.size();
    vocab["##" + std::string(1, c)] = vocab.size();
  }
  json tokens = json::array();
  for (const AddedSpec& a : added)
    tokens.push_back({{"id", vocab.size() + tokens.size()},
                      {"content", a.content},
                      {"single_word", a.single_word},
                      {"lstrip", a.lstrip},
                      {"rstrip", a.rstrip},
                      {"normalized", false},
                      {"special", true}});
  return {{"version", "1.0"},
          {"added_tokens", tokens},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "WhitespaceSplit"}}},
          {"model",
           {{"type", "WordPiece"},
            {"unk_token", "[UNK]"},
            {"continuing_subword_prefix", "##"},
            {"max_input_chars_per_word", 1000},
            {"vocab", vocab}}}};
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The ids of `text` by the scan the automaton replaced: at each position
// every added token is tried, the longest that matches wins (the first of
// equal ones); then single_word, lstrip and rstrip as Hugging Face's
// AddedVocabulary::find_matches; the text between goes word by word (split on
// spaces) through WordPiece over single letters.
std::vector<int64_t> scanned_ids(const std::string& text, const std::vector<AddedSpec>& added, const json& vocab) {
  const int64_t first_added = static_cast<int64_t>(vocab.size());
  std::vector<int64_t> ids;
  auto words = [&](size_t b, size_t e) {
    for (size_t i = b; i < e;) {
      while (i < e && text[i] == ' ') ++i;
      size_t j = i;
      while (j < e && text[j] != ' ') ++j;
      for (size_t k = i; k < j; ++k)
        ids.push_back(vocab[(k == i ? "" : "##") + std::string(1, text[k])].get<int64_t>());
      i = j;
    }
  };
  const size_t n = text.size();
  size_t start_offset = 0;
  for (size_t i = 0; i < n;) {
    size_t best = added.size();
    for (size_t k = 0; k < added.size(); ++k)
      if (text.compare(i, added[k].content.size(), added[k].content) == 0 &&
          (best == added.size() || added[k].content.size() > added[best].content.size()))
        best = k;
    if (best == added.size()) {
      ++i;
      continue;
    }
    const AddedSpec& t = added[best];
    size_t start = i, stop = i + t.content.size();
    i = stop;
    if (t.single_word && ((start > 0 && word_char(text[start - 1])) || (stop < n && word_char(text[stop])))) continue;
    if (t.lstrip) {
      size_t s = start;
      while (s > 0 && text[s - 1] == ' ') --s;
      start = std::max(s, start_offset);
    }
    if (t.rstrip)
      while (stop < n && text[stop] == ' ') ++stop;
    i = stop;
    words(start_offset, start);
    ids.push_back(first_added + static_cast<int64_t>(best));
    start_offset = stop;
  }
  words(start_offset, n);
  return ids;
}

std::string random_text(std::mt19937& rng, const std::string& alphabet, size_t max_length) {
  std::string s(std::uniform_int_distribution<size_t>(0, max_length)(rng), ' ');
  for (char& c : s) c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
  return s;
}

TEST(EmbedTokenizerAdded, AutomatonMatchesTheScanOfEveryToken) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<AddedSpec> added(std::uniform_int_distribution<size_t>(1, 12)(rng));
    for (AddedSpec& a : added) {
      do a.content = random_text(rng, round % 2 ? "ab" : "abx ", 5);
      while (a.content.empty() || a.content.find_first_not_of(' ') == std::string::npos);
      a.single_word = rng() % 4 == 0;
      a.lstrip = rng() % 3 == 0;
      a.rstrip = rng() % 3 == 0;
    }
    const json j = letters_tokenizer("abx", added);
    auto t = Tokenizer::from_json_string(j.dump());
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    for (int k = 0; k < 20; ++k) {
      const std::string text = random_text(rng, "aabbx  ", 40);
      const Encoding e = t->encode(text);
      EXPECT_EQ(e.ids, scanned_ids(text, added, j["model"]["vocab"]))
          << "round " << round << ", text \"" << text << "\", tokens " << j["added_tokens"].dump();
    }
  }
}

// Token sets that cost a per-token scan (tokens x shared prefix) per
// character: long shared prefixes, many tokens with one prefix, nested
// prefixes. The automaton tries at most two transitions per code point.
TEST(EmbedTokenizerAdded, WorkPerCodePointIsBoundedWhateverTheTokens) {
  std::vector<std::pair<const char*, std::vector<AddedSpec>>> sets(3);
  sets[0].first = "400 tokens of 200 a's and a suffix";
  for (int k = 0; k < 400; ++k) sets[0].second.push_back({std::string(200, 'a') + "x" + std::to_string(k)});
  sets[1].first = "3000 reserved <unusedN> tokens";
  for (int k = 0; k < 3000; ++k) sets[1].second.push_back({"<unused" + std::to_string(k) + ">"});
  sets[2].first = "a, aa, ... 300 a's";
  for (int k = 1; k <= 300; ++k) sets[2].second.push_back({std::string(static_cast<size_t>(k), 'a') + "b"});
  const std::vector<std::string> texts = {std::string(20000, 'a'),
                                          [] {
                                            std::string s;
                                            while (s.size() < 20000) s += "<unused";
                                            return s;
                                          }(),
                                          std::string(5000, 'a') + "b" + std::string(5000, 'a')};
  for (const auto& [what, added] : sets) {
    auto t = Tokenizer::from_json_string(letters_tokenizer("abx<>unsed0123456789", added).dump());
    ASSERT_TRUE(t.ok()) << what << ": " << t.status().to_string();
    for (const std::string& text : texts) {
      tok::take_added_match_steps();
      const Encoding e = t->encode(text);
      const size_t steps = tok::take_added_match_steps();
      EXPECT_GT(e.ids.size(), 0u);
      EXPECT_LE(steps, 2 * text.size() + 2) << what << ", a text of " << text.size() << " characters";
    }
  }
  // The nested set still finds its longest match: 5000 a's then b is the token a*300 + b, after 4700 letters.
  auto t = Tokenizer::from_json_string(letters_tokenizer("ab", sets[2].second).dump());
  ASSERT_TRUE(t.ok());
  const Encoding e = t->encode(std::string(400, 'a') + "b");
  ASSERT_EQ(e.ids.size(), 101u);
  EXPECT_EQ(e.ids.back(), 5 + 299);  // [UNK], a, ##a, b, ##b, then the tokens in order
}

TEST(EmbedTokenizerAdded, SpecialTokensByTable) {
  std::vector<AddedSpec> added = {{"<s>"}, {"</s>"}};
  json j = letters_tokenizer("ab", added);
  j["added_tokens"][1]["special"] = false;
  auto t = Tokenizer::from_json_string(j.dump());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->is_special(5));
  EXPECT_FALSE(t->is_special(6));
  EXPECT_FALSE(t->is_special(1));
  EXPECT_FALSE(t->is_special(-1));
  EXPECT_FALSE(t->is_special(1000));
  auto text = t->decode({5, 1, 6, 3}, true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "a </s> b");  // no decoder: tokens joined with spaces, the special one skipped
}

// encode_pair_checked(encode_first_checked(a), b) is encode_pair_checked(a, b)
// for every truncation strategy, direction and length, and tokenizes `a` once.
TEST(EmbedTokenizerAdded, PairFirstTokenizedOnceIsThePair) {
  std::mt19937 rng(11);
  const std::vector<std::string> words = {"hello", "world", "unaffable", "cafe", "a", "!", "[SEP]", "abc"};
  auto sentence = [&](size_t most) {
    std::string s;
    for (size_t n = std::uniform_int_distribution<size_t>(0, most)(rng); n > 0; --n)
      s += (s.empty() ? "" : " ") + words[rng() % words.size()];
    return s;
  };
  std::vector<Tokenizer> tokenizers;
  auto bert = Tokenizer::from_vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "un", "##aff",
                                     "##able", "!", "cafe", "a", "##b", "##c"});
  ASSERT_TRUE(bert.ok());
  tokenizers.push_back(*bert);
  for (const char* strategy : {"longest_first", "only_first", "only_second"})
    for (const char* direction : {"Right", "Left"}) {
      json j = letters_tokenizer("abcdefghijklmnopqrstuvwxyz!", {{"[SEP]"}});
      j["truncation"] = {{"max_length", 0}, {"strategy", strategy}, {"direction", direction}};
      auto t = Tokenizer::from_json_string(j.dump());
      ASSERT_TRUE(t.ok()) << t.status().to_string();
      tokenizers.push_back(*t);
    }
  for (const Tokenizer& t : tokenizers) {
    for (int round = 0; round < 30; ++round) {
      const std::string a = sentence(12);
      auto first = t.encode_first_checked(a);
      ASSERT_TRUE(first.ok());
      for (int k = 0; k < 10; ++k) {
        const std::string b = sentence(12);
        const size_t limit = std::uniform_int_distribution<size_t>(0, 30)(rng);
        auto want = t.encode_pair_checked(a, b, limit);
        auto got = t.encode_pair_checked(*first, b, limit);
        ASSERT_TRUE(want.ok() && got.ok());
        EXPECT_EQ(got->ids, want->ids) << "\"" << a << "\" + \"" << b << "\", max_length " << limit;
        EXPECT_EQ(got->type_ids, want->type_ids);
      }
    }
  }
  // A long first text and 256 short second ones: the first is scanned once.
  const std::string query(100000, 'a');
  tok::take_added_match_steps();
  auto first = tokenizers[0].encode_first_checked(query);
  ASSERT_TRUE(first.ok());
  for (int k = 0; k < 256; ++k) ASSERT_TRUE(tokenizers[0].encode_pair_checked(*first, "b", 32).ok());
  EXPECT_LE(tok::take_added_match_steps(), 2 * (query.size() + 256) + 2 * 256);
}

// An encoding truncated to max_length stores only the tokens it can keep
// (Encoded::keep): its ids are still the cut of the whole encoding, from the
// right or the left, and `untruncated` still counts every token.
TEST(EmbedTokenizerAdded, TruncatedEncodingIsTheCutOfTheWhole) {
  std::mt19937 rng(5);
  for (const char* direction : {"Right", "Left"}) {
    json j = letters_tokenizer("abcdefghij", {{"[X]"}});
    j["truncation"] = {{"max_length", 0}, {"strategy", "longest_first"}, {"direction", direction}};
    auto t = Tokenizer::from_json_string(j.dump());
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    for (int round = 0; round < 200; ++round) {
      std::string text;
      for (size_t n = rng() % 40; n > 0; --n) text += std::string(1 + rng() % 6, "abcdefghij"[rng() % 10]) + (rng() % 5 ? " " : " [X] ");
      auto whole = t->encode_checked(text);
      ASSERT_TRUE(whole.ok());
      const size_t limit = 1 + rng() % 30;
      size_t untruncated = 0;
      auto cut = t->encode_checked(text, limit, nullptr, &untruncated);
      ASSERT_TRUE(cut.ok());
      EXPECT_EQ(untruncated, whole->ids.size()) << text;
      const size_t keep = std::min(limit, whole->ids.size());
      const auto from = std::string(direction) == "Left" ? whole->ids.end() - static_cast<std::ptrdiff_t>(keep)
                                                          : whole->ids.begin();
      EXPECT_EQ(cut->ids, std::vector<int64_t>(from, from + static_cast<std::ptrdiff_t>(keep)))
          << direction << " " << limit << ": \"" << text << "\"";
    }
  }
}

// A TokenizeDeadline that has passed stops the *_checked calls with
// kCancelled (the server's 504); without one, or once it is gone, they run.
TEST(EmbedTokenizerAdded, DeadlineStopsCheckedTokenizing) {
  auto t = Tokenizer::from_vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##a"});
  ASSERT_TRUE(t.ok());
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "a ";
  {
    const TokenizeDeadline passed(std::chrono::steady_clock::now() - std::chrono::milliseconds(1));
    auto e = t->encode_checked(text);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), StatusCode::kCancelled) << e.status().to_string();
    auto pair = t->encode_pair_checked("a", text);
    EXPECT_EQ(pair.status().code(), StatusCode::kCancelled);
    const TokenizeDeadline later(std::chrono::steady_clock::now() + std::chrono::hours(1));
    EXPECT_TRUE(t->encode_checked(text).ok());  // the innermost deadline applies
  }
  auto e = t->encode_checked(text);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->ids.size(), 5002u);
}

// An input over the model's length is tokenized once: the cut, whether it
// was cut and its token count before the cut all come from one pass (it was
// encoded again at the cut, and once more for a 413's count).
TEST(EmbedTokenizerAdded, OverLengthInputIsTokenizedOnce) {
  auto t = Tokenizer::from_vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##a", "b"});
  ASSERT_TRUE(t.ok());
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "a b ";
  int passes = 0;
  auto encode = [&](size_t limit, size_t* untruncated) {
    ++passes;
    return t->encode_checked(text, limit, nullptr, untruncated);
  };
  bool truncated = false;
  size_t tokens = 0;
  auto e = encode_within(16, &truncated, encode, &tokens);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(passes, 1);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(tokens, 6002u);  // [CLS], 6000 words, [SEP]
  ASSERT_EQ(e->ids.size(), 16u);
  EXPECT_EQ(e->ids.front(), 2);
  EXPECT_EQ(e->ids.back(), 3);  // [SEP] kept at the cut
  passes = 0;
  text = "a b";
  e = encode_within(16, &truncated, encode, &tokens);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(passes, 1);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(tokens, 4u);
}

// Generated adversarial token sets: many tokens over a two-letter alphabet
// built from a few shared stems (nested, overlapping, near-misses), and texts
// of their prefixes glued together, so a per-token scan would retry long
// partial matches everywhere. The automaton's work stays within two
// transitions per code point of the text, whatever the set.
TEST(EmbedTokenizerAdded, WorkPerCodePointIsBoundedOnGeneratedTokenSets) {
  std::mt19937 rng(80);
  for (int round = 0; round < 12; ++round) {
    std::vector<std::string> stems(std::uniform_int_distribution<size_t>(1, 6)(rng));
    for (std::string& stem : stems) stem = random_text(rng, "ab", 300) + "a";
    std::vector<AddedSpec> added(std::uniform_int_distribution<size_t>(1, 1500)(rng));
    for (AddedSpec& a : added) {
      const std::string& stem = stems[rng() % stems.size()];
      const size_t cut = std::uniform_int_distribution<size_t>(1, stem.size())(rng);
      a.content = stem.substr(0, cut) + random_text(rng, "ab", 4);
    }
    auto t = Tokenizer::from_json_string(letters_tokenizer("ab", added).dump());
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    std::string text;
    while (text.size() < 30000) {
      const AddedSpec& a = added[rng() % added.size()];
      text += a.content.substr(0, a.content.size() - 1);  // the token but its last letter: a near miss
    }
    tok::take_added_match_steps();
    const Encoding e = t->encode(text);
    const size_t steps = tok::take_added_match_steps();
    EXPECT_GT(e.ids.size(), 0u);
    EXPECT_LE(steps, 2 * text.size() + 2) << "round " << round << ": " << added.size() << " tokens";
  }
}

// A folder whose vocabulary would make a request's work per character
// unbounded is refused at load, naming the limit (tokenizer_limits.h): a
// WordPiece token a word can match longer than kMaxWordPieceMatchChars, a
// Unigram piece over kMaxUnigramPieceBytes. Within the limits they load.
TEST(EmbedTokenizerAdded, VocabularySizesPastTheLimitsAreRefusedAtLoad) {
  json wp = letters_tokenizer("ab", {});
  wp["model"]["vocab"][std::string(300, 'a')] = wp["model"]["vocab"].size();
  auto refused = Tokenizer::from_json_string(wp.dump());  // max_input_chars_per_word 1000
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(refused.status().message().find("the limit is 256"), std::string::npos) << refused.status().message();
  wp["model"]["max_input_chars_per_word"] = 100;  // no word can reach it: loads, and still matches what it can
  auto loads = Tokenizer::from_json_string(wp.dump());
  ASSERT_TRUE(loads.ok()) << loads.status().to_string();
  EXPECT_EQ(loads->encode(std::string(100, 'a')).ids.size(), 100u);

  auto unigram = [](size_t piece_bytes) {
    return json{{"version", "1.0"},
                {"added_tokens", json::array()},
                {"normalizer", nullptr},
                {"pre_tokenizer", nullptr},
                {"model",
                 {{"type", "Unigram"},
                  {"unk_id", 0},
                  {"vocab", json::array({json::array({"<unk>", 0.0}), json::array({"a", -1.0}),
                                         json::array({std::string(piece_bytes, 'a'), -2.0})})}}}}
        .dump();
  };
  auto long_piece = Tokenizer::from_json_string(unigram(1025));
  ASSERT_FALSE(long_piece.ok());
  EXPECT_NE(long_piece.status().message().find("the limit is 1024"), std::string::npos)
      << long_piece.status().message();
  auto fits = Tokenizer::from_json_string(unigram(1024));
  ASSERT_TRUE(fits.ok()) << fits.status().to_string();
  EXPECT_EQ(fits->encode(std::string(2048, 'a')).ids.size(), 2u);
}

}  // namespace
}  // namespace dlrt::embed
