// ai.onnx.ml TreeEnsembleRegressor and TreeEnsembleClassifier (opsets 1-3,
// the *_as_tensor attributes included), as scikit-learn / XGBoost / LightGBM
// converters write them. Each row walks every tree from its root (the node no
// other node of the tree points to): a branch compares the feature with its
// value by its mode (BRANCH_LEQ, _LT, _GTE, _GT, _EQ, _NEQ; a NaN feature
// takes the true branch where nodes_missing_value_tracks_true says so), a
// leaf adds its weights to their targets or classes. Scores are aggregated
// (SUM, AVERAGE over the trees, MIN, MAX), base values added, post_transform
// applied; the classifier's label is the class of the largest score. A
// classifier with one score column for two labels is refused (ONNX does not
// define how the second column reads).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/ml_util.h"
#include "core/tensor_values.h"

namespace dlrt::cpu {
namespace {

enum class Mode { kLeq, kLt, kGte, kGt, kEq, kNeq, kLeaf };

struct TreeNode {
  Mode mode = Mode::kLeaf;
  int64_t feature = 0;
  double value = 0;
  int32_t yes = -1, no = -1;  // indices into nodes_
  bool nan_yes = false;
  int32_t first_weight = 0, num_weights = 0;  // into weights_
};

// The floats of `name`, or of `name`_as_tensor (opset 3).
std::vector<double> doubles_attr(const ir::Node& n, const std::string& name) {
  std::vector<double> out;
  if (const auto* a = n.attr(name + "_as_tensor"); a && a->kind == ir::Attribute::Kind::kTensor) {
    for (int64_t i = 0; i < a->t.size(); ++i) out.push_back(element_as_double(a->t, i));
  } else if (const auto* f = n.attr(name)) {
    out.assign(f->floats.begin(), f->floats.end());
  }
  return out;
}

class TreeEnsembleKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n, bool classifier) {
    auto k = std::make_unique<TreeEnsembleKernel>();
    k->classifier_ = classifier;
    const auto tree_ids = n.attr_ints("nodes_treeids");
    const auto node_ids = n.attr_ints("nodes_nodeids");
    const auto features = n.attr_ints("nodes_featureids");
    const auto modes = n.attr_strings("nodes_modes");
    const auto values = doubles_attr(n, "nodes_values");
    const auto yes = n.attr_ints("nodes_truenodeids");
    const auto no = n.attr_ints("nodes_falsenodeids");
    const auto nan_yes = n.attr_ints("nodes_missing_value_tracks_true");
    const size_t count = tree_ids.size();
    if (node_ids.size() != count || features.size() != count || modes.size() != count || values.size() != count ||
        yes.size() != count || no.size() != count || (!nan_yes.empty() && nan_yes.size() != count))
      return InvalidModel(n.describe() + ": the nodes_* attributes differ in length");
    std::map<std::pair<int64_t, int64_t>, int32_t> index;
    for (size_t i = 0; i < count; ++i)
      if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), static_cast<int32_t>(i)).second)
        return InvalidModel(n.describe() + ": node " + std::to_string(node_ids[i]) + " of tree " +
                            std::to_string(tree_ids[i]) + " appears twice");
    static const std::map<std::string, Mode> kModes = {{"BRANCH_LEQ", Mode::kLeq}, {"BRANCH_LT", Mode::kLt},
                                                       {"BRANCH_GTE", Mode::kGte}, {"BRANCH_GT", Mode::kGt},
                                                       {"BRANCH_EQ", Mode::kEq},   {"BRANCH_NEQ", Mode::kNeq},
                                                       {"LEAF", Mode::kLeaf}};
    k->nodes_.resize(count);
    std::vector<bool> is_child(count, false);
    for (size_t i = 0; i < count; ++i) {
      auto m = kModes.find(modes[i]);
      if (m == kModes.end()) return InvalidModel(n.describe() + ": unknown node mode '" + modes[i] + "'");
      TreeNode& t = k->nodes_[i];
      t.mode = m->second;
      t.feature = features[i];
      t.value = values[i];
      t.nan_yes = !nan_yes.empty() && nan_yes[i] != 0;
      if (t.mode == Mode::kLeaf) continue;
      if (t.feature < 0) return InvalidModel(n.describe() + ": a negative feature id");
      for (auto [child, out] : {std::make_pair(yes[i], &t.yes), std::make_pair(no[i], &t.no)}) {
        auto c = index.find({tree_ids[i], child});
        if (c == index.end() || c->second == static_cast<int32_t>(i))
          return InvalidModel(n.describe() + ": node " + std::to_string(node_ids[i]) + " of tree " +
                              std::to_string(tree_ids[i]) + " points to a missing node " + std::to_string(child));
        *out = c->second;
        is_child[c->second] = true;
      }
    }
    std::map<int64_t, int32_t> roots;
    for (size_t i = 0; i < count; ++i)
      if (!is_child[i] && !roots.emplace(tree_ids[i], static_cast<int32_t>(i)).second)
        return InvalidModel(n.describe() + ": tree " + std::to_string(tree_ids[i]) + " has more than one root");
    for (const auto& [tree, root] : roots) k->roots_.push_back(root);
    // Leaf weights, grouped per leaf.
    const std::string p = classifier ? "class_" : "target_";
    const auto w_tree = n.attr_ints(p + "treeids"), w_node = n.attr_ints(p + "nodeids"), w_id = n.attr_ints(p + "ids");
    const auto w = doubles_attr(n, p + "weights");
    if (w_node.size() != w_tree.size() || w_id.size() != w_tree.size() || w.size() != w_tree.size())
      return InvalidModel(n.describe() + ": the " + p + "* attributes differ in length");
    std::vector<std::vector<std::pair<int64_t, double>>> per_leaf(count);
    int64_t max_id = -1;
    for (size_t i = 0; i < w_tree.size(); ++i) {
      auto c = index.find({w_tree[i], w_node[i]});
      if (c == index.end() || k->nodes_[c->second].mode != Mode::kLeaf || w_id[i] < 0)
        return InvalidModel(n.describe() + ": a weight for node " + std::to_string(w_node[i]) + " of tree " +
                            std::to_string(w_tree[i]) + ", which is not a leaf");
      per_leaf[c->second].emplace_back(w_id[i], w[i]);
      max_id = std::max(max_id, w_id[i]);
    }
    for (size_t i = 0; i < count; ++i) {
      k->nodes_[i].first_weight = static_cast<int32_t>(k->weights_.size());
      k->nodes_[i].num_weights = static_cast<int32_t>(per_leaf[i].size());
      k->weights_.insert(k->weights_.end(), per_leaf[i].begin(), per_leaf[i].end());
    }
    if (classifier) {
      k->labels_i_ = n.attr_ints("classlabels_int64s");
      k->labels_s_ = n.attr_strings("classlabels_strings");
      if (k->labels_i_.empty() == k->labels_s_.empty())
        return InvalidModel(n.describe() + ": exactly one of classlabels_int64s and classlabels_strings must be set");
      k->outputs_ = static_cast<int64_t>(k->labels_s_.empty() ? k->labels_i_.size() : k->labels_s_.size());
      if (max_id + 1 != k->outputs_)
        return Unsupported(n.describe() + ": scores for " + std::to_string(max_id + 1) + " class id(s) and " +
                           std::to_string(k->outputs_) + " class labels: only one score per class is supported");
    } else {
      k->outputs_ = n.attr_int("n_targets", max_id + 1);
      if (k->outputs_ <= max_id) return InvalidModel(n.describe() + ": a target id is >= n_targets");
    }
    k->base_ = doubles_attr(n, "base_values");
    if (!k->base_.empty() && static_cast<int64_t>(k->base_.size()) != k->outputs_)
      return InvalidModel(n.describe() + ": base_values must have one value per output column");
    k->aggregate_ = n.attr_string("aggregate_function", "SUM");
    if (k->aggregate_ != "SUM" && k->aggregate_ != "AVERAGE" && k->aggregate_ != "MIN" && k->aggregate_ != "MAX")
      return InvalidModel(n.describe() + ": aggregate_function must be SUM, AVERAGE, MIN or MAX");
    k->post_ = n.attr_string("post_transform", "NONE");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() == DType::kString) return ctx.invalid("X must be numeric");
    const int64_t f = x->rank() ? x->shape().back() : 1, rows = f > 0 ? x->size() / f : 0;
    for (const TreeNode& t : nodes_)
      if (t.mode != Mode::kLeaf && t.feature >= f)
        return ctx.invalid("a node reads feature " + std::to_string(t.feature) + " of rows with " + std::to_string(f));
    Tensor* labels = nullptr;
    Tensor* scores = nullptr;
    if (classifier_) {
      DLRT_ASSIGN_OR_RETURN(labels, ctx.allocate_output(0, labels_s_.empty() ? DType::kInt64 : DType::kString, {rows}));
      DLRT_ASSIGN_OR_RETURN(scores, ctx.allocate_output(1, DType::kFloat32, {rows, outputs_}));
    } else {
      DLRT_ASSIGN_OR_RETURN(scores, ctx.allocate_output(0, DType::kFloat32, {rows, outputs_}));
    }
    std::vector<double> acc(static_cast<size_t>(outputs_));
    std::vector<bool> seen(static_cast<size_t>(outputs_));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(seen.begin(), seen.end(), false);
      for (int32_t root : roots_) {
        int32_t at = root;
        for (int guard = 0; nodes_[at].mode != Mode::kLeaf; ++guard) {
          if (guard > static_cast<int>(nodes_.size())) return ctx.invalid("a tree has a cycle");
          const TreeNode& t = nodes_[at];
          const double v = element_as_double(*x, r * f + t.feature);
          bool go = false;
          if (std::isnan(v) && t.nan_yes) go = true;
          else if (t.mode == Mode::kLeq) go = v <= t.value;
          else if (t.mode == Mode::kLt) go = v < t.value;
          else if (t.mode == Mode::kGte) go = v >= t.value;
          else if (t.mode == Mode::kGt) go = v > t.value;
          else if (t.mode == Mode::kEq) go = v == t.value;
          else go = v != t.value;
          at = go ? t.yes : t.no;
        }
        const TreeNode& leaf = nodes_[at];
        for (int32_t i = 0; i < leaf.num_weights; ++i) {
          const auto& [id, w] = weights_[leaf.first_weight + i];
          double& a = acc[id];
          if (aggregate_ == "MIN") a = seen[id] ? std::min(a, w) : w;
          else if (aggregate_ == "MAX") a = seen[id] ? std::max(a, w) : w;
          else a += w;
          seen[id] = true;
        }
      }
      float* out = scores->data<float>() + r * outputs_;
      for (int64_t c = 0; c < outputs_; ++c) {
        double v = acc[c];
        if (aggregate_ == "AVERAGE" && !roots_.empty()) v /= static_cast<double>(roots_.size());
        out[c] = static_cast<float>(v + (base_.empty() ? 0.0 : base_[c]));
      }
      const int64_t best = std::max_element(out, out + outputs_) - out;
      DLRT_RETURN_IF_ERROR(ml_post_transform(post_, out, outputs_));
      if (labels && labels_s_.empty()) labels->data<int64_t>()[r] = labels_i_[best];
      else if (labels) labels->data<std::string>()[r] = labels_s_[best];
    }
    return Status::Ok();
  }

 private:
  bool classifier_ = false;
  std::vector<TreeNode> nodes_;
  std::vector<int32_t> roots_;
  std::vector<std::pair<int64_t, double>> weights_;
  std::vector<int64_t> labels_i_;
  std::vector<std::string> labels_s_;
  int64_t outputs_ = 0;
  std::vector<double> base_;
  std::string aggregate_, post_;
};

}  // namespace

Status register_ml_tree_kernels(KernelRegistry& r) {
  for (bool classifier : {false, true}) {
    KernelDef d;
    d.op_type = classifier ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor";
    d.domain = "ai.onnx.ml";
    d.factory = [classifier](const ir::Node& n) { return TreeEnsembleKernel::create(n, classifier); };
    DLRT_RETURN_IF_ERROR(r.add(std::move(d)));
  }
  return Status::Ok();
}

}  // namespace dlrt::cpu
