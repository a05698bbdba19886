// nn.hpp — all of nn/.
#pragma once

#include "activation.hpp"
#include "ada_ln.hpp"
#include "attention.hpp"
#include "containers.hpp"
#include "dropout.hpp"
#include "embedding.hpp"
#include "feed_forward.hpp"
#include "init.hpp"
#include "linear.hpp"
#include "model_init.hpp"
#include "module.hpp"
#include "norm.hpp"
#include "residual.hpp"
#include "seq2seq.hpp"
#include "transformer_block.hpp"
#include "transformer_lm.hpp"
