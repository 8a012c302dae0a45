// The dlrt commands. Each takes the whole argv (argv[1] is the command name)
// and returns the process exit code (cli_args.h ExitCode).
#pragma once

namespace dlrt::cli {

int cmd_run(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_conformance(int argc, char** argv);
int cmd_devices(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_compile(int argc, char** argv);
int cmd_embed(int argc, char** argv);
int cmd_rerank(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_canary(int argc, char** argv);

}  // namespace dlrt::cli
