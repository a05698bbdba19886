// test_optim_vs_torch.cpp — SGD, Adam and AdamW step for step against torch.optim, and
// clip_grad_norm_ against torch.nn.utils.clip_grad_norm_.
//
// The reference (tests/reference/optim_reference.txt, written by make_optim_reference.py) holds,
// per case, the settings of each parameter group, the initial parameters, a fixed gradient for
// every parameter and step (some steps leave a parameter without one), the parameters after every
// step and the final optimizer state. Here the same optimizer is built from those settings, fed
// the same gradients, and every parameter is compared after every step, then the state buffers
// by name ("exp_avg", "momentum_buffer", ...) and the step counts.
#include <algorithm>
#include <memory>

#include <catch2/catch.hpp>
#include <tapegrad/optim/optim.hpp>

#include "support/reference.hpp"

using namespace tapegrad;
using namespace tapegrad::optim;
using tapegrad::testing::ReferenceFile;

namespace {

constexpr const char* kRegenerate = "regenerate with: /usr/bin/python3 tests/reference/make_optim_reference.py";

const ReferenceFile& optim_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/optim_reference.txt");
  return file;
}

// The parameters of every case, in the order the reference's group<k>.params index them.
const char* const kParamNames[] = {"w", "b", "g"};
// Every state key torch.optim 1.13 writes for these optimizers.
const char* const kStateKeys[] = {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer"};

struct Case {
  const char* name;
  const char* kind;  // "SGD", "Adam", "AdamW"
};
const Case kCases[] = {
    {"sgd_plain", "SGD"},          {"sgd_momentum", "SGD"},       {"sgd_dampening_wd", "SGD"},
    {"sgd_nesterov_wd", "SGD"},    {"sgd_two_groups", "SGD"},     {"sgd_missing_grads", "SGD"},
    {"adam", "Adam"},              {"adam_wd_amsgrad", "Adam"},   {"adamw", "AdamW"},
    {"adamw_amsgrad", "AdamW"},    {"adamw_two_groups", "AdamW"}, {"adam_missing_grads", "Adam"},
};

// The optimizer of a case, over params (w, b, g), grouped and configured as in the reference.
std::unique_ptr<Optimizer> make_optimizer(const Case& c, const NamedTensors& params) {
  const ReferenceFile& ref = optim_reference();
  std::vector<ParamGroup<SGDOptions>> sgd_groups;
  std::vector<ParamGroup<AdamOptions>> adam_groups;
  for (int k = 0; ref.contains(std::string(c.name) + ".group" + std::to_string(k) + ".params"); ++k) {
    const std::string p = std::string(c.name) + ".group" + std::to_string(k) + ".";
    NamedTensors group;
    for (std::int64_t index : ref.shape_of(p + "params")) group.push_back(params.at(index));
    if (std::string(c.kind) == "SGD") {
      sgd_groups.push_back({group, SGDOptions(ref.scalar(p + "lr"))
                                       .momentum(ref.scalar(p + "momentum"))
                                       .dampening(ref.scalar(p + "dampening"))
                                       .weight_decay(ref.scalar(p + "weight_decay"))
                                       .nesterov(ref.scalar(p + "nesterov") != 0)});
    } else {
      adam_groups.push_back({group, AdamOptions(ref.scalar(p + "lr"))
                                        .betas({ref.scalar(p + "beta1"), ref.scalar(p + "beta2")})
                                        .eps(ref.scalar(p + "eps"))
                                        .weight_decay(ref.scalar(p + "weight_decay"))
                                        .amsgrad(ref.scalar(p + "amsgrad") != 0)});
    }
  }
  const std::string kind = c.kind;
  if (kind == "SGD") return std::make_unique<SGD>(sgd_groups);
  if (kind == "Adam") return std::make_unique<Adam>(adam_groups);
  return std::make_unique<AdamW>(adam_groups);
}

// Runs one case in dtype; returns the largest |difference| from the reference seen anywhere.
double run_case(const Case& c, DType dtype, double atol, double rtol) {
  const ReferenceFile& ref = optim_reference();
  const std::string prefix = std::string(c.name) + ".";
  NamedTensors params;
  for (const char* name : kParamNames)
    params.emplace_back(name, ref.get(prefix + name + ".init", dtype).requires_grad_());
  std::unique_ptr<Optimizer> opt = make_optimizer(c, params);
  REQUIRE(opt->name() == c.kind);

  double max_diff = 0;
  auto check = [&](const std::string& what, const Tensor& actual, const Tensor& expected) {
    const auto r = tapegrad::testing::compare_tensors(what, actual, expected, atol, rtol);
    INFO(r.report);
    CHECK(r.ok);
    max_diff = std::max(max_diff, r.max_diff);
  };

  const std::int64_t steps = ref.integer(prefix + "steps");
  REQUIRE(steps >= 5);
  for (std::int64_t t = 0; t < steps; ++t) {
    for (auto& [name, p] : params) {
      const std::string grad_name = prefix + name + ".grad." + std::to_string(t);
      if (ref.contains(grad_name)) p.set_grad(ref.get(grad_name, dtype));
      else p.reset_grad();  // no gradient this step: PyTorch skips the parameter
    }
    opt->step();
    for (auto& [name, p] : params)
      check(prefix + name + ".after." + std::to_string(t), p, ref.get(prefix + name + ".after." + std::to_string(t)));
  }

  // The final state, buffer by buffer: the same names as torch.optim's, the same values.
  for (auto& [name, p] : params) {
    const ParamState& state = opt->param_state(name);
    for (const char* key : kStateKeys) {
      const std::string ref_name = prefix + name + ".state." + key;
      INFO(ref_name);
      REQUIRE(state.buffer(key).defined() == ref.contains(ref_name));
      if (ref.contains(ref_name)) check(ref_name, state.buffer(key), ref.get(ref_name));
    }
    CHECK(state.buffers.size() == static_cast<std::size_t>(std::count_if(
                                      std::begin(kStateKeys), std::end(kStateKeys),
                                      [&](const char* key) { return ref.contains(prefix + name + ".state." + key); })));
    // Adam's per-parameter step count (torch.optim.SGD keeps none).
    if (ref.contains(prefix + name + ".state.step"))
      CHECK(state.step == static_cast<std::int64_t>(ref.scalar(prefix + name + ".state.step")));
  }
  return max_diff;
}

}  // namespace

TEST_CASE("SGD, Adam and AdamW match torch.optim step for step (float64)", "[optim][reference]") {
  INFO(kRegenerate);
  double worst = 0;
  for (const Case& c : kCases) {
    SECTION(c.name) {
      // Same formulas, same operation order: only the last bits may differ (PyTorch's
      // vectorized add-with-alpha uses fused multiply-adds). Measured: at most 4.4e-16.
      worst = std::max(worst, run_case(c, DType::float64, 1e-14, 1e-13));
    }
  }
  CHECK(worst < 2e-15);
}

TEST_CASE("the float32 kernels follow the same trajectories", "[optim][reference]") {
  INFO(kRegenerate);
  for (const Case& c : kCases) {
    SECTION(c.name) { run_case(c, DType::float32, 2e-5, 1e-4); }
  }
}

TEST_CASE("clip_grad_norm_ matches torch.nn.utils.clip_grad_norm_", "[optim][clip][reference]") {
  INFO(kRegenerate);
  const ReferenceFile& ref = optim_reference();
  for (const char* name : {"clip_l2", "clip_l2_no_clip", "clip_inf", "clip_l1"}) {
    SECTION(name) {
      const std::string prefix = std::string(name) + ".";
      std::vector<Tensor> params;
      for (int i = 0; i < 3; ++i) {
        const Tensor grad = ref.get(prefix + "grad" + std::to_string(i));
        params.push_back(zeros(grad.shape(), DType::float64).requires_grad_());
        params.back().set_grad(grad.clone());
      }
      const double total = clip_grad_norm_(params, ref.scalar(prefix + "max_norm"), ref.scalar(prefix + "norm_type"));
      CHECK(total == Approx(ref.scalar(prefix + "total_norm")).epsilon(1e-14));
      for (int i = 0; i < 3; ++i)
        CHECK_CLOSE(prefix + "clipped" + std::to_string(i), params[i].grad(),
                    ref.get(prefix + "clipped" + std::to_string(i)), 1e-15, 1e-13);
      // The no-clip case must leave the gradients bit for bit.
      if (std::string(name) == "clip_l2_no_clip")
        for (int i = 0; i < 3; ++i)
          CHECK(params[i].grad().to_vector() == ref.get(prefix + "grad" + std::to_string(i)).to_vector());
    }
  }
}
