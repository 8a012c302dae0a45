// Control flow: If, Loop, Scan (opset 8 batched form and opset 9+).
//
// Bodies run through KernelContext::run_subgraph, which resolves the values a
// body captures from enclosing graphs. Values crossing a body boundary are
// RunValues, so loop-carried sequences and optionals pass through untouched;
// scan outputs must be tensors and are stacked along a new axis.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/layout_impl.h"

namespace dlrt::cpu {

using layout::copy_elements;
namespace {


// The slice of `t` at `index` along `axis`, with that axis removed.
Result<Tensor> take_slice(const Tensor& t, int64_t axis, int64_t index) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= t.dim(i);
  for (int64_t i = axis + 1; i < static_cast<int64_t>(t.rank()); ++i) inner *= t.dim(i);
  Shape shape = t.shape();
  const int64_t len = shape[axis];
  shape.erase(shape.begin() + axis);
  DLRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(t.dtype(), shape));
  for (int64_t o = 0; o < outer; ++o) copy_elements(t, (o * len + index) * inner, out, o * inner, inner);
  return out;
}

// Stacks `items` (equal shapes and dtypes) along a new `axis` into output `i`;
// with `reverse` the last item goes first. `empty_dtype`/`empty_shape` describe
// the element when there are no items.
Status stack_output(KernelContext& ctx, size_t out_index, const std::vector<Tensor>& items, int64_t axis, bool reverse,
                    DType empty_dtype, const Shape& empty_shape) {
  const DType dtype = items.empty() ? empty_dtype : items[0].dtype();
  const Shape elem = items.empty() ? empty_shape : items[0].shape();
  const int64_t rank = static_cast<int64_t>(elem.size());
  const int64_t a = axis < 0 ? axis + rank + 1 : axis;
  if (a < 0 || a > rank) return ctx.invalid("scan output axis " + std::to_string(axis) + " is out of range");
  if (dtype == DType::kUndefined) return ctx.unsupported("cannot tell the dtype of an empty scan output");
  for (const Tensor& t : items)
    if (t.dtype() != dtype || t.shape() != elem)
      return ctx.invalid("scan output elements differ: " + shape_to_string(elem) + " vs " + shape_to_string(t.shape()));
  const int64_t L = static_cast<int64_t>(items.size());
  Shape shape = elem;
  shape.insert(shape.begin() + a, L);
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(out_index, dtype, shape));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < a; ++i) outer *= elem[i];
  for (int64_t i = a; i < rank; ++i) inner *= elem[i];
  for (int64_t t = 0; t < L; ++t) {
    const int64_t p = reverse ? L - 1 - t : t;
    for (int64_t o = 0; o < outer; ++o) copy_elements(items[t], o * inner, *out, (o * L + p) * inner, inner);
  }
  return Status::Ok();
}

// Declared dtype and shape of a body output (unknown dims become 0), for empty scan outputs.
void declared_type(const ir::Graph& g, size_t output, DType& dtype, Shape& shape) {
  dtype = DType::kUndefined;
  shape.clear();
  if (output >= g.outputs.size()) return;
  const ir::TypeInfo& ti = g.values[g.outputs[output]].type;
  dtype = ti.dtype;
  if (ti.shape)
    for (const ir::Dim& d : *ti.shape) shape.push_back(d.is_static() ? d.size : 0);
}

Result<const ir::Graph*> graph_attr(const KernelContext& ctx, const char* name) {
  const ir::Attribute* a = ctx.node().attr(name);
  if (!a || a->kind != ir::Attribute::Kind::kGraph || !a->g) return ctx.invalid(std::string("attribute '") + name + "' must be a graph");
  return a->g.get();
}

Result<bool> read_bool(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.size() != 1) return ctx.invalid(std::string(what) + " must hold exactly one element");
  if (t.dtype() == DType::kBool) return t.data<bool>()[0];
  return ctx.invalid(std::string(what) + " must be a bool tensor");
}

Status compute_if(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* cond_t, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(bool cond, read_bool(ctx, *cond_t, "cond"));
  DLRT_ASSIGN_OR_RETURN(const ir::Graph* branch, graph_attr(ctx, cond ? "then_branch" : "else_branch"));
  DLRT_ASSIGN_OR_RETURN(std::vector<RunValue> outs, ctx.run_subgraph(*branch, {}));
  if (outs.size() != ctx.num_outputs())
    return ctx.invalid("branch produced " + std::to_string(outs.size()) + " outputs, the node has " +
                       std::to_string(ctx.num_outputs()));
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output_value(i, std::move(outs[i]));
  return Status::Ok();
}

Status compute_loop(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const ir::Graph* body, graph_attr(ctx, "body"));
  const size_t n_inputs = ctx.num_inputs();
  if (n_inputs < 2) return ctx.invalid("Loop needs the M and cond inputs (either may be empty)");
  const size_t N = n_inputs - 2;
  if (body->inputs.size() != N + 2)
    return ctx.invalid("body takes " + std::to_string(body->inputs.size()) + " inputs, expected " + std::to_string(N + 2));
  if (body->outputs.size() < N + 1)
    return ctx.invalid("body has " + std::to_string(body->outputs.size()) + " outputs, expected at least " +
                       std::to_string(N + 1));
  const size_t K = body->outputs.size() - 1 - N;
  if (ctx.num_outputs() != N + K)
    return ctx.invalid("node has " + std::to_string(ctx.num_outputs()) + " outputs, the body implies " +
                       std::to_string(N + K));

  const Tensor* m_t = ctx.input(0);
  const Tensor* cond_t = ctx.input(1);
  int64_t max_trips = -1;  // -1: no limit
  if (m_t) {
    if (m_t->size() != 1) return ctx.invalid("M must hold exactly one element");
    DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> m, read_int_tensor(*m_t, ctx));
    max_trips = std::max<int64_t>(0, m[0]);
  }
  bool cond = true;
  if (cond_t) {
    DLRT_ASSIGN_OR_RETURN(cond, read_bool(ctx, *cond_t, "cond"));
  }
  if (!m_t && !cond_t) return ctx.invalid("a Loop with neither M nor cond never ends");

  std::vector<RunValue> carried(N);
  for (size_t i = 0; i < N; ++i) {
    const RunValue* v = ctx.input_value(2 + i);
    if (!v) return ctx.invalid("loop-carried input " + std::to_string(i) + " is missing");
    carried[i] = *v;
  }
  std::vector<std::vector<Tensor>> scans(K);
  for (int64_t it = 0; (max_trips < 0 || it < max_trips) && cond; ++it) {
    std::vector<RunValue> in;
    in.reserve(N + 2);
    in.push_back(RunValue::of(Tensor::scalar<int64_t>(it)));
    in.push_back(RunValue::of(Tensor::scalar<bool>(cond)));
    for (auto& v : carried) in.push_back(std::move(v));
    DLRT_ASSIGN_OR_RETURN(std::vector<RunValue> out, ctx.run_subgraph(*body, std::move(in)));
    if (out.size() != N + 1 + K) return ctx.invalid("body returned the wrong number of outputs");
    if (cond_t) {
      if (out[0].kind != RunValue::Kind::kTensor) return ctx.invalid("body's cond output must be a tensor");
      DLRT_ASSIGN_OR_RETURN(cond, read_bool(ctx, out[0].tensor, "body's cond output"));
    }
    for (size_t i = 0; i < N; ++i) carried[i] = std::move(out[1 + i]);
    for (size_t k = 0; k < K; ++k) {
      if (out[1 + N + k].kind != RunValue::Kind::kTensor)
        return ctx.unsupported("scan output " + std::to_string(k) + " is not a tensor");
      scans[k].push_back(std::move(out[1 + N + k].tensor));
    }
  }
  for (size_t i = 0; i < N; ++i) ctx.set_output_value(i, std::move(carried[i]));
  for (size_t k = 0; k < K; ++k) {
    DType dt;
    Shape shape;
    declared_type(*body, 1 + N + k, dt, shape);
    DLRT_RETURN_IF_ERROR(stack_output(ctx, N + k, scans[k], 0, false, dt, shape));
  }
  return Status::Ok();
}

// Reads a per-scan-input/output int list attribute, defaulting to zeros.
Result<std::vector<int64_t>> list_attr(const KernelContext& ctx, const char* name, size_t count) {
  std::vector<int64_t> v = ctx.node().attr_ints(name);
  if (v.empty()) v.assign(count, 0);
  if (v.size() != count)
    return ctx.invalid(std::string("attribute '") + name + "' has " + std::to_string(v.size()) + " values, expected " +
                       std::to_string(count));
  return v;
}

// Runs a Scan body over `states` and `inputs` (already without any batch
// axis). Collects final states and, per scan output, the per-iteration
// elements in iteration order.
struct ScanRun {
  std::vector<RunValue> states;
  std::vector<std::vector<Tensor>> outputs;
};

Result<ScanRun> run_scan_body(KernelContext& ctx, const ir::Graph& body, std::vector<RunValue> states,
                              const std::vector<const Tensor*>& inputs, const std::vector<int64_t>& in_axes,
                              const std::vector<int64_t>& in_dirs, int64_t length, size_t K) {
  const size_t N = states.size();
  ScanRun run;
  run.outputs.resize(K);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<RunValue> in;
    in.reserve(N + inputs.size());
    for (auto& s : states) in.push_back(std::move(s));
    for (size_t m = 0; m < inputs.size(); ++m) {
      const int64_t idx = in_dirs[m] ? length - 1 - t : t;
      DLRT_ASSIGN_OR_RETURN(Tensor slice, take_slice(*inputs[m], in_axes[m], idx));
      in.push_back(RunValue::of(std::move(slice)));
    }
    DLRT_ASSIGN_OR_RETURN(std::vector<RunValue> out, ctx.run_subgraph(body, std::move(in)));
    if (out.size() != N + K) return ctx.invalid("body returned the wrong number of outputs");
    for (size_t i = 0; i < N; ++i) states[i] = std::move(out[i]);
    for (size_t k = 0; k < K; ++k) {
      if (out[N + k].kind != RunValue::Kind::kTensor)
        return ctx.unsupported("scan output " + std::to_string(k) + " is not a tensor");
      run.outputs[k].push_back(std::move(out[N + k].tensor));
    }
  }
  run.states = std::move(states);
  return run;
}

Status compute_scan9(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const ir::Graph* body, graph_attr(ctx, "body"));
  const ir::Node& n = ctx.node();
  if (!n.has_attr("num_scan_inputs")) return ctx.invalid("attribute 'num_scan_inputs' is required");
  const int64_t M = n.attr_int("num_scan_inputs", 0);
  if (M <= 0 || M > static_cast<int64_t>(ctx.num_inputs())) return ctx.invalid("num_scan_inputs is out of range");
  const size_t N = ctx.num_inputs() - M;
  if (body->inputs.size() != N + M) return ctx.invalid("body input count does not match the node's inputs");
  if (body->outputs.size() < N) return ctx.invalid("body has fewer outputs than states");
  const size_t K = body->outputs.size() - N;
  if (ctx.num_outputs() != N + K) return ctx.invalid("node output count does not match the body's outputs");
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> in_axes, list_attr(ctx, "scan_input_axes", M));
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> in_dirs, list_attr(ctx, "scan_input_directions", M));
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> out_axes, list_attr(ctx, "scan_output_axes", K));
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> out_dirs, list_attr(ctx, "scan_output_directions", K));

  std::vector<RunValue> states(N);
  for (size_t i = 0; i < N; ++i) {
    const RunValue* v = ctx.input_value(i);
    if (!v) return ctx.invalid("state input " + std::to_string(i) + " is missing");
    states[i] = *v;
  }
  std::vector<const Tensor*> inputs(M);
  int64_t length = -1;
  for (int64_t m = 0; m < M; ++m) {
    DLRT_ASSIGN_OR_RETURN(inputs[m], required_input(ctx, N + m));
    DLRT_ASSIGN_OR_RETURN(in_axes[m], normalize_axis(in_axes[m], static_cast<int64_t>(inputs[m]->rank()), ctx));
    const int64_t len = inputs[m]->dim(in_axes[m]);
    if (length >= 0 && len != length) return ctx.invalid("scan inputs have different sequence lengths");
    length = len;
  }
  DLRT_ASSIGN_OR_RETURN(ScanRun run, run_scan_body(ctx, *body, std::move(states), inputs, in_axes, in_dirs, length, K));
  for (size_t i = 0; i < N; ++i) ctx.set_output_value(i, std::move(run.states[i]));
  for (size_t k = 0; k < K; ++k) {
    DType dt;
    Shape shape;
    declared_type(*body, N + k, dt, shape);
    DLRT_RETURN_IF_ERROR(stack_output(ctx, N + k, run.outputs[k], out_axes[k], out_dirs[k] != 0, dt, shape));
  }
  return Status::Ok();
}

// Opset 8: every input has a leading batch axis, the scan axis is 1, and an
// optional first input gives each batch entry's sequence length.
Status compute_scan8(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const ir::Graph* body, graph_attr(ctx, "body"));
  const ir::Node& n = ctx.node();
  const int64_t M = n.attr_int("num_scan_inputs", 0);
  if (ctx.num_inputs() < 1 || M <= 0 || M > static_cast<int64_t>(ctx.num_inputs()) - 1)
    return ctx.invalid("num_scan_inputs is out of range");
  const size_t N = ctx.num_inputs() - 1 - M;
  if (body->inputs.size() != N + M) return ctx.invalid("body input count does not match the node's inputs");
  if (body->outputs.size() < N) return ctx.invalid("body has fewer outputs than states");
  const size_t K = body->outputs.size() - N;
  if (ctx.num_outputs() != N + K) return ctx.invalid("node output count does not match the body's outputs");
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> dirs, list_attr(ctx, "directions", M));

  std::vector<const Tensor*> all(N + M);
  int64_t batch = -1, max_len = -1;
  for (size_t i = 0; i < N + M; ++i) {
    DLRT_ASSIGN_OR_RETURN(all[i], required_input(ctx, 1 + i));
    const size_t min_rank = i < N ? 1 : 2;
    if (all[i]->rank() < min_rank) return ctx.invalid("input " + std::to_string(1 + i) + " lacks the batch axis");
    if (batch >= 0 && all[i]->dim(0) != batch) return ctx.invalid("inputs have different batch sizes");
    batch = all[i]->dim(0);
    if (i >= N) {
      if (max_len >= 0 && all[i]->dim(1) != max_len) return ctx.invalid("scan inputs have different sequence lengths");
      max_len = all[i]->dim(1);
    }
  }
  std::vector<int64_t> lens(static_cast<size_t>(batch), max_len);
  if (const Tensor* sl = ctx.input(0)) {
    DLRT_ASSIGN_OR_RETURN(lens, read_int_tensor(*sl, ctx));
    if (static_cast<int64_t>(lens.size()) != batch) return ctx.invalid("sequence_lens must have one value per batch entry");
    for (int64_t l : lens)
      if (l < 0 || l > max_len) return ctx.invalid("sequence_lens value " + std::to_string(l) + " is out of range");
  }

  std::vector<std::vector<Tensor>> final_states(N);
  std::vector<std::vector<Tensor>> scan_rows(K);  // per batch: [max_len, ...] padded with zeros
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<RunValue> states(N);
    std::vector<Tensor> inputs_b(M);
    std::vector<const Tensor*> inputs(M);
    for (size_t i = 0; i < N; ++i) {
      DLRT_ASSIGN_OR_RETURN(Tensor s, take_slice(*all[i], 0, b));
      states[i] = RunValue::of(std::move(s));
    }
    for (int64_t m = 0; m < M; ++m) {
      DLRT_ASSIGN_OR_RETURN(inputs_b[m], take_slice(*all[N + m], 0, b));
      // Only the first lens[b] steps take part; reverse scans start from the last valid one.
      if (lens[b] != max_len) {
        Shape s = inputs_b[m].shape();
        int64_t inner = 1;
        for (size_t d = 1; d < s.size(); ++d) inner *= s[d];
        s[0] = lens[b];
        DLRT_ASSIGN_OR_RETURN(Tensor cut, Tensor::allocate(inputs_b[m].dtype(), s));
        copy_elements(inputs_b[m], 0, cut, 0, lens[b] * inner);
        inputs_b[m] = std::move(cut);
      }
      inputs[m] = &inputs_b[m];
    }
    std::vector<int64_t> axes(static_cast<size_t>(M), 0);
    DLRT_ASSIGN_OR_RETURN(ScanRun run, run_scan_body(ctx, *body, std::move(states), inputs, axes, dirs, lens[b], K));
    for (size_t i = 0; i < N; ++i) {
      if (run.states[i].kind != RunValue::Kind::kTensor) return ctx.unsupported("Scan-8 states must be tensors");
      final_states[i].push_back(std::move(run.states[i].tensor));
    }
    for (size_t k = 0; k < K; ++k) {
      DType dt;
      Shape elem;
      declared_type(*body, N + k, dt, elem);
      if (!run.outputs[k].empty()) {
        dt = run.outputs[k][0].dtype();
        elem = run.outputs[k][0].shape();
      }
      // Pad to max_len with zeros so every batch entry stacks to the same shape.
      while (static_cast<int64_t>(run.outputs[k].size()) < max_len) {
        DLRT_ASSIGN_OR_RETURN(Tensor z, Tensor::allocate(dt, elem));
        run.outputs[k].push_back(std::move(z));
      }
      Shape row_shape = elem;
      row_shape.insert(row_shape.begin(), max_len);
      DLRT_ASSIGN_OR_RETURN(Tensor row, Tensor::allocate(dt, row_shape));
      int64_t inner = element_count(elem);
      for (int64_t t = 0; t < max_len; ++t) {
        if (run.outputs[k][t].shape() != elem || run.outputs[k][t].dtype() != dt)
          return ctx.invalid("scan output elements differ in shape");
        copy_elements(run.outputs[k][t], 0, row, t * inner, inner);
      }
      scan_rows[k].push_back(std::move(row));
    }
  }
  for (size_t i = 0; i < N; ++i) {
    DType dt = final_states[i].empty() ? all[i]->dtype() : final_states[i][0].dtype();
    Shape elem(all[i]->shape().begin() + 1, all[i]->shape().end());
    DLRT_RETURN_IF_ERROR(stack_output(ctx, i, final_states[i], 0, false, dt, elem));
  }
  for (size_t k = 0; k < K; ++k) {
    DType dt;
    Shape elem;
    declared_type(*body, N + k, dt, elem);
    elem.insert(elem.begin(), max_len);
    DLRT_RETURN_IF_ERROR(stack_output(ctx, N + k, scan_rows[k], 0, false, dt, elem));
  }
  return Status::Ok();
}

}  // namespace

Status register_control_flow_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("If", compute_if, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Loop", compute_loop, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Scan", compute_scan8, 8, 8));
  DLRT_RETURN_IF_ERROR(r.add_fn("Scan", compute_scan9, 9));
  return Status::Ok();
}

}  // namespace dlrt::cpu
