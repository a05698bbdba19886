// run.hpp — one train_lm run: its data, model, optimizer, schedule and generators, built new
// or restored from a checkpoint, and what it does at each step. main.cpp drives it.
#pragma once

#include <memory>
#include <string>

#include <tapegrad/tapegrad.hpp>

#include "data_parallel.hpp"
#include "lens.hpp"
#include "live_report.hpp"
#include "options.hpp"

namespace lm {

struct StepResult {
  double loss = 0, grad_norm = 0, lr = 0, val_loss = NAN, smoothed = 0;
  double val_loss_ema = NAN;  // --ema: the validation loss of the averaged weights
  bool evaluated = false;
  std::string lens;     // --lens, after an evaluation: the logit lens's line for the log
  std::string skipped;  // empty: the update was taken; else why not (--skip-loss-z, --skip-grad-z)
};

class Run {
 public:
  // Builds a new run, or restores the one saved in --checkpoint (--resume); prints what it did.
  Run(Options& options, DataParallel& job);

  // One optimizer update on a batch of the training split; evaluates and logs on rank 0.
  StepResult train_step();
  // The validation loss (nats per token), on rank 0.
  double evaluate();
  // The validation loss, and with --lens the logit lens of the same forward passes, written to
  // its file; returns the lens's line for the log in `lens` (lens.hpp).
  double evaluate_with_lens(std::string& lens);
  // The same with the moving average of the weights (--ema); NaN without one.
  double evaluate_ema();
  bool has_ema() const { return ema_ != nullptr; }
  std::int64_t skipped_updates = 0;  // by this process's steps
  // Saves the checkpoint and the tokenizer (rank 0; every rank checks that they agree), and
  // says so (empty on the other ranks).
  std::string save(const char* why);
  // Text generated from "The " with the run's sampling generator.
  std::string sample(std::int64_t tokens);

  const Settings& s;
  std::int64_t step = 0;       // updates done
  std::int64_t first_step = 0;  // where this process started
  std::int64_t last_step = 0;   // where this process stops (--steps, or --stop-after)
  double baseline = 0;          // the unigram baseline on the validation split
  std::int64_t vocab_size() const { return tokenizer_->vocab_size(); }
  const tapegrad::nn::TransformerLM& model() const { return *model_; }

 private:
  void build(Options& options);
  void resume(Options& options);
  void wire_state();
  DataParallel& job_;
  std::unique_ptr<tapegrad::data::Tokenizer> tokenizer_;
  std::unique_ptr<tapegrad::data::TokenStream> stream_;
  std::shared_ptr<tapegrad::nn::TransformerLM> model_;
  std::unique_ptr<tapegrad::optim::AdamW> optimizer_;
  std::unique_ptr<tapegrad::optim::LRSchedule> schedule_;
  tapegrad::Generator batch_gen_, sample_gen_;
  tapegrad::io::Metadata run_settings_;
  std::unique_ptr<tapegrad::training::MetricsLog> log_;
  std::unique_ptr<tapegrad::optim::ExponentialMovingAverage> ema_;  // --ema
  std::unique_ptr<tapegrad::training::SpikeGuard> guard_;           // --skip-loss-z, --skip-grad-z
  tapegrad::training::TrainingState state_;
  std::unique_ptr<LiveReport> report_;  // rank 0, unless --report "": train_lm.html (live_report.hpp)
  std::unique_ptr<LensLog> lens_;       // rank 0, with --lens (lens.hpp)
};

}  // namespace lm
