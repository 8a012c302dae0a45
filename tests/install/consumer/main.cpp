// A program built outside dlrt's tree against an installed dlrt (CMake
// package or pkg-config): runs MODEL on zeros and prints what it got.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "dlrt/dlrt.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer MODEL\n");
    return 2;
  }
  if (std::string(dlrt::version()) != DLRT_VERSION_STRING) {
    std::fprintf(stderr, "library %s, headers %s\n", dlrt::version(), DLRT_VERSION_STRING);
    return 1;
  }
  auto session = dlrt::Session::create(argv[1]);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().to_string().c_str());
    return 1;
  }
  std::map<std::string, dlrt::Tensor> feeds;
  for (const dlrt::TensorInfo& in : (*session)->inputs()) {
    std::vector<int64_t> shape = in.shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;  // dynamic dims: 1
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (in.dtype != dlrt::DType::kFloat32) {
      std::fprintf(stderr, "input %s is not float32\n", in.name.c_str());
      return 1;
    }
    feeds.emplace(in.name, dlrt::Tensor::from_vector<float>(shape, std::vector<float>(static_cast<size_t>(n), 0.0f)));
  }
  dlrt::RunReport report;
  auto outputs = (*session)->run(feeds, &report);
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", outputs.status().to_string().c_str());
    return 1;
  }
  std::printf("dlrt %s: %zu outputs, first has %lld values, ran on %s\n", dlrt::version(), outputs->size(),
              static_cast<long long>((*outputs)[0].size()), report.partitions.at(0).device.c_str());
  return 0;
}
