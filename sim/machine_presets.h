// The built-in machine presets (sim/presets/*.json, compiled in by sim/embed_presets.cmake).
#pragma once

#include <string>
#include <vector>

namespace braid::sim::detail {

struct MachinePreset {
  std::string name;  // the file's name without .json: "h200"
  std::string json;  // its text
};

const std::vector<MachinePreset>& machinePresets();

}  // namespace braid::sim::detail
