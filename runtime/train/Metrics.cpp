//===- Metrics.cpp - per-epoch training metrics ---------------------------===//

#include "runtime/train/Metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dpc::train {
namespace {

std::string number(double value, const char *format = "%.9g") {
  if (!std::isfinite(value))
    return "null";
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

/// The fields a task adds to an epoch's JSON line: its name, the loss's
/// name (a regression), the test loss and, per token, the perplexities.
std::string taskFields(const EpochMetrics &m) {
  if (m.task == Task::Classes)
    return "";
  std::string fields = std::string(", \"task\": \"") + getTaskName(m.task) +
                       "\", \"test_loss\": " + number(m.testLoss);
  if (m.task == Task::Regression)
    fields += ", \"loss_kind\": \"" + m.lossName + "\"";
  if (m.task == Task::Tokens)
    fields += ", \"train_perplexity\": " + number(std::exp(m.trainLoss)) +
              ", \"val_perplexity\": " + number(std::exp(m.valLoss)) +
              ", \"test_perplexity\": " + number(std::exp(m.testLoss));
  return fields;
}

} // namespace

IouCounts::IouCounts(int64_t classes)
    : classes(classes), intersection(classes), predicted(classes),
      actual(classes) {}

void IouCounts::add(const float *logits, const int32_t *targets, int64_t rows,
                    int64_t outer, int64_t inner,
                    std::optional<int64_t> ignore) {
  for (int64_t o = 0; o < rows * outer; ++o) {
    const float *block = logits + o * classes * inner;
    for (int64_t i = 0; i < inner; ++i) {
      int32_t target = targets[o * inner + i];
      if ((ignore && target == *ignore) || target < 0 || target >= classes)
        continue;
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (block[c * inner + i] > block[best * inner + i])
          best = c;
      ++predicted[best];
      ++actual[target];
      intersection[target] += best == target;
    }
  }
}

std::vector<double> IouCounts::getPerClassIou() const {
  std::vector<double> iou(classes, std::numeric_limits<double>::quiet_NaN());
  for (int64_t c = 0; c < classes; ++c) {
    int64_t unions = predicted[c] + actual[c] - intersection[c];
    if (unions > 0)
      iou[c] = double(intersection[c]) / double(unions);
  }
  return iou;
}

double IouCounts::getMeanIou() const {
  double sum = 0;
  int64_t present = 0;
  for (double iou : getPerClassIou())
    if (!std::isnan(iou))
      sum += iou, ++present;
  return present ? sum / double(present)
                 : std::numeric_limits<double>::quiet_NaN();
}

const char *getTaskName(Task task) {
  switch (task) {
  case Task::Classes:
    return "classes";
  case Task::Tokens:
    return "tokens";
  case Task::Pixels:
    return "pixels";
  case Task::Regression:
    return "regression";
  }
  return "classes";
}

std::string toJsonLine(const EpochMetrics &m) {
  return "{\"epoch\": " + std::to_string(m.epoch) +
         ", \"train_loss\": " + number(m.trainLoss) +
         ", \"train_acc\": " + number(m.trainAcc) +
         ", \"test_acc\": " + number(m.testAcc) +
         ", \"epoch_seconds\": " + number(m.epochSeconds, "%.6g") +
         ", \"images_per_second\": " + number(m.imagesPerSecond, "%.6g") +
         ", \"lr\": " + number(m.lr) +
         (std::isnan(m.valLoss) && std::isnan(m.valAcc)
              ? std::string()
              : ", \"val_loss\": " + number(m.valLoss) +
                    ", \"val_acc\": " + number(m.valAcc)) +
         taskFields(m) + "}";
}

std::string renderSvgPlot(const std::vector<EpochMetrics> &history,
                          int64_t totalEpochs) {
  const double width = 640, height = 400;
  const double left = 60, right = 20, top = 20, bottom = 50;
  const double plotW = width - left - right, plotH = height - top - bottom;

  // x: epochs 1..E (at least 1..2 so a single point has an axis).
  double xMax = std::max<double>(
      {2.0, static_cast<double>(totalEpochs),
       history.empty() ? 0.0 : static_cast<double>(history.back().epoch)});
  double xMin = 1.0;
  // y: 0..1 for accuracies, stretched to the largest finite loss.
  double yMax = 1.0;
  for (const EpochMetrics &m : history)
    for (double loss : {m.trainLoss, m.valLoss})
      if (std::isfinite(loss))
        yMax = std::max(yMax, loss);
  yMax = std::ceil(yMax * 10.0) / 10.0;
  auto px = [&](double x) { return left + (x - xMin) / (xMax - xMin) * plotW; };
  auto py = [&](double y) { return top + (1.0 - y / yMax) * plotH; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
      << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";

  // Grid and ticks.
  int64_t xStep = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil((xMax - xMin) / 10.0)));
  for (int64_t x = 1; x <= static_cast<int64_t>(xMax); x += xStep) {
    svg << "<line x1=\"" << px(x) << "\" y1=\"" << top << "\" x2=\"" << px(x)
        << "\" y2=\"" << top + plotH << "\" stroke=\"#e0e0e0\"/>\n";
    svg << "<text x=\"" << px(x) << "\" y=\"" << top + plotH + 16
        << "\" text-anchor=\"middle\">" << x << "</text>\n";
  }
  double yStep = yMax <= 1.0 ? 0.2 : std::ceil(yMax / 5.0 * 10.0) / 10.0;
  for (double y = 0; y <= yMax + 1e-9; y += yStep) {
    svg << "<line x1=\"" << left << "\" y1=\"" << py(y) << "\" x2=\""
        << left + plotW << "\" y2=\"" << py(y) << "\" stroke=\"#e0e0e0\"/>\n";
    svg << "<text x=\"" << left - 6 << "\" y=\"" << py(y) + 4
        << "\" text-anchor=\"end\">" << number(y, "%.1f") << "</text>\n";
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plotW
      << "\" height=\"" << plotH << "\" fill=\"none\" stroke=\"black\"/>\n";
  svg << "<text x=\"" << left + plotW / 2 << "\" y=\"" << height - 12
      << "\" text-anchor=\"middle\">epoch</text>\n";

  // Series: d2l's colours and dashes.
  struct Series {
    const char *label, *colour, *dash;
    double EpochMetrics::*field;
  };
  const Series series[] = {
      {"train loss", "#1f77b4", "", &EpochMetrics::trainLoss},
      {"train acc", "#9467bd", "6,4", &EpochMetrics::trainAcc},
      {"test acc", "#2ca02c", "8,3,2,3", &EpochMetrics::testAcc},
      // With a validation set only (a series with no finite point is
      // skipped).
      {"val loss", "#ff7f0e", "2,2", &EpochMetrics::valLoss},
      {"val acc", "#d62728", "4,2", &EpochMetrics::valAcc},
  };
  int drawn = 0;
  for (const Series &s : series) {
    std::ostringstream points;
    int count = 0;
    for (const EpochMetrics &m : history) {
      double y = m.*s.field;
      if (!std::isfinite(y))
        continue;
      points << (count++ ? " " : "") << px(m.epoch) << "," << py(y);
    }
    if (count == 0)
      continue;
    svg << "<polyline fill=\"none\" stroke=\"" << s.colour
        << "\" stroke-width=\"2\""
        << (*s.dash ? std::string(" stroke-dasharray=\"") + s.dash + "\"" : "")
        << " points=\"" << points.str() << "\"/>\n";
    for (const EpochMetrics &m : history)
      if (std::isfinite(m.*s.field))
        svg << "<circle cx=\"" << px(m.epoch) << "\" cy=\"" << py(m.*s.field)
            << "\" r=\"2.5\" fill=\"" << s.colour << "\"/>\n";
    // Legend entry, top right.
    double ly = top + 14 + 18 * drawn++;
    double lx = left + plotW - 110;
    svg << "<line x1=\"" << lx << "\" y1=\"" << ly - 4 << "\" x2=\"" << lx + 24
        << "\" y2=\"" << ly - 4 << "\" stroke=\"" << s.colour
        << "\" stroke-width=\"2\""
        << (*s.dash ? std::string(" stroke-dasharray=\"") + s.dash + "\"" : "")
        << "/>\n";
    svg << "<text x=\"" << lx + 30 << "\" y=\"" << ly << "\">" << s.label
        << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

} // namespace dpc::train
