//===- StreamEventTest.cpp - CPU streams and events -----------------------===//

#include "runtime/cpu/CpuDevice.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace dpc::rt {
namespace {

using namespace std::chrono_literals;

TEST(StreamEventTest, StreamRunsWorkInOrder) {
  CpuDevice device("cpu:0");
  auto stream = device.createStream(plan::StreamKind::Compute);
  std::vector<int> seen;
  for (int i = 0; i < 100; ++i)
    stream->enqueueHostFunction([&seen, i] { seen.push_back(i); });
  stream->synchronize();
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(seen[i], i);
}

TEST(StreamEventTest, WaitOrdersWorkAcrossStreams) {
  CpuDevice device("cpu:0");
  auto first = device.createStream(plan::StreamKind::Compute);
  auto second = device.createStream(plan::StreamKind::Communication);
  auto event = device.createEvent();
  std::mutex mutex;
  std::vector<std::string> log;
  auto note = [&](const std::string &what) {
    std::lock_guard<std::mutex> lock(mutex);
    log.push_back(what);
  };
  // Stream 1 is slow; stream 2 must still run after it, because it waits
  // for the event recorded after stream 1's work.
  first->enqueueHostFunction([&] {
    std::this_thread::sleep_for(50ms);
    note("produce");
  });
  first->record(*event);
  second->wait(*event);
  second->enqueueHostFunction([&] { note("consume"); });
  // Work on stream 2 that does not wait may run at any time; work after
  // the wait may not run before the record.
  second->synchronize();
  first->synchronize();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "produce");
  EXPECT_EQ(log[1], "consume");
}

TEST(StreamEventTest, WaitSeesOnlyRecordsEnqueuedBeforeIt) {
  // Like cudaStreamWaitEvent: waiting for a never-recorded event is a no-op.
  CpuDevice device("cpu:0");
  auto stream = device.createStream(plan::StreamKind::Compute);
  auto event = device.createEvent();
  std::atomic<bool> ran{false};
  stream->wait(*event);
  stream->enqueueHostFunction([&] { ran = true; });
  stream->synchronize();
  EXPECT_TRUE(ran);
}

TEST(StreamEventTest, RepeatedRecordsOrderEachRound) {
  CpuDevice device("cpu:0");
  auto first = device.createStream(plan::StreamKind::Compute);
  auto second = device.createStream(plan::StreamKind::Compute);
  auto event = device.createEvent();
  std::atomic<int> produced{0};
  std::vector<int> consumed;
  for (int round = 1; round <= 20; ++round) {
    first->enqueueHostFunction([&, round] {
      if (round % 5 == 0)
        std::this_thread::sleep_for(2ms);
      produced = round;
    });
    first->record(*event);
    second->wait(*event);
    second->enqueueHostFunction([&] { consumed.push_back(produced.load()); });
  }
  first->synchronize();
  second->synchronize();
  ASSERT_EQ(consumed.size(), 20u);
  for (int round = 1; round <= 20; ++round)
    EXPECT_GE(consumed[round - 1], round);
}

TEST(StreamEventTest, EventSynchronizeWaitsForTheRecord) {
  CpuDevice device("cpu:0");
  auto stream = device.createStream(plan::StreamKind::Compute);
  auto event = device.createEvent();
  std::atomic<bool> done{false};
  stream->enqueueHostFunction([&] {
    std::this_thread::sleep_for(20ms);
    done = true;
  });
  stream->record(*event);
  event->synchronize();
  EXPECT_TRUE(done);
  stream->synchronize();
}

TEST(StreamEventTest, FailureSkipsWorkButStillRecordsEvents) {
  CpuDevice device("cpu:0");
  auto first = device.createStream(plan::StreamKind::Compute);
  auto second = device.createStream(plan::StreamKind::Compute);
  auto event = device.createEvent();
  std::atomic<bool> skipped{true}, after{false};
  first->enqueueHostFunction([] { throw std::runtime_error("boom"); });
  first->enqueueHostFunction([&] { skipped = false; });
  first->record(*event);
  second->wait(*event);
  second->enqueueHostFunction([&] { after = true; });
  second->synchronize(); // would hang if the record were skipped
  EXPECT_TRUE(after);
  EXPECT_THROW(first->synchronize(), std::runtime_error);
  EXPECT_TRUE(skipped);
  // The failure is reported once; the stream works again afterwards.
  std::atomic<bool> again{false};
  first->enqueueHostFunction([&] { again = true; });
  first->synchronize();
  EXPECT_TRUE(again);
}

} // namespace
} // namespace dpc::rt
