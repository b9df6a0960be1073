//===- RunOptions.cpp - the flags of `dpc run` ----------------------------===//

#include "runtime/train/RunOptions.h"
#include "runtime/train/Init.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dpc::train {
namespace {

int64_t parseCount(const std::string &flag, const std::string &value,
                   int64_t min) {
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || parsed < min)
    throw UsageError(flag + ": expected a whole number >= " +
                     std::to_string(min) + ", got '" + value + "'");
  return parsed;
}

double parsePositive(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  double parsed = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(parsed) || parsed <= 0)
    throw UsageError(flag + ": expected a positive number, got '" + value +
                     "'");
  return parsed;
}

std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ',')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

} // namespace

void parseData(const std::string &value, RunOptions &options) {
  if (value == "fashion-mnist" || value.rfind("fashion-mnist:", 0) == 0) {
    options.fashionMnist = true;
    options.dataDirectory =
        value.size() > 14 ? value.substr(14) : std::string();
    return;
  }
  if (value.rfind("idx:", 0) == 0 || value.rfind("npy:", 0) == 0) {
    options.npy = value[0] == 'n';
    std::vector<std::string> paths = splitCommas(value.substr(4));
    bool anyEmpty = false;
    for (const std::string &p : paths)
      anyEmpty = anyEmpty || p.empty();
    if ((paths.size() != 2 && paths.size() != 4) || anyEmpty)
      throw UsageError("--data " + value.substr(0, 4) +
                       " expected TRAIN_IMAGES,TRAIN_LABELS or "
                       "TRAIN_IMAGES,TRAIN_LABELS,TEST_IMAGES,TEST_LABELS");
    options.trainImages = paths[0], options.trainLabels = paths[1];
    if (paths.size() == 4)
      options.testImages = paths[2], options.testLabels = paths[3];
    return;
  }
  throw UsageError("--data: expected fashion-mnist[:DIR], idx:FILES or "
                   "npy:FILES, got '" +
                   value + "'");
}

const char *getRunUsage() {
  return "usage: dpc run PLAN --data DATA [options]\n"
         "Trains a plan on all of its devices (or as one rank of dpc launch, "
         "torchrun or mpirun).\n"
         "\n"
         "Data:\n"
         "  --data DATA         fashion-mnist[:DIR], or idx|npy:TRAIN_IMAGES,"
         "TRAIN_LABELS[,TEST_IMAGES,TEST_LABELS]\n"
         "  --train-subset N    train on the first N samples only\n"
         "  --test-subset N     test on the first N samples only\n"
         "  --last-batch MODE   an epoch's partial last batch: short "
         "(default), drop or pad\n"
         "Training:\n"
         "  --epochs E          epochs to train (default 10; with only "
         "--steps, as many as it needs)\n"
         "  --steps S           stop after S train steps in all\n"
         "  --seed S            the seed of the shuffles and of --init "
         "(default 0)\n"
         "  --lr LR             the learning rate (default 0.1)\n"
         "  --lr-schedule SCHED constant (default), step:EVERY:GAMMA or "
         "cosine[:WARMUP_EPOCHS]\n"
         "  --init SCHEME       model (default: the plan's weights), kaiming, "
         "xavier or normal:STD\n"
         "  --on-nonfinite WHAT a step that leaves NaN or infinity in the "
         "weights: stop (default) or skip-step (undo its update)\n"
         "Checkpoints:\n"
         "  --checkpoint DIR    save the training state at every epoch's end "
         "and at the run's end\n"
         "  --checkpoint-every N  save it every N train steps too\n"
         "  --resume            go on from the checkpoint in DIR, bit for bit "
         "as if never stopped\n"
         "Output:\n"
         "  --metrics FILE      one JSON line of metrics per epoch\n"
         "  --plot FILE         an SVG chart of loss and accuracy per epoch\n"
         "  --trace FILE        a Chrome/Perfetto trace of the first 20 train "
         "steps\n"
         "  --quiet             print errors only\n"
         "One process per device (dpc launch, torchrun, mpirun):\n"
         "  --backend NAME      the host collectives: gloo (default) or mpi "
         "(default under mpirun)\n"
         "  --timeout SECONDS   how long to wait for a rank or a collective "
         "(default 300)\n";
}

RunOptions parseRunOptions(const std::vector<std::string> &args) {
  RunOptions options;
  bool dataGiven = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      return options;
    }
    if (arg.rfind("-", 0) != 0 || arg == "-") {
      if (!options.planPath.empty())
        throw UsageError("unexpected argument '" + arg +
                         "' (the plan is already '" + options.planPath + "')");
      options.planPath = arg;
      continue;
    }
    std::string flag = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq), value = arg.substr(eq + 1);
      inlineValue = true;
    }
    if (flag == "--resume" || flag == "--quiet") {
      if (inlineValue)
        throw UsageError(flag + " takes no value");
      (flag == "--resume" ? options.resume : options.quiet) = true;
      continue;
    }
    static const char *const valued[] = {"--data",
                                         "--epochs",
                                         "--steps",
                                         "--seed",
                                         "--lr",
                                         "--lr-schedule",
                                         "--metrics",
                                         "--plot",
                                         "--checkpoint",
                                         "--train-subset",
                                         "--test-subset",
                                         "--init",
                                         "--trace",
                                         "--backend",
                                         "--timeout",
                                         "--last-batch",
                                         "--checkpoint-every",
                                         "--on-nonfinite"};
    bool known = false;
    for (const char *name : valued)
      known = known || flag == name;
    if (!known)
      throw UsageError("unknown flag '" + flag + "'");
    if (!inlineValue) {
      if (i + 1 >= args.size())
        throw UsageError(flag + " needs a value");
      value = args[++i];
    }
    if (flag == "--data") {
      parseData(value, options);
      dataGiven = true;
    } else if (flag == "--epochs") {
      options.epochs = parseCount(flag, value, 1);
      options.epochsGiven = true;
    } else if (flag == "--checkpoint-every") {
      options.checkpointEvery = parseCount(flag, value, 1);
    } else if (flag == "--steps") {
      options.maxSteps = parseCount(flag, value, 1);
    } else if (flag == "--seed") {
      options.seed = static_cast<uint64_t>(parseCount(flag, value, 0));
      options.seedGiven = true;
    } else if (flag == "--lr") {
      options.lr = parsePositive(flag, value);
    } else if (flag == "--lr-schedule") {
      try {
        options.schedule = LrSchedule::parse(value);
      } catch (const std::invalid_argument &error) {
        throw UsageError("--lr-schedule: " + std::string(error.what()));
      }
    } else if (flag == "--metrics" || flag == "--plot" ||
               flag == "--checkpoint" || flag == "--trace") {
      if (value.empty())
        throw UsageError(flag + " needs a non-empty path");
      (flag == "--metrics" ? options.metricsPath
       : flag == "--plot"  ? options.plotPath
       : flag == "--trace" ? options.tracePath
                           : options.checkpointDirectory) = value;
    } else if (flag == "--init") {
      try {
        parseInitScheme(value);
      } catch (const std::invalid_argument &error) {
        throw UsageError("--init: " + std::string(error.what()));
      }
      options.init = value;
    } else if (flag == "--backend") {
      if (value != "gloo" && value != "mpi")
        throw UsageError("--backend: expected gloo or mpi, got '" + value +
                         "'");
      options.backend = value;
    } else if (flag == "--timeout") {
      options.timeoutSeconds = parsePositive(flag, value);
    } else if (flag == "--last-batch") {
      if (value != "short" && value != "drop" && value != "pad")
        throw UsageError("--last-batch: expected short, drop or pad, got '" +
                         value + "'");
      options.lastBatch = value;
    } else if (flag == "--on-nonfinite") {
      if (value != "stop" && value != "skip-step")
        throw UsageError("--on-nonfinite: expected stop or skip-step, got '" +
                         value + "'");
      options.skipNonFiniteSteps = value == "skip-step";
    } else if (flag == "--train-subset") {
      options.trainSubset = parseCount(flag, value, 1);
    } else {
      options.testSubset = parseCount(flag, value, 1);
    }
  }
  if (options.planPath.empty())
    throw UsageError("missing the plan file (dpc run PLAN --data ...)");
  if (!dataGiven)
    throw UsageError("missing --data fashion-mnist[:DIR] or --data idx:...");
  if (options.resume && options.checkpointDirectory.empty())
    throw UsageError("--resume needs --checkpoint DIR");
  if (options.checkpointEvery && options.checkpointDirectory.empty())
    throw UsageError("--checkpoint-every needs --checkpoint DIR");
  return options;
}

} // namespace dpc::train
