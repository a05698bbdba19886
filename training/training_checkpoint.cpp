// training_checkpoint.cpp — a training run's state to and from a Checkpoint.
#include "training_checkpoint.hpp"

#include <bit>
#include <cstring>

#include "../autograd/grad_mode.hpp"

namespace tapegrad::training {

using io::FormatError;
using io::StateDict;


namespace {

const char* kKind = "training";

void put_hyper_parameters(Checkpoint& c, const std::string& prefix, const optim::HyperParameters& hp) {
  for (const auto& [key, value] : hp) c.set(prefix + key, value);
}

// The entries of metadata whose key starts with prefix, in file order, prefix removed.
std::vector<std::pair<std::string, const MetaValue*>> with_prefix(const Checkpoint& c, const std::string& prefix) {
  std::vector<std::pair<std::string, const MetaValue*>> out;
  for (const auto& [key, value] : c.metadata)
    if (key.rfind(prefix, 0) == 0) out.emplace_back(key.substr(prefix.size()), &value);
  return out;
}

optim::HyperParameters get_hyper_parameters(const Checkpoint& c, const std::string& prefix) {
  optim::HyperParameters hp;
  for (const auto& [key, value] : with_prefix(c, prefix)) {
    const double* v = std::get_if<double>(value);
    if (!v) throw FormatError("training checkpoint: metadata '" + prefix + key + "' is not a number");
    hp.emplace_back(key, *v);
  }
  return hp;
}

void save_optimizer(Checkpoint& c, const optim::OptimizerState& s) {
  c.set("optimizer.kind", s.optimizer);
  c.set("optimizer.groups", static_cast<std::int64_t>(s.groups.size()));
  for (std::size_t g = 0; g < s.groups.size(); ++g) {
    const std::string group = "optimizer.group." + std::to_string(g) + ".";
    c.set(group + "size", static_cast<std::int64_t>(s.groups[g].params.size()));
    for (std::size_t i = 0; i < s.groups[g].params.size(); ++i)
      c.set(group + "param." + std::to_string(i), s.groups[g].params[i]);
    put_hyper_parameters(c, group + "hp.", s.groups[g].hyper_parameters);
  }
  StateDict& buffers = c.section("optimizer");
  for (const auto& [name, ps] : s.params) {
    c.set("optimizer.state." + name + ".step", ps.step);
    for (const auto& [buffer, t] : ps.buffers) buffers.insert(name + "." + buffer, t);
  }
}

void load_optimizer(const Checkpoint& c, optim::Optimizer& opt) {
  optim::OptimizerState s;
  s.optimizer = c.get_string("optimizer.kind");
  const std::int64_t n_groups = c.get_int("optimizer.groups");
  if (n_groups < 0 || n_groups > 1'000'000) throw FormatError("training checkpoint: bad optimizer group count");
  for (std::int64_t g = 0; g < n_groups; ++g) {
    const std::string group = "optimizer.group." + std::to_string(g) + ".";
    optim::OptimizerState::Group gs;
    const std::int64_t size = c.get_int(group + "size");
    if (size < 0 || size > static_cast<std::int64_t>(c.metadata.size()))
      throw FormatError("training checkpoint: bad size of optimizer group " + std::to_string(g));
    for (std::int64_t i = 0; i < size; ++i) gs.params.push_back(c.get_string(group + "param." + std::to_string(i)));
    gs.hyper_parameters = get_hyper_parameters(c, group + "hp.");
    s.groups.push_back(std::move(gs));
  }
  const StateDict* buffers = c.find_section("optimizer");
  for (const auto& gs : s.groups)
    for (const std::string& name : gs.params) {
      const MetaValue* step = c.find("optimizer.state." + name + ".step");
      if (!step) continue;  // never stepped
      optim::ParamState ps;
      ps.step = c.get_int("optimizer.state." + name + ".step");
      if (buffers)
        for (const auto& [key, t] : *buffers)
          if (key.size() > name.size() + 1 && key.compare(0, name.size() + 1, name + ".") == 0 &&
              key.find('.', name.size() + 1) == std::string::npos)
            ps.buffers.emplace_back(key.substr(name.size() + 1), t.clone());
      s.params.emplace_back(name, std::move(ps));
    }
  opt.load_state_dict(s);
}

void save_generator(Checkpoint& c, const std::string& name, const Generator& gen) {
  const GeneratorState g = gen.get_state();
  const std::string prefix = "rng." + name + ".";
  c.set(prefix + "state", std::bit_cast<std::int64_t>(g.state));  // the 64 bits as they are
  c.set(prefix + "has_spare_normal", static_cast<std::int64_t>(g.has_spare_normal));
  c.set(prefix + "spare_normal", g.spare_normal);
}

void load_generator(const Checkpoint& c, const std::string& name, Generator& gen) {
  const std::string prefix = "rng." + name + ".";
  GeneratorState g;
  g.state = std::bit_cast<std::uint64_t>(c.get_int(prefix + "state"));
  g.has_spare_normal = c.get_int(prefix + "has_spare_normal") != 0;
  g.spare_normal = c.get_double(prefix + "spare_normal");
  gen.set_state(g);
}

}  // namespace

Checkpoint make_training_checkpoint(const TrainingState& s) {
  if (!s.model) throw ValueError("save_training_checkpoint: TrainingState.model is null");
  Checkpoint c;
  c.kind = kKind;
  c.set("step", s.step);
  for (const auto& [key, value] : s.model_config) c.set(key, value);
  c.section("model") = io::state_dict(*s.model);
  if (s.optimizer_state) save_optimizer(c, *s.optimizer_state);
  else if (s.optimizer) save_optimizer(c, s.optimizer->state_dict());
  if (s.schedule) {
    const optim::ScheduleState ss = s.schedule->state_dict();
    c.set("schedule.kind", ss.schedule);
    c.set("schedule.step", ss.step);
    c.set("schedule.groups", static_cast<std::int64_t>(ss.base_lrs.size()));
    for (std::size_t g = 0; g < ss.base_lrs.size(); ++g) c.set("schedule.base_lr." + std::to_string(g), ss.base_lrs[g]);
    put_hyper_parameters(c, "schedule.hp.", ss.hyper_parameters);
  }
  for (const auto& [name, gen] : s.generators) save_generator(c, name, *gen);
  if (s.loader) {
    c.set("data.epoch", s.loader->epoch);
    c.set("data.index", s.loader->index);
  }
  if (s.ema) {
    StateDict& averages = c.section("ema");
    for (const auto& [name, average] : s.ema->averages()) averages.insert(name, average);
    c.set("ema.decay", s.ema->decay());
    c.set("ema.num_updates", s.ema->num_updates());
  }
  for (const auto& [key, value] : s.extra) c.set("extra." + key, value);
  return c;
}

optim::ScheduleState schedule_state(const Checkpoint& c) {
  optim::ScheduleState ss;
  ss.schedule = c.get_string("schedule.kind");
  ss.step = c.get_int("schedule.step");
  const std::int64_t groups = c.get_int("schedule.groups");
  if (groups < 0 || groups > static_cast<std::int64_t>(c.metadata.size()))
    throw FormatError("training checkpoint: bad schedule group count");
  for (std::int64_t g = 0; g < groups; ++g) ss.base_lrs.push_back(c.get_double("schedule.base_lr." + std::to_string(g)));
  ss.hyper_parameters = get_hyper_parameters(c, "schedule.hp.");
  return ss;
}

void restore_training_checkpoint(const Checkpoint& c, TrainingState& s) {
  if (c.kind != kKind)
    throw FormatError("training checkpoint: the file holds a '" + c.kind + "', not a training checkpoint");
  if (!s.model) throw ValueError("load_training_checkpoint: TrainingState.model is null");
  const StateDict* model = c.find_section("model");
  if (!model) throw FormatError("training checkpoint: no 'model' section");
  io::load_state_dict(*s.model, *model, /*strict=*/true);
  if (s.optimizer) load_optimizer(c, *s.optimizer);
  if (s.schedule) s.schedule->load_state_dict(schedule_state(c));
  for (auto& [name, gen] : s.generators) load_generator(c, name, *gen);
  if (s.ema) {
    const StateDict* averages = c.find_section("ema");
    if (!averages) throw FormatError("training checkpoint: no 'ema' section (the run kept no moving average)");
    s.ema->load_averages(nn::NamedTensors(averages->begin(), averages->end()), c.get_int("ema.num_updates"));
  }
  s.step = c.get_int("step");
  if (c.find("data.epoch")) s.loader = data::LoaderState{c.get_int("data.epoch"), c.get_int("data.index")};
  s.model_config.clear();
  for (const auto& [key, value] : with_prefix(c, "config.")) s.model_config.emplace_back("config." + key, *value);
  s.extra.clear();
  for (const auto& [key, value] : with_prefix(c, "extra.")) s.extra.emplace_back(key, *value);
}

void load_ema_weights(nn::Module& model, const Checkpoint& c, const std::string& source) {
  const StateDict* averages = c.find_section("ema");
  if (!averages)
    throw FormatError(source + ": no moving average of the weights (section 'ema'): the run was trained without --ema");
  for (auto& [name, param] : model.named_parameters()) {
    const Tensor* average = averages->find(name);
    if (!average || average->shape() != param.shape() || average->dtype() != param.dtype())
      throw FormatError(source + ": the moving average " + (average ? "of " + name + " has another shape or dtype" : "lacks " + name));
    NoGradGuard no_grad;
    param.copy_(*average);
  }
}

void save_training_checkpoint(const TrainingState& state, const std::string& path, Format format) {
  io::save_checkpoint(make_training_checkpoint(state), path, format);
}

void load_training_checkpoint(TrainingState& state, const std::string& path) {
  restore_training_checkpoint(io::load_checkpoint(path), state);
}

}  // namespace tapegrad::training
