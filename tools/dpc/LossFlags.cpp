//===- LossFlags.cpp - the values of dpc compile's loss flags -------------===//

#include "tools/dpc/LossFlags.h"
#include "runtime/data/Npy.h"

#include <cmath>
#include <cstdlib>
#include <exception>
#include <sstream>

bool dpc::readWeightList(const std::string &flag, const std::string &value,
                         std::vector<double> &weights, std::string &error) {
  weights.clear();
  const std::string npy = ".npy";
  if (value.size() > npy.size() &&
      value.compare(value.size() - npy.size(), npy.size(), npy) == 0) {
    try {
      data::NpyArray array = data::readNpy(value);
      if (array.shape.size() != 1) {
        error = value + ": --" + flag + " needs a 1-D array, got " +
                std::to_string(array.shape.size()) + " dims";
        return false;
      }
      weights = array.as<double>();
    } catch (const std::exception &e) {
      error = e.what();
      return false;
    }
  } else {
    std::stringstream items(value);
    std::string item;
    while (std::getline(items, item, ',')) {
      char *end = nullptr;
      double weight = std::strtod(item.c_str(), &end);
      if (item.empty() || *end != '\0') {
        error = "--" + flag + ": '" + item +
                "' is not a number (give a list like 1,2,0.5 or a .npy file)";
        return false;
      }
      weights.push_back(weight);
    }
  }
  for (double weight : weights) {
    if (!std::isfinite(weight) || weight < 0) {
      error = "--" + flag + ": the weights must be finite and >= 0, got " +
              std::to_string(weight);
      return false;
    }
  }
  if (weights.empty()) {
    error = "--" + flag + ": no weights given";
    return false;
  }
  return true;
}
