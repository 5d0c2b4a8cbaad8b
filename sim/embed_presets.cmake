# Writes OUT: a C++ file holding every PRESET_DIR/*.json as a string (see machine_presets.h).
file(GLOB presets ${PRESET_DIR}/*.json)
list(SORT presets)
set(body "")
foreach(p ${presets})
  get_filename_component(name ${p} NAME_WE)
  file(READ ${p} text)
  string(APPEND body "    {\"${name}\", R\"braid_preset(${text})braid_preset\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from sim/presets/*.json by sim/embed_presets.cmake; do not edit.
#include \"sim/machine_presets.h\"

namespace braid::sim::detail {

const std::vector<MachinePreset>& machinePresets() {
  static const std::vector<MachinePreset> presets = {
${body}  };
  return presets;
}

}  // namespace braid::sim::detail
")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
