// Machine files: presets, strict reading (every error names the field), round trips.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ir/host_ir.h"
#include "sim/machine.h"
#include "tests/support/error_of.h"

namespace braid {
namespace {

using testing::errorOf;
using json = nlohmann::ordered_json;

TEST(SimMachine, EveryPresetLoadsAndRoundTrips) {
  std::vector<std::string> names = sim::machinePresetNames();
  EXPECT_EQ(names, (std::vector<std::string>{"a100", "b200", "h100", "h200", "h200-datasheet"}));
  for (const auto& n : names) {
    sim::Machine m = sim::loadMachine(n);
    EXPECT_EQ(m.name, n);
    EXPECT_GT(m.gpu.sms, m.nccl.channels * m.nccl.smsPerChannel);
    EXPECT_EQ(sim::machineFromJson(sim::machineToJson(m), "roundtrip.json"), m) << n;
  }
  // h200 is h200-datasheet with what braid calibrate fitted on H200s (the GEMMs and how they fill
  // the SMs, the copy engines, NCCL's collectives, the contention model, the power cap and the host
  // after idle), nothing else: the host costs, copies, links, NICs, peaks and topology stay the
  // datasheet's.
  sim::Machine calibrated = sim::loadMachine("h200"), datasheet = sim::loadMachine("h200-datasheet");
  EXPECT_NE(calibrated.gpu.matmulEfficiency, datasheet.gpu.matmulEfficiency);
  EXPECT_NE(calibrated.copyEngines, datasheet.copyEngines);
  EXPECT_FALSE(calibrated.gpu.measuredGemms.empty());
  datasheet.gpu.matmulEfficiency = calibrated.gpu.matmulEfficiency;
  datasheet.gpu.gemmWaves = calibrated.gpu.gemmWaves;
  datasheet.gpu.gemmLatencyUs = calibrated.gpu.gemmLatencyUs;
  datasheet.gpu.gemmOperands = calibrated.gpu.gemmOperands;
  datasheet.gpu.measuredGemms = calibrated.gpu.measuredGemms;
  EXPECT_TRUE(calibrated.gpu.power.enabled());
  EXPECT_FALSE(datasheet.gpu.power.enabled());
  datasheet.gpu.power = calibrated.gpu.power;
  EXPECT_FALSE(calibrated.host.afterIdle.empty());
  EXPECT_TRUE(datasheet.host.afterIdle.empty());
  datasheet.host.afterIdle = calibrated.host.afterIdle;
  EXPECT_FALSE(calibrated.host.afterIdleGraph.empty());
  datasheet.host.afterIdleGraph = calibrated.host.afterIdleGraph;
  datasheet.copyEngines = calibrated.copyEngines;
  datasheet.nccl = calibrated.nccl;
  datasheet.contention = calibrated.contention;
  datasheet.name = calibrated.name;
  datasheet.description = calibrated.description;
  EXPECT_EQ(datasheet, calibrated);
  // Datasheet facts the presets must keep.
  EXPECT_EQ(sim::loadMachine("h200").gpu.hbmGBps, 4800);
  EXPECT_EQ(sim::loadMachine("h100").gpu.hbmGBps, 3350);
  EXPECT_EQ(sim::loadMachine("a100").gpu.sms, 108);
  EXPECT_EQ(sim::loadMachine("b200").gpu.sms, 148);
}

TEST(SimMachine, ExampleMachineFilesLoad) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(BRAID_SOURCE_DIR) + "/examples/machines")) {
    if (e.path().extension() != ".json") continue;
    sim::Machine m = sim::loadMachine(e.path().string());
    EXPECT_FALSE(m.description.empty()) << e.path();
    ++files;
  }
  EXPECT_GE(files, 1);
}

json h200() { return json::parse(sim::machinePresetJson("h200-datasheet")); }

std::string errorFor(const json& j) {
  return errorOf([&] { sim::machineFromJson(j.dump(), "m.json"); });
}

TEST(SimMachine, AMissingFieldIsNamed) {
  json j = h200();
  j["gpu"].erase("hbm_gbps");
  EXPECT_EQ(errorFor(j), "m.json: gpu.hbm_gbps: missing");
  j = h200();
  j["nccl"]["base_latency_us"]["tree"].erase("LL128");
  EXPECT_EQ(errorFor(j), "m.json: nccl.base_latency_us.tree.LL128: missing");
}

TEST(SimMachine, AnUnknownFieldIsNamed) {
  json j = h200();
  j["gpu"]["hbm_gbs"] = 4800;
  EXPECT_NE(errorFor(j).find("m.json: gpu.hbm_gbs: unknown field"), std::string::npos) << errorFor(j);
  j = h200();
  j["colour"] = "green";
  EXPECT_NE(errorFor(j).find("m.json: colour: unknown field"), std::string::npos) << errorFor(j);
}

TEST(SimMachine, OptionalKindFactorsAndDispatchRuleRoundTrip) {
  json j = h200();
  j["nccl"]["kind_bandwidth_factor"] = {{"Allgather", 0.8}};
  j["contention"]["comm_waits_for_dispatch"] = true;
  sim::Machine m = sim::machineFromJson(j.dump(), "m.json");
  EXPECT_DOUBLE_EQ(m.nccl.kindBandwidthFactor[static_cast<size_t>(CommunicationType::kAllgather)], 0.8);
  EXPECT_DOUBLE_EQ(m.nccl.kindBandwidthFactor[static_cast<size_t>(CommunicationType::kAllreduce)], 1.0);
  EXPECT_TRUE(m.contention.commWaitsForDispatch);
  EXPECT_EQ(sim::machineFromJson(sim::machineToJson(m), "back.json"), m);
  EXPECT_FALSE(sim::machineFromJson(h200().dump(), "m.json").contention.commWaitsForDispatch);  // absent: off
  j["nccl"]["kind_bandwidth_factor"] = {{"Allgathr", 0.8}};
  EXPECT_NE(errorFor(j).find("m.json: nccl.kind_bandwidth_factor.Allgathr: unknown field"), std::string::npos)
      << errorFor(j);
  j["nccl"]["kind_bandwidth_factor"] = {{"Allgather", 0}};
  EXPECT_NE(errorFor(j).find("m.json: nccl.kind_bandwidth_factor.Allgather"), std::string::npos) << errorFor(j);
}

// gpu.measured_gemms is optional; its entries round-trip, and a repeated shape or a bad time is
// named with its place.
TEST(SimMachine, MeasuredGemmsRoundTripAndBadEntriesAreNamed) {
  json j = h200();
  j["gpu"]["measured_gemms"] = {{{"m", 16384}, {"n", 4096}, {"k", 4096}, {"dtype", "bf16"}, {"us", 776}},
                                {{"m", 2048}, {"n", 4096}, {"k", 4096}, {"batch", 2}, {"dtype", "fp16"}, {"us", 210}}};
  sim::Machine m = sim::machineFromJson(j.dump(), "m.json");
  ASSERT_EQ(m.gpu.measuredGemms.size(), 2u);
  EXPECT_EQ(m.gpu.measuredGemms[1].shape.batch, 2);
  EXPECT_EQ(m.gpu.measuredGemms[1].shape.dtype, DataType::kHalf);
  EXPECT_EQ(sim::machineFromJson(sim::machineToJson(m), "back.json"), m);
  json twice = j;
  twice["gpu"]["measured_gemms"][1] = j["gpu"]["measured_gemms"][0];
  EXPECT_NE(errorFor(twice).find("m.json: gpu.measured_gemms[1]: this shape is listed twice"), std::string::npos)
      << errorFor(twice);
  j["gpu"]["measured_gemms"][0]["us"] = 0;
  EXPECT_NE(errorFor(j).find("m.json: gpu.measured_gemms[0].us"), std::string::npos) << errorFor(j);
  j["gpu"]["measured_gemms"][0]["us"] = 5;
  j["gpu"]["measured_gemms"][0]["dtype"] = "int8";
  EXPECT_NE(errorFor(j).find("gpu.measured_gemms[0].dtype: unknown dtype"), std::string::npos) << errorFor(j);
}

// gpu.gemm_waves and gpu.gemm_latency_us are optional (whole waves, no latency); they
// round-trip, and a bad value is named with its place.
TEST(SimMachine, GemmWavesAndLatencyRoundTripAndBadValuesAreNamed) {
  sim::Machine plain = sim::machineFromJson(h200().dump(), "m.json");
  EXPECT_EQ(plain.gpu.gemmWaves, sim::GemmWaves::kWhole);
  EXPECT_EQ(plain.gpu.gemmLatencyUs, 0);
  json j = h200();
  j["gpu"]["gemm_waves"] = "fractional";
  j["gpu"]["gemm_latency_us"] = 6.5;
  sim::Machine m = sim::machineFromJson(j.dump(), "m.json");
  EXPECT_EQ(m.gpu.gemmWaves, sim::GemmWaves::kFractional);
  EXPECT_DOUBLE_EQ(m.gpu.gemmLatencyUs, 6.5);
  EXPECT_EQ(sim::machineFromJson(sim::machineToJson(m), "back.json"), m);
  j["gpu"]["gemm_waves"] = "partial";
  EXPECT_EQ(errorFor(j), "m.json: gpu.gemm_waves: unknown wave model \"partial\" (expected one of whole, fractional)");
  j["gpu"]["gemm_waves"] = "whole";
  j["gpu"]["gemm_latency_us"] = -1;
  EXPECT_NE(errorFor(j).find("m.json: gpu.gemm_latency_us"), std::string::npos) << errorFor(j);
}

// gpu.gemm_operands: unset by default (a datasheet), either kind round-trips, another is named.
TEST(SimMachine, GemmOperandsRoundTripAndBadValuesAreNamed) {
  EXPECT_FALSE(sim::machineFromJson(h200().dump(), "m.json").gpu.gemmOperands);
  json j = h200();
  for (auto [name, v] : {std::pair{"integers", InputValues::kIntegers}, std::pair{"normal", InputValues::kNormal}}) {
    j["gpu"]["gemm_operands"] = name;
    sim::Machine m = sim::machineFromJson(j.dump(), "m.json");
    EXPECT_EQ(m.gpu.gemmOperands, v);
    EXPECT_EQ(sim::machineFromJson(sim::machineToJson(m), "back.json"), m);
  }
  j["gpu"]["gemm_operands"] = "ones";
  EXPECT_EQ(errorFor(j),
            "m.json: gpu.gemm_operands: unknown kind of operand values \"ones\" (expected one of integers, normal)");
}

// copy_engines is optional: without it the transport's constants derive from NVLink and HBM.
TEST(SimMachine, CopyEnginesSectionIsOptionalAndRoundTrips) {
  json j = json::parse(sim::machinePresetJson("h200"));
  ASSERT_TRUE(j.contains("copy_engines"));  // measured on two H200s
  j.erase("copy_engines");
  sim::Machine d = sim::machineFromJson(j.dump(), "m.json");
  EXPECT_DOUBLE_EQ(d.copyEngines.bandwidthGBps, 0.82 * d.nvlink.bandwidthGBps);
  EXPECT_DOUBLE_EQ(d.copyEngines.latencyUs, 28);
  EXPECT_DOUBLE_EQ(d.copyEngines.reduceGBps, 0.75 * d.gpu.hbmGBps);
  EXPECT_DOUBLE_EQ(d.copyEngines.hostCallUs, 180);
  EXPECT_EQ(d.copyEngines, sim::defaultCopyEngines(d));
  j["copy_engines"] = {{"bandwidth_gbps", 250}, {"latency_us", 12}, {"reduce_gbps", 2000}};
  sim::Machine m = sim::machineFromJson(j.dump(), "m.json");
  EXPECT_DOUBLE_EQ(m.copyEngines.bandwidthGBps, 250);
  EXPECT_DOUBLE_EQ(m.copyEngines.latencyUs, 12);
  EXPECT_DOUBLE_EQ(m.copyEngines.reduceGBps, 2000);
  EXPECT_DOUBLE_EQ(m.copyEngines.hostCallUs, 180);  // not given: the default
  EXPECT_EQ(sim::machineFromJson(sim::machineToJson(m), "back.json"), m);
  j["copy_engines"]["bandwidth_gbps"] = 0;
  EXPECT_NE(errorFor(j).find("m.json: copy_engines.bandwidth_gbps"), std::string::npos) << errorFor(j);
  j["copy_engines"] = {{"bandwidth_gbps", 250}, {"latency_us", 12}};
  EXPECT_NE(errorFor(j).find("m.json: copy_engines.reduce_gbps: missing"), std::string::npos) << errorFor(j);
}

TEST(SimMachine, WrongTypesAndRangesAreNamed) {
  json j = h200();
  j["gpu"]["sms"] = "many";
  EXPECT_NE(errorFor(j).find("m.json: gpu.sms: expected an integer"), std::string::npos) << errorFor(j);
  j = h200();
  j["contention"]["comm_rate_under_compute"] = 1.5;
  EXPECT_NE(errorFor(j).find("m.json: contention.comm_rate_under_compute: expected a number in (0, 1]"),
            std::string::npos)
      << errorFor(j);
  j = h200();
  j["gpu"]["matmul_efficiency"] = json::array({json::array({1e9, 0.5}), json::array({1e8, 0.6})});
  EXPECT_EQ(errorFor(j), "m.json: gpu.matmul_efficiency[1]: sizes must increase from one point to the next");
  j = h200();
  j["nccl"]["protocols"] = json::array({"LL64"});
  EXPECT_NE(errorFor(j).find("m.json: nccl.protocols[0]: unknown protocol \"LL64\""), std::string::npos)
      << errorFor(j);
  j = h200();
  j["nccl"]["channels"] = 200;
  EXPECT_NE(errorFor(j).find("leave no SM"), std::string::npos) << errorFor(j);
  j = h200();
  j["schema"] = "braid-machine/2";
  EXPECT_NE(errorFor(j).find("m.json: schema: expected \"braid-machine/1\""), std::string::npos);
  EXPECT_NE(errorOf([] { sim::machineFromJson("{", "m.json"); }).find("m.json: not valid JSON"), std::string::npos);
}

TEST(SimMachine, UnknownNamesListThePresets) {
  std::string e = errorOf([] { sim::loadMachine("h300"); });
  EXPECT_NE(e.find("'h300' is neither a preset (a100, b200, h100, h200, h200-datasheet) nor a machine file"), std::string::npos) << e;
}

TEST(SimMachine, EfficiencyCurvesInterpolateInLogSize) {
  sim::EfficiencyCurve c{{{1e6, 0.2}, {1e8, 0.6}}};
  EXPECT_DOUBLE_EQ(c.at(1e3), 0.2);  // clamped
  EXPECT_DOUBLE_EQ(c.at(1e9), 0.6);
  EXPECT_NEAR(c.at(1e7), 0.4, 1e-12);  // halfway in log10
  EXPECT_NEAR(c.at(1e6 * std::sqrt(10.0)), 0.3, 1e-12);
}

TEST(SimMachine, PrecisionsOfDataTypes) {
  EXPECT_EQ(sim::precisionOf(DataType::kBFloat16), sim::Precision::kBf16);
  EXPECT_EQ(sim::precisionOf(DataType::kHalf), sim::Precision::kFp16);
  EXPECT_EQ(sim::precisionOf(DataType::kFloat), sim::Precision::kFp32);
  EXPECT_EQ(sim::precisionOf(DataType::kDouble), sim::Precision::kFp64);
  EXPECT_EQ(sim::precisionOf(DataType::kInt64), sim::Precision::kFp64);
}

}  // namespace
}  // namespace braid
