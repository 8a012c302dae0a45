// Body of simd_int_test.cpp (simd/instantiate.h compiles it once per width):
// each entry applies the integer-sum operations of simd.h to arrays.
namespace dlrt::cpu::simd::DLRT_SIMD_NS::int_ops {

int lanes() { return kLanes; }
// out[0, kLanes) = the int16 at p[0, n) widened (0 past n), times m, stored as the first n lanes (store_first_i32).
void widen_mul_first(const int16_t* p, int64_t n, int32_t m, int32_t* out) {
  store_first_i32(out, mullo_i32(load_first_i16_i32(p, n), set1_i32(m)), n);
}
// out[0, kLanes) = p[0, kLanes) widened times m, plus c (storeu_i32).
void widen_mul_add(const int16_t* p, int32_t m, const int32_t* c, int32_t* out) {
  storeu_i32(out, add_i32(mullo_i32(load_i16_i32(p), set1_i32(m)), loadu_i32(c)));
}
// out[0, kLanes) = every lane of load_first_i16_i32(p, n), stored whole.
void widen_first_whole(const int16_t* p, int64_t n, int32_t* out) { storeu_i32(out, load_first_i16_i32(p, n)); }

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS::int_ops
