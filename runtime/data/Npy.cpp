//===- Npy.cpp - NumPy .npy arrays ----------------------------------------===//

#include "runtime/data/Npy.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/data/DatasetError.h"
#include "runtime/io/FileRead.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <type_traits>

using namespace dpc::data;

namespace {

[[noreturn]] void fail(const std::string &path, const std::string &message) {
  throw DatasetError(path + ": " + message);
}

/// The value of `'key': VALUE` in the header dict, up to `end`.
std::string headerField(const std::string &path, const std::string &header,
                        const std::string &key, char end) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    fail(path, "the .npy header has no '" + key + "'");
  size_t colon = header.find(':', at);
  size_t stop = header.find(end, colon + 1);
  if (colon == std::string::npos || stop == std::string::npos)
    fail(path, "malformed .npy header");
  return header.substr(colon + 1, stop - colon);
}

/// Bytes per element of a NumPy type string ("f4": 4), or 0 for one this
/// reader does not know.
int64_t elementSize(const std::string &dtype) {
  static const char *const kKnown[] = {"f4", "f8", "i1", "i2", "i4",
                                       "i8", "u1", "u2", "u4", "u8"};
  for (const char *known : kKnown)
    if (dtype == known)
      return dtype[1] - '0';
  return 0;
}

/// The dims of a header's shape tuple, "(60000, 28, 28)".
std::vector<int64_t> parseShape(const std::string &path,
                                const std::string &shape) {
  std::vector<int64_t> dims;
  size_t open = shape.find('(');
  if (open == std::string::npos)
    fail(path, "malformed shape in the .npy header");
  const char *at = shape.c_str() + open + 1;
  while (*at) {
    if (!std::isdigit(static_cast<unsigned char>(*at))) {
      ++at;
      continue;
    }
    char *end = nullptr;
    errno = 0;
    long long dim = std::strtoll(at, &end, 10);
    if (errno == ERANGE)
      fail(path, "a dimension of the .npy shape is out of range");
    dims.push_back(dim);
    at = end;
  }
  return dims;
}

/// Whether the integer `value` is one T holds exactly.
template <typename T, typename S> bool fitsExactly(S value) {
  if constexpr (std::is_signed_v<S> && !std::is_signed_v<T>)
    if (value < 0)
      return false;
  if constexpr (!std::is_signed_v<S> && std::is_signed_v<T>)
    return static_cast<std::make_unsigned_t<T>>(value) == value &&
           static_cast<T>(value) >= 0;
  return static_cast<S>(static_cast<T>(value)) == value;
}

} // namespace

int64_t NpyArray::elementCount() const {
  return checkedProduct(shape).value_or(-1);
}

template <typename T> std::vector<T> NpyArray::as() const {
  std::vector<T> result(elementCount());
  auto convert = [&](auto sample) {
    using S = decltype(sample);
    for (size_t i = 0; i < result.size(); ++i) {
      S value;
      std::memcpy(&value, bytes.data() + i * sizeof(S), sizeof(S));
      // Integers to integers exactly (labels, token ids): a value that
      // would wrap is refused, never narrowed.
      if constexpr (std::is_integral_v<T> && std::is_integral_v<S>)
        if (!fitsExactly<T>(value))
          throw DatasetError("element " + std::to_string(i) + " (" +
                             std::to_string(value) + ") does not fit in " +
                             (std::is_signed_v<T> ? "int" : "uint") +
                             std::to_string(sizeof(T) * 8));
      result[i] = static_cast<T>(value);
    }
  };
  // Every type readNpy accepts (elementSize) converts.
  if (dtype == "f4")
    convert(float());
  else if (dtype == "f8")
    convert(double());
  else if (dtype == "i1")
    convert(int8_t());
  else if (dtype == "i2")
    convert(int16_t());
  else if (dtype == "i4")
    convert(int32_t());
  else if (dtype == "i8")
    convert(int64_t());
  else if (dtype == "u1")
    convert(uint8_t());
  else if (dtype == "u2")
    convert(uint16_t());
  else if (dtype == "u4")
    convert(uint32_t());
  else if (dtype == "u8")
    convert(uint64_t());
  else
    throw DatasetError("unsupported .npy element type '" + dtype + "'");
  return result;
}

template std::vector<float> NpyArray::as<float>() const;
template std::vector<double> NpyArray::as<double>() const;
template std::vector<int32_t> NpyArray::as<int32_t>() const;
template std::vector<int64_t> NpyArray::as<int64_t>() const;

NpyArray dpc::data::readNpy(const std::string &path) {
  std::vector<uint8_t> data;
  std::string error;
  if (!io::readFile(path, data, error))
    throw DatasetError(error);
  static const char kMagic[] = "\x93NUMPY";
  if (data.size() < 10 || std::memcmp(data.data(), kMagic, 6) != 0)
    fail(path, "not a .npy file");
  uint8_t major = data[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = data[8] | size_t(data[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12)
      fail(path, "truncated .npy header");
    headerLength = data[8] | size_t(data[9]) << 8 | size_t(data[10]) << 16 |
                   size_t(data[11]) << 24;
    headerStart = 12;
  } else {
    fail(path,
         ".npy format version " + std::to_string(major) + " is not supported");
  }
  if (data.size() < headerStart + headerLength)
    fail(path, "truncated .npy header");
  std::string header(data.begin() + headerStart,
                     data.begin() + headerStart + headerLength);

  NpyArray array;
  std::string descr = headerField(path, header, "descr", ',');
  size_t quote = descr.find('\'');
  size_t close = descr.find('\'', quote + 1);
  if (quote == std::string::npos || close == std::string::npos)
    fail(path, "malformed dtype in the .npy header");
  std::string type = descr.substr(quote + 1, close - quote - 1);
  if (type.size() < 3 || (type[0] != '<' && type[0] != '|'))
    fail(path, "dtype '" + type + "' is not little-endian");
  array.dtype = type.substr(1);
  if (headerField(path, header, "fortran_order", ',').find("True") !=
      std::string::npos)
    fail(path, "Fortran-ordered arrays are not supported");
  std::string shape = headerField(path, header, "shape", ')');
  array.shape = parseShape(path, shape);
  int64_t size = elementSize(array.dtype);
  if (size == 0)
    fail(path, "unsupported .npy element type '" + array.dtype + "'");
  std::optional<int64_t> expected =
      checkedMul(checkedProduct(array.shape).value_or(-1), size);
  if (!expected || *expected < 0)
    fail(path, "shape" + shape + " is too large");
  size_t available = data.size() - headerStart - headerLength;
  if (available != static_cast<uint64_t>(*expected))
    fail(path, "holds " + std::to_string(available) +
                   " bytes of data, but its shape needs " +
                   std::to_string(*expected));
  array.bytes.assign(data.begin() + headerStart + headerLength, data.end());
  return array;
}
