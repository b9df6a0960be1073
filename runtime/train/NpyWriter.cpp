//===- NpyWriter.cpp - .npy and .npz files for NumPy and PyTorch ----------===//

#include "runtime/train/NpyWriter.h"
#include "runtime/io/FileWrite.h"
#include "runtime/train/Trainer.h"

#include <array>

namespace dpc::train {
namespace {

template <typename T> void put(std::vector<uint8_t> &out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out.push_back(uint8_t(uint64_t(value) >> (8 * i)));
}

uint32_t crc32(const std::vector<uint8_t> &bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (uint8_t b : bytes)
    crc = table[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

/// The fields a ZIP local header and central directory entry share, from
/// "version needed" to the extra field's length.
void putEntryFields(std::vector<uint8_t> &out, const std::string &name,
                    uint32_t crc, uint32_t size) {
  put<uint16_t>(out, 20);   // version needed: 2.0
  put<uint16_t>(out, 0);    // flags
  put<uint16_t>(out, 0);    // stored, not compressed
  put<uint16_t>(out, 0);    // time 00:00
  put<uint16_t>(out, 0x21); // date 1980-01-01: the file is reproducible
  put<uint32_t>(out, crc);
  put<uint32_t>(out, size); // compressed
  put<uint32_t>(out, size); // uncompressed
  put<uint16_t>(out, uint16_t(name.size()));
  put<uint16_t>(out, 0); // extra field
}

} // namespace

std::vector<uint8_t> encodeNpy(const std::string &descr,
                               const std::vector<int64_t> &shape,
                               const void *data, size_t bytes) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (int64_t d : shape)
    header += std::to_string(d) + ", ";
  header += "), }";
  // Magic, version, header length, then the header padded with spaces and
  // a newline so that the data starts 64-byte aligned.
  size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  put<uint16_t>(out, uint16_t(header.size()));
  out.insert(out.end(), header.begin(), header.end());
  const auto *p = static_cast<const uint8_t *>(data);
  out.insert(out.end(), p, p + bytes);
  return out;
}

std::vector<uint8_t> encodeNpz(const std::vector<NpzEntry> &entries) {
  std::vector<uint8_t> out, directory;
  for (const NpzEntry &entry : entries) {
    std::string name = entry.name + ".npy";
    uint32_t crc = crc32(entry.npy), size = uint32_t(entry.npy.size());
    uint32_t offset = uint32_t(out.size());
    put<uint32_t>(out, 0x04034b50);
    putEntryFields(out, name, crc, size);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), entry.npy.begin(), entry.npy.end());

    put<uint32_t>(directory, 0x02014b50);
    put<uint16_t>(directory, 20); // made by: 2.0
    putEntryFields(directory, name, crc, size);
    put<uint16_t>(directory, 0); // comment
    put<uint16_t>(directory, 0); // disk
    put<uint16_t>(directory, 0); // internal attributes
    put<uint32_t>(directory, 0); // external attributes
    put<uint32_t>(directory, offset);
    directory.insert(directory.end(), name.begin(), name.end());
  }
  if (out.size() + directory.size() > 0xffffffffu || entries.size() > 0xffff)
    throw RunError("too large for an .npz file without ZIP64 (4 GiB, 65535 "
                   "arrays)");
  uint32_t directoryOffset = uint32_t(out.size());
  out.insert(out.end(), directory.begin(), directory.end());
  put<uint32_t>(out, 0x06054b50);
  put<uint16_t>(out, 0); // this disk
  put<uint16_t>(out, 0); // the directory's disk
  put<uint16_t>(out, uint16_t(entries.size()));
  put<uint16_t>(out, uint16_t(entries.size()));
  put<uint32_t>(out, uint32_t(directory.size()));
  put<uint32_t>(out, directoryOffset);
  put<uint16_t>(out, 0); // comment
  return out;
}

void writeFileAtomically(const std::string &path,
                         const std::vector<uint8_t> &bytes) {
  std::string error;
  if (!io::writeFileAtomically(path, bytes.data(), bytes.size(), error))
    throw RunError(error);
}

} // namespace dpc::train
