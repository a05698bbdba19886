// training_checkpoint.hpp — everything needed to resume training exactly, in one file:
// the model's parameters and buffers, the optimizer's state (step counts, moments, groups and
// hyper-parameters), the learning-rate schedule, the step counter, random generators and
// the data loader's position. Training N steps in one go, or k steps + save + load in a
// fresh process + N - k steps, gives bit-identical parameters.
//
//   training::TrainingState s{&model, &optimizer, &schedule};
//   s.step = step; s.generators = {{"sampling", &gen}}; s.loader = loader.state();
//   training::save_training_checkpoint(s, "run.tgc");           // atomic
//   training::load_training_checkpoint(s, "run.tgc");           // restores all of it in place
//
// Layout (a Checkpoint of kind "training"): section "model" = state_dict(model); section
// "optimizer" = "<param>.<buffer>" tensors; metadata "step", "config.*" (the model's
// configuration, io/model_config.hpp: the file alone rebuilds the model), "optimizer.*",
// "schedule.*", "rng.<name>.*", "data.epoch", "data.index", and any user metadata ("extra.*");
// with a moving average of the weights, section "ema" (the averages, named as the parameters)
// and metadata "ema.decay", "ema.num_updates".
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../autograd/random.hpp"
#include "../data/dataloader.hpp"
#include "../optim/ema.hpp"
#include "../optim/lr_schedule.hpp"
#include "../optim/optimizer.hpp"
#include "../io/checkpoint.hpp"
#include "../io/model_config.hpp"

namespace tapegrad::training {

using io::Checkpoint;
using io::Format;
using io::MetaValue;
using io::Metadata;


struct TrainingState {
  nn::Module* model = nullptr;
  optim::Optimizer* optimizer = nullptr;    // optional
  // When set, saved in place of optimizer->state_dict(): a ZeRO-1 run (distributed/zero.hpp) holds
  // a shard of the state on each rank and saves the full one its ranks gathered beforehand
  // (gathering is collective; rank 0 alone saves). The file is the same as a plain run's.
  // Loading ignores it: optimizer->load_state_dict gets the file's state.
  std::optional<optim::OptimizerState> optimizer_state;
  optim::LRSchedule* schedule = nullptr;    // optional
  optim::ExponentialMovingAverage* ema = nullptr;  // optional: saved, and restored (FormatError when the file has none)
  std::int64_t step = 0;
  std::vector<std::pair<std::string, Generator*>> generators;  // saved and restored by name
  std::optional<data::LoaderState> loader;  // saved when set; filled on load when the file has it
  Metadata model_config;  // io::config_metadata(model.config): saved when set; filled on load when the file has it
  Metadata extra;         // user metadata (the run's settings, logged quantities, ...)
};

Checkpoint make_training_checkpoint(const TrainingState& state);
// Restores model (strict), optimizer, schedule, generators; sets step, loader and extra.
// Throws FormatError for a checkpoint that is not a training checkpoint or lacks a part that
// `state` asks for, and the component's own error when shapes or kinds differ.
void restore_training_checkpoint(const Checkpoint& checkpoint, TrainingState& state);

// The schedule's saved state (FormatError when the checkpoint has none): what
// training::schedule_from_state rebuilds a schedule from before the rest is restored.
optim::ScheduleState schedule_state(const Checkpoint& checkpoint);

// Puts the moving average that checkpoint saved (section "ema") into model's parameters: the
// weights `sample --ema` generates with. FormatError when the file has no averages, or they
// do not cover every parameter with its shape.
void load_ema_weights(nn::Module& model, const Checkpoint& checkpoint, const std::string& source);

void save_training_checkpoint(const TrainingState& state, const std::string& path, Format format = Format::binary);
void load_training_checkpoint(TrainingState& state, const std::string& path);

}  // namespace tapegrad::training
