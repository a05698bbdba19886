// options.hpp — train_lm's settings, each one a command-line flag, and what --resume does
// with them: the checkpoint fixes the model (its stored configuration) and the run's
// settings (batch, lr, schedule, seed, ...); a flag given on the command line that
// contradicts the file is refused, naming the flag and both values. Flags that only concern
// this process (threads, checkpoint interval, sample length, ...) may change, and --steps
// may grow: the run is extended (training/schedule.hpp explains how the lr continues).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

// Declared, not included: CLI11's header takes about 7 s to compile, and most of train_lm's
// files include this one. Only options.cpp includes <CLI/CLI.hpp>.
namespace CLI {
class App;
class Option;
}

namespace lm {

struct Settings {
  // data
  std::string data, tokenizer = "char";
  std::string tokenizer_dir;  // --tokenizer gpt2: the folder with vocab.json and merges.txt
  std::int64_t bpe_vocab = 512;
  // model
  std::int64_t layers = 4, d_model = 128, heads = 4, seq_len = 64;
  std::string arch = "gpt2";  // a preset of nn/presets.hpp: gpt2 or llama
  std::int64_t kv_heads = 0;   // key/value heads (grouped-query attention); 0: --heads
  std::string placement = "pre", norm = "layernorm", init = "gpt2";
  double residual_scale = 1.0, dropout = 0.0;
  double branch_depth_exponent = 0.0;  // the depth parametrization (Depth-μP ½, CompleteP 1) and its base depth
  std::int64_t branch_base_depth = 1;
  double embed_scale = 1.0;              // the token embedding's multiplier s, learned with embed_scale_learnable
  std::int64_t embed_scale_learnable = 0;
  std::string stream = "plain";  // the residual stream's scheme (nn/stream/) and its settings
  std::int64_t dwa_dilation = 1, dwa_period = 1, value_lambda_learnable = 0;
  double value_lambda1 = 0.5, value_lambda2 = 0.5;
  std::int64_t hc_rate = 4, hc_dynamic = 1, sinkhorn_iterations = 20;  // hyper_connections, mhc
  std::int64_t attnres_block_size = 1;
  // the run
  std::int64_t batch = 16, steps = 1000, warmup = 100, eval_interval = 200, eval_batches = 8;
  double lr = 3e-3, min_lr_ratio = 0.1, weight_decay = 0.1, clip = 1.0;
  std::string schedule = "cosine";
  std::uint64_t seed = 1337;
  double ema = 0;                          // decay of the weights' moving average (0: none)
  double skip_loss_z = 0, skip_grad_z = 0;  // skip updates at these z-scores (0: never)
  std::int64_t skip_window = 128;           // ... over this many recent steps
  // this process
  std::string checkpoint = "train_lm.tgc", log = "train_lm.csv";
  std::string report;  // the live report; not given: --log's name with .html (live_report.hpp)
  std::int64_t checkpoint_interval = 500, sample_tokens = 300, threads = 0, stop_after = 0;
  bool resume = false, ddp = false, checkpoint_activations = false;
  double bucket_mb = 25;
  std::int64_t grad_accum = 1;  // micro-batches per step (gradient accumulation)
  bool zero1 = false;  // with ddp: ZeRO-1, the optimizer state sharded over the processes
  std::int64_t fail_on_rank = -1, fail_at_step = 0;  // tests: make one rank throw
  std::string fail_mode = "throw";                   // ... or kill, hang, kill-in-save (faults.hpp)
  double comm_timeout = 300;                         // with --ddp: seconds one collective may wait
  std::string max_memory;  // the memory the run may need ("20GB", "none"); empty: what is available
  bool no_mfu = false;     // no GEMM measurement, no MFU on the progress line
  bool lens = false;       // the logit lens at every evaluation (lens.hpp)
};

class Options {
 public:
  Options();  // every flag
  ~Options();
  Options(const Options&) = delete;  // the flags point into s
  Options& operator=(const Options&) = delete;
  // Parses the command line into s. Returns the exit status when the program should stop
  // there (--help: 0; a bad flag: its message printed, non-zero), nothing when it should run.
  std::optional<int> parse_command_line(int argc, char** argv);
  Settings s;
  std::int64_t planned_steps = 0;  // after take_from: the steps the saved run planned

  // The model a new run builds, for a vocabulary of vocab_size tokens.
  tapegrad::nn::TransformerLMConfig model_config(std::int64_t vocab_size) const;
  // The run's settings as checkpoint metadata ("run.<flag>" = its value as text).
  tapegrad::io::Metadata run_settings() const;
  // Resuming the run saved in checkpoint (a file called path): refuses given flags that
  // contradict it, then takes its run settings. Returns what it tells the user (settings an
  // older checkpoint does not hold, a run extended by --steps).
  std::vector<std::string> take_from(const tapegrad::io::Checkpoint& checkpoint, const std::string& path);
  // Whether the flag was given on the command line.
  bool given(const std::string& flag) const;

 private:
  std::unique_ptr<CLI::App> app_;  // the flags, each bound to a field of s
  // A flag whose value a checkpoint fixes: a model flag names the config field it sets; a run
  // flag is saved as text and read back.
  struct Fixed {
    std::string flag, field;  // field: of io::config_fields (model flags), empty for run flags
    std::function<std::string()> text;
    std::function<void(const std::string&)> set;
  };
  std::vector<Fixed> fixed_;
  // A model flag (setting config field `field`), a run flag, and a flag of this process alone.
  template <typename T>
  CLI::Option* model_flag(const std::string& flag, T& value, const std::string& help, const std::string& field);
  template <typename T>
  CLI::Option* run_flag(const std::string& flag, T& value, const std::string& help);
  template <typename T>
  CLI::Option* local_flag(const std::string& flag, T& value, const std::string& help);
};

}  // namespace lm
