// Model folders for the server tests, laid out like a sentence-transformers
// ONNX export (model.onnx, vocab.txt, tokenizer_config.json):
//   tiny:   a generated BERT-shaped model (Gather embeddings + token types,
//           MatMul + Add + Mul by the mask: dimension 8 unless asked), so the test plugin
//           backends (MatMul/Add/Mul on float32) can take part of it;
//   minilm: $DLRT_ZOO_DIR/minilm_l6.onnx (all-MiniLM-L6-v2's architecture,
//           random weights) with the same small vocabulary.
// Both vocabularies hold BERT's special tokens and the words of sentence().
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "../onnx_proto_util.h"

namespace dlrt::embed::testing {

inline const std::vector<std::string>& serve_words() {
  static const std::vector<std::string> w = {
      "the",    "a",       "of",     "to",      "and",    "in",      "is",     "it",     "that",   "for",
      "on",     "with",    "as",     "was",     "by",     "at",      "from",   "this",   "be",     "or",
      "model",  "vector",  "search", "server",  "query",  "answer",  "device", "fast",   "slow",   "cpu",
      "gpu",    "npu",     "batch",  "token",   "text",   "word",    "river",  "bank",   "money",  "music",
      "city",   "night",   "light",  "water",   "green",  "house",   "stone",  "paper",  "train",  "cloud",
      "quick",  "brown",   "fox",    "jumps",   "over",   "lazy",    "dog",    "sun",    "rises",  "east",
      "deep",   "learning","runtime","embedding","sentence","meaning","random", "weights","test",   "load",
      ",",      ".",       "!",      "?",       "-",      "'",       "s",      "##s",    "##ing",  "##ed"};
  return w;
}

// A sentence of `n` words from the vocabulary, chosen by `seed`.
inline std::string serve_sentence(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto& w = serve_words();
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    std::string word;
    do word = w[rng() % w.size()];
    while (word.rfind("##", 0) == 0 || word == "s" || word == "'");
    if (i) s += ' ';
    s += word;
  }
  return s;
}

inline void write_vocab_and_config(const std::filesystem::path& dir, size_t max_length, const std::string& name) {
  std::filesystem::create_directories(dir);
  std::ofstream v(dir / "vocab.txt");
  v << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (const auto& w : serve_words()) v << w << "\n";
  std::ofstream(dir / "tokenizer_config.json")
      << "{\"do_lower_case\": true, \"model_max_length\": " << max_length << ", \"name_or_path\": \"" << name << "\"}\n";
}

inline size_t serve_vocab_size() { return 5 + serve_words().size(); }

namespace detail {
inline void add_io(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name, int dtype,
                   const std::vector<std::string>& dims, int64_t last = 0) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  for (const auto& d : dims) tt->mutable_shape()->add_dim()->set_dim_param(d);
  if (last) tt->mutable_shape()->add_dim()->set_dim_value(last);
}
inline void add_float(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, std::mt19937& rng,
                      float scale) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (auto d : dims) t->add_dims(d), n *= d;
  std::normal_distribution<float> nd(0.f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = nd(rng);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}
using dlrt::testing::add_onnx_node;
}  // namespace detail

// Writes the tiny model folder into `dir` (created), vectors of `dim` values. Returns false on I/O failure.
inline bool make_tiny_model_folder(const std::filesystem::path& dir, int64_t dim = 8) {
  using namespace detail;
  const int64_t kDim = dim;
  write_vocab_and_config(dir, 32, "tiny-bert");
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("dlrt serve tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("tiny_bert");
  add_io(g->mutable_input(), "input_ids", onnx::TensorProto::INT64, {"batch", "sequence"});
  add_io(g->mutable_input(), "attention_mask", onnx::TensorProto::INT64, {"batch", "sequence"});
  add_io(g->mutable_input(), "token_type_ids", onnx::TensorProto::INT64, {"batch", "sequence"});
  add_io(g->mutable_output(), "last_hidden_state", onnx::TensorProto::FLOAT, {"batch", "sequence"}, kDim);
  std::mt19937 rng(7);
  add_float(g, "word_embeddings", {static_cast<int64_t>(serve_vocab_size()), kDim}, rng, 1.f);
  add_float(g, "type_embeddings", {2, kDim}, rng, 0.1f);
  add_float(g, "dense_w", {kDim, kDim}, rng, 0.5f);
  add_float(g, "dense_b", {kDim}, rng, 0.1f);
  auto* axes = g->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(-1);
  add_onnx_node(g, "Gather", {"word_embeddings", "input_ids"}, "words");
  add_onnx_node(g, "Gather", {"type_embeddings", "token_type_ids"}, "types");
  add_onnx_node(g, "Add", {"words", "types"}, "embedded");
  add_onnx_node(g, "MatMul", {"embedded", "dense_w"}, "dense");
  add_onnx_node(g, "Add", {"dense", "dense_b"}, "hidden");
  auto* cast = add_onnx_node(g, "Cast", {"attention_mask"}, "mask_f");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  add_onnx_node(g, "Unsqueeze", {"mask_f", "axes"}, "mask3");
  add_onnx_node(g, "Mul", {"hidden", "mask3"}, "last_hidden_state");
  std::ofstream f(dir / "model.onnx", std::ios::binary);
  return m.SerializeToOstream(&f) && f.good();
}

// The zoo's MiniLM in a folder (model.onnx symlinked); "" without DLRT_ZOO_DIR
// or when the zoo has no minilm_l6.onnx (`why` says which).
inline std::string make_minilm_folder(const std::filesystem::path& dir, std::string* why) {
  const char* zoo = std::getenv("DLRT_ZOO_DIR");
  if (!zoo || !*zoo) {
    if (why) *why = "DLRT_ZOO_DIR is not set";
    return "";
  }
  std::filesystem::path onnx = std::filesystem::path(zoo) / "minilm_l6.onnx";
  if (!std::filesystem::exists(onnx)) {
    if (why) *why = onnx.string() + " does not exist";
    return "";
  }
  write_vocab_and_config(dir, 128, "minilm_l6");
  std::error_code ec;
  std::filesystem::remove(dir / "model.onnx", ec);
  std::filesystem::create_symlink(std::filesystem::absolute(onnx), dir / "model.onnx", ec);
  if (ec) {
    if (why) *why = "cannot link " + onnx.string() + ": " + ec.message();
    return "";
  }
  return dir.string();
}

// A fresh temp folder for one test.
inline std::filesystem::path serve_temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("dlrt_serve_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace dlrt::embed::testing
