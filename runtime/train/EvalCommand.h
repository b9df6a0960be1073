//===- EvalCommand.h - `dpc eval` and `dpc predict` -------------*- C++ -*-===//
//
// The entry points of `dpc eval` (loss and accuracy of a trained plan on a
// data set, with per-class accuracy and the confusion matrix in --json) and
// `dpc predict` (its logits, or its top-k classes, as an .npy file). They
// never throw: every error is one line on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_EVALCOMMAND_H
#define DPC_RUNTIME_TRAIN_EVALCOMMAND_H

#include <iosfwd>
#include <string>
#include <vector>

namespace dpc::runtime {

/// `args` excludes the command's name. Returns the exit code.
int evalCommand(const std::vector<std::string> &args, std::ostream &out,
                std::ostream &err);
int predictCommand(const std::vector<std::string> &args, std::ostream &out,
                   std::ostream &err);

/// The usage texts (`dpc eval --help`, `dpc predict --help`).
const char *getEvalUsage();
const char *getPredictUsage();

} // namespace dpc::runtime

#endif // DPC_RUNTIME_TRAIN_EVALCOMMAND_H
