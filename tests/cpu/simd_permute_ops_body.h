// Body of simd_permute_test.cpp (simd/instantiate.h compiles it once per
// width): each entry applies one permute op of simd.h to arrays.
namespace dlrt::cpu::simd::DLRT_SIMD_NS::permute_ops {

int lanes() { return kLanes; }
bool native() { return kNativePermute; }
void permute_op(const float* v, const int32_t* ix, float* out) { storeu(out, permute(loadu(v), load_index(ix))); }
void permute2_op(const float* ab, const int32_t* ix, float* out) {
  storeu(out, permute2(loadu(ab), loadu(ab + kLanes), load_index(ix)));
}
void lookup4_op(const float* v4, const int32_t* ix, float* out) {
  const Vf v[4] = {loadu(v4), loadu(v4 + kLanes), loadu(v4 + 2 * kLanes), loadu(v4 + 3 * kLanes)};
  storeu(out, lookup4(v, load_index(ix)));
}
void index_ramp_op(int32_t start, int32_t wrap, const float* v4, float* out) {
  const Vf v[4] = {loadu(v4), loadu(v4 + kLanes), loadu(v4 + 2 * kLanes), loadu(v4 + 3 * kLanes)};
  storeu(out, lookup4(v, index_ramp(start, wrap)));
}
void interleave2_op(const float* a, const float* b, float* out) {
  Vf lo, hi;
  interleave2(loadu(a), loadu(b), lo, hi);
  storeu(out, lo);
  storeu(out + kLanes, hi);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS::permute_ops
