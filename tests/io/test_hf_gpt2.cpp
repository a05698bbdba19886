// Tests of io/hf_gpt2: the tiny Hugging Face GPT-2 folder of make_hf_gpt2_tiny.py
// (tests/reference/hf_gpt2_tiny) runs in tapegrad with the logits of the hand-written
// transformers forward pass, exports back to the same bytes, and every malformed variant
// (config field, tensor name, shape) is refused with a FormatError that names it.
#include <tapegrad/io/hf_gpt2.hpp>
#include <tapegrad/io/hf_model.hpp>

#include "io_helpers.hpp"
#include "support/reference.hpp"
#include "support/tensor_diff.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;

namespace {

std::string tiny_dir() { return std::string(TAPEGRAD_REFERENCE_DIR) + "/hf_gpt2_tiny"; }

const testing::ReferenceFile& expected() {
  static const testing::ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/hf_gpt2_tiny_reference.txt",
                                           "tests/reference/make_hf_gpt2_tiny.py");
  return file;
}

// A copy of the tiny folder with config.json and the tensors changed by the callers.
struct Variant {
  testing::ScratchDir dir;
  std::string config = testing::read_bytes(tiny_dir() + "/config.json");
  io::StateDict tensors = io::load_safetensors(tiny_dir() + "/model.safetensors").tensors;
  std::string write() {
    testing::write_bytes(dir.file("config.json"), config);
    io::save_safetensors(tensors, dir.file("model.safetensors"));
    return dir.path();
  }
  void replace_config(const std::string& from, const std::string& to) {
    const std::size_t at = config.find(from);
    REQUIRE(at != std::string::npos);
    config.replace(at, from.size(), to);
  }
  io::StateDict without(const std::string& name) const {
    io::StateDict out;
    for (const auto& [n, t] : tensors)
      if (n != name) out.insert(n, t);
    return out;
  }
};

}  // namespace

TEST_CASE("hf gpt2: the Hugging Face folder runs with transformers' logits", "[io][hf]") {
  const auto lm = io::load_hf_gpt2(tiny_dir());
  CHECK(lm->config.n_layers == 2);
  CHECK(lm->config.block.d_model == 32);
  CHECK(lm->config.block.activation == nn::Activation::gelu_tanh);
  const Tensor tokens = expected().get("tokens", DType::int64).reshape({1, 16});
  const Tensor logits = lm->forward(tokens).reshape({16, 64});
  const Tensor want = expected().get("logits", DType::float32);
  INFO("max |logits - reference| = " << testing::max_abs_diff(logits, want));
  CHECK_CLOSE("logits", logits, expected().get("logits"), 1e-5, 0.0);
}

TEST_CASE("hf gpt2: import then export gives the same bytes", "[io][hf]") {
  const auto lm = io::load_hf_gpt2(tiny_dir());
  testing::ScratchDir out;
  io::save_hf_gpt2(*lm, out.path());
  CHECK(testing::read_bytes(out.file("config.json")) == testing::read_bytes(tiny_dir() + "/config.json"));
  CHECK(testing::read_bytes(out.file("model.safetensors")) == testing::read_bytes(tiny_dir() + "/model.safetensors"));
}

TEST_CASE("hf gpt2: a tapegrad gpt2 model exports and re-imports", "[io][hf]") {
  nn::TransformerLMConfig c = nn::gpt2_config({50, 12, 1, 16, 2, 0});
  c.block.norm_eps = 1e-4;  // written as Python writes it: 0.0001
  c.block.d_ff = 24;        // n_inner
  nn::TransformerLM lm(c);
  lm.eval();
  testing::ScratchDir out;
  io::save_hf_gpt2(lm, out.path());
  CHECK_THAT(testing::read_bytes(out.file("config.json")), Contains("\"layer_norm_epsilon\": 0.0001,") &&
                                                               Contains("\"n_inner\": 24,"));
  const auto back = io::load_hf_gpt2(out.path());
  CHECK(back->config == c);
  const Tensor tokens = Tensor::from_vector(std::vector<std::int64_t>{1, 7, 49, 3, 0}, {1, 5});
  CHECK(testing::max_abs_diff(back->forward(tokens), lm.forward(tokens)) == 0.0);

  nn::TransformerLM llama(nn::llama_config({50, 12, 1, 16, 2, 0}));
  CHECK_THROWS_WITH(io::save_hf_gpt2(llama, out.path()), Contains("not a GPT-2 design"));
}

TEST_CASE("hf gpt2: the transformer. prefix, mask buffers and a tied lm_head are accepted", "[io][hf]") {
  Variant v;
  io::StateDict prefixed;
  for (const auto& [n, t] : v.tensors) prefixed.insert("transformer." + n, t);
  prefixed.insert("transformer.h.0.attn.bias", ones({1, 1, 16, 16}));
  prefixed.insert("lm_head.weight", v.tensors.at("wte.weight"));
  v.tensors = prefixed;
  const auto lm = io::load_hf_gpt2(v.write());
  const Tensor tokens = expected().get("tokens", DType::int64).reshape({1, 16});
  CHECK_CLOSE("logits", lm->forward(tokens).reshape({16, 64}), expected().get("logits"), 1e-5, 0.0);
}

TEST_CASE("hf gpt2: bad tensors are refused by name and shape", "[io][hf]") {
  {
    Variant v;
    v.tensors = v.without("h.1.mlp.c_fc.bias");
    CHECK_THROWS_WITH(io::load_hf_gpt2(v.write()), Contains("model.safetensors") &&
                                                        Contains("missing tensor \"h.1.mlp.c_fc.bias\" of shape [128]"));
  }
  {
    Variant v;
    v.tensors.insert("h.2.ln_1.weight", ones({32}));
    CHECK_THROWS_WITH(io::load_hf_gpt2(v.write()), Contains("unexpected tensor \"h.2.ln_1.weight\" of shape [32]"));
  }
  {
    Variant v;  // c_attn stored as a Linear (out, in) instead of Conv1D (in, out)
    io::StateDict t;
    for (const auto& [n, x] : v.tensors) t.insert(n, n == "h.0.attn.c_attn.weight" ? x.transpose(0, 1).contiguous() : x);
    v.tensors = t;
    CHECK_THROWS_WITH(io::load_hf_gpt2(v.write()),
                      Contains("\"h.0.attn.c_attn.weight\" has shape [96, 32], config.json makes it [32, 96]"));
  }
  {
    Variant v;
    io::StateDict t;
    for (const auto& [n, x] : v.tensors) t.insert(n, n == "wpe.weight" ? x.to(DType::float64) : x);
    v.tensors = t;
    CHECK_THROWS_WITH(io::load_hf_gpt2(v.write()), Contains("\"wpe.weight\" has dtype float64"));
  }
  {
    Variant v;
    io::StateDict t;
    for (const auto& [n, x] : v.tensors) t.insert(n, x);
    t.insert("lm_head.weight", zeros({64, 32}));
    v.tensors = t;
    CHECK_THROWS_WITH(io::load_hf_gpt2(v.write()), Contains("\"lm_head.weight\" is not \"wte.weight\""));
  }
}

TEST_CASE("hf gpt2: bad config.json fields are refused by name", "[io][hf]") {
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> cases = {
      {{"\"n_embd\": 32", "\"n_embd\": 32.5"}, "\"n_embd\" must be a positive integer, got \"32.5\""},
      {{"\"n_embd\": 32", "\"n_embd\": \"32\""}, "\"n_embd\" must be a positive integer, got a string"},
      {{"\"n_head\": 4", "\"n_heads\": 4"}, "\"n_head\" is missing"},
      {{"\"n_layer\": 2", "\"n_layer\": 0"}, "\"n_layer\" must be in [1, 2^31)"},
      {{"\"n_head\": 4", "\"n_head\": 5"}, "the config does not make a model"},
      {{"\"n_positions\": 16", "\"n_positions\": 99999999999999999999"}, "\"n_positions\" must be a positive integer"},
      {{"\"gelu_new\"", "\"relu\""}, "activation_function \"relu\" is not one tapegrad has"},
      {{"\"model_type\": \"gpt2\"", "\"model_type\": \"llama\""}, "model_type is \"llama\""},
      {{"\"tie_word_embeddings\": true", "\"tie_word_embeddings\": false"}, "tie_word_embeddings false"},
      {{"\"tie_word_embeddings\": true", "\"tie_word_embeddings\": 1"}, "\"tie_word_embeddings\" must be true or false"},
      {{"1e-05", "-1e-05"}, "\"layer_norm_epsilon\" must be a finite positive number"},
      {{"\"vocab_size\": 64", "\"vocab_size\": 64,"}, "config.json"},  // trailing comma: not JSON
  };
  for (const auto& [edit, message] : cases) {
    Variant v;
    v.replace_config(edit.first, edit.second);
    INFO(edit.second);
    CHECK_THROWS_AS(io::load_hf_gpt2(v.write()), io::FormatError);
    CHECK_THROWS_WITH(io::load_hf_gpt2(v.write()), Contains(message) && Contains("config.json"));
  }
  {  // a bigger config than the tensors: refused before any model is built
    Variant v;
    v.replace_config("\"n_embd\": 32", "\"n_embd\": 1073741824");
    v.replace_config("\"n_head\": 4", "\"n_head\": 1");
    CHECK_THROWS_WITH(io::load_hf_gpt2(v.write()), Contains("has shape [64, 32], config.json makes it [64, 1073741824]"));
  }
  CHECK_THROWS_AS(io::HfConfig::parse("[1]", "config.json"), io::FormatError);
}

TEST_CASE("hf config: Python's float repr", "[io][hf]") {
  CHECK(io::python_float_repr(1e-5) == "1e-05");
  CHECK(io::python_float_repr(1e-6) == "1e-06");
  CHECK(io::python_float_repr(0.0001) == "0.0001");
  CHECK(io::python_float_repr(10000.0) == "10000.0");
  CHECK(io::python_float_repr(500000.0) == "500000.0");
  CHECK(io::python_float_repr(1e16) == "1e+16");
  CHECK(io::python_float_repr(0.1) == "0.1");
  CHECK(io::python_float_repr(1.5) == "1.5");
  CHECK(io::python_float_repr(123.456) == "123.456");
  CHECK(io::python_float_repr(-2.5e-7) == "-2.5e-07");
}

TEST_CASE("hf gpt2: the example of docs/hugging_face.md", "[io][hf][docs]") {
  const std::string dir = tiny_dir(), llama_dir = std::string(TAPEGRAD_REFERENCE_DIR) + "/hf_llama_tiny";
  testing::ScratchDir out;
  // BEGIN docs/hugging_face.md
  auto lm = io::load_hf_gpt2(dir);                             // config.json + model.safetensors
  Tensor tokens = Tensor::from_vector(std::vector<std::int64_t>{1, 2, 3}, {1, 3});
  Tensor logits = lm->forward(tokens);                         // (1, 3, vocab_size)
  io::save_hf_gpt2(*lm, out.path());                           // the same two files back
  auto llama = io::load_hf_model(llama_dir);                   // chosen by config.json's model_type
  // END docs/hugging_face.md
  CHECK(logits.shape() == Shape{1, 3, 64});
  CHECK(llama->config.block.rope);
  CHECK_THROWS_WITH(io::load_hf_model(TAPEGRAD_REFERENCE_DIR), Contains("config.json"));
}
