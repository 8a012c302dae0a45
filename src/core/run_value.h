// What a graph value holds while a model runs: a tensor (almost always), a
// sequence of tensors, an empty optional, or (traditional-ML models) a map or
// a sequence of maps.
#pragma once

#include <vector>

#include "dlrt/tensor.h"

namespace dlrt {

struct RunValue {
  // kMap: map_keys[i] -> map_values[i] (both 1-D, one length).
  // kMapSequence: maps that share their keys, map r being map_keys[i] ->
  // map_values[r, i] (map_values 2-D [maps, keys]); what ZipMap makes.
  enum class Kind { kNone, kTensor, kSequence, kOptionalNone, kMap, kMapSequence };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  Tensor map_keys, map_values;
  DType elem_dtype = DType::kUndefined;  // for empty sequences and optionals; a map's value type

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
  static RunValue of_map(Tensor keys, Tensor values, bool sequence_of_maps) {
    RunValue v;
    v.kind = sequence_of_maps ? Kind::kMapSequence : Kind::kMap;
    v.elem_dtype = values.dtype();
    v.map_keys = std::move(keys);
    v.map_values = std::move(values);
    return v;
  }
  bool present() const { return kind != Kind::kNone && kind != Kind::kOptionalNone; }
};

}  // namespace dlrt
