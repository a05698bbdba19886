// ddp.cpp — bucket planning, gradient averaging, broadcast of the state, the sync check.
#include "ddp.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"

namespace tapegrad::distributed {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The elements [offset, offset + numel) of a bucket's flat buffer, shaped like `like`.
Tensor bucket_view(const Tensor& flat, std::int64_t offset, const Tensor& like) {
  return narrow(flat, 0, offset, like.numel()).view(like.shape());
}

// flat *= factor, for a float32 or float64 buffer.
void scale(Tensor& flat, std::int64_t count, double factor) {
  if (flat.dtype() == DType::float64) {
    double* p = flat.data<double>();
    for (std::int64_t i = 0; i < count; ++i) p[i] *= factor;
  } else {
    float* p = flat.data<float>();
    const auto f = static_cast<float>(factor);
    for (std::int64_t i = 0; i < count; ++i) p[i] *= f;
  }
}

// Broadcasts one tensor in place, through a contiguous copy when it is a strided view.
void broadcast_tensor(Tensor& t, const ProcessGroup& group, int root) {
  const std::int64_t bytes = t.numel() * static_cast<std::int64_t>(size_of(t.dtype()));
  if (t.is_contiguous()) {
    group.broadcast(t.raw_data(), bytes, root);
    return;
  }
  Tensor copy = t.contiguous();
  group.broadcast(copy.raw_data(), bytes, root);
  t.copy_(copy);
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(nn::Module& module, const ProcessGroup& group,
                                                 const DDPOptions& options)
    : module_(&module), group_(&group), overlap_(options.overlap()) {
  if (!(options.bucket_mb() > 0))
    throw ValueError("DistributedDataParallel: bucket_mb must be > 0, got " + std::to_string(options.bucket_mb()));
  if (!(options.first_bucket_mb() > 0))
    throw ValueError("DistributedDataParallel: first_bucket_mb must be > 0, got " +
                     std::to_string(options.first_bucket_mb()));
  const double bucket_bytes = options.bucket_mb() * 1024 * 1024;
  const double first_bucket_bytes = std::min(options.first_bucket_mb(), options.bucket_mb()) * 1024 * 1024;
  std::set<const TensorImpl*> seen;  // a tensor registered twice (tied weights) counts once
  std::vector<std::pair<std::string, Tensor>> params;
  for (const auto& [name, p] : module.named_parameters())
    if (p.requires_grad() && seen.insert(&p.impl()).second) params.emplace_back(name, p);
  // Reverse registration order: the order in which backward finishes the gradients.
  std::int64_t bytes_in_last = 0;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    const auto& [name, p] = *it;
    if (!is_floating(p.dtype()))
      throw DTypeError("DistributedDataParallel: parameter " + name + " has dtype " + dtype_name(p.dtype()));
    const std::int64_t bytes = p.numel() * static_cast<std::int64_t>(size_of(p.dtype()));
    const double cap = buckets_.size() == 1 ? first_bucket_bytes : bucket_bytes;
    const bool full = !buckets_.empty() && static_cast<double>(bytes_in_last + bytes) > cap;
    if (buckets_.empty() || full || buckets_.back().dtype != p.dtype()) {
      buckets_.emplace_back();
      buckets_.back().dtype = p.dtype();
      bytes_in_last = 0;
    }
    Bucket& b = buckets_.back();
    b.offsets.push_back(b.params.empty() ? 0 : b.offsets.back() + b.params.back().numel());
    b.params.push_back(p);
    slots_.push_back({buckets_.size() - 1, b.params.size() - 1, false});
    bytes_in_last += bytes;
  }
  for (Bucket& b : buckets_) {
    const std::int64_t grads = b.offsets.back() + b.params.back().numel();
    b.flat = Tensor::empty({grads + static_cast<std::int64_t>(b.params.size())}, b.dtype);
  }
  broadcast_state(0);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = slots_[i];
    hooks_.push_back(buckets_[slot.bucket].params[slot.index].register_post_accumulate_grad_hook(
        [this, i](Tensor&) { on_gradient_final(i); }, "DistributedDataParallel"));
  }
}

DistributedDataParallel::~DistributedDataParallel() {
  for (HookHandle& h : hooks_) h.remove();
  // An allreduce still in flight (an exception between backward and average_gradients) must
  // finish before its buffer goes.
  for (Bucket& b : buckets_)
    if (b.reduction.active()) group_->wait(b.reduction);
}

DistributedDataParallel::NoSync::NoSync(DistributedDataParallel* ddp) : ddp_(ddp) { ++ddp_->no_sync_depth_; }
DistributedDataParallel::NoSync::~NoSync() {
  if (ddp_) --ddp_->no_sync_depth_;
}
DistributedDataParallel::NoSync& DistributedDataParallel::NoSync::operator=(NoSync&& other) noexcept {
  if (this != &other) {
    if (ddp_) --ddp_->no_sync_depth_;
    ddp_ = other.ddp_;
    other.ddp_ = nullptr;
  }
  return *this;
}
DistributedDataParallel::NoSync DistributedDataParallel::no_sync() { return NoSync(this); }

void DistributedDataParallel::set_overlap(bool overlap) {
  if (next_bucket_ != 0)
    throw std::logic_error("DistributedDataParallel.set_overlap: buckets of this step are in flight; call it "
                           "after average_gradients()");
  overlap_ = overlap;
}

void DistributedDataParallel::broadcast_state(int root) {
  NoGradGuard no_grad;
  for (auto& [_, p] : module_->named_parameters()) broadcast_tensor(p, *group_, root);
  for (auto& [_, b] : module_->named_buffers()) broadcast_tensor(b, *group_, root);
}

// The hook: runs inside backward, the moment parameter `slot`'s gradient is final.
void DistributedDataParallel::on_gradient_final(std::size_t slot_index) {
  if (!overlap_ || no_sync_depth_ > 0) return;
  Slot& slot = slots_[slot_index];
  Bucket& b = buckets_[slot.bucket];
  if (slot.final || b.started)
    throw std::logic_error(
        "DistributedDataParallel: a second backward() reached a gradient already being averaged in this step; "
        "wrap every backward but the last of a step in no_sync(), and call average_gradients() after the last");
  const auto start_time = Clock::now();
  slot.final = true;
  ++b.final_grads;
  start_ready_buckets();
  progress();
  hook_s_ += seconds_since(start_time);
}

void DistributedDataParallel::start(Bucket& b) {
  const auto n = static_cast<std::int64_t>(b.params.size());
  const std::int64_t grads = b.flat.numel() - n;
  for (std::int64_t i = 0; i < n; ++i) {
    const Tensor& p = b.params[static_cast<std::size_t>(i)];
    Tensor view = bucket_view(b.flat, b.offsets[static_cast<std::size_t>(i)], p);
    const Tensor g = p.grad();
    if (g.defined())
      view.copy_(g);
    else
      view.fill_(0);
    narrow(b.flat, 0, grads + i, 1).fill_(g.defined() ? 1 : 0);
  }
  b.reduction = group_->start_allreduce_sum(b.flat.raw_data(), b.flat.numel(), b.dtype);
  b.started = true;
}

void DistributedDataParallel::start_ready_buckets() {
  while (next_bucket_ < buckets_.size()) {
    Bucket& b = buckets_[next_bucket_];
    if (b.final_grads < static_cast<std::int64_t>(b.params.size())) return;
    start(b);
    ++next_bucket_;
  }
}

void DistributedDataParallel::progress() {
  for (std::size_t i = 0; i < next_bucket_; ++i)
    if (buckets_[i].reduction.active()) group_->test(buckets_[i].reduction);
}

void DistributedDataParallel::average_gradients() {
  NoGradGuard no_grad;
  const auto start_time = Clock::now();
  last_started_in_backward_ = static_cast<std::int64_t>(next_bucket_);
  // What backward did not start (all of it without overlap), in bucket order.
  for (; next_bucket_ < buckets_.size(); ++next_bucket_) start(buckets_[next_bucket_]);
  last_allreduce_s_ = 0;
  const double inv_world = 1.0 / group_->world_size();
  for (Bucket& b : buckets_) {
    const auto n = static_cast<std::int64_t>(b.params.size());
    const std::int64_t grads = b.flat.numel() - n;
    const auto wait_start = Clock::now();
    group_->wait(b.reduction);
    last_allreduce_s_ += seconds_since(wait_start);
    scale(b.flat, grads, inv_world);
    for (std::int64_t i = 0; i < n; ++i) {
      const double count = b.dtype == DType::float64 ? b.flat.data<double>()[grads + i]
                                                     : static_cast<double>(b.flat.data<float>()[grads + i]);
      if (count == 0) continue;  // no rank has a gradient
      Tensor p = b.params[static_cast<std::size_t>(i)];
      const Tensor view = bucket_view(b.flat, b.offsets[static_cast<std::size_t>(i)], p);
      if (Tensor g = p.grad(); g.defined())
        g.copy_(view);
      else
        p.set_grad(view.clone());
    }
    b.final_grads = 0;
    b.started = false;
  }
  for (Slot& slot : slots_) slot.final = false;
  next_bucket_ = 0;
  last_hook_s_ = hook_s_;
  hook_s_ = 0;
  last_average_s_ = seconds_since(start_time);
}

std::uint64_t state_checksum(const nn::Module& module) {
  // FNV-1a over 64-bit words (and the bytes of a tail): fast, and any changed bit changes it
  // with overwhelming probability. Not cryptographic; it only compares honest copies.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto add = [&](std::uint64_t word) { h = (h ^ word) * 0x100000001b3ULL; };
  auto hash = [&](const Tensor& t) {
    const Tensor c = t.contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.raw_data());
    const std::size_t n = static_cast<std::size_t>(c.numel()) * size_of(c.dtype());
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      add(word);
    }
    for (; i < n; ++i) add(bytes[i]);
    add(n);
  };
  NoGradGuard no_grad;
  for (const auto& [_, p] : module.named_parameters()) hash(p);
  for (const auto& [_, b] : module.named_buffers()) hash(b);
  return h;
}

bool in_sync(const nn::Module& module, const ProcessGroup& group) {
  const std::uint64_t h = state_checksum(module);
  return group.min(h) == group.max(h);
}

}  // namespace tapegrad::distributed
