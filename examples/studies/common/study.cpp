// study.cpp — the shared pieces of study.hpp.
#include "study.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <tapegrad/io/file.hpp>

namespace study {

using namespace tapegrad;

// ---------------------------------------------------------------- training settings

void add_training_options(CLI::App& app, Training& t) {
  app.add_option("--optimizer", t.optimizer, "adamw, adam or sgd (momentum 0.9)")->check(CLI::IsMember({"adamw", "adam", "sgd"}));
  app.add_option("--lr", t.lr, "peak learning rate, the same for every run")->check(CLI::PositiveNumber);
  app.add_option("--weight-decay", t.weight_decay, "weight decay of the matrices (decoupled for adamw)")->check(CLI::NonNegativeNumber);
  app.add_option("--schedule", t.schedule, "after the warm-up: cosine or linear (to --min-lr-ratio x lr), constant, noam (1/sqrt t)")
      ->check(CLI::IsMember(training::schedule_names()));
  app.add_option("--warmup", t.warmup, "linear warm-up steps (>= --steps: a tenth of the steps)")->check(CLI::NonNegativeNumber);
  app.add_option("--min-lr-ratio", t.min_lr_ratio, "final lr / peak lr for cosine and linear")->check(CLI::Range(0.0, 1.0));
  app.add_option("--clip", t.clip, "gradient clipping at this global norm (0: off)")->check(CLI::NonNegativeNumber);
  app.add_option("--steps", t.steps, "optimizer steps of every run")->check(CLI::PositiveNumber);
}

void smoke_training(const CLI::App& app, Training& t) {
  unless_given(app, "--steps", t.steps, 30);
  unless_given(app, "--warmup", t.warmup, 5);
  unless_given(app, "--lr", t.lr, 3e-3);
}

void add_machinery_options(CLI::App& app, Machinery& m, const std::string& smoke_help, const std::string& check_help) {
  app.add_option("--seed", m.seed, "seed of every model's initialization and of the data drawn at random (batches, held-out examples)");
  app.add_option("--threads", m.threads, "threads for OpenMP and OpenBLAS (0: TAPEGRAD_NUM_THREADS or all cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--out", m.out, "folder for report.md, the CSV files and the SVG charts (created when missing)");
  app.add_flag("--smoke", m.smoke, smoke_help);
  app.add_flag("--check", m.check, check_help);
}

std::unique_ptr<optim::Optimizer> make_optimizer(const nn::Module& model, const Training& t) {
  if (t.optimizer == "sgd")
    return std::make_unique<optim::SGD>(
        optim::weight_decay_groups(model, optim::SGDOptions(t.lr).momentum(0.9).weight_decay(t.weight_decay)));
  const auto options = optim::AdamOptions(t.lr).betas(optim::Betas(0.9, t.beta2)).weight_decay(t.weight_decay);
  if (t.optimizer == "adam") return std::make_unique<optim::Adam>(optim::weight_decay_groups(model, options));
  return std::make_unique<optim::AdamW>(optim::weight_decay_groups(model, options));
}

bool RunLog::record(std::int64_t step, double loss, const training::UpdateResult& u) {
  if (!u.ok()) {
    diverged_at = step + 1;
    diverged_why = u.problem;
    return false;
  }
  steps_run = step + 1;
  train_loss.push_back(loss);
  return true;
}

std::vector<std::int64_t> until_eos(const std::vector<std::int64_t>& seq, std::size_t begin, std::size_t end,
                                    std::int64_t eos, bool& ended) {
  ended = false;
  std::vector<std::int64_t> out;
  for (std::size_t k = begin; k < end && !ended; ++k) {
    ended = seq[k] == eos;
    if (!ended) out.push_back(seq[k]);
  }
  return out;
}

std::string describe(const Training& t) {
  std::string text = t.optimizer == "sgd" ? "SGD with momentum 0.9, L2 weight decay " + fmt(t.weight_decay)
                                          : std::string(t.optimizer == "adam" ? "Adam" : "AdamW") + ", betas (0.9, " +
                                                fmt(t.beta2) + "), weight decay " + fmt(t.weight_decay);
  text += " (none on norms, biases, embeddings); " + std::to_string(t.steps) + " steps, lr " + fmt(t.lr) + ", " +
          training::describe(t.schedule_settings());
  return text + "; gradient clipping " + (t.clip > 0 ? "at global norm " + fmt(t.clip) : "off");
}

// ---------------------------------------------------------------- the command line

training::Arguments training_arguments(const Training& t) {
  return {{"--optimizer", t.optimizer}, {"--lr", fmt(t.lr, 6)},           {"--weight-decay", fmt(t.weight_decay, 6)},
          {"--schedule", t.schedule},   {"--warmup", std::to_string(t.warmup)}, {"--min-lr-ratio", fmt(t.min_lr_ratio, 6)},
          {"--clip", fmt(t.clip, 6)},   {"--steps", std::to_string(t.steps)}};
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

// ---------------------------------------------------------------- the machine

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

// ---------------------------------------------------------------- small sums

double mean(const std::vector<double>& v) {
  double total = 0;
  for (double x : v) total += x;
  return v.empty() ? NAN : total / static_cast<double>(v.size());
}

double mean_of_last(const std::vector<double>& v, std::size_t n) {
  const std::size_t k = std::min(n, v.size());
  return mean(std::vector<double>(v.end() - static_cast<std::ptrdiff_t>(k), v.end()));
}

std::vector<double> smooth(const std::vector<double>& v, double beta) {
  std::vector<double> out;
  double m = 0, correction = 1;
  for (double x : v) {
    m = beta * m + (1 - beta) * x;
    correction *= beta;
    out.push_back(m / (1 - correction));
  }
  return out;
}

Series loss_curve(const std::string& name, const std::vector<double>& loss, double beta, bool dashed) {
  Series s{name, {}, smooth(loss, beta), dashed};
  for (std::size_t i = 1; i <= s.y.size(); ++i) s.x.push_back(static_cast<double>(i));
  return s;
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

bool print_problems(const std::vector<std::string>& problems) {
  for (const auto& p : problems) std::printf("check failed: %s\n", p.c_str());
  return problems.empty();
}

}  // namespace study
