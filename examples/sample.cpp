// sample.cpp — generate text from a checkpoint written by train_lm (the model is rebuilt from
// the configuration the file stores; the tokenizer is the one saved beside it).
//
//   sample --checkpoint train_lm.tgc --prompt "The licensee " --tokens 200 --temperature 0.8
#include <CLI/CLI.hpp>

#include <cstdio>

#include <tapegrad/tapegrad.hpp>

#include "train_lm/files.hpp"

using namespace tapegrad;

int main(int argc, char** argv) {
  std::string checkpoint = "train_lm.tgc", prompt = "The ";
  std::int64_t tokens = 200, top_k = 40;
  double temperature = 0.8;
  std::uint64_t seed = 0;
  CLI::App app{"Generate text from a train_lm checkpoint."};
  app.add_option("--checkpoint", checkpoint, "checkpoint written by train_lm")->check(CLI::ExistingFile);
  app.add_option("--prompt", prompt, "text to continue (must not be empty)");
  app.add_option("--tokens", tokens, "tokens to generate")->check(CLI::NonNegativeNumber);
  app.add_option("--temperature", temperature, "0: greedy")->check(CLI::NonNegativeNumber);
  app.add_option("--top-k", top_k, "sample among the k most likely tokens (0: all)")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", seed, "sampling seed");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto model = io::load_model<nn::TransformerLM>(checkpoint);  // the file alone describes the model
    const auto tokenizer = data::load_tokenizer(lm::tokenizer_path(checkpoint));
    const std::vector<data::TokenId> ids = tokenizer->encode(prompt);
    if (ids.empty()) throw ValueError("the prompt encodes to no tokens");
    std::vector<std::int64_t> prompt_ids(ids.begin(), ids.end());
    Generator gen(seed);
    nn::GenerateOptions g;
    g.temperature = temperature;
    g.top_k = top_k;
    g.gen = &gen;
    const Tensor out = model->generate(Tensor::from_vector(prompt_ids, {1, static_cast<std::int64_t>(prompt_ids.size())}), tokens, g);
    std::printf("%s\n", tokenizer->decode_tensor(out).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sample: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
