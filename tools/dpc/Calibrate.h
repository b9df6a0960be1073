//===- Calibrate.h - a device's training throughput, measured ---*- C++ -*-===//
//
// The runtime half of `dpc calibrate`: runs the train_step of a one-device
// plan on one device, alone, and times it, or each of its convolution and
// matmul calls (--kernels). It lives in a plain library (the
// runtime reports problems as exceptions); nothing here throws.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_CALIBRATE_H
#define DPC_TOOLS_DPC_CALIBRATE_H

#include <cstdint>
#include <string>
#include <vector>

namespace dpc {

struct CalibrateDevice {
  /// The device to run on (cpu:K, cuda:K), whatever device the plan names:
  /// it must be of the same kind.
  std::string name;
  /// The bytes of a one-device plan file.
  std::vector<uint8_t> plan;
  /// The devices of that kind the real run drives: a CPU device gets
  /// 1/numLocalDevices of the cores there, and so it does here.
  int numLocalDevices = 1;
};

struct CalibrateOptions {
  /// Rows per step (0: each plan's compiled batch).
  int64_t batch = 0;
  /// Untimed steps first (caches, allocator, thread pools), then timed ones.
  int warmup = 3;
  int steps = 20;
};

struct Measurement {
  int64_t batch = 0;
  double medianStepSeconds = 0;
  /// batch / medianStepSeconds.
  double imagesPerSecond = 0;
};

/// Times the train_step of each device's plan (plan files called
/// `planName`) on that device alone, on random images and labels with
/// learning rate 0 so that every step computes the same. The devices take
/// turns of a quarter of the steps each, so that a change in the machine's
/// load or a process-wide warm-up weighs on all of them alike; each one's
/// result is the median of its steps. Returns false with a one-line `error`
/// naming the plan on failure.
bool measureThroughputs(std::vector<CalibrateDevice> devices,
                        const std::string &planName,
                        const CalibrateOptions &options,
                        std::vector<Measurement> &results, std::string &error);

/// One convolution or matmul call of a plan's train_step: its cost key
/// (runtime/abi/KernelCostKey.h) and median time per step.
struct KernelTime {
  std::string key;
  double micros = 0;
  bool winograd = false; // a convolution the plan runs with Winograd
};

/// Times every convolution and matmul call (Kernels.def's kMixedPrecision)
/// of the train_step of `device`'s one-device plan, in the plan's order,
/// from the executor's trace of `options.steps` steps after
/// `options.warmup` untimed ones. Returns false with a one-line `error`
/// naming the plan on failure.
bool measureKernelTimes(CalibrateDevice device, const std::string &planName,
                        const CalibrateOptions &options,
                        std::vector<KernelTime> &results, std::string &error);

} // namespace dpc

#endif // DPC_TOOLS_DPC_CALIBRATE_H
