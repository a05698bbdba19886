// test_layers.cpp — no #include runs up the layers, and no library folder escapes the table.
//
// The library is built in layers: a folder's files may include files of their own folder and
// of the layers kLayers lists for it, nothing else of the project. docs/architecture.md shows
// the same table with the reasons; change both together. tapegrad.hpp at the root is the
// umbrella and may include anything; kAboveLayers sit above everything and are not checked.
// An include is `#include "..."` (resolved against the including file's folder, as the
// compiler does first) or `#include <tapegrad/...>`; a line whose first non-blank character
// is not '#' (e.g. a commented-out include) is not one. Within autograd/, the kernels in
// autograd/cpu/ may include only their own folder and a few standalone headers
// (kKernelMayInclude): they know nothing of Tensor, Node or the engine.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// The layers, lowest first, and what each may include besides its own folder.
// Keep in step with the table in docs/architecture.md.
const std::map<std::string, std::vector<std::string>> kLayers = {
    {"autograd", {}},
    {"nn", {"autograd"}},
    {"optim", {"autograd", "nn"}},
    {"io", {"autograd", "nn"}},
    {"data", {"autograd", "io"}},
    {"distributed", {"autograd", "nn", "optim"}},  // optim: ZeRO-1 shards an optimizer's state
    {"training", {"autograd", "nn", "optim", "io", "data"}},
};
// Top-level folders above every layer: they may include anything and are not checked.
const std::set<std::string> kAboveLayers = {"examples", "bench", "tests", "fuzz", "docs", "learn"};
// The kernels: autograd/cpu/ holds the raw-pointer CPU machinery (the BLAS door and its
// backends, the blocked SGEMM, vector math, the parallel and streaming helpers, the attention
// kernels) and knows nothing of Tensor, Node or the engine. Its files may include files of
// autograd/cpu/ and these headers of autograd/, nothing else of the project. Each of them
// includes no project file beyond this list (checked too), so none brings tensor.hpp in.
// Keep in step with docs/architecture.md.
const std::string kKernelFolder = "autograd/cpu";
const std::map<std::string, std::string> kKernelMayInclude = {
    {"autograd/errors.hpp", "the errors a kernel throws (ValueError on a bad setting)"},
    {"autograd/dtype.hpp", "DType: the GEMM census keys its calls by it, the GEMM rate dispatches on it"},
    {"autograd/env_switch.hpp", "TAPEGRAD_GEMM_ROW_BANDS, an on/off setting read as storage.cpp reads its own"},
    {"autograd/profiler.hpp", "blas::gemm charges its time to the op profiler (GemmTimer)"},
    {"autograd/storage.hpp", "ThreadScratch takes its blocks from the tensor allocator's cache"},
    {"autograd/generator.hpp", "the dropout mask and the GEMM rate's matrices are drawn from a Generator"},
};

bool is_cpp_file(const fs::path& p) { return p.extension() == ".cpp" || p.extension() == ".hpp"; }

// Every .cpp/.hpp under dir, sorted (directory order is unspecified). Symlinks to folders are
// not followed: a build tree links include/tapegrad back to the sources.
std::vector<fs::path> cpp_files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && is_cpp_file(entry.path())) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// "layer nn may include only nn, autograd"
std::string allowed_str(const std::string& layer) {
  std::string s = "layer " + layer + " may include only " + layer;
  for (const std::string& lower : kLayers.at(layer)) s += ", " + lower;
  return s;
}

// The project file an include line names, relative to root; empty when the line is no
// include of a project file (a system header, or a quoted name found neither next to the
// file nor under tapegrad/).
fs::path include_target(const std::string& line, const fs::path& file, const fs::path& root) {
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::smatch m;
  if (!std::regex_search(line, m, include)) return {};
  const std::string name = m[2];
  fs::path target;
  if (m[1] == "\"" && fs::exists(file.parent_path() / name)) target = file.parent_path() / name;
  else if (name.rfind("tapegrad/", 0) == 0) target = root / name.substr(9);
  else return {};
  return target.lexically_normal().lexically_relative(root);
}

// Every include of a project file in `file`: its line number and target, relative to root.
std::vector<std::pair<int, fs::path>> project_includes(const fs::path& file, const fs::path& root) {
  std::vector<std::pair<int, fs::path>> found;
  std::ifstream in(file);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    if (fs::path target = include_target(line, file, root); !target.empty()) found.emplace_back(number, target);
  return found;
}

// "file:line includes target (layer X may include only ...)" for every include, in the
// layers' folders under root, of a file outside the includer's own and allowed folders.
std::vector<std::string> upward_includes(const fs::path& root) {
  std::vector<std::string> found;
  for (const auto& [layer, lower] : kLayers) {
    if (!fs::is_directory(root / layer)) continue;
    for (const fs::path& file : cpp_files_under(root / layer)) {
      for (const auto& [number, target] : project_includes(file, root)) {
        // A root file (tapegrad.hpp, the umbrella) has no folder: no layer may include it.
        const std::string folder = std::next(target.begin()) == target.end() ? "" : target.begin()->string();
        if (folder == layer || std::find(lower.begin(), lower.end(), folder) != lower.end()) continue;
        found.push_back(file.lexically_relative(root).string() + ":" + std::to_string(number) + " includes " +
                        target.string() + " (" + allowed_str(layer) + ")");
      }
    }
  }
  return found;
}

// "file:line includes target (...)" for every include, in autograd/cpu/ under root, of a
// project file outside autograd/cpu/ that kKernelMayInclude does not list.
std::vector<std::string> kernel_includes_outside(const fs::path& root) {
  std::vector<std::string> found;
  if (!fs::is_directory(root / kKernelFolder)) return found;
  std::string allowed;
  for (const auto& [header, _] : kKernelMayInclude) allowed += ", " + header;
  for (const fs::path& file : cpp_files_under(root / kKernelFolder)) {
    for (const auto& [number, target] : project_includes(file, root)) {
      if (kKernelMayInclude.count(target.generic_string())) continue;
      const std::string folder = target.parent_path().generic_string();
      if (folder == kKernelFolder || folder.rfind(kKernelFolder + "/", 0) == 0) continue;
      found.push_back(file.lexically_relative(root).generic_string() + ":" + std::to_string(number) +
                      " includes " + target.generic_string() + " (" + kKernelFolder + "/ may include only " +
                      kKernelFolder + "/" + allowed + ")");
    }
  }
  return found;
}

// "header:line includes target" for every include of a project file, in a header that
// kKernelMayInclude lists, that the list does not hold: through it a kernel would see more
// than the list says (tensor.hpp, say).
std::vector<std::string> kernel_headers_not_standalone(const fs::path& root) {
  std::vector<std::string> found;
  for (const auto& [header, _] : kKernelMayInclude) {
    for (const auto& [number, target] : project_includes(root / header, root)) {
      if (kKernelMayInclude.count(target.generic_string())) continue;
      found.push_back(header + ":" + std::to_string(number) + " includes " + target.generic_string() +
                      " (a header " + kKernelFolder + "/ may include must include nothing of the project "
                      "beyond kKernelMayInclude)");
    }
  }
  return found;
}

// Top-level folders under root holding .cpp/.hpp files that are neither a layer nor above
// the layers. Hidden folders and build trees (a CMakeCache.txt) are not sources.
std::vector<std::string> folders_missing_from_table(const fs::path& root) {
  std::vector<std::string> missing;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || entry.is_symlink() || name.front() == '.') continue;
    if (kLayers.count(name) || kAboveLayers.count(name) || fs::exists(entry.path() / "CMakeCache.txt")) continue;
    if (!cpp_files_under(entry.path()).empty()) missing.push_back(name + "/");
  }
  std::sort(missing.begin(), missing.end());
  return missing;
}

std::string lines(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += "  " + item + "\n";
  return s;
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("no include runs up the layers", "[architecture]") {
  const fs::path root = TAPEGRAD_SOURCE_DIR;
  for (const auto& [layer, _] : kLayers) {
    INFO("the layer table names " << layer << "/, which holds no .cpp/.hpp file under " << root);
    CHECK((fs::is_directory(root / layer) && !cpp_files_under(root / layer).empty()));
  }
  const std::vector<std::string> found = upward_includes(root);
  INFO("includes that run up the layers (table: kLayers in tests/architecture/test_layers.cpp, "
       "docs/architecture.md):\n" << lines(found));
  CHECK(found.empty());
}

TEST_CASE("every top-level folder with C++ files is in the layer table", "[architecture]") {
  const std::vector<std::string> missing = folders_missing_from_table(TAPEGRAD_SOURCE_DIR);
  INFO("folders with .cpp/.hpp files that are neither a layer nor above the layers; add them to "
       "kLayers (or kAboveLayers) in tests/architecture/test_layers.cpp and to docs/architecture.md:\n"
       << lines(missing));
  CHECK(missing.empty());
}

TEST_CASE("the kernels in autograd/cpu/ include nothing of Tensor, Node or the engine", "[architecture]") {
  const fs::path root = TAPEGRAD_SOURCE_DIR;
  {
    INFO(kKernelFolder << "/ holds no .cpp/.hpp file under " << root);
    REQUIRE((fs::is_directory(root / kKernelFolder) && !cpp_files_under(root / kKernelFolder).empty()));
  }
  for (const auto& [header, why] : kKernelMayInclude) {
    INFO("kKernelMayInclude names " << header << " (" << why << "), which is not under " << root);
    CHECK(fs::is_regular_file(root / header));
  }
  {
    const std::vector<std::string> found = kernel_includes_outside(root);
    INFO("includes from the kernels out of their folder (the list: kKernelMayInclude in "
         "tests/architecture/test_layers.cpp, docs/architecture.md):\n" << lines(found));
    CHECK(found.empty());
  }
  const std::vector<std::string> through = kernel_headers_not_standalone(root);
  INFO("headers the kernels may include that include more of the project:\n" << lines(through));
  CHECK(through.empty());
}

TEST_CASE("the layer checks catch an upward include and an unlisted folder", "[architecture]") {
  const fs::path root = fs::temp_directory_path() / ("tapegrad_test_layers_" + std::to_string(getpid()));
  fs::remove_all(root);
  write_file(root / "autograd/ops/x.cpp", "#include \"../tensor.hpp\"\n#include <vector>\n");
  write_file(root / "autograd/tensor.hpp", "// #include \"../nn/module.hpp\" (a comment, not an include)\n");
  write_file(root / "nn/module.hpp", "#include \"../autograd/tensor.hpp\"\n#include <tapegrad/optim/sgd.hpp>\n");
  write_file(root / "optim/sgd.hpp", "  #  include \"../tapegrad.hpp\"\n");
  write_file(root / "tapegrad.hpp", "#include \"nn/module.hpp\"\n");
  write_file(root / "newlayer/thing.cpp", "\n");
  write_file(root / "build/CMakeCache.txt", "\n");
  write_file(root / "build/CMakeFiles/id.cpp", "\n");
  CHECK(upward_includes(root) == std::vector<std::string>{
                                     "nn/module.hpp:2 includes optim/sgd.hpp (layer nn may include only nn, autograd)",
                                     "optim/sgd.hpp:1 includes tapegrad.hpp (layer optim may include only optim, "
                                     "autograd, nn)"});
  CHECK(folders_missing_from_table(root) == std::vector<std::string>{"newlayer/"});
  fs::remove_all(root);
}

TEST_CASE("the kernel checks catch an include of the engine, directly or through a listed header",
          "[architecture]") {
  const fs::path root = fs::temp_directory_path() / ("tapegrad_test_kernels_" + std::to_string(getpid()));
  fs::remove_all(root);
  write_file(root / "autograd/tensor.hpp", "\n");
  write_file(root / "autograd/dtype.hpp", "\n");
  write_file(root / "autograd/errors.hpp", "#include \"tensor.hpp\"\n");
  write_file(root / "autograd/cpu/blas.hpp", "#include \"../dtype.hpp\"\n#include <tapegrad/autograd/cpu/x.hpp>\n");
  write_file(root / "autograd/cpu/x.hpp", "#include <vector>\n#include \"blas.hpp\"\n");
  write_file(root / "autograd/cpu/sub/y.cpp", "#include \"../x.hpp\"\n#include <tapegrad/autograd/tensor.hpp>\n");
  write_file(root / "autograd/cpu/z.cpp", "#include \"../errors.hpp\"\n// #include \"../tensor.hpp\"\n"
                                          "#include \"../tensor.hpp\"\n");
  const std::vector<std::string> found = kernel_includes_outside(root);
  REQUIRE(found.size() == 2);
  CHECK(found[0].rfind("autograd/cpu/sub/y.cpp:2 includes autograd/tensor.hpp (autograd/cpu/ may include only "
                       "autograd/cpu/, autograd/dtype.hpp, ", 0) == 0);
  CHECK(found[1].rfind("autograd/cpu/z.cpp:3 includes autograd/tensor.hpp (", 0) == 0);
  const std::vector<std::string> through = kernel_headers_not_standalone(root);
  REQUIRE(through.size() == 1);
  CHECK(through[0].rfind("autograd/errors.hpp:1 includes autograd/tensor.hpp (", 0) == 0);
  fs::remove_all(root);
}
