//===- DataTest.cpp - IDX loading and batching
//-----------------------------===//

#include "runtime/data/BatchLoader.h"
#include "runtime/data/Dataset.h"
#include "runtime/data/Npy.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>

using namespace dpc::data;
namespace fs = std::filesystem;

namespace {

/// A scratch directory per test, removed afterwards.
class DataTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("dpc-data-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string &name) const { return dir / name; }

  static std::vector<uint8_t> idx(uint8_t rank, std::vector<uint32_t> dims,
                                  const std::vector<uint8_t> &data) {
    std::vector<uint8_t> bytes = {0, 0, 0x08, rank};
    for (uint32_t d : dims)
      for (int shift = 24; shift >= 0; shift -= 8)
        bytes.push_back(uint8_t(d >> shift));
    bytes.insert(bytes.end(), data.begin(), data.end());
    return bytes;
  }

  void writeGz(const std::string &name, const std::vector<uint8_t> &bytes) {
    gzFile file = gzopen(path(name).c_str(), "wb");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(gzwrite(file, bytes.data(), bytes.size()), int(bytes.size()));
    gzclose(file);
  }

  void writePlain(const std::string &name, const std::vector<uint8_t> &bytes) {
    std::ofstream(path(name), std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }

  /// `count` 2x3 images whose pixels all equal their index, labels i % 4.
  void writeSmallSet(int count) {
    std::vector<uint8_t> pixels, labels;
    for (int i = 0; i < count; ++i) {
      pixels.insert(pixels.end(), 6, uint8_t(i));
      labels.push_back(uint8_t(i % 4));
    }
    writeGz("images.gz", idx(3, {uint32_t(count), 2, 3}, pixels));
    writePlain("labels", idx(1, {uint32_t(count)}, labels));
  }

  std::string expectError(const std::function<void()> &load) {
    try {
      load();
    } catch (const DatasetError &e) {
      return e.what();
    }
    ADD_FAILURE() << "no DatasetError";
    return "";
  }

  fs::path dir;
};

TEST_F(DataTest, LoadsGzippedAndPlainIdxAndNormalizes) {
  writeSmallSet(5);
  ImageFormat format;
  format.normalization = {{0.5f}, {0.25f}};
  Dataset data = loadIdx(path("images.gz"), path("labels"), format);
  EXPECT_EQ(data.count, 5);
  EXPECT_EQ(data.channels, 1);
  EXPECT_EQ(data.height, 2);
  EXPECT_EQ(data.width, 3);
  EXPECT_EQ(data.numClasses, 4);
  ASSERT_EQ(data.images.size(), 30u);
  EXPECT_FLOAT_EQ(data.images[6 * 3], (3 / 255.0f - 0.5f) / 0.25f);
  EXPECT_EQ(data.labels, (std::vector<int32_t>{0, 1, 2, 3, 0}));
}

TEST_F(DataTest, BadFilesAreOneLineErrorsNamingTheFile) {
  writeSmallSet(5);
  std::string missing =
      expectError([&] { loadIdx(path("nope.gz"), path("labels")); });
  EXPECT_NE(missing.find("nope.gz: cannot open the file"), std::string::npos)
      << missing;

  writePlain("text", {'h', 'e', 'l', 'l', 'o', '\n'});
  std::string text =
      expectError([&] { loadIdx(path("text"), path("labels")); });
  EXPECT_NE(text.find("text: not an IDX file"), std::string::npos) << text;

  // Swapped files: labels given as images.
  std::string swapped =
      expectError([&] { loadIdx(path("labels"), path("images.gz")); });
  EXPECT_NE(swapped.find("labels: expected images (an IDX file with 3 dims)"),
            std::string::npos)
      << swapped;

  writePlain("short", idx(3, {5, 2, 3}, std::vector<uint8_t>(29)));
  std::string truncated =
      expectError([&] { loadIdx(path("short"), path("labels")); });
  EXPECT_NE(truncated.find("short: holds 29 bytes of data, but its dims need "
                           "30"),
            std::string::npos)
      << truncated;

  writePlain("labels4", idx(1, {4}, {0, 1, 2, 3}));
  std::string mismatch =
      expectError([&] { loadIdx(path("images.gz"), path("labels4")); });
  EXPECT_NE(mismatch.find("labels4: has 4 labels for 5 images"),
            std::string::npos)
      << mismatch;

  // A gzip stream cut short.
  std::ifstream in(path("images.gz"), std::ios::binary);
  std::vector<uint8_t> gz((std::istreambuf_iterator<char>(in)), {});
  gz.resize(gz.size() / 2);
  writePlain("cut.gz", gz);
  std::string cut =
      expectError([&] { loadIdx(path("cut.gz"), path("labels")); });
  EXPECT_EQ(cut.rfind(path("cut.gz") + ": ", 0), 0u) << cut;
  for (const std::string &message :
       {missing, text, swapped, truncated, mismatch, cut})
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(DataTest, WrongImageShapeForThePlan) {
  writeSmallSet(2);
  Dataset data = loadIdx(path("images.gz"), path("labels"));
  EXPECT_NO_THROW(checkImageShape(data, "train", 1, 2, 3));
  try {
    checkImageShape(data, "train", 1, 28, 28);
    FAIL() << "no error";
  } catch (const DatasetError &e) {
    EXPECT_STREQ(e.what(),
                 "train: images are 1x2x3 but the plan expects 1x28x28");
  }
}

TEST(EpochOrderTest, IsAPermutationFixedBySeedAndEpoch) {
  std::vector<int64_t> a = epochOrder(1000, 7, 3);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(a, epochOrder(1000, 7, 3));
  EXPECT_NE(a, epochOrder(1000, 7, 4));
  EXPECT_NE(a, epochOrder(1000, 8, 3));
  // Pinned values: the order must not change across platforms or versions,
  // or resumed runs would diverge from uninterrupted ones.
  std::vector<int64_t> small = epochOrder(8, 1, 0);
  std::vector<int64_t> again = epochOrder(8, 1, 0);
  EXPECT_EQ(small, again);
}

TEST_F(DataTest, BatchesCoverTheEpochWithAShortLastBatch) {
  writeSmallSet(10);
  Dataset data = loadIdx(path("images.gz"), path("labels"));
  BatchLoader loader(data, 4, /*shuffle=*/true, /*seed=*/42);
  EXPECT_EQ(loader.batchesPerEpoch(), 3);
  for (int epoch = 0; epoch < 3; ++epoch) {
    loader.startEpoch(epoch);
    std::vector<int64_t> sizes, seen;
    while (const Batch *batch = loader.next()) {
      sizes.push_back(batch->size);
      for (int64_t r = 0; r < batch->size; ++r) {
        // Every pixel of image i is i / 255: recover the sample index.
        int64_t sample = int64_t(batch->images[r * 6] * 255.0f + 0.5f);
        EXPECT_EQ(batch->labels[r], sample % 4);
        seen.push_back(sample);
      }
    }
    EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
    std::vector<int64_t> expected = epochOrder(10, 42, epoch);
    EXPECT_EQ(seen, expected);
    EXPECT_EQ(loader.next(), nullptr);
  }
}

TEST_F(DataTest, RestartingAnEpochMidwayStartsOver) {
  writeSmallSet(9);
  Dataset data = loadIdx(path("images.gz"), path("labels"));
  BatchLoader loader(data, 2, /*shuffle=*/false, 0);
  loader.startEpoch(0);
  ASSERT_NE(loader.next(), nullptr);
  loader.startEpoch(1);
  std::vector<int64_t> seen;
  while (const Batch *batch = loader.next())
    for (int64_t r = 0; r < batch->size; ++r)
      seen.push_back(int64_t(batch->images[r * 6] * 255.0f + 0.5f));
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST_F(DataTest, LastBatchDropOrPad) {
  writeSmallSet(10);
  Dataset data = loadIdx(path("images.gz"), path("labels"));
  BatchLoader drop(data, 4, /*shuffle=*/false, 0, LastBatch::Drop);
  EXPECT_EQ(drop.batchesPerEpoch(), 2);
  BatchLoader pad(data, 4, /*shuffle=*/true, 5, LastBatch::Pad);
  EXPECT_EQ(pad.batchesPerEpoch(), 3);
  pad.startEpoch(1);
  std::vector<int64_t> seen;
  while (const Batch *batch = pad.next()) {
    EXPECT_EQ(batch->size, 4);
    for (int64_t r = 0; r < batch->size; ++r)
      seen.push_back(int64_t(batch->images[r * 6] * 255.0f + 0.5f));
  }
  // The order, then its first two samples again.
  std::vector<int64_t> expected = epochOrder(10, 5, 1);
  expected.push_back(expected[0]);
  expected.push_back(expected[1]);
  EXPECT_EQ(seen, expected);
}

TEST_F(DataTest, RanksAssembleTheirRowsOfTheSameGlobalBatches) {
  // Three ranks with torch.chunk-like slices: together they see exactly
  // the one-process batches, each rank only its rows.
  writeSmallSet(10);
  Dataset data = loadIdx(path("images.gz"), path("labels"));
  auto sliceFor = [](int rank) -> RowSlice {
    return [rank](int64_t rows) {
      int64_t each = (rows + 2) / 3;
      int64_t first = std::min(rows, each * rank);
      return RowRanges{{first, std::min(rows, first + each) - first}};
    };
  };
  BatchLoader whole(data, 4, true, 9);
  std::vector<std::unique_ptr<BatchLoader>> ranks;
  for (int rank = 0; rank < 3; ++rank)
    ranks.push_back(std::make_unique<BatchLoader>(
        data, 4, true, 9, LastBatch::Short, sliceFor(rank)));
  whole.startEpoch(2);
  for (auto &rank : ranks)
    rank->startEpoch(2);
  while (const Batch *batch = whole.next()) {
    std::vector<int32_t> labels;
    std::vector<float> images;
    for (int rank = 0; rank < 3; ++rank) {
      const Batch *part = ranks[rank]->next();
      ASSERT_NE(part, nullptr);
      EXPECT_EQ(part->size, batch->size);
      EXPECT_EQ(part->images.size(), part->labels.size() * 6);
      labels.insert(labels.end(), part->labels.begin(), part->labels.end());
      images.insert(images.end(), part->images.begin(), part->images.end());
    }
    EXPECT_EQ(labels, batch->labels);
    EXPECT_EQ(images, batch->images);
  }
  for (auto &rank : ranks)
    EXPECT_EQ(rank->next(), nullptr);
}

TEST_F(DataTest, ARankMayTakeSeveralRangesOfABatch) {
  // Gradient accumulation in rank mode: one range per micro-batch.
  writeSmallSet(10);
  Dataset data = loadIdx(path("images.gz"), path("labels"));
  BatchLoader whole(data, 6, true, 3);
  BatchLoader part(data, 6, true, 3, LastBatch::Short, [](int64_t rows) {
    return RowRanges{{0, 1}, {rows / 2, 2}};
  });
  whole.startEpoch(1);
  part.startEpoch(1);
  while (const Batch *batch = whole.next()) {
    const Batch *mine = part.next();
    ASSERT_NE(mine, nullptr);
    int64_t half = batch->size / 2;
    std::vector<int32_t> expected = {batch->labels[0], batch->labels[half],
                                     batch->labels[half + 1]};
    EXPECT_EQ(mine->labels, expected);
    EXPECT_EQ(
        std::vector<float>(mine->images.begin() + 6, mine->images.begin() + 12),
        std::vector<float>(batch->images.begin() + half * 6,
                           batch->images.begin() + half * 6 + 6));
  }
  EXPECT_EQ(part.next(), nullptr);
}

/// A version-1 .npy file of `bytes` with NumPy's header for dtype/shape.
static std::vector<uint8_t> npy(const std::string &descr,
                                const std::string &shape,
                                const std::vector<uint8_t> &bytes) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> file = {0x93,
                               'N',
                               'U',
                               'M',
                               'P',
                               'Y',
                               1,
                               0,
                               uint8_t(header.size()),
                               uint8_t(header.size() >> 8)};
  file.insert(file.end(), header.begin(), header.end());
  file.insert(file.end(), bytes.begin(), bytes.end());
  return file;
}

TEST_F(DataTest, ReadsNpyArrays) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  writePlain("a.npy", npy("<f4", "(2, 3)", bytes));
  NpyArray array = readNpy(path("a.npy"));
  EXPECT_EQ(array.dtype, "f4");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.as<float>(), values);
  EXPECT_EQ(array.as<int64_t>()[2], 3);

  writePlain("scalar.npy", npy("<i4", "()", {7, 0, 0, 0}));
  NpyArray scalar = readNpy(path("scalar.npy"));
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.as<int32_t>(), std::vector<int32_t>{7});

  writePlain("short.npy", npy("<f4", "(2, 3)", {1, 2, 3}));
  std::string shortData = expectError([&] { readNpy(path("short.npy")); });
  EXPECT_NE(shortData.find("short.npy: holds 3 bytes of data, but its shape "
                           "needs 24"),
            std::string::npos)
      << shortData;
  writePlain("big.npy", npy(">f4", "(1,)", {0, 0, 0, 0}));
  EXPECT_NE(expectError([&] {
              readNpy(path("big.npy"));
            }).find("is not little-endian"),
            std::string::npos);
  writePlain("text.npy", {'h', 'i', '\n'});
  EXPECT_NE(expectError([&] {
              readNpy(path("text.npy"));
            }).find("text.npy: not a .npy file"),
            std::string::npos);
}

/// The bytes of `values`, as a file holds them.
template <typename T>
static std::vector<uint8_t> bytesOf(std::vector<T> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST_F(DataTest, NpyShapesAndTypesThatCannotBeReadAreOneLine) {
  // 2^32 * 2^32 elements wrap to 0 in 64 bits, which an empty file "has".
  writePlain("wraps.npy", npy("<u1", "(4294967296, 4294967296)", {}));
  EXPECT_EQ(expectError([&] { readNpy(path("wraps.npy")); }),
            path("wraps.npy") +
                ": shape (4294967296, 4294967296) is too large");
  writePlain("huge.npy", npy("<u1", "(99999999999999999999,)", {}));
  EXPECT_EQ(expectError([&] { readNpy(path("huge.npy")); }),
            path("huge.npy") + ": a dimension of the .npy shape is out of "
                               "range");
  writePlain("complex.npy", npy("<c8", "(1,)", std::vector<uint8_t>(8)));
  EXPECT_EQ(expectError([&] { readNpy(path("complex.npy")); }),
            path("complex.npy") + ": unsupported .npy element type 'c8'");
  writePlain("date.npy", npy("<M8[ns]", "(1,)", std::vector<uint8_t>(8)));
  EXPECT_EQ(expectError([&] { readNpy(path("date.npy")); }),
            path("date.npy") + ": unsupported .npy element type 'M8[ns]'");
}

TEST_F(DataTest, NpyLabelsMustBeExactClassIndices) {
  writePlain("images.npy", npy("<u1", "(3, 2, 2)", std::vector<uint8_t>(12)));
  // 4294967299 = 2^32 + 3 would narrow to 3.
  writePlain("wide.npy",
             npy("<i8", "(3,)", bytesOf<int64_t>({1, 4294967299, 0})));
  EXPECT_EQ(expectError([&] { loadNpy(path("images.npy"), path("wide.npy")); }),
            path("wide.npy") + ": label 4294967299 at index 1 is not a class "
                               "index (0 to 2147483646)");
  writePlain("negative.npy", npy("<i4", "(3,)", bytesOf<int32_t>({1, 2, -1})));
  EXPECT_EQ(
      expectError([&] { loadNpy(path("images.npy"), path("negative.npy")); }),
      path("negative.npy") + ": label -1 at index 2 is not a class "
                             "index (0 to 2147483646)");
  // 2^63 would wrap to a negative int64 (and then be reported wrongly).
  writePlain("unsigned.npy",
             npy("<u8", "(3,)", bytesOf<uint64_t>({1, 2, uint64_t(1) << 63})));
  EXPECT_EQ(
      expectError([&] { loadNpy(path("images.npy"), path("unsigned.npy")); }),
      path("unsigned.npy") + ": element 2 (9223372036854775808) does not fit "
                             "in int64");

  writePlain("labels.npy", npy("<i8", "(3,)", bytesOf<int64_t>({0, 3, 1})));
  Dataset dataset = loadNpy(path("images.npy"), path("labels.npy"));
  EXPECT_EQ(dataset.labels, (std::vector<int32_t>{0, 3, 1}));
  EXPECT_EQ(dataset.numClasses, 4);
  checkLabels(dataset, "labels.npy", 4);
  try {
    checkLabels(dataset, "labels.npy", 3);
    ADD_FAILURE() << "no error";
  } catch (const DatasetError &error) {
    EXPECT_EQ(std::string(error.what()),
              "labels.npy: label 3 at index 1 is out of range for the plan's "
              "3 classes");
  }
}

TEST_F(DataTest, PerTokenTargetsAreRowsOfTheBatchWithIgnoredOnesUncounted) {
  writePlain("images.npy", npy("<u1", "(4, 2, 2)", std::vector<uint8_t>(16)));
  writePlain("targets.npy", npy("<i8", "(4, 3)",
                                bytesOf<int64_t>({0, -100, 4, 1, 1, 1, -100,
                                                  -100, 2, 3, 0, -100})));
  ImageFormat format;
  format.targets = {{3}, false, 5, -100};
  Dataset dataset = loadNpy(path("images.npy"), path("targets.npy"), format);
  EXPECT_EQ(dataset.labels.size(), 12u);
  EXPECT_EQ(dataset.numClasses, 5); // -100 is no class
  checkLabels(dataset, "targets.npy", 5);
  EXPECT_THROW(checkLabels(dataset, "targets.npy", 4), DatasetError);

  BatchLoader loader(dataset, 3, /*shuffle=*/false, 0);
  loader.startEpoch(0);
  const Batch *first = loader.next();
  EXPECT_EQ(first->labels,
            (std::vector<int32_t>{0, -100, 4, 1, 1, 1, -100, -100, 2}));
  EXPECT_EQ(first->countedTargets, 6);
  const Batch *last = loader.next();
  EXPECT_EQ(last->labels, (std::vector<int32_t>{3, 0, -100}));
  EXPECT_EQ(last->countedTargets, 2);

  Dataset tail = splitOffLast(dataset, 1);
  EXPECT_EQ(tail.labels, (std::vector<int32_t>{3, 0, -100}));
  EXPECT_EQ(dataset.labels.size(), 9u);
}

TEST_F(DataTest, TargetsOfAnotherShapeOrTypeAreOneLine) {
  writePlain("images.npy", npy("<u1", "(2, 2, 2)", std::vector<uint8_t>(8)));
  writePlain("short.npy", npy("<i8", "(2, 2)", bytesOf<int64_t>({0, 1, 2, 3})));
  ImageFormat tokens;
  tokens.targets = {{3}, false, 5, std::nullopt};
  EXPECT_EQ(expectError([&] {
              loadNpy(path("images.npy"), path("short.npy"), tokens);
            }),
            path("short.npy") +
                ": holds integer i8 [2, 2], but the plan's targets "
                "are integer [N, 3]");
  writePlain("floats.npy",
             npy("<f4", "(2, 3)", bytesOf<float>({0, 1, 2, 3, 4, 0.5f})));
  EXPECT_EQ(expectError([&] {
              loadNpy(path("images.npy"), path("floats.npy"), tokens);
            }),
            path("floats.npy") +
                ": holds float f4 [2, 3], but the plan's targets "
                "are integer [N, 3]");
  ImageFormat regression;
  regression.targets = {{3}, true, 0, std::nullopt};
  Dataset dataset = loadNpy(path("images.npy"), path("floats.npy"), regression);
  float last;
  std::memcpy(&last, &dataset.labels[5], sizeof(float));
  EXPECT_EQ(last, 0.5f); // the float's own bits
  writePlain("ints.npy",
             npy("<i8", "(2, 3)", bytesOf<int64_t>({0, 1, 2, 3, 4, 5})));
  EXPECT_EQ(expectError([&] {
              loadNpy(path("images.npy"), path("ints.npy"), regression);
            }),
            path("ints.npy") + ": holds integer i8 [2, 3], but the plan's "
                               "targets are float [N, 3]");
  writePlain("nan.npy",
             npy("<f4", "(2, 3)", bytesOf<float>({0, 1, NAN, 3, 4, 5})));
  EXPECT_EQ(expectError([&] {
              loadNpy(path("images.npy"), path("nan.npy"), regression);
            }),
            path("nan.npy") + ": target 2 is NaN; targets must be finite");
}

TEST_F(DataTest, EveryNpyIntegerTypeReadNpyAcceptsLoads) {
  // i2, u2, u4 and u8: as NumPy writes uint16 images or uint64 labels.
  writePlain("u2.npy",
             npy("<u2", "(2, 1, 2)", bytesOf<uint16_t>({0, 1000, 65535, 7})));
  writePlain("i2.npy", npy("<i2", "(2,)", bytesOf<int16_t>({3, 0})));
  Dataset dataset = loadNpy(path("u2.npy"), path("i2.npy"));
  EXPECT_EQ(dataset.images, (std::vector<float>{0, 1000, 65535, 7}));
  EXPECT_EQ(dataset.labels, (std::vector<int32_t>{3, 0}));
  writePlain("u4.npy", npy("<u4", "(2,)", bytesOf<uint32_t>({1, 2})));
  EXPECT_EQ(loadNpy(path("u2.npy"), path("u4.npy")).labels,
            (std::vector<int32_t>{1, 2}));
  writePlain("u8.npy", npy("<u8", "(2,)", bytesOf<uint64_t>({5, 0})));
  EXPECT_EQ(loadNpy(path("u2.npy"), path("u8.npy")).labels,
            (std::vector<int32_t>{5, 0}));
  // An unsigned label beyond int32 is refused like a signed one.
  writePlain("u4big.npy",
             npy("<u4", "(2,)", bytesOf<uint32_t>({1, 4294967295u})));
  EXPECT_EQ(expectError([&] { loadNpy(path("u2.npy"), path("u4big.npy")); }),
            path("u4big.npy") + ": label 4294967295 at index 1 is not a class "
                                "index (0 to 2147483646)");
  // A negative int16 label says which.
  writePlain("i2neg.npy", npy("<i2", "(2,)", bytesOf<int16_t>({-2, 0})));
  EXPECT_EQ(expectError([&] { loadNpy(path("u2.npy"), path("i2neg.npy")); }),
            path("i2neg.npy") + ": label -2 at index 0 is not a class index "
                                "(0 to 2147483646)");
}

TEST_F(DataTest, TokenIdsAreCheckedAsTheIntegersTheyAre) {
  ImageFormat tokens;
  tokens.sample = {2};
  writePlain("ids.npy", npy("<i4", "(2, 2)", bytesOf<int32_t>({0, 7, 3, 1})));
  EXPECT_EQ(loadNpyImages(path("ids.npy"), tokens).images,
            (std::vector<float>{0, 7, 3, 1}));
  // INT64_MAX is 2^63 as a float, which no int64 holds: the id is named
  // as the file has it.
  writePlain("max.npy", npy("<i8", "(1, 2)", bytesOf<int64_t>({1, INT64_MAX})));
  EXPECT_EQ(expectError([&] { loadNpyImages(path("max.npy"), tokens); }),
            path("max.npy") + ": token id 9223372036854775807 (entry 1) is "
                              "outside [0, 2^24)");
  writePlain("u8.npy", npy("<u8", "(1, 2)", bytesOf<uint64_t>({~0ull, 1})));
  EXPECT_EQ(expectError([&] { loadNpyImages(path("u8.npy"), tokens); }),
            path("u8.npy") + ": element 0 (18446744073709551615) does not "
                             "fit in int64");
  writePlain("neg.npy", npy("<i2", "(1, 2)", bytesOf<int16_t>({4, -1})));
  EXPECT_EQ(expectError([&] { loadNpyImages(path("neg.npy"), tokens); }),
            path("neg.npy") + ": token id -1 (entry 1) is outside [0, 2^24)");
}

TEST_F(DataTest, NonFinitePixelsAreRefusedWhenLoaded) {
  writePlain("labels.npy", npy("<i8", "(2,)", bytesOf<int64_t>({0, 1})));
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  writePlain("nan.npy",
             npy("<f4", "(2, 1, 2)", bytesOf<float>({0.5f, 1, 2, nan})));
  EXPECT_EQ(expectError([&] { loadNpy(path("nan.npy"), path("labels.npy")); }),
            path("nan.npy") + ": pixel 3 is NaN; a data set must be finite");
  writePlain("inf.npy",
             npy("<f4", "(2, 1, 2)", bytesOf<float>({0.5f, -inf, 2, 3})));
  EXPECT_EQ(expectError([&] { loadNpy(path("inf.npy"), path("labels.npy")); }),
            path("inf.npy") + ": pixel 1 is infinite; a data set must be "
                              "finite");
  // A double beyond float's range would become infinite on the way.
  writePlain("big.npy",
             npy("<f8", "(2, 1, 2)", bytesOf<double>({0, 1e300, 2, 3})));
  EXPECT_EQ(expectError([&] { loadNpy(path("big.npy"), path("labels.npy")); }),
            path("big.npy") + ": pixel 1 is infinite; a data set must be "
                              "finite");
}

TEST_F(DataTest, IdxDimsWhoseProductOverflowsAreRefused) {
  // 2^31 * 2^31 * 4 = 2^64 wraps to 0, which matches an empty body.
  writePlain("images", idx(3, {1u << 31, 1u << 31, 4}, {}));
  writePlain("labels", idx(1, {1}, {0}));
  EXPECT_EQ(expectError([&] { loadIdx(path("images"), path("labels")); }),
            path("images") + ": holds 0 bytes of data, but its dims need "
                             "more than 2^63");
}

TEST_F(DataTest, NhwcImagesAreReadAsNchwByThePlansShape) {
  // 2 images of 3 channels, 2 x 4 pixels: pixel value = its NHWC index.
  std::vector<uint8_t> nhwc(2 * 2 * 4 * 3);
  std::iota(nhwc.begin(), nhwc.end(), uint8_t(0));
  writePlain("nhwc.npy", npy("|u1", "(2, 2, 4, 3)", nhwc));
  writePlain("labels.npy", npy("<i8", "(2,)", bytesOf<int64_t>({1, 0})));
  ImageFormat format;
  format.sample = {3, 2, 4};
  Dataset dataset = loadNpy(path("nhwc.npy"), path("labels.npy"), format);
  EXPECT_EQ(dataset.channels, 3);
  EXPECT_EQ(dataset.height, 2);
  EXPECT_EQ(dataset.width, 4);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t p = 0; p < 8; ++p)
        ASSERT_EQ(dataset.images[(n * 3 + c) * 8 + p],
                  scalePixel(nhwc[(n * 8 + p) * 3 + c]));

  // The same pixels as NCHW floats, and normalized per channel.
  std::vector<float> nchw = dataset.images;
  writePlain("nchw.npy", npy("<f4", "(2, 3, 2, 4)", bytesOf<float>(nchw)));
  EXPECT_EQ(loadNpy(path("nchw.npy"), path("labels.npy"), format).images, nchw);
  format.normalization = {{0.1f, 0.2f, 0.3f}, {0.5f, 2.0f, 0.25f}};
  Dataset normalized = loadNpy(path("nhwc.npy"), path("labels.npy"), format);
  for (size_t i = 0; i < nchw.size(); ++i) {
    int64_t c = (i / 8) % 3;
    ASSERT_EQ(normalized.images[i], (nchw[i] - format.normalization.mean[c]) /
                                        format.normalization.std[c]);
  }
  EXPECT_EQ(loadNpyImages(path("nhwc.npy"), format).images, normalized.images);

  // An explicit layout overrides the guess; one that does not fit is the
  // plan's shape error.
  format.normalization = {};
  format.layout = ImageLayout::NCHW;
  EXPECT_EQ(expectError(
                [&] { loadNpy(path("nhwc.npy"), path("labels.npy"), format); }),
            path("nhwc.npy") + ": images are 2x4x3 but the plan expects 3x2x4");
  format.layout = ImageLayout::Auto;
  format.sample = {3, 4, 2};
  EXPECT_EQ(expectError(
                [&] { loadNpy(path("nhwc.npy"), path("labels.npy"), format); }),
            path("nhwc.npy") + ": images are 2x4x3 but the plan expects "
                               "3x4x2 (NCHW) or 4x2x3 (NHWC)");
  format.sample = {3, 2, 4};
  format.normalization = {{0, 0}, {1, 1}};
  EXPECT_EQ(expectError(
                [&] { loadNpy(path("nhwc.npy"), path("labels.npy"), format); }),
            path("nhwc.npy") + ": --normalize has 2 means and stds, but the "
                               "images have 3 channels");
}

TEST_F(DataTest, ImagesThatFitBothLayoutsNeedOneNamed) {
  std::vector<float> cube(2 * 3 * 3 * 3);
  std::iota(cube.begin(), cube.end(), 0.0f);
  writePlain("cube.npy", npy("<f4", "(2, 3, 3, 3)", bytesOf<float>(cube)));
  ImageFormat format;
  format.sample = {3, 3, 3};
  EXPECT_EQ(expectError([&] { loadNpyImages(path("cube.npy"), format); }),
            path("cube.npy") + ": images 3x3x3 may be NCHW or NHWC; say "
                               "which with --layout nchw|nhwc");
  format.layout = ImageLayout::NCHW;
  EXPECT_EQ(loadNpyImages(path("cube.npy"), format).images, cube);
  format.layout = ImageLayout::NHWC;
  std::vector<float> transposed(cube.size());
  transposeNhwcToNchw(cube.data(), transposed.data(), 2, 3, 3, 3);
  EXPECT_EQ(loadNpyImages(path("cube.npy"), format).images, transposed);
  // [N, H, W] files have one channel whatever the layout says.
  writePlain("gray.npy", npy("|u1", "(1, 3, 3)", std::vector<uint8_t>(9, 51)));
  format.sample = {1, 3, 3};
  Dataset gray = loadNpyImages(path("gray.npy"), format);
  EXPECT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.images, std::vector<float>(9, 0.2f));
}

TEST_F(DataTest, ValidationIsTheLastSamplesInOrder) {
  writeSmallSet(10);
  Dataset data = loadIdx(path("images.gz"), path("labels"));
  keepFirst(data, 9);
  Dataset tail = splitOffLast(data, 3);
  EXPECT_EQ(data.count, 6);
  EXPECT_EQ(data.images.size(), 36u);
  EXPECT_EQ(data.labels, (std::vector<int32_t>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(tail.count, 3);
  EXPECT_EQ(tail.height, 2);
  EXPECT_EQ(tail.width, 3);
  EXPECT_EQ(tail.labels, (std::vector<int32_t>{2, 3, 0}));
  EXPECT_EQ(tail.numClasses, 4);
  EXPECT_EQ(tail.images[0], scalePixel(6));
  EXPECT_EQ(tail.images.back(), scalePixel(8));
  EXPECT_EQ(data.images.back(), scalePixel(5));
}

TEST(FashionMnistTest, LoadsDebiansCopy) {
  if (!fs::exists(std::string(kFashionMnistDirectory) +
                  "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dataset train = loadFashionMnist(kFashionMnistDirectory, true);
  Dataset test = loadFashionMnist(kFashionMnistDirectory, false);
  EXPECT_EQ(train.count, 60000);
  EXPECT_EQ(test.count, 10000);
  EXPECT_NO_THROW(checkImageShape(train, "train", 1, 28, 28));
  EXPECT_EQ(train.numClasses, 10);
  std::vector<int64_t> perClass(10);
  for (int32_t label : train.labels)
    ++perClass[label];
  for (int64_t n : perClass)
    EXPECT_EQ(n, 6000); // Fashion-MNIST is balanced.
  auto [lo, hi] = std::minmax_element(train.images.begin(), train.images.end());
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_EQ(*hi, 1.0f);
}

} // namespace
