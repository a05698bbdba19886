// test_end_to_end.cpp — a tiny TransformerLM learns a synthetic task (copy, in the
// decoder-only form "source SEP target EOS" with the loss on the answer only), reaching a loss
// far below chance; then it is saved, loaded into fresh objects, and resumed exactly.
#include <cmath>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "io/io_helpers.hpp"

using namespace tapegrad;

namespace {

struct CopyRun {
  data::CopyTask task{6, 3, 5};  // 6 symbols, sequences of 3..5
  std::shared_ptr<nn::TransformerLM> model;
  std::unique_ptr<optim::AdamW> optimizer;
  Generator batches{11};
  std::int64_t step = 0;

  CopyRun() {
    manual_seed(3);
    nn::TransformerLMConfig c;
    c.vocab_size = task.vocab().size();
    c.max_seq_len = 16;
    c.n_layers = 2;
    c.block.d_model = 32;
    c.block.n_heads = 4;
    model = std::make_shared<nn::TransformerLM>(c);
    optimizer = std::make_unique<optim::AdamW>(model->named_parameters(), optim::AdamOptions(5e-3));
  }

  // One AdamW step on 16 fresh examples; returns the loss (mean over answer tokens).
  double train_step() {
    const data::LMBatch b = data::collate_lm(task.sample(16, batches));
    const Tensor logits = model->forward(b.inputs);
    const Tensor loss = cross_entropy(logits.reshape({-1, model->config.vocab_size}), b.targets.reshape({-1}),
                                      Reduction::mean, data::kIgnoreIndex);
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    ++step;
    return loss.item();
  }

  training::TrainingState state() {
    training::TrainingState s;
    s.model = model.get();
    s.optimizer = optimizer.get();
    s.step = step;
    s.generators = {{"batches", &batches}, {"default", &default_generator()}};
    return s;
  }
};

}  // namespace

TEST_CASE("a tiny TransformerLM learns the copy task, saves, loads and resumes", "[data][end_to_end]") {
  tapegrad::testing::ScratchDir dir;
  CopyRun run;
  const double chance = std::log(double(run.model->config.vocab_size));
  double loss = 0;
  for (int i = 0; i < 150; ++i) loss = run.train_step();
  INFO("loss after 150 steps " << loss << ", chance " << chance);
  CHECK(loss < 0.25 * chance);

  training::save_training_checkpoint(run.state(), dir.file("copy.tgc"));
  std::vector<double> expected;
  for (int i = 0; i < 5; ++i) expected.push_back(run.train_step());

  CopyRun resumed;  // fresh weights, optimizer and generators until the load
  training::TrainingState s = resumed.state();
  training::load_training_checkpoint(s, dir.file("copy.tgc"));
  resumed.step = s.step;
  CHECK(resumed.step == 150);
  for (int i = 0; i < 5; ++i) CHECK(resumed.train_step() == expected[i]);  // bit for bit
}
