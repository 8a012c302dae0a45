// BERT WordPiece tokenizer: hand-checked cases on a tiny vocab (always run) and
// parity with Hugging Face's BertTokenizerFast on a multilingual corpus
// (tests/embed/data/bert_reference.jsonl, from make_reference.py) using the
// shared bert-uncased vocab (skipped with a reason when ../shared is absent).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "embed/tokenizer.h"
#include "embed/unicode_tables.h"
#include "embed_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using testing::bert_layout;
using testing::read_lines;
using testing::shared_dir;
using testing::slurp;

std::vector<std::string> tiny_vocab() {
  return {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "un", "##aff", "##able",
          "!", ",", ".", "cafe", "中", "国", "a", "##b", "##c", "Hello", "é", "$", "ı", "i"};
}

TEST(EmbedTokenizer, BasicWordPieceAndSpecials) {
  auto t = Tokenizer::from_vocab(tiny_vocab());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  Encoding e = t->encode("Hello, worlds! unaffable");
  EXPECT_EQ(e.ids, (std::vector<int64_t>{2, 5, 12, 6, 7, 11, 8, 9, 10, 3}));
  EXPECT_EQ(e.type_ids, std::vector<int64_t>(10, 0));
  EXPECT_EQ(e.attention_mask, std::vector<int64_t>(10, 1));
  // Unknown piece makes the whole word [UNK]; accents stripped and lower-cased.
  EXPECT_EQ(t->encode("abd CAFÉ").ids, (std::vector<int64_t>{2, 1, 14, 3}));
  EXPECT_EQ(t->encode("abc").ids, (std::vector<int64_t>{2, 17, 18, 19, 3}));
  // CJK characters split even without spaces; [MASK] matched verbatim, [mask] not.
  EXPECT_EQ(t->encode("中国[MASK]").ids, (std::vector<int64_t>{2, 15, 16, 4, 3}));
  EXPECT_EQ(t->tokenize("[mask]"), (std::vector<std::string>{"[UNK]", "[UNK]", "[UNK]"}));
  // Empty, whitespace-only and control-only texts: just [CLS] [SEP].
  EXPECT_EQ(t->encode("").ids, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->encode(" \t\r\n\u3000").ids, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->encode(std::string("\x00\x01\x7f", 3)).ids, (std::vector<int64_t>{2, 3}));
  // ASCII '$' is punctuation for BERT though it is a symbol (Sc) in Unicode.
  EXPECT_EQ(t->tokenize("a$a"), (std::vector<std::string>{"a", "$", "a"}));
}

TEST(EmbedTokenizer, LongWordsTruncationAndBadUtf8) {
  auto t = Tokenizer::from_vocab(tiny_vocab());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->encode(std::string(100, 'a')).ids.size(), 2u + 1u);  // a + ##a... -> UNK (no ##a)
  EXPECT_EQ(t->encode("a" + std::string(99, 'b')).ids.size(), 2u + 100u);
  EXPECT_EQ(t->encode("a" + std::string(100, 'b')).ids, (std::vector<int64_t>{2, 1, 3}));  // > 100 chars
  Encoding e = t->encode("hello hello hello hello", 4);
  EXPECT_EQ(e.ids, (std::vector<int64_t>{2, 5, 5, 3}));
  EXPECT_EQ(t->encode("hello hello", 1).ids, (std::vector<int64_t>{2, 3}));  // specials kept
  // Invalid UTF-8 decodes to U+FFFD, which clean_text removes: no crash, no garbage.
  EXPECT_EQ(t->encode("hello\xff\xfe\xc3 world\xe2\x82").ids, (std::vector<int64_t>{2, 5, 6, 3}));
  EXPECT_EQ(utf8_to_u32("\xed\xa0\x80"), std::u32string(1, 0xFFFD));  // a surrogate is invalid
}

TEST(EmbedTokenizer, CasedAndAccentOptions) {
  NormalizerConfig cased;
  cased.lowercase = false;
  auto t = Tokenizer::from_vocab(tiny_vocab(), cased);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->encode("Hello é").ids, (std::vector<int64_t>{2, 20, 21, 3}));
  NormalizerConfig keep;
  keep.strip_accents = false;
  auto k = Tokenizer::from_vocab(tiny_vocab(), keep);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->encode("É").ids, (std::vector<int64_t>{2, 21, 3}));     // lower-cased, accent kept
  EXPECT_EQ(t->encode("e\u0301").ids, (std::vector<int64_t>{2, 1, 3}));  // cased: no NFD at all
}

TEST(EmbedTokenizer, UnicodeTables) {
  using namespace unicode;
  EXPECT_EQ(char_class(','), kPunct);
  EXPECT_EQ(char_class(0x3002), kPunct);  // ideographic full stop
  EXPECT_EQ(char_class(0x0301), kMn);
  EXPECT_EQ(char_class(0x200B), kOther);  // zero width space (Cf)
  EXPECT_EQ(char_class(0x3000), kSpace);
  EXPECT_EQ(char_class(0x0378), kNone);   // unassigned: kept, as Hugging Face does
  uint32_t d[4];
  ASSERT_EQ(decompose(0xD55C, d), 3);  // 한 -> ㅎ ㅏ ㄴ (conjoining jamo)
  EXPECT_EQ(d[0], 0x1112u);
  EXPECT_EQ(d[1], 0x1161u);
  EXPECT_EQ(d[2], 0x11ABu);
  ASSERT_EQ(decompose(0x1E69, d), 3);  // ṩ -> s + dot below + dot above
  EXPECT_EQ(combining_class(0x0323), 220);
  uint32_t l[3];
  ASSERT_EQ(to_lower(0x0130, l), 2);  // İ -> i + combining dot above
  EXPECT_EQ(l[1], 0x0307u);
}

TEST(EmbedTokenizer, JsonErrors) {
  EXPECT_EQ(Tokenizer::from_json_string("{").status().code(), StatusCode::kInvalidModel);
  EXPECT_EQ(Tokenizer::from_json_string("[]").status().code(), StatusCode::kInvalidModel);
  EXPECT_EQ(Tokenizer::from_json_string(R"({"model":{"type":"CharBPE","vocab":{}}})").status().code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(Tokenizer::from_json_string(R"({"model":{"type":"BPE","vocab":{}}})").status().code(),
            StatusCode::kInvalidModel);  // an empty vocabulary
  EXPECT_EQ(Tokenizer::from_json_string(R"({"model":{"type":"WordPiece","vocab":{"a":0}}})").status().code(),
            StatusCode::kInvalidModel);  // no [UNK]
  EXPECT_EQ(Tokenizer::from_json_string(R"({"model":{"type":"WordPiece","vocab":{"[UNK]":"x"}}})").status().code(),
            StatusCode::kInvalidModel);
  // Ids far past the token count (each would cost a table slot for every id below it) are refused,
  // in the vocabulary and in added_tokens; a few gaps are not.
  for (const char* sparse :
       {R"({"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"ab":38885514}}})",
        R"({"model":{"type":"BPE","vocab":{"a":0,"b":5000000},"merges":[]}})",
        R"({"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0}},"added_tokens":[{"id":60000000,"content":"[X]"}]})"}) {
    auto bad = Tokenizer::from_json_string(sparse);
    ASSERT_FALSE(bad.ok()) << sparse;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel) << sparse;
    EXPECT_NE(bad.status().message().find("ids must be dense"), std::string::npos) << bad.status().to_string();
  }
  EXPECT_TRUE(Tokenizer::from_json_string(R"({"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"a":3000}}})").ok());
  auto ok = Tokenizer::from_json_string(
      R"({"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"hi":1}},"normalizer":{"type":"BertNormalizer","lowercase":true},"pre_tokenizer":{"type":"BertPreTokenizer"}})");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->encode("HI there").ids, (std::vector<int64_t>{1, 0}));  // no post-processor: no specials
  // Without a pre-tokenizer the whole text is one word, as in Hugging Face's tokenizers.
  auto whole = Tokenizer::from_json_string(
      R"({"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"hi":1}},"normalizer":{"type":"BertNormalizer","lowercase":true}})");
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_EQ(whole->encode("HI there").ids, (std::vector<int64_t>{0}));
  EXPECT_EQ(Tokenizer::from_folder("/nonexistent/dir").status().code(), StatusCode::kNotFound);
  // An added token's id is range-checked like the vocabulary's (1e15 once aborted with bad_alloc).
  auto huge = Tokenizer::from_json_string(
      R"({"model":{"type":"WordPiece","vocab":{"[UNK]":0}},"added_tokens":[{"id":1000000000000000,"content":"[X]"}]})");
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(huge.status().message().find("added_tokens[\"[X]\"] has id 1000000000000000"), std::string::npos)
      << huge.status().to_string();
}

// ---------------------------------------------------------------- parity

struct Reference {
  std::string text;
  nlohmann::json rec;
};

std::vector<Reference> load_reference() {
  std::vector<Reference> out;
  auto lines = read_lines(fs::path(DLRT_EMBED_TEST_DATA) / "bert_reference.jsonl");
  for (size_t i = 1; i < lines.size(); ++i) {  // line 0: generator versions
    auto j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded()) continue;
    out.push_back({j["text"].get<std::string>(), j});
  }
  return out;
}

std::vector<std::string> shared_vocab_or_skip(std::string* reason) {
  fs::path p = shared_dir() / "data" / "bert-uncased-vocab.txt";
  if (!fs::exists(p)) {
    *reason = p.string() + " is absent (set DLRT_SHARED_DIR to the folder holding data/bert-uncased-vocab.txt)";
    return {};
  }
  return read_lines(p);
}

// Compares `key` ids for every reference line; returns the number of ids compared.
size_t expect_parity(const Tokenizer& t, const std::vector<Reference>& refs, const std::string& key,
                     size_t max_length = 0) {
  size_t compared = 0, bad = 0;
  for (const Reference& r : refs) {
    std::vector<int64_t> want = r.rec[key].get<std::vector<int64_t>>();
    Encoding e = t.encode(r.text, max_length);
    compared += want.size();
    if (e.ids != want) {
      ++bad;
      if (bad <= 5) {
        std::string got, exp;
        for (auto id : e.ids) got += t.id_to_token(id) + " ";
        for (auto id : want) exp += t.id_to_token(id) + " ";
        ADD_FAILURE() << key << " mismatch for " << nlohmann::json(r.text).dump() << "\n  dlrt: " << got
                      << "\n  HF:   " << exp;
      }
    }
  }
  EXPECT_EQ(bad, 0u) << key << ": " << bad << " of " << refs.size() << " lines differ";
  return compared;
}

TEST(EmbedTokenizerParity, HuggingFaceBertUncased) {
  std::string reason;
  auto raw = shared_vocab_or_skip(&reason);
  if (raw.empty()) GTEST_SKIP() << reason;
  auto refs = load_reference();
  ASSERT_GT(refs.size(), 300u);
  auto vocab = bert_layout(raw);
  auto uncased = Tokenizer::from_vocab(vocab);
  ASSERT_TRUE(uncased.ok()) << uncased.status().to_string();
  NormalizerConfig cased_cfg;
  cased_cfg.lowercase = false;
  auto cased = Tokenizer::from_vocab(vocab, cased_cfg);
  NormalizerConfig keep_cfg;
  keep_cfg.strip_accents = false;
  auto keep = Tokenizer::from_vocab(vocab, keep_cfg);
  auto raw_tok = Tokenizer::from_vocab_file((shared_dir() / "data" / "bert-uncased-vocab.txt").string());
  ASSERT_TRUE(cased.ok() && keep.ok() && raw_tok.ok());
  size_t n = 0;
  n += expect_parity(*uncased, refs, "ids");
  n += expect_parity(*cased, refs, "ids_cased");
  n += expect_parity(*keep, refs, "ids_keep_acc");
  n += expect_parity(*uncased, refs, "ids_max16", 16);
  n += expect_parity(*raw_tok, refs, "ids_raw");
  std::printf("tokenizer parity: %zu lines x 5 configurations, %zu ids compared with HF tokenizers\n", refs.size(), n);
}

TEST(EmbedTokenizerParity, TokenizerJsonMatchesVocabTxt) {
  std::string reason;
  auto raw = shared_vocab_or_skip(&reason);
  if (raw.empty()) GTEST_SKIP() << reason;
  auto vocab = bert_layout(raw);
  // HF's own tokenizer.json for this vocab, vocab emptied; refill it.
  auto j = nlohmann::json::parse(slurp(fs::path(DLRT_EMBED_TEST_DATA) / "bert_uncased_tokenizer.template.json"),
                                 nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  for (size_t i = 0; i < vocab.size(); ++i) j["model"]["vocab"][vocab[i]] = i;
  auto from_json = Tokenizer::from_json_string(j.dump());
  ASSERT_TRUE(from_json.ok()) << from_json.status().to_string();
  EXPECT_EQ(from_json->configured_max_length(), 16u);  // the template's truncation
  auto from_txt = Tokenizer::from_vocab(vocab);
  ASSERT_TRUE(from_txt.ok());
  auto refs = load_reference();
  size_t n = expect_parity(*from_json, refs, "ids") + expect_parity(*from_json, refs, "ids_max16", 16);
  for (const Reference& r : refs) ASSERT_EQ(from_json->encode(r.text).ids, from_txt->encode(r.text).ids) << r.text;
  std::printf("tokenizer.json parity: %zu ids compared\n", n);
  // A folder with vocab.txt + tokenizer_config.json (do_lower_case false) reads the options.
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test_tok_folder";
  fs::create_directories(dir);
  {
    std::ofstream v(dir / "vocab.txt");
    for (const auto& t : vocab) v << t << "\n";
    std::ofstream c(dir / "tokenizer_config.json");
    c << R"({"do_lower_case": false, "model_max_length": 128, "unk_token": "[UNK]"})";
  }
  auto folder = Tokenizer::from_folder(dir.string());
  ASSERT_TRUE(folder.ok()) << folder.status().to_string();
  EXPECT_EQ(folder->configured_max_length(), 128u);
  expect_parity(*folder, refs, "ids_cased");
}

}  // namespace
}  // namespace dlrt::embed
