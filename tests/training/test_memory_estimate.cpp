// test_memory_estimate.cpp — the memory estimate (training/memory_estimate.hpp) against the
// bytes a training step really holds (Storage::peak_live_bytes), for both presets, with and
// without dropout and activation checkpointing, with DyT and Derf too; the parameter count
// against the built model, for each norm a plain LM can have.
#include <cstdio>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

struct Case {
  const char* name;
  std::string arch;
  std::int64_t layers, d_model, heads, kv_heads, seq_len, rows;
  double dropout;
  bool checkpoint;
  std::int64_t vocab = 96;
  bool keep_norm_outputs = false;  // set_recompute_enabled(false)
  const char* norm = nullptr;      // the preset's when null
};

nn::TransformerLMConfig config_of(const Case& c) {
  nn::TransformerLMConfig config = nn::preset_config(c.arch, {c.vocab, c.seq_len, c.layers, c.d_model, c.heads, c.kv_heads});
  config.block.dropout = c.dropout;
  if (c.norm) config.block.norm = nn::NormKind(c.norm);
  return config;
}

struct Measured {
  double activations = 0;  // the step's peak above what was live before its forward
  double total = 0;        // the step's peak, optimizer step included
};

// Two AdamW steps on random tokens; the second one measured (the first allocates the
// optimizer's moments, as a run's first step does, and warms the allocator's cache).
Measured measure(const Case& c) {
  manual_seed(7);
  auto model = std::make_shared<nn::TransformerLM>(config_of(c));
  model->set_activation_checkpointing(c.checkpoint);
  optim::AdamW opt(optim::weight_decay_groups(*model, optim::AdamOptions(1e-3)));
  Generator gen(3);
  const Tensor tokens = randint(0, c.vocab, {c.rows, c.seq_len + 1}, gen);
  const Tensor x = narrow(tokens, 1, 0, c.seq_len).contiguous(), y = narrow(tokens, 1, 1, c.seq_len).contiguous();
  Measured m;
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();
    const double before = double(Storage::live_bytes());
    Storage::reset_peak_live_bytes();
    const Tensor loss = cross_entropy(model->forward(x).reshape({-1, c.vocab}), y.reshape({-1}));
    loss.backward();
    m.activations = double(Storage::peak_live_bytes()) - before;
    opt.step();
    m.total = double(Storage::peak_live_bytes());
  }
  return m;
}

}  // namespace

TEST_CASE("memory estimate: the parameter count equals the model's", "[training][memory]") {
  for (const char* arch : {"gpt2", "llama"})
    for (std::int64_t kv : {0, 2})
      for (const char* norm : {"layernorm", "rmsnorm", "dyt", "derf"}) {
        const Case c{"", arch, 3, 64, 4, kv, 32, 2, 0.0, false, 96, false, norm};
        const nn::TransformerLM model(config_of(c));
        INFO(arch << " " << norm);
        CHECK(training::count_parameters(config_of(c)) == model.num_parameters());
      }
}

// The bound: the estimate counts the tensors that the ops keep for backward, by formula; what
// it leaves out is the step's transients inside one op and the exact moment of the peak during
// backward (a block's saved tensors are freed while its gradients are written), which at these
// small sizes are a few percent up to ~20% of the activations. ±25% tells a run that fits from
// one that needs twice the memory, which is what the refusal needs.
TEST_CASE("memory estimate: within 25% of the measured peak of a training step", "[training][memory]") {
  const std::vector<Case> cases = {
      {"gpt2", "gpt2", 2, 64, 4, 0, 32, 8, 0.0, false, 96},
      {"gpt2 dropout", "gpt2", 2, 64, 4, 0, 32, 8, 0.1, false, 96},
      {"gpt2 checkpointed", "gpt2", 4, 64, 4, 0, 32, 8, 0.0, true, 96},
      {"gpt2 deep checkpointed dropout", "gpt2", 8, 64, 4, 0, 64, 4, 0.1, true, 96},
      {"gpt2 wide", "gpt2", 2, 128, 4, 0, 64, 4, 0.0, false, 96},
      {"llama gqa", "llama", 2, 64, 4, 2, 32, 8, 0.0, false, 96},
      {"llama checkpointed", "llama", 4, 64, 4, 0, 32, 8, 0.0, true, 96},
      {"llama dropout", "llama", 3, 96, 6, 3, 32, 8, 0.1, false, 96},
      {"gpt2 large vocabulary", "gpt2", 2, 64, 4, 0, 32, 8, 0.0, false, 2048},
      {"llama large vocabulary checkpointed", "llama", 2, 64, 4, 0, 32, 8, 0.0, true, 2048},
      {"gpt2 norm outputs kept", "gpt2", 2, 64, 4, 0, 32, 8, 0.0, false, 96, true},
      {"llama norm outputs kept checkpointed", "llama", 4, 64, 4, 0, 32, 8, 0.0, true, 96, true},
      {"gpt2 dyt", "gpt2", 2, 64, 4, 0, 32, 8, 0.0, false, 96, false, "dyt"},
      {"gpt2 derf dropout", "gpt2", 2, 64, 4, 0, 32, 8, 0.1, false, 96, false, "derf"},
      {"llama derf checkpointed", "llama", 4, 64, 4, 0, 32, 8, 0.0, true, 96, false, "derf"},
  };
  const bool recompute = is_recompute_enabled();
  for (const Case& c : cases) {
    set_recompute_enabled(!c.keep_norm_outputs);
    training::MemoryPlan plan;
    plan.rows = c.rows;
    plan.checkpoint_activations = c.checkpoint;
    const training::MemoryEstimate e = training::estimate_memory(config_of(c), plan);
    const Measured m = measure(c);
    std::printf("memory estimate %-32s activations %8.0f kB est / %8.0f kB measured (%+5.1f%%); total %8.0f kB est / %8.0f kB measured (%+5.1f%%)\n",
                c.name, e.activations / 1e3, m.activations / 1e3, 100 * (e.activations / m.activations - 1),
                e.total() / 1e3, m.total / 1e3, 100 * (e.total() / m.total - 1));
    INFO(c.name << ": estimated activations " << e.activations << " B, measured " << m.activations << " B; total "
                << e.total() << " B, measured " << m.total << " B");
    CHECK(e.activations == Approx(m.activations).epsilon(0.25));
    CHECK(e.total() == Approx(m.total).epsilon(0.25));
  }
  set_recompute_enabled(recompute);
}

TEST_CASE("memory estimate: the formatted line names every part", "[training][memory]") {
  training::MemoryPlan plan;
  plan.rows = 16;
  const training::MemoryEstimate e = training::estimate_memory(config_of({"", "gpt2", 4, 128, 4, 0, 64, 16, 0.0, false, 96}), plan);
  const std::string line = training::format_memory_estimate(e, 23.4e9);
  CHECK_THAT(line, Catch::StartsWith("memory estimate: parameters "));
  for (const char* part : {"gradients ", "optimizer state ", "(AdamW: 2 moments)", "activations ", "with checkpointing", "total ", "of 23.4 GB available"})
    CHECK_THAT(line, Catch::Contains(part));
  // Saving: the parameters, gradients and moments, the activations the allocator caches, the file.
  CHECK(e.checkpoint_file == Approx(3 * e.parameters));
  CHECK(e.while_saving == Approx(e.parameters + e.gradients + e.optimizer_state + e.activations + e.checkpoint_file));
  CHECK(e.peak() == e.while_saving);
  CHECK_THAT(line, Catch::Contains(" while saving a checkpoint) of 23.4 GB available"));
  CHECK(training::format_bytes(812) == "812 B");
  CHECK(training::format_bytes(1.234e9) == "1.23 GB");
  CHECK(training::format_bytes(3.4e3) == "3.4 kB");
}

TEST_CASE("memory limit: sizes as written on a command line, and the memory available", "[training][memory]") {
  using training::parse_memory_size;
  CHECK(*parse_memory_size("20GB") == 20e9);
  CHECK(*parse_memory_size("512MB") == 512e6);
  CHECK(*parse_memory_size("512 mb") == 512e6);
  CHECK(*parse_memory_size("1.5GiB") == 1.5 * 1073741824.0);
  CHECK(*parse_memory_size("4096") == 4096);
  CHECK(!parse_memory_size("0"));
  CHECK(!parse_memory_size("none"));
  CHECK(!parse_memory_size("0GB"));
  for (const char* bad : {"", "GB", "twenty", "20XB", "-1GB", "inf", "0x10", "nan"})
    CHECK_THROWS_WITH(parse_memory_size(bad), Catch::Contains("must be a size such as 20GB") && Catch::Contains(std::string("got '") + bad + "'"));
  const double available = training::available_memory_bytes();
  CHECK(available > 1e6);  // any machine that runs the tests
}
