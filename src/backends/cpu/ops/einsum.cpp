// Einsum: parses the equation into integer labels, takes diagonals of
// repeated labels as strided views, and contracts operands pairwise from left
// to right. Each contraction permutes both operands to
// [batch, free, contracted] / [batch, contracted, free] and runs a batched
// matrix multiply; labels nobody needs later are summed out while permuting.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {
namespace {

constexpr int kEllipsisBase = 52;  // labels 0..51 are letters, then ellipsis dims

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// Labels sort like their characters (uppercase before lowercase).
int label_char_order(int l) { return l < 26 ? 'a' + l : 'A' + (l - 26); }

struct Term {
  std::vector<int> letters_before, letters_after;  // around "..."
  bool has_ellipsis = false;
};

struct Equation {
  std::vector<std::vector<int>> inputs;  // label per input dim
  std::vector<int> output;
  int ellipsis_rank = 0;
};

Result<Term> parse_term(const std::string& s, const KernelContext& ctx) {
  Term t;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.has_ellipsis) return ctx.invalid("'...' appears twice in term '" + s + "'");
      t.has_ellipsis = true;
      i += 3;
      continue;
    }
    int l = letter_label(s[i]);
    if (l < 0) return ctx.invalid(std::string("invalid character '") + s[i] + "' in equation");
    (t.has_ellipsis ? t.letters_after : t.letters_before).push_back(l);
    ++i;
  }
  return t;
}

Result<Equation> parse_equation(std::string eq, const std::vector<const Tensor*>& ins, const KernelContext& ctx) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::string lhs = eq, rhs;
  const size_t arrow = eq.find("->");
  const bool explicit_out = arrow != std::string::npos;
  if (explicit_out) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
  }
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t c = lhs.find(',', start);
    terms.push_back(lhs.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (terms.size() != ins.size())
    return ctx.invalid("equation has " + std::to_string(terms.size()) + " input terms but the node has " + std::to_string(ins.size()) + " inputs");
  Equation e;
  std::vector<Term> parsed;
  std::vector<int> ell_dims(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    DLRT_ASSIGN_OR_RETURN(Term t, parse_term(terms[i], ctx));
    const int64_t letters = static_cast<int64_t>(t.letters_before.size() + t.letters_after.size());
    const int64_t rank = static_cast<int64_t>(ins[i]->rank());
    if (t.has_ellipsis ? rank < letters : rank != letters)
      return ctx.invalid("term '" + terms[i] + "' does not match input " + std::to_string(i) + " of rank " + std::to_string(rank));
    ell_dims[i] = static_cast<int>(rank - letters);
    e.ellipsis_rank = std::max(e.ellipsis_rank, ell_dims[i]);
    parsed.push_back(std::move(t));
  }
  for (size_t i = 0; i < parsed.size(); ++i) {
    std::vector<int> labels = parsed[i].letters_before;
    for (int k = 0; k < ell_dims[i]; ++k) labels.push_back(kEllipsisBase + e.ellipsis_rank - ell_dims[i] + k);
    labels.insert(labels.end(), parsed[i].letters_after.begin(), parsed[i].letters_after.end());
    e.inputs.push_back(std::move(labels));
  }
  if (explicit_out) {
    DLRT_ASSIGN_OR_RETURN(Term t, parse_term(rhs, ctx));
    e.output = t.letters_before;
    if (t.has_ellipsis)
      for (int k = 0; k < e.ellipsis_rank; ++k) e.output.push_back(kEllipsisBase + k);
    e.output.insert(e.output.end(), t.letters_after.begin(), t.letters_after.end());
    for (size_t a = 0; a < e.output.size(); ++a) {
      for (size_t b = a + 1; b < e.output.size(); ++b)
        if (e.output[a] == e.output[b]) return ctx.invalid("output label repeated in '" + rhs + "'");
      bool found = e.output[a] >= kEllipsisBase;
      for (auto& in : e.inputs) found = found || std::count(in.begin(), in.end(), e.output[a]) > 0;
      if (!found) return ctx.invalid("output label in '" + rhs + "' does not appear in any input");
    }
  } else {
    // Implicit: broadcast dims, then letters seen exactly once, in character order.
    for (int k = 0; k < e.ellipsis_rank; ++k) e.output.push_back(kEllipsisBase + k);
    std::vector<int> count(kEllipsisBase, 0);
    for (auto& in : e.inputs)
      for (int l : in)
        if (l < kEllipsisBase) count[l]++;
    std::vector<int> once;
    for (int l = 0; l < kEllipsisBase; ++l)
      if (count[l] == 1) once.push_back(l);
    std::sort(once.begin(), once.end(), [](int a, int b) { return label_char_order(a) < label_char_order(b); });
    e.output.insert(e.output.end(), once.begin(), once.end());
  }
  return e;
}

// A contiguous row-major operand in the compute type, with one label per dim.
template <typename C>
struct Operand {
  std::vector<C> data;
  std::vector<int> labels;
  std::vector<int64_t> sizes;
};

// A strided view: dims with labels (unique), sizes and element strides.
template <typename C>
struct StridedView {
  const C* data = nullptr;
  std::vector<int> labels;
  std::vector<int64_t> sizes, strides;
};

template <typename C>
StridedView<C> view_of(const Operand<C>& op) {
  StridedView<C> v;
  v.data = op.data.data();
  v.labels = op.labels;
  v.sizes = op.sizes;
  v.strides.assign(op.sizes.size(), 1);
  for (size_t i = op.sizes.size(); i-- > 1;) v.strides[i - 1] = v.strides[i] * op.sizes[i];
  return v;
}

// Copies `v` into a contiguous operand with dims `labels` (sizes from
// `label_size`); dims of `v` not listed are summed, listed labels `v` lacks or
// holds with size 1 are broadcast.
template <typename C>
Operand<C> rearrange(const StridedView<C>& v, const std::vector<int>& labels, const std::vector<int64_t>& label_size) {
  Operand<C> out;
  out.labels = labels;
  std::vector<int64_t> ostrides;
  for (int l : labels) {
    out.sizes.push_back(label_size[l]);
    int64_t st = 0;
    for (size_t d = 0; d < v.labels.size(); ++d)
      if (v.labels[d] == l && v.sizes[d] != 1) st = v.strides[d];
    ostrides.push_back(st);
  }
  std::vector<int64_t> ssizes, sstrides;
  for (size_t d = 0; d < v.labels.size(); ++d) {
    if (std::find(labels.begin(), labels.end(), v.labels[d]) != labels.end()) continue;
    ssizes.push_back(v.sizes[d]);
    sstrides.push_back(v.strides[d]);
  }
  const int64_t total = element_count(out.sizes);
  const int64_t sum_total = element_count(ssizes);
  out.data.assign(static_cast<size_t>(total), C(0));
  if (total == 0) return out;
  const size_t rank = out.sizes.size(), srank = ssizes.size();
  std::vector<int64_t> idx(rank, 0), sidx(srank, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < total; ++o) {
    C acc = C(0);
    if (srank == 0) {
      acc = v.data[off];
    } else if (sum_total > 0) {
      // Innermost summed dim as a tight loop, the rest by odometer.
      const int64_t last_n = ssizes[srank - 1], last_st = sstrides[srank - 1];
      std::fill(sidx.begin(), sidx.end(), 0);
      int64_t soff = 0;
      for (int64_t s = 0; s < sum_total; s += last_n) {
        const C* p = v.data + off + soff;
        for (int64_t k = 0; k < last_n; ++k) acc += p[k * last_st];
        for (size_t d = srank - 1; d-- > 0;) {
          if (++sidx[d] < ssizes[d]) { soff += sstrides[d]; break; }
          soff -= sstrides[d] * (ssizes[d] - 1);
          sidx[d] = 0;
        }
      }
    }
    out.data[o] = acc;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out.sizes[d]) { off += ostrides[d]; break; }
      off -= ostrides[d] * (out.sizes[d] - 1);
      idx[d] = 0;
    }
  }
  return out;
}

// c[b] (m x n) = a[b] (m x k) * b[b] (k x n), all row-major and contiguous.
template <typename C>
void batched_matmul(KernelContext& ctx, const C* a, const C* b, C* c, int64_t batch, int64_t m, int64_t k, int64_t n) {
  const int64_t rows = batch * m;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, k * n));
  ctx.pool().parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    constexpr int64_t kBlockK = 256;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bi = r / m;
      const C* arow = a + r * k;
      const C* bmat = b + bi * k * n;
      C* crow = c + r * n;
      std::fill(crow, crow + n, C(0));
      for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
        const int64_t k1 = std::min(k, k0 + kBlockK);
        for (int64_t kk = k0; kk < k1; ++kk) {
          const C av = arow[kk];  // no zero skip: 0 * inf must stay NaN
          const C* brow = bmat + kk * n;
          for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        }
      }
    }
  });
}

template <typename C>
Operand<C> contract(KernelContext& ctx, const Operand<C>& A, const Operand<C>& B, const std::vector<bool>& keep,
                    const std::vector<int64_t>& label_size) {
  auto in = [](const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); };
  std::vector<int> batch, contracted, a_free, b_free;
  for (int l : A.labels) {
    if (in(B.labels, l)) (keep[l] ? batch : contracted).push_back(l);
    else if (keep[l]) a_free.push_back(l);
  }
  for (int l : B.labels)
    if (!in(A.labels, l) && keep[l]) b_free.push_back(l);
  std::vector<int> la = batch, lb = batch;
  la.insert(la.end(), a_free.begin(), a_free.end());
  la.insert(la.end(), contracted.begin(), contracted.end());
  lb.insert(lb.end(), contracted.begin(), contracted.end());
  lb.insert(lb.end(), b_free.begin(), b_free.end());
  Operand<C> pa = rearrange(view_of(A), la, label_size);
  Operand<C> pb = rearrange(view_of(B), lb, label_size);
  auto prod = [&](const std::vector<int>& ls) {
    int64_t p = 1;
    for (int l : ls) p *= label_size[l];
    return p;
  };
  const int64_t nb = prod(batch), m = prod(a_free), k = prod(contracted), n = prod(b_free);
  Operand<C> out;
  out.labels = batch;
  out.labels.insert(out.labels.end(), a_free.begin(), a_free.end());
  out.labels.insert(out.labels.end(), b_free.begin(), b_free.end());
  for (int l : out.labels) out.sizes.push_back(label_size[l]);
  out.data.assign(static_cast<size_t>(nb * m * n), C(0));
  if (nb * m * n > 0) batched_matmul(ctx, pa.data.data(), pb.data.data(), out.data.data(), nb, m, k, n);
  return out;
}

template <typename T>
using ComputeOf = std::conditional_t<std::is_same_v<T, double>, double,
                  std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, float>>;

template <typename T>
Status einsum_typed(KernelContext& ctx, const std::vector<const Tensor*>& ins, const Equation& eq) {
  using C = ComputeOf<T>;
  // Label sizes: equal across uses, except size 1 which broadcasts.
  std::vector<int64_t> label_size(static_cast<size_t>(kEllipsisBase + eq.ellipsis_rank), -1);
  for (size_t i = 0; i < ins.size(); ++i) {
    for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
      const int l = eq.inputs[i][d];
      const int64_t s = ins[i]->dim(d);
      int64_t& cur = label_size[l];
      if (cur == -1 || cur == 1) cur = s;
      else if (s != cur && s != 1)
        return ctx.invalid("dimension sizes " + std::to_string(cur) + " and " + std::to_string(s) + " disagree for one label");
    }
  }
  for (auto& s : label_size)
    if (s < 0) s = 1;  // ellipsis dims no input has at full rank
  // Convert inputs, taking diagonals of repeated labels as strided views.
  std::vector<Operand<C>> ops;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Tensor& t = *ins[i];
    std::vector<C> conv(static_cast<size_t>(t.size()));
    const T* src = t.data<T>();
    for (int64_t j = 0; j < t.size(); ++j) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) conv[j] = static_cast<float>(src[j]);
      else conv[j] = static_cast<C>(src[j]);
    }
    const size_t rank = t.rank();
    std::vector<int64_t> strides(rank, 1);
    for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * t.dim(d);
    StridedView<C> v;
    v.data = conv.data();
    for (size_t d = 0; d < rank; ++d) {
      const int l = eq.inputs[i][d];
      auto it = std::find(v.labels.begin(), v.labels.end(), l);
      if (it == v.labels.end()) {
        v.labels.push_back(l);
        v.sizes.push_back(t.dim(d));
        v.strides.push_back(strides[d]);
      } else {
        size_t p = static_cast<size_t>(it - v.labels.begin());
        if (v.sizes[p] != t.dim(d)) return ctx.invalid("a repeated label has different sizes within input " + std::to_string(i));
        v.strides[p] += strides[d];  // diagonal
      }
    }
    // Keep the labels anybody else needs; sum the rest now.
    std::vector<int> keep_labels;
    for (int l : v.labels) {
      bool needed = std::find(eq.output.begin(), eq.output.end(), l) != eq.output.end();
      for (size_t j = 0; j < ins.size() && !needed; ++j)
        if (j != i && std::find(eq.inputs[j].begin(), eq.inputs[j].end(), l) != eq.inputs[j].end()) needed = true;
      if (needed) keep_labels.push_back(l);
    }
    // Sizes here are this operand's own (a size-1 broadcast dim stays 1).
    std::vector<int64_t> own_size = label_size;
    for (size_t p = 0; p < v.labels.size(); ++p) own_size[v.labels[p]] = v.sizes[p];
    ops.push_back(rearrange(v, keep_labels, own_size));
  }
  Operand<C> acc = std::move(ops[0]);
  for (size_t i = 1; i < ops.size(); ++i) {
    std::vector<bool> keep(label_size.size(), false);
    for (int l : eq.output) keep[l] = true;
    for (size_t j = i + 1; j < ops.size(); ++j)
      for (int l : ops[j].labels) keep[l] = true;
    acc = contract(ctx, acc, ops[i], keep, label_size);
  }
  Operand<C> fin = rearrange(view_of(acc), eq.output, label_size);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, ins[0]->dtype(), fin.sizes));
  T* dst = y->data<T>();
  for (int64_t j = 0; j < y->size(); ++j) dst[j] = static_cast<T>(fin.data[j]);
  return Status::Ok();
}

Status einsum_kernel(KernelContext& ctx) {
  if (!ctx.node().has_attr("equation")) return ctx.invalid("attribute 'equation' is required");
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    DLRT_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
    if (t->dtype() != ctx.input(0)->dtype()) return ctx.invalid("all inputs must have the same dtype");
    ins.push_back(t);
  }
  if (ins.empty()) return ctx.invalid("Einsum needs at least one input");
  DLRT_ASSIGN_OR_RETURN(Equation eq, parse_equation(ctx.node().attr_string("equation", ""), ins, ctx));
  Status s = dispatch_numeric(ins[0]->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return einsum_typed<T>(ctx, ins, eq);
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

}  // namespace

Status register_einsum_kernels(KernelRegistry& r) { return r.add_fn("Einsum", einsum_kernel, 12); }

}  // namespace dlrt::cpu
