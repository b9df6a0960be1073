//===- PlanLoaderFuzzer.cpp - plan bytes to the loader and validator ------===//
//
// A plan file carries the checksum of its contents, so nearly every mutated
// plan would stop at the checksum. The target seals what the FlatBuffers
// verifier accepts (as the writer does) before loading it, so that mutations
// reach the validator's cross-references; the rest goes in as it is. A
// loaded plan is then summarized as `dpc inspect` does, which trusts it.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanMemory.h"

#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string kName = "fuzz.plan";
  std::vector<uint8_t> bytes(data, data + size);
  dpc::plan::sealPlan(bytes);
  try {
    auto plan = dpc::plan::LoadedPlan::fromBytes(std::move(bytes), kName);
    for (const dpc::plan::DeviceMemory &memory :
         dpc::plan::summarizeMemory(plan->get()))
      (void)dpc::plan::formatBytes(memory.requiredBytes());
  } catch (const dpc::plan::PlanError &error) {
    dpc::fuzz::checkErrorLine(error.what(), kName);
  }
  return 0;
}
