// registry.cpp — the placement registry: every placement a config, a command line or a study
// can name. Each unit's file defines its entry (name, formula, paper, what it needs, its
// formula unit); adding a placement is one unit file and one line in the list below, and a
// program adds its own with register_placement().
#include <sstream>

#include "placement.hpp"
#include "../name_list.hpp"

namespace tapegrad::nn {

PlacementInfo post_ln_placement(), pre_ln_placement(), b2t_placement(), deepnorm_placement(), rezero_placement(),
    no_residual_placement(), peri_ln_placement(), olmo2_placement(), mix_ln_placement(), ln_scaling_placement(),
    gpas_placement(), ngpt_placement();

namespace {
std::deque<PlacementInfo>& registry() {
  static std::deque<PlacementInfo> placements = {
      post_ln_placement(),      // post      N(x + F(x))
      pre_ln_placement(),       // pre       x + F(N(x))
      b2t_placement(),          // b2t       post + the block input before the last norm
      deepnorm_placement(),     // deepnorm  N(α·x + F(x)), α and β from the depth
      rezero_placement(),       // rezero    x + a·F(x)
      no_residual_placement(),  // none      N(F(x))
      peri_ln_placement(),      // peri      x + N_out(F(N(x))), Sandwich-LN
      olmo2_placement(),        // olmo2     x + N(F(x)), OLMo 2's reordered norm
      mix_ln_placement(),       // mixln     post in the first ⌊ρL⌋ blocks, pre in the others
      ln_scaling_placement(),   // lns       x + F(N(x)/√ℓ) in block ℓ
      gpas_placement(),         // gpas      G(x + F(N(x))), G(u) = u − SiLU(β)·sg(u)
      ngpt_placement(),         // ngpt      Norm(x + α ⊙ (Norm(F(x)) − x)), on the sphere
  };
  return placements;
}
}  // namespace

const std::deque<PlacementInfo>& placement_registry() { return registry(); }

void register_placement(PlacementInfo info) {
  register_entry(registry(), std::move(info), "register_placement", "placement");
}

std::string placement_names(const std::string& last_separator) { return name_list(placement_registry(), last_separator); }

const PlacementInfo& placement_info(const Placement& p) { return entry_named(placement_registry(), p.name, "placement"); }

std::string placement_name(const Placement& p) { return p.name; }

Placement placement_from_name(const std::string& name) { return Placement(placement_info(Placement(name)).name); }

std::string placement_help() {
  std::ostringstream os;
  os << "Placements (x: the block's input, F: a sublayer, N: its norm, α: --residual-scale, ℓ: the block's place "
        "1..L in its stack of L):\n";
  for (const PlacementInfo& p : placement_registry()) {
    os << "  " << p.name << std::string(p.name.size() < 10 ? 10 - p.name.size() : 1, ' ') << p.formula << "\n";
  }
  return os.str();
}

}  // namespace tapegrad::nn
