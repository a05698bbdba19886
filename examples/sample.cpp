// sample.cpp — generate text from a checkpoint written by train_lm (the model is rebuilt from
// the configuration the file stores; the tokenizer is the one saved beside it).
//
//   sample --checkpoint train_lm.tgc --prompt "The licensee " --tokens 200 --temperature 0.8
//   sample --top-p 0.9 --stop "." --stop $'\n'     # nucleus sampling, ending at a full stop or newline
//   sample --hf gpt2-folder --prompt-ids 464,3290 --tokens 20   # a Hugging Face GPT-2 or LLaMA
//
// --hf reads a folder with config.json and model.safetensors (io/hf_model.hpp). tapegrad reads
// no Hugging Face tokenizer yet, so such a model takes its prompt as token ids and prints ids.
//
// The prompt runs once, then one token per step on a KV cache (TransformerLM::generate); the
// last line gives the generation speed. A model with learned positions (train_lm's default)
// generates up to its max_seq_len only: --tokens is cut there, with a note.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <tapegrad/tapegrad.hpp>

#include "train_lm/files.hpp"
#include "cli_checks.hpp"

using namespace tapegrad;

int main(int argc, char** argv) {
  std::string checkpoint = "train_lm.tgc", prompt = "The ", hf_dir;
  std::vector<std::int64_t> prompt_token_ids;
  std::int64_t tokens = 200, top_k = 40;
  double temperature = 0.8, top_p = 1.0;
  std::vector<std::string> stops;
  std::uint64_t seed = 0;
  CLI::App app{"Generate text from a train_lm checkpoint."};
  app.add_option("--checkpoint", checkpoint, "checkpoint written by train_lm")->check(CLI::ExistingFile);
  app.add_option("--prompt", prompt, "text to continue (must not be empty)");
  app.add_option("--hf", hf_dir, "a Hugging Face model folder (config.json + model.safetensors) instead of "
                 "--checkpoint; needs --prompt-ids")->check(CLI::ExistingDirectory);
  app.add_option("--prompt-ids", prompt_token_ids, "the prompt as token ids, e.g. 1,2,3 (with --hf)")
      ->delimiter(',')->check(cli::non_negative);
  app.add_option("--tokens", tokens, "tokens to generate")->check(cli::non_negative);
  app.add_option("--temperature", temperature, "0: greedy")->check(cli::non_negative);
  app.add_option("--top-k", top_k, "sample among the k most likely tokens (0: all)")->check(cli::non_negative);
  app.add_option("--top-p", top_p, "sample from the nucleus: the most likely tokens whose probability sums to "
                 ">= p (1: all)")->check(cli::range(0.0, 1.0));
  app.add_option("--stop", stops, "end when this text (one token) is generated; repeatable");
  app.add_option("--seed", seed, "sampling seed");
  CLI11_PARSE(app, argc, argv);
  try {
    if (hf_dir.empty() != prompt_token_ids.empty()) throw ValueError("--hf and --prompt-ids go together");
    const bool hf = !hf_dir.empty();
    // the file alone describes the model
    const auto model = hf ? io::load_hf_model(hf_dir) : io::load_model<nn::TransformerLM>(checkpoint);
    const auto tokenizer = hf ? nullptr : data::load_tokenizer(lm::tokenizer_path(checkpoint));
    std::vector<std::int64_t> prompt_ids = prompt_token_ids;
    if (!hf) {
      const std::vector<data::TokenId> ids = tokenizer->encode(prompt);
      if (ids.empty()) throw ValueError("the prompt encodes to no tokens");
      prompt_ids.assign(ids.begin(), ids.end());
    }
    for (const std::int64_t id : prompt_ids)
      if (id >= model->config.vocab_size)
        throw ValueError("--prompt-ids: " + std::to_string(id) + " is not below the vocabulary size " +
                         std::to_string(model->config.vocab_size));
    if (hf && !stops.empty()) throw ValueError("--stop needs a tokenizer; --hf models have none here");
    Generator gen(seed);
    nn::GenerateOptions g;
    g.temperature = temperature;
    g.top_k = top_k;
    g.top_p = top_p;
    g.gen = &gen;
    for (const std::string& text : stops) {
      const std::vector<data::TokenId> stop = tokenizer->encode(text);
      if (stop.size() != 1)
        throw ValueError("--stop \"" + text + "\" encodes to " + std::to_string(stop.size()) + " tokens, not one");
      g.stop_tokens.push_back(stop[0]);
    }
    const auto P = static_cast<std::int64_t>(prompt_ids.size());
    if (const auto limit = model->max_length(); limit && P + tokens > *limit) {
      const std::int64_t fit = std::max<std::int64_t>(*limit - P, 0);
      std::fprintf(stderr, "sample: note: the model's learned positions end at max_seq_len %lld: %lld of --tokens %lld\n",
                   static_cast<long long>(*limit), static_cast<long long>(fit), static_cast<long long>(tokens));
      tokens = fit;
    }
    const auto start = std::chrono::steady_clock::now();
    const Tensor out = model->generate(Tensor::from_vector(prompt_ids, {1, P}), tokens, g);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (hf) {
      const std::vector<std::int64_t> all = out.to_vector<std::int64_t>();
      for (std::size_t i = 0; i < all.size(); ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(all[i]));
      std::printf("\n");
    } else {
      std::printf("%s\n", tokenizer->decode_tensor(out).c_str());
    }
    const std::int64_t generated = out.size(1) - P;
    std::printf("generated %lld tokens in %.3f s (%.1f tokens/s)\n", static_cast<long long>(generated), seconds,
                seconds > 0 ? static_cast<double>(generated) / seconds : 0.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sample: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
