//===- ProtoWire.h - protobuf's wire format, read and written ---*- C++ -*-===//
//
// The runtime has no protobuf library, yet `dpc export -o model.onnx` adds
// to and edits the ONNX messages that `dpc compile` recorded. Protobuf's
// wire format is a sequence of (field number, wire type, value) records,
// so a message can be copied field by field, with a few fields rewritten,
// knowing only the field numbers of onnx.proto that matter.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_PROTOWIRE_H
#define DPC_RUNTIME_TRAIN_PROTOWIRE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dpc::train {

enum WireType : uint8_t {
  Varint = 0,
  Fixed64 = 1,
  LengthDelimited = 2,
  Fixed32 = 5
};

class ProtoWriter {
public:
  void varint(uint64_t value) {
    for (; value >= 0x80; value >>= 7)
      bytes.push_back(uint8_t(value | 0x80));
    bytes.push_back(uint8_t(value));
  }
  void key(int field, WireType type) { varint(uint64_t(field) << 3 | type); }
  void intField(int field, int64_t value) {
    key(field, Varint);
    varint(uint64_t(value));
  }
  template <typename Bytes> void bytesField(int field, const Bytes &data) {
    key(field, LengthDelimited);
    varint(data.size());
    bytes.insert(bytes.end(), data.begin(), data.end());
  }
  template <typename Bytes> void raw(const Bytes &data) {
    bytes.insert(bytes.end(), data.begin(), data.end());
  }

  std::vector<uint8_t> bytes;
};

/// One record of a message: its field, wire type, value (varints and
/// fixed) or payload (length-delimited), and its whole encoding, key
/// included, to copy it unchanged.
struct ProtoField {
  int number = 0;
  WireType type = Varint;
  uint64_t value = 0;
  std::string_view payload, encoding;
};

/// Walks the records of one message. next() is false at the end, or at
/// malformed bytes, which failed() then tells.
class ProtoReader {
public:
  explicit ProtoReader(std::string_view message) : rest(message) {}
  template <typename Bytes>
  explicit ProtoReader(const Bytes &message)
      : rest(reinterpret_cast<const char *>(message.data()), message.size()) {}

  bool next(ProtoField &field) {
    if (rest.empty() || bad)
      return false;
    const char *start = rest.data();
    uint64_t key;
    if (!readVarint(key) || (key >> 3) == 0 || (key >> 3) > INT32_MAX)
      return fail();
    field.number = int(key >> 3);
    field.type = WireType(key & 7);
    field.payload = {};
    switch (field.type) {
    case Varint:
      if (!readVarint(field.value))
        return fail();
      break;
    case Fixed64:
    case Fixed32: {
      size_t size = field.type == Fixed64 ? 8 : 4;
      if (rest.size() < size)
        return fail();
      field.payload = rest.substr(0, size);
      rest.remove_prefix(size);
      break;
    }
    case LengthDelimited: {
      uint64_t size;
      if (!readVarint(size) || size > rest.size())
        return fail();
      field.payload = rest.substr(0, size);
      rest.remove_prefix(size);
      break;
    }
    default:
      return fail(); // groups: onnx.proto has none
    }
    field.encoding = std::string_view(start, rest.data() - start);
    return true;
  }
  bool failed() const { return bad; }

private:
  bool readVarint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64 && !rest.empty(); shift += 7) {
      uint8_t byte = uint8_t(rest.front());
      rest.remove_prefix(1);
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }
  bool fail() {
    bad = true;
    return false;
  }

  std::string_view rest;
  bool bad = false;
};

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_PROTOWIRE_H
