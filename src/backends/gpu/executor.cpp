#include "backends/gpu/executor.h"

#include "ir/passes/passes.h"


#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>

namespace dlrt::gpu {

namespace {

bool is_random(const std::string& op) {
  return op == "RandomNormal" || op == "RandomUniform" || op == "RandomNormalLike" || op == "RandomUniformLike" ||
         op == "Multinomial" || op == "Bernoulli";
}

bool has_graph_attr(const ir::Node& n) {
  for (auto& [k, a] : n.attributes)
    if (a.kind == ir::Attribute::Kind::kGraph || a.kind == ir::Attribute::Kind::kGraphs) return true;
  return false;
}

DType vtype(const ir::Graph& g, ir::ValueId v) {
  return v >= 0 && v < static_cast<ir::ValueId>(g.values.size()) ? g.values[v].type.dtype : DType::kUndefined;
}

bool tensors_only(const ir::Graph& g, const ir::Node& n) {
  auto ok = [&](ir::ValueId v) {
    return v == ir::kNoValue || (v >= 0 && v < static_cast<ir::ValueId>(g.values.size()) &&
                                 g.values[v].type.kind == ir::ValueKind::kTensor);
  };
  return std::all_of(n.inputs.begin(), n.inputs.end(), ok) && std::all_of(n.outputs.begin(), n.outputs.end(), ok);
}

bool touches_float(const ir::Graph& g, const ir::Node& n) {
  auto f = [&](ir::ValueId v) {
    if (v == ir::kNoValue) return false;
    DType t = vtype(g, v);
    return t == DType::kUndefined || dtype_is_float(t);
  };
  return std::any_of(n.inputs.begin(), n.inputs.end(), f) || std::any_of(n.outputs.begin(), n.outputs.end(), f);
}

bool is_shape_op(const ir::Node& n) { return (n.op_type == "Shape" || n.op_type == "Size") && n.domain.empty(); }

// Shape and Size computed from the input's shape alone (the input may live on the device).
Result<Tensor> shape_op(const ir::Node& n, const Shape& s) {
  if (n.op_type == "Size") return Tensor::scalar<int64_t>(static_cast<int64_t>(
      std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>())));
  int64_t r = static_cast<int64_t>(s.size());
  int64_t start = n.attr_int("start", 0), end = n.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i) v.push_back(s[i]);
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

Result<std::vector<Tensor>> run_cpu_kernel(const ir::Node& n, const cpu::OpKernel& k,
                                           const std::vector<const Tensor*>& inputs, ThreadPool& pool) {
  std::vector<RunValue> vals(inputs.size());
  std::vector<const RunValue*> ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]) {
      vals[i] = RunValue::of(*inputs[i]);
      ptrs[i] = &vals[i];
    }
  std::vector<RunValue> outs(n.outputs.size());
  cpu::KernelContext ctx(n, ptrs, outs, pool, nullptr);
  DLRT_RETURN_IF_ERROR(k.compute(ctx));
  std::vector<Tensor> r;
  for (auto& o : outs) r.push_back(o.kind == RunValue::Kind::kTensor ? o.tensor : Tensor());
  return r;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

}  // namespace

Classification classify(const ir::Graph& g) {
  size_t nv = g.values.size();
  std::vector<char> host(nv, 1), cst(nv, 0);
  for (size_t v = 0; v < nv; ++v) cst[v] = g.values[v].constant.has_value();
  Classification c;
  c.cls.resize(g.nodes.size(), NodeClass::kUnsupported);
  c.reason.resize(g.nodes.size());
  const auto& cpu = cpu::builtin_kernels();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    bool in_host = true, in_const = true;
    std::vector<bool> hin;
    for (auto v : n.inputs) {
      if (v == ir::kNoValue || v < 0 || v >= static_cast<ir::ValueId>(nv)) {
        hin.push_back(true);
        continue;
      }
      hin.push_back(host[v]);
      in_host = in_host && host[v];
      in_const = in_const && cst[v];
    }
    bool tensors = tensors_only(g, n);
    bool cpu_ok = tensors && !has_graph_attr(n) && !is_random(n.op_type) && cpu.find(n.op_type, n.domain, n.opset);
    NodeClass k;
    if (is_shape_op(n) && tensors) {
      k = NodeClass::kHost;
    } else if (cpu_ok && in_host && (in_const || !touches_float(g, n))) {
      k = NodeClass::kHost;
    } else {
      c.reason[i] = has_graph_attr(n) ? "control flow stays on the cpu" : device_unsupported_reason(g, n, hin);
      k = c.reason[i].empty() ? NodeClass::kDevice : NodeClass::kUnsupported;
    }
    c.cls[i] = k;
    for (auto v : n.outputs)
      if (v != ir::kNoValue && v >= 0 && v < static_cast<ir::ValueId>(nv)) {
        host[v] = k != NodeClass::kDevice;
        cst[v] = k == NodeClass::kHost && in_const;
      }
  }
  return c;
}

// ---- one run's lowering ----

struct SlotInfo {
  enum class Kind { kTemp, kUpload, kConst } kind = Kind::kTemp;
  size_t bytes = 0;
  ir::ValueId value = ir::kNoValue;
};

struct Step {
  enum class Kind { kUpload, kLaunch } kind = Kind::kLaunch;
  int slot = -1;
  ir::ValueId value = ir::kNoValue;
  Launch launch;
};

struct Plan {
  KernelDevice* dev = nullptr;
  std::vector<DeviceBuffer> mem;                    // per slot
  std::vector<DeviceBuffer> owned;                  // pool buffers
  std::vector<std::unique_ptr<BoundLaunch>> bound;  // per step (null for uploads)
  std::unique_ptr<PlanState> state;                 // the device's, e.g. a captured graph
  ~Plan() {
    state.reset();
    bound.clear();
    for (auto m : owned) dev->release(m);
  }
};

class RunLowering final : public LowerCtx {
 public:
  struct Dev {
    Shape shape;
    DType dtype = DType::kUndefined;
    int slot = -1;
  };

  explicit RunLowering(Executor& exe)
      : exe_(exe), host_(exe.graph_->values.size()), dev_(exe.graph_->values.size()) {}

  const DeviceParams& device() const override { return exe_.dev_->params(); }
  const Shape& shape(ir::ValueId v) const override {
    static const Shape empty;
    if (!valid(v)) return empty;
    if (host_[v]) return host_[v]->shape();
    return dev_[v] ? dev_[v]->shape : empty;
  }
  DType dtype(ir::ValueId v) const override {
    if (!valid(v)) return DType::kUndefined;
    if (host_[v]) return host_[v]->dtype();
    return dev_[v] ? dev_[v]->dtype : DType::kUndefined;
  }
  const Tensor* host(ir::ValueId v) const override { return valid(v) && host_[v] ? &*host_[v] : nullptr; }
  Result<int> slot_of(ir::ValueId v) override {
    if (!valid(v)) return Internal(exe_.dev_->name() + ": bad value id");
    if (dev_[v]) return dev_[v]->slot;
    if (!host_[v]) return Internal(exe_.dev_->name() + ": value '" + exe_.graph_->values[v].name + "' was not computed");
    if (auto it = host_slot_.find(v); it != host_slot_.end()) return it->second;
    SlotInfo s;
    s.kind = exe_.is_const_[v] ? SlotInfo::Kind::kConst : SlotInfo::Kind::kUpload;
    s.bytes = host_[v]->nbytes();
    s.value = v;
    int id = add_slot(s);
    host_slot_[v] = id;
    if (s.kind == SlotInfo::Kind::kUpload) {
      Step st;
      st.kind = Step::Kind::kUpload;
      st.slot = id;
      st.value = v;
      steps.push_back(std::move(st));
    }
    return id;
  }
  Result<int> define(ir::ValueId out, Shape shape, DType dtype) override {
    if (!valid(out)) return Internal(exe_.dev_->name() + ": bad output id");
    for (auto d : shape)
      if (d < 0) return InvalidArgument(exe_.dev_->name() + ": negative dimension");
    SlotInfo s;
    s.bytes = static_cast<size_t>(numel(shape)) * dtype_size(dtype);
    int id = add_slot(s);
    dev_[out] = Dev{std::move(shape), dtype, id};
    return id;
  }
  Status alias(ir::ValueId out, ir::ValueId in, Shape shape) override {
    if (!valid(out) || !valid(in)) return Internal(exe_.dev_->name() + ": bad value id");
    if (host_[in]) {
      DLRT_ASSIGN_OR_RETURN(Tensor t, host_[in]->reshaped(std::move(shape)));
      host_[out] = std::move(t);
      return Status::Ok();
    }
    if (!dev_[in]) return Internal(exe_.dev_->name() + ": value '" + exe_.graph_->values[in].name + "' was not computed");
    dev_[out] = Dev{std::move(shape), dev_[in]->dtype, dev_[in]->slot};
    return Status::Ok();
  }
  int scratch(size_t bytes) override {
    SlotInfo s;
    s.bytes = bytes;
    return add_slot(s);
  }
  void launch(Launch l) override {
    Step st;
    st.kind = Step::Kind::kLaunch;
    st.launch = std::move(l);
    steps.push_back(std::move(st));
  }

  bool valid(ir::ValueId v) const { return v >= 0 && v < static_cast<ir::ValueId>(host_.size()); }
  int add_slot(SlotInfo s) {
    slots.push_back(s);
    return static_cast<int>(slots.size()) - 1;
  }

  // Everything that shapes a plan, as bytes.
  std::string key(const std::vector<ir::ValueId>& outputs) const {
    std::string k;
    auto put = [&](const void* p, size_t n) { k.append(static_cast<const char*>(p), n); };
    auto put_i = [&](int64_t v) { put(&v, sizeof v); };
    for (const auto& s : slots) {
      put_i(static_cast<int64_t>(s.kind));
      put_i(static_cast<int64_t>(s.bytes));
      put_i(s.kind == SlotInfo::Kind::kConst ? s.value : -1);
    }
    k += '|';
    for (const auto& st : steps) {
      if (st.kind == Step::Kind::kUpload) {
        k += 'U';
        put_i(st.slot);
        continue;
      }
      k += 'L';
      k += st.launch.kernel;
      k += '\0';
      put_i(st.launch.dims);
      put(st.launch.gws, sizeof st.launch.gws);
      put(st.launch.lws, sizeof st.launch.lws);
      for (const auto& a : st.launch.args) {
        put_i(static_cast<int64_t>(a.kind));
        put_i(a.slot);
        put_i(static_cast<int64_t>(a.bytes.size()));
        if (!a.bytes.empty()) put(a.bytes.data(), a.bytes.size());
      }
    }
    k += '|';
    for (auto v : outputs) put_i(valid(v) && dev_[v] ? dev_[v]->slot : -1);
    return k;
  }

  Executor& exe_;
  std::vector<std::optional<Tensor>> host_;
  std::vector<std::optional<Dev>> dev_;
  std::vector<SlotInfo> slots;
  std::vector<Step> steps;
  std::map<ir::ValueId, int> host_slot_;
};

// ---- the executor ----

ConstantBuffers::~ConstantBuffers() {
  for (auto& [v, b] : buffers_) release_(b);
}

Result<DeviceBuffer> ConstantBuffers::get(ir::ValueId v, const std::function<Result<DeviceBuffer>()>& make) {
  std::lock_guard<std::mutex> lk(mu_);
  if (auto it = buffers_.find(v); it != buffers_.end()) return it->second;
  DLRT_ASSIGN_OR_RETURN(DeviceBuffer b, make());
  buffers_[v] = b;
  return b;
}

Result<std::unique_ptr<Executor>> Executor::create(std::unique_ptr<KernelDevice> device, ir::Model model,
                                                   std::shared_ptr<ConstantBuffers> constants) {
  std::unique_ptr<Executor> exe(new Executor());
  exe->dev_ = std::move(device);
  if (exe->dev_ && !constants) {
    KernelDevice* dev = exe->dev_.get();  // outlives constants_, declared after it
    constants = std::make_shared<ConstantBuffers>([dev](DeviceBuffer b) { dev->release(b); });
  }
  exe->constants_ = std::move(constants);
  exe->model_ = std::move(model);
  if (!exe->dev_) return Internal("gpu: no device");
  if (!exe->model_.graph) return Internal(exe->dev_->name() + ": no graph");
  // Rewrites on a copy (the graph is shared with whoever imported it): a
  // float16/bfloat16 partition computes in float32 (half constants and values
  // become float32, Casts at its borders); the erf form of GELU (Div, Erf,
  // Add, Mul, Mul) becomes one Gelu node, which runs as one kernel or as the
  // epilogue of the GEMM before it.
  auto graph = std::make_shared<ir::Graph>(*exe->model_.graph);
  ir::passes::PassContext pc;
  ir::passes::compute_half_in_float32(*graph, pc);
  ir::passes::fuse_gelu(*graph, pc);
  exe->model_.graph = std::move(graph);
  exe->graph_ = exe->model_.graph.get();
  DLRT_RETURN_IF_ERROR(exe->prepare());
  return exe;
}

Executor::~Executor() {
  plans_.clear();
  constants_.reset();
}

size_t Executor::plan_count() const {
  std::lock_guard<std::mutex> lk(mu_);
  return plans_.size();
}

Status Executor::prepare() {
  const ir::Graph& g = *graph_;
  size_t nv = g.values.size(), nn = g.nodes.size();
  classes_ = classify(g);
  for (size_t i = 0; i < nn; ++i)
    if (classes_.cls[i] == NodeClass::kUnsupported)
      return Unsupported(dev_->name() + " cannot run " + g.nodes[i].describe() + ": " + classes_.reason[i]);
  pool_ = std::make_unique<ThreadPool>(1);

  const_values_.assign(nv, std::nullopt);
  is_const_.assign(nv, false);
  for (size_t v = 0; v < nv; ++v)
    if (g.values[v].constant) {
      const_values_[v] = *g.values[v].constant;
      is_const_[v] = true;
    }
  host_kernels_.resize(nn);
  const auto& cpu = cpu::builtin_kernels();
  for (size_t i = 0; i < nn; ++i) {
    const ir::Node& n = g.nodes[i];
    if (classes_.cls[i] != NodeClass::kHost) continue;
    if (!is_shape_op(n)) {
      const cpu::KernelDef* def = cpu.find(n.op_type, n.domain, n.opset);
      if (!def) return Unsupported(dev_->name() + ": no host kernel for " + n.describe());
      DLRT_ASSIGN_OR_RETURN(host_kernels_[i], def->factory(n));
    }
    bool all_const = true;
    for (auto v : n.inputs)
      if (v != ir::kNoValue && !is_const_[v]) all_const = false;
    if (!all_const) continue;
    // Constant host node: evaluate once now.
    std::vector<Tensor> outs;
    if (is_shape_op(n)) {
      DLRT_ASSIGN_OR_RETURN(Tensor t, shape_op(n, const_values_[n.inputs[0]]->shape()));
      outs.push_back(std::move(t));
    } else {
      std::vector<const Tensor*> ins;
      for (auto v : n.inputs) ins.push_back(v == ir::kNoValue ? nullptr : &*const_values_[v]);
      DLRT_ASSIGN_OR_RETURN(outs, run_cpu_kernel(n, *host_kernels_[i], ins, *pool_));
    }
    for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k)
      if (n.outputs[k] != ir::kNoValue && outs[k].valid()) {
        const_values_[n.outputs[k]] = outs[k];
        is_const_[n.outputs[k]] = true;
      }
  }

  // Fusion: MatMul + Add(bias) and Gemm/MatMul/Conv + activation, when the
  // intermediate has exactly one reader and is not a partition output.
  epilogue_.assign(nn, Epilogue{});
  out_override_.assign(nn, ir::kNoValue);
  fused_bias_.assign(nn, ir::kNoValue);
  skip_.assign(nn, false);
  std::vector<int> uses(nv, 0), reader(nv, -1);
  for (size_t i = 0; i < nn; ++i)
    for (auto v : g.nodes[i].inputs)
      if (v != ir::kNoValue) {
        ++uses[v];
        reader[v] = static_cast<int>(i);
      }
  for (auto v : g.outputs) uses[v] += 1000;
  auto const_inputs = [&](const ir::Node& n) {
    std::vector<const Tensor*> h;
    for (auto v : n.inputs) h.push_back(v != ir::kNoValue && const_values_[v] ? &*const_values_[v] : nullptr);
    return h;
  };
  for (size_t i = 0; i < nn; ++i) {
    const ir::Node& n = g.nodes[i];
    if (classes_.cls[i] != NodeClass::kDevice || skip_[i] || !n.domain.empty()) continue;
    if (n.op_type != "MatMul" && n.op_type != "Gemm" && n.op_type != "Conv" && n.op_type != "ConvTranspose") continue;
    ir::ValueId v = n.outputs[0];
    if (n.op_type == "MatMul" && uses[v] == 1) {
      int j = reader[v];
      const ir::Node& a = g.nodes[j];
      if (a.op_type == "Add" && a.domain.empty() && classes_.cls[j] == NodeClass::kDevice && a.inputs.size() == 2) {
        ir::ValueId b = a.inputs[0] == v ? a.inputs[1] : a.inputs[0];
        const auto& w = const_values_[n.inputs[1]];
        const auto& bt = const_values_[b];
        if (b != v && w && bt && w->rank() == 2 && bt->rank() == 1 && bt->dtype() == DType::kFloat32 &&
            bt->dim(0) == w->dim(1)) {
          fused_bias_[i] = b;
          out_override_[i] = a.outputs[0];
          skip_[j] = true;
          v = a.outputs[0];
        }
      }
    }
    if (uses[v] != 1) continue;
    int j = reader[v];
    const ir::Node& act = g.nodes[j];
    Epilogue e;
    if (classes_.cls[j] == NodeClass::kDevice && act.inputs[0] == v && epilogue_of(act, const_inputs(act), &e)) {
      epilogue_[i] = e;
      out_override_[i] = act.outputs[0];
      skip_[j] = true;
    }
  }

  return Status::Ok();
}

Result<DeviceBuffer> Executor::const_buffer(ir::ValueId v, const Tensor& t) {
  return constants_->get(v, [&]() -> Result<DeviceBuffer> {
    size_t bytes = std::max<size_t>(t.nbytes(), 16);
    std::vector<uint8_t> pad;
    const void* src = t.raw_data();
    if (t.nbytes() < bytes) {
      pad.assign(bytes, 0);
      if (t.nbytes()) std::memcpy(pad.data(), t.raw_data(), t.nbytes());
      src = pad.data();
    }
    return dev_->alloc_constant(src, bytes);
  });
}

Result<Plan*> Executor::plan_for(const std::string& key, RunLowering& low) {
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  if (plans_.size() >= 16) plans_.clear();  // many distinct shapes: start over
  auto plan = std::make_unique<Plan>();
  plan->dev = dev_.get();
  size_t ns = low.slots.size();
  plan->mem.assign(ns, 0);
  // Liveness in step order; a run's uploads all happen before its first
  // launch, so their buffers are live from the start; outputs stay alive to
  // the end.
  std::vector<int> first(ns, INT_MAX), last(ns, -1);
  auto touch = [&](int s, int i) {
    first[s] = std::min(first[s], i);
    last[s] = std::max(last[s], i);
  };
  for (size_t i = 0; i < low.steps.size(); ++i) {
    const Step& st = low.steps[i];
    if (st.kind == Step::Kind::kUpload) {
      touch(st.slot, 0);
      touch(st.slot, static_cast<int>(i));
    } else {
      for (const auto& a : st.launch.args)
        if (a.kind == LArg::Kind::kSlot) touch(a.slot, static_cast<int>(i));
    }
  }
  for (auto v : graph_->outputs)
    if (low.valid(v) && low.dev_[v]) {
      int s = low.dev_[v]->slot;
      if (first[s] == INT_MAX) first[s] = static_cast<int>(low.steps.size());
      last[s] = INT_MAX;
    }
  // Constants: persistent buffers shared by every plan.
  for (size_t s = 0; s < ns; ++s)
    if (low.slots[s].kind == SlotInfo::Kind::kConst) {
      ir::ValueId v = low.slots[s].value;
      DLRT_ASSIGN_OR_RETURN(plan->mem[s], const_buffer(v, *const_values_[v]));
    }
  // Pool: best-fit reuse of buffers whose last reader is already enqueued.
  std::vector<std::vector<int>> starts(low.steps.size() + 1), ends(low.steps.size() + 1);
  for (size_t s = 0; s < ns; ++s) {
    if (low.slots[s].kind == SlotInfo::Kind::kConst || first[s] == INT_MAX) continue;
    starts[std::min<size_t>(first[s], low.steps.size())].push_back(static_cast<int>(s));
    if (last[s] != INT_MAX) ends[last[s]].push_back(static_cast<int>(s));
  }
  std::multimap<size_t, DeviceBuffer> free_list;
  std::map<DeviceBuffer, size_t> sizes;
  for (size_t i = 0; i <= low.steps.size(); ++i) {
    for (int s : starts[i]) {
      size_t need = std::max<size_t>(low.slots[s].bytes, 16);
      need = (need + 255) / 256 * 256;
      auto it = free_list.lower_bound(need);
      if (it != free_list.end() && it->first <= need * 2 + 4096) {
        plan->mem[s] = it->second;
        free_list.erase(it);
        continue;
      }
      DLRT_ASSIGN_OR_RETURN(DeviceBuffer m, dev_->alloc(need));
      plan->owned.push_back(m);
      sizes[m] = need;
      plan->mem[s] = m;
    }
    if (i < low.steps.size())
      for (int s : ends[i]) free_list.emplace(sizes[plan->mem[s]], plan->mem[s]);
  }
  // Launches bound to their buffers once.
  plan->bound.resize(low.steps.size());
  for (size_t i = 0; i < low.steps.size(); ++i) {
    const Step& st = low.steps[i];
    if (st.kind != Step::Kind::kLaunch) continue;
    DLRT_ASSIGN_OR_RETURN(plan->bound[i], dev_->bind(st.launch, plan->mem));
  }
  Plan* p = plan.get();
  plans_[key] = std::move(plan);
  return p;
}

Result<Tensor> Executor::output_tensor(size_t k, DType dtype, const Shape& shape) {
  // A few buffers per output: enough for a caller that keeps the previous
  // result while the next run fills another; beyond that, plain memory.
  constexpr size_t kPoolPerOutput = 3;
  int64_t count = 1;
  for (auto d : shape) count *= d;
  size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
  if (bytes < (size_t{64} << 10) || dtype == DType::kString) return Tensor::allocate_uninitialized(dtype, shape);
  if (out_pool_.size() <= k) out_pool_.resize(k + 1);
  auto& pool = out_pool_[k];
  for (auto& [buf, size] : pool)
    if (size >= bytes && buf.use_count() == 1) return Tensor::adopt(dtype, shape, buf, buf.get());
  if (pool.size() < kPoolPerOutput)
    if (std::shared_ptr<void> buf = dev_->host_buffer(bytes)) {
      pool.emplace_back(buf, bytes);
      return Tensor::adopt(dtype, shape, buf, buf.get());
    }
  return Tensor::allocate_uninitialized(dtype, shape);
}

Result<std::vector<Tensor>> Executor::run(std::span<const Tensor> inputs) {
  std::lock_guard<std::mutex> lk(mu_);
  const ir::Graph& g = *graph_;
  if (inputs.size() != g.inputs.size())
    return InvalidArgument(dev_->name() + ": expected " + std::to_string(g.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  RunLowering low(*this);
  for (size_t v = 0; v < const_values_.size(); ++v)
    if (const_values_[v]) low.host_[v] = const_values_[v];
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid() || inputs[i].dtype() == DType::kString)
      return InvalidArgument(dev_->name() + ": input " + std::to_string(i) + " must be a numeric tensor");
    low.host_[g.inputs[i]] = inputs[i];
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (skip_[i]) continue;
    if (classes_.cls[i] == NodeClass::kHost) {
      bool done = true;
      for (auto v : n.outputs)
        if (v != ir::kNoValue && !is_const_[v]) done = false;
      if (done) continue;
      std::vector<Tensor> outs;
      if (is_shape_op(n)) {
        DLRT_ASSIGN_OR_RETURN(Tensor t, shape_op(n, low.shape(n.inputs[0])));
        outs.push_back(std::move(t));
      } else {
        std::vector<const Tensor*> ins;
        for (auto v : n.inputs) {
          if (v != ir::kNoValue && !low.host(v))
            return Internal(dev_->name() + ": host node " + n.describe() + " reads a value that is not on the host");
          ins.push_back(v == ir::kNoValue ? nullptr : low.host(v));
        }
        DLRT_ASSIGN_OR_RETURN(outs, run_cpu_kernel(n, *host_kernels_[i], ins, *pool_));
      }
      for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k)
        if (n.outputs[k] != ir::kNoValue) low.host_[n.outputs[k]] = std::move(outs[k]);
      continue;
    }
    for (auto v : n.inputs)
      if (v != ir::kNoValue && !low.host(v) && !low.dev_[v])
        return Internal(dev_->name() + ": " + n.describe() + " reads a value that was not computed");
    if (fused_bias_[i] != ir::kNoValue) {
      DLRT_RETURN_IF_ERROR(lower_matmul_bias(low, n, fused_bias_[i], out_override_[i], epilogue_[i]));
    } else {
      DLRT_RETURN_IF_ERROR(lower_node(low, n, epilogue_[i], out_override_[i]));
    }
  }

  std::string key = low.key(g.outputs);
  DLRT_ASSIGN_OR_RETURN(Plan * plan, plan_for(key, low));
  std::vector<Upload> uploads;
  PlanLaunches launches;
  launches.state = &plan->state;
  for (size_t i = 0; i < low.steps.size(); ++i) {
    const Step& st = low.steps[i];
    if (st.kind == Step::Kind::kUpload) {
      const Tensor& t = *low.host_[st.value];
      if (t.nbytes()) uploads.push_back({plan->mem[st.slot], t.raw_data(), t.nbytes(), g.values[st.value].name});
    } else {
      launches.launches.push_back(&st.launch);
      launches.bound.push_back(plan->bound[i].get());
    }
  }
  std::vector<Tensor> outputs;
  std::vector<Download> downloads;
  for (auto v : g.outputs) {
    if (low.host(v)) {
      DLRT_ASSIGN_OR_RETURN(Tensor t, low.host(v)->clone());
      outputs.push_back(std::move(t));
      continue;
    }
    if (!low.dev_[v]) return Internal(dev_->name() + ": output '" + g.values[v].name + "' was not computed");
    const auto& d = *low.dev_[v];
    DLRT_ASSIGN_OR_RETURN(Tensor t, output_tensor(outputs.size(), d.dtype, d.shape));
    if (t.nbytes()) downloads.push_back({plan->mem[d.slot], t.raw_data(), t.nbytes(), g.values[v].name});
    outputs.push_back(std::move(t));
  }
  DLRT_RETURN_IF_ERROR(dev_->replay(uploads, launches, downloads));
  return outputs;
}

}  // namespace dlrt::gpu
