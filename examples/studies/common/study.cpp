// study.cpp — the frame of main(), the shared report pieces and the --check helpers.
#include "study.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <tapegrad/io/file.hpp>

namespace study {

using namespace tapegrad;

int run_main(CLI::App& app, int argc, char** argv, const Machinery& m, const Program& program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);  // --help prints and returns 0; an invalid option is named, status 1 or more
  }
  if (m.smoke && program.smoke) program.smoke();
  try {
    if (program.validate) program.validate();
    if (m.threads > 0) set_num_threads(static_cast<int>(m.threads));
    std::filesystem::create_directories(m.out);
    const CheckResult check = program.run();
    if (m.check) {
      if (!print_problems(check.problems)) return 1;
      std::printf("%s\n", check.passed.empty() ? (program.name + ": check passed").c_str() : check.passed.c_str());
    }
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "\n%s\n", e.what());
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.name.c_str(), e.what());
    return 1;
  }
  return 0;
}

// ---------------------------------------------------------------- report.md

std::string machine_line() {
  std::string cpu = "unknown CPU";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return cpu + ", " + std::to_string(get_num_threads()) + " thread(s) (" +
         std::to_string(std::thread::hardware_concurrency()) + " hardware threads), OpenBLAS kernels " + blas_core_name();
}

std::string setup_section(const std::string& timing, const Training& t, const std::string& more, const std::string& command) {
  return "## Setup\n\nMachine: " + machine_line() + ". Whole study: " + timing + ".\n\nTraining: " + describe(t) + ". " + more +
         "\n\nReproduce with:\n\n```sh\n" + command + "\n```\n\n";
}

namespace {
const std::vector<std::string> kOutputFiles = {"report.md", "summary.csv", "curves.csv", "val_loss.svg", "train_loss.svg"};
}

void write_outputs(const Outputs& o, const std::string& dir, const std::string& timing) {
  o.summary.write_csv(dir + "/summary.csv");
  o.curves.write_csv(dir + "/curves.csv");
  o.val_loss.write_svg(dir + "/val_loss.svg");
  o.train_loss.write_svg(dir + "/train_loss.svg");
  io::write_file_atomic(dir + "/report.md", o.report);
  std::printf("\n%s\nwrote %s/%s; whole study %s\n", o.summary.markdown().c_str(), dir.c_str(), join(kOutputFiles).c_str(),
              timing.c_str());
}

// ---------------------------------------------------------------- --check

std::vector<std::string> check_files(const std::string& dir, const std::vector<std::string>& files) {
  std::vector<std::string> problems;
  for (const std::string& file : files) {
    const std::string path = dir + "/" + file;
    if (!std::filesystem::is_regular_file(path) || std::filesystem::file_size(path) == 0)
      problems.push_back(path + " is missing or empty");
    else if (path.ends_with(".svg") && !io::read_file(path).starts_with("<svg"))
      problems.push_back(path + " is not an SVG");
  }
  return problems;
}

std::vector<std::string> check_csv_header(const std::string& path, const std::vector<std::string>& columns) {
  std::ifstream csv(path);
  std::string header;
  std::getline(csv, header);
  if (header == join(columns, ",")) return {};
  return {path + ": header is '" + header + "', expected '" + join(columns, ",") + "'"};
}

std::vector<std::string> check_outputs_written(const std::string& dir, const std::vector<std::string>& summary_columns) {
  std::vector<std::string> problems = check_files(dir, kOutputFiles);
  for (const std::string& p : check_csv_header(dir + "/summary.csv", summary_columns)) problems.push_back(p);
  return problems;
}

void check_trained(const std::string& name, const RunLog& r, double first, double last, std::vector<std::string>& problems) {
  for (double v : r.train_loss)
    if (!std::isfinite(v)) problems.push_back(name + ": non-finite training loss");
  if (!std::isfinite(last)) problems.push_back(name + ": non-finite validation loss");
  else if (!(last < first)) problems.push_back(name + ": validation loss did not fall (" + fmt(first) + " -> " + fmt(last) + ")");
}

void check_share(const std::string& name, const std::string& what, double share, std::vector<std::string>& problems) {
  if (!(share >= 0 && share <= 1)) problems.push_back(name + ": " + what + " out of [0, 1]");
}

bool print_problems(const std::vector<std::string>& problems) {
  for (const auto& p : problems) std::printf("check failed: %s\n", p.c_str());
  return problems.empty();
}

}  // namespace study
