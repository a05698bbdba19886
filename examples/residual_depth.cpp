// residual_depth.cpp — the residual reader's rung: where the norm sits in a block decides how
// the gradient reaches the bottom of a deep stack. Between tiny_lm (one model) and the studies
// (placements × depths × learning rates × seeds, with verdicts), this trains the same small
// character LM as tiny_lm three ways, at two depths, and prints what articles on residual
// connections print:
//
//   Post-LN  y = N(x + F(x))            (Vaswani et al. 2017)
//   Pre-LN   y = x + F(N(x))            (Xiong et al. 2020, "On Layer Normalization in the
//                                        Transformer Architecture")
//   B2T      h = N1(x + A(x)); y = N2(h + F(h) + x)   (Takase et al. 2022, "B2T Connection")
//
// and for each, the gradient norm of each block's parameters at the first step and at the
// last (the named_parameters() loop of those articles), and the loss. docs/residuals.md derives
// why the products of norm Jacobians in Post-LN shrink the gradient toward the bottom.
//
//   build/examples/residual_depth                       # 6 and 24 layers, 200 steps, lr 1e-3
//   build/examples/residual_depth --layers 2,12 --steps 400 --lr 3e-3 --seed 2
//
// examples/README.md (rung 4) says what to look for.
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>

#include "cli_checks.hpp"

using namespace tapegrad;

namespace {

// The articles' diagnostic, after backward: for each block l, ‖∇θ_l‖₂ = sqrt(Σ g²) over every
// element of every parameter whose name starts with "blocks.l." (nn::block_grad_norms computes
// the same).
std::vector<double> block_grad_norms(const nn::TransformerLM& model) {
  std::vector<double> squared(static_cast<std::size_t>(model.config.n_layers), 0.0);
  for (const auto& [name, p] : model.named_parameters()) {
    if (name.rfind("blocks.", 0) != 0 || !p.grad().defined()) continue;  // embeddings, head, final norm
    const std::size_t block = std::stoul(name.substr(7));                 // "blocks.3.ffn.fc1.weight" -> 3
    squared[block] += sum(p.grad() * p.grad()).item();
  }
  for (double& s : squared) s = std::sqrt(s);
  return squared;
}

struct Outcome {
  std::vector<double> first, last;  // block gradient norms at step 0 and at the last step
  double first_loss = 0, last_loss = 0, val_loss = NAN;
  std::string problem;  // the first non-finite loss or gradient, if training broke down
};

}  // namespace

int main(int argc, char** argv) {
  std::int64_t steps = 200, d_model = 64, seed = 1, threads = 1;
  double lr = 1e-3;
  std::vector<std::int64_t> depths = {6, 24};
  CLI::App app{"Post-LN, Pre-LN and B2T at two depths: per-block gradient norms and the loss"};
  app.add_option("--steps", steps, "training steps of each model")->check(cli::positive);
  app.add_option("--layers", depths, "the depths, comma-separated")->delimiter(',')->check(cli::positive);
  app.add_option("--d-model", d_model, "model width (4 heads)")->check(cli::positive);
  app.add_option("--lr", lr, "AdamW's peak learning rate (warm-up over the first tenth, then cosine)")->check(cli::positive);
  app.add_option("--seed", seed, "initial weights and batch order");
  // One thread by default: these matrices are so small that a second thread costs more in
  // synchronisation than it saves (on 2 busy cores the defaults took about 3 times as long).
  app.add_option("--threads", threads, "threads for OpenMP and OpenBLAS")->check(cli::positive);
  CLI11_PARSE(app, argc, argv);
  set_num_threads(static_cast<int>(threads));
  if (d_model % 4 != 0) {
    std::fprintf(stderr, "--d-model: must be a multiple of 4 (the heads), got %lld\n", static_cast<long long>(d_model));
    return 1;
  }
  const std::int64_t T = 32, B = 16;

  const data::Corpus corpus = data::Corpus::default_corpus();  // as in tiny_lm: characters
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_texts(corpus.texts());
  auto stream = std::make_shared<data::TokenStream>(corpus, tokenizer, /*val_fraction=*/0.1);
  auto windows = std::make_shared<data::TokenWindowDataset>(stream, data::Split::train, T);
  const std::vector<nn::Placement> placements = {nn::Placement::post, nn::Placement::pre, nn::Placement::b2t};
  std::printf("Post-LN, Pre-LN, B2T: d_model %lld, %lld steps of %lld x %lld characters, AdamW lr %g, seed %lld\n",
              static_cast<long long>(d_model), static_cast<long long>(steps), static_cast<long long>(B),
              static_cast<long long>(T), lr, static_cast<long long>(seed));

  std::printf("\nplacement  layers  first loss  last loss  validation loss (nats/character)\n");
  std::vector<std::vector<Outcome>> outcomes(depths.size());  // [depth][placement]
  for (std::size_t d = 0; d < depths.size(); ++d) {
    for (const nn::Placement& placement : placements) {
      manual_seed(static_cast<std::uint64_t>(seed));  // every model starts from the same draws
      nn::TransformerLMConfig config;
      config.vocab_size = tokenizer.vocab_size();
      config.max_seq_len = T;
      config.n_layers = depths[d];
      config.block.d_model = d_model;
      config.block.n_heads = 4;
      config.block.placement = placement;
      // An LM head of its own: tied to the embedding, Post-LN and B2T stay on the unigram
      // plateau here even at 6 layers (docs/depth-study.md, claim 3), hiding the depth.
      config.tie_weights = false;
      nn::TransformerLM model(config);
      data::DataLoader loader(windows, data::DataLoaderOptions().batch_size(B).shuffle(true).seed(
                                           static_cast<std::uint64_t>(seed)).drop_last(true));
      optim::AdamW optimizer(optim::weight_decay_groups(model, optim::AdamOptions(lr).weight_decay(0.1)));
      optim::WarmupCosine schedule(optimizer, /*warmup_steps=*/steps / 10, steps, /*floor=*/0.1);
      const nn::NamedTensors params = model.named_parameters();
      Outcome out;
      for (std::int64_t step = 0; step < steps && out.problem.empty(); ++step) {
        schedule.apply(step);
        const data::Batch batch = loader.next();
        const Tensor logits = model.forward(batch.inputs);  // (B, T, V)
        const Tensor loss = cross_entropy(logits.reshape({B * T, -1}), batch.targets.reshape({B * T}));
        // The norms are read after backward, before clipping at 1 changes the gradients.
        const training::UpdateResult r = training::update(optimizer, loss, params, /*clip=*/1.0, [&] {
          if (step == 0) out.first = block_grad_norms(model);
          if (step == steps - 1) out.last = block_grad_norms(model);
        });
        out.problem = r.problem;
        if (step == 0) out.first_loss = r.loss;
        out.last_loss = r.loss;
      }
      if (out.problem.empty()) out.val_loss = training::evaluate_lm(model, *stream, /*batches=*/8, B, T);
      std::printf("%-9s  %6lld  %10.4f  %9.4f  %15.4f%s%s\n", nn::placement_info(placement).label.c_str(),
                  static_cast<long long>(depths[d]), out.first_loss, out.last_loss, out.val_loss,
                  out.problem.empty() ? "" : "  stopped: ", out.problem.c_str());
      std::fflush(stdout);  // one line per model as it ends: the 24-layer ones take a while
      outcomes[d].push_back(out);
    }
  }

  for (std::size_t d = 0; d < depths.size(); ++d) {
    std::printf("\n%lld layers: gradient norm of each block's parameters, first step -> last step\nblock", static_cast<long long>(depths[d]));
    for (const nn::Placement& p : placements) std::printf("  %22s", nn::placement_info(p).label.c_str());
    std::printf("\n");
    for (std::int64_t l = 0; l < depths[d]; ++l) {
      std::printf("%5lld", static_cast<long long>(l));
      for (const Outcome& o : outcomes[d]) {
        const auto at = [&](const std::vector<double>& v) { return v.empty() ? NAN : v[static_cast<std::size_t>(l)]; };
        std::printf("  %9.3g -> %9.3g", at(o.first), at(o.last));
      }
      std::printf("\n");
    }
  }
  return 0;
}
