// test_training_checkpoint.cpp — N steps in one go equal k steps + save + load into fresh
// objects + N - k steps, bit for bit: model, AdamW moments, schedule, RNG and loader position.
// (Resuming in a separate process is tested end to end with examples/train_lm.)
#include <catch2/catch.hpp>
#include <tapegrad/training/training_checkpoint.hpp>
#include <tapegrad/tapegrad.hpp>

#include "io/io_helpers.hpp"

using namespace tapegrad;
using Catch::Contains;

namespace {

// One training run: a tiny LM, AdamW with two groups, warmup + cosine, dropout (consumes the
// default generator), batches drawn from a DataLoader over random windows.
struct Run {
  std::shared_ptr<nn::TransformerLM> model;
  std::unique_ptr<optim::AdamW> optimizer;
  std::unique_ptr<optim::WarmupCosine> schedule;
  std::unique_ptr<data::DataLoader> loader;
  std::int64_t step = 0;

  Run() {
    manual_seed(123);
    nn::TransformerLMConfig c;
    c.vocab_size = 11;
    c.max_seq_len = 6;
    c.n_layers = 2;
    c.block.d_model = 8;
    c.block.n_heads = 2;
    c.block.dropout = 0.1;
    model = std::make_shared<nn::TransformerLM>(c);
    optimizer = std::make_unique<optim::AdamW>(
        optim::weight_decay_groups(*model, optim::AdamOptions(3e-2).weight_decay(0.1)));
    schedule = std::make_unique<optim::WarmupCosine>(*optimizer, 3, 12, 0.1);
    Generator data_gen(7);
    Tensor tokens = randint(0, 11, {40, 7}, data_gen);
    auto dataset = std::make_shared<data::TensorDataset>(narrow(tokens, 1, 0, 6).contiguous(),
                                                         narrow(tokens, 1, 1, 6).contiguous());
    loader = std::make_unique<data::DataLoader>(dataset, data::DataLoaderOptions().batch_size(4).shuffle(true).seed(5));
  }

  void train(std::int64_t steps) {
    for (std::int64_t i = 0; i < steps; ++i, ++step) {
      schedule->apply(step);
      const data::Batch batch = loader->next();
      Tensor logits = model->forward(batch.inputs);
      Tensor loss = cross_entropy(logits.reshape({-1, 11}), batch.targets.reshape({-1}));
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
    }
  }

  training::TrainingState state() {
    training::TrainingState s;
    s.model = model.get();
    s.optimizer = optimizer.get();
    s.schedule = schedule.get();
    s.step = step;
    s.generators = {{"default", &default_generator()}};
    s.loader = loader->state();
    s.extra = {{"note", std::string("test run")}};
    return s;
  }

  void restore(const std::string& path) {
    training::TrainingState s = state();
    training::load_training_checkpoint(s, path);
    step = s.step;
    loader->load_state(*s.loader);
    REQUIRE(s.extra.size() == 1);
    CHECK(std::get<std::string>(s.extra[0].second) == "test run");
  }

  std::vector<std::vector<float>> parameters() const {
    std::vector<std::vector<float>> out;
    for (const auto& [_, p] : model->named_parameters()) out.push_back(p.to_vector<float>());
    return out;
  }
};

}  // namespace

TEST_CASE("resuming from a training checkpoint is bit-identical", "[io][checkpoint][resume]") {
  tapegrad::testing::ScratchDir dir;
  const std::string path = dir.file("run.tgc");
  const std::int64_t N = 12, k = 5;

  Run straight;
  straight.train(N);

  {
    Run first;
    first.train(k);
    training::save_training_checkpoint(first.state(), path);
    first.train(3);  // keeps going: what it does after saving must not matter
  }
  Run resumed;  // fresh objects with different random weights until the load
  resumed.restore(path);
  CHECK(resumed.step == k);
  resumed.train(N - k);

  CHECK(resumed.parameters() == straight.parameters());
  CHECK(resumed.loader->state() == straight.loader->state());
  CHECK(resumed.optimizer->lr(0) == straight.optimizer->lr(0));
}

TEST_CASE("a JSON training checkpoint resumes the same way", "[io][checkpoint][resume]") {
  tapegrad::testing::ScratchDir dir;
  const std::string path = dir.file("run.json");
  Run straight;
  straight.train(10);
  const auto expected = straight.parameters();
  {
    Run first;
    first.train(4);
    training::save_training_checkpoint(first.state(), path, io::Format::json);
  }
  Run resumed;
  resumed.restore(path);
  resumed.train(6);
  CHECK(resumed.parameters() == expected);
}

TEST_CASE("a training checkpoint refuses what does not fit", "[io][checkpoint][errors]") {
  tapegrad::testing::ScratchDir dir;
  Run run;
  run.train(2);
  // A state-dict file is not a training checkpoint.
  io::save_module(*run.model, dir.file("weights.tgc"));
  training::TrainingState s = run.state();
  REQUIRE_THROWS_WITH(training::load_training_checkpoint(s, dir.file("weights.tgc")), Contains("not a training checkpoint"));
  // An optimizer of another kind.
  training::save_training_checkpoint(run.state(), dir.file("run.tgc"));
  optim::SGD sgd(run.model->named_parameters(), optim::SGDOptions(0.1));
  s.optimizer = &sgd;
  REQUIRE_THROWS_AS(training::load_training_checkpoint(s, dir.file("run.tgc")), Error);
  // A checkpoint without a schedule, loaded with one.
  training::TrainingState no_schedule = run.state();
  no_schedule.schedule = nullptr;
  training::save_training_checkpoint(no_schedule, dir.file("noschedule.tgc"));
  training::TrainingState wants_schedule = run.state();
  REQUIRE_THROWS_WITH(training::load_training_checkpoint(wants_schedule, dir.file("noschedule.tgc")), Contains("schedule.kind"));
}
