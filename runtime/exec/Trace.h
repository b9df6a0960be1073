//===- Trace.h - what ran where and when, as a Chrome trace -----*- C++ -*-===//
//
// The executor brackets every kernel it launches with host functions on the
// same stream (cudaLaunchHostFunc on CUDA), so the spans are the stream's
// own view of when each kernel ran, on any device. The trace is written in
// the Chrome/Perfetto JSON format: one process per device, one thread per
// stream, so all-reduce overlapping the backward pass is visible, and one
// for the uploads of the next step's inputs.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_TRACE_H
#define DPC_RUNTIME_EXEC_TRACE_H

#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace dpc::rt {

/// What a track shows: a compute or communication stream of the plan, or
/// the device's input uploads (Executor::setInput).
enum class SpanKind { Compute, Communication, Upload };

struct TraceSpan {
  std::string name;
  int device;
  int stream; // the plan's stream index; -1 for uploads
  SpanKind kind;
  double startMicros, endMicros;
};

class Tracer {
public:
  Tracer() : origin(std::chrono::steady_clock::now()) {}

  /// Microseconds since the tracer was made.
  double now() const {
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now() - origin)
        .count();
  }
  void add(TraceSpan span);
  void setDeviceNames(std::vector<std::string> names) {
    deviceNames = std::move(names);
  }
  /// Lines that describe device `device` (Device::getRunTimeChoices), shown
  /// as its labels.
  void setDeviceNotes(int device, std::vector<std::string> notes) {
    if (device >= int(deviceNotes.size()))
      deviceNotes.resize(device + 1);
    deviceNotes[device] = std::move(notes);
  }

  std::vector<TraceSpan> getSpans() const;
  /// Writes the Chrome trace ("traceEvents" with complete events).
  void writeChromeTrace(std::ostream &out) const;

  struct Overlap {
    double communicationMicros = 0; // time spent in collectives
    double hiddenMicros = 0;        // of which, while the device computed
  };
  /// Per device: collective time, and how much of it the same device's
  /// compute streams covered.
  std::vector<Overlap> getOverlap() const;

private:
  std::chrono::steady_clock::time_point origin;
  mutable std::mutex mutex;
  std::vector<TraceSpan> spans;
  std::vector<std::string> deviceNames;
  std::vector<std::vector<std::string>> deviceNotes;
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_TRACE_H
