// Finding and loading the run module (see exec_module.h). It is looked for, in order:
//   $BRAID_EXEC_MODULE (only there when set);
//   next to the `braid` executable (the build tree);
//   BRAID_EXEC_MODULE_INSTALL_DIR, relative to the executable's folder (the install layout,
//   ../lib/braid/ by default).
#include "cli/exec_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/error.h"

#ifndef BRAID_VERSION
#define BRAID_VERSION "0.0.0"
#endif

namespace braid::cli {

#ifndef BRAID_EXEC_MODULE_NAME

int runInExecModule(const RunConfig&) { throw Error(kBuiltWithoutTorchMessage); }
int measureInExecModule(const MeasureConfig&) {
  throw Error("braid was built without libtorch: `braid calibrate --measure` is not available (install "
              "libtorch-dev, or point CMAKE_PREFIX_PATH at an installed PyTorch, and reconfigure)");
}

#else

namespace {

std::vector<std::string> candidatePaths() {
  if (const char* path = std::getenv(kExecModuleEnv); path && *path) return {path};
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  fs::path install_dir = BRAID_EXEC_MODULE_INSTALL_DIR;
  if (install_dir.is_relative()) install_dir = dir / install_dir;
  return {(dir / BRAID_EXEC_MODULE_NAME).string(), (install_dir / BRAID_EXEC_MODULE_NAME).lexically_normal().string()};
}

}  // namespace

// The module's entry point `name` (the module is loaded once and never unloaded).
static void* moduleEntry(const char* name) {
  std::vector<std::string> paths = candidatePaths();
  const bool overridden = paths.size() == 1;
  std::string looked;
  for (const auto& path : paths) {
    // A module that exists but does not load is reported as such, not skipped for another one.
    if (!overridden && !std::filesystem::exists(path)) {
      looked += (looked.empty() ? "" : ", ") + path;
      continue;
    }
    // Lazy binding, as for a linked library: binding all of libtorch's symbols now costs ~70 ms.
    // (The module is linked with --no-undefined, so its own references are known to resolve.)
    void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      throw Error("cannot load " + path + ", the module that runs programs with libtorch" +
                  (overridden ? std::string(" (from ") + kExecModuleEnv + ")" : std::string()) + ": " +
                  (why ? why : "unknown error"));
    }
    // Never dlclose()d: libtorch does not support being unloaded.
    void* entry = ::dlsym(handle, name);
    if (!entry) {
      const char* why = ::dlerror();
      throw Error(path + " is not braid's run module: " + (why ? why : std::string("no ") + name));
    }
    return entry;
  }
  throw Error(std::string("cannot find " BRAID_EXEC_MODULE_NAME ", the module that runs programs with libtorch; looked "
                          "for ") +
              looked + " (build the braid_exec_cli target, or set " + kExecModuleEnv + " to its path)");
}

int runInExecModule(const RunConfig& config) {
  auto entry = reinterpret_cast<ExecModuleEntry>(moduleEntry(kExecModuleEntry));
  return entry(&config, sizeof config, BRAID_VERSION);
}

int measureInExecModule(const MeasureConfig& config) {
  auto entry = reinterpret_cast<MeasureModuleEntry>(moduleEntry(kMeasureModuleEntry));
  return entry(&config, sizeof config, BRAID_VERSION);
}

#endif  // BRAID_EXEC_MODULE_NAME

}  // namespace braid::cli
