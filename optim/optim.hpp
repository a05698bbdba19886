// optim.hpp — all of optim/: optimizers, learning-rate schedules, gradient clipping and
// numerical health checks.
#pragma once

#include "adam.hpp"
#include "clip_grad.hpp"
#include "health.hpp"
#include "lr_schedule.hpp"
#include "optimizer.hpp"
#include "sgd.hpp"
