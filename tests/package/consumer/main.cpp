// Lowers a catalog workload and prints it, through the installed headers and libraries.
#include <iostream>

#include <braid/catalog/workload.h>
#include <braid/ir/host_ir_text.h>
#include <braid/passes/lower.h>

int main() {
  braid::WorkloadParams params;
  params.devices = 2;
  params.streams = 2;
  params.m = params.k = params.n = 16;
  braid::Workload w = braid::makeWorkload("allgather", params);
  braid::HostProgram p = braid::lower(*w.fusion, w.params.lowering, w.params.devices);
  std::string text = braid::print(p);
  std::cout << text;
  return text.find("Allgather") == std::string::npos ? 1 : 0;
}
