// variants.cpp — the table of variants of variants.hpp.
#include "variants.hpp"

#include <cmath>
#include <stdexcept>

namespace depth_study {

using tapegrad::nn::NormKind;
using tapegrad::nn::Placement;

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = {
      {"none", "No residual", "y = LN(F(x)): no residual connection", Placement::none},
      {"post", "Post-LN", "y = LN(x + F(x))", Placement::post},
      {"pre", "Pre-LN", "y = x + F(LN(x)), final LN before the output layer", Placement::pre},
      {"b2t", "B2T", "h = LN(x + Attn(x)), y = LN(h + FFN(h) + x)", Placement::b2t},
      {"b2t-scaled", "B2T scaled", "b2t with the blocks' Linear weights x L^-1/2 at init", Placement::b2t,
       NormKind::layernorm, 1.0, true},
      {"deepnorm", "DeepNorm", "y = LN(a*x + F(x)), a = (2L)^1/4; FFN, V, O drawn Xavier-normal with gain (8L)^-1/4",
       Placement::deepnorm},
      {"rezero", "ReZero", "y = x + a*F(x), learnable a = 0 at init, no norm", Placement::rezero},
      {"pre-rmsnorm", "Pre-RMSNorm", "y = x + F(RMSNorm(x)), final RMSNorm", Placement::pre, NormKind::rmsnorm},
      {"post-rmsnorm", "Post-RMSNorm", "y = RMSNorm(x + F(x))", Placement::post, NormKind::rmsnorm},
      {"pre-scaled", "Pre-LN x/√2", "y = x/sqrt(2) + F(LN(x))", Placement::pre, NormKind::layernorm, 1 / std::sqrt(2.0)},
      {"post-scaled", "Post-LN x/√2", "y = LN(x/sqrt(2) + F(x))", Placement::post, NormKind::layernorm, 1 / std::sqrt(2.0)},
  };
  return variants;
}

std::string variant_names() {
  std::string names;
  for (const Variant& v : all_variants()) names += (names.empty() ? "" : ", ") + v.name;
  return names;
}

const Variant& variant_from_name(const std::string& name) {
  for (const Variant& v : all_variants())
    if (v.name == name) return v;
  throw std::invalid_argument("unknown placement '" + name + "' (expected one of: " + variant_names() + ")");
}

}  // namespace depth_study
