// runs.hpp — one run of the depth study: build a model, measure it on a fixed probe batch,
// train it for a few hundred steps on batches drawn in a fixed order, measure it again.
//
// The measurements (Snapshot) answer three questions about a stack of L blocks:
//   gradients   ‖∇θ_l‖ per block l, and ‖∂loss/∂h₀‖ at the embeddings' output h₀: do they
//               shrink (vanish) or grow (explode) from the top block down to the bottom?
//   activations RMS(h_l) = sqrt(mean(h_l²)) of each block's output
//   collapse    cos(h_l, h_{l-1}) averaged over tokens: near 1 means block l barely changes
//               the representation.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "common/settings.hpp"

#include "variants.hpp"

namespace depth_study {

// Everything that stays the same across runs: the token stream, the probe batch on which the
// snapshots are measured and the validation batches. Both are spread evenly over the
// validation split (a corpus of several texts changes its style from file to file): the probe
// over its first half, the validation batches over its second half.
struct Data {
  const tapegrad::data::TokenStream* stream = nullptr;
  std::int64_t vocab_size = 0;
  tapegrad::data::Batch probe;                     // probe_sequences windows (B, T)
  std::vector<tapegrad::data::Batch> validation;  // eval_batches batches of `batch` windows
  // The train split's unigram model: what a model blind to the context scores on a batch
  // (TrainResult::plateau). Unset: no plateau is measured.
  std::optional<tapegrad::training::Unigram> unigram;
};
// Throws ValueError when the validation split is shorter than two windows.
Data make_data(const tapegrad::data::TokenStream& stream, std::int64_t vocab_size, std::int64_t probe_sequences,
               std::int64_t eval_batches, std::int64_t batch, std::int64_t seq_len);

struct ModelShape {
  std::int64_t d_model = 64, heads = 4, seq_len = 32;
};
// The settings the claims turn out to depend on (the report shows them side by side): the
// init scheme (nn/model_init.hpp: gpt2, gpt2-unscaled, pytorch, xavier), whether the LM head
// is tied to the token embedding, and the warm-up steps of the schedule.
struct Setup {
  std::string init = "gpt2-unscaled";
  bool tied_head = false;
  std::int64_t warmup = 15;

  // "untied:gpt2-unscaled:15", the form of --setups; parse() throws ValueError naming the part.
  std::string name() const;
  static Setup parse(const std::string& text);
  // "untied head, gpt2-unscaled init, 15 warm-up steps"
  std::string describe() const;
  bool operator==(const Setup&) const = default;
};
// The model of one run; built right after manual_seed(seed), so that runs that differ only
// in the variant start from the same embeddings.
std::shared_ptr<tapegrad::nn::TransformerLM> build_model(const Variant& variant, std::int64_t depth, const Setup& setup,
                                                         const ModelShape& shape, std::int64_t vocab_size,
                                                         std::uint64_t seed);

struct Snapshot {
  double loss = 0;                  // mean cross-entropy on the probe batch
  std::vector<double> grad_norm;    // [l-1] = ‖∇θ_l‖₂ over all parameters of block l
  std::vector<double> rms;          // [l-1] = RMS of block l's output h_l
  std::vector<double> cosine;       // [l-1] = mean over tokens of cos(h_l, h_{l-1}); h₀ = embeddings
  double emb_output_grad = 0;       // ‖∂loss/∂h₀‖₂, h₀ = tok_emb[x] + pos_emb: the gradient reaching the embeddings
  double tok_emb_grad = 0;          // ‖∇ tok_emb.weight‖₂ (tied: includes the output layer's gradient)
  double total_grad = 0;            // ‖∇θ‖₂ over every parameter
};
// One forward and backward pass on the probe batch (gradients of the mean loss). Leaves the
// model's gradients set; the caller clears them.
Snapshot measure(tapegrad::nn::TransformerLM& model, const tapegrad::data::Batch& probe);
// The largest |difference| between the logits of measure()'s forward pass and model.forward:
// --check requires it to be tiny, so the snapshots measure the model that is trained.
double probe_forward_mismatch(tapegrad::nn::TransformerLM& model, const tapegrad::data::Batch& probe);

struct TrainOptions : study::Training {  // the optimizer, the schedule, the steps
  std::int64_t batch = 8, seq_len = 32;
  std::uint64_t batch_seed = 0;  // every run draws the same batches in the same order

  // Betas (0.9, 0.95) as GPT-3 and train_lm.
  TrainOptions() { lr = 1e-3, weight_decay = 0.1, min_lr_ratio = 0.1, clip = 1.0, beta2 = 0.95, steps = 150, warmup = 15; }
};

struct TrainResult {
  // [i] = training loss and lr of step i + 1, or, in a run longer than kTracePoints steps,
  // their means over steps i·trace_stride + 1 … (i + 1)·trace_stride (and so the gradient
  // norms below): a 4,000-step run's records stay small enough to keep by the thousand.
  std::vector<double> loss, lr;
  std::int64_t steps_done = 0, trace_stride = 1;
  static constexpr std::int64_t kTracePoints = 400;
  // The trace index of a step (counted from 0).
  std::size_t trace_index(std::int64_t step) const { return static_cast<std::size_t>(step / trace_stride); }
  // "ok"; "non-finite" (the loss or a gradient became NaN or Inf: the run stopped there); or
  // "no progress" (the final training loss is not below the loss of the first step).
  std::string status = "ok";
  double initial_loss = 0;  // loss of step 1, before any update
  double final_loss = 0;    // mean training loss over the last tenth of the steps
  // The plateau of those same batches: the mean cross-entropy the train split's unigram model
  // scores on them, the best a model blind to the context can do there. A run whose final
  // loss is below it has learned to use the context. NaN without Data::unigram.
  double plateau = NAN;
  double val_loss = 0;      // mean cross-entropy on the validation batches after training
  // [s] = the gradient norms of step s + 1, before clipping: over every parameter, and over
  // the norm layers' parameters only (every γ and β, the printout the seed article reads:
  // claim 11). Empty for a step that never reached its backward.
  std::vector<double> grad_norm, norm_grad_norm;
  double seconds = 0;       // the whole run: building the optimizer, the steps, the validation
  double step_seconds = 0;  // of which the training steps (batch, forward, backward, update)
  bool interrupted = false;
};
// after_step(step, loss) is called after each step; it returns false to stop (Ctrl-C).
TrainResult train(tapegrad::nn::TransformerLM& model, const Data& data, const TrainOptions& options,
                  const std::function<bool(std::int64_t, double)>& after_step);

// [l] = sqrt(mean(h_l²)) of the stream h_l after block l on the probe batch, l = 0 (the
// embeddings) … L, as the next block reads it (nn::StreamRecorder: under Hyper-Connections and
// mHC the sum of the n copies, what the head would read). One forward, without gradients.
std::vector<double> stream_rms(tapegrad::nn::TransformerLM& model, const tapegrad::data::Batch& probe);
// [l] = the logit lens's loss after block l (nn/diagnostics/logit_lens.hpp) over the
// validation batches, l = 0 … L: [L] is validation_loss's.
std::vector<double> lens_losses(tapegrad::nn::TransformerLM& model, const Data& data);

// Mean cross-entropy over the validation batches.
double validation_loss(tapegrad::nn::TransformerLM& model, const Data& data);
// [l-1] = the validation loss with block l skipped (its output replaced by its input, by a
// forward hook): how much the trained model relies on that block.
std::vector<double> skip_block_losses(tapegrad::nn::TransformerLM& model, const Data& data);

}  // namespace depth_study
