// resources.cpp — the memory check and the MFU of a train_lm run.
#include "resources.hpp"

#include <cstdio>

namespace lm {

using namespace tapegrad;

void check_memory(const Settings& s, const nn::TransformerLMConfig& config, const DataParallel& job) {
  training::MemoryPlan plan;
  plan.rows = s.batch / job.world / s.grad_accum;  // one micro-batch of this process
  plan.seq_len = config.max_seq_len;
  plan.checkpoint_activations = s.checkpoint_activations;
  plan.optimizer_shards = s.zero1 ? job.world : 1;  // ZeRO-1: the moments of 1/N of the parameters
  plan.allocator_cache = static_cast<double>(cache_limit());
  // --ema keeps one more copy of the weights, saved in the checkpoint too: counted with the
  // optimizer's state (ZeRO-1 does not shard it: there the estimate is a little low).
  if (s.ema > 0) plan.optimizer_moments = 3, plan.optimizer_name = "AdamW + EMA";
  const training::MemoryEstimate e = training::estimate_memory(config, plan);
  const std::optional<double> given = s.max_memory.empty() ? std::nullopt : training::parse_memory_size(s.max_memory);
  const double available = training::available_memory_bytes();
  const int here = job.local_processes();  // the processes of this machine share its memory
  std::printf("%s%s\n", training::format_memory_estimate(e, available).c_str(),
              here > 1 ? (" (per process; " + std::to_string(here) + " on this machine)").c_str() : "");
  std::fflush(stdout);  // before a refusal on stderr
  if (!s.max_memory.empty() && !given) return;  // --max-memory none
  const double limit = given ? *given : available;
  if (limit <= 0 || e.peak() * here <= limit) return;
  throw std::runtime_error(
      "the run needs about " + training::format_bytes(e.peak() * here) + (here > 1 ? " on this machine" : "") +
      " (memory estimate above), more than the " + training::format_bytes(limit) +
      (given ? " of --max-memory" : " available") +
      ": make the model or --batch smaller, add --grad-accum N or --checkpoint-activations, or give --max-memory SIZE "
      "(e.g. 20GB; none: no check) to run anyway");
}

std::optional<training::Mfu> measure_mfu(const Settings& s, const nn::TransformerLM& model, const DataParallel& job) {
  if (s.no_mfu) return std::nullopt;
  const double flops = nn::flops_per_token(model, model.config.max_seq_len).step();  // no recomputation: PaLM's MFU
  const training::Mfu mfu = training::Mfu::measure(flops, model.config.block.dtype, job.world);
  std::printf("%s\n", mfu.peak_line().c_str());
  return mfu;
}

}  // namespace lm
