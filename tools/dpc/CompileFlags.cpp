//===- CompileFlags.cpp - the flags of dpc compile and calibrate ----------===//

#include "tools/dpc/CompileFlags.h"

namespace dpc::cli {

cl::SubCommand compileCommand("compile", "Compile a model (.onnx or .mlir)");
cl::SubCommand calibrateCommand(
    "calibrate",
    "Time the training step of a model (or of a one-device plan file) on "
    "each device alone; write the cost file of dpc compile --balance");

// The groups of `dpc compile --help` and `dpc calibrate --help`.
cl::OptionCategory inputOutputOptions("Input and output");
cl::OptionCategory parallelOptions("Devices and data parallelism");
cl::OptionCategory trainingOptions("Training step");
cl::OptionCategory memoryOptions("Memory");
cl::OptionCategory timingOptions("Timing");

// The model, the output and the training step are the same for both.
cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                               cl::desc("<model.onnx|model.mlir>"),
                               cl::sub(compileCommand),
                               cl::sub(calibrateCommand));
cl::opt<std::string>
    outputPath("o", cl::desc("the output file (default: stdout)"),
               cl::value_desc("FILE"), cl::init("-"), cl::sub(compileCommand),
               cl::sub(calibrateCommand), cl::cat(inputOutputOptions));
cl::opt<int64_t> batchSize(
    "batch",
    cl::desc("the global batch, the most a step runs (default 256 for "
             "training stages)"),
    cl::value_desc("N"), cl::sub(compileCommand), cl::cat(inputOutputOptions));

cl::opt<std::string>
    devices("devices",
            cl::desc("the devices to train on: cpu:K or cuda:K, "
                     "comma-separated (default cpu:0)"),
            cl::value_desc("DEVICES"), cl::init("cpu:0"),
            cl::sub(compileCommand), cl::sub(calibrateCommand),
            cl::cat(parallelOptions));
cl::list<int64_t>
    split("split",
          cl::desc("each device's rows of the batch (default: even, as "
                   "torch.chunk)"),
          cl::value_desc("N,N,..."), cl::CommaSeparated,
          cl::sub(compileCommand), cl::cat(parallelOptions));
cl::opt<std::string>
    balance("balance",
            cl::desc("split the batch by each device's throughput, from dpc "
                     "calibrate's file (default: equal)"),
            cl::value_desc("COSTS.json"), cl::ValueOptional,
            cl::sub(compileCommand), cl::cat(parallelOptions));
cl::opt<bool>
    syncBn("sync-bn",
           cl::desc("synchronize batch-norm statistics over the devices "
                    "(SyncBatchNorm)"),
           cl::sub(compileCommand), cl::cat(parallelOptions));
cl::opt<int64_t> gradAccum(
    "grad-accum",
    cl::desc("micro-batches per optimizer step, gradients accumulated "
             "(default 1)"),
    cl::init(1), cl::value_desc("K"), cl::sub(compileCommand),
    cl::cat(parallelOptions));
cl::opt<double>
    bucketMb("bucket-mb",
             cl::desc("gradient all-reduce bucket size in MiB, after a "
                      "first of 1 MiB (default 25; 4 with --shard "
                      "gradients or parameters)"),
             cl::init(0.0), cl::value_desc("MIB"), cl::sub(compileCommand),
             cl::cat(parallelOptions));

cl::opt<std::string>
    shard("shard",
          cl::desc("what each device keeps only its part of: none (default), "
                   "optimizer (the optimizer state, ZeRO-1), gradients "
                   "(and the gradients, ZeRO-2) or parameters (and the "
                   "parameters, ZeRO-3)"),
          cl::init("none"), cl::value_desc("STAGE"), cl::sub(compileCommand),
          cl::cat(memoryOptions));
cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("the planned peak each device may reach (one size for all, or "
             "one per device): the least sharding that fits, unless --shard "
             "forces one"),
    cl::value_desc("SIZE[,SIZE...]"), cl::sub(compileCommand),
    cl::cat(memoryOptions));
cl::opt<std::string>
    remat("remat",
          cl::desc("recompute activations: none (default), auto, budget=SIZE "
                   "(per device) or segments=K"),
          cl::init("none"), cl::value_desc("MODE"), cl::sub(compileCommand),
          cl::cat(memoryOptions));
cl::opt<bool>
    noFusion("no-fusion",
             cl::desc("keep every kernel call apart (no fused kernels), to "
                      "compare against"),
             cl::sub(compileCommand), cl::cat(memoryOptions));
cl::opt<bool> noShareCasts(
    "no-share-casts",
    cl::desc("let every bf16 call cast its operands itself (no bf16 copy "
             "shared between calls), to compare against"),
    cl::sub(compileCommand), cl::cat(memoryOptions));
cl::opt<bool> noLayouts(
    "no-layouts",
    cl::desc("keep every buffer plain NCHW (no blocked layouts planned for "
             "the convolutions), to compare against"),
    cl::sub(compileCommand), cl::cat(memoryOptions));
cl::opt<bool> reportMemory(
    "report-memory",
    cl::desc("print each device's planned peak memory by kind, and what is "
             "alive at the peak"),
    cl::sub(compileCommand), cl::cat(memoryOptions));

cl::opt<Stage> emitStage(
    "emit",
    cl::desc("print a stage as MLIR instead of writing the plan: nn, train, "
             "dist or exec"),
    cl::value_desc("STAGE"),
    cl::values(clEnumValN(Stage::NN, "nn",
                          "the imported forward graph (nn dialect)"),
               clEnumValN(Stage::Train, "train",
                          "the training and evaluation steps (nn dialect)"),
               clEnumValN(Stage::Dist, "dist",
                          "the steps partitioned over the devices, with "
                          "their collectives (nn + dist)"),
               clEnumValN(Stage::Exec, "exec",
                          "the planned steps: buffers and kernel calls")),
    cl::sub(compileCommand), cl::cat(inputOutputOptions));

cl::opt<std::string> lossName(
    "loss",
    cl::desc("the loss: cross-entropy (default), mse, l1, huber, smooth-l1 "
             "or bce-with-logits (README: Losses and targets)"),
    cl::value_desc("LOSS"), cl::init("cross-entropy"), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
cl::opt<int64_t> classAxis(
    "class-axis",
    cl::desc("cross-entropy: the logits' class dim (default 1, PyTorch's; "
             "-1: the last, a language model's [N, T, V])"),
    cl::value_desc("DIM"), cl::init(1), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
cl::opt<int64_t> ignoreIndex(
    "ignore-index",
    cl::desc("cross-entropy: targets of this class count for nothing "
             "(default: none)"),
    cl::value_desc("N"), cl::sub(compileCommand), cl::sub(calibrateCommand),
    cl::cat(trainingOptions));
cl::opt<double>
    labelSmoothing("label-smoothing",
                   cl::desc("cross-entropy: PyTorch's label_smoothing"),
                   cl::value_desc("F"), cl::init(0.0), cl::sub(compileCommand),
                   cl::sub(calibrateCommand), cl::cat(trainingOptions));
cl::opt<std::string> classWeights(
    "class-weights",
    cl::desc("cross-entropy: a weight per class, as 1,2,0.5 or a 1-D .npy"),
    cl::value_desc("LIST|FILE.npy"), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
cl::opt<double>
    huberDelta("huber-delta",
               cl::desc("huber's delta, smooth-l1's beta (default 1)"),
               cl::value_desc("F"), cl::init(1.0), cl::sub(compileCommand),
               cl::sub(calibrateCommand), cl::cat(trainingOptions));
cl::opt<std::string> posWeight(
    "pos-weight",
    cl::desc("bce-with-logits: a weight of the positives per class (the "
             "last dim), as a list or a 1-D .npy"),
    cl::value_desc("LIST|FILE.npy"), cl::sub(compileCommand),
    cl::sub(calibrateCommand), cl::cat(trainingOptions));
cl::opt<std::string> optimizerName("optimizer",
                                   cl::desc("sgd (default) or adamw"),
                                   cl::value_desc("NAME"), cl::init("sgd"),
                                   cl::sub(compileCommand),
                                   cl::sub(calibrateCommand),
                                   cl::cat(trainingOptions));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0)"),
                         cl::value_desc("M"), cl::init(0.0),
                         cl::sub(compileCommand), cl::sub(calibrateCommand),
                         cl::cat(trainingOptions));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                       cl::sub(compileCommand), cl::sub(calibrateCommand),
                       cl::cat(trainingOptions));
cl::opt<std::string> precision(
    "precision",
    cl::desc("convolutions and matmuls in f32 (default), bf16 (f32 "
             "accumulation and weights, as torch.autocast), tf32 (a GPU's "
             "tensor cores, as PyTorch's allow_tf32) or auto (the faster "
             "per layer and pass)"),
    cl::value_desc("P"), cl::init("f32"), cl::sub(compileCommand),
    cl::cat(trainingOptions));
cl::opt<std::string> precisionCosts(
    "costs",
    cl::desc("the kernel times of dpc calibrate --kernels, which decide "
             "precisions and algorithms (default: built-in rules)"),
    cl::value_desc("FILE"), cl::sub(compileCommand), cl::cat(trainingOptions));
cl::opt<std::string> convAlgorithm(
    "conv-algorithm",
    cl::desc("CPU f32 3x3 convolutions: direct, winograd (wherever it "
             "applies) or auto (default: where it is faster)"),
    cl::value_desc("A"), cl::init("auto"), cl::sub(compileCommand),
    cl::cat(trainingOptions));
cl::opt<double>
    weightDecay("weight-decay",
                cl::desc("weight decay (default: PyTorch's for the optimizer)"),
                cl::value_desc("W"), cl::init(-1.0), cl::sub(compileCommand),
                cl::sub(calibrateCommand), cl::cat(trainingOptions));

cl::opt<int64_t> calibrateBatch(
    "batch",
    cl::desc("rows per timed step (default: 64 for a model, the compiled "
             "batch for a plan)"),
    cl::value_desc("N"), cl::init(0), cl::sub(calibrateCommand),
    cl::cat(timingOptions));
cl::opt<bool> calibrateKernels(
    "kernels",
    cl::desc("time each convolution and matmul of a model in f32, bf16 and "
             "(3x3 convolutions) Winograd instead: the file of dpc compile "
             "--costs"),
    cl::sub(calibrateCommand), cl::cat(timingOptions));
cl::opt<int> calibrateSteps("steps",
                            cl::desc("timed steps per device (default 20)"),
                            cl::value_desc("S"), cl::init(20),
                            cl::sub(calibrateCommand), cl::cat(timingOptions));
cl::opt<int>
    calibrateWarmup("warmup",
                    cl::desc("untimed steps per device first (default 3)"),
                    cl::value_desc("W"), cl::init(3), cl::sub(calibrateCommand),
                    cl::cat(timingOptions));

} // namespace dpc::cli
