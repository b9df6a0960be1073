//===- dpc.cpp - the dpc command line -------------------------------------===//
//
// Dispatches the commands: `dpc compile` (CompileCommand.cpp) and `dpc
// calibrate` (CalibrateCommand.cpp) through LLVM's option parser, the other
// commands (run, eval, predict, export, inspect, launch) to parsers of their
// own. Errors a user can cause are one line naming the file, with a
// non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "runtime/launch/Launcher.h"
#include "runtime/train/EvalCommand.h"
#include "runtime/train/ExportCommand.h"
#include "runtime/train/RunCommand.h"
#include "tools/dpc/CompileCommand.h"
#include "tools/dpc/CompileFlags.h"
#include "tools/dpc/Help.h"
#include "tools/dpc/Inspect.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <iostream>
#include <optional>
#include <string>
#include <vector>

using llvm::StringRef;
using namespace dpc::cli;

/// `dpc compile --help` and `dpc calibrate --help`.
static void printHelp(cl::SubCommand &command) {
  llvm::raw_ostream &os = llvm::outs();
  if (&command == &compileCommand) {
    dpc::printSubCommandHelp(
        os, command,
        "usage: dpc compile MODEL.onnx|MODEL.mlir -o PLAN [options]",
        "Compiles a model into a data-parallel training plan (or prints a "
        "stage of it as MLIR).",
        {&inputOutputOptions, &parallelOptions, &trainingOptions,
         &memoryOptions});
    return;
  }
  dpc::printSubCommandHelp(
      os, command,
      "usage: dpc calibrate MODEL.onnx|MODEL.mlir|PLAN --devices DEVICES "
      "[options]",
      "Times the training step on each device alone; writes the cost file "
      "of dpc compile --balance.",
      {&parallelOptions, &trainingOptions, &timingOptions,
       &inputOutputOptions});
}

static bool isHelpFlag(StringRef arg) {
  return arg == "-h" || arg == "--help" || arg == "-help";
}

/// The commands with a parser of their own (no LLVM option parsing).
static std::optional<int> runOwnCommand(int argc, char **argv) {
  StringRef command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run")
    return dpc::runtime::runCommand(argc - 1, argv + 1);
  if (command == "eval")
    return dpc::runtime::evalCommand(args, std::cout, std::cerr);
  if (command == "predict")
    return dpc::runtime::predictCommand(args, std::cout, std::cerr);
  if (command == "export")
    return dpc::runtime::exportCommand(args, std::cout, std::cerr);
  if (command == "inspect")
    return dpc::inspectCommand(argc - 1, argv + 1);
  if (command == "launch")
    return dpc::launch::launchCommand(argc - 1, argv + 1);
  return std::nullopt;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "dpc: error: missing command; see 'dpc --help'\n";
    return 1;
  }
  StringRef command = argv[1];
  if (isHelpFlag(command)) {
    dpc::printCommandsHelp(llvm::outs());
    return 0;
  }
  if (command == "--version") {
    dpc::printVersion(llvm::outs());
    return 0;
  }
  if (std::optional<int> status = runOwnCommand(argc, argv))
    return *status;
  if (command != "compile" && command != "calibrate") {
    llvm::errs() << "dpc: error: unknown command '" << command
                 << "'; see 'dpc --help'\n";
    return 1;
  }
  for (int i = 2; i < argc; ++i) {
    if (isHelpFlag(argv[i])) {
      printHelp(command == "compile" ? compileCommand : calibrateCommand);
      return 0;
    }
  }
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "dpc\n");
  if (compileCommand)
    return dpc::cli::runCompile();
  return dpc::cli::runCalibrate();
}
