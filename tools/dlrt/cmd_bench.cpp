// dlrt bench: placeholder until the command lands (being written now).
#include <cstdio>

#include "cli_args.h"
#include "commands.h"

namespace dlrt::cli {

int cmd_bench(int argc, char** argv) {
  std::fputs("dlrt bench: error: not implemented in this build yet\n", stderr);
  return kExitRuntimeError;
}

}  // namespace dlrt::cli
