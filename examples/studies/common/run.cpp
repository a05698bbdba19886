// run.cpp — the training loop of run.hpp.
#include "run.hpp"

#include <cmath>
#include <cstdio>

namespace study {

using namespace tapegrad;

bool RunLog::record(std::int64_t step, double loss, double lr_of_step, const training::UpdateResult& u) {
  if (!u.ok()) {
    diverged_at = step + 1;
    diverged_why = u.problem;
    return false;
  }
  steps_run = step + 1;
  train_loss.push_back(loss);
  grad_norm.push_back(u.grad_norm);
  lr.push_back(lr_of_step);
  return true;
}

void train_run(nn::Module& model, const Training& t, const RunSteps& steps, training::Progress& progress, RunLog& log) {
  auto optimizer = make_optimizer(model, t);
  auto schedule = training::make_schedule(*optimizer, t.schedule_settings());
  const nn::NamedTensors params = model.named_parameters();

  log.val_steps.push_back(0);
  double val_loss = steps.validate();
  for (std::int64_t step = 0; step < t.steps; ++step) {
    schedule->apply(step);
    const Tensor loss = steps.batch_loss(step);
    const training::UpdateResult u = training::update(*optimizer, loss, params, t.clip);
    if (!log.record(step, loss.item(), optimizer->lr(0), u)) break;
    progress.done += steps.work_per_step;
    if (log.validation_due(steps.eval_interval, t.steps)) {
      log.val_steps.push_back(static_cast<double>(log.steps_run));
      val_loss = steps.validate();
      if (!std::isfinite(val_loss)) {  // finite gradients, but the update overflowed
        log.diverged_at = log.steps_run;
        log.diverged_why = "non-finite validation loss";
        break;
      }
    }
    char line[200];
    std::snprintf(line, sizeof line, "%s  step %lld/%lld  loss %.4f  %s %.4f  |g| %.3g", steps.name.c_str(),
                  static_cast<long long>(log.steps_run), static_cast<long long>(t.steps), loss.item(), steps.val_label.c_str(),
                  val_loss, u.grad_norm);
    progress.show(line);
  }
  if (log.diverged()) {
    progress.done += static_cast<double>(t.steps - log.steps_run) * steps.work_per_step;  // the steps it will not run
    progress.line(steps.name + " diverged at step " + std::to_string(log.diverged_at) + ": " + log.diverged_why);
  }
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

}  // namespace study
