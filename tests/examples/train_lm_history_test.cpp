// Tests of train_lm's History (examples/train_lm/history.hpp), what the live report draws: a
// resumed run starts from what the files hold of the steps before it, cut back to its step as
// the metrics log is, and its blocks file goes on as a straight run's would. A program of its
// own, as it builds train_lm's history.cpp (not named test_*.cpp, so tapegrad_tests leaves it out).
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include <cmath>

#include "io/io_helpers.hpp"
#include "train_lm/history.hpp"

using namespace tapegrad;
using tapegrad::testing::read_bytes;
using tapegrad::testing::ScratchDir;

namespace {
// Steps [from, to) of a run with two blocks: the metrics log, the blocks and speed files.
void run_steps(training::MetricsLog& log, lm::History& h, std::int64_t from, std::int64_t to) {
  for (std::int64_t step = from; step < to; ++step) {
    const double loss = 4.0 - 0.1 * double(step), val = step % 2 == 0 ? 3.0 : NAN;
    const double smoothed = log.add(step, loss, val, 1e-3, 0.5);
    h.add_metrics(step, loss, smoothed, val, 1e-3, 0.5);
    h.add_block_norms(step, {0.25 * double(step), 0.5});
    h.add_speed(step, 1000.0 + double(step));
  }
  log.flush();
  h.flush();
}
}  // namespace

TEST_CASE("train_lm history: a resumed run covers the steps before it, its files cut back to its step", "[train_lm]") {
  ScratchDir dir;
  const std::string log_path = dir.file("r.csv"), blocks = dir.file("r.blocks.csv"), speed = dir.file("r.speed.csv");
  io::Metadata checkpoint;  // what the checkpoint at step 4 carries of the metrics log
  {  // a straight run of 6 steps, then a run killed after 6 steps whose checkpoint is at step 4
    training::MetricsLog log(dir.file("straight.csv"), -1);
    lm::History h(dir.file("straight.csv"), dir.file("straight.blocks.csv"), dir.file("straight.speed.csv"), -1, 2);
    run_steps(log, h, 1, 7);
    training::MetricsLog killed(log_path, -1);
    lm::History k(log_path, blocks, speed, -1, 2);
    run_steps(killed, k, 1, 5);
    checkpoint = killed.state();
    run_steps(killed, k, 5, 7);
  }
  CHECK(read_bytes(blocks) == "step,block_0,block_1\n1,0.25,0.5\n2,0.5,0.5\n3,0.75,0.5\n4,1,0.5\n5,1.25,0.5\n6,1.5,0.5\n");

  training::MetricsLog log(log_path, 4);  // the metrics log is cut first, as in train_lm
  log.restore(checkpoint);
  lm::History h(log_path, blocks, speed, 4, 2);
  CHECK(h.loss.x == std::vector<double>{1, 2, 3, 4});
  CHECK(h.val_loss.x == std::vector<double>{2, 4});  // the empty cells are no points
  CHECK(h.smoothed.y.size() == 4);
  CHECK(h.block_norms.size() == 2);
  CHECK(h.block_norms[0].y == std::vector<double>{0.25, 0.5, 0.75, 1});
  CHECK(h.tokens_per_s.x == std::vector<double>{1, 2, 3, 4});
  run_steps(log, h, 5, 7);
  CHECK(h.loss.x.size() == 6);
  CHECK(read_bytes(blocks) == read_bytes(dir.file("straight.blocks.csv")));
  CHECK(read_bytes(log_path) == read_bytes(dir.file("straight.csv")));

  // A new run replaces the side files; another model's blocks file does not resume.
  lm::History fresh("", blocks, speed, -1, 2);
  fresh.flush();
  CHECK(fresh.loss.x.empty());
  CHECK(read_bytes(blocks) == "step,block_0,block_1\n");
  REQUIRE_THROWS_WITH(lm::History("", blocks, speed, 1, 3), Catch::Contains("not a per-block gradient norms file"));
}
