// ai.onnx.ml SVMClassifier and SVMRegressor (libsvm / liblinear models as
// scikit-learn's converters write them), with ONNX Runtime's semantics:
//  - the input is read as float32; kernel values K(x, sv) of LINEAR (x·sv),
//    POLY ((gamma x·sv + coef0)^degree), RBF (exp(-gamma |x - sv|^2)) or
//    SIGMOID (tanh(gamma x·sv + coef0)), kernel_params = [gamma, coef0, degree];
//  - SVMClassifier with support vectors (libsvm): one decision value per pair
//    of classes i < j, d = sum over class i's vectors of coef[j-1][v] K +
//    sum over class j's of coef[i][v] K + rho[pair]; d > 0 votes for i, else j;
//    the label is the class with the most votes (the first on ties). Without
//    prob_a/prob_b the scores are the decision values (two classes: [-d, d]
//    with post_transform NONE, [logistic(-d), logistic(d)] with LOGISTIC,
//    [1 - d, d] with SOFTMAX*); with them, Platt's
//    pairwise probabilities 1 - logistic(d a + b), clipped to [1e-7, 1 - 1e-7],
//    are coupled into one probability per class (Wu, Lin and Weng's method 2,
//    as libsvm and ONNX Runtime compute it, in float);
//  - SVMClassifier without support vectors (liblinear): scores
//    x·coef[c] + rho[0]; label = the class of the largest score, except that
//    for two classes without probabilities labels[1] wins where that score is
//    >= 0.5 (all coefficients >= 0) or > 0 (mixed signs);
//  - SVMRegressor: sum coef[v] K(x, sv) + rho[0] (or x·coef + rho[0] without
//    support vectors); one_class maps it to +1 / -1; post_transform is not
//    applied (ONNX Runtime ignores it).
// Attributes are checked and kept once per kernel; each run's kernel values
// live in per-thread scratch, and the dot products go through sgemm.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/ml_util.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/scratch_check.h"
#include "core/tensor_values.h"

namespace dlrt::cpu {
namespace {

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

// What both SVM ops share: the kernel function and the support vectors.
struct SvmCommon {
  SvmKernel kernel = SvmKernel::kLinear;
  float gamma = 0, coef0 = 0, degree = 0;
  int64_t features = 0;  // of each support vector (or coefficient row)
  int64_t vectors = 0;   // support vectors; 0: the linear (liblinear) form
  std::vector<float> support;

  Status read(const ir::Node& n) {
    const std::string kt = n.attr_string("kernel_type", "LINEAR");
    if (kt == "LINEAR") kernel = SvmKernel::kLinear;
    else if (kt == "POLY") kernel = SvmKernel::kPoly;
    else if (kt == "RBF") kernel = SvmKernel::kRbf;
    else if (kt == "SIGMOID") kernel = SvmKernel::kSigmoid;
    else return InvalidModel(n.describe() + ": kernel_type must be LINEAR, POLY, RBF or SIGMOID, got " + kt);
    const auto params = n.attr_floats("kernel_params");
    if (!params.empty()) {
      if (params.size() != 3) return InvalidModel(n.describe() + ": kernel_params must be [gamma, coef0, degree]");
      gamma = params[0], coef0 = params[1], degree = params[2];
    }
    support = n.attr_floats("support_vectors");
    return Status::Ok();
  }

  // The input as float32 rows of `features`: X itself, or a converted copy in `scratch`.
  Result<const float*> rows_of(KernelContext& ctx, const Tensor& x, int64_t& rows, AlignedScratch& scratch) const {
    if (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat64 && x.dtype() != DType::kInt64 &&
        x.dtype() != DType::kInt32)
      return ctx.invalid(std::string("X must be float, double, int64 or int32, got ") + dtype_name(x.dtype()));
    const int64_t f = x.rank() ? x.shape().back() : 1;
    if (f != features)
      return ctx.invalid("X has " + std::to_string(f) + " features per row, the model " + std::to_string(features));
    rows = f > 0 ? x.size() / f : 0;
    if (x.dtype() == DType::kFloat32) return x.data<float>();
    float* c = scratch.get<float>(static_cast<size_t>(x.size()), AlignedScratch::Growth::kByHalf);
    for (int64_t i = 0; i < x.size(); ++i) c[i] = static_cast<float>(element_as_double(x, i));
    return static_cast<const float*>(c);
  }

  // out[r, v] = K(x[r], b[v]) for the m rows of x and the n rows of b (all of
  // `features` values); `bias` is added to the LINEAR kernel's dot products.
  void kernel_values(const float* x, int64_t m, const float* b, int64_t n, float bias, float* out,
                     ThreadPool* pool) const {
    const int64_t k = features;
    if (kernel == SvmKernel::kRbf) {
      for (int64_t r = 0; r < m; ++r)
        for (int64_t v = 0; v < n; ++v) {
          float sum = 0;
          for (int64_t j = 0; j < k; ++j) {
            const float d = x[r * k + j] - b[v * k + j];
            sum += d * d;
          }
          out[r * n + v] = std::exp(-gamma * sum);
        }
      return;
    }
    const bool linear = kernel == SvmKernel::kLinear;
    sgemm(false, true, m, n, k, linear ? 1.0f : gamma, x, k, b, k, 0.0f, out, n, pool);
    const float c = linear ? bias : coef0;
    const int64_t total = m * n;
    if (c != 0)
      for (int64_t i = 0; i < total; ++i) out[i] += c;
    if (kernel == SvmKernel::kPoly) {
      for (int64_t i = 0; i < total; ++i) {
        const float v = out[i];
        out[i] = degree == 2 ? v * v : degree == 3 ? v * v * v : std::pow(v, degree);
      }
    } else if (kernel == SvmKernel::kSigmoid) {
      for (int64_t i = 0; i < total; ++i) out[i] = std::tanh(out[i]);
    }
  }
};

// Coupling of the pairwise probabilities r (k x k, r[i][j] = P(i | i or j))
// into p[k], in float as ONNX Runtime (libsvm's multiclass_probability).
// q and qp: k * k and k floats of scratch.
void couple_probabilities(int64_t k, const float* r, float* p, float* q, float* qp) {
  const float eps = 0.005f / static_cast<float>(k);
  std::fill(q, q + k * k, 0.0f);
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    for (int64_t j = 0; j < i; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = q[j * k + i];
    }
    for (int64_t j = i + 1; j < k; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = -r[j * k + i] * r[i * k + j];
    }
  }
  for (int loop = 0; loop < 100; ++loop) {
    float pqp = 0;
    for (int64_t i = 0; i < k; ++i) {
      qp[i] = 0;
      for (int64_t j = 0; j < k; ++j) qp[i] += q[i * k + j] * p[j];
      pqp += p[i] * qp[i];
    }
    float max_error = 0;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::fabs(qp[i] - pqp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const float diff = (-qp[i] + pqp) / q[i * k + i];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

class SvmClassifierKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<SvmClassifierKernel>();
    SvmCommon& c = k->common_;
    DLRT_RETURN_IF_ERROR(c.read(n));
    k->per_class_ = n.attr_ints("vectors_per_class");
    k->coef_ = n.attr_floats("coefficients");
    k->rho_ = n.attr_floats("rho");
    k->prob_a_ = n.attr_floats("prob_a");
    k->prob_b_ = n.attr_floats("prob_b");
    k->labels_i_ = n.attr_ints("classlabels_ints");
    k->labels_s_ = n.attr_strings("classlabels_strings");
    auto post = ml_parse_post(n.attr_string("post_transform", "NONE"));
    if (!post.ok()) return InvalidModel(n.describe() + ": " + post.status().message());
    k->post_ = *post;
    const std::string d = n.describe() + ": ";
    k->strings_ = !k->labels_s_.empty();
    if (k->strings_ == !k->labels_i_.empty())
      return InvalidModel(d + "exactly one of classlabels_ints and classlabels_strings must be set");
    const int64_t classes = static_cast<int64_t>(k->strings_ ? k->labels_s_.size() : k->labels_i_.size());
    k->classes_ = classes;
    if (classes < 2) return InvalidModel(d + "at least two class labels are needed");
    if (k->coef_.empty()) return InvalidModel(d + "coefficients are missing");
    if (k->prob_a_.size() != k->prob_b_.size()) return InvalidModel(d + "prob_a and prob_b differ in length");
    const int64_t pairs = classes * (classes - 1) / 2;
    k->pairs_ = pairs;
    // The counts sum to the number of support vectors, which are all in
    // support_vectors: a sum past that (a wrapping one included) is refused.
    const int64_t stored = static_cast<int64_t>(c.support.size());
    for (int64_t v : k->per_class_) {
      if (v < 0) return InvalidModel(d + "a negative vectors_per_class");
      if (v > stored - c.vectors)
        return InvalidModel(d + "vectors_per_class sums past the " + std::to_string(stored) +
                            " support_vectors values");
      k->start_.push_back(c.vectors);
      c.vectors += v;
    }
    if (c.vectors > 0) {
      if (static_cast<int64_t>(k->per_class_.size()) != classes)
        return InvalidModel(d + "vectors_per_class must have one count per class label");
      if (c.support.empty() || c.support.size() % static_cast<size_t>(c.vectors) != 0)
        return InvalidModel(d + "support_vectors do not split into " + std::to_string(c.vectors) + " vectors");
      c.features = static_cast<int64_t>(c.support.size()) / c.vectors;
      if (static_cast<int64_t>(k->coef_.size()) < (classes - 1) * c.vectors)
        return InvalidModel(d + "coefficients must have (classes - 1) x vectors values");
      if (static_cast<int64_t>(k->rho_.size()) < pairs) return InvalidModel(d + "rho must have one value per pair of classes");
      if (!k->prob_a_.empty() && static_cast<int64_t>(k->prob_a_.size()) < pairs)
        return InvalidModel(d + "prob_a and prob_b must have one value per pair of classes");
      if (classes == 2 && k->prob_a_.empty() && k->post_ == MlPost::kProbit)
        return Unsupported(d + "PROBIT on the decision value of two classes (ONNX Runtime's second column is undefined)");
    } else {
      c.kernel = SvmKernel::kLinear;
      if (k->coef_.size() % static_cast<size_t>(classes) != 0)
        return InvalidModel(d + "coefficients do not split into one row per class");
      c.features = static_cast<int64_t>(k->coef_.size()) / classes;
      if (k->rho_.empty()) return InvalidModel(d + "rho is missing");
    }
    k->all_positive_ = std::all_of(k->coef_.begin(), k->coef_.end(), [](float v) { return v >= 0; });
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    thread_local AlignedScratch in_scratch, kernel_scratch, work_scratch;
    int64_t rows = 0;
    DLRT_ASSIGN_OR_RETURN(const float* xf, common_.rows_of(ctx, *x, rows, in_scratch));
    const bool svc = common_.vectors > 0, proba = !prob_a_.empty();
    const int64_t k = classes_;
    const int64_t cols = svc && !proba ? (k > 2 ? pairs_ : 2) : k;
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, strings_ ? DType::kString : DType::kInt64, {rows}));
    DLRT_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DType::kFloat32, {rows, cols}));
    float* zd = z->data<float>();
    if (!svc) {
      common_.kernel_values(xf, rows, coef_.data(), k, rho_[0], zd, &ctx.pool());
      for (int64_t r = 0; r < rows; ++r) {
        float* s = zd + r * k;
        const int64_t best = std::max_element(s, s + k) - s;
        int64_t label = best;
        if (k == 2 && !proba && ((all_positive_ && s[best] >= 0.5f) || (!all_positive_ && s[best] > 0))) label = 1;
        ml_post_apply(post_, s, k);
        set_label(*y, r, label);
      }
      return Status::Ok();
    }
    const int64_t nv = common_.vectors;
    // (k and nv are bounded by the attributes' lengths, so k * k and the
    // sum below do not overflow.)
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {rows, nv}, sizeof(float), "the kernel values [rows, support vectors]"));
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {k + pairs_ + 2 * k * k + k}, sizeof(float), "the per-class work space"));
    float* kv = kernel_scratch.get<float>(static_cast<size_t>(rows * nv), AlignedScratch::Growth::kByHalf);
    common_.kernel_values(xf, rows, common_.support.data(), nv, 0.0f, kv, &ctx.pool());
    // Work space: votes (k), decision values (pairs), and for probabilities r (k*k), q (k*k), qp (k).
    float* work = work_scratch.get<float>(static_cast<size_t>(k + pairs_ + 2 * k * k + k), AlignedScratch::Growth::kByHalf);
    float* votes = work;
    float* dec = votes + k;
    float* pr = dec + pairs_;
    float* q = pr + k * k;
    float* qp = q + k * k;
    for (int64_t r = 0; r < rows; ++r) {
      const float* kr = kv + r * nv;
      std::fill(votes, votes + k, 0.0f);
      int64_t pair = 0;
      for (int64_t i = 0; i < k - 1; ++i)
        for (int64_t j = i + 1; j < k; ++j, ++pair) {
          double sum = 0;
          const float* ci = coef_.data() + (j - 1) * nv + start_[i];
          for (int64_t m = 0; m < per_class_[i]; ++m) sum += ci[m] * kr[start_[i] + m];
          const float* cj = coef_.data() + i * nv + start_[j];
          for (int64_t m = 0; m < per_class_[j]; ++m) sum += cj[m] * kr[start_[j] + m];
          sum += rho_[pair];
          dec[pair] = static_cast<float>(sum);
          votes[sum > 0 ? i : j] += 1;
        }
      const int64_t label = std::max_element(votes, votes + k) - votes;
      set_label(*y, r, label);
      float* s = zd + r * cols;
      if (proba) {
        std::fill(pr, pr + k * k, 0.0f);
        pair = 0;
        for (int64_t i = 0; i < k - 1; ++i)
          for (int64_t j = i + 1; j < k; ++j, ++pair) {
            const float p = std::min(std::max(1.0f - ml_logistic(dec[pair] * prob_a_[pair] + prob_b_[pair]), 1.0e-7f),
                                     1 - 1.0e-7f);
            pr[i * k + j] = p;
            pr[j * k + i] = 1 - p;
          }
        couple_probabilities(k, pr, s, q, qp);
        ml_post_apply(post_, s, k);
      } else if (k == 2) {
        ml_write_two(post_ == MlPost::kNone ? MlSecond::kNegate : MlSecond::kComplement, post_, dec[0], s);
      } else {
        std::copy(dec, dec + pairs_, s);
        ml_post_apply(post_, s, pairs_);
      }
    }
    return Status::Ok();
  }

 private:
  void set_label(Tensor& y, int64_t r, int64_t c) const {
    if (strings_) y.data<std::string>()[r] = labels_s_[c];
    else y.data<int64_t>()[r] = labels_i_[c];
  }

  SvmCommon common_;
  std::vector<int64_t> per_class_, start_;
  std::vector<float> coef_, rho_, prob_a_, prob_b_;
  std::vector<int64_t> labels_i_;
  std::vector<std::string> labels_s_;
  bool strings_ = false, all_positive_ = true;
  int64_t classes_ = 0, pairs_ = 0;
  MlPost post_ = MlPost::kNone;
};

class SvmRegressorKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<SvmRegressorKernel>();
    SvmCommon& c = k->common_;
    DLRT_RETURN_IF_ERROR(c.read(n));
    const std::string d = n.describe() + ": ";
    c.vectors = n.attr_int("n_supports", 0);
    k->coef_ = n.attr_floats("coefficients");
    k->rho_ = n.attr_floats("rho");
    k->one_class_ = n.attr_int("one_class", 0) != 0;
    if (k->coef_.empty()) return InvalidModel(d + "coefficients are missing");
    if (k->rho_.empty()) return InvalidModel(d + "rho is missing");
    if (c.vectors < 0) return InvalidModel(d + "n_supports must be >= 0");
    auto post = ml_parse_post(n.attr_string("post_transform", "NONE"));
    if (!post.ok()) return InvalidModel(d + post.status().message());
    if (c.vectors > 0) {
      if (c.support.empty() || c.support.size() % static_cast<size_t>(c.vectors) != 0)
        return InvalidModel(d + "support_vectors do not split into " + std::to_string(c.vectors) + " vectors");
      c.features = static_cast<int64_t>(c.support.size()) / c.vectors;
      if (static_cast<int64_t>(k->coef_.size()) < c.vectors)
        return InvalidModel(d + "coefficients must have one value per support vector");
    } else {
      c.kernel = SvmKernel::kLinear;
      c.features = static_cast<int64_t>(k->coef_.size());
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    thread_local AlignedScratch in_scratch, kernel_scratch;
    int64_t rows = 0;
    DLRT_ASSIGN_OR_RETURN(const float* xf, common_.rows_of(ctx, *x, rows, in_scratch));
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, {rows, 1}));
    float* yd = y->data<float>();
    const int64_t nv = common_.vectors;
    if (nv > 0) {
      DLRT_RETURN_IF_ERROR(check_scratch(ctx, {rows, nv}, sizeof(float), "the kernel values [rows, support vectors]"));
      float* kv = kernel_scratch.get<float>(static_cast<size_t>(rows * nv), AlignedScratch::Growth::kByHalf);
      common_.kernel_values(xf, rows, common_.support.data(), nv, 0.0f, kv, &ctx.pool());
      std::fill(yd, yd + rows, rho_[0]);
      sgemm(false, true, rows, 1, nv, 1.0f, kv, nv, coef_.data(), nv, 1.0f, yd, 1, &ctx.pool());
    } else {
      common_.kernel_values(xf, rows, coef_.data(), 1, rho_[0], yd, &ctx.pool());
    }
    if (one_class_)
      for (int64_t r = 0; r < rows; ++r) yd[r] = yd[r] > 0 ? 1.0f : -1.0f;
    return Status::Ok();
  }

 private:
  SvmCommon common_;
  std::vector<float> coef_, rho_;
  bool one_class_ = false;
};

}  // namespace

Status register_ml_svm_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<SvmClassifierKernel>("SVMClassifier")));
  return r.add(ml_kernel_def<SvmRegressorKernel>("SVMRegressor"));
}

}  // namespace dlrt::cpu
