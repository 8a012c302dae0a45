// Per-item dynamic quantization (RunOptions::item_lengths) on the trained
// all-MiniLM-L6-v2 of $DLRT_TRAINED_INT8_DIR (tests/models/make_trained_int8.py,
// mean pooling inside the graph): its 64 sentences, batched in shuffled
// batches of mixed lengths and padded, get the sentence embeddings they get
// alone, bit for bit; without item_lengths they do not. The same for the
// form ONNX Runtime's transformer optimiser saves before quantize_dynamic
// (SkipLayerNormalization, BiasGelu around the integer products).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/npy.h"
#include "dlrt/session.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

struct Sentence {
  std::vector<int64_t> ids, mask, types;
};

std::unique_ptr<Session> open_cpu(const fs::path& onnx) {
  SessionOptions o;
  o.device = "cpu";
  o.threads = 2;
  auto s = Session::create(onnx.string(), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(*s) : nullptr;
}

// The sentences, padded with zeros to the longest, as one batch.
std::map<std::string, Tensor> batch_feeds(const std::vector<const Sentence*>& batch) {
  size_t len = 0;
  for (const Sentence* s : batch) len = std::max(len, s->ids.size());
  const Shape shape{static_cast<int64_t>(batch.size()), static_cast<int64_t>(len)};
  std::map<std::string, Tensor> feeds;
  const std::pair<const char*, std::vector<int64_t> Sentence::*> fields[] = {
      {"input_ids", &Sentence::ids}, {"attention_mask", &Sentence::mask}, {"token_type_ids", &Sentence::types}};
  for (const auto& [name, field] : fields) {
    Tensor t = Tensor::allocate(DType::kInt64, shape).value();
    for (size_t b = 0; b < batch.size(); ++b) {
      const std::vector<int64_t>& v = batch[b]->*field;
      std::copy(v.begin(), v.end(), t.data<int64_t>() + b * len);
    }
    feeds.emplace(name, std::move(t));
  }
  return feeds;
}

class TrainedInt8 : public ::testing::TestWithParam<const char*> {};

TEST_P(TrainedInt8, BatchedSentencesGetTheirAloneBits) {
  const char* env = std::getenv("DLRT_TRAINED_INT8_DIR");
  if (!env || !*env)
    GTEST_SKIP() << "DLRT_TRAINED_INT8_DIR is not set, so the trained-int8 batching check did not run "
                    "(scripts/run_tests.sh makes it with tests/models/make_trained_int8.py)";
  const std::string model = GetParam();
  const fs::path dir = fs::path(env) / model;
  std::vector<Sentence> sentences;
  for (int i = 0; i < 64; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "s%02d", i);
    Sentence s;
    for (auto [file, field] : {std::pair{"input_ids", &s.ids}, {"attention_mask", &s.mask}, {"token_type_ids", &s.types}}) {
      auto t = read_npy_file((dir / name / (std::string(file) + ".npy")).string());
      ASSERT_TRUE(t.ok()) << t.status().to_string();
      ASSERT_EQ(t->dtype(), DType::kInt64);
      field->assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
    }
    sentences.push_back(std::move(s));
  }
  auto session = open_cpu(fs::path(env) / (model + ".onnx"));
  ASSERT_TRUE(session);
  std::vector<std::vector<float>> alone;
  for (const Sentence& s : sentences) {
    auto r = session->run(batch_feeds({&s}));
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    alone.emplace_back((*r)[0].data<float>(), (*r)[0].data<float>() + (*r)[0].size());
  }
  std::mt19937 rng(76);
  std::vector<size_t> order(sentences.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  size_t compared = 0, lengths_seen = 0, differ_per_tensor = 0;
  for (size_t batch : {64u, 9u, 2u}) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t start = 0; start < order.size(); start += batch) {
      std::vector<const Sentence*> part;
      RunOptions per_item;
      for (size_t k = start; k < std::min(order.size(), start + batch); ++k) {
        part.push_back(&sentences[order[k]]);
        per_item.item_lengths.push_back(static_cast<int64_t>(sentences[order[k]].ids.size()));
      }
      const auto feeds = batch_feeds(part);
      auto r = session->run(feeds, per_item);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      auto plain = session->run(feeds);
      ASSERT_TRUE(plain.ok()) << plain.status().to_string();
      const size_t dim = alone[0].size();
      for (size_t k = 0; k < part.size(); ++k) {
        const std::vector<float>& want = alone[order[start + k]];
        EXPECT_EQ(std::memcmp((*r)[0].data<float>() + k * dim, want.data(), dim * sizeof(float)), 0)
            << "sentence " << order[start + k] << " (" << part[k]->ids.size() << " tokens) in a batch of "
            << part.size();
        differ_per_tensor += std::memcmp((*plain)[0].data<float>() + k * dim, want.data(), dim * sizeof(float)) != 0;
        ++compared;
      }
      std::vector<int64_t> l = per_item.item_lengths;
      std::sort(l.begin(), l.end());
      lengths_seen += static_cast<size_t>(std::unique(l.begin(), l.end()) - l.begin());
    }
  }
  EXPECT_EQ(compared, 3 * sentences.size());
  EXPECT_GT(lengths_seen, 3 * 2u) << "the batches should mix lengths";
  // Per tensor, padding and batch-mates move the scales (the check above could fail).
  EXPECT_GT(differ_per_tensor, compared / 2);

}

INSTANTIATE_TEST_SUITE_P(Models, TrainedInt8,
                         ::testing::Values("minilm_trained_dynamic_qint8", "minilm_trained_ort_optimized_dynamic_qint8"));

}  // namespace
}  // namespace dlrt
