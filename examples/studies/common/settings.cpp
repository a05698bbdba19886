// settings.cpp — the shared settings' options, optimizer, description and arguments.
#include "settings.hpp"

#include <CLI/CLI.hpp>

#include "../../cli_checks.hpp"

namespace study {

using namespace tapegrad;

bool given(const CLI::App& app, const char* option) { return app.count(option) > 0; }

void add_training_options(CLI::App& app, Training& t) {
  app.add_option("--optimizer", t.optimizer, "adamw, adam or sgd (momentum 0.9)")->check(CLI::IsMember({"adamw", "adam", "sgd"}));
  app.add_option("--lr", t.lr, "peak learning rate, the same for every run")->check(cli::positive);
  app.add_option("--weight-decay", t.weight_decay, "weight decay of the matrices (decoupled for adamw)")->check(cli::non_negative);
  app.add_option("--schedule", t.schedule, "after the warm-up: cosine or linear (to --min-lr-ratio x lr), constant, noam (1/sqrt t)")
      ->check(CLI::IsMember(training::schedule_names()));
  app.add_option("--warmup", t.warmup, "linear warm-up steps (>= --steps: a tenth of the steps)")->check(cli::non_negative);
  app.add_option("--min-lr-ratio", t.min_lr_ratio, "final lr / peak lr for cosine and linear")->check(cli::range(0.0, 1.0));
  app.add_option("--clip", t.clip, "gradient clipping at this global norm (0: off)")->check(cli::non_negative);
  app.add_option("--steps", t.steps, "optimizer steps of every run")->check(cli::positive);
}

void smoke_training(const CLI::App& app, Training& t) {
  unless_given(app, "--steps", t.steps, 30);
  unless_given(app, "--warmup", t.warmup, 5);
  unless_given(app, "--lr", t.lr, 3e-3);
}

void add_machinery_options(CLI::App& app, Machinery& m, const std::string& smoke_help, const std::string& check_help) {
  app.add_option("--seed", m.seed, "seed of every model's initialization and of the data drawn at random (batches, held-out examples)");
  app.add_option("--threads", m.threads, "threads for OpenMP and OpenBLAS (0: TAPEGRAD_NUM_THREADS or all cores)")
      ->check(cli::non_negative);
  app.add_option("--out", m.out, "folder for report.md, the CSV files and the SVG charts (created when missing)");
  app.add_flag("--smoke", m.smoke, smoke_help);
  app.add_flag("--check", m.check, check_help);
}

void require_heads_divide(std::int64_t d_model, std::int64_t heads) {
  if (d_model % heads != 0) throw ValueError("--heads " + std::to_string(heads) + " must divide --d-model " + std::to_string(d_model));
}

std::unique_ptr<optim::Optimizer> make_optimizer(const nn::Module& model, const Training& t) {
  if (t.optimizer == "sgd")
    return std::make_unique<optim::SGD>(
        optim::weight_decay_groups(model, optim::SGDOptions(t.lr).momentum(0.9).weight_decay(t.weight_decay)));
  const auto options = optim::AdamOptions(t.lr).betas(optim::Betas(0.9, t.beta2)).weight_decay(t.weight_decay);
  if (t.optimizer == "adam") return std::make_unique<optim::Adam>(optim::weight_decay_groups(model, options));
  return std::make_unique<optim::AdamW>(optim::weight_decay_groups(model, options));
}

std::unique_ptr<optim::Optimizer> make_optimizer(const nn::TransformerLM& model, const Training& t) {
  const double alpha = model.config.block.branch_depth_exponent;
  if (alpha == 0.0) return make_optimizer(static_cast<const nn::Module&>(model), t);
  if (t.optimizer == "sgd")
    throw ValueError("--optimizer sgd: the depth parametrizations (depth-mup, completep; branch exponent " + fmt(alpha) +
                     ") scale Adam's lr and eps, and SGD has no eps; use adam or adamw");
  const auto options = optim::AdamOptions(t.lr).betas(optim::Betas(0.9, t.beta2)).weight_decay(t.weight_decay);
  if (t.optimizer == "adam") return std::make_unique<optim::Adam>(optim::depth_scaled_groups(model, options));
  return std::make_unique<optim::AdamW>(optim::depth_scaled_groups(model, options));
}

std::string describe(const Training& t) {
  std::string text = t.optimizer == "sgd" ? "SGD with momentum 0.9, L2 weight decay " + fmt(t.weight_decay)
                                          : std::string(t.optimizer == "adam" ? "Adam" : "AdamW") + ", betas (0.9, " +
                                                fmt(t.beta2) + "), weight decay " + fmt(t.weight_decay);
  text += " (none on norms, biases, embeddings); " + std::to_string(t.steps) + " steps, lr " + fmt(t.lr) + ", " +
          training::describe(t.schedule_settings());
  return text + "; gradient clipping " + (t.clip > 0 ? "at global norm " + fmt(t.clip) : "off");
}

training::Arguments study_arguments(training::Arguments subject, const Training& t, const training::Arguments& after,
                                    const Machinery& m) {
  training::Arguments a = std::move(subject);
  a.insert(a.end(), {{"--optimizer", t.optimizer}, {"--lr", fmt(t.lr, 6)}, {"--weight-decay", fmt(t.weight_decay, 6)},
                     {"--schedule", t.schedule}, {"--warmup", std::to_string(t.warmup)},
                     {"--min-lr-ratio", fmt(t.min_lr_ratio, 6)}, {"--clip", fmt(t.clip, 6)}, {"--steps", std::to_string(t.steps)}});
  a.insert(a.end(), after.begin(), after.end());
  a.insert(a.end(), {{"--seed", std::to_string(m.seed)}, {"--threads", std::to_string(m.threads)}, {"--out", m.out}});
  return a;
}

}  // namespace study
