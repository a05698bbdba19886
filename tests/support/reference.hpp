// reference.hpp — reads the PyTorch reference tensors written by tests/reference/make_reference.py,
// and compares a tapegrad result with one of them, llm.c's check_tensor style.
//
//   const ReferenceFile& ref = ops_reference();
//   Tensor x = ref.get("softmax.last.x");                 // float64
//   CHECK_CLOSE("y", softmax(x, -1), ref.get("softmax.last.y"), 1e-12, 1e-12);
//
// The file format is described in make_reference.py. Header-only: tests/CMakeLists.txt compiles
// only tests/*/test_*.cpp, and this is included from them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

namespace tapegrad::testing {

inline constexpr const char* kDefaultGenerator = "tests/reference/make_reference.py";

struct ReferenceTensor {
  DType dtype = DType::float64;  // float64 or int64
  Shape shape;
  std::vector<double> values;  // float64 entries
  std::vector<std::int64_t> ints;  // int64 entries
};

class ReferenceFile {
 public:
  static constexpr const char* kMagic = "tapegrad-reference";
  static constexpr int kVersion = 1;

  // generator: the script that writes this file, named in every error message.
  explicit ReferenceFile(std::string path, std::string generator = kDefaultGenerator)
      : path_(std::move(path)), generator_(std::move(generator)) {
    std::ifstream in(path_);
    if (!in) fail("cannot open the file");
    std::string line;
    int line_no = 1;
    {
      std::getline(in, line);
      std::istringstream header(line);
      std::string magic;
      int version = 0;
      if (!(header >> magic >> version) || magic != kMagic)
        fail("line 1 is \"" + line.substr(0, 60) + "\", expected \"" + kMagic + " " +
             std::to_string(kVersion) + "\"");
      if (version != kVersion)
        fail("format version " + std::to_string(version) + ", this loader reads version " +
             std::to_string(kVersion));
    }
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty() || line[0] == '#') continue;
      const std::string where = "line " + std::to_string(line_no) + ": ";
      std::istringstream head(line);
      std::string name, dtype;
      std::int64_t ndim = -1;
      if (!(head >> name >> dtype >> ndim) || ndim < 0)
        fail(where + "expected \"<name> <dtype> <ndim> <dims...>\", got \"" + line.substr(0, 60) + "\"");
      ReferenceTensor t;
      if (dtype == "float64") t.dtype = DType::float64;
      else if (dtype == "int64") t.dtype = DType::int64;
      else fail(where + "unknown dtype \"" + dtype + "\" for \"" + name + "\"");
      for (std::int64_t d = 0; d < ndim; ++d) {
        std::int64_t size = -1;
        if (!(head >> size) || size < 0) fail(where + "bad or missing dim " + std::to_string(d) + " of \"" + name + "\"");
        t.shape.push_back(size);
      }
      if (!std::getline(in, line)) fail("the values of \"" + name + "\" are missing (truncated file?)");
      ++line_no;
      std::istringstream values(line);
      std::string word;
      while (values >> word) {
        // strtod/strtoll rather than >>: they read Python's "nan", "inf", "-inf".
        char* end = nullptr;
        if (t.dtype == DType::float64) t.values.push_back(std::strtod(word.c_str(), &end));
        else t.ints.push_back(std::strtoll(word.c_str(), &end, 10));
        if (end == word.c_str() || *end != '\0')
          fail("line " + std::to_string(line_no) + ": \"" + word + "\" is not a number (in \"" + name + "\")");
      }
      const std::size_t count = t.dtype == DType::float64 ? t.values.size() : t.ints.size();
      if (static_cast<std::int64_t>(count) != shape_numel(t.shape))
        fail("line " + std::to_string(line_no) + ": \"" + name + "\" of shape " + shape_str(t.shape) +
             " needs " + std::to_string(shape_numel(t.shape)) + " values, found " + std::to_string(count));
      if (!tensors_.emplace(name, std::move(t)).second) fail(where + "\"" + name + "\" appears twice");
    }
  }

  const std::string& path() const { return path_; }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }

  const ReferenceTensor& entry(const std::string& name) const {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) fail("no tensor named \"" + name + "\"");
    return it->second;
  }

  // A float64 entry as a tensor of `dtype` (float32 or float64), or an int64 entry as int64.
  Tensor get(const std::string& name, DType dtype = DType::float64) const {
    const ReferenceTensor& t = entry(name);
    if (t.dtype == DType::int64) return Tensor::from_vector(t.ints, t.shape);
    return Tensor::from_vector(t.values, t.shape).to(dtype);
  }

  // The single value of a one-element entry (a dim, an eps, ...).
  double scalar(const std::string& name) const { return get(name).to(DType::float64).item(); }
  std::int64_t integer(const std::string& name) const {
    const ReferenceTensor& t = entry(name);
    if (t.dtype != DType::int64 || t.ints.size() != 1) fail("\"" + name + "\" is not a single int64");
    return t.ints[0];
  }
  // Names of all entries that start with prefix, with the prefix removed, in sorted order.
  std::vector<std::string> names(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& [name, _] : tensors_)
      if (name.rfind(prefix, 0) == 0) out.push_back(name.substr(prefix.size()));
    return out;
  }
  // The script that writes this file.
  const std::string& generator() const { return generator_; }
  // An int64 entry as a shape (normalized_shape, ...).
  Shape shape_of(const std::string& name) const {
    const ReferenceTensor& t = entry(name);
    if (t.dtype != DType::int64 || t.shape.size() != 1) fail("\"" + name + "\" is not a 1-d int64 list");
    return t.ints;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("reference file " + path_ + ": " + what + "\nregenerate with: /usr/bin/python3 " +
                             generator_);
  }

  std::string path_, generator_;
  std::map<std::string, ReferenceTensor> tensors_;
};

// tests/reference/ops_reference.txt, loaded once.
inline const ReferenceFile& ops_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/ops_reference.txt");
  return file;
}

// Copies the entry <prefix><name> into each parameter <name> of module, as `dtype`. The names
// must match one to one: a parameter the file lacks, or an entry under prefix the module does
// not have, fails the test case, naming them all.
inline void load_reference_parameters(nn::Module& module, const ReferenceFile& ref, const std::string& prefix,
                                      DType dtype) {
  const std::vector<std::string> names = ref.names(prefix);
  const std::set<std::string> in_file(names.begin(), names.end());
  std::set<std::string> in_module;
  std::string missing, extra;
  for (const auto& [name, p] : module.named_parameters()) {
    in_module.insert(name);
    if (!in_file.count(name)) missing += " " + name;
  }
  for (const std::string& name : in_file)
    if (!in_module.count(name)) extra += " " + name;
  INFO(prefix << ": parameters of the module missing from the reference:" << (missing.empty() ? " none" : missing)
              << "\nreference parameters the module does not have:" << (extra.empty() ? " none" : extra)
              << "\nregenerate with: /usr/bin/python3 " << ref.generator());
  REQUIRE(missing.empty());
  REQUIRE(extra.empty());
  NoGradGuard no_grad;
  for (const auto& [name, p] : module.named_parameters()) {
    const Tensor value = ref.get(prefix + name, dtype);
    INFO(name << ": module " << shape_str(p.shape()) << ", reference " << shape_str(value.shape()));
    REQUIRE(value.shape() == p.shape());
    Tensor(p).copy_(value);
  }
}

struct CompareResult {
  bool ok = true;
  double max_diff = 0;
  std::string report;  // "<name>: TENSOR OK, maxdiff = ..." or the first mismatches
};

// |actual − expected| <= atol + rtol·|expected| elementwise (NaN matches NaN), after
// converting both to double. The report lists the first few mismatching pairs.
inline CompareResult compare_tensors(const std::string& name, const Tensor& actual,
                                     const Tensor& expected, double atol, double rtol) {
  CompareResult r;
  std::ostringstream report;
  report.precision(17);
  if (actual.shape() != expected.shape()) {
    r.ok = false;
    report << name << ": shape " << shape_str(actual.shape()) << " but the reference has "
           << shape_str(expected.shape());
    r.report = report.str();
    return r;
  }
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  int shown = 0;
  std::ostringstream mismatches;
  mismatches.precision(17);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(e[i])) continue;
    const double diff = std::abs(a[i] - e[i]);
    const bool bad = !(diff <= atol + rtol * std::abs(e[i]));  // true for a lone NaN too
    r.max_diff = std::max(r.max_diff, std::isnan(diff) ? INFINITY : diff);
    if (bad) {
      r.ok = false;
      if (shown++ < 5) mismatches << "\n  [" << i << "] " << a[i] << " vs reference " << e[i];
    }
  }
  report << name << ": " << (r.ok ? "TENSOR OK" : "TENSOR NOT OK") << ", maxdiff = " << r.max_diff
         << " (atol " << atol << ", rtol " << rtol << ")" << mismatches.str();
  r.report = report.str();
  return r;
}

}  // namespace tapegrad::testing

// CHECK_CLOSE(name, actual, expected, atol, rtol): compare_tensors as a Catch2 check whose
// failure message is the report (max diff and the first mismatching pairs).
#define CHECK_CLOSE(name, actual, expected, atol, rtol)                                         \
  do {                                                                                          \
    const ::tapegrad::testing::CompareResult close_result_ =                                    \
        ::tapegrad::testing::compare_tensors(name, actual, expected, atol, rtol);                \
    INFO(close_result_.report);                                                                 \
    CHECK(close_result_.ok);                                                                    \
  } while (0)

namespace tapegrad::testing {

// The 20 AdamW steps of the model-level references (make_llama_reference.py's adamw_losses:
// lr 1e-2, betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on every parameter) of `model` on
// loss(): each step's loss against <prefix>adamw.losses within tol, then every parameter
// against <prefix>final.<name> within tol. The attention's key bias (rows C..2C of
// attn.qkv.bias, C = d_model) moves every score of a query by the same q·b_k, which softmax
// ignores: its gradient is 0 but for rounding (~1e-17), and Adam divides that by √v + eps ≈
// eps, so its steps (~lr·1e-17/1e-8) are rounding noise that each library draws its own way:
// those rows within key_bias_tol (1e-8; more for a model whose gradients, and so their
// rounding, are larger). setup, when given, runs on the optimizer before the first step: what
// a scheme installs around the steps (nGPT's renormalization, a step post-hook).
inline void check_adamw_steps(nn::Module& model, const ReferenceFile& ref, const std::string& prefix,
                              const std::function<Tensor()>& loss_of, double tol, std::int64_t d_model,
                              const std::function<void(optim::Optimizer&)>& setup = {}, double key_bias_tol = 1e-8) {
  optim::AdamW opt(model.named_parameters(), optim::AdamOptions(1e-2).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
  if (setup) setup(opt);
  const std::vector<double> expected = ref.get(prefix + "adamw.losses").to_vector();
  REQUIRE(expected.size() == 20);
  for (std::size_t step = 0; step < expected.size(); ++step) {
    opt.zero_grad();
    const Tensor loss = loss_of();
    loss.backward();
    opt.step();
    INFO("step " << step);
    CHECK(loss.item() == Approx(expected[step]).margin(tol).epsilon(0));
  }
  CHECK(expected.back() < expected.front() - 0.5);  // it learned: not a flat line
  for (const auto& [name, p] : model.named_parameters()) {
    const Tensor final_value = ref.get(prefix + "final." + name);
    if (name.size() < 13 || name.compare(name.size() - 13, 13, "attn.qkv.bias") != 0) {
      CHECK_CLOSE("after 20 steps: " + name, p, final_value, tol, 0.0);
      continue;
    }
    for (const auto& [row, row_tol] : {std::pair{std::int64_t{0}, tol}, std::pair{d_model, key_bias_tol}, std::pair{2 * d_model, tol}})
      CHECK_CLOSE("after 20 steps: " + name + " rows " + std::to_string(row) + "..", narrow(p, 0, row, d_model),
                  narrow(final_value, 0, row, d_model), row_tol, 0.0);
  }
}

}  // namespace tapegrad::testing
