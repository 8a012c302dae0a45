// A host program of the kind that made OpenVINO crash when loaded with
// RTLD_DEEPBIND: it uses <regex> and a locale facet directly, so the linker
// copies the C++ runtime's type information for them into the program.
// Prints which typeinfo it copies (as dlrt sees it), then runs MODEL (static
// float32 inputs, zero-filled) strictly on OpenVINO (OPENVINO_LIB_PATH) and
// prints "run: ok". Driven by RealOpenVino.ProgramThatCopiesTypeinfo.
#include <cstdio>
#include <locale>
#include <map>
#include <regex>
#include <string>

#include "backend/dynamic_library.h"
#include "dlrt/session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  const bool matched = std::regex_match(std::string("aab"), std::regex("a+b"));
  const char upper = std::use_facet<std::ctype<char>>(std::locale()).toupper('x');
  std::printf("regex %d, toupper %c\n", matched ? 1 : 0, upper);
  std::printf("copies typeinfo: %s\n", dlrt::backend::program_copies_cxx_typeinfo().c_str());
  dlrt::SessionOptions options;
  options.device = "openvino";
  options.strict = true;
  auto session = dlrt::Session::create(argv[1], options);
  if (!session.ok()) {
    std::printf("create: %s\n", session.status().to_string().c_str());
    return 1;
  }
  std::map<std::string, dlrt::Tensor> feeds;
  for (const auto& in : (*session)->inputs()) {
    auto t = dlrt::Tensor::allocate(in.dtype, dlrt::Shape(in.shape.begin(), in.shape.end()));
    if (!t.ok()) {
      std::printf("input %s: %s\n", in.name.c_str(), t.status().to_string().c_str());
      return 1;
    }
    feeds[in.name] = *t;
  }
  auto out = (*session)->run(feeds, nullptr);
  std::printf("run: %s\n", out.ok() ? "ok" : out.status().to_string().c_str());
  std::fflush(stdout);
  return out.ok() ? 0 : 1;
}
