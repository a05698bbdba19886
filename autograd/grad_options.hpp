// grad_options.hpp — the flags of backward() and grad(), by name, as PyTorch's keyword arguments:
//
//   loss.backward({}, {.retain_graph = true});
//   TensorList g = grad({y}, {x}, {}, {.create_graph = true});   // g[0] can be differentiated again
//
// Why a struct and not bools by position: grad(y, x, {}, true) used to compile and set
// retain_graph where the reader meant create_graph, and the gradient penalty built on it then
// silently contributed nothing. A designated initializer says which flag it sets.
#pragma once

#include <optional>

namespace tapegrad {

struct BackwardOptions {
  // Keep the graph (its saved tensors) for another backward; default: create_graph.
  std::optional<bool> retain_graph = std::nullopt;
  // Record the backward pass itself, so that the gradients it leaves in .grad() can be
  // differentiated again (docs/higher-order.md). Implies retain_graph.
  bool create_graph = false;
};

struct GradOptions {
  // Keep the graph for another backward; default: create_graph.
  std::optional<bool> retain_graph = std::nullopt;
  // Record the backward pass: the returned gradients have a graph (higher-order derivatives).
  bool create_graph = false;
  // An input the outputs do not depend on gets an undefined gradient instead of an error.
  bool allow_unused = false;
};

}  // namespace tapegrad
