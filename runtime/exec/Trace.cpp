//===- Trace.cpp - what ran where and when, as a Chrome trace -------------===//

#include "runtime/exec/Trace.h"

#include <algorithm>
#include <cstdio>

using namespace dpc::rt;

void Tracer::add(TraceSpan span) {
  std::lock_guard<std::mutex> lock(mutex);
  spans.push_back(std::move(span));
}

std::vector<TraceSpan> Tracer::getSpans() const {
  std::lock_guard<std::mutex> lock(mutex);
  return spans;
}

/// JSON string contents: kernel and device names are plain, but be safe.
static std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  }
  return out;
}

static const char *nameOf(SpanKind kind) {
  switch (kind) {
  case SpanKind::Compute:
    return "compute";
  case SpanKind::Communication:
    return "communication";
  case SpanKind::Upload:
    return "upload";
  }
  return "?";
}

void Tracer::writeChromeTrace(std::ostream &out) const {
  std::vector<TraceSpan> all = getSpans();
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [";
  bool first = true;
  auto separator = [&] {
    if (!first)
      out << ",";
    first = false;
    out << "\n";
  };
  // Name the tracks: one process per device, one thread per stream.
  std::vector<std::pair<int, int>> tracks;
  for (const TraceSpan &span : all)
    if (std::find(tracks.begin(), tracks.end(),
                  std::make_pair(span.device, span.stream)) == tracks.end())
      tracks.push_back({span.device, span.stream});
  for (size_t d = 0; d < deviceNames.size(); ++d) {
    separator();
    out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << d
        << ", \"args\": {\"name\": \"" << escape(deviceNames[d]) << "\"}}";
  }
  for (size_t d = 0; d < deviceNotes.size(); ++d) {
    if (deviceNotes[d].empty())
      continue;
    std::string labels;
    for (const std::string &note : deviceNotes[d])
      labels += (labels.empty() ? "" : "; ") + note;
    separator();
    out << "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": " << d
        << ", \"args\": {\"labels\": \"" << escape(labels) << "\"}}";
  }
  for (const TraceSpan &span : all) {
    auto it = std::find(tracks.begin(), tracks.end(),
                        std::make_pair(span.device, span.stream));
    if (it == tracks.end())
      continue;
    separator();
    out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << span.device
        << ", \"tid\": " << span.stream << ", \"args\": {\"name\": \""
        << nameOf(span.kind);
    if (span.kind != SpanKind::Upload)
      out << " " << span.stream;
    out << "\"}}";
    tracks.erase(it);
  }
  char number[64];
  for (const TraceSpan &span : all) {
    separator();
    std::snprintf(number, sizeof(number), "%.3f, \"dur\": %.3f",
                  span.startMicros, span.endMicros - span.startMicros);
    out << "{\"ph\": \"X\", \"name\": \"" << escape(span.name)
        << "\", \"cat\": \"" << nameOf(span.kind)
        << "\", \"pid\": " << span.device << ", \"tid\": " << span.stream
        << ", \"ts\": " << number << "}";
  }
  out << "\n]}\n";
}

std::vector<Tracer::Overlap> Tracer::getOverlap() const {
  std::vector<TraceSpan> all = getSpans();
  int devices = 0;
  for (const TraceSpan &span : all)
    devices = std::max(devices, span.device + 1);
  std::vector<Overlap> overlap(devices);
  for (int d = 0; d < devices; ++d) {
    // The union of the device's compute spans, as sorted disjoint intervals.
    std::vector<std::pair<double, double>> compute;
    for (const TraceSpan &span : all)
      if (span.device == d && span.kind == SpanKind::Compute)
        compute.push_back({span.startMicros, span.endMicros});
    std::sort(compute.begin(), compute.end());
    std::vector<std::pair<double, double>> merged;
    for (auto interval : compute) {
      if (!merged.empty() && interval.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, interval.second);
      else
        merged.push_back(interval);
    }
    for (const TraceSpan &span : all) {
      if (span.device != d || span.kind != SpanKind::Communication)
        continue;
      overlap[d].communicationMicros += span.endMicros - span.startMicros;
      for (auto [begin, end] : merged)
        overlap[d].hiddenMicros +=
            std::max(0.0, std::min(end, span.endMicros) -
                              std::max(begin, span.startMicros));
    }
  }
  return overlap;
}
