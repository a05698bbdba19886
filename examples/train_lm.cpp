// train_lm.cpp — the main job: train a small transformer language model from the command
// line, on a text file or (by default) the licence texts every Debian system ships.
//
//   train_lm                                  # defaults: ~5 minutes on 2 cores
//   train_lm --placement post --norm rmsnorm --layers 6 --steps 2000 --data my.txt
//   train_lm --checkpoint run.tgc --resume    # continue exactly where run.tgc stopped
//   mpirun -n 4 train_lm --ddp --threads 1    # data-parallel: 4 processes share each batch
//
// Shows a live progress line (step, loss, smoothed loss, tokens/s, lr, gradient norm, ETA),
// the validation loss at each eval interval next to the unigram baseline, a generated
// sample at the end; writes metrics as CSV and checkpoints atomically (also on Ctrl-C).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "lm_common.hpp"
#include "lm_ddp.hpp"

using namespace tapegrad;

namespace {

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) { interrupted = true; }

struct Settings {
  std::string data, tokenizer = "char", checkpoint = "train_lm.tgc", log = "train_lm.csv";
  std::int64_t bpe_vocab = 512, layers = 4, d_model = 128, heads = 4, seq_len = 64, batch = 16;
  std::int64_t steps = 1000, warmup = 100, eval_interval = 200, eval_batches = 8, checkpoint_interval = 500;
  std::int64_t sample_tokens = 300, threads = 0, stop_after = 0;
  double lr = 3e-3, min_lr_ratio = 0.1, weight_decay = 0.1, clip = 1.0, residual_scale = 1.0, dropout = 0.0;
  std::string schedule = "cosine", placement = "pre", norm = "layernorm", init = "gpt2";
  std::uint64_t seed = 1337;
  bool resume = false, ddp = false;
  double bucket_mb = 25;
  std::int64_t fail_on_rank = -1, fail_at_step = 0;  // tests: make one rank throw
};

// Cross-entropy of the unigram model fitted on the train split, measured on the val split:
// what a model that ignores context would score. A trained LM must be far below it.
double unigram_baseline(const data::TokenStream& stream, std::int64_t V) {
  std::vector<double> counts(V, 1.0);  // add-one smoothing: no log(0)
  for (auto t : stream.tokens(data::Split::train)) counts[t] += 1;
  double total = 0;
  for (double c : counts) total += c;
  double nll = 0;
  const auto val = stream.tokens(data::Split::val);
  for (auto t : val) nll -= std::log(counts[t] / total);
  return nll / static_cast<double>(val.size());
}

// Mean cross-entropy over the first `batches` windows of the validation split.
double evaluate(nn::TransformerLM& model, const data::TokenStream& stream, const Settings& s) {
  NoGradGuard no_grad;
  model.eval();
  data::Batch batch;
  double total = 0;
  std::int64_t n = 0;
  auto it = stream.windows(data::Split::val, s.batch, s.seq_len);
  for (std::int64_t b = 0; b < s.eval_batches && it.next(batch); ++b) {
    const Tensor logits = model.forward(batch.inputs);
    const std::int64_t count = batch.targets.numel();
    total += cross_entropy(logits.reshape({count, -1}), batch.targets.reshape({count}), Reduction::sum).item();
    n += count;
  }
  model.train();
  return n ? total / static_cast<double>(n) : NAN;
}

std::string clock_str(double seconds) {
  char buf[32];
  const long t = std::lround(std::max(seconds, 0.0));
  std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Train a transformer language model on a text file (default: the licence texts in "
               "/usr/share/common-licenses)."};
  app.add_option("--data", s.data, "text file to train on (default: the Debian licence texts)");
  app.add_option("--tokenizer", s.tokenizer, "char or bpe")->check(CLI::IsMember({"char", "bpe"}));
  app.add_option("--bpe-vocab", s.bpe_vocab, "vocabulary size of the BPE tokenizer")->check(CLI::Range(257, 65536));
  app.add_option("--layers", s.layers, "transformer blocks")->check(CLI::Range(1, 256));
  app.add_option("--d-model", s.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", s.heads, "attention heads (must divide d-model)")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", s.seq_len, "context length T")->check(CLI::PositiveNumber);
  app.add_option("--batch", s.batch, "sequences per step B")->check(CLI::PositiveNumber);
  app.add_option("--steps", s.steps, "optimizer steps in total")->check(CLI::NonNegativeNumber);
  app.add_option("--lr", s.lr, "peak learning rate (AdamW)")->check(CLI::PositiveNumber);
  app.add_option("--schedule", s.schedule, "cosine, linear, constant or noam")
      ->check(CLI::IsMember({"cosine", "linear", "constant", "noam"}));
  app.add_option("--warmup", s.warmup, "warmup steps")->check(CLI::NonNegativeNumber);
  app.add_option("--weight-decay", s.weight_decay, "AdamW decoupled weight decay")->check(CLI::NonNegativeNumber);
  app.add_option("--clip", s.clip, "gradient clipping max norm (0: off)")->check(CLI::NonNegativeNumber);
  app.add_option("--placement", s.placement, "norm placement: pre, post, b2t, deepnorm, rezero, none")
      ->check(CLI::IsMember({"pre", "post", "b2t", "deepnorm", "rezero", "none"}));
  app.add_option("--norm", s.norm, "layernorm or rmsnorm")->check(CLI::IsMember({"layernorm", "rmsnorm"}));
  app.add_option("--residual-scale", s.residual_scale, "alpha in y = alpha*x + F(...)")->check(CLI::PositiveNumber);
  app.add_option("--dropout", s.dropout, "dropout on sublayer outputs")->check(CLI::Range(0.0, 0.99));
  app.add_option("--init", s.init, "gpt2, pytorch or xavier")->check(CLI::IsMember({"gpt2", "pytorch", "xavier"}));
  app.add_option("--seed", s.seed, "seed of initialization, batches and sampling");
  app.add_option("--threads", s.threads, "threads for OpenMP and OpenBLAS (0: TAPEGRAD_NUM_THREADS or all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint", s.checkpoint, "checkpoint file (written atomically)");
  app.add_option("--checkpoint-interval", s.checkpoint_interval, "steps between checkpoints (0: only at the end)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--resume", s.resume, "continue from --checkpoint exactly where it stopped");
  app.add_option("--stop-after", s.stop_after, "end this run after this many steps, with a checkpoint (0: run to --steps)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--eval-interval", s.eval_interval, "steps between validation losses")->check(CLI::PositiveNumber);
  app.add_option("--eval-batches", s.eval_batches, "validation batches per evaluation")->check(CLI::PositiveNumber);
  app.add_option("--log", s.log, "CSV file of metrics (step, loss, smoothed, val_loss, lr, grad_norm, tokens_per_s)");
  app.add_option("--sample-tokens", s.sample_tokens, "tokens to generate at the end")->check(CLI::NonNegativeNumber);
  app.add_flag("--ddp", s.ddp, "data-parallel over the processes mpirun starts: each takes --batch / N rows of every "
                               "batch, gradients are averaged; rank 0 alone logs, evaluates and saves");
  app.add_option("--bucket-mb", s.bucket_mb, "with --ddp: megabytes of gradients per allreduce")->check(CLI::PositiveNumber);
  app.add_option("--fail-on-rank", s.fail_on_rank)->group("");  // hidden, for tests
  app.add_option("--fail-at-step", s.fail_at_step)->group("");
  CLI11_PARSE(app, argc, argv);

  lm::DataParallel job;
  try {
    job.start(s.ddp);
    if (!job.lead() && !std::freopen("/dev/null", "w", stdout))  // one progress line: rank 0's
      throw std::runtime_error("cannot silence the standard output of rank " + std::to_string(job.rank));
    if (s.batch % job.world != 0)
      throw std::invalid_argument("--batch " + std::to_string(s.batch) + ": the global batch must be a multiple of the " +
                                  std::to_string(job.world) + " processes");
    // Under mpirun the processes on one machine share its cores.
    if (s.threads == 0 && job.local_processes() > 1 && !std::getenv("TAPEGRAD_NUM_THREADS"))
      s.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / job.local_processes());
    if (s.threads > 0) set_num_threads(static_cast<int>(s.threads));
    std::signal(SIGINT, on_sigint);
    if (job.on()) std::signal(SIGTERM, on_sigint);  // what mpirun sends every rank on Ctrl-C

    // ---- data and tokenizer
    const data::Corpus corpus = s.data.empty() ? data::Corpus::default_corpus() : data::Corpus::from_files({s.data});
    std::unique_ptr<data::Tokenizer> tokenizer;
    if (s.resume && std::filesystem::exists(lm::tokenizer_path(s.checkpoint)))
      tokenizer = data::load_tokenizer(lm::tokenizer_path(s.checkpoint));
    else if (s.tokenizer == "bpe")
      tokenizer = std::make_unique<data::BpeTokenizer>(data::BpeTokenizer::train(corpus.texts(), s.bpe_vocab));
    else
      tokenizer = std::make_unique<data::CharTokenizer>(data::CharTokenizer::from_texts(corpus.texts()));
    const data::TokenStream stream(corpus, *tokenizer, 0.1);
    const std::int64_t V = tokenizer->vocab_size();
    std::printf("data: %zu file(s), %lld bytes, %s tokenizer with %lld tokens: %lld train / %lld val tokens\n",
                corpus.names().size(), static_cast<long long>(corpus.num_bytes()), tokenizer->name().c_str(),
                static_cast<long long>(V), static_cast<long long>(stream.size(data::Split::train)),
                static_cast<long long>(stream.size(data::Split::val)));

    // ---- model, optimizer, schedule
    manual_seed(s.seed);
    nn::TransformerLMConfig config;
    config.vocab_size = V;
    config.max_seq_len = s.seq_len;
    config.n_layers = s.layers;
    config.block.d_model = s.d_model;
    config.block.n_heads = s.heads;
    config.block.activation = nn::Activation::gelu_tanh;
    config.block.placement = nn::placement_from_name(s.placement);
    config.block.norm = nn::norm_kind_from_name(s.norm);
    config.block.residual_scale = s.residual_scale;
    config.block.dropout = s.dropout;
    config.init = nn::init_scheme_from_name(s.init);
    auto model = std::make_shared<nn::TransformerLM>(config);
    optim::AdamW optimizer(optim::weight_decay_groups(*model, optim::AdamOptions(s.lr).betas(optim::Betas(0.9, 0.95)).weight_decay(s.weight_decay)));
    // A run shorter than the warmup warms up over its first tenth instead.
    if (s.warmup >= s.steps) s.warmup = s.steps / 10;
    std::unique_ptr<optim::LRSchedule> schedule;
    if (s.schedule == "cosine")
      schedule = std::make_unique<optim::WarmupCosine>(optimizer, s.warmup, std::max<std::int64_t>(s.steps, 1), s.min_lr_ratio);
    else if (s.schedule == "linear")
      schedule = std::make_unique<optim::WarmupLinear>(optimizer, s.warmup, std::max<std::int64_t>(s.steps, 1), s.min_lr_ratio);
    else if (s.schedule == "noam")
      schedule = std::make_unique<optim::InverseSqrt>(optimizer, std::max<std::int64_t>(s.warmup, 1));
    else
      schedule = std::make_unique<optim::ConstantSchedule>(optimizer);
    std::printf("model: %lld layers, d_model %lld, %lld heads, T %lld, placement %s, norm %s: %lld parameters\n",
                static_cast<long long>(s.layers), static_cast<long long>(s.d_model), static_cast<long long>(s.heads),
                static_cast<long long>(s.seq_len), s.placement.c_str(), s.norm.c_str(),
                static_cast<long long>(model->num_parameters()));

    Generator batch_gen(s.seed ^ 0x5eedULL), sample_gen(s.seed + 1);
    training::TrainingState state;
    state.model = model.get();
    state.optimizer = &optimizer;
    state.schedule = schedule.get();
    state.generators = {{"batches", &batch_gen}, {"dropout", &default_generator()}, {"sampling", &sample_gen}};
    std::int64_t step = 0;
    if (s.resume) {
      training::load_training_checkpoint(state, s.checkpoint);
      step = state.step;
      std::printf("resumed from %s at step %lld\n", s.checkpoint.c_str(), static_cast<long long>(step));
    }
    job.attach(*model, s.resume, step, s.bucket_mb);
    if (job.on())
      std::printf("ddp: %d processes, batch %lld = %d x %lld rows, %lld gradient buckets, %lld threads each\n", job.world,
                  static_cast<long long>(s.batch), job.world, static_cast<long long>(s.batch / job.world),
                  static_cast<long long>(job.num_buckets()), static_cast<long long>(get_num_threads()));
    auto save = [&](const char* why) {
      job.require_in_sync(*model);  // every rank checks; rank 0 writes
      if (!job.lead()) return;
      state.step = step;
      state.extra = lm::config_metadata(config);
      training::save_training_checkpoint(state, s.checkpoint);
      tokenizer->save(lm::tokenizer_path(s.checkpoint));
      const bool redraw = isatty(fileno(stdout)) && !job.on();  // see `tty` below
      std::printf("%scheckpoint saved to %s at step %lld (%s)\n", redraw ? "\r\033[K" : "", s.checkpoint.c_str(),
                  static_cast<long long>(step), why);
    };

    // ---- training loop
    const double baseline = unigram_baseline(stream, V);
    std::printf("unigram baseline (val): %.4f nats/token; uniform: %.4f\n", baseline, std::log(double(V)));
    std::ofstream log;
    if (job.lead()) log.open(s.log, s.resume ? std::ios::app : std::ios::trunc);
    if (job.lead() && !s.resume) log << "step,loss,smoothed_loss,val_loss,lr,grad_norm,tokens_per_s\n";
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t first_step = step;
    double smoothed = NAN, val_loss = NAN;
    // Under mpirun, stdout is a pseudo-terminal even when the job's output goes to a file:
    // whole lines then, not a line redrawn in place.
    const bool tty = isatty(fileno(stdout)) && !job.on();
    const std::int64_t last_step = s.stop_after > 0 ? std::min(s.steps, first_step + s.stop_after) : s.steps;
    bool stop = false;  // Ctrl-C on any rank stops every rank after the same step
    while (step < last_step && !stop) {
      if (step == s.fail_at_step && job.rank == s.fail_on_rank)
        throw std::runtime_error("failure injected at step " + std::to_string(step) + " (--fail-at-step)");
      schedule->apply(step);
      // Every rank draws the whole global batch from the same generator and keeps its rows:
      // together the ranks train on exactly the batch a single process would.
      data::Batch batch = stream.sample_batch(data::Split::train, s.batch, s.seq_len, batch_gen);
      if (job.world > 1) batch = data::shard_of(batch, job.rank, job.world);
      // Dropout: rank r at step t draws from a generator seeded by (seed, t, r), so ranks mask
      // their rows independently and a resumed run draws the same masks.
      if (job.on())
        default_generator().manual_seed(s.seed ^ (static_cast<std::uint64_t>(step) << 20) ^ static_cast<std::uint64_t>(job.rank));
      const Tensor logits = model->forward(batch.inputs);
      const Tensor loss = cross_entropy(logits.reshape({-1, V}), batch.targets.reshape({-1}));
      optimizer.zero_grad();
      loss.backward();
      job.average_gradients();
      optim::require_healthy(loss, model->named_parameters());
      const double grad_norm = s.clip > 0 ? optim::clip_grad_norm_(model->parameters(), s.clip) : nn::total_grad_norm(*model);
      optimizer.step();
      ++step;

      const double l = job.mean(loss.item());
      smoothed = std::isnan(smoothed) ? l : 0.95 * smoothed + 0.05 * l;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double per_step = elapsed / static_cast<double>(step - first_step);
      const double tokens_per_s = static_cast<double>(s.batch * s.seq_len) / per_step;
      const bool eval_now = step % s.eval_interval == 0 || step == last_step;
      if (eval_now && job.lead()) val_loss = evaluate(*model, stream, s);
      if (job.lead())
        log << step << ',' << l << ',' << smoothed << ',' << (eval_now ? std::to_string(val_loss) : "") << ','
            << optimizer.lr(0) << ',' << grad_norm << ',' << tokens_per_s << '\n';
      char line[256];
      std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  smoothed %.4f  %.0f tok/s  lr %.2e  |g| %.3f  ETA %s",
                    static_cast<long long>(step), static_cast<long long>(s.steps), l, smoothed, tokens_per_s,
                    optimizer.lr(0), grad_norm, clock_str(per_step * static_cast<double>(last_step - step)).c_str());
      if (tty) std::printf("\r\033[K%s", line);
      if (eval_now) {
        std::printf("%s%s  val %.4f (unigram %.4f)\n", tty ? "\r\033[K" : "", line, val_loss, baseline);
      } else if (!tty && step % 50 == 0) {
        std::printf("%s\n", line);
      }
      std::fflush(stdout);
      if (s.checkpoint_interval > 0 && step % s.checkpoint_interval == 0 && step < s.steps) save("interval");
      stop = job.any(interrupted);
    }
    log.flush();
    if (job.on())
      std::printf("ddp: %.2f ms per step in allreduce (mean over %lld steps)\n", job.mean_allreduce_ms(),
                  static_cast<long long>(step - first_step));
    if (stop) {
      save("interrupted");
      return 130;
    }
    if (step > first_step || !s.resume) save(step < s.steps ? "--stop-after" : "end");
    std::printf("final validation loss %.4f nats/token vs unigram baseline %.4f (%s)\n", val_loss, baseline,
                val_loss < baseline ? "below the baseline" : "NOT below the baseline");

    if (s.sample_tokens > 0 && job.lead()) {
      const std::vector<data::TokenId> prompt_ids = tokenizer->encode("The ");
      std::vector<std::int64_t> prompt(prompt_ids.begin(), prompt_ids.end());
      nn::GenerateOptions g;
      g.temperature = 0.8;
      g.top_k = 40;
      g.gen = &sample_gen;
      const Tensor out = model->generate(Tensor::from_vector(prompt, {1, static_cast<std::int64_t>(prompt.size())}),
                                         s.sample_tokens, g);
      std::printf("--- sample ---\n%s\n--------------\n", tokenizer->decode_tensor(out).c_str());
    }
  } catch (const std::exception& e) {
    return job.fail("train_lm", e.what());
  }
  return 0;
}
