// ddp.cpp — bucket planning, gradient averaging, broadcast of the state, the sync check.
#include "ddp.hpp"

#include <chrono>
#include <cstring>
#include <set>

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
    : module_(&module), group_(&group) {
  if (!(options.bucket_mb() > 0))
    throw ValueError("DistributedDataParallel: bucket_mb must be > 0, got " + std::to_string(options.bucket_mb()));
  const double bucket_bytes = options.bucket_mb() * 1024 * 1024;
  std::set<const TensorImpl*> seen;  // a tensor registered twice (tied weights) counts once
  std::int64_t bytes_in_last = 0;
  for (const auto& [name, p] : module.named_parameters()) {
    if (!p.requires_grad() || !seen.insert(&p.impl()).second) continue;
    if (!is_floating(p.dtype()))
      throw DTypeError("DistributedDataParallel: parameter " + name + " has dtype " + dtype_name(p.dtype()));
    const std::int64_t bytes = p.numel() * static_cast<std::int64_t>(size_of(p.dtype()));
    const bool full = !buckets_.empty() && static_cast<double>(bytes_in_last + bytes) > bucket_bytes;
    if (buckets_.empty() || full || buckets_.back().dtype != p.dtype()) {
      buckets_.push_back(Bucket{p.dtype(), {}, {}, Tensor()});
      bytes_in_last = 0;
    }
    Bucket& b = buckets_.back();
    b.offsets.push_back(b.params.empty() ? 0 : b.offsets.back() + b.params.back().numel());
    b.params.push_back(p);
    bytes_in_last += bytes;
  }
  for (Bucket& b : buckets_) {
    const std::int64_t grads = b.offsets.back() + b.params.back().numel();
    b.flat = Tensor::empty({grads + static_cast<std::int64_t>(b.params.size())}, b.dtype);
  }
  broadcast_state(0);
}

void DistributedDataParallel::broadcast_state(int root) {
  NoGradGuard no_grad;
  for (auto& [_, p] : module_->named_parameters()) broadcast_tensor(p, *group_, root);
  for (auto& [_, b] : module_->named_buffers()) broadcast_tensor(b, *group_, root);
}

void DistributedDataParallel::average_gradients() {
  NoGradGuard no_grad;
  const auto start = Clock::now();
  last_allreduce_s_ = 0;
  const double inv_world = 1.0 / group_->world_size();
  for (Bucket& b : buckets_) {
    const auto n = static_cast<std::int64_t>(b.params.size());
    const std::int64_t grads = b.flat.numel() - n;
    Tensor presence = narrow(b.flat, 0, grads, n);
    for (std::int64_t i = 0; i < n; ++i) {
      const Tensor& p = b.params[static_cast<std::size_t>(i)];
      Tensor view = bucket_view(b.flat, b.offsets[static_cast<std::size_t>(i)], p);
      const Tensor g = p.grad();
      if (g.defined())
        view.copy_(g);
      else
        view.fill_(0);
      narrow(presence, 0, i, 1).fill_(g.defined() ? 1 : 0);
    }
    const auto reduce_start = Clock::now();
    group_->allreduce_sum(b.flat.raw_data(), b.flat.numel(), b.dtype);
    last_allreduce_s_ += seconds_since(reduce_start);
    scale(b.flat, grads, inv_world);
    const std::vector<double> counts = presence.to_vector();
    for (std::int64_t i = 0; i < n; ++i) {
      if (counts[static_cast<std::size_t>(i)] == 0) continue;  // no rank has a gradient
      Tensor p = b.params[static_cast<std::size_t>(i)];
      const Tensor view = bucket_view(b.flat, b.offsets[static_cast<std::size_t>(i)], p);
      if (Tensor g = p.grad(); g.defined())
        g.copy_(view);
      else
        p.set_grad(view.clone());
    }
  }
  last_average_s_ = seconds_since(start);
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
