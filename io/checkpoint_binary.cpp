// checkpoint_binary.cpp — the binary checkpoint codec: a fixed 24-byte header, then a payload
// written with cereal's portable binary archive (little-endian, fixed-size integers).
//
//   header   "TAPEGRAD" | u32 version | u32 CRC-32 of the payload | u64 payload size
//   payload  kind, metadata entries, sections of named tensors (docs/checkpoint-format.md)
//
// Strings are not read with cereal's std::string support, which resizes to whatever length
// the file claims: every length and count goes through PayloadReader, which checks it
// against the bytes that remain before allocating.
#include <cstdio>
#include <cstring>
#include <sstream>

#include <cereal/archives/portable_binary.hpp>

#include "checksum.hpp"
#include "codec.hpp"
#include "json.hpp"
#include "names.hpp"

namespace tapegrad::io::detail {

namespace {

constexpr std::size_t kHeaderBytes = 24;
// Metadata value types in the file.
constexpr std::uint8_t kMetaInt = 0, kMetaDouble = 1, kMetaString = 2;

using Writer = cereal::PortableBinaryOutputArchive;

void write_string(Writer& ar, const std::string& s) {
  ar(static_cast<std::uint64_t>(s.size()));
  ar(cereal::binary_data(s.data(), s.size()));
}

void write_tensor(Writer& ar, const std::string& name, const Tensor& t) {
  write_string(ar, name);
  ar(dtype_code(t.dtype()));
  ar(static_cast<std::uint8_t>(t.dim()));
  for (std::int64_t d : t.shape()) ar(d);
  const Tensor values = contiguous_values(t);
  const std::uint64_t nbytes = static_cast<std::uint64_t>(values.numel()) * size_of(values.dtype());
  ar(nbytes);
  // Typed, so that the portable archive would swap bytes per element on a big-endian host.
  dispatch_all(values.dtype(), "save", [&]<typename T>() { ar(cereal::binary_data(values.data<T>(), nbytes)); });
}

class PayloadReader {
 public:
  PayloadReader(std::string_view payload, const std::string& source)
      : source_(source), buf_(payload), stream_(&buf_), ar_(stream_) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw FormatError(source_ + ": " + why + " (payload offset " + std::to_string(buf_.position()) + ")");
  }
  std::size_t remaining() const { return buf_.remaining(); }

  // Fails unless n more bytes remain; called before every read and allocation.
  void need(std::uint64_t n, const std::string& what) const {
    if (n > buf_.remaining())
      fail("the payload ends inside " + what + ": " + std::to_string(n) + " bytes needed, " +
           std::to_string(buf_.remaining()) + " remain");
  }

  template <typename T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T value{};
    ar_(value);
    return value;
  }

  std::string read_string(std::uint64_t max_bytes, const std::string& what) {
    const auto size = read<std::uint64_t>("the length of " + what);
    if (size > max_bytes) fail(what + " claims " + std::to_string(size) + " bytes (at most " + std::to_string(max_bytes) + ")");
    need(size, what);
    std::string s(static_cast<std::size_t>(size), '\0');
    ar_(cereal::binary_data(s.data(), s.size()));
    return s;
  }

  std::string read_name(const std::string& what) {
    std::string name = read_string(kMaxNameBytes, what);
    const std::string problem = name_problem(name);
    if (!problem.empty()) fail(what + ": " + problem);
    return name;
  }

  template <typename T>
  void read_values(T* dst, std::uint64_t nbytes) {
    ar_(cereal::binary_data(dst, static_cast<std::size_t>(nbytes)));
  }

 private:
  const std::string& source_;
  MemoryBuffer buf_;
  std::istream stream_;
  cereal::PortableBinaryInputArchive ar_;
};

Tensor read_tensor(PayloadReader& in, const std::string& name) {
  const std::string what = "tensor " + printable(name);
  DType dtype{};
  const auto code = in.read<std::uint8_t>("the dtype of " + what);
  if (!dtype_from_code(code, dtype)) in.fail(what + " has unknown dtype code " + std::to_string(code));
  const auto ndim = in.read<std::uint8_t>("the rank of " + what);
  if (ndim > kMaxDims) in.fail(what + " has " + std::to_string(ndim) + " dims (at most 32)");
  Shape shape(ndim);
  for (auto& d : shape) d = in.read<std::int64_t>("the shape of " + what);
  const std::int64_t numel = checked_numel(shape, what);
  const auto nbytes = in.read<std::uint64_t>("the byte count of " + what);
  const std::uint64_t expected = static_cast<std::uint64_t>(numel) * size_of(dtype);  // <= 2^51
  if (nbytes != expected)
    in.fail(what + " of shape " + shape_str(shape) + " and dtype " + dtype_name(dtype) + " should hold " +
            std::to_string(expected) + " bytes, the file says " + std::to_string(nbytes));
  in.need(nbytes, "the data of " + what);  // before the allocation
  Tensor t = Tensor::empty(shape, dtype);
  dispatch_all(dtype, "load", [&]<typename T>() { in.read_values(t.data<T>(), nbytes); });
  return t;
}

Checkpoint read_payload(PayloadReader& in) {
  Checkpoint c;
  c.kind = in.read_name("the checkpoint kind");
  const auto n_meta = in.read<std::uint32_t>("the metadata count");
  if (n_meta > kMaxMetadata) in.fail("the metadata count " + std::to_string(n_meta) + " is over 65536");
  for (std::uint32_t i = 0; i < n_meta; ++i) {
    std::string key = in.read_name("a metadata key");
    if (c.find(key)) in.fail("duplicate metadata key " + printable(key));
    const auto type = in.read<std::uint8_t>("the type of metadata " + printable(key));
    const std::string what = "metadata " + printable(key);
    if (type == kMetaInt) c.metadata.emplace_back(key, in.read<std::int64_t>(what));
    else if (type == kMetaDouble) c.metadata.emplace_back(key, in.read<double>(what));
    else if (type == kMetaString) {
      std::string value = in.read_string(kMaxStringBytes, what);
      if (!is_valid_utf8(value)) in.fail(what + " is not valid UTF-8");
      if (value.find('\0') != std::string::npos) in.fail(what + " contains a NUL character");
      c.metadata.emplace_back(key, std::move(value));
    } else {
      in.fail(what + " has unknown type code " + std::to_string(type));
    }
  }
  const auto n_sections = in.read<std::uint32_t>("the section count");
  if (n_sections > kMaxSections) in.fail("the section count " + std::to_string(n_sections) + " is over 1024");
  for (std::uint32_t s = 0; s < n_sections; ++s) {
    std::string section = in.read_name("a section name");
    if (c.find_section(section)) in.fail("duplicate section " + printable(section));
    const auto n_tensors = in.read<std::uint32_t>("the tensor count of section " + printable(section));
    if (n_tensors > kMaxTensors) in.fail("section " + printable(section) + " claims " + std::to_string(n_tensors) + " tensors");
    StateDict& state = c.section(section);
    for (std::uint32_t i = 0; i < n_tensors; ++i) {
      std::string name = in.read_name("a tensor name in section " + printable(section));
      if (state.contains(name)) in.fail("duplicate tensor " + printable(name) + " in section " + printable(section));
      Tensor t = read_tensor(in, name);
      state.insert(std::move(name), std::move(t));
    }
  }
  if (in.remaining() != 0) in.fail(std::to_string(in.remaining()) + " unexpected bytes after the last section");
  return c;
}

}  // namespace

std::string encode_binary(const Checkpoint& c) {
  std::ostringstream out(std::ios::binary);
  out.write(std::string(kHeaderBytes, '\0').data(), kHeaderBytes);  // filled in below
  {
    Writer ar(out, Writer::Options::LittleEndian());  // writes the endianness byte, 1
    write_string(ar, c.kind);
    ar(static_cast<std::uint32_t>(c.metadata.size()));
    for (const auto& [key, value] : c.metadata) {
      write_string(ar, key);
      if (const auto* i = std::get_if<std::int64_t>(&value)) ar(kMetaInt, *i);
      else if (const auto* d = std::get_if<double>(&value)) ar(kMetaDouble, *d);
      else { ar(kMetaString); write_string(ar, std::get<std::string>(value)); }
    }
    ar(static_cast<std::uint32_t>(c.sections.size()));
    for (const auto& [name, state] : c.sections) {
      write_string(ar, name);
      ar(static_cast<std::uint32_t>(state.size()));
      for (const auto& [key, t] : state) write_tensor(ar, key, t);
    }
  }
  std::string bytes = std::move(out).str();
  const std::uint64_t payload_size = bytes.size() - kHeaderBytes;
  const std::uint32_t crc = crc32(std::string_view(bytes).substr(kHeaderBytes));
  std::memcpy(bytes.data(), kBinaryMagic.data(), 8);
  std::memcpy(bytes.data() + 8, &kFormatVersion, 4);
  std::memcpy(bytes.data() + 12, &crc, 4);
  std::memcpy(bytes.data() + 16, &payload_size, 8);
  return bytes;
}

Checkpoint decode_binary(std::string_view bytes, const std::string& source) {
  if (bytes.size() < kHeaderBytes)
    throw FormatError(source + ": truncated: " + std::to_string(bytes.size()) +
                      " bytes, shorter than the 24-byte header of a tapegrad checkpoint");
  if (bytes.substr(0, 8) != kBinaryMagic) throw FormatError(source + ": wrong magic, not a tapegrad checkpoint");
  std::uint32_t version = 0, stored_crc = 0;
  std::uint64_t payload_size = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&stored_crc, bytes.data() + 12, 4);
  std::memcpy(&payload_size, bytes.data() + 16, 8);
  // Only magic and version are fixed for all versions; read nothing else from a newer file.
  if (version > kFormatVersion)
    throw FormatError(source + ": format version " + std::to_string(version) +
                      " is newer than this build of tapegrad reads (up to version " +
                      std::to_string(kFormatVersion) + "); upgrade tapegrad to load it");
  if (version == 0) throw FormatError(source + ": invalid format version 0");
  const std::uint64_t actual = bytes.size() - kHeaderBytes;
  if (payload_size > actual)
    throw FormatError(source + ": truncated: the header promises " + std::to_string(payload_size) +
                      " payload bytes, only " + std::to_string(actual) + " follow");
  if (payload_size < actual)
    throw FormatError(source + ": " + std::to_string(actual - payload_size) + " unexpected bytes after the payload");
  const std::string_view payload = bytes.substr(kHeaderBytes);
  const std::uint32_t crc = crc32(payload);
  if (crc != stored_crc) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "checksum mismatch (stored CRC-32 %08x, computed %08x)", stored_crc, crc);
    throw FormatError(source + ": corrupted: " + msg);
  }
  if (payload.empty() || payload[0] != 1)
    throw FormatError(source + ": the payload does not start with the little-endian marker byte 1");
  try {
    PayloadReader in(payload, source);
    return read_payload(in);
  } catch (const cereal::Exception& e) {  // not expected: every read is checked first
    throw FormatError(source + ": " + e.what());
  }
}

}  // namespace tapegrad::io::detail
