// dlrt._dlrt._quantize_embeddings: the output types of apps/embed (output_type.h)
// for Embedder.encode(precision=...), the same code as dlrt serve's and dlrt embed's.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>

#include <memory>
#include <optional>
#include <vector>

#include "bindings.h"
#include "embed/models/output_type.h"

namespace dlrt::python {
namespace {

using Matrix = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

nb::object quantize(Matrix embeddings, const std::string& precision, std::optional<Matrix> ranges,
                    std::optional<Matrix> calibration) {
  const auto type = embed::output_type_from_name(precision);
  if (!type || *type == embed::OutputType::kFloat32)
    raise_status(InvalidArgument("precision must be int8, uint8, binary or ubinary, got '" + precision + "'"));
  const size_t rows = embeddings.shape(0), dim = embeddings.shape(1);
  embed::QuantizationSource source;
  if (ranges) {
    if (ranges->shape(0) != 2) raise_status(InvalidArgument("ranges must have 2 rows (minimums, maximums)"));
    const float* r = ranges->data();
    const size_t n = ranges->shape(1);
    source.ranges = embed::QuantizationRanges{{r, r + n}, {r + n, r + 2 * n}};
  }
  if (calibration) {
    source.calibration = calibration->data();
    source.calibration_rows = calibration->shape(0);
    if (calibration->shape(1) != dim)
      raise_status(InvalidArgument("calibration_embeddings have " + std::to_string(calibration->shape(1)) +
                                   " values per row, the embeddings " + std::to_string(dim)));
  }
  auto bytes = std::make_unique<std::vector<uint8_t>>();
  if (std::string e = embed::quantize_rows(embeddings.data(), rows, dim, *type, source, bytes.get()); !e.empty())
    raise_status(InvalidArgument(e));
  const size_t cols = embed::quantized_bytes(*type, dim);
  uint8_t* data = bytes->data();
  nb::capsule owner(bytes.release(), [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
  if (embed::is_signed(*type))
    return nb::ndarray<nb::numpy, int8_t>(reinterpret_cast<int8_t*>(data), {rows, cols}, owner).cast();
  return nb::ndarray<nb::numpy, uint8_t>(data, {rows, cols}, owner).cast();
}

}  // namespace

void bind_quantize(nb::module_& m) {
  m.def("_quantize_embeddings", &quantize, nb::arg("embeddings"), nb::arg("precision"), nb::arg("ranges") = nb::none(),
        nb::arg("calibration_embeddings") = nb::none(),
        "sentence-transformers' quantize_embeddings on float32 [rows, dim] embeddings (docs/embed-output-types.md).");
}

}  // namespace dlrt::python
