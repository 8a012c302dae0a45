// Embedder: model folders (the committed tiny BERT-like folder from
// make_tiny_model.py, and the zoo's minilm_l6 with the shared vocab when
// DLRT_ZOO_DIR is set), pooling modes and normalisation against numpy's
// vectors or an independent computation, broken folders, thread safety.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "dlrt/session.h"
#include "embed/models/embedder.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kTiny = fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert";

json expected() { return json::parse(testing::slurp(fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert_expected.json")); }

EmbedderOptions cpu() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 1;
  return o;
}

std::vector<float> l2(std::vector<double> v) {
  double n = 0;
  for (double x : v) n += x * x;
  n = std::sqrt(n);
  std::vector<float> out;
  for (double x : v) out.push_back(static_cast<float>(x / n));
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

// A copy of the tiny folder in the build dir, for variants.
fs::path copy_tiny(const std::string& name) {
  return testing::copy_folder(kTiny, fs::path(DLRT_BINARY_DIR) / "embed_test" / name);
}

void write(const fs::path& p, const std::string& text) { testing::write_file(p, text); }

TEST(EmbedEmbedder, TinyFolderMeanNormalized) {
  auto e = Embedder::create(kTiny.string(), cpu());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const Embedder& emb = **e;
  EXPECT_EQ(emb.dimension(), 8u);
  EXPECT_EQ(emb.max_length(), 16u);  // model_max_length 512 capped by max_position_embeddings
  EXPECT_EQ(emb.pooling(), Pooling::kMean);
  EXPECT_TRUE(emb.normalize());
  EXPECT_EQ(emb.model_name(), "tiny_bert");
  EXPECT_FALSE(emb.placement().partitions.empty());
  json ex = expected();
  std::vector<std::string> texts = ex["texts"].get<std::vector<std::string>>();
  for (size_t i = 0; i < texts.size(); ++i) {
    auto enc = emb.tokenize(texts[i]);
    ASSERT_TRUE(enc.ok());
    EXPECT_EQ(enc->ids, ex["ids"][i].get<std::vector<int64_t>>()) << texts[i];
  }
  // One padded batch == numpy on each unpadded sequence (padding masked right).
  auto r = emb.embed(texts);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->vectors.size(), texts.size());
  size_t tokens = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    expect_near(r->vectors[i], l2(ex["mean"][i].get<std::vector<double>>()), 2e-5, texts[i]);
    tokens += ex["ids"][i].size();
  }
  EXPECT_EQ(r->total_tokens, tokens);
  EXPECT_FALSE(r->report.partitions.empty());
  // Each text alone gives the same vector.
  for (size_t i = 0; i < texts.size(); ++i) {
    auto one = emb.embed({texts[i]});
    ASSERT_TRUE(one.ok());
    expect_near(one->vectors[0], r->vectors[i], 1e-5, "alone: " + texts[i]);
  }
  auto empty = emb.embed({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->vectors.empty());
}

// cpu_precision "auto" measures on the warm-up texts (a padded batch, then one alone) and
// reports it; the vectors are those of the precision chosen (f32 within 1e-5, bf16 within the bound).
TEST(EmbedEmbedder, CpuPrecisionAutoMeasuresOnWarmUpTexts) {
  EmbedderOptions o = cpu();
  o.cpu_precision = "auto";
  auto e = Embedder::create(kTiny.string(), o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const PrecisionChoice& c = (*e)->precision_choice();
  EXPECT_TRUE(c.automatic);
  EXPECT_EQ(c.canary, "given");
  EXPECT_EQ(c.canary_sets, 2);
  ASSERT_FALSE(c.trials.empty());
  EXPECT_TRUE(c.trials[0].ran) << c.reason;
  EXPECT_EQ((*e)->placement().partitions[0].precision.rfind(c.chosen, 0), 0u);
  auto f32 = Embedder::create(kTiny.string(), cpu());
  ASSERT_TRUE(f32.ok());
  EXPECT_FALSE((*f32)->precision_choice().automatic);
  auto a = (*e)->embed({"a canary text"});
  auto b = (*f32)->embed({"a canary text"});
  ASSERT_TRUE(a.ok() && b.ok());
  double dot = 0;
  for (size_t i = 0; i < a->vectors[0].size(); ++i) dot += a->vectors[0][i] * b->vectors[0][i];
  EXPECT_GT(dot, c.chosen == "f32" ? 1 - 1e-5 : 0.9999);  // both L2-normalised
}

TEST(EmbedEmbedder, PoolingModesAndNoNormalize) {
  json ex = expected();
  std::vector<std::string> texts = ex["texts"].get<std::vector<std::string>>();
  struct Case {
    std::string name, pooling_json, mode;
    bool normalize;
  } cases[] = {
      {"cls", R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false})", "cls", true},
      {"max", R"({"pooling_mode_max_tokens": true, "pooling_mode_mean_tokens": false})", "max", true},
      {"mean_raw", R"({"pooling_mode_mean_tokens": true})", "mean", false},
      {"max_raw", R"({"pooling_mode": "max"})", "max", false},
      {"sqrt_len", R"({"pooling_mode_mean_sqrt_len_tokens": true, "pooling_mode_mean_tokens": false})",
       "mean_sqrt_len_tokens", false},
      {"last", R"({"pooling_mode": "lasttoken"})", "lasttoken", true},
      {"last_raw", R"({"pooling_mode_lasttoken": true, "pooling_mode_mean_tokens": false})", "lasttoken", false},
      {"weighted", R"({"pooling_mode": "weightedmean"})", "weightedmean", true},
      {"weighted_raw", R"({"pooling_mode_weightedmean_tokens": true, "pooling_mode_mean_tokens": false})",
       "weightedmean", false},
  };
  for (const Case& c : cases) {
    fs::path dir = copy_tiny("pool_" + c.name);
    write(dir / "1_Pooling" / "config.json", c.pooling_json);
    if (!c.normalize) {
      write(dir / "modules.json",
            R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
                {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}])");
    }
    auto e = Embedder::create(dir.string(), cpu());
    ASSERT_TRUE(e.ok()) << c.name << ": " << e.status().to_string();
    EXPECT_EQ(pooling_name((*e)->pooling()), c.mode);
    EXPECT_EQ((*e)->normalize(), c.normalize);
    auto r = (*e)->embed(texts);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    for (size_t i = 0; i < texts.size(); ++i) {
      auto want = ex[c.mode][i].get<std::vector<double>>();
      std::vector<float> w = c.normalize ? l2(want) : std::vector<float>(want.begin(), want.end());
      expect_near(r->vectors[i], w, 2e-5, c.name + ": " + texts[i]);
    }
  }
}

// A .safetensors file of float32 tensors: name -> (shape, values).
std::string safetensors(const std::vector<std::pair<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>>& ts) {
  json header = json::object();
  std::string data;
  for (const auto& [name, t] : ts) {
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.second.data()), t.second.size() * sizeof(float));
    header[name] = {{"dtype", "F32"}, {"shape", t.first}, {"data_offsets", {begin, data.size()}}};
  }
  header["__metadata__"] = {{"format", "pt"}};
  const std::string h = header.dump();
  std::string out(8, '\0');
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + h + data;
}

TEST(EmbedEmbedder, DenseModuleAfterPooling) {
  json ex = expected();
  std::vector<std::string> texts = ex["texts"].get<std::vector<std::string>>();
  const size_t in = 8, out = 3;
  std::vector<float> w(in * out), b(out);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * static_cast<float>(i);
  fs::path dir = copy_tiny("dense");
  fs::create_directories(dir / "2_Dense");
  write(dir / "2_Dense" / "config.json",
        R"({"in_features": 8, "out_features": 3, "bias": true, "activation_function": "torch.nn.modules.activation.Tanh"})");
  write(dir / "2_Dense" / "model.safetensors",
        safetensors({{"linear.weight", {{3, 8}, w}}, {"linear.bias", {{3}, b}}}));
  write(dir / "modules.json",
        R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
            {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
            {"idx":2,"name":"2","path":"2_Dense","type":"sentence_transformers.models.Dense"},
            {"idx":3,"name":"3","path":"3_Normalize","type":"sentence_transformers.models.Normalize"}])");
  auto e = Embedder::create(dir.string(), cpu());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ((*e)->dimension(), out);
  auto r = (*e)->embed(texts);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (size_t t = 0; t < texts.size(); ++t) {
    auto mean = ex["mean"][t].get<std::vector<double>>();
    std::vector<double> y(out);
    for (size_t o = 0; o < out; ++o) {
      double s = b[o];
      for (size_t i = 0; i < in; ++i) s += w[o * in + i] * mean[i];
      y[o] = std::tanh(s);
    }
    expect_near(r->vectors[t], l2(y), 2e-5, "dense: " + texts[t]);
  }
  // What is refused, and how.
  auto status = [&](const std::string& name, const std::string& config, bool weights, bool pickle_only) {
    fs::path d = copy_tiny(name);
    fs::create_directories(d / "2_Dense");
    write(d / "2_Dense" / "config.json", config);
    if (weights) write(d / "2_Dense" / "model.safetensors", safetensors({{"linear.weight", {{3, 8}, w}}, {"linear.bias", {{3}, b}}}));
    if (pickle_only) write(d / "2_Dense" / "pytorch_model.bin", "not read");
    write(d / "modules.json",
          R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
              {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
              {"idx":2,"name":"2","path":"2_Dense","type":"sentence_transformers.models.Dense"}])");
    auto r2 = Embedder::create(d.string(), cpu());
    return r2.ok() ? Status::Ok() : r2.status();
  };
  Status s = status("dense_act", R"({"in_features": 8, "out_features": 3, "activation_function": "my.Swish"})", true, false);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("my.Swish"), std::string::npos) << s.message();
  s = status("dense_pickle", R"({"in_features": 8, "out_features": 3})", false, true);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("pytorch_model.bin"), std::string::npos) << s.message();
  s = status("dense_shape", R"({"in_features": 8, "out_features": 4})", true, false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  s = status("dense_in", R"({"in_features": 6, "out_features": 3})", true, false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
}

TEST(EmbedEmbedder, FolderLayoutsAndTokenizerJson) {
  // onnx/model.onnx, no modules.json (defaults: mean + normalize), tokenizer.json instead of vocab.txt.
  fs::path dir = copy_tiny("layout");
  fs::create_directories(dir / "onnx");
  fs::rename(dir / "model.onnx", dir / "onnx" / "model.onnx");
  fs::remove(dir / "modules.json");
  fs::remove_all(dir / "1_Pooling");
  json vocab = json::object();
  auto lines = testing::read_lines(kTiny / "vocab.txt");
  for (size_t i = 0; i < lines.size(); ++i) vocab[lines[i]] = i;
  json tj = {
      {"version", "1.0"},
      {"added_tokens", json::array({{{"id", 0}, {"content", "[PAD]"}, {"special", true}},
                                    {{"id", 1}, {"content", "[UNK]"}, {"special", true}},
                                    {{"id", 2}, {"content", "[CLS]"}, {"special", true}},
                                    {{"id", 3}, {"content", "[SEP]"}, {"special", true}},
                                    {{"id", 4}, {"content", "[MASK]"}, {"special", true}}})},
      {"normalizer", {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
                      {"strip_accents", nullptr}, {"lowercase", true}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor", {{"type", "BertProcessing"}, {"sep", {"[SEP]", 3}}, {"cls", {"[CLS]", 2}}}},
      {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                 {"max_input_chars_per_word", 100}, {"vocab", vocab}}}};
  write(dir / "tokenizer.json", tj.dump());
  fs::remove(dir / "vocab.txt");
  auto e = Embedder::create(dir.string(), cpu());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  json ex = expected();
  auto texts = ex["texts"].get<std::vector<std::string>>();
  auto r = (*e)->embed(texts);
  ASSERT_TRUE(r.ok());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*e)->tokenize(texts[i])->ids, ex["ids"][i].get<std::vector<int64_t>>());
    expect_near(r->vectors[i], l2(ex["mean"][i].get<std::vector<double>>()), 2e-5, texts[i]);
  }
  // max_length option below the folder's.
  EmbedderOptions o = cpu();
  o.max_length = 4;
  auto short_e = Embedder::create(dir.string(), o);
  ASSERT_TRUE(short_e.ok());
  EXPECT_EQ((*short_e)->tokenize("the cat sat on the mat")->ids, (std::vector<int64_t>{2, 5, 6, 3}));
}

TEST(EmbedEmbedder, BrokenFoldersGiveClearErrors) {
  auto code = [](const fs::path& dir) { return Embedder::create(dir.string(), cpu()).status(); };
  Status s = code("/nonexistent/model/folder");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("does not exist"), std::string::npos) << s.message();

  fs::path no_model = copy_tiny("no_model");
  fs::remove(no_model / "model.onnx");
  s = code(no_model);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("model.onnx"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("optimum-cli"), std::string::npos) << s.message();  // no weights: no export hint
  // PyTorch weights and no ONNX file (SentenceTransformer.save, TEI's folders):
  // the error names the export command.
  { std::ofstream(no_model / "model.safetensors") << "weights"; }
  s = code(no_model);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("optimum-cli export onnx --model " + no_model.string() + " --task feature-extraction " +
                             (no_model / "onnx").string()),
            std::string::npos)
      << s.message();

  fs::path no_vocab = copy_tiny("no_vocab");
  fs::remove(no_vocab / "vocab.txt");
  s = code(no_vocab);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("vocab.txt"), std::string::npos) << s.message();

  fs::path bad_json = copy_tiny("bad_modules");
  write(bad_json / "modules.json", "[{");
  s = code(bad_json);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("modules.json"), std::string::npos) << s.message();

  fs::path unknown_mode = copy_tiny("unknown_mode");
  write(unknown_mode / "1_Pooling" / "config.json", R"({"pooling_mode": "median"})");
  s = code(unknown_mode);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("median"), std::string::npos) << s.message();

  fs::path bad_prompt = copy_tiny("bad_prompt");
  write(bad_prompt / "config_sentence_transformers.json", R"({"prompts": {"query": "q: "}, "default_prompt_name": "doc"})");
  s = code(bad_prompt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("default_prompt_name"), std::string::npos) << s.message();

  fs::path two_modes = copy_tiny("two_modes");
  write(two_modes / "1_Pooling" / "config.json", R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true})");
  EXPECT_EQ(code(two_modes).code(), StatusCode::kUnsupported);

  fs::path not_onnx = copy_tiny("not_onnx");
  write(not_onnx / "model.onnx", "this is not a model");
  s = code(not_onnx);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("model.onnx"), std::string::npos) << s.message();

  // A Pooling path outside the folder (absolute or "..") is refused, never read.
  fs::path elsewhere = copy_tiny("elsewhere_pooling");
  write(elsewhere / "cls" / "config.json", R"({"pooling_mode_cls_token": true})");
  fs::path escaping = copy_tiny("escaping");
  for (const std::string& path : {(elsewhere / "cls").string(), std::string("../elsewhere_pooling/cls")}) {
    SCOPED_TRACE(path);
    write(escaping / "modules.json", R"([{"type": "sentence_transformers.models.Pooling", "path": ")" + path + R"("}])");
    s = code(escaping);
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
    EXPECT_NE(s.message().find("is not a path inside the model folder"), std::string::npos) << s.message();
  }
  // A module folder that is a symbolic link (to a folder elsewhere) is followed.
  fs::path linked = copy_tiny("linked_pooling");
  fs::remove_all(linked / "1_Pooling");
  fs::create_directory_symlink(elsewhere / "cls", linked / "1_Pooling");
  write(linked / "modules.json", R"([{"type": "sentence_transformers.models.Transformer", "path": ""},
                                     {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}])");
  auto via_link = Embedder::create(linked.string(), cpu());
  ASSERT_TRUE(via_link.ok()) << via_link.status().to_string();
  EXPECT_EQ((*via_link)->pooling(), Pooling::kCls);

  fs::path bpe = copy_tiny("bpe");
  // BPE with dropout (random merges) is the kind of tokenizer dlrt refuses, naming what.
  write(bpe / "tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}})");
  s = code(bpe);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("dropout"), std::string::npos) << s.message();
}

TEST(EmbedEmbedder, EncodedBatchValidation) {
  auto e = Embedder::create(kTiny.string(), cpu());
  ASSERT_TRUE(e.ok());
  const Embedder& emb = **e;
  EXPECT_EQ(emb.embed_encoded({Encoding{}}).status().code(), StatusCode::kInvalidArgument);
  Encoding mismatch{{2, 5, 3}, {0, 0}, {1, 1, 1}};
  EXPECT_EQ(emb.embed_encoded({mismatch}).status().code(), StatusCode::kInvalidArgument);
  Encoding too_long{std::vector<int64_t>(17, 5), {}, {}};
  EXPECT_EQ(emb.embed_encoded({too_long}).status().code(), StatusCode::kInvalidArgument);
  Encoding bad_id{{2, 999, 3}, {}, {}};
  EXPECT_EQ(emb.embed_encoded({bad_id}).status().code(), StatusCode::kInvalidArgument);
  Encoding neg_id{{2, -1, 3}, {}, {}};
  EXPECT_EQ(emb.embed_encoded({neg_id}).status().code(), StatusCode::kInvalidArgument);
  // Type ids and mask may be left empty (all 0 / all 1).
  Encoding bare{{2, 5, 6, 3}, {}, {}};
  auto r = emb.embed_encoded({bare});
  ASSERT_TRUE(r.ok());
  expect_near(r->vectors[0], emb.embed({"the cat"})->vectors[0], 1e-6, "bare");
}

TEST(EmbedEmbedder, ConcurrentCallersGetTheSameVectors) {
  auto e = Embedder::create(kTiny.string(), cpu());
  ASSERT_TRUE(e.ok());
  const Embedder& emb = **e;
  json ex = expected();
  auto texts = ex["texts"].get<std::vector<std::string>>();
  auto want = emb.embed(texts);
  ASSERT_TRUE(want.ok());
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) {
        size_t i = static_cast<size_t>(t + k) % texts.size();
        auto r = emb.embed({texts[i], texts[(i + 1) % texts.size()]});
        if (!r.ok() || r->vectors[0] != want->vectors[i]) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

// ------------------------------------------------- the zoo's minilm_l6 folder

TEST(EmbedEmbedder, ZooMiniLmFolder) {
  const char* zoo = std::getenv("DLRT_ZOO_DIR");
  if (!zoo || !*zoo) GTEST_SKIP() << "DLRT_ZOO_DIR is not set, so the minilm_l6 model folder test did not run";
  fs::path onnx = fs::path(zoo) / "minilm_l6.onnx";
  fs::path vocab_path = testing::shared_dir() / "data" / "bert-uncased-vocab.txt";
  if (!fs::exists(onnx)) GTEST_SKIP() << onnx << " is absent";
  if (!fs::exists(vocab_path)) GTEST_SKIP() << vocab_path << " is absent (set DLRT_SHARED_DIR)";
  // A complete sentence-transformers folder, built in the build tree.
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test" / "minilm_l6";
  fs::remove_all(dir);
  fs::create_directories(dir / "1_Pooling");
  fs::create_symlink(fs::absolute(onnx), dir / "model.onnx");
  {
    std::ofstream v(dir / "vocab.txt");
    for (const auto& t : testing::bert_layout(testing::read_lines(vocab_path))) v << t << "\n";
  }
  write(dir / "tokenizer_config.json", R"({"do_lower_case": true, "model_max_length": 512})");
  write(dir / "config.json", R"({"model_type": "bert", "hidden_size": 384, "max_position_embeddings": 512})");
  write(dir / "sentence_bert_config.json", R"({"max_seq_length": 256, "do_lower_case": false})");
  write(dir / "modules.json",
        R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
            {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
            {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])");
  write(dir / "1_Pooling" / "config.json", R"({"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true})");
  EmbedderOptions o = cpu();
  o.threads = 2;
  auto e = Embedder::create(dir.string(), o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const Embedder& emb = **e;
  EXPECT_EQ(emb.dimension(), 384u);
  EXPECT_EQ(emb.max_length(), 256u);
  std::vector<std::string> texts = {"A man is eating food.", "Ein Mann isst Essen.", "",
                                    "Semantic search with sentence embeddings on the CPU, GPU or NPU."};
  auto r = emb.embed(texts);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // Independent: run the ONNX model with the public API on each text alone, mean-pool, normalise.
  SessionOptions so;
  so.device = "cpu";
  so.threads = 2;
  auto s = Session::create(onnx.string(), so);
  ASSERT_TRUE(s.ok());
  for (size_t i = 0; i < texts.size(); ++i) {
    Encoding enc = *emb.tokenize(texts[i]);
    int64_t n = static_cast<int64_t>(enc.ids.size());
    std::map<std::string, Tensor> feeds = {
        {"input_ids", Tensor::from_vector<int64_t>({1, n}, enc.ids)},
        {"attention_mask", Tensor::from_vector<int64_t>({1, n}, std::vector<int64_t>(n, 1))},
        {"token_type_ids", Tensor::from_vector<int64_t>({1, n}, std::vector<int64_t>(n, 0))}};
    auto out = (*s)->run(feeds);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const float* h = (*out)[0].data<float>();
    std::vector<double> mean(384, 0.0);
    for (int64_t t = 0; t < n; ++t)
      for (int k = 0; k < 384; ++k) mean[k] += h[t * 384 + k] / static_cast<double>(n);
    auto want = l2(mean);
    double dot = 0, norm = 0;
    for (int k = 0; k < 384; ++k) {
      dot += static_cast<double>(want[k]) * r->vectors[i][k];
      norm += static_cast<double>(r->vectors[i][k]) * r->vectors[i][k];
    }
    EXPECT_NEAR(norm, 1.0, 1e-5);
    EXPECT_GT(dot, 0.99999) << texts[i];
    expect_near(r->vectors[i], want, 1e-4, texts[i]);
  }
  std::printf("minilm_l6 folder: %zu texts, %zu tokens, dimension %zu\n", texts.size(), r->total_tokens, emb.dimension());
}

}  // namespace
}  // namespace dlrt::embed
