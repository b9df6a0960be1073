//===- Help.cpp - dpc's --help and --version ------------------------------===//

#include "tools/dpc/Help.h"
#include "runtime/plan/PlanVersion.h"
#include "runtime/train/Checkpoint.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace dpc {
namespace {

/// Options start in this column; a longer flag pushes its description on.
constexpr size_t kDescriptionColumn = 22;

void printOption(raw_ostream &os, StringRef flag, StringRef description) {
  std::string left = ("  " + flag).str();
  os << left;
  os.indent(left.size() < kDescriptionColumn ? kDescriptionColumn - left.size()
                                             : 2);
  os << description << "\n";
}

/// "--name VALUE", "--name[=VALUE]", "-o FILE" or "--flag".
std::string formatFlag(const cl::Option &option) {
  std::string flag =
      (option.ArgStr.size() == 1 ? "-" : "--") + option.ArgStr.str();
  if (option.ValueStr.empty())
    return flag;
  if (option.getValueExpectedFlag() == cl::ValueOptional)
    return flag + "[=" + option.ValueStr.str() + "]";
  return flag + " " + option.ValueStr.str();
}

/// The options of `command` itself (not LLVM's, which every subcommand
/// also sees), once each, sorted by name.
SmallVector<cl::Option *> getOwnOptions(cl::SubCommand &command) {
  SmallVector<cl::Option *> options;
  for (auto &entry : command.OptionsMap) {
    cl::Option *option = entry.second;
    if (option->isPositional() || entry.first() != option->ArgStr ||
        !is_contained(option->Subs, &command))
      continue;
    options.push_back(option);
  }
  llvm::sort(options, [](cl::Option *a, cl::Option *b) {
    return a->ArgStr < b->ArgStr;
  });
  return options;
}

} // namespace

void printCommandsHelp(raw_ostream &os) {
  os << "usage: dpc COMMAND [options]   (dpc COMMAND --help: its options)\n"
        "Compiles a model into a data-parallel training plan, and runs it.\n"
        "\n"
        "Commands:\n";
  printOption(os, "compile",
              "compile a model (.onnx or .mlir) into a plan, "
              "or print a stage as MLIR");
  printOption(os, "run",
              "train a plan on its devices (or as one rank of "
              "dpc launch, torchrun, mpirun)");
  printOption(os, "eval",
              "loss and accuracy of a trained plan on a labelled "
              "data set");
  printOption(os, "predict",
              "logits or top-k classes of a trained plan, "
              "into an .npy file");
  printOption(os, "export",
              "the trained model as ONNX, or its parameters and buffers by "
              "name (.npz, safetensors)");
  printOption(os, "inspect",
              "what a plan holds per device: memory by kind, "
              "streams, buckets");
  printOption(os, "calibrate",
              "time each device's training step: the cost "
              "file of compile --balance");
  printOption(os, "launch",
              "start one dpc run process per device, as "
              "torchrun does");
  os << "Options:\n";
  printOption(os, "-h, --help", "this text");
  printOption(os, "--version",
              "dpc's version and the plan and checkpoint "
              "format versions");
}

void printVersion(raw_ostream &os) {
  os << formatv("dpc {0} (plan format {1}, checkpoint format {2})\n",
                DPC_VERSION, plan::kPlanVersion,
                train::kCheckpointFormatVersion);
}

void printSubCommandHelp(raw_ostream &os, cl::SubCommand &command,
                         StringRef usage, StringRef summary,
                         ArrayRef<cl::OptionCategory *> groups) {
  os << usage << "\n" << summary << "\n\n";
  SmallVector<cl::Option *> options = getOwnOptions(command);
  auto printGroup = [&](StringRef name, auto belongs) {
    bool any = false;
    for (cl::Option *option : options) {
      if (!belongs(*option))
        continue;
      if (!any)
        os << name << ":\n";
      any = true;
      printOption(os, formatFlag(*option), option->HelpStr);
    }
  };
  for (cl::OptionCategory *group : groups)
    printGroup(group->getName(), [&](const cl::Option &option) {
      return is_contained(option.Categories, group);
    });
  printGroup("Other", [&](const cl::Option &option) {
    return !any_of(groups, [&](cl::OptionCategory *group) {
      return is_contained(option.Categories, group);
    });
  });
}

} // namespace dpc
