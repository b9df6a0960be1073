//===- LossFlags.h - the values of dpc compile's loss flags -----*- C++ -*-===//

#ifndef DPC_TOOLS_DPC_LOSSFLAGS_H
#define DPC_TOOLS_DPC_LOSSFLAGS_H

#include <string>
#include <vector>

namespace dpc {

/// A list of weights given as "1,2,0.5" or as a 1-D .npy file (a value
/// ending in ".npy"). False, with one line naming the flag or the file and
/// the problem in `error`, if it is neither.
bool readWeightList(const std::string &flag, const std::string &value,
                    std::vector<double> &weights, std::string &error);

} // namespace dpc

#endif // DPC_TOOLS_DPC_LOSSFLAGS_H
