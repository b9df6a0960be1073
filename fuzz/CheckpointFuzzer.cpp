//===- CheckpointFuzzer.cpp - checkpoint bytes to the checkpoint loader ---===//
//
// A checkpoint ends with the FNV-1a checksum of what precedes it. The
// target replaces the last eight bytes of an input with the checksum of the
// rest, so that mutations reach the parser and its consistency checks; the
// checksum check itself is covered by the unit tests.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Checksum.h"
#include "runtime/train/Checkpoint.h"

#include "fuzz/FuzzInput.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= 8) {
    uint64_t checksum = dpc::fnv1a(bytes.data(), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &checksum, 8);
  }
  const std::string &directory = dpc::fuzz::getScratchDirectory();
  std::string path = dpc::train::getCheckpointPath(directory);
  dpc::fuzz::writeScratchFile(path.substr(directory.size() + 1), bytes.data(),
                              bytes.size());
  try {
    dpc::train::TrainingState state = dpc::train::loadCheckpoint(directory);
    // A run of 3 epochs, as `dpc run --resume --epochs 3` checks it.
    dpc::train::checkResumable(state, 3, -1, path);
  } catch (const dpc::train::CheckpointError &error) {
    dpc::fuzz::checkErrorLine(error.what(), path);
  }
  return 0;
}
