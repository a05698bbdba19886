// tapegrad.hpp — the whole public API: #include <tapegrad/tapegrad.hpp>
#pragma once

#include "autograd/anomaly.hpp"
#include "autograd/blas.hpp"
#include "autograd/dtype.hpp"
#include "autograd/engine.hpp"
#include "autograd/errors.hpp"
#include "autograd/grad_mode.hpp"
#include "autograd/gradcheck.hpp"
#include "autograd/graphviz.hpp"
#include "autograd/node.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "autograd/tensor.hpp"
#include "nn/nn.hpp"
#include "optim/optim.hpp"
#include "data/data.hpp"
