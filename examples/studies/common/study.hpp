// study.hpp — the frame of every study's main(), and the pieces of its report and its
// --check that the studies share.
//
//   int main(int argc, char** argv) {
//     Settings s;
//     CLI::App app{"Study: ..."};
//     add_options(app, s);                               // the study's, then study::add_*_options
//     const study::Program program{
//         .name = "translate",
//         .smoke = [&] { ... },                          // --smoke: tiny sizes for what was not given
//         .validate = [&] { ... },                       // throws on settings that cannot run
//         .run = [&] { ...; return check; }};            // the runs and the outputs
//     return study::run_main(app, argc, argv, s, program);
//   }
//
// run_main parses the command line, applies --smoke, then, inside one try: validate(), the
// threads (--threads), the folder --out, run(), and with --check the problems run() found or
// the line that says there were none. An exception ends the program with
// "translate: error: ..." and exit status 1; study::Interrupted (Ctrl-C) with its message and 130.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/report.hpp"
#include "run.hpp"
#include "settings.hpp"

namespace study {

// What --check found: the problems (none: it passed) and the line that then says so.
struct CheckResult {
  std::vector<std::string> problems;
  std::string passed;  // empty: "<name>: check passed"
};

struct Program {
  std::string name;                    // "translate": the first word of its messages
  std::function<void()> smoke;         // --smoke: tiny sizes for every option not given
  std::function<void()> validate;      // checks the settings and settles those that follow from others
  std::function<CheckResult()> run;    // the runs and the outputs; what --check found (when asked)
};

// Thrown by a run stopped with Ctrl-C; run_main prints its message and returns 130 (128 + SIGINT).
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The exit status of the study.
int run_main(CLI::App& app, int argc, char** argv, const Machinery& m, const Program& program);

// ---------------------------------------------------------------- report.md

// "CPU model, 2 thread(s) (2 hardware threads), OpenBLAS kernels Haswell".
std::string machine_line();
// report.md's "## Setup": the machine, the wall time of the whole study (`timing`, from
// training::Progress::timing), "Training: " describe(t) and then `more` (what else every run
// shares), and the command that reruns the study.
std::string setup_section(const std::string& timing, const Training& t, const std::string& more, const std::string& command);

// What translate and adaln_conditional write into --out: summary.csv, curves.csv,
// val_loss.svg, train_loss.svg and report.md.
struct Outputs {
  Table summary, curves;
  LineChart val_loss, train_loss;
  std::string report;  // report.md's text
};
// Writes them (each file atomically), then prints the summary and what was written.
void write_outputs(const Outputs& o, const std::string& dir, const std::string& timing);

// ---------------------------------------------------------------- --check

// Each file in dir must be there and not empty, and each .svg an SVG. Returns the problems.
std::vector<std::string> check_files(const std::string& dir, const std::vector<std::string>& files);
// The first line of the CSV file at path must be these columns. Returns the problem, if any.
std::vector<std::string> check_csv_header(const std::string& path, const std::vector<std::string>& columns);
// The files of write_outputs are in dir, and summary.csv has these columns.
std::vector<std::string> check_outputs_written(const std::string& dir, const std::vector<std::string>& summary_columns);
// A run that did not diverge: every training loss finite, and the validation loss fell from
// `first` to `last`. Problems start with `name`.
void check_trained(const std::string& name, const RunLog& r, double first, double last, std::vector<std::string>& problems);
// An accuracy (what: "token accuracy") must lie in [0, 1].
void check_share(const std::string& name, const std::string& what, double share, std::vector<std::string>& problems);
// Prints "check failed: ..." per problem; true when there were none.
bool print_problems(const std::vector<std::string>& problems);

}  // namespace study
