#include "ir/conv_taps.h"

#include <cmath>
#include <cstring>

#include "core/tensor_values.h"

namespace dlrt::ir {

std::optional<Tensor> crop_conv_taps(const Tensor& w, const std::vector<ConvTapCut>& cuts) {
  const int64_t nd = static_cast<int64_t>(cuts.size());
  if (w.rank() != nd + 2 || w.size() == 0) return std::nullopt;
  Shape shape = w.shape();
  for (int64_t i = 0; i < nd; ++i) shape[2 + i] = w.dim(2 + i) - cuts[i].lead - cuts[i].trail;
  auto alloc = Tensor::allocate_uninitialized(w.dtype(), shape);
  if (!alloc.ok()) return std::nullopt;
  Tensor out = std::move(alloc).value();
  const size_t es = dtype_size(w.dtype());
  const auto* src = static_cast<const unsigned char*>(w.raw_data());
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  // Spatial index of flat element e within one [k...] block of W.
  const int64_t block = w.size() / (w.dim(0) * w.dim(1));
  int64_t written = 0;
  for (int64_t e = 0; e < w.size(); ++e) {
    int64_t rest = e % block;
    bool kept = true;
    for (int64_t i = nd - 1; i >= 0; --i) {
      const int64_t k = rest % w.dim(2 + i);
      rest /= w.dim(2 + i);
      if (k < cuts[i].lead || k >= w.dim(2 + i) - cuts[i].trail) kept = false;
    }
    if (kept) {
      std::memcpy(dst + written * es, src + e * es, es);
      ++written;
    } else if (!std::isfinite(element_as_double(w, e))) {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace dlrt::ir
