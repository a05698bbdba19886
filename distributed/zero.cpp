// zero.cpp — ZeRO-1: the partition, the sharded step, the parameter broadcasts, and the
// optimizer state gathered for checkpoints and split again on load.
#include "zero.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <sstream>

#include "../autograd/grad_mode.hpp"

namespace tapegrad::distributed {

namespace {

constexpr int kStateTag = 1910;  // point-to-point messages of full_state() (the paper's arXiv number)

std::int64_t bytes_of(const Tensor& t) { return t.numel() * static_cast<std::int64_t>(size_of(t.dtype())); }

// FNV-1a of a text: equal on every rank iff (with overwhelming probability) the texts are.
std::uint64_t fingerprint(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

}  // namespace

std::vector<int> partition_by_size(const std::vector<std::int64_t>& bytes, int world_size) {
  if (world_size < 1) throw ValueError("partition_by_size: world_size must be >= 1, got " + std::to_string(world_size));
  std::vector<std::size_t> by_size(bytes.size());
  std::iota(by_size.begin(), by_size.end(), std::size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
  std::vector<std::int64_t> load(static_cast<std::size_t>(world_size), 0);
  std::vector<int> owner(bytes.size(), 0);
  for (const std::size_t i : by_size) {
    const auto lightest = std::min_element(load.begin(), load.end());  // the first of equals: the lowest rank
    owner[i] = static_cast<int>(lightest - load.begin());
    *lightest += bytes[i];
  }
  return owner;
}

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(optim::Optimizer& optimizer, const ProcessGroup& group,
                                                 const ZeroOptions& options)
    : optimizer_(&optimizer), group_(&group) {
  if (!(options.bucket_mb() > 0))
    throw ValueError("ZeroRedundancyOptimizer: bucket_mb must be > 0, got " + std::to_string(options.bucket_mb()));
  std::string layout;  // what must be equal on every rank for the partitions to agree
  for (std::size_t g = 0; g < optimizer.num_groups(); ++g) {
    layout += "group " + std::to_string(g) + ":";
    for (const auto& [name, p] : optimizer.group_params(g)) {
      params_.emplace_back(name, p);
      layout += " " + name + " " + shape_str(p.shape()) + " " + dtype_name(p.dtype());
    }
    layout += "\n";
  }
  const std::uint64_t h = fingerprint(layout);
  if (group.min(h) != group.max(h))
    throw ValueError("ZeroRedundancyOptimizer: the ranks' optimizers hold different parameters (names, shapes, "
                     "dtypes or groups); rank " + std::to_string(group.rank()) + " has " +
                     std::to_string(params_.size()) + " in " + std::to_string(optimizer.num_groups()) +
                     " groups. Build the same model and optimizer on every rank");

  std::vector<std::int64_t> sizes;
  for (const auto& [_, p] : params_) sizes.push_back(bytes_of(p));
  owners_ = partition_by_size(sizes, group.world_size());
  bytes_per_rank_.assign(static_cast<std::size_t>(group.world_size()), 0);
  for (std::size_t i = 0; i < params_.size(); ++i) bytes_per_rank_[static_cast<std::size_t>(owners_[i])] += sizes[i];

  // The broadcasts: each owner's parameters in group order, packed up to bucket_mb per message.
  order_.resize(params_.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return owners_[a] < owners_[b]; });
  const double bucket_bytes = options.bucket_mb() * 1024 * 1024;
  std::int64_t largest_packed = 0;
  for (std::size_t k = 0; k < order_.size(); ++k) {
    const std::int64_t bytes = sizes[order_[k]];
    const int root = owners_[order_[k]];
    const bool fits = !messages_.empty() && messages_.back().root == root &&
                      static_cast<double>(messages_.back().bytes + bytes) <= bucket_bytes;
    if (fits) {
      messages_.back().last = k + 1;
      messages_.back().bytes += bytes;
      largest_packed = std::max(largest_packed, messages_.back().bytes);
    } else {
      messages_.push_back({root, k, k + 1, bytes});
    }
  }
  staging_.resize(static_cast<std::size_t>(largest_packed));

  // A state loaded before (a resumed run) keeps only this rank's part.
  bool foreign_state = false;
  for (std::size_t i = 0; i < params_.size(); ++i)
    foreign_state = foreign_state || (owners_[i] != group.rank() && optimizer.param_state(params_[i].first).step > 0);
  if (foreign_state) load_full_state(optimizer.state_dict());
}

std::size_t ZeroRedundancyOptimizer::index_of(const std::string& name, const char* who) const {
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (params_[i].first == name) return i;
  throw ValueError(std::string("ZeroRedundancyOptimizer.") + who + ": no parameter named '" + name + "'");
}

int ZeroRedundancyOptimizer::owner(const std::string& name) const { return owners_[index_of(name, "owner")]; }

void ZeroRedundancyOptimizer::step() {
  // Hide the gradients of the parameters other ranks own: Optimizer::step() skips a parameter
  // without one, so their moments are never allocated on this rank (the 1/N of the memory).
  const int rank = group_->rank();
  std::vector<Tensor> hidden(params_.size());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (owners_[i] == rank) continue;
    hidden[i] = params_[i].second.grad();
    params_[i].second.reset_grad();
  }
  auto restore = [&] {
    for (std::size_t i = 0; i < params_.size(); ++i)
      if (hidden[i].defined()) params_[i].second.set_grad(hidden[i]);
  };
  try {
    optimizer_->step();
  } catch (...) {
    restore();
    throw;
  }
  restore();
  share();
}

// Every owner's updated parameters to every rank, in the planned messages. A message of one
// tensor goes from and to its own memory; several are packed into staging_ and unpacked.
void ZeroRedundancyOptimizer::share() {
  if (group_->world_size() == 1) return;
  NoGradGuard no_grad;
  const int rank = group_->rank();
  for (const Message& m : messages_) {
    if (m.last - m.first == 1) {
      Tensor& p = params_[order_[m.first]].second;
      group_->broadcast(p.raw_data(), m.bytes, m.root);
      continue;
    }
    auto walk = [&](auto&& copy) {  // copy(parameter, its place in staging_)
      std::int64_t offset = 0;
      for (std::size_t k = m.first; k < m.last; ++k) {
        Tensor& p = params_[order_[k]].second;
        copy(p, staging_.data() + offset);
        offset += bytes_of(p);
      }
    };
    if (rank == m.root)
      walk([](const Tensor& p, char* at) { std::memcpy(at, p.raw_data(), static_cast<std::size_t>(bytes_of(p))); });
    group_->broadcast(staging_.data(), m.bytes, m.root);
    if (rank != m.root)
      walk([](const Tensor& p, const char* at) { std::memcpy(p.raw_data(), at, static_cast<std::size_t>(bytes_of(p))); });
  }
  // Written in place on the ranks that received them, as a step writes them on the owner.
  for (auto& [_, p] : params_) p.increment_version();
}

std::int64_t ZeroRedundancyOptimizer::state_bytes() const {
  std::int64_t total = 0;
  for (const auto& [name, _] : params_)
    for (const auto& [__, t] : optimizer_->param_state(name).buffers) total += bytes_of(t);
  return total;
}

std::int64_t ZeroRedundancyOptimizer::total_state_bytes() const {
  auto total = static_cast<double>(state_bytes());  // exact: byte counts are far below 2^53
  group_->allreduce_sum(&total, 1, DType::float64);
  return static_cast<std::int64_t>(total);
}

// A shard on the wire: a text header, "<name> <step> <buffers>" per stepped parameter and
// "<buffer> <numel>" per buffer, one a line, then each buffer's bytes as a message of its own
// (received straight into its tensor). A buffer has its parameter's shape and dtype, as
// Optimizer::load_state_dict requires.
void ZeroRedundancyOptimizer::send_shard(const optim::OptimizerState& mine) const {
  std::ostringstream header;
  for (const auto& [name, ps] : mine.params) {
    header << name << ' ' << ps.step << ' ' << ps.buffers.size() << '\n';
    for (const auto& [key, t] : ps.buffers) header << key << ' ' << t.numel() << '\n';
  }
  const std::string text = header.str();
  const auto length = static_cast<std::int64_t>(text.size());
  group_->send(&length, sizeof length, 0, kStateTag);
  group_->send(text.data(), length, 0, kStateTag);
  for (const auto& [_, ps] : mine.params)
    for (const auto& [__, t] : ps.buffers) {
      const Tensor c = t.contiguous();
      group_->send(c.raw_data(), bytes_of(c), 0, kStateTag);
    }
}

void ZeroRedundancyOptimizer::receive_shard(int source, std::vector<std::pair<std::string, optim::ParamState>>& into) const {
  std::int64_t length = 0;
  group_->recv(&length, sizeof length, source, kStateTag);
  std::string text(static_cast<std::size_t>(length), '\0');
  group_->recv(text.data(), length, source, kStateTag);
  std::istringstream header(text);
  std::string name;
  std::int64_t step = 0;
  std::size_t buffers = 0;
  while (header >> name >> step >> buffers) {
    const std::size_t i = index_of(name, "full_state");
    const Tensor& p = params_[i].second;
    if (owners_[i] != source)
      throw ValueError("ZeroRedundancyOptimizer.full_state: rank " + std::to_string(source) + " sent the state of '" +
                       name + "', which rank " + std::to_string(owners_[i]) + " owns");
    optim::ParamState ps;
    ps.step = step;
    for (std::size_t b = 0; b < buffers; ++b) {
      std::string key;
      std::int64_t numel = 0;
      header >> key >> numel;
      if (numel != p.numel())
        throw ValueError("ZeroRedundancyOptimizer.full_state: buffer '" + key + "' of '" + name + "' from rank " +
                         std::to_string(source) + " has " + std::to_string(numel) + " elements, the parameter " +
                         std::to_string(p.numel()));
      Tensor t = Tensor::empty(p.shape(), p.dtype());
      group_->recv(t.raw_data(), bytes_of(t), source, kStateTag);
      ps.buffers.emplace_back(key, t);
    }
    into.emplace_back(name, std::move(ps));
  }
}

optim::OptimizerState ZeroRedundancyOptimizer::full_state() const {
  optim::OptimizerState mine = optimizer_->state_dict();
  if (group_->world_size() == 1) return mine;
  if (!group_->is_main()) {
    send_shard(mine);
    return mine;
  }
  std::vector<std::pair<std::string, optim::ParamState>> all = std::move(mine.params);
  for (int r = 1; r < group_->world_size(); ++r) receive_shard(r, all);
  // In group order, as Optimizer::state_dict() lists them.
  mine.params.clear();
  for (const auto& [name, _] : params_)
    for (auto& entry : all)
      if (entry.first == name) mine.params.push_back(std::move(entry));
  return mine;
}

void ZeroRedundancyOptimizer::load_full_state(const optim::OptimizerState& state) {
  optim::OptimizerState mine;
  mine.optimizer = state.optimizer;
  mine.groups = state.groups;
  for (const auto& entry : state.params) {
    const auto it = std::find_if(params_.begin(), params_.end(), [&](const auto& p) { return p.first == entry.first; });
    // An unknown name stays in, for load_state_dict to report it.
    if (it == params_.end() || owners_[static_cast<std::size_t>(it - params_.begin())] == group_->rank())
      mine.params.push_back(entry);
  }
  optimizer_->load_state_dict(mine);
}

}  // namespace tapegrad::distributed
