// Data movement: one strided N-d copy (Transpose, Slice, Concat, Expand,
// Split) per element size, and Gather.

// g.s[0] = source strides, g.s[1] = destination strides (element units).
#define DEFINE_COPY_ND(T, SUFFIX)                                                                   \
  __kernel void copy_nd_##SUFFIX(__global const T* x, int xoff, __global T* y, int yoff, geo_t g) { \
    int i = get_global_id(0);                                                                       \
    if (i >= g.n) return;                                                                           \
    y[yoff + geo_offset(g, i, 1)] = x[xoff + geo_offset(g, i, 0)];                                 \
  }
DEFINE_COPY_ND(uchar, 1)
DEFINE_COPY_ND(uint, 4)
DEFINE_COPY_ND(ulong, 8)

// y[o, j, i] = x[o, idx[j], i]; out-of-range indices (after adding axis_len
// to negatives) give 0: the host checks constant indices beforehand.
#define DEFINE_GATHER(T, SUFFIX, IT, ISUFFIX)                                                      \
  __kernel void gather_##SUFFIX##_##ISUFFIX(__global const T* x, __global const IT* idx, __global T* y, \
                                           int nidx, int inner, int axis_len, int n) {             \
    int i = get_global_id(0);                                                                       \
    if (i >= n) return;                                                                             \
    int in = i % inner;                                                                             \
    int t = i / inner;                                                                              \
    int j = t % nidx;                                                                               \
    int o = t / nidx;                                                                               \
    long k = (long)idx[j];                                                                          \
    if (k < 0) k += axis_len;                                                                       \
    y[i] = (k >= 0 && k < axis_len) ? x[((long)o * axis_len + k) * inner + in] : (T)0;              \
  }
DEFINE_GATHER(uint, 4, long, i64)
DEFINE_GATHER(uint, 4, int, i32)
DEFINE_GATHER(ulong, 8, long, i64)
DEFINE_GATHER(ulong, 8, int, i32)
