// stream.hpp — the residual stream as an object: the state that a decoder's blocks read and
// write on the way from the embedding to the head, and the scheme that joins the blocks across
// the depth.
//
// Elhage et al. 2021 ("A Mathematical Framework for Transformer Circuits") read a transformer
// as one stream that every attention head and every FFN reads from and writes into. How one
// block joins its sublayers to the stream (Post-LN, Pre-LN, B2T, ...) is its placement
// (nn/placement/). What spans blocks is the stream's scheme:
//
//   plain           x_l = block_l(x_{l−1})                          every placement alone
//   denseformer     x_l = Σ_{j≤l} α_{l,j}·X_j    X_0 the embedding, X_j block j's output
//                                                (Pagliardini et al. 2024, DenseFormer)
//   value_residual  V_n ← λ1·V_1 + λ2·V_n        each attention's values mixed with the
//                                                first block's (Zhou et al. 2024, ResFormer)
//   hyper_connections  n copies x_1..x_n, each sublayer reads Σ_j H_pre_j·x_j and writes
//                   x_i ← Σ_j H_res_ij·x_j + H_post_i·F(N(Σ_j H_pre_j·x_j))   (Zhu et al. 2024)
//   mhc             the same with H_res doubly stochastic (Sinkhorn–Knopp), H_pre, H_post ≥ 0
//                                                (Xie et al. 2025, DeepSeek's mHC)
//   attention_residuals
//                   h_k = Σ_{i<k} α_{i→k}·v_i    each sublayer (attention, FFN) reads a softmax
//                                                over the embedding and the sublayer outputs
//                                                v_i (Kimi Team 2026, Attention Residuals)
//
// A model runs its blocks through its stream:
//
//   StreamState s = stream.begin(h0);                       // h0: the embedded tokens (B, T, C)
//   for (l = 0 .. L−1) stream.run_block(s, block_l, ctx, l);
//   Tensor h = stream.end(s);                               // what the final norm and head read
//
// The state can be more than one tensor: the outputs of every block so far (DenseFormer), the
// first block's values (value residual), the sublayers' outputs and the current block's sum
// (Attention Residuals, which runs each block's sublayers itself: BlockContext::formula). A
// scheme is a Module: its parameters (DenseFormer's α) are the model's, under "stream." in its
// state dict. Adding a scheme: one unit file here and its line in registry.cpp; a program
// registers its own with register_stream() before it builds or loads a model (docs/residuals.md
// shows one).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../module.hpp"

namespace tapegrad::nn {

class TransformerBlock;
struct BlockContext;
struct TransformerBlockConfig;

// A scheme's registered name, as configs, files and command lines hold it.
struct StreamScheme {
  std::string name;  // a key of stream_registry()

  StreamScheme(std::string n) : name(std::move(n)) {}  // implicit: config.stream.scheme = "denseformer"
  StreamScheme(const char* n) : name(n) {}
  bool operator==(const StreamScheme&) const = default;
};

// What a model's stream is built from: its scheme and the settings of the schemes that have
// some (each refused by the others unless left at its default).
struct StreamConfig {
  StreamScheme scheme{"plain"};
  // DenseFormer (Pagliardini et al. 2024, §3): an average after every `dwa_period`-th block,
  // over the outputs X_j with j ≡ l (mod dwa_dilation) only; 1 and 1: after every block, over all.
  std::int64_t dwa_dilation = 1;
  std::int64_t dwa_period = 1;
  // Value residual (Zhou et al. 2024): V_n ← λ1·V_1 + λ2·V_n in blocks 2..L; 0.5 and 0.5 as
  // the paper's ResFormer. Learnable: λ1 and λ2 of each block are parameters starting there.
  double value_lambda1 = 0.5;
  double value_lambda2 = 0.5;
  bool value_lambda_learnable = false;
  // Hyper-Connections and mHC (nn/stream/hyper_connections.hpp): the expansion rate n (copies
  // of the stream; 4 as both papers' main models), and whether the connections also depend on
  // the input (HC's DHC; mHC's φ terms) or are the static matrices alone.
  std::int64_t hc_rate = 4;
  bool hc_dynamic = true;
  // mHC: the Sinkhorn–Knopp iterations that make H_res doubly stochastic (t_max = 20 in the paper).
  std::int64_t sinkhorn_iterations = 20;
  // Attention Residuals (Kimi Team 2026, §3.2): the sublayers (attention and FFN each count)
  // in blocks of this many, summed within a block, attended over across blocks (Block AttnRes);
  // 1: every sublayer output is a source of its own (Full AttnRes).
  std::int64_t attnres_block_size = 1;

  // Throws ValueError naming the first invalid setting, or a setting its scheme does not use.
  void validate() const;
  bool operator==(const StreamConfig&) const = default;
  // Every field with its name, in order (see TransformerBlockConfig::visit_fields).
  template <typename Self, typename F>
  static void visit_fields(Self& self, F&& f) {
    f("scheme", self.scheme);
    f("dwa_dilation", self.dwa_dilation);
    f("dwa_period", self.dwa_period);
    f("value_lambda1", self.value_lambda1);
    f("value_lambda2", self.value_lambda2);
    f("value_lambda_learnable", self.value_lambda_learnable);
    f("hc_rate", self.hc_rate);  // model config version 5 (older files: the defaults)
    f("hc_dynamic", self.hc_dynamic);
    f("sinkhorn_iterations", self.sinkhorn_iterations);
    f("attnres_block_size", self.attnres_block_size);
  }
};

// What the blocks read and write, carried from the embedding to the head.
struct StreamState {
  Tensor x;                     // what the next block reads: (B, T, C), or (B, T, n, C) when widened (hyper_connections)
  std::vector<Tensor> outputs;  // X_0 (the embedding), X_1 .. X_l: block outputs so far (schemes that keep them;
                                // Attention Residuals: the sublayer outputs, or the completed block sums)
  Tensor first_values;          // V_1: the first block's attention values (B, T, Hkv·D) (value residual)
  Tensor block_sum;             // the current block's partial sum of sublayer outputs (Block AttnRes)
};

// A scheme: the plain stream, unless a unit overrides a step.
class ResidualStream : public Module {
 public:
  explicit ResidualStream(std::string name = "ResidualStream") : Module(std::move(name)) {}
  // The state entering block 0: x = h0.
  virtual StreamState begin(const Tensor& h0);
  // Block l (0-based) reads the state and writes into it: x = block(x).
  virtual void run_block(StreamState& s, TransformerBlock& block, BlockContext& ctx, std::int64_t l);
  // What the final norm and the head read: x.
  virtual Tensor end(StreamState& s);
  // The stream as one (B, T, C) tensor, what the stream hooks see: x; a widened stream's sum
  // over its copies (what end() would hand the head if the stack stopped here).
  virtual Tensor readout(const StreamState& s) const { return s.x; }
  // Whether the scheme reaches into the blocks' sublayers (the attention's values): then
  // activation checkpointing, which recomputes a block alone, is refused.
  virtual bool reaches_into_blocks() const { return false; }

  // The stream as the next block reads it, handed to these functions by the model after begin
  // (l = 0: the embedding) and after each block l = 1..L (after the last: what the final norm
  // reads). Where the diagnostics watch the stream (nn/diagnostics/stream_recorder.hpp): under
  // DenseFormer it is the average, not the block's output that a forward hook on the block sees.
  // Run in registration order; the handle removes one.
  using StreamHook = std::function<void(std::int64_t l, const Tensor& x)>;
  HookHandle register_stream_hook(StreamHook hook, std::string label = "");
  // Runs the stream hooks (cheap without hooks).
  void observe(std::int64_t l, const Tensor& x) const;
  // The same on readout(s), computed only when there is a hook (the model calls this one).
  void observe(std::int64_t l, const StreamState& s) const;

 private:
  std::shared_ptr<HookList<StreamHook>> stream_hooks_ = std::make_shared<HookList<StreamHook>>();
};

// What a scheme is built from: the model's stream settings, its depth and its blocks' config.
struct StreamBuild {
  const StreamConfig& stream;
  std::int64_t n_layers;
  const TransformerBlockConfig& block;
};

// One entry of the registry.
struct StreamInfo {
  std::string name;     // "denseformer": in configs, files and on the command line
  std::string label;    // "DenseFormer": in tables and chart legends
  std::string formula;  // one line, as --help shows it
  std::string paper;    // where it comes from
  // Whether Hugging Face's layouts (GPT-2, LLaMA) can hold a model with it: the exports refuse
  // the others by name.
  bool hf_equivalent = false;
  bool dwa_settings = false;    // uses StreamConfig's dwa_dilation and dwa_period (DenseFormer)
  bool value_settings = false;  // uses StreamConfig's value_lambda* (value residual)
  bool hc_settings = false;     // uses StreamConfig's hc_rate and hc_dynamic (hyper_connections, mhc)
  bool sinkhorn_settings = false;  // uses StreamConfig's sinkhorn_iterations (mhc)
  bool attnres_settings = false;  // uses StreamConfig's attnres_block_size (Attention Residuals)
  std::function<std::shared_ptr<ResidualStream>(const StreamBuild&)> make;
};

// Every scheme, in the order --help and error messages list them: the library's, then those a
// program registered (a deque: registering keeps every entry where it is).
const std::deque<StreamInfo>& stream_registry();
// Adds a scheme (a program's own, before it builds a model); ValueError if the name is taken,
// empty, or make is missing. Not thread-safe: register at start-up.
void register_stream(StreamInfo info);
// The entry of s; ValueError naming s and the registered names when there is none.
const StreamInfo& stream_info(const StreamScheme& s);
// The registered scheme called name; ValueError "unknown stream scheme 'x' (expected plain, ...)".
StreamScheme stream_scheme_from_name(const std::string& name);
// "plain, denseformer, value_residual or attention_residuals"
std::string stream_names(const std::string& last_separator = " or ");
// One line per scheme, for --help.
std::string stream_help();

}  // namespace tapegrad::nn
