// Tests of io/hf_llama: the tiny Hugging Face LLaMA folder of make_hf_llama_tiny.py
// (tests/reference/hf_llama_tiny: grouped-query attention, rotate_half RoPE, untied head) runs
// in tapegrad with the logits of the hand-written transformers forward pass, exports back to
// the same bytes, and malformed variants are refused by name.
#include <tapegrad/io/hf_llama.hpp>

#include "io_helpers.hpp"
#include "support/reference.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;

namespace {

std::string tiny_dir() { return std::string(TAPEGRAD_REFERENCE_DIR) + "/hf_llama_tiny"; }

const testing::ReferenceFile& expected() {
  static const testing::ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/hf_llama_tiny_reference.txt",
                                           "tests/reference/make_hf_llama_tiny.py");
  return file;
}

// The tiny folder with one edit to config.json and the tensors filtered by `keep`.
std::string variant(const testing::ScratchDir& dir, const std::string& from, const std::string& to,
                    const std::string& drop = "") {
  std::string config = testing::read_bytes(tiny_dir() + "/config.json");
  if (!from.empty()) {
    const std::size_t at = config.find(from);
    REQUIRE(at != std::string::npos);
    config.replace(at, from.size(), to);
  }
  testing::write_bytes(dir.file("config.json"), config);
  io::StateDict kept;
  for (const auto& [n, t] : io::load_safetensors(tiny_dir() + "/model.safetensors").tensors)
    if (n != drop) kept.insert(n, t);
  io::save_safetensors(kept, dir.file("model.safetensors"));
  return dir.path();
}

}  // namespace

TEST_CASE("hf llama: the Hugging Face folder runs with transformers' logits", "[io][hf]") {
  const auto lm = io::load_hf_llama(tiny_dir());
  CHECK(lm->config.block.n_kv_heads == 2);
  CHECK(lm->config.block.d_ff == 96);
  CHECK_FALSE(lm->config.tie_weights);
  const Tensor tokens = expected().get("tokens", DType::int64).reshape({1, 16});
  const Tensor logits = lm->forward(tokens).reshape({16, 64});
  INFO("max |logits - reference| = " << testing::max_abs_diff(logits, expected().get("logits", DType::float32)));
  CHECK_CLOSE("logits", logits, expected().get("logits"), 1e-5, 0.0);
}

TEST_CASE("hf llama: import then export gives the same bytes", "[io][hf]") {
  const auto lm = io::load_hf_llama(tiny_dir());
  testing::ScratchDir out;
  io::save_hf_llama(*lm, out.path());
  CHECK(testing::read_bytes(out.file("config.json")) == testing::read_bytes(tiny_dir() + "/config.json"));
  CHECK(testing::read_bytes(out.file("model.safetensors")) == testing::read_bytes(tiny_dir() + "/model.safetensors"));
}

TEST_CASE("hf llama: a tied tapegrad llama exports and re-imports", "[io][hf]") {
  nn::TransformerLMConfig c = nn::llama_config({40, 8, 1, 16, 4, 1}, 8);
  c.tie_weights = true;
  c.block.rope_theta = 500000.0;
  nn::TransformerLM lm(c);
  lm.eval();
  testing::ScratchDir out;
  io::save_hf_llama(lm, out.path());
  const auto back = io::load_hf_llama(out.path());
  CHECK(back->config == c);
  const Tensor tokens = Tensor::from_vector(std::vector<std::int64_t>{3, 1, 39, 4}, {1, 4});
  CHECK(testing::max_abs_diff(back->forward(tokens), lm.forward(tokens)) == 0.0);
  nn::TransformerLM gpt2(nn::gpt2_config({40, 8, 1, 16, 4, 0}));
  CHECK_THROWS_WITH(io::save_hf_llama(gpt2, out.path()), Contains("not a LLaMA design"));
  // a float64 model would be rounded to F32 without a word: refused, naming the fix
  lm.to(DType::float64);
  testing::ScratchDir other;
  CHECK_THROWS_AS(io::save_hf_llama(lm, other.path()), DTypeError);
  CHECK_THROWS_WITH(io::save_hf_llama(lm, other.path()),
                    Contains("save_hf: \"tok_emb.weight\" is float64") && Contains("model.to(DType::float32)"));
}

TEST_CASE("hf llama: bad folders are refused by name", "[io][hf]") {
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"", "", "model.layers.1.self_attn.k_proj.weight",
       "missing tensor \"model.layers.1.self_attn.k_proj.weight\" of shape [16, 32]"},
      {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 4", "",
       "\"model.layers.0.self_attn.k_proj.weight\" has shape [16, 32], config.json makes it [32, 32]"},
      {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3", "", "the config does not make a model"},
      {"\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true", "", "\"lm_head.weight\" is not"},
      {"\"silu\"", "\"gelu\"", "", "hidden_act \"gelu\""},
      {"\"hidden_size\": 32", "\"hidden_size\": null", "", "\"hidden_size\" is missing"},
      {"\"rope_theta\": 10000.0", "\"rope_theta\": 10000.0, \"rope_scaling\": {\"type\": \"linear\"}", "",
       "rope_scaling is not supported"},
      {"\"rms_norm_eps\": 1e-06", "\"rms_norm_eps\": \"1e-06\"", "", "\"rms_norm_eps\" must be a positive number"},
  };
  for (const auto& [from, to, drop, message] : cases) {
    testing::ScratchDir dir;
    INFO(to << drop);
    CHECK_THROWS_WITH(io::load_hf_llama(variant(dir, from, to, drop)), Contains(message));
  }
}
