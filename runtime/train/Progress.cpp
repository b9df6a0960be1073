//===- Progress.cpp - what a run prints while it trains -------------------===//

#include "runtime/train/Progress.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace dpc::train {
namespace {

std::string format(const char *spec, double value) {
  if (!std::isfinite(value))
    return "-";
  char text[64];
  std::snprintf(text, sizeof(text), spec, value);
  return text;
}

/// One split's metrics as a task names them: "train loss L, train
/// perplexity P, train token acc A", "val mse L", ...; "" where the split
/// has none (no validation set).
std::string describeSplit(const EpochMetrics &m, const char *split, double loss,
                          double accuracy) {
  if (std::isnan(loss) && std::isnan(accuracy))
    return "";
  std::string text =
      std::string(", ") + split + " " + m.lossName + " " + format("%.4f", loss);
  if (m.task == Task::Tokens)
    text += std::string(", ") + split + " perplexity " +
            format("%.4f", std::exp(loss));
  if (m.task == Task::Tokens || m.task == Task::Pixels)
    text += std::string(", ") + split +
            (m.task == Task::Tokens ? " token acc " : " pixel acc ") +
            format("%.4f", accuracy);
  return text;
}

} // namespace

void Progress::update(int64_t epoch, int64_t epochs, int64_t step,
                      int64_t steps, double loss, double accuracy,
                      double imagesPerSecond) {
  if (!interactive || quiet)
    return;
  auto now = std::chrono::steady_clock::now();
  if (drawn && step < steps && now - lastDraw < std::chrono::milliseconds(100))
    return;
  lastDraw = now;
  drawn = true;
  constexpr int kWidth = 30;
  int filled = steps > 0 ? static_cast<int>(kWidth * step / steps) : kWidth;
  std::string bar(filled, '=');
  if (filled < kWidth)
    bar += '>' + std::string(kWidth - filled - 1, ' ');
  out << "\repoch " << epoch << "/" << epochs << " [" << bar << "] " << step
      << "/" << steps << "  loss " << format("%.4f", loss) << "  acc "
      << format("%.4f", accuracy) << "  " << format("%.0f", imagesPerSecond)
      << " img/s\x1b[K" << std::flush;
}

void Progress::finishEpoch(const EpochMetrics &m, int64_t epochs) {
  if (quiet)
    return;
  if (interactive && drawn)
    out << "\r\x1b[K";
  drawn = false;
  if (m.task != Task::Classes) {
    std::string line = describeSplit(m, "train", m.trainLoss, m.trainAcc) +
                       describeSplit(m, "val", m.valLoss, m.valAcc) +
                       describeSplit(m, "test", m.testLoss, m.testAcc);
    out << "epoch " << m.epoch << "/" << epochs << ":" << line.substr(1) << ", "
        << format("%.2f", m.epochSeconds) << " s, "
        << format("%.3g", m.imagesPerSecond) << " samples/s, lr "
        << format("%.6g", m.lr) << std::endl;
    return;
  }
  out << "epoch " << m.epoch << "/" << epochs << ": train loss "
      << format("%.4f", m.trainLoss) << ", train acc "
      << format("%.4f", m.trainAcc);
  if (!std::isnan(m.valLoss) || !std::isnan(m.valAcc))
    out << ", val loss " << format("%.4f", m.valLoss) << ", val acc "
        << format("%.4f", m.valAcc);
  out << ", test acc " << format("%.4f", m.testAcc) << ", "
      << format("%.2f", m.epochSeconds) << " s, "
      << format("%.0f", m.imagesPerSecond) << " images/s, lr "
      << format("%.6g", m.lr) << std::endl;
}

} // namespace dpc::train
