// sample.cpp — generate text from a checkpoint written by train_lm (the model is rebuilt from
// the configuration the file stores; the tokenizer is the one saved beside it).
//
//   sample --checkpoint train_lm.tgc --prompt "The licensee " --tokens 200 --temperature 0.8
//   sample --top-p 0.9 --stop "." --stop $'\n'     # nucleus sampling, ending at a full stop or newline
//   sample --ema                                    # with the weights' moving average (train_lm --ema)
//   sample --hf gpt2-folder --prompt "Hello" --tokens 20        # a Hugging Face GPT-2 ...
//   sample --hf llama-folder --prompt-ids 1,3290 --tokens 20    # ... or LLaMA
//
// --hf reads a folder with config.json and model.safetensors (io/hf_model.hpp), and GPT-2's
// tokenizer from its vocab.json and merges.txt (data/gpt2_tokenizer.hpp). A folder without
// them (LLaMA's is a SentencePiece model, not read here) takes token ids and prints ids.
//
// The prompt runs once, then one token per step on a KV cache (TransformerLM::generate); the
// last line gives the generation speed. A model with learned positions (train_lm's default)
// generates up to its max_seq_len only: --tokens is cut there, with a note.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
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
  const CLI::Option* given_prompt = app.add_option("--prompt", prompt, "text to continue (must not be empty)");
  app.add_option("--hf", hf_dir, "a Hugging Face model folder (config.json + model.safetensors) instead of "
                 "--checkpoint; its GPT-2 tokenizer (vocab.json, merges.txt) when it has one, else --prompt-ids")->check(CLI::ExistingDirectory);
  app.add_option("--prompt-ids", prompt_token_ids, "the prompt as token ids, e.g. 1,2,3, instead of --prompt")
      ->delimiter(',')->check(cli::non_negative);
  app.add_option("--tokens", tokens, "tokens to generate")->check(cli::non_negative);
  app.add_option("--temperature", temperature, "0: greedy")->check(cli::non_negative);
  app.add_option("--top-k", top_k, "sample among the k most likely tokens (0: all)")->check(cli::non_negative);
  app.add_option("--top-p", top_p, "sample from the nucleus: the most likely tokens whose probability sums to "
                 ">= p (1: all)")->check(cli::range(0.0, 1.0));
  app.add_option("--stop", stops, "end when this text (one token) is generated; repeatable");
  app.add_option("--seed", seed, "sampling seed");
  bool ema = false;
  app.add_flag("--ema", ema, "generate with the moving average of the weights that train_lm --ema saved");
  CLI11_PARSE(app, argc, argv);
  try {
    const bool hf = !hf_dir.empty();
    if (!prompt_token_ids.empty() && given_prompt->count() > 0)
      throw ValueError("--prompt and --prompt-ids: give the prompt one way");
    if (ema && hf) throw ValueError("--ema reads a train_lm checkpoint's averages; a --hf folder has none");
    // the file alone describes the model
    const auto model = hf ? io::load_hf_model(hf_dir) : io::load_model<nn::TransformerLM>(checkpoint);
    if (ema) training::load_ema_weights(*model, io::load_checkpoint(checkpoint), checkpoint);
    // The tokenizer: the one train_lm saved beside the checkpoint; a Hugging Face folder's
    // GPT-2 vocab.json + merges.txt when it has them (a LLaMA folder's SentencePiece model is
    // not read: such a model takes --prompt-ids and prints ids).
    std::unique_ptr<data::Tokenizer> tokenizer;
    if (!hf) tokenizer = data::load_tokenizer(lm::tokenizer_path(checkpoint));
    else if (const auto dir = std::filesystem::path(hf_dir); std::filesystem::exists(dir / "vocab.json") &&
                                                               std::filesystem::exists(dir / "merges.txt"))
      tokenizer = std::make_unique<data::Gpt2Tokenizer>(
          data::Gpt2Tokenizer::from_files((dir / "vocab.json").string(), (dir / "merges.txt").string()));
    std::vector<std::int64_t> prompt_ids = prompt_token_ids;
    if (prompt_ids.empty()) {
      if (!tokenizer)
        throw ValueError(hf_dir + " has no GPT-2 tokenizer (vocab.json and merges.txt): give the prompt as --prompt-ids");
      const std::vector<data::TokenId> ids = tokenizer->encode(prompt);
      if (ids.empty()) throw ValueError("the prompt encodes to no tokens");
      prompt_ids.assign(ids.begin(), ids.end());
    }
    for (const std::int64_t id : prompt_ids)
      if (id >= model->config.vocab_size)
        throw ValueError(std::string(prompt_token_ids.empty() ? "the prompt's token " : "--prompt-ids: ") +
                         std::to_string(id) + " is not below the model's vocabulary size " +
                         std::to_string(model->config.vocab_size));
    if (!tokenizer && !stops.empty()) throw ValueError("--stop needs a tokenizer; " + hf_dir + " has none");
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
    if (!tokenizer) {
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
