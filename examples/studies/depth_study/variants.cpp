// variants.cpp — the variants of variants.hpp: the registry's placements, then the derived ones.
#include "variants.hpp"

#include <cmath>
#include <stdexcept>

namespace depth_study {

using tapegrad::nn::NormKind;
using tapegrad::nn::Placement;

namespace {

// A registered placement, changed in one way (`change` says how, for its formula).
Variant derived(const std::string& name, const std::string& label, const Placement& base, const std::string& change) {
  const tapegrad::nn::PlacementInfo& info = tapegrad::nn::placement_info(base);
  Variant v;
  v.name = name, v.label = label, v.formula = info.name + " with " + change + ": " + info.formula, v.placement = base;
  return v;
}

// The study's own variants.
std::vector<Variant> derived_variants() {
  const double inv_sqrt2 = 1 / std::sqrt(2.0);
  Variant b2t_scaled = derived("b2t-scaled", "B2T scaled", Placement::b2t, "the blocks' Linear weights × L^-½ at init");
  b2t_scaled.b2t_scaling = true;
  Variant pre_rms = derived("pre-rmsnorm", "Pre-RMSNorm", Placement::pre, "N = RMSNorm");
  Variant post_rms = derived("post-rmsnorm", "Post-RMSNorm", Placement::post, "N = RMSNorm");
  pre_rms.norm = post_rms.norm = NormKind::rmsnorm;
  Variant pre_scaled = derived("pre-scaled", "Pre-LN x/√2", Placement::pre, "α = 1/√2");
  Variant post_scaled = derived("post-scaled", "Post-LN x/√2", Placement::post, "α = 1/√2");
  pre_scaled.residual_scale = post_scaled.residual_scale = inv_sqrt2;
  Variant llama = derived("llama", "LLaMA", Placement::pre, "N = RMSNorm, a SwiGLU FFN, RoPE, no biases");
  llama.norm = NormKind::rmsnorm;
  llama.llama = true;
  Variant dyt = derived("dyt", "DyT", Placement::pre, "N = DyT, γ⊙tanh(αx)+β, embeddings × a learned s from √d");
  dyt.norm = NormKind::dyt;
  Variant derf = derived("derf", "Derf", Placement::pre, "N = Derf, γ⊙erf(αx+s)+β, embeddings × a learned s from √d");
  derf.norm = NormKind::derf;
  dyt.embed_scale_sqrt_d = derf.embed_scale_sqrt_d = true;
  std::vector<Variant> all = {b2t_scaled, pre_rms, post_rms, pre_scaled, post_scaled, llama, dyt, derf};
  // Pre-LN on each scheme of the stream that the claims test (nn/stream/registry.cpp has the formulas)
  struct Scheme {
    const char *name, *scheme, *label;
  };
  const Scheme schemes[] = {{"value-residual", "value_residual", "Value residual"},
                            {"denseformer", "denseformer", "DenseFormer"},
                            {"hc", "hyper_connections", "HC"},
                            {"mhc", "mhc", "mHC"},
                            {"attnres", "attention_residuals", "AttnRes"}};
  for (const auto& [name, scheme, label] : schemes) {
    const tapegrad::nn::StreamInfo& info = tapegrad::nn::stream_info(scheme);
    Variant v = derived(name, label, Placement::pre, "the " + info.label + " stream (" + info.formula + ")");
    v.stream.scheme = scheme;
    all.push_back(v);
  }
  // The depth parametrizations on Pre-LN, from a base of 2 blocks (Dey et al. 2025, arXiv 2505.01618)
  Variant mup = derived("depth-mup", "Depth-μP", Placement::pre, "each update × (2/L)^½ and Adam's lr, ε to match");
  mup.branch_exponent = 0.5;
  Variant completep = derived("completep", "CompleteP", Placement::pre, "each update × 2/L and Adam's ε to match");
  completep.branch_exponent = 1;
  all.push_back(mup);
  all.push_back(completep);
  return all;
}

}  // namespace

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = [] {
    std::vector<Variant> all;
    for (const tapegrad::nn::PlacementInfo& p : tapegrad::nn::placement_registry()) {
      Variant v;
      v.name = p.name, v.label = p.label, v.formula = p.formula, v.placement = Placement(p.name);
      all.push_back(v);
    }
    for (const Variant& v : derived_variants()) all.push_back(v);
    return all;
  }();
  return variants;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const Variant& v : all_variants()) names.push_back(v.name);
  return names;
}

const Variant& variant_from_name(const std::string& name) {
  for (const Variant& v : all_variants())
    if (v.name == name) return v;
  std::string names;
  for (const Variant& v : all_variants()) names += (names.empty() ? "" : ", ") + v.name;
  throw std::invalid_argument("unknown placement '" + name + "' (expected one of: " + names + ")");
}

std::string variant_help() {
  std::string help = tapegrad::nn::placement_help() + "The depth study has no --residual-scale: α is 1, except in the variants below that set it.\n"
                     "The depth study's own variants, derived from the placements above:";
  for (const Variant& v : derived_variants())
    help += "\n  " + v.name + std::string(v.name.size() < 14 ? 14 - v.name.size() : 1, ' ') + v.formula;
  return help;
}

}  // namespace depth_study
