#include "exec/output_recycler.h"

#include "core/large_alloc.h"

namespace dlrt {

std::shared_ptr<void> OutputRecycler::take(size_t index, size_t bytes, bool* reused) {
  *reused = false;
  bytes = (bytes + 63) / 64 * 64;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (index < slots_.size()) {
      Slot& s = slots_[index];
      // use_count() == 1: only this slot refers to the buffer, and a new
      // reference can only come from here, under mu_.
      if (s.owner && s.bytes == bytes && s.owner.use_count() == 1) {
        *reused = true;
        return s.owner;
      }
    }
  }
  void* p = buffer_alloc(bytes, true);
  if (!p) return nullptr;
  std::shared_ptr<void> owner(p, [bytes](void* q) { buffer_free(q, bytes); });
  std::lock_guard<std::mutex> lk(mu_);
  if (index >= slots_.size()) slots_.resize(index + 1);
  slots_[index] = Slot{owner, bytes};  // the buffer it held (if any) lives on with its tensor's last copy
  return owner;
}

}  // namespace dlrt
