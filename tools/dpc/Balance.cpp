//===- Balance.cpp - a per-device cost model and the split it gives -------===//

#include "tools/dpc/Balance.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace llvm;

static Error fail(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// `cpu`, `cuda`, `cpu:K` or `cuda:K`.
static bool isDeviceOrKind(StringRef key) {
  auto [kind, index] = key.split(':');
  if (kind != "cpu" && kind != "cuda")
    return false;
  if (!key.contains(':'))
    return true;
  unsigned value;
  return !index.empty() && all_of(index, isDigit) &&
         !index.getAsInteger(10, value);
}

Expected<dpc::CostModel> dpc::parseCostModel(StringRef text) {
  Expected<json::Value> root = json::parse(text);
  if (!root)
    return fail("not JSON: " + toString(root.takeError()));
  const json::Object *object = root->getAsObject();
  if (!object)
    return fail("expected a JSON object with a \"throughput\" object");
  CostModel model;
  const json::Object *entries = object->getObject("throughput");
  if (!entries)
    return fail("expected a \"throughput\" object of device: images/s");
  for (const auto &[key, value] : *entries) {
    StringRef name = key;
    if (!isDeviceOrKind(name))
      return fail("bad device '" + name +
                  "' in \"throughput\": expected cpu, cuda, cpu:K or cuda:K");
    std::optional<double> number = value.getAsNumber();
    if (!number)
      return fail("the throughput of '" + name + "' is not a number");
    if (!std::isfinite(*number) || *number <= 0)
      return fail("the throughput of '" + name + "' is " +
                  formatv("{0}", format("%g", *number)).str() +
                  "; it must be positive (leave a device that cannot train "
                  "out of --devices)");
    model.throughput.emplace_back(name.str(), *number);
  }
  if (model.throughput.empty())
    return fail("\"throughput\" is empty");
  // json::Object is unordered: keep the entries in a stable order.
  llvm::sort(model.throughput);
  if (const json::Value *unit = object->get("unit")) {
    std::optional<StringRef> string = unit->getAsString();
    if (!string)
      return fail("\"unit\" is not a string");
    model.unit = string->str();
  }
  if (std::optional<StringRef> name = object->getString("model"))
    model.model = name->str();
  model.batch = object->getInteger("batch").value_or(0);
  model.steps = object->getInteger("steps").value_or(0);
  return model;
}

Expected<dpc::CostModel> dpc::readCostModel(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!file)
    return fail(path +
                ": cannot read the cost file: " + file.getError().message());
  Expected<CostModel> model = parseCostModel((*file)->getBuffer());
  if (!model)
    return fail(path + ": " + toString(model.takeError()));
  return model;
}

std::string dpc::printCostModel(const CostModel &model) {
  std::string text;
  raw_string_ostream os(text);
  json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    if (!model.unit.empty())
      json.attribute("unit", model.unit);
    if (!model.model.empty())
      json.attribute("model", model.model);
    if (model.batch)
      json.attribute("batch", model.batch);
    if (model.steps)
      json.attribute("steps", model.steps);
    json.attributeObject("throughput", [&] {
      for (const auto &[name, value] : model.throughput) {
        // Four significant digits: what a measurement can honestly claim,
        // without 17-digit noise.
        json.attributeBegin(name);
        double rounded = std::stod(formatv("{0}", format("%.4g", value)));
        json.rawValue(formatv("{0}", format("%.10g", rounded)).str());
        json.attributeEnd();
      }
    });
  });
  os << "\n";
  return text;
}

Expected<double> dpc::lookupThroughput(const CostModel &model,
                                       StringRef device) {
  StringRef kind = device.split(':').first;
  std::optional<double> kindValue;
  for (const auto &[name, value] : model.throughput) {
    if (name == device)
      return value;
    if (name == kind)
      kindValue = value;
  }
  if (kindValue)
    return *kindValue;
  return fail("no throughput for device '" + device + "' (give \"" + device +
              "\" or \"" + kind + "\")");
}

SmallVector<int64_t> dpc::balanceSplit(ArrayRef<double> throughputs,
                                       int64_t batch) {
  size_t n = throughputs.size();
  if (n == 0)
    return {};
  double total = std::accumulate(throughputs.begin(), throughputs.end(), 0.0);
  SmallVector<int64_t> split(n, 0);
  // Remainders on a fixed grid, so that shares equal on paper tie exactly
  // whatever the floating-point rounding of their quotients.
  SmallVector<int64_t> remainders(n, 0);
  int64_t left = batch;
  for (size_t d = 0; d < n; ++d) {
    double exact = static_cast<double>(batch) * (throughputs[d] / total);
    double rows = std::floor(exact + 1e-9);
    split[d] = std::clamp<int64_t>(static_cast<int64_t>(rows), 0, left);
    left -= split[d];
    remainders[d] = std::llround(std::max(0.0, exact - rows) * 1e9);
  }
  SmallVector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return remainders[a] > remainders[b];
  });
  // Fewer than n rows are left over; the loop is a guard for the clamp.
  for (size_t i = 0; left > 0; i = (i + 1) % n, --left)
    ++split[order[i]];
  return split;
}
