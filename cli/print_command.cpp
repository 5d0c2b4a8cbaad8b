// `braid print FILE`: parse a host program (any nvFuser printer generation) and print it in
// today's form, in another generation's (--dialect), or as JSON (--json).
#include <iostream>

#include "cli/command.h"
#include "ir/host_ir_text.h"

namespace braid::cli {
namespace {

struct PrintArgs {
  std::string file;
  bool json = false;
  bool modern = false;
  std::string dialect = "today";
};

BRAID_REGISTER_COMMAND(Command{
    "print",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<PrintArgs>();
      sub.add_option("file", args->file, "host IR file (nvFuser NVFUSER_DUMP=host_ir format, any generation)")
          ->required();
      sub.add_flag("--json", args->json, "dump the program's structure as JSON");
      sub.add_option("--dialect", args->dialect,
                     "printer generation to write: today (default), to-stream (December 2024 to January 2026) or "
                     "oldest (July to November 2024)")
          ->check(CLI::IsMember({"today", "to-stream", "oldest"}));
      sub.add_flag("--modern", args->modern, "same as --dialect=today (kept for older scripts)");
      return [args] {
        HostProgram p = parseHostProgramFile(args->file);
        if (args->json) {
          std::cout << toJson(p) << "\n";
        } else {
          PrintOptions o;
          o.dialect = args->modern ? HostIrDialect::kModern : *parseDialectName(args->dialect);
          std::cout << print(p, o);
        }
        return 0;
      };
    },
    "parse a host IR file and print it canonically"});

}  // namespace
}  // namespace braid::cli
