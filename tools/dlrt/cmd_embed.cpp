// dlrt embed: placeholder until the command lands (being written now).
#include <cstdio>

#include "cli_args.h"
#include "commands.h"

namespace dlrt::cli {

int cmd_embed(int argc, char** argv) {
  std::fputs("dlrt embed: error: not implemented in this build yet\n", stderr);
  return kExitRuntimeError;
}

}  // namespace dlrt::cli
