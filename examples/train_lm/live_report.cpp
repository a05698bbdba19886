// live_report.cpp — LiveReport of live_report.hpp: the cadence, the measurements, the page.
#include "live_report.hpp"

#include <filesystem>

#include "common/report.hpp"
#include "run.hpp"

namespace lm {

using namespace tapegrad;

namespace {

// FILE.html -> FILE<suffix>; a name without .html keeps it whole (FILE -> FILE<suffix>).
std::string beside(const std::string& page, const std::string& suffix) {
  const std::filesystem::path p(page);
  return (p.extension() == ".html" ? std::filesystem::path(p).replace_extension() : p).string() + suffix;
}

std::string model_line(const nn::TransformerLM& m) {
  const nn::TransformerLMConfig& c = m.config;
  const std::int64_t kv = c.block.n_kv_heads > 0 ? c.block.n_kv_heads : c.block.n_heads;
  return std::to_string(c.n_layers) + (c.n_layers == 1 ? " block" : " blocks") + ", d_model " + std::to_string(c.block.d_model) + ", " +
         std::to_string(c.block.n_heads) + " heads (" + std::to_string(kv) + " key/value), context " +
         std::to_string(c.max_seq_len) + ", placement " + c.block.placement.name + ", norm " + c.block.norm.name +
         (c.block.rope ? ", rotary positions" : ", learned positions") + ": " + std::to_string(m.num_parameters()) +
         " parameters";
}

std::string run_line(const Settings& s, std::int64_t T) {
  return "batch " + std::to_string(s.batch) + " × " + std::to_string(T) + " tokens; AdamW, peak lr " +
         study::fmt(s.lr) + ", " + s.schedule + " schedule, warm-up " + std::to_string(s.warmup) + " steps, weight decay " +
         study::fmt(s.weight_decay) + ", clip " + study::fmt(s.clip) + "; seed " + std::to_string(s.seed) +
         "; evaluation every " + std::to_string(s.eval_interval) + " steps on " + std::to_string(s.eval_batches) +
         " batches";
}

}  // namespace

std::string report_path(const Options& options) {
  const Settings& s = options.s;
  if (options.given("--report") || s.log.empty()) return s.report;
  return std::filesystem::path(s.log).replace_extension(".html").string();
}

LiveReport::LiveReport(const std::string& path, const Settings& s, const nn::TransformerLM& model,
                       std::int64_t resume_step, double baseline)
    : path_(path),
      s_(s),
      every_(std::max<std::int64_t>(1, s.eval_interval / 10)),
      tokens_per_step_(s.batch * model.config.max_seq_len),
      history_(s.log, beside(path, ".blocks.csv"), beside(path, ".speed.csv"), resume_step, model.config.n_layers) {
  facts_.model = model_line(model);
  facts_.data = (s.data.empty() ? std::string("the Debian licence texts") : "`" + s.data + "`") + ", " + s.tokenizer +
                " tokenizer of " + std::to_string(model.config.vocab_size) + " tokens, 90/10 train/validation split";
  facts_.run = run_line(s, model.config.max_seq_len);
  facts_.baseline = baseline;
  facts_.blocks_file = std::filesystem::path(beside(path, ".blocks.csv")).filename().string();
}

bool LiveReport::due(std::int64_t step) const {
  return step % every_ == 0 || step % s_.eval_interval == 0 || step == s_.steps;
}

void LiveReport::measure(std::int64_t step, const nn::TransformerLM& model) {
  if (due(step)) history_.add_block_norms(step, nn::block_grad_norms(*model.blocks));
}

void LiveReport::add(std::int64_t step, const StepResult& r, double update_seconds) {
  history_.add_metrics(step, r.loss, r.smoothed, r.val_loss, r.lr, r.grad_norm);
  seconds_ += update_seconds, ++steps_;
  if (due(step) && seconds_ > 0) {
    history_.add_speed(step, static_cast<double>(tokens_per_step_ * steps_) / seconds_);
    seconds_ = 0, steps_ = 0;
  }
  if (r.evaluated) write();
}

void LiveReport::write() {
  history_.flush();
  facts_.planned_steps = s_.steps;
  io::write_file_atomic(path_, report_page(history_, facts_));
}

}  // namespace lm
