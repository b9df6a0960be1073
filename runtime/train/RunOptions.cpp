//===- RunOptions.cpp - the flags of `dpc run` ----------------------------===//

#include "runtime/train/RunOptions.h"
#include "runtime/train/Init.h"

#include <cmath>
#include <string>

namespace dpc::train {

const char *getRunUsage() {
  static const std::string usage =
      std::string(
          "usage: dpc run PLAN --data DATA [options]\n"
          "Trains a plan on all of its devices (or as one rank of dpc launch, "
          "torchrun or mpirun).\n"
          "\n"
          "Data:\n"
          "  --data DATA         fashion-mnist[:DIR], or idx|npy:TRAIN_IMAGES,"
          "TRAIN_LABELS[,TEST_IMAGES,TEST_LABELS]\n"
          "                      a model with several inputs: a file per "
          "input, npy:NAME=FILE,...,LABELS[,NAME=FILE,...,LABELS]\n"
          "  --train-subset N    train on the first N samples only\n"
          "  --test-subset N     test on the first N samples only\n"
          "  --last-batch MODE   an epoch's partial last batch: short "
          "(default), drop or pad\n") +
      getImageFlagsUsage() +
      "  --augment AUG       crop=PAD (a random crop of the image padded "
      "with zeros) and/or flip\n"
      "  --val-split F       validate on the last F (0 < F < 1) of the "
      "training set, every epoch\n"
      "  --val-data DATA     validate on idx|npy:IMAGES,LABELS every epoch\n"
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
      "xavier, normal:STD or hash:SEED\n"
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
  return usage.c_str();
}

RunOptions parseRunOptions(const std::vector<std::string> &args) {
  RunOptions options;
  FlagParser parser;
  addDataFlags(parser, options);
  auto count = [&parser](const char *flag, int64_t min, int64_t &target) {
    parser.addValue(flag, [flag, min, &target](const std::string &value) {
      target = parseCount(flag, value, min);
    });
  };
  auto path = [&parser](const char *flag, std::string &target) {
    parser.addValue(flag,
                    [&target](const std::string &value) { target = value; });
  };
  count("--epochs", 1, options.epochs);
  count("--steps", 1, options.maxSteps);
  count("--checkpoint-every", 1, options.checkpointEvery);
  count("--train-subset", 1, options.trainSubset);
  count("--test-subset", 1, options.testSubset);
  parser.addValue("--seed", [&](const std::string &value) {
    options.seed = static_cast<uint64_t>(parseCount("--seed", value, 0));
  });
  parser.addValue("--lr", [&](const std::string &value) {
    options.lr = parsePositive("--lr", value);
  });
  parser.addValue("--lr-schedule", [&](const std::string &value) {
    try {
      options.schedule = LrSchedule::parse(value);
    } catch (const std::invalid_argument &error) {
      throw UsageError("--lr-schedule: " + std::string(error.what()));
    }
  });
  path("--metrics", options.metricsPath);
  path("--plot", options.plotPath);
  path("--trace", options.tracePath);
  path("--checkpoint", options.checkpointDirectory);
  parser.addValue("--init", [&](const std::string &value) {
    try {
      parseInitScheme(value);
    } catch (const std::invalid_argument &error) {
      throw UsageError("--init: " + std::string(error.what()));
    }
    options.init = value;
  });
  parser.addValue("--backend", [&](const std::string &value) {
    if (value != "gloo" && value != "mpi")
      throw UsageError("--backend: expected gloo or mpi, got '" + value + "'");
    options.backend = value;
  });
  parser.addValue("--timeout", [&](const std::string &value) {
    options.timeoutSeconds = parsePositive("--timeout", value);
  });
  parser.addValue("--last-batch", [&](const std::string &value) {
    if (value != "short" && value != "drop" && value != "pad")
      throw UsageError("--last-batch: expected short, drop or pad, got '" +
                       value + "'");
    options.lastBatch = value;
  });
  parser.addValue("--on-nonfinite", [&](const std::string &value) {
    if (value != "stop" && value != "skip-step")
      throw UsageError("--on-nonfinite: expected stop or skip-step, got '" +
                       value + "'");
    options.skipNonFiniteSteps = value == "skip-step";
  });
  parser.addValue("--augment", [&](const std::string &value) {
    options.augmentation = parseAugmentation(value);
  });
  parser.addValue("--val-split", [&](const std::string &value) {
    char *end = nullptr;
    double fraction = std::strtod(value.c_str(), &end);
    if (*end != '\0' || !(fraction > 0 && fraction < 1))
      throw UsageError("--val-split: expected a fraction between 0 and 1, "
                       "got '" +
                       value + "'");
    options.valSplit = fraction;
  });
  parser.addValue("--val-data", [&](const std::string &value) {
    parseLabelledFiles("--val-data", value, options.valImages,
                       options.valLabels, options.valNpy);
  });
  parser.addSwitch("--resume", options.resume);
  parser.addSwitch("--quiet", options.quiet);
  if (!parser.parse(args, options.planPath)) {
    options.help = true;
    return options;
  }
  options.epochsGiven = parser.given("--epochs");
  options.seedGiven = parser.given("--seed");
  bool dataGiven = parser.given("--data");
  if (options.planPath.empty())
    throw UsageError("missing the plan file (dpc run PLAN --data ...)");
  if (!dataGiven)
    throw UsageError("missing --data fashion-mnist[:DIR] or --data idx:...");
  if (options.resume && options.checkpointDirectory.empty())
    throw UsageError("--resume needs --checkpoint DIR");
  if (options.checkpointEvery && options.checkpointDirectory.empty())
    throw UsageError("--checkpoint-every needs --checkpoint DIR");
  if (options.valSplit > 0 && !options.valImages.empty())
    throw UsageError("--val-split and --val-data: give one validation set");
  return options;
}

} // namespace dpc::train
