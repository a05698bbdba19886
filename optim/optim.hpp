// optim.hpp — all of optim/: optimizers, learning-rate schedules, gradient clipping,
// numerical health checks and moving averages of the weights (EMA).
#pragma once

#include "adam.hpp"
#include "clip_grad.hpp"
#include "depth_scaling.hpp"
#include "ema.hpp"
#include "health.hpp"
#include "lr_schedule.hpp"
#include "ngpt_normalization.hpp"
#include "optimizer.hpp"
#include "sgd.hpp"
