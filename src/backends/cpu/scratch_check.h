// The memory check of a CPU kernel's scratch buffers: what outputs get from
// KernelContext::allocate_output (the tensor limit, core/memory_limit.h), for
// buffers sized by attributes and input values (a sequence length given as a
// number, a mask of S x T) rather than by the inputs' own sizes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "backends/cpu/kernel.h"
#include "core/memory_limit.h"

namespace dlrt::cpu {

// Ok when a buffer of the product of `dims` elements of `elem_bytes` each is
// within the tensor limit; kOutOfMemory when it is over it or the product
// overflows 64 bits, kInvalidArgument for a negative count. `what` names the
// buffer in the message.
inline Status check_scratch(const KernelContext& ctx, std::initializer_list<int64_t> dims, uint64_t elem_bytes,
                            const char* what) {
  uint64_t bytes = elem_bytes;
  for (int64_t d : dims) {
    if (d < 0) return ctx.invalid(std::string(what) + ": a negative size");
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      return ctx.error(StatusCode::kOutOfMemory, std::string(what) + " would need more than 2^64 bytes");
  }
  if (bytes <= max_tensor_bytes()) return Status::Ok();
  return check_tensor_bytes(bytes, ctx.node().describe() + ": " + what);
}

}  // namespace dlrt::cpu
