// The `selftest` harness of dlrt_fuzz_smoke (not a libFuzzer harness): it fails
// on purpose on the inputs that ask for it, so that tests/fuzz/smoke_test.sh can
// check that the driver reports each failure: an input starting with "abort",
// "segv", "throw" or "hang" aborts, crashes, throws out of the harness or never
// returns; one starting with "find" aborts when it holds a 0xff byte, which the
// seeded mutations must reach.
#include <signal.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view s(reinterpret_cast<const char*>(data), size);
  if (s.starts_with("abort")) std::abort();
  if (s.starts_with("segv")) raise(SIGSEGV);
  if (s.starts_with("throw")) throw std::runtime_error("thrown out of the harness");
  if (s.starts_with("hang"))
    for (;;) pause();
  if (s.starts_with("find") && s.find('\xff') != std::string_view::npos) std::abort();
  return 0;
}
