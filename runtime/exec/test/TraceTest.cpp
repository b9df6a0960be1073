//===- TraceTest.cpp - the Chrome trace and the overlap measure ----------===//

#include "runtime/exec/Trace.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace dpc::rt;

namespace {

TEST(TraceTest, OverlapIsTheCollectivesTimeUnderTheDevicesCompute) {
  Tracer tracer;
  // Device 0 computes over [0, 10) and [20, 30); its all-reduce runs over
  // [5, 25): 5 + 5 of its 20 us are hidden.
  tracer.add({"Conv2dBackwardWeights", 0, 0, SpanKind::Compute, 0, 10});
  tracer.add({"Conv2dBackwardData", 0, 0, SpanKind::Compute, 20, 30});
  tracer.add({"AllReduce", 0, 1, SpanKind::Communication, 5, 25});
  // Device 1's compute does not hide device 0's collectives.
  tracer.add({"Conv2dBackwardData", 1, 0, SpanKind::Compute, 10, 20});
  // Overlapping compute spans count once.
  tracer.add({"ReluBackward", 1, 0, SpanKind::Compute, 12, 18});
  tracer.add({"AllReduce", 1, 1, SpanKind::Communication, 0, 40});
  // Uploads are neither communication nor compute that hides it.
  tracer.add({"upload images", 0, -1, SpanKind::Upload, 0, 40});
  std::vector<Tracer::Overlap> overlap = tracer.getOverlap();
  ASSERT_EQ(overlap.size(), 2u);
  EXPECT_DOUBLE_EQ(overlap[0].communicationMicros, 20);
  EXPECT_DOUBLE_EQ(overlap[0].hiddenMicros, 10);
  EXPECT_DOUBLE_EQ(overlap[1].communicationMicros, 40);
  EXPECT_DOUBLE_EQ(overlap[1].hiddenMicros, 10);
}

TEST(TraceTest, WritesOneTrackPerDeviceStream) {
  Tracer tracer;
  tracer.setDeviceNames({"cpu:0", "cpu:1"});
  tracer.add({"LinearForward", 1, 0, SpanKind::Compute, 1, 2.5});
  tracer.add({"AllReduce", 1, 1, SpanKind::Communication, 3, 4});
  tracer.add({"upload images", 1, -1, SpanKind::Upload, 0, 1});
  std::ostringstream out;
  tracer.writeChromeTrace(out);
  std::string json = out.str();
  EXPECT_NE(json.find("\"name\": \"process_name\", \"pid\": 1, \"args\": "
                      "{\"name\": \"cpu:1\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"tid\": 1, \"args\": {\"name\": \"communication 1\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"ph\": \"X\", \"name\": \"LinearForward\", \"cat\": "
                      "\"compute\", \"pid\": 1, \"tid\": 0, \"ts\": 1.000, "
                      "\"dur\": 1.500}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"tid\": -1, \"args\": {\"name\": \"upload\"}"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("process_labels"), std::string::npos) << json;
}

TEST(TraceTest, LabelsADeviceWithItsRunTimeChoices) {
  Tracer tracer;
  tracer.setDeviceNames({"cuda:0", "cuda:1"});
  tracer.setDeviceNotes(1, {"convolution a: \"x\"", "convolution b"});
  tracer.add({"Conv2dForward", 1, 0, SpanKind::Compute, 1, 2});
  std::ostringstream out;
  tracer.writeChromeTrace(out);
  std::string json = out.str();
  EXPECT_NE(json.find("{\"ph\": \"M\", \"name\": \"process_labels\", "
                      "\"pid\": 1, \"args\": {\"labels\": \"convolution a: "
                      "\\\"x\\\"; convolution b\"}}"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("\"process_labels\", \"pid\": 0"), std::string::npos);
}

} // namespace
