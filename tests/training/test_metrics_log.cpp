// test_metrics_log.cpp — the metrics CSV (training/metrics_log.hpp): its columns and number
// format, the smoothed loss and its state, and the cut back on resume that makes a stopped +
// resumed run's file equal a straight run's.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "io/io_helpers.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::read_bytes;
using tapegrad::testing::ScratchDir;

namespace {
// The rows a run logs at steps [from, to): losses and lrs from the step, a validation every 3.
void log_steps(training::MetricsLog& log, std::int64_t from, std::int64_t to) {
  for (std::int64_t step = from; step < to; ++step)
    log.add(step, 4.0 - 0.1 * double(step), step % 3 == 0 ? 3.5 - 0.05 * double(step) : NAN, 1e-3 / double(step), 0.5);
}
}  // namespace

TEST_CASE("metrics log: columns, the smoothed loss, no machine-dependent values", "[training][metrics_log]") {
  ScratchDir dir;
  training::MetricsLog log(dir.file("m.csv"), -1);
  CHECK(log.add(1, 4.0, NAN, 3e-4, 1.25) == 4.0);        // s_1 = loss_1
  CHECK(log.add(2, 2.0, 3.25, 2e-4, 0.5) == Approx(0.95 * 4.0 + 0.05 * 2.0));
  log.flush();
  CHECK(read_bytes(dir.file("m.csv")) ==
        "step,loss,smoothed_loss,val_loss,lr,grad_norm\n"
        "1,4,4,,0.0003,1.25\n"
        "2,2,3.9,3.25,0.0002,0.5\n");
  // the state a checkpoint carries, and back
  const io::Metadata state = log.state();
  REQUIRE(state.size() == 1);
  training::MetricsLog other("", -1);
  CHECK(other.state().empty());  // nothing logged yet: nothing to carry
  other.restore(state);
  CHECK(other.smoothed() == log.smoothed());
  REQUIRE_THROWS_WITH(other.restore({{"log.smoothed_loss", std::string("x")}}), Contains("is not a number"));
}

TEST_CASE("metrics log: stop + resume writes the same file as a straight run", "[training][metrics_log]") {
  ScratchDir dir;
  {
    training::MetricsLog straight(dir.file("straight.csv"), -1);
    log_steps(straight, 1, 21);
  }
  io::Metadata saved;
  {
    training::MetricsLog first(dir.file("resumed.csv"), -1);
    log_steps(first, 1, 11);
    saved = first.state();  // the checkpoint at step 10...
    log_steps(first, 11, 14);  // ...and three more steps logged before a kill
  }
  training::MetricsLog resumed(dir.file("resumed.csv"), 10);  // cut back to step 10
  resumed.restore(saved);
  log_steps(resumed, 11, 21);
  resumed.flush();
  CHECK(read_bytes(dir.file("resumed.csv")) == read_bytes(dir.file("straight.csv")));
  // a resumed run whose file is gone starts it again; one of another format is refused
  training::MetricsLog fresh(dir.file("gone.csv"), 10);
  fresh.flush();
  CHECK(read_bytes(dir.file("gone.csv")) == "step,loss,smoothed_loss,val_loss,lr,grad_norm\n");
  tapegrad::testing::write_bytes(dir.file("old.csv"), "step,loss,smoothed_loss,val_loss,lr,grad_norm,tokens_per_s\n1,2,3,,4,5,6\n");
  REQUIRE_THROWS_WITH(training::MetricsLog(dir.file("old.csv"), 1), Contains("not a metrics log of this run"));
}

TEST_CASE("metrics log: a run's extra columns, kept on resume", "[training][metrics_log]") {
  ScratchDir dir;
  {
    training::MetricsLog log(dir.file("extra.csv"), -1, {"val_loss_ema", "skipped"});
    log.add(1, 2.0, NAN, 0.1, 1.5, {"", ""});
    log.add(2, 3.0, 1.25, 0.1, 9.0, {training::MetricsLog::cell(1.125), "grad_norm"});
    CHECK(log.header_line() == "step,loss,smoothed_loss,val_loss,lr,grad_norm,val_loss_ema,skipped");
    CHECK_THROWS_WITH(log.add(3, 1, NAN, 0.1, 1, {""}), Contains("1 extra cells for the 2 extra columns"));
  }
  CHECK(read_bytes(dir.file("extra.csv")) ==
        "step,loss,smoothed_loss,val_loss,lr,grad_norm,val_loss_ema,skipped\n1,2,2,,0.1,1.5,,\n2,3,2.05,1.25,0.1,9,1.125,grad_norm\n");
  // resumed with the same columns: cut back and continued; with others: refused
  { training::MetricsLog resumed(dir.file("extra.csv"), 1, {"val_loss_ema", "skipped"}); }
  CHECK(read_bytes(dir.file("extra.csv")) == "step,loss,smoothed_loss,val_loss,lr,grad_norm,val_loss_ema,skipped\n1,2,2,,0.1,1.5,,\n");
  CHECK_THROWS_WITH(training::MetricsLog(dir.file("extra.csv"), 1), Contains("expected 'step,loss,smoothed_loss,val_loss,lr,grad_norm'"));
}
