// ddp.hpp — data-parallel training: every rank holds a whole copy of the model and computes
// the gradient on its own shard of the global batch; before each optimizer step the gradients
// are averaged over the W ranks,
//
//   g = (1/W) · Σ_r g_r,   g_r = ∇ mean loss over rank r's b rows,
//
// which is the gradient of the mean loss over all W·b rows when every shard has b rows. Every
// rank then takes the same step from the same values: the ranks start equal (the constructor
// copies rank 0's parameters and buffers to all) and stay equal, bit for bit.
//
//   distributed::ProcessGroup group;
//   distributed::DistributedDataParallel ddp(model, group);  // rank 0's weights everywhere
//   for (std::int64_t step = 0; step < steps; ++step) {
//     optimizer.zero_grad();
//     loss_on_my_shard.backward();
//     ddp.average_gradients();                                // one allreduce per bucket
//     optimizer.step();
//   }
//
// Buckets: the gradients are copied into flat buffers of about bucket_mb megabytes each, summed
// with one allreduce per bucket, scaled by 1/W and copied back: a few large messages instead
// of one small one per tensor. Buckets hold the parameters in reverse registration order
// (named_parameters() backwards, one dtype per bucket), as PyTorch's DDP does: backward
// produces the last layers' gradients first, so the first bucket is the first to be complete.
//
// Overlap (DDPOptions::overlap, on by default): a post-accumulate-grad hook on every parameter
// (autograd/hooks.hpp) reports when its gradient is final. When every gradient of a bucket is
// final, its non-blocking allreduce (MPI_Iallreduce) starts at once, while backward goes on
// computing the earlier layers' gradients; average_gradients() then waits only for what is
// still in flight. Buckets start strictly in order (bucket i after bucket i-1), so every rank
// issues the same collectives in the same order, and a bucket whose gradients are not all
// produced (an unused parameter) starts in average_gradients(). Without overlap the same
// buckets are reduced by the same collective in the same order after backward: the results
// are bitwise identical either way (tests/distributed/ddp_test.cpp checks it).
//
// Gradient accumulation: backward passes inside no_sync() only accumulate locally; the
// gradients are reduced by the first backward outside it (and average_gradients()):
//
//   for (k = 0; k < N; ++k) {
//     auto guard = k + 1 < N ? ddp.no_sync() : DistributedDataParallel::NoSync();
//     (micro_loss(k) / N).backward();
//   }
//   ddp.average_gradients();
#pragma once

#include <cstdint>
#include <vector>

#include "../nn/module.hpp"
#include "../autograd/options.hpp"
#include "process_group.hpp"

namespace tapegrad::distributed {

struct DDPOptions {
  // Target size of one allreduce buffer; a tensor larger than that gets a bucket of its own.
  TAPEGRAD_ARG(double, bucket_mb) = 25.0;
  // The first bucket (the last layers' gradients, final first) is smaller, as in PyTorch's
  // DDP: its allreduce can start early in backward instead of after a quarter of it.
  TAPEGRAD_ARG(double, first_bucket_mb) = 1.0;
  // Start each bucket's allreduce during backward, as soon as its gradients are final.
  TAPEGRAD_ARG(bool, overlap) = true;
};

class DistributedDataParallel {
 public:
  // Plans the buckets over the module's parameters that require grad, then broadcasts the
  // parameters and buffers of rank 0 (broadcast_state()). Collective: every rank calls it.
  DistributedDataParallel(nn::Module& module, const ProcessGroup& group, const DDPOptions& options = {});
  // Removes the hooks. The hooks point at this object: it cannot be copied or moved.
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  // While a NoSync returned by no_sync() lives, backward passes do not communicate: the
  // gradients of several micro-batches accumulate locally, and the first backward after it
  // (with average_gradients()) reduces their sum. A default-constructed NoSync does nothing.
  class NoSync {
   public:
    NoSync() = default;
    NoSync(NoSync&& other) noexcept : ddp_(other.ddp_) { other.ddp_ = nullptr; }
    NoSync& operator=(NoSync&& other) noexcept;
    ~NoSync();

   private:
    friend class DistributedDataParallel;
    explicit NoSync(DistributedDataParallel* ddp);
    DistributedDataParallel* ddp_ = nullptr;
  };
  [[nodiscard]] NoSync no_sync();
  bool syncing() const { return no_sync_depth_ == 0; }

  // Overlap on or off from the next backward (the results do not change, only the timing).
  void set_overlap(bool overlap);
  bool overlap() const { return overlap_; }

  // Copies every parameter and buffer from `root` to all ranks. Collective.
  void broadcast_state(int root = 0);

  // Replaces each gradient by its mean over the ranks: starts the buckets backward did not
  // start, waits for all of them, copies the means back. A parameter without a gradient on a
  // rank counts as zero there; it gets a gradient when any rank has one, and stays without
  // one when no rank has. Collective: every rank calls it after its backward().
  void average_gradients();

  std::int64_t num_buckets() const { return static_cast<std::int64_t>(buckets_.size()); }
  // How many buckets the last backward started before average_gradients() was called.
  std::int64_t last_buckets_started_in_backward() const { return last_started_in_backward_; }
  // Seconds the last average_gradients() waited for allreduces (the communication backward
  // did not hide; it includes waiting for slower ranks), and the whole call (with copies).
  double last_allreduce_seconds() const { return last_allreduce_s_; }
  double last_average_seconds() const { return last_average_s_; }
  // Seconds the hooks took inside the last backward (copying buckets in, starting and
  // progressing their allreduces): the communication work backward itself paid for.
  double last_hook_seconds() const { return last_hook_s_; }

 private:
  struct Bucket {
    DType dtype = DType::float32;
    std::vector<Tensor> params;
    std::vector<std::int64_t> offsets;  // of each parameter in flat
    // [gradients of params..., one presence count per parameter]: the counts, summed with
    // the gradients, say how many ranks had a gradient (no extra message for them).
    Tensor flat;
    std::int64_t final_grads = 0;  // parameters whose gradient the hooks reported final
    PendingCollective reduction;   // its allreduce, once started
    bool started = false;
  };
  struct Slot {  // where the hook of one parameter reports
    std::size_t bucket = 0, index = 0;
    bool final = false;
  };

  void on_gradient_final(std::size_t slot);
  void start(Bucket& bucket);  // copies the gradients in, starts the allreduce
  void start_ready_buckets();  // the next buckets in order whose gradients are all final
  void progress();             // lets MPI move the started allreduces on

  nn::Module* module_;
  const ProcessGroup* group_;
  std::vector<Bucket> buckets_;
  std::vector<Slot> slots_;
  std::vector<HookHandle> hooks_;
  std::size_t next_bucket_ = 0;  // the first bucket not started yet
  int no_sync_depth_ = 0;
  bool overlap_ = true;
  std::int64_t last_started_in_backward_ = 0;
  double last_allreduce_s_ = 0, last_average_s_ = 0;
  double hook_s_ = 0, last_hook_s_ = 0;  // this backward's, and the last finished step's
};

// A 64-bit hash of the bytes of every parameter and buffer, in named order.
std::uint64_t state_checksum(const nn::Module& module);
// True on every rank when all ranks hold bit-identical parameters and buffers (compares
// state_checksum by min and max over the ranks). Collective.
bool in_sync(const nn::Module& module, const ProcessGroup& group);

}  // namespace tapegrad::distributed
