#include "dlrt/tensor.h"

#include "core/large_alloc.h"
#include "core/memory_limit.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace dlrt {

Result<int64_t> checked_element_count(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("negative dimension " + std::to_string(d) + " in shape " + shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return InvalidArgument("element count of shape " + shape_to_string(shape) + " overflows 64 bits");
    n *= d;
  }
  return n;
}

int64_t element_count(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_to_string(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {
constexpr size_t kAlign = 64;

struct StringArray {
  explicit StringArray(size_t n) : items(n) {}
  std::vector<std::string> items;
};
}  // namespace

Result<Tensor> Tensor::allocate(DType dtype, Shape shape) { return allocate_storage(dtype, std::move(shape), true); }

Result<Tensor> Tensor::allocate_uninitialized(DType dtype, Shape shape) {
  return allocate_storage(dtype, std::move(shape), false);
}

Result<Tensor> Tensor::allocate_storage(DType dtype, Shape shape, bool zero) {
  if (dtype == DType::kUndefined || dtype_size(dtype) == 0) return InvalidArgument("cannot allocate a tensor of undefined dtype");
  DLRT_ASSIGN_OR_RETURN(int64_t n, checked_element_count(shape));
  size_t esz = dtype_size(dtype);
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / esz / 2)
    return InvalidArgument("tensor of shape " + shape_to_string(shape) + " is too large to allocate");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.size_ = n;
  if (dtype == DType::kString) {
    auto arr = std::make_shared<StringArray>(static_cast<size_t>(n));
    t.data_ = arr->items.data();
    t.owner_ = std::move(arr);
    return t;
  }
  size_t bytes = static_cast<size_t>(n) * esz;
  if (bytes > max_tensor_bytes())
    return check_tensor_bytes(bytes, "a " + std::string(dtype_name(dtype)) + " tensor of shape " + shape_to_string(t.shape_));
  size_t alloc = (bytes + kAlign - 1) / kAlign * kAlign;
  if (alloc == 0) alloc = kAlign;
  void* p = buffer_alloc(alloc, zero);
  if (!p) return Status(StatusCode::kOutOfMemory, "out of memory allocating " + std::to_string(bytes) + " bytes for a tensor of shape " + shape_to_string(t.shape_));
  t.data_ = p;
  t.owner_ = std::shared_ptr<void>(p, [alloc](void* q) { buffer_free(q, alloc); });
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.size_ = element_count(shape);
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::adopt(DType dtype, Shape shape, std::shared_ptr<void> owner, void* data) {
  Tensor t = view(dtype, std::move(shape), data);
  t.owner_ = std::move(owner);
  return t;
}

Result<Tensor> Tensor::reshaped(Shape shape) const {
  DLRT_ASSIGN_OR_RETURN(int64_t n, checked_element_count(shape));
  if (n != size_)
    return InvalidArgument("cannot reshape " + shape_to_string(shape_) + " (" + std::to_string(size_) +
                           " elements) to " + shape_to_string(shape) + " (" + std::to_string(n) + " elements)");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Result<Tensor> Tensor::clone() const {
  DLRT_ASSIGN_OR_RETURN(Tensor t, allocate(dtype_, shape_));
  DLRT_RETURN_IF_ERROR(t.copy_from(*this));
  return t;
}

Status Tensor::copy_from(const Tensor& src) {
  if (src.dtype_ != dtype_ || src.size_ != size_)
    return InvalidArgument(std::string("copy_from: expected ") + dtype_name(dtype_) + " " + shape_to_string(shape_) +
                           ", got " + dtype_name(src.dtype_) + " " + shape_to_string(src.shape_));
  if (data_ == src.data_) return Status::Ok();
  if (dtype_ == DType::kString) {
    for (int64_t i = 0; i < size_; ++i) data<std::string>()[i] = src.data<std::string>()[i];
  } else if (size_ > 0) {
    std::memmove(data_, src.data_, nbytes());
  }
  return Status::Ok();
}

}  // namespace dlrt
