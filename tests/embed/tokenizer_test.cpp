// BERT WordPiece tokenizer: hand-checked cases on a tiny vocab (always run) and
// parity with Hugging Face's BertTokenizerFast on a multilingual corpus
// (tests/embed/data/bert_reference.jsonl, from make_reference.py) using the
// shared bert-uncased vocab (skipped with a reason when ../shared is absent).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_limits.h"
#include "embed/tokenizer/unicode_tables.h"
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

// ---------------------------------------------------------------- hostile folders
// (tokenizer_limits.h: every bound a tokenizer.json can push against)

// A WordPiece tokenizer.json over tiny_vocab() with `normalizer` and
// `pre_tokenizer` (JSON text; "null" for none).
std::string tiny_json(const std::string& normalizer, const std::string& pre_tokenizer = "null") {
  nlohmann::json vocab = nlohmann::json::object();
  const auto words = tiny_vocab();
  for (size_t i = 0; i < words.size(); ++i) vocab[words[i]] = i;
  return R"({"version":"1.0","added_tokens":[],"normalizer":)" + normalizer + R"(,"pre_tokenizer":)" + pre_tokenizer +
         R"(,"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":)" +
         vocab.dump() + "}}";
}

// `inner` wrapped in `levels` Sequences of `type` (their list under `list`).
std::string nested(const std::string& type_list, const std::string& inner, size_t levels) {
  std::string open = R"({"type":"Sequence",")" + type_list + R"(":[)", out;
  out.reserve(levels * (open.size() + 2) + inner.size());
  for (size_t i = 0; i < levels; ++i) out += open;
  out += inner;
  for (size_t i = 0; i < levels; ++i) out += "]}";
  return out;
}

// tokenizer_nested_normalizer_segv: a Sequence nested 50,000 deep recursed once
// per level in make_normalizer until the stack overflowed (SIGSEGV). JSON
// nested past kMaxJsonDepth (serde_json's limit too) is now refused before it
// is parsed, wherever the nesting is.
TEST(EmbedTokenizer, DeepNestingIsInvalidModel) {
  const std::string lower = R"({"type":"Lowercase"})";
  for (const std::string& bad :
       {tiny_json(nested("normalizers", lower, 50000)),
        tiny_json("null", nested("pretokenizers", R"({"type":"Whitespace"})", 50000)),
        tiny_json("null").insert(1, R"("decoder":)" + nested("decoders", R"({"type":"Fuse"})", 50000) + ","),
        tiny_json("null").insert(1, R"("post_processor":)" + nested("processors", R"({"type":"ByteLevel"})", 50000) + ","),
        tiny_json("null").insert(1, R"("x":)" + std::string(200000, '[') + std::string(200000, ']') + ",")}) {
    auto t = Tokenizer::from_json_string(bad);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidModel) << t.status().to_string();
    EXPECT_NE(t.status().message().find("nested deeper than 128 levels"), std::string::npos) << t.status().to_string();
  }
  // Sequences 60 deep (121 JSON levels) are within the limit and work.
  auto ok = Tokenizer::from_json_string(tiny_json(nested("normalizers", lower, 60), R"({"type":"BertPreTokenizer"})"));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->tokenize("HELLO World"), (std::vector<std::string>{"hello", "world"}));
  // Strings are not counted: brackets inside them are text.
  EXPECT_EQ(jsonu::nesting_depth(R"({"a":"[[[[{{\"[[","b":[[1]]})", 128), 3u);
  EXPECT_EQ(jsonu::nesting_depth(std::string(500, '['), 128), 129u);  // counting stops past the limit

  // tokenizer_config.json and the other JSON files of a folder are bounded the same way.
  const fs::path dir = fs::temp_directory_path() / ("dlrt_tok_deep_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  testing::write_file(dir / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  testing::write_file(dir / "tokenizer_config.json", R"({"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}");
  auto folder = Tokenizer::from_folder(dir.string());
  EXPECT_EQ(folder.status().code(), StatusCode::kInvalidModel) << folder.status().to_string();
  EXPECT_NE(folder.status().message().find("tokenizer_config.json: JSON nested deeper than 128"), std::string::npos)
      << folder.status().to_string();
  auto config = jsonu::read_optional_json(dir / "tokenizer_config.json");
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidModel);
  fs::remove_all(dir);
}

// tokenizer_fifo_hangs_loading: a FIFO named tokenizer.json (or
// tokenizer_config.json) was opened by a std::ifstream probe, which waits for a
// writer forever. The folder is now refused at once. Should the load block
// anyway, the test opens the FIFO for writing to let it finish, and fails.
TEST(EmbedTokenizer, FifoInFolderIsRefusedAtOnce) {
  for (const char* name : {"tokenizer.json", "tokenizer_config.json", "vocab.txt"}) {
    const fs::path dir = fs::temp_directory_path() / ("dlrt_tok_fifo_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    testing::write_file(dir / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
    fs::remove(dir / name);
    ASSERT_EQ(::mkfifo((dir / name).c_str(), 0600), 0) << name;
    auto load = std::async(std::launch::async, [&] { return Tokenizer::from_folder(dir.string()); });
    const bool finished = load.wait_for(std::chrono::seconds(1)) == std::future_status::ready;
    if (!finished) {
      const int fd = ::open((dir / name).c_str(), O_WRONLY | O_NONBLOCK);  // releases a reader blocked in open
      load.wait();
      if (fd >= 0) ::close(fd);
    }
    EXPECT_TRUE(finished) << name << ": loading blocked on the FIFO";
    auto t = load.get();
    ASSERT_FALSE(t.ok()) << name;
    EXPECT_EQ(t.status().code(), StatusCode::kIoError) << t.status().to_string();
    EXPECT_NE(t.status().message().find("not a regular file"), std::string::npos) << t.status().to_string();
    auto direct = read_folder_file((dir / name).string());
    EXPECT_EQ(direct.status().code(), StatusCode::kIoError);
    auto config = jsonu::read_optional_json(dir / name);
    EXPECT_EQ(config.status().code(), StatusCode::kIoError);
    fs::remove_all(dir);
  }
  auto dev = read_folder_file("/dev/null");
  EXPECT_EQ(dev.status().code(), StatusCode::kIoError) << dev.status().to_string();
}

// Runs `body` in a child process under an address-space limit of what this
// process maps plus `extra_bytes` (so a regression cannot take the host's
// memory), for at most 60 s. The child's exit code (-signal when killed) and
// how far its peak RSS rose above this process's RSS.
struct ChildResult {
  int code = -1;
  long rss_growth_kb = 0;
};
long status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  return 0;
}
ChildResult run_bounded(const std::function<int()>& body, size_t extra_bytes) {
  const long rss_kb = status_kb("VmRSS:"), vm_kb = status_kb("VmSize:");
  const pid_t pid = ::fork();
  if (pid == 0) {
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(vm_kb) * 1024 + extra_bytes;
#if !defined(__SANITIZE_ADDRESS__)  // ASan reserves terabytes of address space up front
    if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(97);
#endif
    ::alarm(60);
    int code = 98;
    try {
      code = body();
    } catch (...) {
      code = 99;  // bad_alloc
    }
    ::_exit(code);
  }
  ChildResult r;
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  r.rss_growth_kb = ru.ru_maxrss - rss_kb;
  return r;
}

// tokenizer_regex_lookahead_memory: each lookahead of a Split regex allocated
// 8 bytes per character of the text up front (5,000 lookaheads: 800 MB for
// 20,000 characters, 4 GB for 100,000). The memo now takes memory as the
// search uses it, within kRegexMemoBaseBytes + kRegexMemoBytesPerChar per
// character, and a search that needs more fails the request.
TEST(EmbedTokenizer, RegexLookaheadMemoryIsBounded) {
  std::string pattern;
  for (int i = 0; i < 5000; ++i) pattern += "(?=[a-z])";
  pattern += "[a-z]+";
  auto t = Tokenizer::from_json_string(tiny_json(
      "null", R"({"type":"Split","pattern":{"Regex":")" + pattern + R"("},"behavior":"Isolated","invert":false})"));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ChildResult small = run_bounded(
      [&] {
        auto e = t->encode_checked(std::string(20000, 'a') + ",hello");
        if (!e.ok()) return 1;
        // "aaa...a" is one word, too long for WordPiece ([UNK]); "," and "hello" follow.
        return e->ids == std::vector<int64_t>{1, 12, 5} ? 0 : 2;
      },
      size_t{256} << 20);
  EXPECT_EQ(small.code, 0);
  EXPECT_LT(small.rss_growth_kb, 100 * 1024) << "peak RSS grew by " << small.rss_growth_kb << " kB";
  // 400,000 characters: the main program's states alone (5,004 instructions,
  // 626 bytes a position) are past the budget: a clear error, memory bounded.
  ChildResult large = run_bounded(
      [&] {
        auto e = t->encode_checked(std::string(400000, 'a'));
        if (e.ok()) return 1;
        if (e.status().code() != StatusCode::kInvalidArgument) return 2;
        return e.status().message().find("budget") != std::string::npos ? 0 : 3;
      },
      size_t{512} << 20);
  EXPECT_EQ(large.code, 0);
  const long budget_kb = static_cast<long>((kRegexMemoBaseBytes + kRegexMemoBytesPerChar * 400000) / 1024);
  EXPECT_LT(large.rss_growth_kb, budget_kb + 64 * 1024) << "peak RSS grew by " << large.rss_growth_kb << " kB";
}

// Issue 80's RSS rule: one long text truncated to the model's length (a 2 MB
// body to a ColBERT folder, one token per character) peaked at 65 bytes per
// input byte: every word of the text held as its own piece, then every token.
// BertPreTokenizer now gives the model one word at a time and the encoding
// stores only the tokens truncation keeps; the count stays exact.
TEST(EmbedTokenizer, LongInputMemoryIsBoundedPerByte) {
  auto t = Tokenizer::from_folder((fs::path(DLRT_TEST_DIR) / "models" / "retrieval" / "colbert_tiny").string());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  const std::string unit = "hello world, ";
  auto one = t->encode_checked(unit);
  auto two = t->encode_checked(unit + unit);
  ASSERT_TRUE(one.ok() && two.ok());
  const size_t per_unit = two->ids.size() - one->ids.size(), specials = one->ids.size() - per_unit;
  const size_t units = (size_t{4} << 20) / unit.size();
  std::string text;
  text.reserve(units * unit.size());
  for (size_t i = 0; i < units; ++i) text += unit;
  ChildResult r = run_bounded(
      [&] {
        size_t untruncated = 0;
        auto e = t->encode_checked(text, 32, nullptr, &untruncated);
        if (!e.ok()) return 1;
        if (e->ids.size() != 32) return 2;
        return untruncated == units * per_unit + specials ? 0 : 3;
      },
      size_t{1} << 30);
  EXPECT_EQ(r.code, 0);
  // 4 MiB of text: ~16 bytes a byte now (its code points and their alignment,
  // twice across the normalizer); 65 before.
  EXPECT_LT(r.rss_growth_kb, 32 * 4 * 1024) << "peak RSS grew by " << r.rss_growth_kb << " kB for 4 MiB";
}

// tokenizer_replace_normalizer_amplification: 6 chained Replace("a" -> 10 a's)
// grew a 1,000-character text to 10^9 code points (bad_alloc, HTTP 500). The
// normalised text of one encode is now bounded by kMaxNormalizedGrowth x the
// input + kNormalizedSlack; past it the request fails with InvalidArgument.
TEST(EmbedTokenizer, NormalizerGrowthIsBounded) {
  const std::string ten_a = R"({"type":"Replace","pattern":{"String":"a"},"content":"aaaaaaaaaa"})";
  std::string chain = "[" + ten_a;
  for (int i = 1; i < 4; ++i) chain += "," + ten_a;  // 10^4 x (10^7 code points unbounded: bounded memory if it regresses)
  chain += "]";
  auto t = Tokenizer::from_json_string(
      tiny_json(R"({"type":"Sequence","normalizers":)" + chain + "}", R"({"type":"BertPreTokenizer"})"));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  auto e = t->encode_checked(std::string(1000, 'a'));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("grew past 16x the input (1000 bytes)"), std::string::npos)
      << e.status().to_string();
  EXPECT_FALSE(t->encode_pair_checked("hello", std::string(1000, 'a')).ok());
  // One Replace with a long content is bounded as it builds.
  auto one = Tokenizer::from_json_string(tiny_json(
      R"({"type":"Replace","pattern":{"String":"a"},"content":")" + std::string(100000, 'b') + R"("})"));
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->encode_checked("a a a").status().code(), StatusCode::kInvalidArgument);
  // Within the bound: the next request, and growth that fits (10x), are fine.
  EXPECT_EQ(t->encode_checked("hello").value().ids, (std::vector<int64_t>{5}));
  auto once = Tokenizer::from_json_string(tiny_json(ten_a, R"({"type":"BertPreTokenizer"})"));
  ASSERT_TRUE(once.ok()) << once.status().to_string();
  EXPECT_EQ(once->encode_checked(std::string(1000, 'a')).value().ids, (std::vector<int64_t>{1}));  // one long [UNK] word
  // NFKC's largest growth (U+FDFA: 3 bytes -> 18 code points) is far within it.
  auto nfkc = Tokenizer::from_json_string(tiny_json(R"({"type":"NFKC"})"));
  ASSERT_TRUE(nfkc.ok()) << nfkc.status().to_string();
  std::string fdfa;
  for (int i = 0; i < 2000; ++i) fdfa += "\xEF\xB7\xBA";
  EXPECT_TRUE(nfkc->encode_checked(fdfa).ok());
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
