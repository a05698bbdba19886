// placement.hpp — norm placement: how a block joins its sublayers to the residual stream.
//
// A placement is one small unit whose forward() is its formula, written with the block's
// sublayers: F.attn (self-attention), F.cross (cross-attention, decoder blocks only) and F.ffn,
// each callable as F.attn(h), with its norm F.attn.N(h), its residual scale F.attn.alpha_x(h)
// = α·h and ReZero's gate F.attn.a(). B2T (b2t.cpp) reads:
//
//   Tensor h = F.attn.N(x + F.attn(x));             // h = N1(x + Attn(x))
//   if (F.cross) h = F.cross.N(h + F.cross(h));     //     N3(h + Cross(h)) in a decoder
//   return F.ffn.N(h + F.ffn(h) + x);               // y = N2(h + FFN(h) + x)
//
// The registry (registry.cpp) names every placement with its one-line formula and what it
// needs (norms, ReZero gates, a final norm, whether α applies); the CLIs, the depth study and
// the tests take the list from it. Adding a placement: one unit file here, and its line in
// registry.cpp.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../residual.hpp"

namespace tapegrad::nn {

class MultiHeadAttention;
class FeedForward;
struct TransformerBlockConfig;

// A placement's registered name, as configs, files and command lines hold it.
struct Placement {
  std::string name;  // a key of placement_registry()

  Placement(std::string n) : name(std::move(n)) {}  // implicit: config.placement = "b2t" reads well
  Placement(const char* n) : name(n) {}
  bool operator==(const Placement&) const = default;
  // The registered placements by name, for code that prefers a constant to a string.
  static const Placement post, pre, b2t, deepnorm, rezero, none, peri, olmo2, mixln, lns, gpas, ngpt;
};
inline const Placement Placement::post{"post"};
inline const Placement Placement::pre{"pre"};
inline const Placement Placement::b2t{"b2t"};
inline const Placement Placement::deepnorm{"deepnorm"};
inline const Placement Placement::rezero{"rezero"};
inline const Placement Placement::none{"none"};
inline const Placement Placement::peri{"peri"};
inline const Placement Placement::olmo2{"olmo2"};
inline const Placement Placement::mixln{"mixln"};
inline const Placement Placement::lns{"lns"};
inline const Placement Placement::gpas{"gpas"};
inline const Placement Placement::ngpt{"ngpt"};

// Where a block sits: DeepNorm's α and β depend on the depth of its stack (and, in an
// encoder-decoder, on both depths, N encoder and M decoder layers); Mix-LN and LayerNorm
// Scaling on the block's position in it.
struct Stack {
  enum class Kind { decoder_only, encoder, decoder };
  Kind kind = Kind::decoder_only;
  std::int64_t encoder_layers = 0;  // N
  std::int64_t decoder_layers = 1;  // M (the blocks of a decoder-only stack)
  std::int64_t index = 0;           // this block's position in its stack: 0 .. layers() - 1

  static Stack decoder_only(std::int64_t layers) { return {Kind::decoder_only, 0, layers}; }
  static Stack encoder(std::int64_t n, std::int64_t m) { return {Kind::encoder, n, m}; }
  static Stack decoder(std::int64_t n, std::int64_t m) { return {Kind::decoder, n, m}; }
  // The same stack at block i (0-based): Stack::decoder_only(L).at(i).
  Stack at(std::int64_t i) const {
    Stack s = *this;
    s.index = i;
    return s;
  }
  std::int64_t layers() const { return kind == Kind::encoder ? encoder_layers : decoder_layers; }
};

// One sublayer of a block as a placement's formula uses it, bound to one forward call (its
// masks, the encoder memory, the condition). A default-constructed Sublayer is absent: a
// block without cross-attention has F.cross false.
class Sublayer {
 public:
  Sublayer() = default;
  Sublayer(std::function<Tensor(const Tensor&)> fn, Residual& residual, Tensor cond);

  // F(h): the sublayer's update, gated by its norm (AdaLN-Zero's gate; the update itself
  // otherwise), times the depth parametrization's m when it is not 1
  Tensor operator()(const Tensor& h) const;
  // N(h): the norm of this sublayer's residual, with the condition
  Tensor N(const Tensor& h) const;
  // N_out(h): the second norm, on the sublayer's output (Peri-LN: x + N_out(F(N(x))))
  Tensor N_out(const Tensor& h) const;
  // α·x, the residual scale (x itself when α = 1: no op is recorded)
  Tensor alpha_x(const Tensor& x) const;
  // ReZero's gate a of this sublayer (a 0-d parameter)
  const Tensor& a() const;
  // nGPT's eigen learning rates α of this sublayer (d_model): |factor·s̃| of its Residual
  Tensor eigen_lr() const;
  explicit operator bool() const { return residual_ != nullptr; }

 private:
  std::function<Tensor(const Tensor&)> fn_;
  Residual* residual_ = nullptr;
  Tensor cond_;
};

// The sublayers of one block, in the order they run.
struct BlockSublayers {
  Sublayer attn;   // self-attention (causal in decoders)
  Sublayer cross;  // attention to the encoder's output; decoder blocks of a seq2seq only
  Sublayer ffn;    // the position-wise feed-forward network
  Tensor gate;     // the block's own 0-d gate (GPAS's β) where the placement has one (block_gate)
};

// The formula of a placement: y = block(x) from the block's sublayers.
class PlacementFormula {
 public:
  virtual ~PlacementFormula() = default;
  // x: (B, T, C) -> (B, T, C)
  virtual Tensor forward(const Tensor& x, const BlockSublayers& F) const = 0;
};

// The unit of a formula that is the same in every block (most of them): the block's config
// and stack are not needed.
template <typename Formula>
std::unique_ptr<PlacementFormula> make_formula(const TransformerBlockConfig&, const Stack&) {
  return std::make_unique<Formula>();
}

// One entry of the registry.
struct PlacementInfo {
  std::string name;     // "b2t": in configs, files and on the command line
  std::string label;    // "B2T": in tables and chart legends
  std::string formula;  // one line, as --help shows it
  std::string paper;    // where it comes from
  bool norms = true;             // each sublayer has a norm
  bool output_norms = false;     // each sublayer also has a second norm N_out, on its output (Peri-LN)
  bool rezero_gates = false;     // each sublayer has a learnable scalar gate a, zero at init
  bool block_gate = false;       // the block has one learnable scalar gate β, zero at init (GPAS)
  bool final_norm = false;       // a stack of these blocks ends with one more norm (Pre-LN)
  bool residual_scale = false;   // config.residual_scale (α) applies; elsewhere it must stay 1
  bool mix_ln_ratio = false;     // config.mix_ln_ratio (ρ) applies (Mix-LN); elsewhere it must keep its default
  bool block_modulation = false;  // works with norms modulated by the block (AdaLN-Zero)
  // nGPT's hypersphere: each Residual holds the eigen learning rates α, the attention
  // normalizes q and k (s_qk, softmax scale √D), the MLP scales u and v (s_u, s_v), the model
  // scales its logits (s_z) and keeps every matrix unit along d_model (nn/ngpt.hpp).
  bool hypersphere = false;
  // Takes the depth parametrization's multiplier m (config.branch_depth_exponent): false where
  // a sublayer's update passes a norm before it joins the stream, which would undo m.
  bool branch_multiplier = true;
  // Builds the formula unit of one block, from its config and where it sits: make_formula<B2T>.
  std::unique_ptr<PlacementFormula> (*make)(const TransformerBlockConfig& config, const Stack& stack) = nullptr;
  // α of this placement's residuals in a given stack when it is set by the depth (DeepNorm);
  // null: config.residual_scale where it applies, else 1.
  double (*depth_alpha)(const Stack& stack) = nullptr;
  // Run on each attention and FFN sublayer right after the model's init scheme drew its weights
  // (DeepNorm's β-scaled weights); may be null.
  void (*init_attention)(MultiHeadAttention& attn, const Stack& stack) = nullptr;
  void (*init_ffn)(FeedForward& ffn, const Stack& stack) = nullptr;
};

// Every placement, in the order --help and error messages list them: the library's, then those
// a program registered (a deque: registering keeps every entry, and each block's pointer to
// its entry, where it is).
const std::deque<PlacementInfo>& placement_registry();
// Adds a placement written outside the library (docs/residuals.md: GPT-J's parallel block),
// before a model that names it is built or loaded; then configs, files, train_lm-style
// programs and generate() take it like the library's own. ValueError if the name is taken or
// empty, or make is missing. Not thread-safe: register at start-up.
void register_placement(PlacementInfo info);
// The entry of p; ValueError naming p and the registered names when there is none.
const PlacementInfo& placement_info(const Placement& p);

std::string placement_name(const Placement& p);
// The registered placement called name; ValueError "unknown placement 'x' (expected post, ...)".
Placement placement_from_name(const std::string& name);
// "post, pre, b2t, deepnorm, rezero or none"
std::string placement_names(const std::string& last_separator = " or ");
// One line per placement, "  b2t        h = N1(x + Attn(x)); y = N2(h + FFN(h) + x)": the
// --help text of every program that takes a placement.
std::string placement_help();

}  // namespace tapegrad::nn
