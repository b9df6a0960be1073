//===- LrSchedule.cpp - learning rate per step ----------------------------===//

#include "runtime/train/LrSchedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace dpc::train {
namespace {

std::vector<std::string> splitColons(const std::string &text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ':')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

double parseNumber(const std::string &text, const std::string &what) {
  size_t used = 0;
  double value;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    throw std::invalid_argument(what + " '" + text + "' is not a number");
  return value;
}

} // namespace

LrSchedule LrSchedule::parse(const std::string &text) {
  std::vector<std::string> parts = splitColons(text);
  LrSchedule schedule;
  const std::string usage =
      "expected constant, step:EVERY:GAMMA or cosine[:WARMUP_EPOCHS], got '" +
      text + "'";
  if (parts[0] == "constant" && parts.size() == 1)
    return schedule;
  if (parts[0] == "step" && parts.size() == 3) {
    schedule.kind = Kind::Step;
    double every = parseNumber(parts[1], "EVERY");
    if (every < 1 || every != std::floor(every))
      throw std::invalid_argument("EVERY must be a positive whole number of "
                                  "epochs, got '" +
                                  parts[1] + "'");
    schedule.every = static_cast<int64_t>(every);
    schedule.gamma = parseNumber(parts[2], "GAMMA");
    if (schedule.gamma <= 0)
      throw std::invalid_argument("GAMMA must be positive, got '" + parts[2] +
                                  "'");
    return schedule;
  }
  if (parts[0] == "cosine" && parts.size() <= 2) {
    schedule.kind = Kind::Cosine;
    if (parts.size() == 2) {
      schedule.warmupEpochs = parseNumber(parts[1], "WARMUP_EPOCHS");
      if (schedule.warmupEpochs < 0)
        throw std::invalid_argument("WARMUP_EPOCHS must not be negative");
    }
    return schedule;
  }
  throw std::invalid_argument(usage);
}

double LrSchedule::at(double baseLr, int64_t epoch, int64_t step,
                      int64_t stepsPerEpoch, int64_t epochs) const {
  switch (kind) {
  case Kind::Constant:
    return baseLr;
  case Kind::Step:
    return baseLr * std::pow(gamma, static_cast<double>(epoch / every));
  case Kind::Cosine: {
    double perEpoch = static_cast<double>(std::max<int64_t>(stepsPerEpoch, 1));
    double t = epoch + step / perEpoch; // epochs done before this step
    if (t < warmupEpochs)
      return baseLr * (t + 1.0 / perEpoch) / warmupEpochs;
    double span = epochs - warmupEpochs;
    if (span <= 0)
      return baseLr;
    const double pi = std::acos(-1.0);
    return baseLr * 0.5 * (1.0 + std::cos(pi * (t - warmupEpochs) / span));
  }
  }
  return baseLr;
}

} // namespace dpc::train
