// String ops: StringNormalizer, StringConcat, StringSplit, TfIdfVectorizer.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/ops/broadcast.h"
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

// X + Y elementwise, with numpy broadcasting.
Status string_concat_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  if (a->dtype() != DType::kString || b->dtype() != DType::kString) return ctx.invalid("inputs must be string tensors");
  DLRT_ASSIGN_OR_RETURN(Shape os, broadcast_shapes(a->shape(), b->shape()));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, os));
  if (y->size() == 0) return Status::Ok();
  DLRT_ASSIGN_OR_RETURN(auto plan, make_broadcast_plan<2>(os, {&a->shape(), &b->shape()}));
  const std::string* x0 = a->data<std::string>();
  const std::string* x1 = b->data<std::string>();
  std::string* out = y->data<std::string>();
  for_each_run(plan, nullptr, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
    for (int64_t i = 0; i < n; ++i) out[o + i] = x0[off[0] + i * st[0]] + x1[off[1] + i * st[1]];
  });
  return Status::Ok();
}

// Splits each string on `delimiter` (consecutive delimiters delimit empty
// strings) or, without one, on runs of whitespace (ignoring leading and
// trailing whitespace), at most `maxsplit` times. Y gets one more dim, padded
// with empty strings to the most substrings of any element; Z the counts.
Status string_split_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kString) return ctx.invalid("input must be a string tensor");
  const std::string delim = ctx.node().attr_string("delimiter", "");
  const bool has_max = ctx.node().has_attr("maxsplit");
  const int64_t maxsplit = ctx.node().attr_int("maxsplit", 0);
  if (has_max && maxsplit < 0) return ctx.invalid("maxsplit must be >= 0");
  const int64_t n = x->size();
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(n));
  int64_t widest = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::string& s = x->data<std::string>()[i];
    auto& p = parts[static_cast<size_t>(i)];
    if (delim.empty()) {
      auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
      size_t pos = 0;
      while (pos < s.size() && is_space(s[pos])) ++pos;
      while (pos < s.size()) {
        if (has_max && static_cast<int64_t>(p.size()) == maxsplit) {
          size_t end = s.size();
          while (end > pos && is_space(s[end - 1])) --end;
          p.push_back(s.substr(pos, end - pos));
          break;
        }
        size_t end = pos;
        while (end < s.size() && !is_space(s[end])) ++end;
        p.push_back(s.substr(pos, end - pos));
        pos = end;
        while (pos < s.size() && is_space(s[pos])) ++pos;
      }
    } else {
      size_t pos = 0;
      while (true) {
        size_t hit = s.find(delim, pos);
        if (hit == std::string::npos || (has_max && static_cast<int64_t>(p.size()) == maxsplit)) {
          p.push_back(s.substr(pos));
          break;
        }
        p.push_back(s.substr(pos, hit - pos));
        pos = hit + delim.size();
      }
    }
    widest = std::max<int64_t>(widest, static_cast<int64_t>(p.size()));
  }
  Shape ys = x->shape();
  ys.push_back(widest);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, ys));
  DLRT_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DType::kInt64, x->shape()));
  for (int64_t i = 0; i < n; ++i) {
    const auto& p = parts[static_cast<size_t>(i)];
    for (int64_t k = 0; k < widest; ++k)
      y->data<std::string>()[i * widest + k] = k < static_cast<int64_t>(p.size()) ? p[k] : std::string();
    z->data<int64_t>()[i] = static_cast<int64_t>(p.size());
  }
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
  DLRT_RETURN_IF_ERROR(r.add_fn("StringConcat", string_concat_kernel, 20));
  DLRT_RETURN_IF_ERROR(r.add_fn("StringSplit", string_split_kernel, 20));
  KernelDef d;
  d.op_type = "TfIdfVectorizer";
  d.min_opset = 9;
  d.factory = TfIdfKernel::create;
  return r.add(std::move(d));
}

}  // namespace dlrt::cpu
