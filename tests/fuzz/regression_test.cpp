// Replays every input fuzzing found (tests/fuzz/inputs/TARGET/*) through the check its target
// runs (fuzz/checks/checks.h), in the ordinary test build: none may crash, trip a sanitizer in
// the sanitized build, throw anything but braid's Error, or break a round trip. The seed files
// the fuzzers start from are replayed too, so a check that rejects valid input fails here first.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/checks/checks.h"

namespace braid::fuzz {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::vector<fs::path> filesUnder(const fs::path& dir, const std::string& extension = "") {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && (extension.empty() || e.path().extension() == extension)) out.push_back(e.path());
  return out;
}

const fs::path kInputs = fs::path(BRAID_TEST_DATA_DIR) / "fuzz" / "inputs";
const fs::path kSource = fs::path(BRAID_SOURCE_DIR);

void replay(const std::vector<fs::path>& files, const std::function<void(std::string_view)>& check) {
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    std::string text = slurp(f);
    EXPECT_NO_THROW(check(text));
  }
}

TEST(FuzzRegression, HostIrParserInputs) { replay(filesUnder(kInputs / "host_ir_parser"), checkHostIrParser); }
TEST(FuzzRegression, ScalarParserInputs) { replay(filesUnder(kInputs / "scalar_parser"), checkScalarParser); }
TEST(FuzzRegression, VerifyInputs) { replay(filesUnder(kInputs / "verify"), checkVerify); }
TEST(FuzzRegression, MachineJsonInputs) { replay(filesUnder(kInputs / "machine_json"), checkMachineJson); }
TEST(FuzzRegression, TimelineJsonInputs) { replay(filesUnder(kInputs / "timeline_json"), checkTimelineJson); }
TEST(FuzzRegression, MeasurementsJsonInputs) { replay(filesUnder(kInputs / "measurements_json"), checkMeasurementsJson); }

TEST(FuzzRegression, SeedsPassEveryCheck) {
  std::vector<fs::path> hir = filesUnder(kSource / "examples", ".hir");
  ASSERT_FALSE(hir.empty());
  replay(hir, checkHostIrParser);
  replay(hir, checkVerify);
  std::vector<fs::path> machines = filesUnder(kSource / "sim" / "presets", ".json");
  ASSERT_FALSE(machines.empty());
  replay(machines, checkMachineJson);
  replay(filesUnder(kSource / "tests" / "viz" / "data", ".json"), checkTimelineJson);
  replay({kSource / "docs" / "data" / "h200x2-2026-11-28" / "callD" / "h200x2.measurements.json"}, checkMeasurementsJson);
  for (const char* e : {"ceilDiv(i0, 4)", "( i0 * ( i2 + 1 ) )", "StreamIdx == rank"}) EXPECT_NO_THROW(checkScalarParser(e));
}

}  // namespace
}  // namespace braid::fuzz
