// tiny_lm.cpp — a whole language model in one sitting: the third rung of the examples'
// ladder (quickstart: tensors and backward; mlp_fit: a model by hand; this: the library's
// modules, optimizer and data loader; train_lm: the full program with its options).
//
//   text -> characters -> windows of T tokens -> TransformerLM -> next-token cross-entropy
//   AdamW, a cosine schedule, 300 steps; then greedy text from the model.
//
// No command line, no checkpoints: every setting is a constant below. Run:
//   build/examples/tiny_lm        # ~20 s on 2 cores; the loss falls from ~4.4 to ~2.5
#include <tapegrad/tapegrad.hpp>

#include <cstdio>

using namespace tapegrad;

int main() {
  const std::int64_t T = 32, B = 16, steps = 300;
  manual_seed(1);

  // Data: the licence texts every Debian machine has, one token per character, as windows
  // of T + 1 tokens (input, and target one token later), shuffled by a seeded loader.
  const data::Corpus corpus = data::Corpus::default_corpus();
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_texts(corpus.texts());
  auto stream = std::make_shared<data::TokenStream>(corpus, tokenizer, /*val_fraction=*/0.1);
  auto windows = std::make_shared<data::TokenWindowDataset>(stream, data::Split::train, T);
  data::DataLoader loader(windows, data::DataLoaderOptions().batch_size(B).shuffle(true).seed(1).drop_last(true));

  // Model: 2 Pre-LN blocks of width 64 (nn/placement/ has the other placements).
  nn::TransformerLMConfig config;
  config.vocab_size = tokenizer.vocab_size();
  config.max_seq_len = T;
  config.n_layers = 2;
  config.block.d_model = 64;
  config.block.n_heads = 4;
  config.block.placement = nn::Placement::pre;  // h = x + Attn(N1(x)); y = h + FFN(N2(h))
  nn::TransformerLM model(config);
  std::printf("%lld parameters, %lld characters, %lld training windows\n", static_cast<long long>(model.num_parameters()),
              static_cast<long long>(config.vocab_size), static_cast<long long>(windows->size()));

  // Optimizer: AdamW without weight decay on norms, biases and embeddings; warm-up + cosine.
  optim::AdamW optimizer(optim::weight_decay_groups(model, optim::AdamOptions(3e-3).weight_decay(0.1)));
  optim::WarmupCosine schedule(optimizer, /*warmup_steps=*/30, /*total_steps=*/steps, /*floor=*/0.1);

  for (std::int64_t step = 0; step < steps; ++step) {
    schedule.apply(step);
    const data::Batch batch = loader.next();                  // inputs, targets: int64 (B, T)
    const Tensor logits = model.forward(batch.inputs);        // (B, T, V)
    const Tensor loss = cross_entropy(logits.reshape({B * T, -1}), batch.targets.reshape({B * T}));
    optimizer.zero_grad();
    loss.backward();                                          // every parameter's .grad()
    optim::clip_grad_norm_(model.parameters(), 1.0);
    optimizer.step();
    if (step % 50 == 0 || step == steps - 1) std::printf("step %3lld  loss %.4f\n", static_cast<long long>(step), loss.item());
  }

  // Validation loss, then characters sampled after "The " (temperature 0.8, top 10) until the
  // context of T is full: learned positions end at max_seq_len = T.
  const double val = training::evaluate_lm(model, *stream, /*batches=*/8, B, T);
  std::printf("validation loss %.4f nats/character\n", val);
  const std::vector<data::TokenId> ids = tokenizer.encode("The ");
  Generator sampling(2);
  nn::GenerateOptions options;
  options.temperature = 0.8;
  options.top_k = 10;
  options.gen = &sampling;
  const Tensor prompt = Tensor::from_vector(std::vector<std::int64_t>(ids.begin(), ids.end()), {1, static_cast<std::int64_t>(ids.size())});
  std::printf("%s\n", tokenizer.decode_tensor(model.generate(prompt, T - prompt.size(1), options)).c_str());
  return val < 3.0 ? 0 : 1;  // a model that learned nothing stays near the unigram level (~3.5)
}
