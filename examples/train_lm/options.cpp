// options.cpp — train_lm's flags, and their reconciliation with a checkpoint on --resume.
#include "options.hpp"

#include <charconv>
#include <map>

#include <CLI/CLI.hpp>
#include <tapegrad/nn/name_list.hpp>

#include "../cli_checks.hpp"

namespace lm {

using namespace tapegrad;

namespace {

// A value as text and back, exactly (reals in their shortest form that reads back the same).
std::string text_of(const std::string& v) { return v; }
std::string text_of(std::int64_t v) { return std::to_string(v); }
std::string text_of(std::uint64_t v) { return std::to_string(v); }
std::string text_of(double v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}
template <typename T>
void parse(const std::string& text, T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    value = text;
  } else {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) throw io::FormatError("not a number: '" + text + "'");
  }
}

template <typename Entries>  // a registry: the placements, the stream schemes
std::vector<std::string> names(const Entries& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

// The norms of the registry a model without classes can use: all but the conditional ones
// (AdaLN reads a class embedding, which train_lm's models do not have).
bool plain(const nn::NormInfo& n) { return !n.conditional; }

std::vector<std::string> plain_norms() {
  std::vector<std::string> out;
  for (const nn::NormInfo& n : nn::norm_registry())
    if (plain(n)) out.push_back(n.name);
  return out;
}

}  // namespace

template <typename T>
CLI::Option* Options::model_flag(const std::string& flag, T& value, const std::string& help, const std::string& field) {
  fixed_.push_back({flag, field, [&value] { return text_of(value); }, [&value](const std::string& t) { parse(t, value); }});
  return app_->add_option(flag, value, help);
}

template <typename T>
CLI::Option* Options::run_flag(const std::string& flag, T& value, const std::string& help) {
  return model_flag(flag, value, help, "");
}

template <typename T>
CLI::Option* Options::local_flag(const std::string& flag, T& value, const std::string& help) {
  return app_->add_option(flag, value, help);
}

Options::Options()
    : app_(std::make_unique<CLI::App>("Train a transformer language model on a text file (default: the licence "
                                      "texts in /usr/share/common-licenses).")) {
  run_flag("--data", s.data, "text file to train on (default: the Debian licence texts)");
  run_flag("--tokenizer", s.tokenizer, "char, bpe (trained on the data) or gpt2 (GPT-2's, from --tokenizer-dir)")
      ->check(CLI::IsMember({"char", "bpe", "gpt2"}));
  local_flag("--tokenizer-dir", s.tokenizer_dir, "with --tokenizer gpt2: a folder with GPT-2's vocab.json and merges.txt "
             "(a Hugging Face model folder has them)")->check(CLI::ExistingDirectory);
  run_flag("--bpe-vocab", s.bpe_vocab, "vocabulary size of the BPE tokenizer")->check(cli::range(257, 65536));
  app_->add_option("--arch", s.arch,
                 "model design: gpt2 (learned positions, LayerNorm, GELU MLP, biases, tied head) or llama "
                 "(rotary positions, RMSNorm, SwiGLU, no biases, untied head; --norm defaults to rmsnorm); "
                 "--placement, --norm and --kv-heads still apply")
      ->check(CLI::IsMember({"gpt2", "llama"}));
  model_flag("--layers", s.layers, "transformer blocks", "n_layers")->check(cli::range(1, 256));
  model_flag("--d-model", s.d_model, "model width", "block.d_model")->check(cli::positive);
  model_flag("--heads", s.heads, "attention heads (must divide d-model)", "block.n_heads")->check(cli::positive);
  model_flag("--kv-heads", s.kv_heads, "key/value heads of grouped-query attention, a divisor of --heads (0: --heads; 1: "
             "multi-query)", "block.n_kv_heads")->check(cli::non_negative);
  model_flag("--seq-len", s.seq_len, "context length T", "max_seq_len")->check(cli::positive);
  model_flag("--placement", s.placement, "norm placement (the list below)", "block.placement")
      ->check(CLI::IsMember(names(nn::placement_registry())));
  model_flag("--stream", s.stream, "how the blocks join across the depth: the residual stream's scheme (the list "
             "below)", "stream.scheme")
      ->check(CLI::IsMember(names(nn::stream_registry())));
  model_flag("--dwa-dilation", s.dwa_dilation, "with --stream denseformer: each average reads every k-th block output",
             "stream.dwa_dilation")->check(cli::positive);
  model_flag("--dwa-period", s.dwa_period, "with --stream denseformer: an average after every p-th block",
             "stream.dwa_period")->check(cli::positive);
  model_flag("--value-lambda1", s.value_lambda1, "with --stream value_residual: λ1, the first block's share of the "
             "values", "stream.value_lambda1");
  model_flag("--value-lambda2", s.value_lambda2, "with --stream value_residual: λ2, the block's own share",
             "stream.value_lambda2");
  model_flag("--value-lambda-learnable", s.value_lambda_learnable, "with --stream value_residual: 1 to learn λ1 and λ2 "
             "of each block, starting at --value-lambda1 and --value-lambda2", "stream.value_lambda_learnable")
      ->check(cli::range(0, 1));
  model_flag("--hc-rate", s.hc_rate, "with --stream hyper_connections or mhc: n, the copies of the stream (the expansion "
             "rate)", "stream.hc_rate")->check(cli::positive);
  model_flag("--hc-dynamic", s.hc_dynamic, "with --stream hyper_connections or mhc: 1 for connections that also depend "
             "on the input (HC's DHC, mHC's φ terms), 0 for the static ones alone", "stream.hc_dynamic")
      ->check(cli::range(0, 1));
  model_flag("--sinkhorn-iterations", s.sinkhorn_iterations, "with --stream mhc: the Sinkhorn–Knopp iterations that make "
             "H_res doubly stochastic", "stream.sinkhorn_iterations")->check(cli::positive);
  model_flag("--attnres-block-size", s.attnres_block_size, "with --stream attention_residuals: sublayers (attention "
             "and FFN each count) per block of Block AttnRes, summed within and attended over across blocks (1: Full "
             "AttnRes)", "stream.attnres_block_size")->check(cli::positive);
  model_flag("--norm", s.norm,
             nn::name_list_if(nn::norm_registry(), plain) + " (their formulas: tapegrad-inspect --placements)",
             "block.norm")->check(CLI::IsMember(plain_norms()));
  model_flag("--residual-scale", s.residual_scale, "alpha in the pre and post formulas", "block.residual_scale")
      ->check(cli::positive);
  model_flag("--branch-depth-exponent", s.branch_depth_exponent, "the depth parametrization's α: each update "
             "enters the stream times (L_base/L)^α, and AdamW's lr of the blocks and ε scale to match (0 standard, "
             "0.5 depth-muP, 1 CompleteP)", "block.branch_depth_exponent")->check(cli::range(0.0, 1.0));
  model_flag("--branch-base-depth", s.branch_base_depth, "with --branch-depth-exponent: L_base, the depth whose "
             "tuned --lr should transfer", "block.branch_base_depth")->check(cli::positive);
  model_flag("--embed-scale", s.embed_scale, "the token embedding's multiplier s: h0 = s·E[tokens] (1: none; "
             "√d-model as Gemma and the DyT paper's LLaMA, e.g. 11.3137 for --d-model 128)", "embed_scale")
      ->check(cli::positive);
  model_flag("--embed-scale-learnable", s.embed_scale_learnable, "1 to learn s, starting at --embed-scale",
             "embed_scale_learnable")->check(cli::range(0, 1));
  model_flag("--dropout", s.dropout, "dropout on sublayer outputs", "block.dropout")->check(cli::range(0.0, 0.99));
  model_flag("--init", s.init, "gpt2, gpt2-unscaled, pytorch or xavier", "init")->check(CLI::IsMember({"gpt2", "gpt2-unscaled", "pytorch", "xavier"}));
  run_flag("--batch", s.batch, "sequences per step B")->check(cli::positive);
  local_flag("--steps", s.steps, "optimizer steps in total (larger on --resume: extends the run)")
      ->check(cli::non_negative);
  run_flag("--lr", s.lr, "peak learning rate (AdamW)")->check(cli::positive);
  run_flag("--schedule", s.schedule, "cosine, linear, constant or noam, each after a linear warm-up")
      ->check(CLI::IsMember(training::schedule_names()));
  run_flag("--warmup", s.warmup, "warm-up steps (>= --steps: a tenth of the steps)")->check(cli::non_negative);
  run_flag("--min-lr-ratio", s.min_lr_ratio, "final lr / peak lr of cosine and linear")->check(cli::range(0.0, 1.0));
  run_flag("--weight-decay", s.weight_decay, "AdamW decoupled weight decay")->check(cli::non_negative);
  run_flag("--clip", s.clip, "gradient clipping max norm (0: off)")->check(cli::non_negative);
  run_flag("--seed", s.seed, "seed of initialization, batches and sampling");
  run_flag("--ema", s.ema, "keep a moving average of the weights with this decay (0.999: over about 1000 steps), "
           "evaluate it beside the weights and save it in the checkpoint, for sample --ema (0: none)")
      ->check(cli::below(0, 1));
  run_flag("--skip-loss-z", s.skip_loss_z, "skip the update of a step whose loss is more than this many standard "
           "deviations above the last --skip-window steps' (llm.c's -sl; 0: never)")->check(cli::non_negative);
  run_flag("--skip-grad-z", s.skip_grad_z, "the same for the gradient norm before clipping (llm.c's -sg; 0: never)")
      ->check(cli::non_negative);
  run_flag("--skip-window", s.skip_window, "steps of history that --skip-loss-z and --skip-grad-z judge against")
      ->check(cli::range(2, 100000));
  run_flag("--eval-interval", s.eval_interval, "steps between validation losses")->check(cli::positive);
  run_flag("--eval-batches", s.eval_batches, "validation batches per evaluation")->check(cli::positive);
  local_flag("--threads", s.threads, "threads for OpenMP and OpenBLAS (0: TAPEGRAD_NUM_THREADS or all)")
      ->check(cli::non_negative);
  local_flag("--checkpoint", s.checkpoint, "checkpoint file (written atomically)");
  local_flag("--checkpoint-interval", s.checkpoint_interval, "steps between checkpoints (0: only at the end)")
      ->check(cli::non_negative);
  app_->add_flag("--resume", s.resume, "continue from --checkpoint exactly where it stopped (model and run settings from the file)");
  local_flag("--stop-after", s.stop_after, "end this run after this many steps, with a checkpoint (0: run to --steps)")
      ->check(cli::non_negative);
  local_flag("--log", s.log, "CSV file of metrics (step, loss, smoothed_loss, val_loss, lr, grad_norm)");
  local_flag("--report", s.report, "live report, one self-contained HTML page written at every evaluation and checkpoint "
             "(default: --log's name with .html, train_lm.html; \"\": none)");
  local_flag("--sample-tokens", s.sample_tokens, "tokens to generate at the end (learned positions: at most --seq-len with the prompt)")->check(cli::non_negative);
  app_->add_flag("--checkpoint-activations", s.checkpoint_activations,
               "keep only each block's input in the forward and recompute the block in backward: less memory, the "
               "same gradients, about a third more time per step");
  app_->add_flag("--ddp", s.ddp, "data-parallel over the processes mpirun starts: each takes --batch / N rows of every "
                               "batch, gradients are averaged; rank 0 alone logs, evaluates and saves");
  local_flag("--grad-accum", s.grad_accum,
             "micro-batches per step: each process runs its --batch / N rows as this many forward and backward "
             "passes (the memory of one micro-batch), and steps once; the same update as one pass")
      ->check(cli::positive);
  local_flag("--bucket-mb", s.bucket_mb, "with --ddp: megabytes of gradients per allreduce")->check(cli::positive);
  app_->add_flag("--zero1", s.zero1, "with --ddp: ZeRO stage 1, each process keeps the optimizer state of its 1/N of the "
                                   "parameters, updates them and sends them to the others (the same steps, 1/N of the "
                                   "optimizer memory; checkpoints as without it)")
      ->needs("--ddp");
  local_flag("--fail-on-rank", s.fail_on_rank, "")->group("");  // hidden, for tests
  local_flag("--fail-at-step", s.fail_at_step, "")->group("");
  local_flag("--fail-mode", s.fail_mode, "")->group("")->check(CLI::IsMember({"throw", "kill", "hang", "kill-in-save"}));
  local_flag("--comm-timeout", s.comm_timeout,
             "with --ddp: seconds a rank waits in one collective before it ends the job, naming the ranks that do "
             "not answer (0: forever); the same on every rank, longer than an evaluation or a checkpoint save")
      ->check(cli::non_negative);
  local_flag("--max-memory", s.max_memory,
             "refuse to start when the memory estimate (printed at start) exceeds this size, e.g. 20GB or 512MB "
             "(default: the memory available; 0 or none: no check)")
      ->check(CLI::Validator(
          [](std::string& text) {
            try {
              training::parse_memory_size(text);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          },
          "SIZE", ""));
  app_->add_flag("--no-mfu", s.no_mfu, "skip the GEMM rate measurement at start (~0.3 s) and the MFU on the progress line");
  app_->add_flag("--lens", s.lens, "at every evaluation, the logit lens: the validation loss of the residual stream after "
                                 "each block (0: the embeddings), decoded by the model's final norm and head, and the "
                                 "share of tokens whose top prediction is already the last layer's; printed, and "
                                 "written beside --log (train_lm.csv -> train_lm.lens.csv). Changes no number of the run");
  app_->footer(nn::placement_help() + "\n" + nn::stream_help());
}

Options::~Options() = default;

std::optional<int> Options::parse_command_line(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_->exit(e);  // what CLI11_PARSE does
  }
  return std::nullopt;
}

bool Options::given(const std::string& flag) const { return app_->count(flag) > 0; }

nn::TransformerLMConfig Options::model_config(std::int64_t vocab_size) const {
  nn::TransformerLMConfig config =
      nn::preset_config(s.arch, {vocab_size, s.seq_len, s.layers, s.d_model, s.heads, s.kv_heads});
  config.block.placement = nn::placement_from_name(s.placement);
  // llama's norm is rmsnorm unless --norm says otherwise (its default is gpt2's layernorm); a
  // placement without norms (rezero, ngpt) keeps the config's default unless --norm is given
  if (s.arch == "gpt2" || given("--norm") || !nn::placement_info(config.block.placement).norms)
    config.block.norm = nn::norm_kind_from_name(s.norm);
  config.stream.scheme = nn::stream_scheme_from_name(s.stream);
  config.stream.dwa_dilation = s.dwa_dilation;
  config.stream.dwa_period = s.dwa_period;
  config.stream.value_lambda1 = s.value_lambda1;
  config.stream.value_lambda2 = s.value_lambda2;
  config.stream.value_lambda_learnable = s.value_lambda_learnable != 0;
  config.stream.hc_rate = s.hc_rate;
  config.stream.hc_dynamic = s.hc_dynamic != 0;
  config.stream.sinkhorn_iterations = s.sinkhorn_iterations;
  config.stream.attnres_block_size = s.attnres_block_size;
  config.block.residual_scale = s.residual_scale;
  config.block.dropout = s.dropout;
  config.block.branch_depth_exponent = s.branch_depth_exponent;
  config.block.branch_base_depth = s.branch_base_depth;
  config.embed_scale = s.embed_scale;
  config.embed_scale_learnable = s.embed_scale_learnable != 0;
  config.init = nn::init_scheme_from_name(s.init);
  return config;
}

io::Metadata Options::run_settings() const {
  io::Metadata m = {{"run.steps", text_of(s.steps)}};
  for (const Fixed& f : fixed_)
    if (f.field.empty()) m.emplace_back("run." + f.flag.substr(2), f.text());
  return m;
}

std::vector<std::string> Options::take_from(const io::Checkpoint& ck, const std::string& path) {
  auto contradiction = [&](const std::string& flag, const std::string& mine, const std::string& theirs) {
    return std::invalid_argument(flag + " " + mine + " contradicts " + path + ", which holds " + theirs +
                                 ": leave " + flag + " out to resume that run, or name another --checkpoint to "
                                 "start a new one");
  };
  // The model: its config is in the file, the flags only restate it.
  const nn::TransformerLMConfig file = io::lm_config_from(ck, path);
  std::map<std::string, std::string> stored, asked;
  for (const auto& [k, v] : io::config_fields(file)) stored[k] = v;
  for (const auto& [k, v] : io::config_fields(model_config(file.vocab_size))) asked[k] = v;
  for (const Fixed& f : fixed_) {
    if (f.field.empty()) continue;
    if (given(f.flag) && asked[f.field] != stored[f.field]) throw contradiction(f.flag, f.text(), f.field + " = " + stored[f.field]);
    f.set(stored[f.field]);  // the settings then say what the model is
  }
  // --arch has no field of its own: the fields it sets must agree with the file's.
  if (given("--arch"))
    for (const char* field : {"block.activation", "block.rope", "block.bias", "tie_weights"})
      if (asked[field] != stored[field])
        throw contradiction("--arch", s.arch, std::string(field) + " = " + stored[field]);
  // The run: its settings are in the file as text ("extra.run.<flag>").
  std::vector<std::string> notes;
  std::string unrecorded;
  for (const Fixed& f : fixed_) {
    if (!f.field.empty()) continue;
    const io::MetaValue* v = ck.find("extra.run." + f.flag.substr(2));
    if (!v || !std::holds_alternative<std::string>(*v)) {
      unrecorded += (unrecorded.empty() ? "" : " ") + f.flag + " " + training::shell_quote(f.text());
      continue;
    }
    const std::string& theirs = std::get<std::string>(*v);
    if (given(f.flag) && f.text() != theirs) throw contradiction(f.flag, f.text(), "a run with " + f.flag + " " + theirs);
    f.set(theirs);
  }
  if (!unrecorded.empty())
    notes.push_back(path + " does not record the run's settings (an older train_lm wrote it): using " + unrecorded);
  // Its length: the planned steps (an older file: its schedule's end) unless --steps says otherwise.
  const io::MetaValue* planned = ck.find("extra.run.steps");
  const io::MetaValue* schedule_end = ck.find("schedule.hp.total_steps");
  planned_steps = s.steps;
  if (planned && std::holds_alternative<std::string>(*planned)) parse(std::get<std::string>(*planned), planned_steps);
  else if (schedule_end && std::holds_alternative<double>(*schedule_end)) planned_steps = static_cast<std::int64_t>(std::get<double>(*schedule_end));
  if (!given("--steps")) s.steps = planned_steps;
  return notes;
}

}  // namespace lm
