// ai.onnx.ml TreeEnsembleRegressor and TreeEnsembleClassifier (opsets 1-3,
// the *_as_tensor attributes included) and TreeEnsemble (opset 5), as
// scikit-learn / XGBoost / LightGBM converters write them. Each row walks
// every tree from its root: a branch compares the feature with its value by
// its mode (BRANCH_LEQ, _LT, _GTE, _GT, _EQ, _NEQ, and opset 5's set
// membership; a NaN feature takes the true branch where
// nodes_missing_value_tracks_true says so), a leaf adds its weights to their
// targets or classes. Scores are aggregated (SUM, AVERAGE over the trees,
// MIN, MAX), base values added and post_transform applied, as ONNX Runtime
// does: one target gets only PROBIT (ONNX Runtime leaves a single score
// alone for the other transforms); a classifier's label is the class of the
// largest score among the classes some leaf scored. A classifier with two
// labels follows ONNX Runtime's binary rules (see binary_scores below).
// Attributes are parsed once into a flat node array; a run's accumulators
// live in per-thread scratch.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/ml_util.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/scratch_check.h"
#include "core/tensor_values.h"

namespace dlrt::cpu {
namespace {

enum class Mode { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember, kLeaf };
enum class Aggregate { kSum, kAverage, kMin, kMax };

struct TreeNode {
  Mode mode = Mode::kLeaf;
  int64_t feature = 0;
  double value = 0;
  int32_t yes = -1, no = -1;  // indices into nodes_
  bool nan_yes = false;
  int32_t first_weight = 0, num_weights = 0;  // into weights_ (a leaf) or members_ (kMember)
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

// The value of attribute `name` as a tensor (opset 5): its elements as doubles.
std::vector<double> tensor_attr(const ir::Node& n, const std::string& name) {
  std::vector<double> out;
  if (const auto* a = n.attr(name); a && a->kind == ir::Attribute::Kind::kTensor)
    for (int64_t i = 0; i < a->t.size(); ++i) out.push_back(element_as_double(a->t, i));
  return out;
}

// Refuses a tree that loops (a node reachable from itself through the branches
// from a root), as ONNX Runtime does when it loads the model; walking it would
// never reach a leaf. Depth-first without recursion: trees may be thousands deep.
Status check_no_cycle(const std::vector<TreeNode>& nodes, const std::vector<int32_t>& roots, const std::string& what) {
  enum : uint8_t { kNew, kOnPath, kDone };
  std::vector<uint8_t> state(nodes.size(), kNew);
  std::vector<std::pair<int32_t, int>> path;  // a node and how many of its branches were followed
  for (int32_t root : roots) {
    if (state[root] != kNew) continue;
    state[root] = kOnPath;
    path.emplace_back(root, 0);
    while (!path.empty()) {
      auto& [at, followed] = path.back();
      const TreeNode& t = nodes[at];
      if (t.mode == Mode::kLeaf || followed == 2) {
        state[at] = kDone;
        path.pop_back();
        continue;
      }
      const int32_t child = followed++ == 0 ? t.yes : t.no;
      if (state[child] == kOnPath)
        return InvalidModel(what + "a tree has a cycle (through node index " + std::to_string(child) + ")");
      if (state[child] == kNew) {
        state[child] = kOnPath;
        path.emplace_back(child, 0);
      }
    }
  }
  return Status::Ok();
}

class TreeEnsembleKernel final : public OpKernel {
 public:
  // TreeEnsembleRegressor / TreeEnsembleClassifier, opsets 1-3.
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
    DLRT_RETURN_IF_ERROR(check_no_cycle(k->nodes_, k->roots_, n.describe() + ": "));
    // Leaf weights, grouped per leaf.
    const std::string p = classifier ? "class_" : "target_";
    const auto w_tree = n.attr_ints(p + "treeids"), w_node = n.attr_ints(p + "nodeids"), w_id = n.attr_ints(p + "ids");
    const auto w = doubles_attr(n, p + "weights");
    if (w_node.size() != w_tree.size() || w_id.size() != w_tree.size() || w.size() != w_tree.size())
      return InvalidModel(n.describe() + ": the " + p + "* attributes differ in length");
    std::vector<std::vector<std::pair<int64_t, double>>> per_leaf(count);
    int64_t max_id = -1;
    std::vector<int64_t> ids_seen;
    for (size_t i = 0; i < w_tree.size(); ++i) {
      auto c = index.find({w_tree[i], w_node[i]});
      if (c == index.end() || k->nodes_[c->second].mode != Mode::kLeaf || w_id[i] < 0)
        return InvalidModel(n.describe() + ": a weight for node " + std::to_string(w_node[i]) + " of tree " +
                            std::to_string(w_tree[i]) + ", which is not a leaf");
      per_leaf[c->second].emplace_back(w_id[i], w[i]);
      max_id = std::max(max_id, w_id[i]);
      if (std::find(ids_seen.begin(), ids_seen.end(), w_id[i]) == ids_seen.end()) ids_seen.push_back(w_id[i]);
      if (w[i] < 0) k->all_positive_ = false;
    }
    for (size_t i = 0; i < count; ++i) {
      k->nodes_[i].first_weight = static_cast<int32_t>(k->weights_.size());
      k->nodes_[i].num_weights = static_cast<int32_t>(per_leaf[i].size());
      k->weights_.insert(k->weights_.end(), per_leaf[i].begin(), per_leaf[i].end());
    }
    k->base_ = doubles_attr(n, "base_values");
    auto post = ml_parse_post(n.attr_string("post_transform", "NONE"));
    if (!post.ok()) return InvalidModel(n.describe() + ": " + post.status().message());
    k->post_ = *post;
    if (classifier) {
      k->labels_i_ = n.attr_ints("classlabels_int64s");
      k->labels_s_ = n.attr_strings("classlabels_strings");
      if (k->labels_i_.empty() == k->labels_s_.empty())
        return InvalidModel(n.describe() + ": exactly one of classlabels_int64s and classlabels_strings must be set");
      k->outputs_ = static_cast<int64_t>(k->labels_s_.empty() ? k->labels_i_.size() : k->labels_s_.size());
      if (k->outputs_ < 2) return Unsupported(n.describe() + ": a classifier with fewer than two class labels");
      if (max_id >= k->outputs_)
        return InvalidModel(n.describe() + ": class id " + std::to_string(max_id) + " for " + std::to_string(k->outputs_) +
                            " class labels");
      k->binary_case_ = k->outputs_ == 2 && ids_seen.size() == 1;
      if (k->outputs_ == 2 ? k->base_.size() > 2 : (!k->base_.empty() && static_cast<int64_t>(k->base_.size()) != k->outputs_))
        return InvalidModel(n.describe() + ": base_values must have one value per class");
      if (k->outputs_ == 2 && k->post_ == MlPost::kProbit)
        return Unsupported(n.describe() + ": PROBIT for two classes (ONNX Runtime's second score column is undefined)");
    } else {
      k->outputs_ = n.attr_int("n_targets", max_id + 1);
      if (k->outputs_ <= max_id) return InvalidModel(n.describe() + ": a target id is >= n_targets");
      if (!k->base_.empty() && static_cast<int64_t>(k->base_.size()) != k->outputs_)
        return InvalidModel(n.describe() + ": base_values must have one value per target");
    }
    const std::string agg = n.attr_string("aggregate_function", "SUM");
    if (agg == "SUM") k->aggregate_ = Aggregate::kSum;
    else if (agg == "AVERAGE") k->aggregate_ = Aggregate::kAverage;
    else if (agg == "MIN") k->aggregate_ = Aggregate::kMin;
    else if (agg == "MAX") k->aggregate_ = Aggregate::kMax;
    else return InvalidModel(n.describe() + ": aggregate_function must be SUM, AVERAGE, MIN or MAX");
    if (classifier && k->aggregate_ != Aggregate::kSum)
      return Unsupported(n.describe() + ": a classifier sums its trees (ONNX Runtime ignores aggregate_function)");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  // TreeEnsemble, opset 5: internal nodes 0..N-1 from nodes_*, leaves from
  // leaf_* (their indices follow the nodes'), trees from tree_roots.
  static Result<std::unique_ptr<OpKernel>> create_v5(const ir::Node& n) {
    auto k = std::make_unique<TreeEnsembleKernel>();
    const std::string d = n.describe() + ": ";
    const auto features = n.attr_ints("nodes_featureids");
    const auto yes = n.attr_ints("nodes_truenodeids"), no = n.attr_ints("nodes_falsenodeids");
    const auto yes_leaf = n.attr_ints("nodes_trueleafs"), no_leaf = n.attr_ints("nodes_falseleafs");
    const auto nan_yes = n.attr_ints("nodes_missing_value_tracks_true");
    const auto modes = tensor_attr(n, "nodes_modes");
    const auto splits = tensor_attr(n, "nodes_splits");
    const auto members = tensor_attr(n, "membership_values");
    const auto leaf_targets = n.attr_ints("leaf_targetids");
    const auto leaf_weights = tensor_attr(n, "leaf_weights");
    const auto tree_roots = n.attr_ints("tree_roots");
    const size_t count = features.size(), leaves = leaf_targets.size();
    if (yes.size() != count || no.size() != count || yes_leaf.size() != count || no_leaf.size() != count ||
        modes.size() != count || splits.size() != count || (!nan_yes.empty() && nan_yes.size() != count))
      return InvalidModel(d + "the nodes_* attributes differ in length");
    if (leaf_weights.size() != leaves) return InvalidModel(d + "leaf_targetids and leaf_weights differ in length");
    k->outputs_ = n.attr_int("n_targets", 0);
    if (k->outputs_ < 1) return InvalidModel(d + "n_targets must be >= 1");
    k->nodes_.resize(count + leaves);
    size_t next_member = 0;
    for (size_t i = 0; i < count; ++i) {
      TreeNode& t = k->nodes_[i];
      static constexpr Mode kModes[] = {Mode::kLeq, Mode::kLt, Mode::kGte, Mode::kGt, Mode::kEq, Mode::kNeq, Mode::kMember};
      if (!(modes[i] >= 0 && modes[i] <= 6)) return InvalidModel(d + "nodes_modes values must be 0..6");
      t.mode = kModes[static_cast<int>(modes[i])];
      t.feature = features[i];
      t.value = splits[i];
      t.nan_yes = !nan_yes.empty() && nan_yes[i] != 0;
      if (t.feature < 0) return InvalidModel(d + "a negative feature id");
      if (t.mode == Mode::kMember) {
        // The next NaN-terminated run of membership_values.
        t.first_weight = static_cast<int32_t>(k->members_.size());
        for (;; ++next_member) {
          if (next_member >= members.size()) return InvalidModel(d + "membership_values has too few sets for the membership nodes");
          if (std::isnan(members[next_member])) break;
          k->members_.push_back(members[next_member]);
        }
        ++next_member;
        std::sort(k->members_.begin() + t.first_weight, k->members_.end());
        t.num_weights = static_cast<int32_t>(k->members_.size()) - t.first_weight;
      }
      for (auto [child, leaf, out] : {std::make_tuple(yes[i], yes_leaf[i], &t.yes), std::make_tuple(no[i], no_leaf[i], &t.no)}) {
        const size_t limit = leaf ? leaves : count;
        if (child < 0 || static_cast<size_t>(child) >= limit || (!leaf && static_cast<size_t>(child) == i))
          return InvalidModel(d + "node " + std::to_string(i) + " points to a missing " + (leaf ? "leaf " : "node ") +
                              std::to_string(child));
        *out = static_cast<int32_t>(leaf ? count + static_cast<size_t>(child) : static_cast<size_t>(child));
      }
    }
    for (size_t j = 0; j < leaves; ++j) {
      if (leaf_targets[j] < 0 || leaf_targets[j] >= k->outputs_) return InvalidModel(d + "a leaf target id outside [0, n_targets)");
      TreeNode& t = k->nodes_[count + j];
      t.mode = Mode::kLeaf;
      t.first_weight = static_cast<int32_t>(j);
      t.num_weights = 1;
      k->weights_.emplace_back(leaf_targets[j], leaf_weights[j]);
    }
    for (int64_t r : tree_roots) {
      if (r < 0 || static_cast<size_t>(r) >= count) return InvalidModel(d + "a tree root outside the nodes");
      // A tree that is one leaf: a root whose branches are the same leaf.
      if (yes_leaf[r] && no_leaf[r] && yes[r] == no[r]) k->roots_.push_back(k->nodes_[r].yes);
      else k->roots_.push_back(static_cast<int32_t>(r));
    }
    DLRT_RETURN_IF_ERROR(check_no_cycle(k->nodes_, k->roots_, d));
    static constexpr Aggregate kAgg[] = {Aggregate::kAverage, Aggregate::kSum, Aggregate::kMin, Aggregate::kMax};
    const int64_t agg = n.attr_int("aggregate_function", 1);
    if (agg < 0 || agg > 3) return InvalidModel(d + "aggregate_function must be 0..3");
    k->aggregate_ = kAgg[agg];
    static constexpr MlPost kPost[] = {MlPost::kNone, MlPost::kSoftmax, MlPost::kLogistic, MlPost::kSoftmaxZero, MlPost::kProbit};
    const int64_t post = n.attr_int("post_transform", 0);
    if (post < 0 || post > 4) return InvalidModel(d + "post_transform must be 0..4");
    k->post_ = kPost[post];
    k->typed_output_ = true;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() == DType::kString) return ctx.invalid("X must be numeric");
    const int64_t f = x->rank() ? x->shape().back() : 1, rows = f > 0 ? x->size() / f : 0;
    for (const TreeNode& t : nodes_)
      if (t.mode != Mode::kLeaf && t.feature >= f)
        return ctx.invalid("a node reads feature " + std::to_string(t.feature) + " of rows with " + std::to_string(f));
    DType out_type = DType::kFloat32;
    if (typed_output_) {
      if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
        return ctx.invalid(std::string("X must be float or double, got ") + dtype_name(x->dtype()));
      out_type = x->dtype();
    }
    Tensor* labels = nullptr;
    Tensor* scores = nullptr;
    if (classifier_) {
      DLRT_ASSIGN_OR_RETURN(labels, ctx.allocate_output(0, labels_s_.empty() ? DType::kInt64 : DType::kString, {rows}));
      DLRT_ASSIGN_OR_RETURN(scores, ctx.allocate_output(1, DType::kFloat32, {rows, outputs_}));
    } else {
      DLRT_ASSIGN_OR_RETURN(scores, ctx.allocate_output(0, out_type, {rows, outputs_}));
    }
    // n_targets sizes the per-row accumulators whatever the rows (found by fuzz_ops: 2^32 targets).
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {3, outputs_}, sizeof(double), "the accumulators of n_targets columns"));
    thread_local AlignedScratch scratch;
    const size_t n = static_cast<size_t>(outputs_);
    double* acc = scratch.get<double>(2 * n, AlignedScratch::Growth::kByHalf);
    double* seen = acc + n;  // 1 where some leaf scored the column
    thread_local AlignedScratch out_scratch, row_scratch;
    float* out_row = out_scratch.get<float>(n, AlignedScratch::Growth::kByHalf);
    double* xr = row_scratch.get<double>(static_cast<size_t>(f), AlignedScratch::Growth::kByHalf);
    const bool transform = outputs_ > 1 ? post_ != MlPost::kNone : post_ == MlPost::kProbit;
    const double divisor = aggregate_ == Aggregate::kAverage && !roots_.empty() ? static_cast<double>(roots_.size()) : 1.0;
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(acc, acc + 2 * n, 0.0);
      if (x->dtype() == DType::kFloat32) std::copy(x->data<float>() + r * f, x->data<float>() + (r + 1) * f, xr);
      else if (x->dtype() == DType::kFloat64) std::copy(x->data<double>() + r * f, x->data<double>() + (r + 1) * f, xr);
      else for (int64_t j = 0; j < f; ++j) xr[j] = element_as_double(*x, r * f + j);
      for (int32_t root : roots_) {
        int32_t at = root;
        for (int guard = 0; nodes_[at].mode != Mode::kLeaf; ++guard) {
          if (guard > static_cast<int>(nodes_.size())) return ctx.invalid("a tree has a cycle");
          const TreeNode& t = nodes_[at];
          const double v = xr[t.feature];
          bool go = false;
          if (std::isnan(v) && t.nan_yes) go = true;
          else switch (t.mode) {
              case Mode::kLeq: go = v <= t.value; break;
              case Mode::kLt: go = v < t.value; break;
              case Mode::kGte: go = v >= t.value; break;
              case Mode::kGt: go = v > t.value; break;
              case Mode::kEq: go = v == t.value; break;
              case Mode::kNeq: go = v != t.value; break;
              case Mode::kMember:
                go = !std::isnan(v) && std::binary_search(members_.begin() + t.first_weight,
                                        members_.begin() + t.first_weight + t.num_weights, v);
                break;
              case Mode::kLeaf: break;
            }
          at = go ? t.yes : t.no;
        }
        const TreeNode& leaf = nodes_[at];
        for (int32_t i = 0; i < leaf.num_weights; ++i) {
          const auto& [id, w] = weights_[leaf.first_weight + i];
          double& a = acc[id];
          if (aggregate_ == Aggregate::kMin) a = seen[id] != 0 ? std::min(a, w) : w;
          else if (aggregate_ == Aggregate::kMax) a = seen[id] != 0 ? std::max(a, w) : w;
          else a += w;
          seen[id] = 1;
        }
      }
      if (classifier_) {
        DLRT_RETURN_IF_ERROR(classify(ctx, acc, seen, scores->data<float>() + r * outputs_, *labels, r));
        continue;
      }
      for (size_t c = 0; c < n; ++c) acc[c] = acc[c] / divisor + (base_.empty() ? 0.0 : base_[c]);
      if (scores->dtype() == DType::kFloat64 && !transform) {
        std::copy(acc, acc + n, scores->data<double>() + r * outputs_);
        continue;
      }
      for (size_t c = 0; c < n; ++c) out_row[c] = static_cast<float>(acc[c]);
      if (transform) ml_post_apply(post_, out_row, outputs_);
      if (scores->dtype() == DType::kFloat64) std::copy(out_row, out_row + n, scores->data<double>() + r * outputs_);
      else std::copy(out_row, out_row + n, scores->data<float>() + r * outputs_);
    }
    return Status::Ok();
  }

 private:
  void set_label(Tensor& labels, int64_t r, int64_t c) const {
    if (labels_s_.empty()) labels.data<int64_t>()[r] = labels_i_[c];
    else labels.data<std::string>()[r] = labels_s_[c];
  }

  // One row's classifier outputs from the summed scores `acc` (and `seen`),
  // as ONNX Runtime: more than two classes: base values added, the label is
  // the scored class of the largest score, post_transform on all columns.
  // Two classes: binary_scores.
  Status classify(KernelContext& ctx, const double* acc, const double* seen, float* out, Tensor& labels, int64_t r) const {
    if (outputs_ > 2) {
      int64_t best = -1;
      for (int64_t c = 0; c < outputs_; ++c) {
        const bool scored = seen[c] != 0 || !base_.empty();
        out[c] = static_cast<float>(acc[c] + (base_.empty() ? 0.0 : base_[c]));
        if (scored && (best < 0 || out[c] > out[best])) best = c;
      }
      if (best < 0) return ctx.invalid("no tree gave a score to any class");
      ml_post_apply(post_, out, outputs_);
      set_label(labels, r, best);
      return Status::Ok();
    }
    binary_scores(acc, seen, out, labels, r);
    return Status::Ok();
  }

  // Two classes, as ONNX Runtime 1.31 (its code, and measured). s0, s1: the
  // summed scores; h0, h1: whether some leaf scored them (a score no leaf
  // gave is written as 0). Base values: two and h1: s1 = b1 + s0, s0 = -s1;
  // two and not h1: s0 += b0, s1 += b1; one: s0 += b0. Without h1 and with
  // fewer than two base values only s0 is kept. p = s1 where h1 (and both
  // are kept), else s0 where h0, else 0. Only one class id in the weights
  // (the "binary case"): label 1 where p > 0.5 (all weights >= 0) or p > 0
  // (mixed signs), else 0; otherwise label 1 where p > 0 (with int64 labels
  // ONNX Runtime writes 1 or 0 itself, not the class label). Scores: both
  // kept: [s0, s1] through post_transform; s0 alone: ml_write_two's
  // [1 - s0, s0] (binary case, weights >= 0) or [-s0, s0] (binary case with
  // mixed signs, or no base values), else [s0, 0].
  void binary_scores(const double* acc, const double* seen, float* out, Tensor& labels, int64_t r) const {
    double s0 = acc[0], s1 = acc[1];
    const bool h0 = seen[0] != 0, h1 = seen[1] != 0;
    bool both = true;
    if (base_.size() == 2) {
      if (h1) s1 = base_[1] + s0, s0 = -s1;
      else s0 += base_[0], s1 += base_[1];
    } else {
      if (base_.size() == 1) s0 += base_[0];
      both = h1;
    }
    const double p = both && h1 ? s1 : (h0 ? s0 : 0.0);
    enum { kNoSecond, kComplement, kNegate } second = base_.empty() ? kNegate : kNoSecond;
    int64_t label;
    if (binary_case_) {
      label = all_positive_ ? (p > 0.5 ? 1 : 0) : (p > 0 ? 1 : 0);
      second = all_positive_ ? kComplement : kNegate;
    } else {
      label = p > 0 ? 1 : 0;
    }
    const float v0 = h0 ? static_cast<float>(s0) : 0.0f;
    if (both) {
      out[0] = v0, out[1] = h1 ? static_cast<float>(s1) : 0.0f;
      ml_post_apply(post_, out, 2);
    } else if (second == kNoSecond) {
      out[0] = v0, out[1] = 0;
    } else {
      ml_write_two(second == kComplement ? MlSecond::kComplement : MlSecond::kNegate, post_, v0, out);
    }
    if (!labels_s_.empty()) labels.data<std::string>()[r] = labels_s_[label];
    else labels.data<int64_t>()[r] = binary_case_ ? labels_i_[label] : label;
  }

  bool classifier_ = false, typed_output_ = false, binary_case_ = false, all_positive_ = true;
  std::vector<TreeNode> nodes_;
  std::vector<int32_t> roots_;
  std::vector<std::pair<int64_t, double>> weights_;
  std::vector<double> members_;  // the sorted sets of the membership nodes
  std::vector<int64_t> labels_i_;
  std::vector<std::string> labels_s_;
  int64_t outputs_ = 0;
  std::vector<double> base_;
  Aggregate aggregate_ = Aggregate::kSum;
  MlPost post_ = MlPost::kNone;
};

}  // namespace

Status register_ml_tree_kernels(KernelRegistry& r) {
  for (bool classifier : {false, true}) {
    KernelDef d;
    d.op_type = classifier ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor";
    d.domain = kMl;
    d.factory = [classifier](const ir::Node& n) { return TreeEnsembleKernel::create(n, classifier); };
    DLRT_RETURN_IF_ERROR(r.add(std::move(d)));
  }
  KernelDef v5;
  v5.op_type = "TreeEnsemble";
  v5.domain = kMl;
  v5.min_opset = 5;
  v5.factory = [](const ir::Node& n) { return TreeEnsembleKernel::create_v5(n); };
  return r.add(std::move(v5));
}

}  // namespace dlrt::cpu
