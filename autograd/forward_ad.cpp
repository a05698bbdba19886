// forward_ad.cpp — jvp: record fn with forward rules, then walk the nodes forward.
#include "forward_ad.hpp"

#include <unordered_map>

#include "engine.hpp"
#include "errors.hpp"
#include "grad_mode.hpp"
#include "node.hpp"
#include "ops.hpp"

namespace tapegrad {

namespace {

thread_local int recording_rules = 0;  // jvp() calls under way on this thread (they nest)

struct RecordRules {
  RecordRules() { ++recording_rules; }
  ~RecordRules() { --recording_rules; }
  RecordRules(const RecordRules&) = delete;
  RecordRules& operator=(const RecordRules&) = delete;
};

void check_tangents(const TensorList& primals, const TensorList& tangents) {
  if (tangents.size() != primals.size())
    throw ValueError("jvp: " + std::to_string(primals.size()) + " primals but " + std::to_string(tangents.size()) +
                     " tangents: give one tangent per primal (an undefined one is zeros)");
  for (std::size_t i = 0; i < primals.size(); ++i) {
    const Tensor& p = primals[i];
    const Tensor& t = tangents[i];
    if (!p.defined()) throw ValueError("jvp: primal " + std::to_string(i) + " is undefined");
    if (!is_floating(p.dtype()) && t.defined())
      throw DTypeError("jvp: primal " + std::to_string(i) + " is " + dtype_name(p.dtype()) +
                       ": only floating tensors have a tangent");
    if (t.defined() && (t.shape() != p.shape() || t.dtype() != p.dtype()))
      throw ShapeError("jvp: tangent " + std::to_string(i) + " is " + shape_str(t.shape()) + " " + dtype_name(t.dtype()) +
                       ", its primal " + shape_str(p.shape()) + " " + dtype_name(p.dtype()) +
                       ": a tangent has its primal's shape and dtype");
  }
}

}  // namespace

bool forward_rules_wanted() { return recording_rules > 0; }

Tensor detail::tangent_sum(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return add(a, b);
}

Tensor detail::jvp_of(const JvpFn& composite, const TensorList& inputs, const TensorList& tangents) {
  std::vector<std::size_t> moving;  // the inputs with a tangent
  TensorList primals, directions;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && i < tangents.size() && tangents[i].defined()) {
      moving.push_back(i);
      primals.push_back(inputs[i].detach());
      directions.push_back(tangents[i]);
    }
  if (primals.empty()) return Tensor();
  const auto with_moving = [&](const TensorList& in) {
    TensorList all;
    for (const Tensor& t : inputs) all.push_back(t.defined() ? t.detach() : Tensor());
    for (std::size_t k = 0; k < moving.size(); ++k) all[moving[k]] = in[k];
    return composite(all);
  };
  return jvp(with_moving, primals, directions).second;
}

Tensor detail::tangent_to_shape(const Tensor& t, const Shape& shape) {
  if (!t.defined() || t.shape() == shape) return t;
  return contiguous(expand(t, shape));
}

std::pair<Tensor, Tensor> jvp(const JvpFn& fn, const TensorList& primals, const TensorList& tangents) {
  check_tangents(primals, tangents);
  // The primals as fresh leaves: their tangents are the ones given, and whatever else fn reads
  // (parameters, constants) has none.
  TensorList inputs;
  std::unordered_map<const TensorImpl*, Tensor> leaf_tangent;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!is_floating(primals[i].dtype())) {  // indices, targets: constants, passed as they are
      inputs.push_back(primals[i]);
      continue;
    }
    inputs.push_back(primals[i].detach().requires_grad_());
    leaf_tangent.emplace(inputs.back().impl_ptr().get(), tangents[i]);
  }
  Tensor out;
  {
    RecordRules rules;
    GradModeGuard recording(true);
    out = fn(inputs);
  }
  if (!out.defined()) throw ValueError("jvp: the function returned an undefined tensor");
  if (!out.grad_fn()) {  // an input itself, or nothing that depends on the inputs
    const auto input = leaf_tangent.find(out.impl_ptr().get());
    const bool given = input != leaf_tangent.end() && input->second.defined();
    return {out.detach(), given ? input->second : zeros_like(out)};
  }

  // Walk the nodes forward: topological_order lists each node after its inputs.
  NoGradGuard no_grad;  // the tangents are values, not recorded
  std::unordered_map<const Node*, Tensor> node_tangent;
  for (Node* node : topological_order(out.grad_fn().get())) {
    TensorList in(node->next_edges.size());
    bool any = false;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const Edge& edge = node->next_edges[i];
      if (edge.node) {
        const auto found = node_tangent.find(edge.node.get());
        if (found != node_tangent.end()) in[i] = found->second;
      } else if (edge.leaf) {
        const auto found = leaf_tangent.find(edge.leaf.get());
        if (found != leaf_tangent.end()) in[i] = found->second;
      }
      any = any || in[i].defined();
    }
    if (!any) continue;  // zero in, zero out
    if (!node->forward_fn)
      throw GraphError("jvp: '" + node->name + "' (output shape " + shape_str(node->output_shape) +
                       ") has no forward rule: forward mode does not cover this op yet");
    const Tensor t = node->forward_fn(in);
    if (t.defined() && (t.shape() != node->output_shape || t.dtype() != node->dtype))
      throw GraphError("jvp: the forward rule of '" + node->name + "' returned a tangent of shape " +
                       shape_str(t.shape()) + " " + dtype_name(t.dtype()) + " for an output of shape " +
                       shape_str(node->output_shape) + " " + dtype_name(node->dtype));
    if (t.defined()) node_tangent[node] = t;
  }
  const auto found = node_tangent.find(out.grad_fn().get());
  return {out.detach(), found != node_tangent.end() ? found->second : zeros_like(out)};
}

Tensor hvp_forward_over_reverse(const JvpFn& f, const Tensor& x, const Tensor& v) {
  const auto gradient = [&f](const TensorList& in) {
    const Tensor y = f(in);
    if (y.numel() != 1)
      throw ShapeError("hvp_forward_over_reverse: f must return one number, got shape " + shape_str(y.shape()));
    return grad({y}, {in[0]}, {}, {.create_graph = true})[0];  // ∇f, recorded with its rules
  };
  return jvp(gradient, {x}, {v}).second;
}

}  // namespace tapegrad
