// run.cpp — a train_lm run: built, resumed, stepped, evaluated, saved.
#include "run.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "files.hpp"
#include "resources.hpp"

namespace lm {

using namespace tapegrad;

Run::Run(Options& options, DataParallel& job) : s(options.s), job_(job), batch_gen_(0), sample_gen_(0) {
  if (s.resume) resume(options);
  else build(options);
  if (s.zero1) job_.shard_optimizer(*optimizer_);  // after a resume loaded the full state: keeps its shard
  model_->set_activation_checkpointing(s.checkpoint_activations);
  if (job_.on())
    std::printf("ddp: %d processes, batch %lld = %d x %lld rows, %lld gradient buckets, %lld threads each\n", job_.world,
                static_cast<long long>(s.batch), job_.world, static_cast<long long>(s.batch / job_.world),
                static_cast<long long>(job_.num_buckets()), static_cast<long long>(get_num_threads()));
  if (s.grad_accum > 1)
    std::printf("gradient accumulation: %lld rows per %s as %lld micro-batches of %lld\n",
                static_cast<long long>(s.batch / job_.world), job_.world > 1 ? "process" : "step",
                static_cast<long long>(s.grad_accum),
                static_cast<long long>(s.batch / job_.world / s.grad_accum));
  training::Unigram unigram(vocab_size());
  unigram.add_all(stream_->tokens(data::Split::train));
  baseline = unigram.cross_entropy(stream_->tokens(data::Split::val));
  std::printf("unigram baseline (val): %.4f nats/token; uniform: %.4f\n", baseline, std::log(double(vocab_size())));
  guard_ = std::make_unique<training::SpikeGuard>(
      training::SpikeGuardOptions{s.skip_loss_z, s.skip_grad_z, static_cast<std::size_t>(s.skip_window)});
  guard_->restore(state_.extra);  // the windows of the steps before a resume
  std::vector<std::string> columns;
  if (ema_) columns.push_back("val_loss_ema");
  if (guard_->on()) columns.push_back("skipped");
  log_ = std::make_unique<training::MetricsLog>(job_.lead() ? s.log : "", s.resume ? step : -1, columns);
  log_->restore(state_.extra);
  if (const std::string page = report_path(options); job_.lead() && !page.empty())
    report_ = std::make_unique<LiveReport>(page, s, *model_, s.resume ? step : -1, baseline);
  if (s.lens && job_.lead()) lens_ = std::make_unique<LensLog>(lens_path(s.log), s.resume ? step : -1);
  first_step = step;
  last_step = s.stop_after > 0 ? std::min(s.steps, step + s.stop_after) : s.steps;
}

namespace {
// The corpus, its tokenizer (the one saved beside the checkpoint when resuming) and the stream.
std::unique_ptr<data::TokenStream> load_data(const Settings& s, std::unique_ptr<data::Tokenizer>& tokenizer) {
  const data::Corpus corpus = s.data.empty() ? data::Corpus::default_corpus() : data::Corpus::from_files({s.data});
  if (s.resume) {
    if (!std::filesystem::exists(tokenizer_path(s.checkpoint)))
      throw std::invalid_argument("--resume: the tokenizer " + tokenizer_path(s.checkpoint) + " saved beside " +
                                  s.checkpoint + " is missing");
    tokenizer = data::load_tokenizer(tokenizer_path(s.checkpoint));
  } else if (s.tokenizer == "gpt2") {
    if (s.tokenizer_dir.empty()) throw std::invalid_argument("--tokenizer gpt2 needs --tokenizer-dir, the folder of vocab.json and merges.txt");
    const std::filesystem::path dir(s.tokenizer_dir);
    tokenizer = std::make_unique<data::Gpt2Tokenizer>(
        data::Gpt2Tokenizer::from_files((dir / "vocab.json").string(), (dir / "merges.txt").string()));
  } else if (s.tokenizer == "bpe") {
    tokenizer = std::make_unique<data::BpeTokenizer>(data::BpeTokenizer::train(corpus.texts(), s.bpe_vocab));
  } else {
    tokenizer = std::make_unique<data::CharTokenizer>(data::CharTokenizer::from_texts(corpus.texts()));
  }
  auto stream = std::make_unique<data::TokenStream>(corpus, *tokenizer, 0.1);
  std::printf("data: %zu file(s), %lld bytes, %s tokenizer with %lld tokens: %lld train / %lld val tokens\n",
              corpus.names().size(), static_cast<long long>(corpus.num_bytes()), tokenizer->name().c_str(),
              static_cast<long long>(tokenizer->vocab_size()), static_cast<long long>(stream->size(data::Split::train)),
              static_cast<long long>(stream->size(data::Split::val)));
  return stream;
}

// weight_decay_groups' two groups, each scaled by the model's depth parametrization (none by
// default). Under nGPT every step ends with the matrices renormalized (a step post-hook; with
// --zero1 each rank renormalizes what it owns before sharing it).
std::unique_ptr<optim::AdamW> make_optimizer(nn::TransformerLM& model, const Settings& s) {
  auto opt = std::make_unique<optim::AdamW>(optim::depth_scaled_groups(
      model, optim::AdamOptions(s.lr).betas(optim::Betas(0.9, 0.95)).weight_decay(s.weight_decay)));
  if (nn::placement_info(model.config.block.placement).hypersphere)
    optim::register_ngpt_normalization(*opt, model);  // the handle is not kept: the hook lives as long as opt
  return opt;
}

void print_model(const nn::TransformerLM& m) {
  const auto& c = m.config;
  std::string extra = c.stream.scheme.name == "plain" ? "" : ", stream " + c.stream.scheme.name;
  if (c.stream.attnres_block_size != 1) extra += ", attnres_block_size " + std::to_string(c.stream.attnres_block_size);
  if (c.block.branch_depth_exponent != 0.0)
    extra += ", branch multiplier " + number_str(c.block.branch_multiplier(c.n_layers)) + " (exponent " +
             number_str(c.block.branch_depth_exponent) + ", base depth " + std::to_string(c.block.branch_base_depth) + ")";
  std::printf("model: %lld layers, d_model %lld, %lld heads, T %lld, placement %s, norm %s%s: %lld parameters\n",
              static_cast<long long>(c.n_layers), static_cast<long long>(c.block.d_model),
              static_cast<long long>(c.block.n_heads), static_cast<long long>(c.max_seq_len), c.block.placement.name.c_str(),
              c.block.norm.name.c_str(), extra.c_str(), static_cast<long long>(m.num_parameters()));
}
}  // namespace

// What a checkpoint saves and restores: the model, the optimizer, the schedule, the three
// generators (the batches, the dropout masks, the sampling at the end) and, with --ema, the
// moving average of the weights (made here, from the new model's weights or before the file's
// averages are loaded into it).
void Run::wire_state() {
  if (s.ema > 0) ema_ = std::make_unique<optim::ExponentialMovingAverage>(model_->named_parameters(), s.ema);
  state_.ema = ema_.get();
  state_.model = model_.get();
  state_.optimizer = optimizer_.get();
  state_.schedule = schedule_.get();
  state_.generators = {{"batches", &batch_gen_}, {"dropout", &default_generator()}, {"sampling", &sample_gen_}};
}

void Run::build(Options& options) {
  stream_ = load_data(s, tokenizer_);
  check_memory(s, options.model_config(vocab_size()), job_);  // before the model is built
  manual_seed(s.seed);
  model_ = std::make_shared<nn::TransformerLM>(options.model_config(vocab_size()));
  optimizer_ = make_optimizer(*model_, s);
  schedule_ = training::make_schedule(*optimizer_, {s.schedule, s.warmup, s.steps, s.min_lr_ratio});
  print_model(*model_);
  batch_gen_ = Generator(s.seed ^ 0x5eedULL);
  sample_gen_ = Generator(s.seed + 1);
  wire_state();
  run_settings_ = options.run_settings();
  job_.require_same_model(model_->config);
  job_.attach(*model_, false, 0, s.bucket_mb);
}

void Run::resume(Options& options) {
  const io::Checkpoint saved = io::load_checkpoint(s.checkpoint);
  for (const std::string& note : options.take_from(saved, s.checkpoint)) std::printf("note: %s\n", note.c_str());
  stream_ = load_data(s, tokenizer_);
  check_memory(s, io::lm_config_from(saved, s.checkpoint), job_);
  model_ = io::model_from<nn::TransformerLM>(saved, s.checkpoint);  // the configuration and weights of the file
  if (model_->config.vocab_size != vocab_size())
    throw io::FormatError(s.checkpoint + ": the model has " + std::to_string(model_->config.vocab_size) +
                          " tokens, its tokenizer " + std::to_string(vocab_size()));
  optimizer_ = make_optimizer(*model_, s);
  schedule_ = training::schedule_from_state(*optimizer_, training::schedule_state(saved));  // its own settings
  print_model(*model_);
  wire_state();
  training::restore_training_checkpoint(saved, state_);
  step = state_.step;
  std::printf("resumed from %s at step %lld\n", s.checkpoint.c_str(), static_cast<long long>(step));
  // More steps than planned extend the run: the decay is re-planned from here to the new end.
  run_settings_ = options.run_settings();
  const std::int64_t planned = options.planned_steps;
  if (s.steps > planned) {
    const double lr_now = schedule_->lr_at(step);
    if (!schedule_->extend(s.steps, step))
      std::printf("extending the run from %lld to %lld steps (%s has no end to move)\n", static_cast<long long>(planned),
                  static_cast<long long>(s.steps), schedule_->name().c_str());
    else
      std::printf("extending the run from %lld to %lld steps: the %s decay is re-planned from step %lld (lr %.3g) "
                  "down to %.3g at step %lld\n",
                  static_cast<long long>(planned), static_cast<long long>(s.steps), schedule_->name().c_str(),
                  static_cast<long long>(step + 1), lr_now, schedule_->lr_at(s.steps - 1), static_cast<long long>(s.steps));
  } else if (s.steps < planned) {
    std::printf("stopping at step %lld of the %lld planned (the schedule is not changed)\n", static_cast<long long>(s.steps),
                static_cast<long long>(planned));
    run_settings_.front().second = std::to_string(planned);  // "run.steps": the plan stays
  }
  job_.require_same_model(model_->config);
  job_.attach(*model_, true, step, s.bucket_mb);
}

StepResult Run::train_step() {
  job_.arm_fault(fault_at_step_start(s, job_.rank, step));  // tests: --fail-mode throw, kill, hang
  const auto started = std::chrono::steady_clock::now();  // the update's time, for the report's tokens/s
  schedule_->apply(step);
  // Every rank draws the whole global batch from the same generator and keeps its rows:
  // together the ranks train on exactly the batch a single process would.
  const std::int64_t V = vocab_size(), T = model_->config.max_seq_len;
  data::Batch batch = stream_->sample_batch(data::Split::train, s.batch, T, batch_gen_);
  if (job_.world > 1) batch = data::shard_of(batch, job_.rank, job_.world);
  // Dropout: rank r at step t draws from a generator seeded by (seed, t, r), so ranks mask
  // their rows independently and a resumed run draws the same masks.
  if (job_.on())
    default_generator().manual_seed(s.seed ^ (static_cast<std::uint64_t>(step) << 20) ^ static_cast<std::uint64_t>(job_.rank));
  // --grad-accum N: N micro-batches of rows/N, each its own forward and backward.
  const std::int64_t micro_rows = batch.inputs.size(0) / s.grad_accum;
  auto micro_loss = [&](std::int64_t k) {
    const Tensor inputs = s.grad_accum == 1 ? batch.inputs : narrow(batch.inputs, 0, k * micro_rows, micro_rows);
    const Tensor targets = s.grad_accum == 1 ? batch.targets : narrow(batch.targets, 0, k * micro_rows, micro_rows);
    const Tensor logits = model_->forward(inputs);
    return cross_entropy(logits.reshape({-1, V}), targets.reshape({-1}));
  };
  training::UpdateHooks hooks;
  hooks.before_backward = [&](bool last) { job_.before_backward(last); };
  hooks.after_backward = [&] {
    job_.average_gradients();
    if (report_) report_->measure(step + 1, *model_);  // the gradients of this step, before clipping
  };
  hooks.step = job_.step_hook();  // --zero1: each rank steps its shard; empty: optimizer_->step()
  // A spike is judged on the mean loss of all ranks, so that every rank skips the same steps
  // (the gradient norm is already the same everywhere: that of the averaged gradients).
  if (guard_->on()) hooks.skip = [&](double loss, double norm) { return guard_->judge(job_.mean(loss), norm); };
  const training::UpdateResult u =
      training::update(*optimizer_, s.grad_accum, micro_loss, model_->named_parameters(), s.clip, hooks);
  if (!u.ok()) throw optim::NonFiniteError(u.problem);
  ++step;
  if (ema_) ema_->update();  // also after a skipped update: the average's clock is the step
  const double update_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  StepResult r;
  r.loss = job_.mean(u.loss);
  r.grad_norm = u.grad_norm;
  r.lr = optimizer_->lr(0);
  r.skipped = u.skipped;
  skipped_updates += !u.skipped.empty();
  // Evaluations fall on the same steps in a straight and in a resumed run: every
  // --eval-interval steps and at the planned end, not where this process happens to stop.
  r.evaluated = step % s.eval_interval == 0 || step == s.steps;
  if (r.evaluated && job_.lead()) r.val_loss = evaluate_with_lens(r.lens);
  if (r.evaluated && job_.lead() && ema_) r.val_loss_ema = evaluate_ema();
  std::vector<std::string> extra;
  if (ema_) extra.push_back(training::MetricsLog::cell(r.val_loss_ema));
  if (guard_->on()) extra.push_back(guard_->last_skip());
  r.smoothed = log_->add(step, r.loss, r.val_loss, r.lr, r.grad_norm, extra);
  if (report_) report_->add(step, r, update_seconds);  // after an evaluation: writes the page
  return r;
}

double Run::evaluate() { return training::evaluate_lm(*model_, *stream_, s.eval_batches, s.batch, model_->config.max_seq_len); }

double Run::evaluate_with_lens(std::string& line) {
  if (!lens_) return evaluate();
  const training::LensEvaluation e =
      training::evaluate_lens(*model_, *stream_, s.eval_batches, s.batch, model_->config.max_seq_len);
  line = lens_->add(step, e.layers);
  return e.loss;
}

double Run::evaluate_ema() {
  if (!ema_) return NAN;
  optim::ExponentialMovingAverage::Swapped averaged(*ema_);
  return evaluate();
}

std::string Run::save(const char* why) {
  job_.require_in_sync(*model_);  // every rank checks; rank 0 writes
  state_.optimizer_state = job_.full_optimizer_state();  // --zero1: the shards gathered on rank 0
  if (!job_.lead()) return "";
  log_->flush();
  if (report_) report_->write();
  state_.step = step;
  state_.model_config = io::config_metadata(model_->config);
  state_.extra = run_settings_;
  for (const auto& entry : log_->state()) state_.extra.push_back(entry);
  for (const auto& entry : guard_->state()) state_.extra.push_back(entry);
  {
    const auto fault = fault_in_save(s, job_.rank, step);  // tests: --fail-mode kill-in-save
    training::save_training_checkpoint(state_, s.checkpoint);
  }
  state_.optimizer_state.reset();
  tokenizer_->save(tokenizer_path(s.checkpoint));
  return "checkpoint saved to " + s.checkpoint + " at step " + std::to_string(step) + " (" + why + ")";
}

std::string Run::sample(std::int64_t tokens) {
  const std::vector<data::TokenId> prompt_ids = tokenizer_->encode("The ");
  const std::vector<std::int64_t> prompt(prompt_ids.begin(), prompt_ids.end());
  nn::GenerateOptions g;
  g.temperature = 0.8;
  g.top_k = 40;
  g.gen = &sample_gen_;
  const auto P = static_cast<std::int64_t>(prompt.size());
  // Learned positions end at max_seq_len. Past it the sample slides its window over the text
  // (nanoGPT's crop): the whole --sample-tokens, each token from the last --seq-len before it.
  // Cutting the sample short at the context (60 characters for the default model) showed too
  // little to judge it; a window is what the model was trained on, so its text stays its own.
  if (const auto limit = model_->max_length(); limit && P + tokens > *limit) {
    std::printf("note: the model's learned positions end at --seq-len %lld: past it, each token is sampled from the "
                "last %lld tokens (a sliding window)\n",
                static_cast<long long>(*limit), static_cast<long long>(*limit));
    g.sliding_window = true;
  }
  const Tensor out = model_->generate(Tensor::from_vector(prompt, {1, P}), tokens, g);
  return tokenizer_->decode_tensor(out);
}

}  // namespace lm
