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
// Buckets: the gradients are copied into flat buffers of about bucket_mb megabytes each (in
// named_parameters() order, one dtype per bucket), summed with one MPI_Allreduce per bucket,
// scaled by 1/W and copied back: a few large messages instead of one small one per tensor.
// Not done: overlapping the allreduce of a finished bucket with the rest of backward, which
// needs a hook telling when a parameter's gradient is final; the engine has none today.
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
};

class DistributedDataParallel {
 public:
  // Plans the buckets over the module's parameters that require grad, then broadcasts the
  // parameters and buffers of rank 0 (broadcast_state()). Collective: every rank calls it.
  DistributedDataParallel(nn::Module& module, const ProcessGroup& group, const DDPOptions& options = {});

  // Copies every parameter and buffer from `root` to all ranks. Collective.
  void broadcast_state(int root = 0);

  // Replaces each gradient by its mean over the ranks. A parameter without a gradient on a
  // rank counts as zero there; it gets a gradient when any rank has one, and stays without
  // one when no rank has. Collective: every rank calls it after its backward().
  void average_gradients();

  std::int64_t num_buckets() const { return static_cast<std::int64_t>(buckets_.size()); }
  // Seconds spent inside MPI_Allreduce in the last average_gradients() (this includes waiting
  // for slower ranks), and in the whole call (with copying in and out).
  double last_allreduce_seconds() const { return last_allreduce_s_; }
  double last_average_seconds() const { return last_average_s_; }

 private:
  struct Bucket {
    DType dtype = DType::float32;
    std::vector<Tensor> params;
    std::vector<std::int64_t> offsets;  // of each parameter in flat
    // [gradients of params..., one presence count per parameter]: the counts, summed with
    // the gradients, say how many ranks had a gradient (no extra message for them).
    Tensor flat;
  };

  nn::Module* module_;
  const ProcessGroup* group_;
  std::vector<Bucket> buckets_;
  double last_allreduce_s_ = 0, last_average_s_ = 0;
};

// A 64-bit hash of the bytes of every parameter and buffer, in named order.
std::uint64_t state_checksum(const nn::Module& module);
// True on every rank when all ranks hold bit-identical parameters and buffers (compares
// state_checksum by min and max over the ranks). Collective.
bool in_sync(const nn::Module& module, const ProcessGroup& group);

}  // namespace tapegrad::distributed
