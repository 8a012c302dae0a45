// dlrt::Tensor: a typed n-dimensional array, either owning its memory
// (shared, reference counted) or a non-owning view over caller memory.
//
// Thread-safety: a Tensor object is not synchronised; distinct Tensor objects
// that share storage may be read concurrently. Copying a Tensor shares storage
// (like a shared_ptr); use clone() for a deep copy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dlrt/dtype.h"
#include "dlrt/export.h"
#include "dlrt/shape.h"
#include "dlrt/status.h"

namespace dlrt {

// Number of elements of `shape`; an error when a dim is negative or the
// product overflows int64.
DLRT_API Result<int64_t> checked_element_count(std::span<const int64_t> shape);
// Product of dims without checks (for shapes already validated).
DLRT_API int64_t element_count(std::span<const int64_t> shape);
// "[1, 3, 224, 224]"
DLRT_API std::string shape_to_string(std::span<const int64_t> shape);

class DLRT_API Tensor {
 public:
  // An empty tensor: dtype kUndefined, no storage. valid() is false.
  Tensor() = default;

  // Allocates zero-initialised, 64-byte aligned storage. Fails on negative
  // dims, overflow or an undefined dtype.
  static Result<Tensor> allocate(DType dtype, Shape shape);
  // Same, but numeric storage is left uninitialised: for a producer that
  // writes every element (strings are still default-constructed).
  static Result<Tensor> allocate_uninitialized(DType dtype, Shape shape);
  // A view over `data`, which the caller keeps alive and unchanged in size for
  // the lifetime of the view and of every copy of it.
  static Tensor view(DType dtype, Shape shape, void* data);
  // A tensor over `data` (at least 16-byte aligned, sized for `shape`), kept
  // alive by `owner`, which every copy of the tensor shares: a buffer the
  // caller hands over without a copy.
  static Tensor adopt(DType dtype, Shape shape, std::shared_ptr<void> owner, void* data);
  // Copies a host vector into a new tensor (convenient in tests and tools).
  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values);
  // A 0-d tensor holding one value.
  template <typename T>
  static Tensor scalar(T value) { return from_vector<T>({}, std::vector<T>{value}); }

  bool valid() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t dim(size_t i) const { return shape_[i]; }
  int64_t size() const { return size_; }  // element count
  size_t nbytes() const { return static_cast<size_t>(size_) * dtype_size(dtype_); }
  bool is_view() const { return owner_ == nullptr && data_ != nullptr; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T> T* data() { return static_cast<T*>(data_); }
  template <typename T> const T* data() const { return static_cast<const T*>(data_); }

  // Same storage, new shape of the same element count.
  Result<Tensor> reshaped(Shape shape) const;
  // Deep copy into freshly allocated storage.
  Result<Tensor> clone() const;
  // Copies elements from `src` (same dtype and element count) into this tensor.
  Status copy_from(const Tensor& src);

 private:
  static Result<Tensor> allocate_storage(DType dtype, Shape shape, bool zero);

  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t size_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;  // null for views
};

template <typename T>
Tensor Tensor::from_vector(Shape shape, const std::vector<T>& values) {
  auto r = allocate(dtype_of<T>, std::move(shape));
  if (!r.ok()) return Tensor();
  Tensor t = std::move(r).value();
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.size() && i < static_cast<int64_t>(values.size()); ++i) p[i] = values[i];
  return t;
}

}  // namespace dlrt
