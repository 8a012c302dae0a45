// dlrt: command-line front end of the dlrt runtime.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "core/env.h"
#include "dlrt/dlrt.h"

namespace {

constexpr const char* kUsage =
    "usage: dlrt COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  run MODEL          run a model once; print outputs, where each part ran and timings\n"
    "  inspect MODEL      inputs, outputs, opsets, op histogram, parameter count and bytes\n"
    "  conformance DIR... run ONNX backend-test cases and compare with their expected outputs\n"
    "  devices            hardware found, backends (available or why not) and their devices\n"
    "  bench MODEL        latency, throughput, session-create time and peak memory\n"
    "  compile MODEL      compile partitions ahead of time into a model with embedded blobs\n"
    "  embed --model DIR  sentence embeddings of texts with a sentence-transformers folder\n"
    "  rerank --model DIR documents scored against a query by a reranker folder, best first\n"
    "  serve --model DIR  embedding server (OpenAI-compatible /v1/embeddings)\n"
    "  canary BACKEND     check the backend's vendor runtime against dlrt's CPU backend\n"
    "\n"
    "'dlrt COMMAND --help' describes a command's options. Every command also takes\n"
    "--config FILE: a TOML file with device, strict, threads, cache_dir, cpu_precision and\n"
    "max_tensor_mb (default ~/.config/dlrt/config.toml; flags override environment variables,\n"
    "which override it).\n"
    "\n"
    "exit codes: 0 ok, 1 runtime error, 2 usage error, 3 invalid or unsupported model,\n"
    "            4 requested device unavailable in strict mode\n"
    "\n"
    "dlrt --version prints the version; dlrt --help-env lists the environment variables\n"
    "(--markdown: as the table in docs/environment.md).\n";

}  // namespace

namespace {
int dispatch(int argc, char** argv) {
  using namespace dlrt::cli;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "--help-env") {
    const bool markdown = argc > 2 && std::strcmp(argv[2], "--markdown") == 0;
    const std::string text = markdown ? dlrt::env::markdown_table() : dlrt::env::help_text();
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  if (cmd == "--version" || cmd == "version") {
    std::printf("dlrt %s\n", dlrt::version());
    return kExitOk;
  }
  if (cmd == "run") return cmd_run(argc, argv);
  if (cmd == "inspect") return cmd_inspect(argc, argv);
  if (cmd == "conformance") return cmd_conformance(argc, argv);
  if (cmd == "devices") return cmd_devices(argc, argv);
  if (cmd == "bench") return cmd_bench(argc, argv);
  if (cmd == "compile") return cmd_compile(argc, argv);
  if (cmd == "embed") return cmd_embed(argc, argv);
  if (cmd == "rerank") return cmd_rerank(argc, argv);
  if (cmd == "serve") return cmd_serve(argc, argv);
  if (cmd == "canary") return cmd_canary(argc, argv);
  std::fprintf(stderr, "dlrt: error: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
  return kExitUsage;
}
}  // namespace

// An allocation that nothing below caught (the commands turn the ones they
// expect into OutOfMemory errors) still ends as a runtime error, not an abort.
int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc& e) {
    std::fprintf(stderr, "dlrt: error: out of memory (%s); raise the process's memory limit or use smaller inputs\n",
                 e.what());
    return dlrt::cli::kExitRuntimeError;
  }
}
