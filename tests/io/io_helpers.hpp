// io_helpers.hpp — helpers shared by the tests of io/: a scratch directory, raw file access,
// a small model, exact tensor comparison, and a little-endian byte writer for crafting files.
// Header-only (tests/CMakeLists.txt compiles only tests/*/test_*.cpp).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/io/io.hpp>
#include <tapegrad/tapegrad.hpp>

namespace tapegrad::testing {

// A fresh directory under the system's temp directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tapegrad-io-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE(out);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A TransformerLM (vocab >= 5, max_seq_len >= 3) saved with io::save_model and loaded back:
// the same config, and bit for bit the same logits on two sequences of three tokens. A macro,
// so that a failure names the test's line.
#define CHECK_LM_FILE_ROUND_TRIP(lm)                                                                    \
  do {                                                                                                  \
    ::tapegrad::testing::ScratchDir rt_dir_;                                                            \
    ::tapegrad::io::save_model((lm), rt_dir_.file("lm.tgc"));                                          \
    const auto rt_loaded_ = ::tapegrad::io::load_model<::tapegrad::nn::TransformerLM>(rt_dir_.file("lm.tgc")); \
    CHECK(rt_loaded_->config == (lm).config);                                                          \
    const ::tapegrad::Tensor rt_tokens_ =                                                               \
        ::tapegrad::tensor({1, 2, 3, 4, 0, 1}, {2, 3}, ::tapegrad::DType::int64);                      \
    CHECK(::tapegrad::testing::same_bits(rt_loaded_->forward(rt_tokens_), (lm).forward(rt_tokens_)));  \
  } while (0)

// The model of tests/reference/make_safetensors_reference.py: Linear(3, 4), LayerNorm(4),
// Linear(4, 2), named "0.weight" ... "2.bias". Parameters start at N(0, 1) values from seed.
inline std::shared_ptr<nn::Sequential> small_model(std::uint64_t seed = 1) {
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::UnaryModule>>{
      std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::LayerNorm>(4), std::make_shared<nn::Linear>(4, 2)});
  Generator gen(seed);
  for (auto& [name, p] : model->named_parameters()) normal_(p, 0.0, 1.0, gen);
  return model;
}

// True when both tensors have the same dtype, shape and bytes (NaN == NaN, -0 != +0).
inline bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ca = a.detach().contiguous(), cb = b.detach().contiguous();
  return std::memcmp(ca.raw_data(), cb.raw_data(), static_cast<std::size_t>(ca.numel()) * size_of(ca.dtype())) == 0;
}

inline bool same_state(const io::StateDict& a, const io::StateDict& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& [na, ta] = a.items()[i];
    const auto& [nb, tb] = b.items()[i];
    if (na != nb || !same_bits(ta, tb)) return false;
  }
  return true;
}

// Appends little-endian fixed-size values, to craft (bad) files byte by byte.
struct ByteWriter {
  std::string bytes;
  template <typename T>
  ByteWriter& put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    bytes.append(raw, sizeof(T));
    return *this;
  }
  ByteWriter& u8(std::uint8_t v) { return put(v); }
  ByteWriter& u32(std::uint32_t v) { return put(v); }
  ByteWriter& u64(std::uint64_t v) { return put(v); }
  ByteWriter& i64(std::int64_t v) { return put(v); }
  ByteWriter& str(const std::string& s) {
    u64(s.size());
    bytes += s;
    return *this;
  }
  ByteWriter& raw(const std::string& s) {
    bytes += s;
    return *this;
  }
};

// A safetensors file put together by hand: u64 header length, the header text, the data bytes.
inline std::string craft_safetensors(const std::string& header, const std::string& data = "") {
  ByteWriter w;
  w.u64(header.size()).raw(header).raw(data);
  return w.bytes;
}

// A binary checkpoint around `payload` with a correct header (magic, version, CRC, size), so
// that the loader gets past the checksum and has to catch the problem in the payload itself.
inline std::string wrap_payload(const std::string& payload, std::uint32_t version = io::kFormatVersion) {
  ByteWriter w;
  w.raw(std::string(io::kBinaryMagic)).u32(version).u32(io::crc32(payload)).u64(payload.size()).raw(payload);
  return w.bytes;
}

}  // namespace tapegrad::testing
