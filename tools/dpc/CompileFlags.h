//===- CompileFlags.h - the flags of dpc compile and calibrate --*- C++ -*-===//
//
// The LLVM command-line options of `dpc compile` and `dpc calibrate` (the
// two commands LLVM's parser reads; the others parse their own), shared by
// CompileCommand.cpp and CalibrateCommand.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_COMPILEFLAGS_H
#define DPC_TOOLS_DPC_COMPILEFLAGS_H

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace dpc::cli {

namespace cl = llvm::cl;

/// The stage `dpc compile --emit` prints.
enum class Stage { NN, Train, Dist, Exec };

extern cl::SubCommand compileCommand;
extern cl::SubCommand calibrateCommand;
extern cl::OptionCategory inputOutputOptions;
extern cl::OptionCategory parallelOptions;
extern cl::OptionCategory trainingOptions;
extern cl::OptionCategory memoryOptions;
extern cl::OptionCategory timingOptions;
extern cl::opt<std::string> modelPath;
extern cl::opt<std::string> outputPath;
extern cl::opt<int64_t> batchSize;
extern cl::opt<std::string> devices;
extern cl::list<int64_t> split;
extern cl::opt<std::string> balance;
extern cl::opt<bool> syncBn;
extern cl::opt<int64_t> gradAccum;
extern cl::opt<double> bucketMb;
extern cl::opt<std::string> shard;
extern cl::opt<std::string> memoryBudget;
extern cl::opt<std::string> remat;
extern cl::opt<bool> noFusion;
extern cl::opt<bool> noShareCasts;
extern cl::opt<bool> noLayouts;
extern cl::opt<bool> reportMemory;
extern cl::opt<Stage> emitStage;
extern cl::opt<std::string> lossName;
extern cl::opt<int64_t> classAxis;
extern cl::opt<int64_t> ignoreIndex;
extern cl::opt<double> labelSmoothing;
extern cl::opt<std::string> classWeights;
extern cl::opt<double> huberDelta;
extern cl::opt<std::string> posWeight;
extern cl::opt<std::string> optimizerName;
extern cl::opt<double> momentum;
extern cl::opt<bool> nesterov;
extern cl::opt<std::string> precision;
extern cl::opt<std::string> precisionCosts;
extern cl::opt<std::string> convAlgorithm;
extern cl::opt<double> weightDecay;
extern cl::opt<int64_t> calibrateBatch;
extern cl::opt<bool> calibrateKernels;
extern cl::opt<int> calibrateSteps;
extern cl::opt<int> calibrateWarmup;

} // namespace dpc::cli

#endif // DPC_TOOLS_DPC_COMPILEFLAGS_H
