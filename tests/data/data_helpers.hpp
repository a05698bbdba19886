// data_helpers.hpp — helpers shared by the tests of data/: a scratch directory, byte-level
// file access, a numbered dataset. Header-only (tests/CMakeLists.txt compiles only tests/*/test_*.cpp).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/data/data.hpp>
#include <tapegrad/io/errors.hpp>
#include <tapegrad/tapegrad.hpp>

namespace tapegrad::testing {

// A fresh directory under the system's temp directory, removed with everything in it.
class DataScratchDir {
 public:
  DataScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tapegrad-data-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path_ = buf.data();
  }
  ~DataScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  DataScratchDir(const DataScratchDir&) = delete;
  DataScratchDir& operator=(const DataScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE(out);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// n bytes drawn uniformly from all 256 values (so mostly invalid UTF-8).
inline std::string random_bytes(std::size_t n, Generator& gen) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen.next_below(256));
  return s;
}

// N examples; input row i = [i, 10·i] (float32), target i = i (int64).
inline std::shared_ptr<data::TensorDataset> numbered_dataset(std::int64_t n) {
  std::vector<float> in;
  std::vector<std::int64_t> tgt;
  for (std::int64_t i = 0; i < n; ++i) {
    in.insert(in.end(), {static_cast<float>(i), static_cast<float>(10 * i)});
    tgt.push_back(i);
  }
  return std::make_shared<data::TensorDataset>(Tensor::from_vector(in, {n, 2}), Tensor::from_vector(tgt, {n}));
}

}  // namespace tapegrad::testing
