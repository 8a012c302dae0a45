// A non-owning reference to a callable, for calls that use it only while
// they run (ThreadPool::parallel_for).
//
// std::function copies its target and allocates on the heap when the target
// is bigger than two pointers (any lambda capturing a few locals by
// reference): one allocation per parallel section. FunctionRef stores a
// pointer to the caller's callable and a trampoline instead.
//
// Lifetime: the callable must outlive every call through the reference; a
// temporary lambda passed as an argument lives to the end of the call.
// Thread-safety: calling it from several threads at once is as safe as
// calling the referenced callable so.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace dlrt {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_object_v<std::remove_reference_t<F>> &&
             std::is_invocable_r_v<R, std::remove_reference_t<F>&, Args...>)
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): converts like std::function
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_(&call<std::remove_reference_t<F>>) {}

  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  template <typename F>
  static R call(void* obj, Args... args) {
    return (*static_cast<F*>(obj))(std::forward<Args>(args)...);
  }

  void* obj_;
  R (*call_)(void*, Args...);
};

}  // namespace dlrt
