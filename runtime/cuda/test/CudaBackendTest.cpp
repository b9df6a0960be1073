//===- CudaBackendTest.cpp - the CUDA backend against the CPU one ---------===//
//
// Without a GPU (this project's CI): the status wrappers' messages, and the
// one-line "no usable GPU" error of createDevice, run for real; every test
// that needs a GPU says it is skipped, and why.
//
// With GPUs: the CPU suite's MLP plans (SGD with momentum, AdamW, two
// streams, data parallel over NCCL) train on cuda:* devices and must match
// the CPU backend's losses, outputs and parameters; streams and events keep
// Device.h's order; NCCL all-reduces like the in-process communicator.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/Communicator.h"
#include "runtime/comm/InProcessCommunicator.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/cuda/OwnKernels.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/test/TrainingRuns.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <thread>

namespace dpc::cuda {
namespace {

using plan::test::Batch;
using plan::test::MlpPlanOptions;
using plan::test::randomBatch;
using plan::test::smallMlp;

/// The number of usable GPUs, or 0 with the reason in `why`.
int countGpus(std::string &why) {
  try {
    return getVisibleDeviceCount();
  } catch (const std::exception &error) {
    why = error.what();
    return 0;
  }
}

#define REQUIRE_GPUS(n)                                                        \
  do {                                                                         \
    std::string why;                                                           \
    int gpus = countGpus(why);                                                 \
    if (gpus < (n))                                                            \
      GTEST_SKIP() << "needs " << (n) << " GPU(s), this machine has " << gpus  \
                   << (why.empty() ? "" : ": " + why);                         \
  } while (false)

//===----------------------------------------------------------------------===//
// Without a GPU
//===----------------------------------------------------------------------===//

// No GPU needed: the table is built by including Kernels.def, so a kernel
// without a CUDA function does not compile; none may be left null.
TEST(CudaKernelTableTest, HasEveryKernelOfTheList) {
  const plan::KernelTable<cuda::StreamContext> &table =
      cuda::getCudaKernelTable();
  for (size_t k = 0; k < plan::kNumKernels; ++k)
    EXPECT_NE(table.kernels[k], nullptr)
        << plan::EnumNameKernel(static_cast<plan::Kernel>(k));
  EXPECT_NE(table.zeroResults, nullptr);
}

TEST(CudaCheckTest, StatusesBecomeOneLineWithCallAndMeaning) {
  EXPECT_EQ(describeStatus(cudaErrorInvalidValue),
            "cudaErrorInvalidValue (invalid argument)");
  EXPECT_NE(describeStatus(CUBLAS_STATUS_NOT_INITIALIZED)
                .find("CUBLAS_STATUS_NOT_INITIALIZED"),
            std::string::npos);
  EXPECT_NE(
      describeStatus(CUDNN_STATUS_BAD_PARAM).find("CUDNN_STATUS_BAD_PARAM"),
      std::string::npos);
  EXPECT_NE(describeStatus(ncclInvalidArgument).find("invalid argument"),
            std::string::npos);
  EXPECT_TRUE(meansNoGpu(cudaErrorInsufficientDriver));
  EXPECT_TRUE(meansNoGpu(cudaErrorNoDevice));
  EXPECT_FALSE(meansNoGpu(cudaErrorInvalidValue));
  EXPECT_TRUE(meansNoGpu(CUBLAS_STATUS_NOT_INITIALIZED));
  EXPECT_TRUE(meansNoGpu(CUDNN_STATUS_NOT_INITIALIZED));
  EXPECT_TRUE(meansNoGpu(ncclUnhandledCudaError));

  // A real failing call: a null stream pointer is invalid with or without
  // a GPU (without one, the missing driver is reported first).
  try {
    DPC_CUDA_CHECK(cudaStreamCreate(nullptr));
    FAIL() << "cudaStreamCreate(nullptr) succeeded";
  } catch (const CudaError &error) {
    std::string line = error.what();
    EXPECT_NE(line.find("cudaStreamCreate(nullptr) failed: cuda"),
              std::string::npos)
        << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

TEST(CudaDeviceTest, WithoutAGpuCreateDeviceSaysSoInOneLine) {
  std::string why;
  if (countGpus(why) > 0)
    GTEST_SKIP() << "this machine has a GPU";
  // Every library agrees there is no GPU.
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  try {
    DPC_CUDA_CHECK(cublasCreate(&cublas));
    FAIL() << "cublasCreate succeeded without a GPU";
  } catch (const CudaError &error) {
    EXPECT_TRUE(error.noGpu) << error.what();
  }
  try {
    DPC_CUDA_CHECK(cudnnCreate(&cudnn));
    FAIL() << "cudnnCreate succeeded without a GPU";
  } catch (const CudaError &error) {
    EXPECT_TRUE(error.noGpu) << error.what();
  }
  for (const char *name : {"cuda:0", "cuda:1"}) {
    try {
      rt::createDevice(name);
      FAIL() << name << " was created without a GPU";
    } catch (const std::runtime_error &error) {
      std::string line = error.what();
      EXPECT_EQ(line.find('\n'), std::string::npos) << line;
      EXPECT_EQ(line.rfind(std::string("device '") + name +
                               "' is not available: no usable GPU (",
                           0),
                0u)
          << line;
      EXPECT_NE(line.find("; compile for --devices cpu:0[,cpu:1,...]"),
                std::string::npos)
          << line;
    }
  }
}

TEST(CudaDeviceTest, MalformedNamesAreRejected) {
  for (const char *name : {"cuda:", "cuda:x", "cuda:-1", "cudax"}) {
    try {
      rt::createDevice(name);
      FAIL() << name << " was accepted";
    } catch (const std::runtime_error &error) {
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos)
          << error.what();
    }
  }
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

TEST(CudaStreamTest, WaitsSeeTheRecordsEnqueuedBeforeThem) {
  REQUIRE_GPUS(1);
  CudaDevice device("cuda:0", 0);
  auto a = device.createStream(plan::StreamKind::Compute);
  auto b = device.createStream(plan::StreamKind::Communication);
  auto event = device.createEvent();
  std::atomic<int> counter{0};
  int seenByB = -1;
  // a: a slow host function, then the record; b waits, then reads.
  a->enqueueHostFunction([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    counter = 1;
  });
  a->record(*event);
  b->wait(*event);
  b->enqueueHostFunction([&] { seenByB = counter.load(); });
  b->synchronize();
  a->synchronize();
  EXPECT_EQ(seenByB, 1);
  // A wait for an event never recorded is a no-op.
  auto fresh = device.createEvent();
  b->wait(*fresh);
  b->synchronize();
  event->synchronize();
}

TEST(CudaStreamTest, MemoryIsZeroedAndCopiesRoundTrip) {
  REQUIRE_GPUS(1);
  CudaDevice device("cuda:0", 0);
  rt::DeviceBuffer buffer(device, 4096);
  std::vector<uint8_t> host(4096, 0xff);
  device.copyToHost(host.data(), buffer.get(), host.size());
  EXPECT_EQ(std::accumulate(host.begin(), host.end(), 0), 0);
  std::iota(host.begin(), host.end(), uint8_t(0));
  device.copyFromHost(buffer.get(), host.data(), host.size());
  std::vector<uint8_t> back(4096);
  device.copyToHost(back.data(), buffer.get(), back.size());
  EXPECT_EQ(back, host);
}

/// x rounded to bfloat16, nearest even (NaN aside), as oneDNN rounds.
static uint16_t roundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

// The casts a bf16 convolution makes: round to nearest even (ties both
// ways, the largest finite values, denormals), and back exactly.
TEST(CudaCastTest, Bf16RoundsToNearestEvenAndWidensExactly) {
  REQUIRE_GPUS(1);
  CudaDevice device("cuda:0", 0);
  std::vector<float> x = {0.f,
                          -0.f,
                          1.f,
                          1.00390625f /* a tie, to even */,
                          1.01171875f /* a tie, up */,
                          3.4e38f,
                          -2.5e-39f,
                          1e-45f};
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.f, 10.f);
  for (int i = 0; i < 1000; ++i)
    x.push_back(normal(random));
  size_t n = x.size();
  rt::DeviceBuffer in(device, n * 4), half(device, n * 2), out(device, n * 4);
  device.copyFromHost(in.get(), x.data(), n * 4);
  std::unique_ptr<rt::Stream> stream =
      device.createStream(plan::StreamKind::Compute);
  cudaStream_t cuda = static_cast<CudaStream &>(*stream).get();
  castToBf16(cuda, int64_t(n), static_cast<const float *>(in.get()),
             static_cast<uint16_t *>(half.get()));
  castFromBf16(cuda, int64_t(n), static_cast<const uint16_t *>(half.get()),
               static_cast<float *>(out.get()));
  stream->synchronize();
  std::vector<uint16_t> rounded(n);
  std::vector<float> widened(n);
  device.copyToHost(rounded.data(), half.get(), n * 2);
  device.copyToHost(widened.data(), out.get(), n * 4);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(rounded[i], roundToBf16(x[i])) << "x = " << x[i];
    uint32_t bits = uint32_t(rounded[i]) << 16;
    float expected;
    std::memcpy(&expected, &bits, sizeof expected);
    EXPECT_EQ(widened[i], expected) << "x = " << x[i];
  }
}

TEST(NcclCommunicatorTest, AllReduceLikeTheInProcessCommunicator) {
  REQUIRE_GPUS(1);
  std::string why;
  int gpus = std::min(countGpus(why), 4);
  std::vector<std::unique_ptr<CudaDevice>> devices;
  std::vector<int> ordinals;
  for (int d = 0; d < gpus; ++d) {
    devices.push_back(
        std::make_unique<CudaDevice>("cuda:" + std::to_string(d), d));
    ordinals.push_back(d);
  }
  auto comms = NcclCommunicator::createGroup(ordinals);
  std::vector<rt::DeviceBuffer> floats, ints;
  for (int d = 0; d < gpus; ++d) {
    std::vector<float> f = {float(d + 1), -2.f * d, 0.5f};
    std::vector<int32_t> i = {d + 1, 7, -d};
    floats.emplace_back(*devices[d], 12);
    ints.emplace_back(*devices[d], 12);
    devices[d]->copyFromHost(floats[d].get(), f.data(), 12);
    devices[d]->copyFromHost(ints[d].get(), i.data(), 12);
  }
  // One thread per rank, as the devices' dispatch threads call it.
  std::vector<std::thread> ranks;
  for (int d = 0; d < gpus; ++d)
    ranks.emplace_back([&, d] {
      comms[d]->allReduce({{floats[d].get(), 3, plan::DType::F32},
                           {ints[d].get(), 3, plan::DType::I32}},
                          plan::ReduceOp::Mean);
    });
  for (std::thread &t : ranks)
    t.join();
  double n = gpus;
  for (int d = 0; d < gpus; ++d) {
    std::vector<float> f(3);
    std::vector<int32_t> i(3);
    devices[d]->copyToHost(f.data(), floats[d].get(), 12);
    devices[d]->copyToHost(i.data(), ints[d].get(), 12);
    EXPECT_FLOAT_EQ(f[0], float((n + 1) / 2));
    EXPECT_FLOAT_EQ(f[1], float(-(n - 1)));
    EXPECT_FLOAT_EQ(f[2], 0.5f);
    EXPECT_EQ(i[0], int32_t(gpus * (gpus + 1) / 2 / gpus));
    EXPECT_EQ(i[1], 7);
  }
}

// Uneven parts (one empty where there are two GPUs or more) take the
// grouped ncclReduce/ncclBroadcast path, even ones ncclReduceScatter and
// ncclAllGather. NCCL fixes no reduction order, so a reduce-scatter is
// compared with the all-reduce to float tolerance; an all-gather is exact.
TEST(NcclCommunicatorTest, ReduceScatterAndAllGatherLikeAllReduce) {
  REQUIRE_GPUS(1);
  std::string why;
  int gpus = std::min(countGpus(why), 4);
  std::vector<std::unique_ptr<CudaDevice>> devices;
  std::vector<int> ordinals;
  for (int d = 0; d < gpus; ++d) {
    devices.push_back(
        std::make_unique<CudaDevice>("cuda:" + std::to_string(d), d));
    ordinals.push_back(d);
  }
  auto comms = NcclCommunicator::createGroup(ordinals);
  for (bool even : {true, false}) {
    std::vector<int64_t> sizes;
    for (int d = 0; d < gpus; ++d)
      sizes.push_back(even ? 1000 : (d == 1 ? 0 : 1000 + 37 * d));
    int64_t count = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
    std::vector<std::vector<float>> inputs(gpus);
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (auto &input : inputs)
      for (int64_t i = 0; i < count; ++i)
        input.push_back(uniform(random));
    std::vector<rt::DeviceBuffer> reduced, scattered, gathered;
    for (int d = 0; d < gpus; ++d) {
      for (auto *buffers : {&reduced, &scattered, &gathered}) {
        buffers->emplace_back(*devices[d], count * 4);
        devices[d]->copyFromHost(buffers->back().get(), inputs[d].data(),
                                 count * 4);
      }
    }
    auto offset = [&](int d) {
      return std::accumulate(sizes.begin(), sizes.begin() + d, int64_t(0));
    };
    auto onEveryGpu = [&](const std::function<void(int)> &body) {
      std::vector<std::thread> ranks;
      for (int d = 0; d < gpus; ++d)
        ranks.emplace_back(body, d);
      for (std::thread &t : ranks)
        t.join();
    };
    onEveryGpu([&](int d) {
      comms[d]->allReduce(static_cast<float *>(reduced[d].get()), count,
                          plan::ReduceOp::Sum);
      auto *whole = static_cast<float *>(scattered[d].get());
      comms[d]->reduceScatter(
          {{whole, whole + offset(d), sizes, plan::DType::F32}},
          plan::ReduceOp::Sum);
      // Each rank's part of `gathered` is its own input: gather them.
      auto *all = static_cast<float *>(gathered[d].get());
      comms[d]->allGather({{all, all + offset(d), sizes, plan::DType::F32}});
    });
    for (int d = 0; d < gpus; ++d) {
      std::vector<float> want(count), part(count), all(count);
      devices[d]->copyToHost(want.data(), reduced[d].get(), count * 4);
      devices[d]->copyToHost(part.data(), scattered[d].get(), count * 4);
      devices[d]->copyToHost(all.data(), gathered[d].get(), count * 4);
      for (int64_t i = offset(d); i < offset(d) + sizes[d]; ++i)
        ASSERT_NEAR(part[i], want[i], 1e-6f * gpus) << "rank " << d;
      for (int r = 0; r < gpus; ++r)
        for (int64_t i = offset(r); i < offset(r) + sizes[r]; ++i)
          ASSERT_EQ(all[i], inputs[r][i]) << "rank " << d << ", part " << r;
    }
  }
}

TEST(NcclCommunicatorTest, RanksMeetThroughTheHostGroupAndTimeOut) {
  REQUIRE_GPUS(2);
  // Rank mode on threads: each rank's NCCL communicator is made through its
  // host communicator (here in-process), one GPU each.
  auto host = comm::createInProcessGroup(2);
  std::vector<std::unique_ptr<CudaDevice>> devices;
  std::vector<rt::DeviceBuffer> buffers;
  for (int d = 0; d < 2; ++d) {
    devices.push_back(
        std::make_unique<CudaDevice>("cuda:" + std::to_string(d), d));
    std::vector<float> values = {float(d + 1), float(10 * d)};
    buffers.emplace_back(*devices[d], 8);
    devices[d]->copyFromHost(buffers[d].get(), values.data(), 8);
  }
  std::vector<std::vector<float>> results(2, std::vector<float>(2));
  std::string timeoutError;
  std::atomic<bool> rankZeroDone{false};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      auto nccl = NcclCommunicator::createForRank(
          *host[r], r, std::chrono::milliseconds(500));
      comm::ReduceBuffer buffer{buffers[r].get(), 2, plan::DType::F32};
      nccl->broadcast({buffer}, 1);                   // {2, 10} everywhere
      nccl->allReduce({buffer}, plan::ReduceOp::Sum); // {4, 20}
      devices[r]->copyToHost(results[r].data(), buffers[r].get(), 8);
      if (r == 0) {
        // Rank 1 never joins: rank 0 gives up after the timeout.
        try {
          nccl->broadcast({buffer}, 0);
        } catch (const comm::CommError &error) {
          timeoutError = error.what();
        }
        rankZeroDone = true;
      } else {
        while (!rankZeroDone)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  for (std::thread &t : ranks)
    t.join();
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(results[r], (std::vector<float>{4.f, 20.f})) << "rank " << r;
  EXPECT_EQ(timeoutError.rfind("broadcast #3 (nccl, rank 0 of 2, cuda:0): "
                               "timed out after 0.5 s",
                               0),
            0u)
      << timeoutError;
}

TEST(NcclCommunicatorTest, AStepsAllReduceThatARankNeverJoinsTimesOut) {
  REQUIRE_GPUS(2);
  // Rank 0 enqueues a step's all-reduce on its communication stream; rank
  // 1 never does. Rank 0's stream wait ends after the timeout, in one line.
  auto host = comm::createInProcessGroup(2);
  std::vector<std::unique_ptr<CudaDevice>> devices;
  std::vector<std::unique_ptr<comm::Communicator>> nccl(2);
  for (int d = 0; d < 2; ++d)
    devices.push_back(
        std::make_unique<CudaDevice>("cuda:" + std::to_string(d), d));
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      nccl[r] = createCudaRankCommunicator(*devices[r], *host[r],
                                           std::chrono::milliseconds(500));
    });
  for (std::thread &t : ranks)
    t.join();
  rt::DeviceBuffer buffer(*devices[0], 8);
  auto stream = devices[0]->createStream(plan::StreamKind::Communication);
  static_cast<NcclCommunicator &>(*nccl[0]).enqueueAllReduce(
      {{buffer.get(), 2, plan::DType::F32}}, plan::ReduceOp::Sum,
      static_cast<CudaStream &>(*stream).get());
  std::string error;
  try {
    stream->synchronize();
  } catch (const comm::CommError &e) {
    error = e.what();
  }
  EXPECT_EQ(error.rfind("all-reduce #1 (nccl, rank 0 of 2, cuda:0): timed "
                        "out after 0.5 s inside a step",
                        0),
            0u)
      << error;
}

//===----------------------------------------------------------------------===//
// Plans: the CPU suite's MLP on GPUs
//===----------------------------------------------------------------------===//

/// Every device of the plan on the GPU of the same index.
std::unique_ptr<rt::Device> onGpu(const std::string &name,
                                  const rt::DeviceOptions &) {
  return createCudaDevice("cuda:" + name.substr(name.find(':') + 1));
}

using rt::test::Trained;

Trained train(const MlpPlanOptions &o, bool gpu,
              const std::vector<Batch> &batches) {
  auto plan =
      plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(o), "test.plan");
  rt::Executor executor(plan, gpu ? rt::DeviceFactory(onGpu)
                                  : rt::DeviceFactory(rt::createDevice));
  return rt::test::trainOn(executor, batches, [](size_t) { return 0.1f; });
}

void expectGpuMatchesCpu(MlpPlanOptions o, std::vector<int64_t> rows) {
  std::vector<Batch> batches;
  for (int64_t r : rows)
    batches.push_back(randomBatch(o, r, uint32_t(100 + batches.size())));
  Trained cpu = train(o, false, batches), gpu = train(o, true, batches);
  ASSERT_EQ(cpu.losses.size(), gpu.losses.size());
  for (size_t i = 0; i < cpu.losses.size(); ++i)
    EXPECT_NEAR(gpu.losses[i], cpu.losses[i], 1e-5 * std::fabs(cpu.losses[i]))
        << "step " << i;
  ASSERT_EQ(cpu.state.size(), gpu.state.size());
  for (size_t p = 0; p < cpu.state.size(); ++p)
    for (size_t i = 0; i < cpu.state[p].size(); ++i)
      ASSERT_NEAR(gpu.state[p][i], cpu.state[p][i],
                  1e-5 * std::max(1.f, std::fabs(cpu.state[p][i])))
          << "tensor " << p << " element " << i;
}

TEST(CudaPlanTest, SgdMomentumMatchesCpu) {
  REQUIRE_GPUS(1);
  MlpPlanOptions o = smallMlp();
  o.momentum = 0.9;
  o.weightDecay = 1e-3;
  expectGpuMatchesCpu(o, {8, 8, 8, 5, 1});
}

TEST(CudaPlanTest, AdamWOnTwoStreamsMatchesCpu) {
  REQUIRE_GPUS(1);
  MlpPlanOptions o = smallMlp();
  o.optimizer = "adamw";
  o.twoStreams = true;
  o.correctDtype = plan::DType::F32;
  expectGpuMatchesCpu(o, {8, 8, 3});
}

TEST(CudaPlanTest, DataParallelOverNcclMatchesCpu) {
  REQUIRE_GPUS(2);
  MlpPlanOptions o = smallMlp();
  o.momentum = 0.9;
  o.split = {3, 5};
  // Full batches, a ragged one, and one where device 0 gets no rows.
  expectGpuMatchesCpu(o, {8, 8, 5, 1});
}

} // namespace
} // namespace dpc::cuda
