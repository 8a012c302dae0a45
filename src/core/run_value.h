// What a graph value holds while a model runs: a tensor (almost always), a
// sequence of tensors, or an empty optional.
#pragma once

#include <vector>

#include "dlrt/tensor.h"

namespace dlrt {

struct RunValue {
  enum class Kind { kNone, kTensor, kSequence, kOptionalNone };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  DType elem_dtype = DType::kUndefined;  // for empty sequences and optionals

  static RunValue of(Tensor t) {
    RunValue v;
    v.kind = Kind::kTensor;
    v.elem_dtype = t.dtype();
    v.tensor = std::move(t);
    return v;
  }
  static RunValue of_sequence(std::vector<Tensor> s, DType elem) {
    RunValue v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(s);
    v.elem_dtype = elem;
    return v;
  }
  static RunValue optional_none(DType elem) {
    RunValue v;
    v.kind = Kind::kOptionalNone;
    v.elem_dtype = elem;
    return v;
  }
  bool present() const { return kind == Kind::kTensor || kind == Kind::kSequence; }
};

}  // namespace dlrt
