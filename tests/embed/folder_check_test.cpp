// Hostile model folders: config files of the wrong types or out of range are
// refused at load naming the file and field (folder_check.h), and a
// pre-tokenizer regex that backtracks exponentially no longer hangs embed.
#include "embed/models/folder_check.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/models/embedder.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kTiny = fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert";

fs::path copy_tiny(const std::string& name) {
  return testing::copy_folder(kTiny, fs::path(DLRT_BINARY_DIR) / "folder_check_test" / name);
}

void write(const fs::path& p, const std::string& text) { testing::write_file(p, text); }

EmbedderOptions cpu() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 1;
  return o;
}

// The tiny folder's vocabulary as a tokenizer.json (WordPiece, BERT template).
json tiny_tokenizer_json() {
  json vocab = json::object();
  auto lines = testing::read_lines(kTiny / "vocab.txt");
  for (size_t i = 0; i < lines.size(); ++i) vocab[lines[i]] = i;
  auto special = [](const char* name, int type) { return json{{"SpecialToken", {{"id", name}, {"type_id", type}}}}; };
  auto seq = [](const char* name, int type) { return json{{"Sequence", {{"id", name}, {"type_id", type}}}}; };
  return {{"version", "1.0"},
          {"added_tokens", json::array({{{"id", 0}, {"content", "[PAD]"}, {"special", true}},
                                        {{"id", 1}, {"content", "[UNK]"}, {"special", true}},
                                        {{"id", 2}, {"content", "[CLS]"}, {"special", true}},
                                        {{"id", 3}, {"content", "[SEP]"}, {"special", true}}})},
          {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", {special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)}},
            {"pair", {special("[CLS]", 0), seq("A", 0), special("[SEP]", 0), seq("B", 1), special("[SEP]", 1)}},
            {"special_tokens", {{"[CLS]", {{"id", "[CLS]"}, {"ids", {2}}, {"tokens", {"[CLS]"}}}},
                                {"[SEP]", {{"id", "[SEP]"}, {"ids", {3}}, {"tokens", {"[SEP]"}}}}}}}},
          {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"}, {"vocab", vocab}}}};
}

void expect_refused(const fs::path& dir, const std::string& file, const std::string& field) {
  auto e = Embedder::create(dir.string(), cpu());
  ASSERT_FALSE(e.ok()) << dir << ": loaded";
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidModel) << e.status().to_string();
  EXPECT_NE(e.status().message().find(file), std::string::npos) << e.status().to_string();
  EXPECT_NE(e.status().message().find(field), std::string::npos) << e.status().to_string();
}

TEST(EmbedFolderCheck, WrongTypesAreRefusedNamingFileAndField) {
  struct Case {
    const char* name;
    const char* file;
    const char* text;
    const char* file_named;
    const char* field;
  } cases[] = {
      {"modules_types", "modules.json", R"([{"idx":"x","name":5,"path":null,"type":7}])", "modules.json", "idx"},
      {"modules_type", "modules.json", R"([{"idx":0,"name":"0","path":"","type":7}])", "modules.json", "type"},
      {"modules_not_object", "modules.json", R"([3])", "modules.json", "module 0"},
      {"pool_dim_string", "1_Pooling/config.json", R"({"word_embedding_dimension":"x","pooling_mode_mean_tokens":true})",
       "1_Pooling/config.json", "word_embedding_dimension"},
      {"pool_dim_negative", "1_Pooling/config.json", R"({"word_embedding_dimension":-1,"pooling_mode_mean_tokens":true})",
       "1_Pooling/config.json", "word_embedding_dimension"},
      {"pool_dim_wrong", "1_Pooling/config.json", R"({"word_embedding_dimension":7,"pooling_mode_mean_tokens":true})",
       "1_Pooling/config.json", "word_embedding_dimension"},
      {"pool_all_false", "1_Pooling/config.json",
       R"({"word_embedding_dimension":8,"pooling_mode_mean_tokens":false,"pooling_mode_cls_token":false})",
       "1_Pooling/config.json", "no pooling mode"},
      {"pool_flag_string", "1_Pooling/config.json", R"({"pooling_mode_mean_tokens":"yes"})", "1_Pooling/config.json",
       "pooling_mode_mean_tokens"},
      {"config_types", "config.json", R"({"hidden_size":8,"max_position_embeddings":"16"})", "config.json",
       "max_position_embeddings"},
      {"st_config", "sentence_bert_config.json", R"({"max_seq_length":-5})", "sentence_bert_config.json", "max_seq_length"},
      {"tok_config", "tokenizer_config.json", R"({"do_lower_case":"yes"})", "tokenizer_config.json", "do_lower_case"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fs::path dir = copy_tiny(c.name);
    write(dir / c.file, c.text);
    expect_refused(dir, c.file_named, c.field);
  }
}

TEST(EmbedFolderCheck, IdsOutsideTheVocabularyAreRefusedAtLoad) {
  {
    fs::path dir = copy_tiny("pad_id");
    json tj = tiny_tokenizer_json();
    tj["padding"] = {{"pad_id", 1000000000}, {"pad_token", "[X]"}};
    write(dir / "tokenizer.json", tj.dump());
    expect_refused(dir, "tokenizer.json", "pad id");
  }
  {
    fs::path dir = copy_tiny("type_id");
    json tj = tiny_tokenizer_json();
    tj["post_processor"]["pair"][3]["Sequence"]["type_id"] = 999;
    write(dir / "tokenizer.json", tj.dump());
    write(dir / "config.json", R"({"hidden_size":8,"max_position_embeddings":16,"vocab_size":25,"type_vocab_size":2})");
    expect_refused(dir, "tokenizer.json", "type id 999");
  }
  {  // The same files with ids in range load and embed.
    fs::path dir = copy_tiny("ids_fine");
    json tj = tiny_tokenizer_json();
    tj["padding"] = {{"pad_id", 0}, {"pad_token", "[PAD]"}};
    write(dir / "tokenizer.json", tj.dump());
    write(dir / "config.json", R"({"hidden_size":8,"max_position_embeddings":16,"vocab_size":25,"type_vocab_size":2})");
    auto e = Embedder::create(dir.string(), cpu());
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    auto r = (*e)->embed({"the cat", "the cat sat on the mat"});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
}

// (a|a)*b as a Split pre-tokenizer: 3,000 a's took minutes (exponential
// backtracking); now well under a second, with the pieces tokenizers gives.
TEST(EmbedFolderCheck, BacktrackingPreTokenizerRegexDoesNotHang) {
  fs::path dir = copy_tiny("regex");
  json tj = tiny_tokenizer_json();
  tj["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a|a)*b"}}}, {"behavior", "Isolated"}, {"invert", false}};
  write(dir / "tokenizer.json", tj.dump());
  auto e = Embedder::create(dir.string(), cpu());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const auto start = std::chrono::steady_clock::now();
  auto r = (*e)->embed({std::string(3000, 'a')});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ((*e)->tokenizer().tokenize("xaab"), (std::vector<std::string>{"[UNK]", "[UNK]"}));  // "x" and "aab"
}

// A pre-tokenizer regex whose program is large takes more steps per character
// than the budget: tokenizing errors out (embed exits 1, the server answers
// 400) in well under a second instead of running on.
TEST(EmbedFolderCheck, TokenizationBudgetErrorsOut) {
  fs::path dir = copy_tiny("regex_budget");
  json tj = tiny_tokenizer_json();
  tj["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(?:a{1,200}){1,50}b"}}}, {"behavior", "Isolated"}, {"invert", false}};
  write(dir / "tokenizer.json", tj.dump());
  auto e = Embedder::create(dir.string(), cpu());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const auto start = std::chrono::steady_clock::now();
  auto t = (*e)->tokenize(std::string(100000, 'a'));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("budget"), std::string::npos) << t.status().to_string();
  auto r = (*e)->embed({"fine", std::string(100000, 'a')});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE((*e)->tokenize("aab").ok());  // the next input is not affected
}

}  // namespace
}  // namespace dlrt::embed
