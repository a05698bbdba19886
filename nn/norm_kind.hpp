// norm_kind.hpp — the norms a transformer config can name, and the registry that builds them.
//
//   layernorm   N(x) = (x − mean) / √(var + ε) · g + b          (Ba et al. 2016)
//   rmsnorm     N(x) = x / √(mean(x²) + ε) · g                   (Zhang & Sennrich 2019)
//   adaln       N(x, c) = LN(x)·(1 + scale(c)) + shift(c)        (DiT, Peebles & Xie 2023)
//   adaln_zero  AdaLN whose shift, scale and output gate come from one zero-initialized Linear
//               of the block: each block starts as the identity (DiT's AdaLN-Zero)
//   dyt         N(x) = g ⊙ tanh(α·x) + b, α a learned scalar: no statistics, each element on
//               its own (Zhu, Chen, He, LeCun & Liu 2025, arXiv 2503.10622)
//   derf        N(x) = g ⊙ erf(α·x + s) + b, α and s learned scalars (Chen, Lu, Zhu, Sun & Liu
//               2025, arXiv 2512.10938)
// (pointwise_norm.hpp has DyT and Derf; where their α starts depends on the norm's role.)
//
// A config holds a NormKind, which is the norm's registered name; norm_info() gives what the
// name stands for. Adding a norm: a Norm class (norm.hpp) and one entry in norm_kind.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "norm.hpp"

namespace tapegrad::nn {

struct NormKind {
  std::string name;  // a key of norm_registry()

  NormKind(std::string n) : name(std::move(n)) {}  // implicit: config.norm = "rmsnorm" reads well
  NormKind(const char* n) : name(n) {}
  bool operator==(const NormKind&) const = default;
  // The registered kinds by name, for code that prefers a constant to a string.
  static const NormKind layernorm, rmsnorm, adaln, adaln_zero, dyt, derf;
};
inline const NormKind NormKind::layernorm{"layernorm"};
inline const NormKind NormKind::rmsnorm{"rmsnorm"};
inline const NormKind NormKind::adaln{"adaln"};
inline const NormKind NormKind::adaln_zero{"adaln_zero"};
inline const NormKind NormKind::dyt{"dyt"};
inline const NormKind NormKind::derf{"derf"};

// Where a norm sits: at an attention sublayer, a cross-attention sublayer or an FFN (before it,
// after it or both, as the placement says), or at the end of a stack. Most norms are built the
// same everywhere; DyT and Derf start their α where the config says for the role
// (TransformerBlockConfig::norm_alpha0_*), since DyT's authors found LLMs want a larger α at
// the attention norms than elsewhere.
enum class NormRole { attention, cross, ffn, final };
std::string norm_role_name(NormRole role);  // "attention", "cross", "ffn", "final"

// What every norm is built from.
struct NormSpec {
  std::int64_t dim = 0;       // C
  double eps = 1e-5;
  std::int64_t cond_dim = 0;  // size of the condition vector (conditional norms)
  DType dtype = DType::float32;
  NormRole role = NormRole::attention;
  double alpha0 = 0.5;  // α at init, for the norms with a learned α (dyt, derf); the papers' default
};

struct NormInfo {
  std::string name;     // "rmsnorm"
  std::string formula;  // one line, for --help and reports
  bool conditional = false;      // reads a condition vector: needs cond_dim > 0 (and a model with classes)
  bool block_modulated = false;  // its shift, scale and gate come from one Linear of the block (AdaLN-Zero)
  std::shared_ptr<Norm> (*make)(const NormSpec&) = nullptr;        // the norm of a block's sublayer
  std::shared_ptr<Norm> (*make_final)(const NormSpec&) = nullptr;  // a stack's final norm; null: make
  bool learned_alpha = false;  // starts a learned scalar α at NormSpec::alpha0 (DyT, Derf)
};

// Every norm, in the order --help lists them.
const std::vector<NormInfo>& norm_registry();
// The entry of kind; ValueError naming the kind and the registered names when there is none.
const NormInfo& norm_info(const NormKind& kind);
// The norm of a sublayer, and a stack's final norm (Pre-LN stacks end with one).
std::shared_ptr<Norm> make_norm(const NormKind& kind, const NormSpec& spec);
std::shared_ptr<Norm> make_final_norm(const NormKind& kind, const NormSpec& spec);

std::string norm_kind_name(const NormKind& kind);
// The registered kind called name; ValueError "unknown norm 'x' (expected layernorm, ...)".
NormKind norm_kind_from_name(const std::string& name);
// "layernorm, rmsnorm, adaln, adaln_zero, dyt or derf"
std::string norm_names(const std::string& last_separator = " or ");

}  // namespace tapegrad::nn
