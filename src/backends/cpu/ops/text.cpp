// String ops: StringNormalizer, TfIdfVectorizer.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {

namespace {

std::string ascii_case(std::string s, bool upper) {
  for (auto& c : s)
    c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c))
                                : std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Removes stopwords, then changes case. ASCII case mapping (the locale
// attribute is accepted but only the "C"/en_US behaviour is implemented).
Status string_normalizer_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kString) return ctx.invalid("input must be a string tensor");
  bool two_d = x->rank() == 2;
  if (!(x->rank() == 1 || (two_d && x->dim(0) == 1)))
    return ctx.invalid("input must be [C] or [1, C], got " + shape_to_string(x->shape()));
  std::string action = ctx.node().attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return ctx.invalid("case_change_action must be NONE, LOWER or UPPER, got '" + action + "'");
  bool sensitive = ctx.node().attr_int("is_case_sensitive", 0) != 0;
  std::set<std::string> stop;
  for (const auto& w : ctx.node().attr_strings("stopwords")) stop.insert(sensitive ? w : ascii_case(w, false));
  std::vector<std::string> kept;
  for (int64_t i = 0; i < x->size(); ++i) {
    const std::string& s = x->data<std::string>()[i];
    if (stop.count(sensitive ? s : ascii_case(s, false))) continue;
    kept.push_back(action == "NONE" ? s : ascii_case(s, action == "UPPER"));
  }
  if (kept.empty()) kept.emplace_back();  // the spec's "empty" result is one empty string
  int64_t c = static_cast<int64_t>(kept.size());
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, two_d ? Shape{1, c} : Shape{c}));
  for (int64_t i = 0; i < c; ++i) y->data<std::string>()[i] = kept[i];
  return Status::Ok();
}

// Counts n-grams (with skips) of each row and maps them through the pool.
class TfIdfKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<TfIdfKernel>();
    k->min_n_ = n.attr_int("min_gram_length", 1);
    k->max_n_ = n.attr_int("max_gram_length", 1);
    k->max_skip_ = n.attr_int("max_skip_count", 0);
    k->mode_ = n.attr_string("mode", "TF");
    auto counts = n.attr_ints("ngram_counts");
    auto indexes = n.attr_ints("ngram_indexes");
    k->weights_ = n.attr_floats("weights");
    auto ints = n.attr_ints("pool_int64s");
    auto strs = n.attr_strings("pool_strings");
    k->use_strings_ = !strs.empty();
    if (k->min_n_ < 1 || k->max_n_ < k->min_n_ || k->max_skip_ < 0)
      return InvalidModel(n.describe() + ": bad gram lengths or skip count");
    if (k->mode_ != "TF" && k->mode_ != "IDF" && k->mode_ != "TFIDF")
      return InvalidModel(n.describe() + ": mode must be TF, IDF or TFIDF");
    int64_t pool_size = k->use_strings_ ? static_cast<int64_t>(strs.size()) : static_cast<int64_t>(ints.size());
    // ngram_counts[i] is where the (i+1)-grams start in the pool.
    int64_t gram = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      int64_t begin = counts[i];
      int64_t end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
      int64_t len = static_cast<int64_t>(i) + 1;
      if (begin < 0 || end > pool_size || begin > end || (end - begin) % len != 0)
        return InvalidModel(n.describe() + ": ngram_counts do not match the pool");
      for (int64_t p = begin; p < end; p += len, ++gram) {
        if (gram >= static_cast<int64_t>(indexes.size())) return InvalidModel(n.describe() + ": too few ngram_indexes");
        std::vector<std::string> key;
        for (int64_t q = 0; q < len; ++q) key.push_back(k->use_strings_ ? strs[p + q] : std::to_string(ints[p + q]));
        k->pool_[key] = indexes[gram];
        k->out_size_ = std::max(k->out_size_, indexes[gram] + 1);
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 1 && x->rank() != 2) return ctx.invalid("input must be [C] or [N, C]");
    int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
    int64_t cols = x->rank() == 2 ? x->dim(1) : x->dim(0);
    std::vector<std::string> items(static_cast<size_t>(x->size()));
    if (x->dtype() == DType::kString) {
      if (!use_strings_) return ctx.invalid("string input but an integer pool");
      for (int64_t i = 0; i < x->size(); ++i) items[i] = x->data<std::string>()[i];
    } else {
      DLRT_ASSIGN_OR_RETURN(auto v, read_int_tensor(*x, ctx));
      for (int64_t i = 0; i < x->size(); ++i) items[i] = std::to_string(v[i]);
    }
    Shape os = x->rank() == 2 ? Shape{rows, out_size_} : Shape{out_size_};
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, os));
    float* out = y->data<float>();
    std::vector<std::string> key;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> counts(static_cast<size_t>(out_size_), 0);
      for (int64_t start = 0; start < cols; ++start)
        for (int64_t n = min_n_; n <= max_n_; ++n) {
          int64_t skips = n == 1 ? 0 : max_skip_;
          for (int64_t skip = 0; skip <= skips; ++skip) {
            int64_t last = start + (n - 1) * (skip + 1);
            if (last >= cols) break;
            key.clear();
            for (int64_t q = 0; q < n; ++q) key.push_back(items[r * cols + start + q * (skip + 1)]);
            auto it = pool_.find(key);
            if (it != pool_.end()) ++counts[it->second];
          }
        }
      for (int64_t i = 0; i < out_size_; ++i) {
        float w = i < static_cast<int64_t>(weights_.size()) ? weights_[i] : 1.0f;
        float c = static_cast<float>(counts[i]);
        out[r * out_size_ + i] = mode_ == "TF" ? c : mode_ == "IDF" ? (c > 0 ? w : 0.0f) : c * w;
      }
    }
    return Status::Ok();
  }

 private:
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0, out_size_ = 0;
  std::string mode_;
  bool use_strings_ = false;
  std::vector<float> weights_;
  std::map<std::vector<std::string>, int64_t> pool_;
};

}  // namespace

Status register_text_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("StringNormalizer", string_normalizer_kernel, 10));
  KernelDef d;
  d.op_type = "TfIdfVectorizer";
  d.min_opset = 9;
  d.factory = TfIdfKernel::create;
  return r.add(std::move(d));
}

}  // namespace dlrt::cpu
