// Object-detection helpers: NonMaxSuppression and RoiAlign.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {
namespace {

template <typename T>
inline double as_double(const T& v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return static_cast<float>(v);
}

Result<std::vector<double>> read_floats(const Tensor& t, const KernelContext& ctx, const char* what) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  Status s = dispatch_float(t.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t.size(); ++i) v[i] = as_double(t.data<T>()[i]);
    return Status::Ok();
  });
  if (!s.ok()) return ctx.invalid(std::string(what) + ": " + s.message());
  return v;
}

// ---- NonMaxSuppression ----

struct Box {
  double y1, x1, y2, x2;  // normalised so y1 <= y2, x1 <= x2
};

Box make_box(const double* b, bool center) {
  if (center) {
    const double xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// True when the boxes overlap by more than `threshold` (intersection over union).
bool suppresses(const Box& a, const Box& b, double threshold) {
  const double area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
  const double area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return false;
  const double iy1 = std::max(a.y1, b.y1), ix1 = std::max(a.x1, b.x1);
  const double iy2 = std::min(a.y2, b.y2), ix2 = std::min(a.x2, b.x2);
  if (iy2 <= iy1 || ix2 <= ix1) return false;
  const double inter = (iy2 - iy1) * (ix2 - ix1);
  const double uni = area_a + area_b - inter;
  return uni > 0 && inter / uni > threshold;
}

Status nms_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* boxes_t, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scores_t, required_input(ctx, 1));
  if (boxes_t->rank() != 3 || boxes_t->dim(2) != 4)
    return ctx.invalid("boxes must have shape [num_batches, spatial_dimension, 4], got " + shape_to_string(boxes_t->shape()));
  if (scores_t->rank() != 3 || scores_t->dim(0) != boxes_t->dim(0) || scores_t->dim(2) != boxes_t->dim(1))
    return ctx.invalid("scores shape " + shape_to_string(scores_t->shape()) + " does not match boxes shape " + shape_to_string(boxes_t->shape()));
  int64_t max_out = 0;
  if (const Tensor* t = ctx.input(2); t && t->size() > 0) {
    DLRT_ASSIGN_OR_RETURN(auto v, read_int_tensor(*t, ctx));
    max_out = v[0];
  }
  double iou_threshold = 0;
  if (const Tensor* t = ctx.input(3); t && t->size() > 0) {
    DLRT_ASSIGN_OR_RETURN(auto v, read_floats(*t, ctx, "iou_threshold"));
    iou_threshold = v[0];
  }
  bool has_score_threshold = false;
  double score_threshold = 0;
  if (const Tensor* t = ctx.input(4); t && t->size() > 0) {
    DLRT_ASSIGN_OR_RETURN(auto v, read_floats(*t, ctx, "score_threshold"));
    score_threshold = v[0];
    has_score_threshold = true;
  }
  const int64_t center = ctx.node().attr_int("center_point_box", 0);
  if (center != 0 && center != 1) return ctx.invalid("center_point_box must be 0 or 1");
  DLRT_ASSIGN_OR_RETURN(auto boxes, read_floats(*boxes_t, ctx, "boxes"));
  DLRT_ASSIGN_OR_RETURN(auto scores, read_floats(*scores_t, ctx, "scores"));
  const int64_t B = boxes_t->dim(0), S = boxes_t->dim(1), K = scores_t->dim(1);
  std::vector<int64_t> selected;  // triples
  if (max_out > 0) {
    std::vector<Box> bx(static_cast<size_t>(S));
    std::vector<int64_t> cand, keep;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t s = 0; s < S; ++s) bx[s] = make_box(&boxes[(b * S + s) * 4], center == 1);
      for (int64_t k = 0; k < K; ++k) {
        const double* sc = &scores[(b * K + k) * S];
        cand.clear();
        for (int64_t s = 0; s < S; ++s)
          if (!std::isnan(sc[s]) && (!has_score_threshold || sc[s] > score_threshold)) cand.push_back(s);
        std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) { return sc[p] > sc[q]; });
        keep.clear();
        for (int64_t s : cand) {
          if (static_cast<int64_t>(keep.size()) >= max_out) break;
          bool drop = false;
          for (int64_t kept : keep)
            if (suppresses(bx[kept], bx[s], iou_threshold)) { drop = true; break; }
          if (!drop) keep.push_back(s);
        }
        for (int64_t s : keep) selected.insert(selected.end(), {b, k, s});
      }
    }
  }
  const int64_t n = static_cast<int64_t>(selected.size() / 3);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {n, 3}));
  std::copy(selected.begin(), selected.end(), y->data<int64_t>());
  return Status::Ok();
}

// ---- RoiAlign ----

struct Sample {
  int64_t pos[4];
  double w[4];
};

Status roi_align_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* rois_t, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* bi_t, required_input(ctx, 2));
  const auto& node = ctx.node();
  if (x->rank() != 4) return ctx.invalid("X must have shape [N, C, H, W], got " + shape_to_string(x->shape()));
  if (rois_t->rank() != 2 || rois_t->dim(1) != 4) return ctx.invalid("rois must have shape [num_rois, 4], got " + shape_to_string(rois_t->shape()));
  if (bi_t->rank() != 1 || bi_t->dim(0) != rois_t->dim(0)) return ctx.invalid("batch_indices must have shape [num_rois]");
  const std::string mode = node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.invalid("mode must be 'avg' or 'max', got '" + mode + "'");
  const bool is_max = mode == "max";
  const int64_t oh = node.attr_int("output_height", 1), ow = node.attr_int("output_width", 1);
  const int64_t sampling = node.attr_int("sampling_ratio", 0);
  const double spatial_scale = node.attr_float("spatial_scale", 1.0f);
  if (oh <= 0 || ow <= 0) return ctx.invalid("output_height and output_width must be positive");
  if (sampling < 0) return ctx.invalid("sampling_ratio must be >= 0");
  std::string ctm = ctx.opset() >= 16 ? node.attr_string("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (ctm != "half_pixel" && ctm != "output_half_pixel") return ctx.invalid("unsupported coordinate_transformation_mode '" + ctm + "'");
  const bool half_pixel = ctm == "half_pixel";
  DLRT_ASSIGN_OR_RETURN(auto rois, read_floats(*rois_t, ctx, "rois"));
  DLRT_ASSIGN_OR_RETURN(auto bidx, read_int_tensor(*bi_t, ctx));
  const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3), R = rois_t->dim(0);
  for (int64_t r = 0; r < R; ++r)
    if (bidx[r] < 0 || bidx[r] >= N) return ctx.invalid("batch index " + std::to_string(bidx[r]) + " is out of range [0, " + std::to_string(N) + ")");
  for (double v : rois)
    if (!std::isfinite(v) || std::fabs(v) > 1e9) return ctx.invalid("rois must be finite coordinates");
  if ((H == 0 || W == 0) && R > 0 && C > 0) return ctx.invalid("X has an empty spatial dimension");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), {R, C, oh, ow}));
  if (y->size() == 0) return Status::Ok();
  Status s = dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* src = x->data<T>();
    T* dst = y->data<T>();
    ctx.pool().parallel_for(R, 1, [&](int64_t rb, int64_t re) {
      std::vector<Sample> samples;
      for (int64_t r = rb; r < re; ++r) {
        const double offset = half_pixel ? 0.5 : 0.0;
        const double* roi = &rois[r * 4];
        const double sw = roi[0] * spatial_scale - offset, sh = roi[1] * spatial_scale - offset;
        const double ew = roi[2] * spatial_scale - offset, eh = roi[3] * spatial_scale - offset;
        double rw = ew - sw, rh = eh - sh;
        if (!half_pixel) {
          rw = std::max(rw, 1.0);
          rh = std::max(rh, 1.0);
        }
        const double bin_h = rh / static_cast<double>(oh), bin_w = rw / static_cast<double>(ow);
        const int64_t gh = sampling > 0 ? sampling : static_cast<int64_t>(std::min(std::ceil(rh / static_cast<double>(oh)), 1e6));
        const int64_t gw = sampling > 0 ? sampling : static_cast<int64_t>(std::min(std::ceil(rw / static_cast<double>(ow)), 1e6));
        const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
        // Bilinear taps of every sample point, shared by all channels.
        samples.clear();
        for (int64_t ph = 0; ph < oh; ++ph)
          for (int64_t pw = 0; pw < ow; ++pw)
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix) {
                double yy = sh + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(gh);
                double xx = sw + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(gw);
                Sample smp{};
                if (yy < -1.0 || yy > H || xx < -1.0 || xx > W) {
                  samples.push_back(smp);
                  continue;
                }
                yy = std::max(yy, 0.0);
                xx = std::max(xx, 0.0);
                int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh, xh;
                if (yl >= H - 1) { yh = yl = H - 1; yy = static_cast<double>(yl); } else yh = yl + 1;
                if (xl >= W - 1) { xh = xl = W - 1; xx = static_cast<double>(xl); } else xh = xl + 1;
                const double ly = yy - yl, lx = xx - xl, hy = 1 - ly, hx = 1 - lx;
                smp.pos[0] = yl * W + xl; smp.pos[1] = yl * W + xh; smp.pos[2] = yh * W + xl; smp.pos[3] = yh * W + xh;
                smp.w[0] = hy * hx; smp.w[1] = hy * lx; smp.w[2] = ly * hx; smp.w[3] = ly * lx;
                samples.push_back(smp);
              }
        const int64_t per_bin = gh * gw;
        for (int64_t c = 0; c < C; ++c) {
          const T* img = src + (bidx[r] * C + c) * H * W;
          T* out = dst + (r * C + c) * oh * ow;
          for (int64_t b = 0; b < oh * ow; ++b) {
            double acc = 0;
            bool first = true;
            for (int64_t k = 0; k < per_bin; ++k) {
              const Sample& sm = samples[b * per_bin + k];
              if (is_max) {
                // Max of the weighted taps, as the reference implementation does.
                double v = sm.w[0] * as_double(img[sm.pos[0]]);
                for (int q = 1; q < 4; ++q) v = std::max(v, sm.w[q] * as_double(img[sm.pos[q]]));
                acc = first ? v : std::max(acc, v);
                first = false;
              } else {
                for (int q = 0; q < 4; ++q) acc += sm.w[q] * as_double(img[sm.pos[q]]);
              }
            }
            const double v = is_max ? acc : acc / count;
            if constexpr (std::is_same_v<T, double>) out[b] = v;
            else out[b] = T(static_cast<float>(v));
          }
        }
      }
    });
    return Status::Ok();
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

}  // namespace

Status register_detection_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("NonMaxSuppression", nms_kernel, 10));
  DLRT_RETURN_IF_ERROR(r.add_fn("RoiAlign", roi_align_kernel, 10));
  return Status::Ok();
}

}  // namespace dlrt::cpu
