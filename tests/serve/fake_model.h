// A test double of the embedding model for the server tests: whitespace
// "tokenizer", vectors that encode the input, and switches for delay,
// blocking (a gate), failure and placement.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "embed/serve/server.h"

namespace dlrt::embed::testing {

class FakeModel final : public EmbedModel, public DenseOut, public SparseOut, public PerTokenOut {
 public:
  static constexpr size_t kDim = 4;

  explicit FakeModel(size_t max_length = 16) : max_length_(max_length) {}
  // A model named `name` whose vectors have `dim` (>= 4) values (the rest zero).
  FakeModel(std::string name, size_t dim) : max_length_(16), name_(std::move(name)), dim_(dim) {}

  // ids: 101, one per word (1000 + word length), 102.
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    if (throw_bad_alloc.load()) throw std::bad_alloc();  // as a tokenizer out of memory does
    Encoding e;
    e.ids.push_back(101);
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && text[i] == ' ') ++i;
      size_t j = i;
      while (j < text.size() && text[j] != ' ') ++j;
      if (j > i) e.ids.push_back(1000 + static_cast<int64_t>(j - i));
      i = j;
    }
    e.ids.push_back(102);
    if (truncated) *truncated = e.ids.size() > max_length_;
    if (e.ids.size() > max_length_) {
      e.ids.resize(max_length_ - 1);
      e.ids.push_back(102);
    }
    e.type_ids.assign(e.ids.size(), 0);
    e.attention_mask.assign(e.ids.size(), 1);
    return e;
  }

  // tokenize() with each word's byte offsets; (0, 0) for 101 and 102.
  Result<Encoding> tokenize_with_offsets(std::string_view text,
                                         std::vector<std::pair<size_t, size_t>>& offsets) const override {
    offsets = {{0, 0}};
    for (size_t i = 0; i < text.size();) {
      while (i < text.size() && text[i] == ' ') ++i;
      size_t j = i;
      while (j < text.size() && text[j] != ' ') ++j;
      if (j > i) offsets.push_back({i, j});
      i = j;
    }
    offsets.push_back({0, 0});
    auto e = tokenize(text, nullptr);
    if (e.ok() && offsets.size() > e->ids.size()) {  // truncated: keep the last (special) one
      offsets.resize(e->ids.size() - 1);
      offsets.push_back({0, 0});
    }
    return e;
  }

  // vector = {tokens, second id, batch size, 1}. The delay honours
  // bounds.timeout_ms as Session::run does (kCancelled once it passes).
  Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const override {
    const auto start = std::chrono::steady_clock::now();
    int now = ++running_;
    {
      std::lock_guard<std::mutex> lk(mu_);
      batch_sizes_.push_back(batch.size());
      timeouts_ms_.push_back(bounds.timeout_ms);
      max_running_ = std::max(max_running_, now);
    }
    entered_cv_.notify_all();
    {
      std::unique_lock<std::mutex> lk(mu_);
      gate_cv_.wait(lk, [&] { return gate_open_; });
    }
    const auto end = start + std::chrono::milliseconds(delay_ms.load());
    while (std::chrono::steady_clock::now() < end) {
      if (bounds.timeout_ms > 0 &&
          std::chrono::steady_clock::now() - start > std::chrono::duration<double, std::milli>(bounds.timeout_ms)) {
        --running_;
        return Status(StatusCode::kCancelled, "the fake run took longer than its timeout");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    --running_;
    if (StatusCode c = fail_code.load(); c != StatusCode::kOk) return Status(c, "fake device failure");
    EmbedResult r;
    for (const auto& e : batch) {
      r.vectors.push_back({static_cast<float>(e.ids.size()), static_cast<float>(e.ids.size() > 1 ? e.ids[1] : 0),
                           static_cast<float>(batch.size()), 1.f});
      r.vectors.back().resize(dim_, 0.f);
      r.total_tokens += e.ids.size();
    }
    r.report = placement();
    return r;
  }

  size_t dimension() const override { return dim_; }
  std::string model_name() const override { return name_; }
  size_t max_length() const override { return max_length_; }
  size_t token_row_bytes() const override { return row_bytes; }
  size_t row_bytes = 0;  // token_row_bytes() (0: not known)
  dlrt::RunReport placement() const override {
    std::lock_guard<std::mutex> lk(mu_);
    return placement_;
  }

  // Token ids below 2000; 101 and 102 are special; "query" is a prompt.
  size_t vocab_size() const override { return 2000; }
  std::string token_text(int64_t id) const override { return "t" + std::to_string(id); }
  bool is_special_token(int64_t id) const override { return id == 101 || id == 102; }
  std::optional<std::string> prompt(const std::string& name) const override {
    if (name == "query") return std::string("query: ");
    return std::nullopt;
  }
  std::vector<std::string> prompt_names() const override { return {"query"}; }
  Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const override {
    std::string out;
    for (int64_t id : ids) {
      if (id >= 2000) return InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary");
      if (skip_special_tokens && is_special_token(id)) continue;
      out += (out.empty() ? "" : " ") + token_text(id);
    }
    return out;
  }
  std::string pooling() const override { return "mean"; }
  // A sparse (SPLADE) model when `sparse` is set before serving: the sparse
  // routes answer it, the dense ones refuse; a multi-vector (ColBERT) model
  // when `multi_vector` is: /embed_all and MaxSim /rerank.
  ModelKind kind() const override {
    return sparse ? ModelKind::kSparse : multi_vector ? ModelKind::kMultiVector : ModelKind::kDense;
  }
  // A sparse model's vectors: embed_encoded's non-zero values.
  Result<SparseResult> encode_sparse(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const override {
    DLRT_ASSIGN_OR_RETURN(EmbedResult dense, embed_encoded(batch, bounds));
    SparseResult r;
    for (const auto& v : dense.vectors) r.vectors.push_back(sparsify(v));
    r.total_tokens = dense.total_tokens;
    r.report = std::move(dense.report);
    return r;
  }
  Result<Encoding> tokenize_tokens(std::string_view text, bool, bool* truncated) const override {
    return tokenize(text, truncated);
  }
  std::string similarity_fn_name() const override { return similarity; }
  // Per-token vectors (/embed_all, MaxSim): each token's is {1, 0, ...} (dimension() values), so
  // a query scores its token count against any text.
  Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool,
                                        const dlrt::RunOptions&) const override {
    ++token_runs;
    TokenEmbedResult r;
    for (const Encoding& e : batch) {
      std::vector<float> one(dim_, 0.f);
      one[0] = 1.f;
      r.tokens.emplace_back(e.ids.size(), one);
      r.total_tokens += e.ids.size();
    }
    return r;
  }

  // What /info reports under "cpu_precision" (set before the server reads it).
  const dlrt::PrecisionChoice* precision_choice() const override { return &precision_; }
  dlrt::PrecisionChoice precision_;

  void set_placement(dlrt::RunReport r) {
    std::lock_guard<std::mutex> lk(mu_);
    placement_ = std::move(r);
  }
  void close_gate() {
    std::lock_guard<std::mutex> lk(mu_);
    gate_open_ = false;
  }
  void open_gate() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      gate_open_ = true;
    }
    gate_cv_.notify_all();
  }
  // Waits until `n` batches have started (true) or the timeout passed.
  bool wait_batches(size_t n, int timeout_ms = 5000) const {
    std::unique_lock<std::mutex> lk(mu_);
    return entered_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return batch_sizes_.size() >= n; });
  }
  std::vector<size_t> batch_sizes() const {
    std::lock_guard<std::mutex> lk(mu_);
    return batch_sizes_;
  }
  // The timeout each batch ran with (RunOptions::timeout_ms, 0: none).
  std::vector<double> timeouts_ms() const {
    std::lock_guard<std::mutex> lk(mu_);
    return timeouts_ms_;
  }
  int max_running() const {
    std::lock_guard<std::mutex> lk(mu_);
    return max_running_;
  }

  std::atomic<int> delay_ms{0};
  std::atomic<StatusCode> fail_code{StatusCode::kOk};
  std::atomic<bool> throw_bad_alloc{false};
  bool sparse = false;
  bool multi_vector = false;
  std::string similarity = "cosine";       // similarity_fn_name()
  mutable std::atomic<int> token_runs{0};  // embed_tokens() calls

 private:
  size_t max_length_;
  std::string name_ = "fake-model";
  size_t dim_ = kDim;
  mutable std::mutex mu_;
  mutable std::condition_variable gate_cv_, entered_cv_;
  bool gate_open_ = true;
  mutable std::vector<size_t> batch_sizes_;
  mutable std::vector<double> timeouts_ms_;
  mutable int max_running_ = 0;
  mutable std::atomic<int> running_{0};
  dlrt::RunReport placement_;
};

// A test double of a reranker (a cross-encoder of one label): a pair's
// logit is `scale` times its document's words, so the model that scored it
// shows. classify() waits while the gate is closed.
class FakeReranker final : public EmbedModel, public PairScorer {
 public:
  FakeReranker(std::string name, float scale) : name_(std::move(name)), scale_(scale) {}

  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    return tokenize_pair(text, "", truncated);
  }
  // ids: 101, one per word of `second`, 102.
  Result<Encoding> tokenize_pair(std::string_view, std::string_view second, bool* truncated) const override {
    Encoding e;
    e.ids.push_back(101);
    for (size_t i = 0; i < second.size();) {
      while (i < second.size() && second[i] == ' ') ++i;
      size_t j = i;
      while (j < second.size() && second[j] != ' ') ++j;
      if (j > i) e.ids.push_back(1000);
      i = j;
    }
    e.ids.push_back(102);
    if (truncated) *truncated = false;
    e.type_ids.assign(e.ids.size(), 0);
    e.attention_mask.assign(e.ids.size(), 1);
    return e;
  }
  Result<std::vector<std::vector<float>>> classify(const std::vector<Encoding>& batch,
                                                   const dlrt::RunOptions&) const override {
    {
      std::unique_lock<std::mutex> lk(mu_);
      ++runs_;
      batches_.push_back(batch);
      gate_cv_.wait(lk, [&] { return gate_open_; });
    }
    std::vector<std::vector<float>> out;
    for (const Encoding& e : batch) out.push_back({scale_ * static_cast<float>(e.ids.size() - 2)});
    return out;
  }
  ModelKind kind() const override { return ModelKind::kCrossEncoder; }
  std::vector<std::string> labels() const override { return {"LABEL_0"}; }
  size_t dimension() const override { return 1; }
  std::string model_name() const override { return name_; }
  size_t max_length() const override { return 64; }
  dlrt::RunReport placement() const override { return {}; }
  size_t token_row_bytes() const override { return row_bytes; }
  size_t row_bytes = 0;  // token_row_bytes() (0: not known)

  void close_gate() {
    std::lock_guard<std::mutex> lk(mu_);
    gate_open_ = false;
  }
  void open_gate() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      gate_open_ = true;
    }
    gate_cv_.notify_all();
  }
  // classify() calls so far (counted on entry, before the gate).
  int runs() const {
    std::lock_guard<std::mutex> lk(mu_);
    return runs_;
  }
  // The batch of each classify() call so far.
  std::vector<std::vector<Encoding>> batches() const {
    std::lock_guard<std::mutex> lk(mu_);
    return batches_;
  }

 private:
  std::string name_;
  float scale_;
  mutable std::mutex mu_;
  mutable std::condition_variable gate_cv_;
  bool gate_open_ = true;
  mutable int runs_ = 0;
  mutable std::vector<std::vector<Encoding>> batches_;
};

}  // namespace dlrt::embed::testing
