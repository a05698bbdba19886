// test_determinism.cpp — with a fixed thread count, the same seed gives bitwise-identical
// losses and parameters, run after run. tapegrad has no nondeterministic kernel to switch off:
// no atomics on floats, every parallel reduction adds in a fixed order (see the comments in
// ops/softmax.cpp, ops/loss.cpp, ops/index.cpp), dropout masks come from per-op seeds. This
// test keeps it so, and catches kernels that read memory they never wrote (a reused cache block
// would make such a run differ from the next).
#include <cstring>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

struct Run {
  std::vector<float> losses;
  std::vector<float> parameters;
};

// Eight steps of a small LM with dropout and AdamW, from seed 42.
Run train(int threads, nn::Placement placement) {
  const int saved = get_num_threads();
  set_num_threads(threads);
  manual_seed(42);
  nn::TransformerLMConfig c;
  c.vocab_size = 40;
  c.max_seq_len = 32;
  c.n_layers = 2;
  c.block.d_model = 64;
  c.block.n_heads = 4;
  c.block.dropout = 0.1;
  c.block.attn_dropout = 0.1;
  c.block.placement = placement;
  nn::TransformerLM model(c);
  optim::AdamW opt(optim::weight_decay_groups(model, optim::AdamOptions(3e-3).weight_decay(0.1)));
  Generator data(7);
  const Tensor tokens = randint(0, 40, {8, 33}, data);  // one batch, learned over the steps
  Run run;
  for (int step = 0; step < 8; ++step) {
    const Tensor inputs = narrow(tokens, 1, 0, 32).contiguous(), targets = narrow(tokens, 1, 1, 32).contiguous();
    opt.zero_grad();
    Tensor loss = cross_entropy(model.forward(inputs).reshape({256, 40}), targets.reshape({256}));
    loss.backward();
    optim::clip_grad_norm_(model.named_parameters(), 1.0);
    opt.step();
    run.losses.push_back(static_cast<float>(loss.item()));
  }
  for (const auto& [_, p] : model.named_parameters()) {
    const auto v = p.to_vector<float>();
    run.parameters.insert(run.parameters.end(), v.begin(), v.end());
  }
  set_num_threads(saved);
  return run;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("determinism: same seed and thread count, bitwise-identical losses and parameters", "[determinism]") {
  for (const int threads : {1, 2})
    for (const auto& placement : {nn::Placement::pre, nn::Placement::post}) {
      INFO(threads << " thread(s), " << nn::placement_name(placement));
      const Run a = train(threads, placement), b = train(threads, placement);
      CHECK(bitwise_equal(a.losses, b.losses));
      CHECK(bitwise_equal(a.parameters, b.parameters));
      CHECK(a.losses.back() < a.losses.front());  // it trained
    }
}
