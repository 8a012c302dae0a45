// Sequences of tensors and optionals: Sequence*, SplitToSequence,
// ConcatFromSequence, SequenceMap, Optional, OptionalHasElement, OptionalGetElement.
//
// A sequence holds Tensors that may share storage with the tensors they came
// from: values are immutable once produced, so no copy is needed.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/layout_impl.h"

namespace dlrt::cpu {

using layout::copy_elements;
namespace {

Result<const RunValue*> sequence_input(const KernelContext& ctx, size_t i) {
  const RunValue* v = ctx.input_value(i);
  if (!v || v->kind != RunValue::Kind::kSequence)
    return ctx.invalid("input " + std::to_string(i) + " must be a sequence");
  return v;
}

// Reads an optional scalar position input; nullopt when omitted.
Result<std::optional<int64_t>> position_input(const KernelContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  if (!t) return std::optional<int64_t>();
  if (t->size() != 1) return ctx.invalid("position must be a scalar");
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> v, read_int_tensor(*t, ctx));
  return std::optional<int64_t>(v[0]);
}


Status sequence_empty(KernelContext& ctx) {
  const int64_t d = ctx.node().attr_int("dtype", static_cast<int64_t>(DType::kFloat32));
  if (!dtype_is_valid(static_cast<int>(d)) || d == 0) return ctx.invalid("unknown dtype " + std::to_string(d));
  ctx.set_output_value(0, RunValue::of_sequence({}, static_cast<DType>(d)));
  return Status::Ok();
}

Status sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> items;
  DType dtype = DType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (!t) return ctx.invalid("input " + std::to_string(i) + " must be a tensor");
    if (i == 0) dtype = t->dtype();
    if (t->dtype() != dtype) return ctx.invalid("all inputs must have the same dtype");
    items.push_back(*t);
  }
  if (items.empty()) return ctx.invalid("needs at least one input");
  ctx.set_output_value(0, RunValue::of_sequence(std::move(items), dtype));
  return Status::Ok();
}

Status sequence_insert(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const RunValue* seq, sequence_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, 1));
  if (seq->elem_dtype != DType::kUndefined && t->dtype() != seq->elem_dtype)
    return ctx.invalid(std::string("cannot insert a ") + dtype_name(t->dtype()) + " tensor into a sequence of " +
                       dtype_name(seq->elem_dtype));
  const int64_t n = static_cast<int64_t>(seq->sequence.size());
  DLRT_ASSIGN_OR_RETURN(std::optional<int64_t> pos, position_input(ctx, 2));
  int64_t p = pos ? *pos : n;
  if (p < -n || p > n) return ctx.invalid("position " + std::to_string(p) + " is out of range for length " + std::to_string(n));
  if (p < 0) p += n;
  std::vector<Tensor> items = seq->sequence;
  items.insert(items.begin() + p, *t);
  ctx.set_output_value(0, RunValue::of_sequence(std::move(items), t->dtype()));
  return Status::Ok();
}

Status sequence_at(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const RunValue* seq, sequence_input(ctx, 0));
  const int64_t n = static_cast<int64_t>(seq->sequence.size());
  DLRT_ASSIGN_OR_RETURN(std::optional<int64_t> pos, position_input(ctx, 1));
  if (!pos) return ctx.invalid("position is required");
  int64_t p = *pos;
  if (p < -n || p >= n) return ctx.invalid("position " + std::to_string(p) + " is out of range for length " + std::to_string(n));
  if (p < 0) p += n;
  ctx.set_output(0, seq->sequence[p]);
  return Status::Ok();
}

Status sequence_erase(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const RunValue* seq, sequence_input(ctx, 0));
  const int64_t n = static_cast<int64_t>(seq->sequence.size());
  DLRT_ASSIGN_OR_RETURN(std::optional<int64_t> pos, position_input(ctx, 1));
  int64_t p = pos ? *pos : n - 1;
  if (p < -n || p >= n) return ctx.invalid("position " + std::to_string(p) + " is out of range for length " + std::to_string(n));
  if (p < 0) p += n;
  std::vector<Tensor> items = seq->sequence;
  items.erase(items.begin() + p);
  ctx.set_output_value(0, RunValue::of_sequence(std::move(items), seq->elem_dtype));
  return Status::Ok();
}

Status sequence_length(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const RunValue* seq, sequence_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DType::kInt64, {}));
  out->data<int64_t>()[0] = static_cast<int64_t>(seq->sequence.size());
  return Status::Ok();
}

Status split_to_sequence(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.invalid("input must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), rank, ctx));
  const int64_t dim = x->dim(axis);
  std::vector<int64_t> lengths;
  bool squeeze = false;
  if (const Tensor* split = ctx.input(1)) {
    DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> s, read_int_tensor(*split, ctx));
    if (split->rank() == 0) {
      if (s[0] <= 0) return ctx.invalid("split must be positive");
      for (int64_t done = 0; done < dim; done += s[0]) lengths.push_back(std::min(s[0], dim - done));
    } else if (split->rank() == 1) {
      int64_t total = 0;
      for (int64_t v : s) {
        if (v < 0) return ctx.invalid("split lengths must be non-negative");
        total += v;
      }
      if (total != dim)
        return ctx.invalid("split lengths sum to " + std::to_string(total) + ", but the axis has " + std::to_string(dim));
      lengths = s;
    } else {
      return ctx.invalid("split must be a scalar or a 1-D tensor");
    }
  } else {
    lengths.assign(static_cast<size_t>(dim), 1);
    squeeze = ctx.node().attr_int("keepdims", 1) == 0;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x->dim(i);
  for (int64_t i = axis + 1; i < rank; ++i) inner *= x->dim(i);
  std::vector<Tensor> items;
  int64_t start = 0;
  for (int64_t len : lengths) {
    Shape shape = x->shape();
    shape[axis] = len;
    if (squeeze) shape.erase(shape.begin() + axis);
    DLRT_ASSIGN_OR_RETURN(Tensor piece, Tensor::allocate(x->dtype(), shape));
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(*x, (o * dim + start) * inner, piece, o * len * inner, len * inner);
    items.push_back(std::move(piece));
    start += len;
  }
  ctx.set_output_value(0, RunValue::of_sequence(std::move(items), x->dtype()));
  return Status::Ok();
}

Status concat_from_sequence(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const RunValue* seq, sequence_input(ctx, 0));
  const ir::Node& n = ctx.node();
  if (!n.has_attr("axis")) return ctx.invalid("attribute 'axis' is required");
  const bool new_axis = n.attr_int("new_axis", 0) != 0;
  const auto& items = seq->sequence;
  if (items.empty()) return ctx.invalid("cannot concatenate an empty sequence");
  const Shape& first = items[0].shape();
  const int64_t rank = static_cast<int64_t>(first.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(n.attr_int("axis", 0), new_axis ? rank + 1 : rank, ctx));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= first[i];
  for (int64_t i = new_axis ? axis : axis + 1; i < rank; ++i) inner *= first[i];
  int64_t total = 0;
  for (const Tensor& t : items) {
    if (t.dtype() != items[0].dtype()) return ctx.invalid("sequence elements have different dtypes");
    bool ok = static_cast<int64_t>(t.rank()) == rank;
    for (int64_t i = 0; ok && i < rank; ++i) ok = t.dim(i) == first[i] || (!new_axis && i == axis);
    if (!ok)
      return ctx.invalid("cannot concatenate shapes " + shape_to_string(first) + " and " + shape_to_string(t.shape()));
    total += new_axis ? 1 : t.dim(axis);
  }
  Shape out_shape = first;
  if (new_axis) {
    out_shape.insert(out_shape.begin() + axis, total);
  } else {
    out_shape[axis] = total;
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, items[0].dtype(), out_shape));
  int64_t offset = 0;  // along the axis
  for (const Tensor& t : items) {
    const int64_t len = new_axis ? 1 : t.dim(axis);
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(t, o * len * inner, *out, (o * total + offset) * inner, len * inner);
    offset += len;
  }
  return Status::Ok();
}

Status optional_construct(KernelContext& ctx) {
  const RunValue* v = ctx.input_value(0);
  if (v && v->kind != RunValue::Kind::kNone) {
    ctx.set_output_value(0, *v);
    return Status::Ok();
  }
  const ir::Attribute* type = ctx.node().attr("type");
  if (!type) return ctx.invalid("an Optional without input needs the 'type' attribute");
  ctx.set_output_value(0, RunValue::optional_none(type->type.dtype));
  return Status::Ok();
}

Status optional_has_element(KernelContext& ctx) {
  const RunValue* v = ctx.input_value(0);
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DType::kBool, {}));
  out->data<bool>()[0] = v != nullptr && v->present();
  return Status::Ok();
}

Status optional_get_element(KernelContext& ctx) {
  const RunValue* v = ctx.input_value(0);
  if (!v || !v->present()) return ctx.invalid("the optional input is empty");
  ctx.set_output_value(0, *v);
  return Status::Ok();
}

// Runs the body once per element of the first (sequence) input; further
// sequence inputs are indexed alongside it, tensor inputs are passed whole.
Status sequence_map(KernelContext& ctx) {
  const ir::Attribute* a = ctx.node().attr("body");
  if (!a || a->kind != ir::Attribute::Kind::kGraph || !a->g) return ctx.invalid("attribute 'body' must be a graph");
  const ir::Graph& body = *a->g;
  DLRT_ASSIGN_OR_RETURN(const RunValue* first, sequence_input(ctx, 0));
  const size_t n = first->sequence.size();
  std::vector<const RunValue*> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const RunValue* v = ctx.input_value(i);
    if (!v || (v->kind != RunValue::Kind::kSequence && v->kind != RunValue::Kind::kTensor))
      return ctx.invalid("input " + std::to_string(i) + " must be a sequence or a tensor");
    if (v->kind == RunValue::Kind::kSequence && v->sequence.size() != n)
      return ctx.invalid("input sequences have different lengths");
    inputs.push_back(v);
  }
  if (body.inputs.size() != inputs.size()) return ctx.invalid("body input count does not match the node's inputs");
  const size_t K = ctx.num_outputs();
  if (body.outputs.size() != K) return ctx.invalid("body output count does not match the node's outputs");
  std::vector<std::vector<Tensor>> outs(K);
  for (size_t i = 0; i < n; ++i) {
    std::vector<RunValue> in;
    for (const RunValue* v : inputs)
      in.push_back(v->kind == RunValue::Kind::kSequence ? RunValue::of(v->sequence[i]) : *v);
    DLRT_ASSIGN_OR_RETURN(std::vector<RunValue> res, ctx.run_subgraph(body, std::move(in)));
    if (res.size() != K) return ctx.invalid("body returned the wrong number of outputs");
    for (size_t k = 0; k < K; ++k) {
      if (res[k].kind != RunValue::Kind::kTensor) return ctx.unsupported("body outputs must be tensors");
      outs[k].push_back(std::move(res[k].tensor));
    }
  }
  for (size_t k = 0; k < K; ++k) {
    DType dt = body.values[body.outputs[k]].type.dtype;
    if (!outs[k].empty()) dt = outs[k][0].dtype();
    ctx.set_output_value(k, RunValue::of_sequence(std::move(outs[k]), dt));
  }
  return Status::Ok();
}

}  // namespace

Status register_sequence_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("SequenceEmpty", sequence_empty, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("SequenceConstruct", sequence_construct, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("SequenceInsert", sequence_insert, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("SequenceAt", sequence_at, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("SequenceErase", sequence_erase, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("SequenceLength", sequence_length, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("SplitToSequence", split_to_sequence, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("ConcatFromSequence", concat_from_sequence, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("SequenceMap", sequence_map, 17));
  DLRT_RETURN_IF_ERROR(r.add_fn("Optional", optional_construct, 15));
  DLRT_RETURN_IF_ERROR(r.add_fn("OptionalHasElement", optional_has_element, 15));
  DLRT_RETURN_IF_ERROR(r.add_fn("OptionalGetElement", optional_get_element, 15));
  return Status::Ok();
}

}  // namespace dlrt::cpu
