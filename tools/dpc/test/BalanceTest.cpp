//===- BalanceTest.cpp - the cost file and the split of --balance ---------===//

#include "tools/dpc/Balance.h"

#include "gtest/gtest.h"

#include <numeric>
#include <random>

using namespace dpc;

namespace {

std::vector<int64_t> split(std::vector<double> throughputs, int64_t batch) {
  llvm::SmallVector<int64_t> result = balanceSplit(throughputs, batch);
  return {result.begin(), result.end()};
}

std::string errorOf(llvm::StringRef text) {
  llvm::Expected<CostModel> model = parseCostModel(text);
  if (model)
    return "";
  return llvm::toString(model.takeError());
}

TEST(BalanceSplit, ProportionalToThroughput) {
  EXPECT_EQ(split({1, 3}, 12), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(split({100, 300}, 12), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(split({2, 1, 1}, 8), (std::vector<int64_t>{4, 2, 2}));
  EXPECT_EQ(split({1}, 7), (std::vector<int64_t>{7}));
}

TEST(BalanceSplit, LeftoverRowsGoToLargestRemaindersTiesToLowerDevice) {
  // 10/3 each: the one row left over goes to device 0.
  EXPECT_EQ(split({1, 1, 1}, 10), (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(split({1, 1, 1}, 11), (std::vector<int64_t>{4, 4, 3}));
  // Unlike torch.chunk (3, 3, 3, 1), equal devices get equal work.
  EXPECT_EQ(split({1, 1, 1, 1}, 10), (std::vector<int64_t>{3, 3, 2, 2}));
  // Exact shares 1.25, 3.75: the larger remainder wins, not the lower
  // device.
  EXPECT_EQ(split({1, 3}, 5), (std::vector<int64_t>{1, 4}));
  // Equal on paper, unequal in binary (0.1 * 3 != 0.3): still a tie.
  EXPECT_EQ(split({0.1, 0.1, 0.1}, 10), (std::vector<int64_t>{4, 3, 3}));
}

TEST(BalanceSplit, SlowDeviceMayGetNothing) {
  EXPECT_EQ(split({1, 1000}, 8), (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(split({1, 1}, 1), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(split({1, 2}, 0), (std::vector<int64_t>{0, 0}));
}

TEST(BalanceSplit, SumsToTheBatchAndStaysWithinOneRowOfTheExactShare) {
  std::mt19937 generator(7);
  std::uniform_real_distribution<double> throughput(0.01, 5000.0);
  std::uniform_int_distribution<int> devices(1, 9);
  std::uniform_int_distribution<int64_t> batches(0, 5000);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> values(devices(generator));
    for (double &value : values)
      value = throughput(generator);
    int64_t batch = batches(generator);
    std::vector<int64_t> result = split(values, batch);
    ASSERT_EQ(result.size(), values.size());
    EXPECT_EQ(std::accumulate(result.begin(), result.end(), int64_t(0)), batch);
    double total = std::accumulate(values.begin(), values.end(), 0.0);
    for (size_t d = 0; d < values.size(); ++d) {
      double exact = batch * values[d] / total;
      EXPECT_GE(result[d], 0);
      EXPECT_LT(std::abs(result[d] - exact), 1.0 + 1e-6);
    }
    // Deterministic.
    EXPECT_EQ(split(values, batch), result);
  }
}

TEST(CostModel, ParsesNamesKindsAndInformationalMembers) {
  llvm::Expected<CostModel> model = parseCostModel(R"({
    "unit": "images/s", "model": "mlp.onnx", "batch": 64, "steps": 10,
    "comment": "anything else is ignored",
    "throughput": {"cpu:1": 300, "cpu": 100.5, "cuda": 9000}
  })");
  ASSERT_TRUE(!!model) << llvm::toString(model.takeError());
  EXPECT_EQ(model->unit, "images/s");
  EXPECT_EQ(model->model, "mlp.onnx");
  EXPECT_EQ(model->batch, 64);
  EXPECT_EQ(model->steps, 10);
  ASSERT_EQ(model->throughput.size(), 3u);
  auto lookup = [&](llvm::StringRef device) {
    llvm::Expected<double> value = lookupThroughput(*model, device);
    if (!value) {
      llvm::consumeError(value.takeError());
      return -1.0;
    }
    return *value;
  };
  EXPECT_EQ(lookup("cpu:1"), 300); // its own entry beats its kind's
  EXPECT_EQ(lookup("cpu:0"), 100.5);
  EXPECT_EQ(lookup("cuda:3"), 9000);
}

TEST(CostModel, MissingDeviceNamesBothKeys) {
  llvm::Expected<CostModel> model =
      parseCostModel(R"({"throughput": {"cpu:0": 1}})");
  ASSERT_TRUE(!!model);
  llvm::Expected<double> value = lookupThroughput(*model, "cpu:1");
  ASSERT_FALSE(!!value);
  EXPECT_EQ(llvm::toString(value.takeError()),
            "no throughput for device 'cpu:1' (give \"cpu:1\" or \"cpu\")");
}

TEST(CostModel, RejectsBadFiles) {
  EXPECT_NE(errorOf("{"), "");
  EXPECT_EQ(errorOf("[1, 2]"),
            "expected a JSON object with a \"throughput\" object");
  EXPECT_EQ(errorOf(R"({"throughputs": {"cpu": 1}})"),
            "expected a \"throughput\" object of device: images/s");
  EXPECT_EQ(errorOf(R"({"throughput": {}})"), "\"throughput\" is empty");
  EXPECT_EQ(errorOf(R"({"throughput": {"gpu:0": 1}})"),
            "bad device 'gpu:0' in \"throughput\": expected cpu, cuda, "
            "cpu:K or cuda:K");
  EXPECT_EQ(errorOf(R"({"throughput": {"cpu:": 1}})").substr(0, 16),
            "bad device 'cpu:");
  EXPECT_EQ(errorOf(R"({"throughput": {"cpu": "fast"}})"),
            "the throughput of 'cpu' is not a number");
  EXPECT_EQ(errorOf(R"({"throughput": {"cpu:0": 0}})"),
            "the throughput of 'cpu:0' is 0; it must be positive (leave a "
            "device that cannot train out of --devices)");
  EXPECT_NE(errorOf(R"({"throughput": {"cpu:0": -2}})"), "");
  EXPECT_NE(errorOf(R"({"throughput": {"cpu:0": 1e999}})"), "");
  EXPECT_EQ(errorOf(R"({"unit": 3, "throughput": {"cpu": 1}})"),
            "\"unit\" is not a string");
}

TEST(CostModel, PrintsWhatItParses) {
  CostModel model;
  model.unit = "images/s";
  model.model = "mlp.onnx";
  model.batch = 64;
  model.steps = 10;
  model.throughput = {{"cpu:0", 1234.5678}, {"cpu:1", 0.000123456}};
  std::string text = printCostModel(model);
  EXPECT_NE(text.find("\"cpu:0\": 1235"), std::string::npos) << text;
  EXPECT_NE(text.find("\"cpu:1\": 0.0001235"), std::string::npos) << text;
  llvm::Expected<CostModel> parsed = parseCostModel(text);
  ASSERT_TRUE(!!parsed) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->unit, "images/s");
  EXPECT_EQ(parsed->batch, 64);
  ASSERT_EQ(parsed->throughput.size(), 2u);
  EXPECT_EQ(parsed->throughput[0].second, 1235);
  EXPECT_NEAR(parsed->throughput[1].second, 0.0001235, 1e-12);
}

} // namespace
