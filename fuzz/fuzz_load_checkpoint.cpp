// fuzz_load_checkpoint.cpp — libFuzzer target for io::decode (binary and JSON checkpoints).
//
// Each input is decoded twice: as it is (the header, magic, version and CRC checks), and, when
// it starts like a binary checkpoint, with its header's size and CRC fields recomputed, so
// that the fuzzer reaches the payload parser instead of stopping at the checksum. Anything but
// success or io::FormatError is a finding (an escaping exception aborts). A file that loads
// must re-encode, and decode again to the same content; a file that describes a model
// (io/model_config.hpp) must rebuild it or be refused with io::FormatError. Built and run by
// scripts/fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <tapegrad/io/io.hpp>

using namespace tapegrad;

namespace {

bool same(const io::StateDict& a, const io::StateDict& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& [na, ta] = a.items()[i];
    const auto& [nb, tb] = b.items()[i];
    if (na != nb || ta.dtype() != tb.dtype() || ta.shape() != tb.shape()) return false;
    const std::size_t n = static_cast<std::size_t>(ta.numel()) * size_of(ta.dtype());
    if (std::memcmp(ta.raw_data(), tb.raw_data(), n) != 0) return false;
  }
  return true;
}

void check(std::string_view bytes) {
  io::Checkpoint c;
  try {
    c = io::decode(bytes, "fuzz");
  } catch (const io::FormatError&) {
    return;
  }
  // What loads must save (its names passed the same rules) and load back the same.
  const io::Checkpoint again = io::decode(io::encode(c), "re-encoded");
  if (again.kind != c.kind || again.metadata.size() != c.metadata.size() || again.sections.size() != c.sections.size())
    std::abort();
  for (std::size_t i = 0; i < c.sections.size(); ++i)
    if (again.sections[i].first != c.sections[i].first || !same(again.sections[i].second, c.sections[i].second))
      std::abort();
  io::decode(io::encode(c, io::Format::json), "re-encoded as JSON");  // must not throw
  // The model a file describes: rebuilt, or refused by name (never built larger than its file).
  try {
    if (io::model_kind(c) == "TransformerLM") (void)io::model_from<nn::TransformerLM>(c, "fuzz");
    if (io::model_kind(c) == "Seq2SeqTransformer") (void)io::model_from<nn::Seq2SeqTransformer>(c, "fuzz");
  } catch (const io::FormatError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(bytes);
  if (size >= 24 && bytes.substr(0, 8) == io::kBinaryMagic) {
    std::string fixed(bytes);
    const std::uint64_t payload_size = size - 24;
    const std::uint32_t crc = io::crc32(bytes.substr(24));
    std::memcpy(fixed.data() + 12, &crc, 4);
    std::memcpy(fixed.data() + 16, &payload_size, 8);
    check(fixed);
  }
  return 0;
}
