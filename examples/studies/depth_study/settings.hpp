// settings.hpp — every setting of a depth-study run; each one is a command-line option of
// depth_study (main.cpp). The study runs in stages, each answering some of the claims
// (claims.hpp lists which):
//
//   profile   every placement at every profile depth, at initialization only, per seed:
//             gradient and activation RMS of each block (claims 1, 3, 8)
//   grid      placements × depths × learning rates × seeds, trained: which depth still trains,
//             the deepest-trainable-depth chart, and, at --skip-depth, the similarity of
//             consecutive layers and the loss when each block is skipped (claims 2–7, 9)
//   lr        a finer learning-rate sweep at one depth (claim 6)
//   setups    the same placements at one depth under each --setups (init, tied head, warm-up),
//             side by side: which claims depend on the setup
//   translate examples/translate's encoder-decoders at several depths (claim 7)
//   torch     a subset of the grid again in PyTorch, on the same data and settings
//   stream    the residual stream's designs against Pre-LN (claims 12–18): the depth
//             parametrizations' lr sweeps at several depths, DyT and Derf at several budgets,
//             value residual, DenseFormer and nGPT at one depth, HC and mHC with the stream's
//             size by depth, and the logit lens of Post-LN and Pre-LN
//
//   budget    runs of the grid and the lr stage again at fractions of the steps: how each
//             claim's figure moves with the budget
//
// The defaults (d_model 48, 4 heads, 32 tokens of context, batches of 16, 400 steps: 204,800
// tokens a run, 3 seeds) were sized so that the default run finishes in about twenty minutes
// on 2 cores; --full runs the larger study (docs/depth-study.md gives its plan and runtime).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "runs.hpp"

namespace depth_study {

struct Settings : study::Machinery {  // seed (unused: --seeds), threads, --out, --smoke, --check
  // data
  std::string data;  // empty: the default corpus (data::Corpus::default_corpus)
  std::string tokenizer = "char";
  std::int64_t bpe_vocab = 512;
  // the model and training every stage shares
  ModelShape shape{48, 4, 32};
  Setup setup;  // init, head; its warm-up is --warmup
  TrainOptions train;
  std::vector<std::uint64_t> seeds = {1, 2, 3};
  std::int64_t probe_batch = 16, eval_batches = 4;
  // a run "trains" when its loss stays finite and its validation loss ends at least this far
  // (nats per token) below the plateau (SetupInfo::plateau): it learned to use the context
  double plateau_margin = 0.05;
  // profile
  std::vector<std::string> profile_placements = {"none", "post", "pre", "b2t", "pre-scaled", "post-scaled", "deepnorm",
                                                 "llama"};
  std::vector<std::int64_t> profile_depths = {3, 6, 12, 24, 48, 128};
  // the other inits, side by side at initialization for these placements (claims 1 and 3)
  std::vector<std::string> profile_inits = {"gpt2", "pytorch", "xavier"};
  std::vector<std::string> profile_init_placements = {"none", "post", "pre"};
  // grid
  std::vector<std::string> placements = {"none", "post", "pre", "b2t", "peri", "lns", "llama"};
  std::vector<std::int64_t> depths = {3, 6, 12, 24};
  std::vector<double> lrs = {3e-3};
  // the deepest grid runs, for a few placements and one learning rate only: a 128-block run
  // costs as much as a whole row of the grid
  std::vector<std::string> deep_placements = {"pre", "llama"};
  std::vector<std::int64_t> deep_depths = {128};
  double deep_lr = 1e-3;
  // recompute each block's activations in the backward pass (nn::checkpoint) in runs of at
  // least this many blocks: memory of one block instead of L, for a third more compute
  // (0: never). Off by default: at d_model 48, 128 blocks fit in about 1 GB.
  std::int64_t checkpoint_from = 0;
  std::int64_t skip_depth = 12;   // effective depth measured on the grid's runs of this depth
  double skip_threshold = 0.01;   // a block is droppable when skipping it raises the val loss by less than this share
  // lr
  std::vector<std::string> lr_placements = {"post", "pre"};
  std::int64_t lr_depth = 6;
  std::vector<double> lr_sweep = {1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2};
  // setups
  std::vector<std::string> setup_placements = {"post", "b2t", "peri"};
  std::int64_t setup_depth = 6;
  // the default setup (the grid's run at that depth), the tied head with GPT-2's scaled init,
  // no warm-up and a warm-up four times as long (Peri-LN's result beside its init and warm-up
  // variants)
  std::vector<std::string> setups = {"untied:gpt2-unscaled:40", "tied:gpt2:40", "untied:gpt2-unscaled:0",
                                     "untied:gpt2-unscaled:160"};
  // budget: the grid's runs of these placements (at every --lrs), and the lr stage's runs,
  // again at these fractions of --steps: the report charts each figure against the steps
  std::vector<double> budget_fractions = {0.25, 0.5};
  std::vector<std::string> budget_placements = {"post", "pre", "b2t", "peri"};
  bool budget_lr = true;
  // translate (examples/translate's task and models)
  std::vector<std::string> translate_placements = {"post", "pre", "b2t"};
  std::vector<std::int64_t> translate_layers = {6, 12};
  std::int64_t translate_steps = 100, translate_d_model = 32;
  // torch
  std::vector<std::string> torch_placements = {"post", "pre", "b2t"};
  std::int64_t torch_depth = 6;
  // stream (claims 12–18; variants.hpp has the variants)
  // 12: the lr sweep of Pre-LN and the depth parametrizations at each depth (their base is 2 blocks)
  std::vector<std::string> transfer_placements = {"pre", "depth-mup", "completep"};
  std::vector<std::int64_t> transfer_depths = {2, 8};
  std::vector<double> transfer_lrs = {1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2, 3.2e-2};
  // 13: DyT and Derf against Pre-LN (LayerNorm) at --scheme-depth, at these multiples of --steps
  std::vector<std::string> norm_free_placements = {"dyt", "derf"};
  std::vector<double> norm_free_budgets = {0.25, 1, 4};
  // 15, 16, 17: value residual and DenseFormer against Pre-LN, nGPT against LLaMA (whose blocks
  // it has), at --scheme-depth; DenseFormer also against Pre-LN at twice the depth
  std::int64_t scheme_depth = 6;
  std::vector<std::string> scheme_placements = {"value-residual", "denseformer", "ngpt"};
  // 14: HC and mHC beside Pre-LN: the stream's size by depth, at init and after training
  std::vector<std::string> hc_placements = {"pre", "hc", "mhc"};
  std::vector<std::int64_t> hc_depths = {6, 24};
  // 18: the logit lens after training
  std::vector<std::string> lens_placements = {"post", "pre"};
  std::int64_t lens_depth = 12;
  std::string python;  // "": python3, then Debian's /usr/bin/python3
  bool torch = true;
  bool full = false;
  // worker processes (workers.hpp): --jobs N runs the plan in N processes of one thread each;
  // a worker is started with --worker i --worker-file F
  std::int64_t jobs = 0;  // 0: one per core, shared by the mpirun ranks on the machine (1 under --smoke)
  bool restart = false;   // discard the records of earlier runs in --out/records (records.hpp)
  bool dry_run = false;   // print the plan and its cost, run nothing
  // --stop-after: minutes of this sitting after which no run starts, nor one that would not end
  // by then (plan.hpp's fits_before); the runs under way end and are recorded. 0: no limit.
  double stop_after_minutes = 0;
  // Subnormal floats flushed to zero (tapegrad::set_flush_denormal): a stack without residuals
  // fills its gradients with them, and its steps ran 7-8x slower for values that carry nothing.
  bool flush_denormal = true;
  std::int64_t worker = -1;
  std::string worker_file;
  std::vector<std::string> argv;  // the command line, for the workers

  Settings() {
    seed = 1, out = "depth_study_out";
    train.batch = 16, train.steps = 400, train.warmup = 40, train.lr = 3e-3;
  }
};

}  // namespace depth_study
