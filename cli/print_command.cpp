// `braid print FILE`: parse a host program, print it canonically (or as JSON with --json).
#include <iostream>

#include "cli/command.h"
#include "ir/host_ir_text.h"

namespace braid::cli {
namespace {

struct PrintArgs {
  std::string file;
  bool json = false;
  bool modern = false;
};

BRAID_REGISTER_COMMAND(Command{
    "print",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<PrintArgs>();
      sub.add_option("file", args->file, "host IR file (nvFuser NVFUSER_DUMP=host_ir format)")->required();
      sub.add_flag("--json", args->json, "dump the program's structure as JSON");
      sub.add_flag("--modern", args->modern, "print the newer nvFuser dialect");
      return [args] {
        HostProgram p = parseHostProgramFile(args->file);
        if (args->json) {
          std::cout << toJson(p) << "\n";
        } else {
          PrintOptions o;
          o.dialect = args->modern ? HostIrDialect::kModern : HostIrDialect::kLegacy;
          std::cout << print(p, o);
        }
        return 0;
      };
    },
    "parse a host IR file and print it canonically"});

}  // namespace
}  // namespace braid::cli
