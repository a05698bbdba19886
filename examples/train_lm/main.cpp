// train_lm — the main job: train a small transformer language model from the command line,
// on a text file or (by default) the licence texts every Debian system ships.
//
//   train_lm                                  # defaults: ~5 minutes on 2 cores
//   train_lm --placement post --norm rmsnorm --layers 6 --steps 2000 --data my.txt
//   train_lm --checkpoint run.tgc --resume    # continue exactly where run.tgc stopped
//   train_lm --resume --steps 3000            # ... and train longer (the decay is re-planned)
//   mpirun -n 4 train_lm --ddp --threads 1    # data-parallel: 4 processes share each batch
//
//   train_lm --ema 0.999 --skip-loss-z 4    # a moving average of the weights; skip loss spikes
//
// Shows a live progress line (step, loss, smoothed loss, tokens/s, lr, gradient norm, ETA),
// the validation loss at each eval interval next to the unigram baseline (and that of the
// weights' moving average with --ema), each update skipped as a spike, a generated sample at
// the end; writes metrics as CSV and checkpoints atomically (also on Ctrl-C).
// At every evaluation and checkpoint it writes a live report, train_lm.html (--report FILE; ""
// for none): a self-contained page of the settings and the run's curves (loss, lr, gradient
// norm, tokens/s, each block's gradient norm), drawn with the studies' report code
// (examples/common/); live_report.hpp says what it measures, history.hpp how it covers a resumed
// run.
// With --lens, each evaluation also prints the logit lens, the validation loss of the stream after
// every block, and writes it beside --log (lens.hpp).
// Before building the model it prints the memory estimate and refuses a run that needs more
// than the memory available (--max-memory 20GB sets the limit, --max-memory none skips the
// check); the progress line ends with the MFU, model FLOPs/s over the GEMM rate measured at
// start (--no-mfu: neither). resources.hpp has both.
// The pieces are the library's training kit (tapegrad/training/); options.hpp says what a
// checkpoint fixes on --resume, run.hpp what one step does.
#include <cstdio>
#include <thread>

#include "options.hpp"
#include "resources.hpp"
#include "run.hpp"

using namespace tapegrad;

int main(int argc, char** argv) {
  lm::Options options;
  if (const auto status = options.parse_command_line(argc, argv)) return *status;
  lm::Settings& s = options.s;
  lm::DataParallel job;
  try {
    job.start(s.ddp, s.comm_timeout);
    if (!job.lead() && !std::freopen("/dev/null", "w", stdout))  // one progress line: rank 0's
      throw std::runtime_error("cannot silence the standard output of rank " + std::to_string(job.rank));
    if (s.batch % job.world != 0)
      throw std::invalid_argument("--batch " + std::to_string(s.batch) + ": the global batch must be a multiple of the " +
                                  std::to_string(job.world) + " processes");
    if ((s.batch / job.world) % s.grad_accum != 0)
      throw std::invalid_argument("--grad-accum " + std::to_string(s.grad_accum) + ": the " +
                                  std::to_string(s.batch / job.world) + " rows of --batch " + std::to_string(s.batch) +
                                  (job.world > 1 ? " per process" : "") + " do not split into " +
                                  std::to_string(s.grad_accum) + " equal micro-batches");
    // Under mpirun the processes on one machine share its cores.
    if (s.threads == 0 && job.local_processes() > 1 && !std::getenv("TAPEGRAD_NUM_THREADS"))
      s.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / job.local_processes());
    if (s.threads > 0) set_num_threads(static_cast<int>(s.threads));
    training::install_stop_handler(job.on());  // mpirun sends every rank SIGTERM on Ctrl-C

    lm::Run run(options, job);  // new, or resumed from --checkpoint (after the memory check)
    const auto mfu = lm::measure_mfu(s, run.model(), job);  // the GEMM rate, measured once
    const training::CheckpointPolicy checkpoints{s.checkpoint_interval};
    training::Progress progress(static_cast<double>(s.steps), stdout);
    progress.done = static_cast<double>(run.step);
    progress.log_every = 50;          // in a log: one line every 50 steps
    progress.set_terminal(progress.terminal() && !job.on());  // mpirun's pseudo-terminal is a log
    const auto start = std::chrono::steady_clock::now();
    bool stop = false;  // Ctrl-C on any rank stops every rank after the same step
    lm::StepResult r;
    while (run.step < run.last_step && !stop) {
      r = run.train_step();
      progress.done = static_cast<double>(run.step);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double tokens_per_s = static_cast<double>(s.batch * run.model().config.max_seq_len * (run.step - run.first_step)) / seconds;
      char line[256];
      std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  smoothed %.4f  %.0f tok/s  lr %.2e  |g| %.3f",
                    static_cast<long long>(run.step), static_cast<long long>(s.steps), r.loss, r.smoothed, tokens_per_s,
                    r.lr, r.grad_norm);
      const std::string text = line + (mfu ? "  " + mfu->text(tokens_per_s) : "");
      if (!r.skipped.empty()) progress.note("step " + std::to_string(run.step) + ": update skipped: " + r.skipped);
      if (r.evaluated) {
        char val[96];
        if (run.has_ema()) std::snprintf(val, sizeof val, "  val %.4f (ema %.4f, unigram %.4f)", r.val_loss, r.val_loss_ema, run.baseline);
        else std::snprintf(val, sizeof val, "  val %.4f (unigram %.4f)", r.val_loss, run.baseline);
        progress.line(text + val);
        if (!r.lens.empty()) progress.note(r.lens);
      } else {
        progress.show(text);
      }
      if (checkpoints.due(run.step, run.last_step)) progress.note(run.save("interval"));
      stop = job.any(training::stop_requested());
    }
    if (job.on())
      std::printf("ddp: %.2f ms per step waiting for the gradients' allreduce after backward (mean over %lld steps)\n", job.mean_allreduce_ms(),
                  static_cast<long long>(run.step - run.first_step));
    if (const std::string zero1 = job.zero1_report(); !zero1.empty()) std::printf("%s\n", zero1.c_str());
    if (stop) {
      progress.note(run.save("interrupted"));
      return 130;
    }
    if (run.step > run.first_step || !s.resume) progress.note(run.save(run.step < s.steps ? "--stop-after" : "end"));
    const double val_loss = r.evaluated ? r.val_loss : job.lead() ? run.evaluate() : NAN;
    std::printf("final validation loss %.4f nats/token vs unigram baseline %.4f (%s)\n", val_loss, run.baseline,
                val_loss < run.baseline ? "below the baseline" : "NOT below the baseline");
    if (run.has_ema() && job.lead())
      std::printf("final validation loss of the moving average (--ema %g): %.4f nats/token (sample --ema generates with it)\n",
                  s.ema, r.evaluated ? r.val_loss_ema : run.evaluate_ema());
    if (s.skip_loss_z > 0 || s.skip_grad_z > 0)
      std::printf("%lld of %lld updates skipped as spikes\n", static_cast<long long>(run.skipped_updates),
                  static_cast<long long>(run.step - run.first_step));
    if (s.sample_tokens > 0 && job.lead()) std::printf("--- sample ---\n%s\n--------------\n", run.sample(s.sample_tokens).c_str());
  } catch (const std::exception& e) {
    return job.fail("train_lm", e.what());
  }
  return 0;
}
