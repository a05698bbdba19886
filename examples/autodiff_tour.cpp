// autodiff_tour.cpp — a guided look inside the tape, on micrograd's neuron:
//
//   n = x1·w1 + x2·w2 + b,   o = tanh(n) written as (e - 1)/(e + 1) with e = exp(2n)
//
// It prints the recorded graph, writes it as Graphviz DOT (and PNG when `dot` is installed),
// then runs the backward pass step by step with the engine's loop written out here, printing
// what each node receives and sends. e is used twice, so its node receives two gradients
// that add up (fan-out). It compares with backward() and with gradcheck, in float64. Last, it
// records the backward pass itself (create_graph) and differentiates do/db once more: the
// second derivatives, against the hand-derived ones and gradgradcheck (docs/higher-order.md).
// With --trace, the engine itself reports its pass (BackwardTrace), and a page replays it on the
// graph, step by step (autodiff_tour_trace.html, examples/common/trace_page.hpp).
//
// Run: build/examples/autodiff_tour [--out-dir DIR] [--trace] [--check]  (--help lists the options)
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/trace_page.hpp"

using namespace tapegrad;

namespace {

// The five leaves of the neuron, float64 scalars that require grad.
struct Leaves {
  Tensor x1, w1, x2, w2, b;
  TensorList list() const { return {x1, w1, x2, w2, b}; }
};

Leaves make_leaves(double x1, double w1, double x2, double w2, double b) {
  auto leaf = [](double v) { return scalar_tensor(v, DType::float64).requires_grad_(); };
  return {leaf(x1), leaf(w1), leaf(x2), leaf(w2), leaf(b)};
}

// The forward pass. tanh is spelled out so that e fans out into two ops (micrograd's video).
// One op per statement: C++ may evaluate the operands of `a * b + c * d` in either order, and
// the graph's numbering should read in the order written.
Tensor neuron(const TensorList& in) {
  const Tensor &x1 = in[0], &w1 = in[1], &x2 = in[2], &w2 = in[3], &b = in[4];
  const Tensor x1w1 = x1 * w1;
  const Tensor x2w2 = x2 * w2;
  const Tensor n = (x1w1 + x2w2) + b;
  const Tensor e = exp(n * 2.0);
  const Tensor top = e - 1.0;
  const Tensor bottom = e + 1.0;
  return top / bottom;  // = tanh(n)
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

// Nodes reachable from root, consumers before producers: the order in which backward visits
// them. The engine's own depth-first search (autograd/engine.cpp, topological_order), reversed.
std::vector<Node*> backward_order(Node* root) {
  const std::vector<Node*> post_order = topological_order(root);
  return {post_order.rbegin(), post_order.rend()};
}

// What to call things in the printout: "#k op" for nodes (graph_string's numbers, by
// execution order) and the variable name for leaves.
struct Names {
  std::map<const Node*, std::string> nodes;
  std::map<const TensorImpl*, std::string> leaves;

  Names(const Tensor& root, const Leaves& l) {
    std::vector<Node*> order = backward_order(root.grad_fn().get());
    std::sort(order.begin(), order.end(), [](Node* a, Node* b) { return a->sequence_nr < b->sequence_nr; });
    for (std::size_t k = 0; k < order.size(); ++k) nodes[order[k]] = "#" + std::to_string(k + 1) + " " + order[k]->name;
    const char* names[] = {"x1", "w1", "x2", "w2", "b"};
    for (std::size_t i = 0; i < 5; ++i) leaves[l.list()[i].impl_ptr().get()] = names[i];
  }
  std::string of(const Edge& e) const {
    return e.node ? nodes.at(e.node.get()) : "leaf " + leaves.at(e.leaf.get());
  }
};

// The engine's loop (autograd/engine.cpp), written out with printing. Returns dL/d(leaf) for
// every leaf reached. Unlike backward(), it writes no .grad() and frees nothing.
std::map<const TensorImpl*, Tensor> backward_step_by_step(const Tensor& root, const Names& names) {
  NoGradGuard no_grad;  // the backward pass is not recorded
  std::unordered_map<Node*, TensorList> received{{root.grad_fn().get(), {ones_like(root)}}};  // dL/dL = 1
  std::map<const TensorImpl*, Tensor> leaf_grads;
  for (Node* node : backward_order(root.grad_fn().get())) {
    const TensorList& parts = received[node];
    if (parts.empty()) continue;  // nothing flowed into this node
    Tensor dout = parts[0];
    std::string sum = num(dout.item());
    for (std::size_t i = 1; i < parts.size(); ++i) {  // fan-out: the contributions add up
      dout = add(dout, parts[i]);
      sum += " + " + num(parts[i].item());
    }
    if (parts.size() > 1)
      sum += " = " + num(dout.item()) + "  (" + std::to_string(parts.size()) + " contributions: fan-out)";
    std::printf("  node %-7s receives dL/dout = %s\n", names.nodes.at(node).c_str(), sum.c_str());

    const TensorList dinputs = node->apply(dout);  // the op's backward: one gradient per input
    for (std::size_t i = 0; i < dinputs.size(); ++i) {
      const Edge& edge = node->next_edges[i];
      if (!node->needs_input_grad[i] || !dinputs[i].defined()) {
        std::printf("               sends nothing to input %zu (a constant: needs_input_grad is false)\n", i);
        continue;
      }
      std::printf("               sends %s to %s\n", num(dinputs[i].item()).c_str(), names.of(edge).c_str());
      if (edge.node) {
        received[edge.node.get()].push_back(dinputs[i]);
      } else {
        Tensor& g = leaf_grads[edge.leaf.get()];
        g = g.defined() ? add(g, dinputs[i]) : dinputs[i];  // a leaf used twice would add too
      }
    }
  }
  return leaf_grads;
}

bool close(double a, double b, double tol) { return std::abs(a - b) <= tol * (1 + std::abs(b)); }

}  // namespace

int main(int argc, char** argv) {
  double x1 = 2.0, w1 = -3.0, x2 = 0.0, w2 = 1.0, b = 6.8813735870195432;  // micrograd's: o = 1/√2
  std::string out_dir = ".";
  bool check = false, trace = false;
  CLI::App app{"A tour of the tape: the graph of a tiny neuron, its backward pass step by step, "
               "and checks against backward() and gradcheck (float64)."};
  app.add_option("--x1", x1, "input x1");
  app.add_option("--w1", w1, "weight w1");
  app.add_option("--x2", x2, "input x2");
  app.add_option("--w2", w2, "weight w2");
  app.add_option("--b", b, "bias b");
  app.add_option("--out-dir", out_dir, "directory for autodiff_tour.dot (and .png, and autodiff_tour_trace.html)");
  app.add_flag("--trace", trace,
               "also trace the engine's own backward pass (BackwardTrace) and write autodiff_tour_trace.html, a page "
               "that replays it on the graph step by step");
  app.add_flag("--check", check,
               "exit 1 unless the step-by-step gradients equal backward()'s, the hand-derived ones and gradcheck");
  CLI11_PARSE(app, argc, argv);

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec || !std::filesystem::is_directory(out_dir)) {
    std::fprintf(stderr, "error: --out-dir '%s' is not a directory that can be created (%s)\n", out_dir.c_str(),
                 ec.message().c_str());
    return 2;
  }

  std::printf("1. Forward: n = x1*w1 + x2*w2 + b, e = exp(2n), o = (e - 1)/(e + 1) = tanh(n)\n");
  const Leaves leaves = make_leaves(x1, w1, x2, w2, b);
  const Tensor o = neuron(leaves.list());
  const double n = x1 * w1 + x2 * w2 + b;
  std::printf("  x1 = %s, w1 = %s, x2 = %s, w2 = %s, b = %s  ->  n = %s, o = %s\n\n", num(x1).c_str(),
              num(w1).c_str(), num(x2).c_str(), num(w2).c_str(), num(b).c_str(), num(n).c_str(),
              num(o.item()).c_str());

  std::printf("2. The tape: one node per op, in the order they ran (graph_string)\n%s", graph_string(o).c_str());
  std::printf("  e = exp(2n) (#6) is an input of both #7 sub and #8 add: watch its gradient add up.\n\n");

  std::printf("3. Backward, step by step: each node, consumers first, turns dL/dout into dL/dinputs\n");
  const Names names(o, leaves);
  const std::map<const TensorImpl*, Tensor> stepped = backward_step_by_step(o, names);

  std::printf("\n4. The same on a fresh copy of the graph with backward(), and by hand:\n");
  std::printf("   do/dn = 1 - o^2, so do/dx1 = w1(1 - o^2), do/dw1 = x1(1 - o^2), ..., do/db = 1 - o^2\n");
  const Leaves fresh = make_leaves(x1, w1, x2, w2, b);
  const Tensor o2 = neuron(fresh.list());
  o2.backward();
  const double dn = 1 - o.item() * o.item();
  const double by_hand[] = {w1 * dn, x1 * dn, w2 * dn, x2 * dn, dn};
  bool agree = true;
  for (std::size_t i = 0; i < 5; ++i) {
    const auto found = stepped.find(leaves.list()[i].impl_ptr().get());
    const double step = found == stepped.end() ? 0.0 : found->second.item();
    const double engine = fresh.list()[i].grad().item();
    const bool ok = close(step, engine, 1e-12) && close(step, by_hand[i], 1e-9);
    agree = agree && ok;
    std::printf("  d o/d %-2s  step by step %-10s backward() %-10s by hand %-10s %s\n",
                names.leaves.at(leaves.list()[i].impl_ptr().get()).c_str(), num(step).c_str(), num(engine).c_str(),
                num(by_hand[i]).c_str(), ok ? "ok" : "MISMATCH");
  }
  std::printf(agree ? "  step by step == backward() == by hand\n\n" : "  the gradients DIFFER\n\n");

  // The fresh graph after backward(): each leaf's record shows "data | grad", as micrograd's draw_dot.
  const std::filesystem::path dot_path = std::filesystem::path(out_dir) / "autodiff_tour.dot";
  std::printf("5. Graphviz: the graph with each leaf's data and grad\n");
  {
    std::ofstream dot_file(dot_path);
    dot_file << to_dot(o2);
    if (!dot_file) {
      std::fprintf(stderr, "error: --out-dir: cannot write %s\n", dot_path.string().c_str());
      return 2;
    }
  }
  std::printf("  wrote %s (%ju bytes)\n", dot_path.string().c_str(),
              static_cast<std::uintmax_t>(std::filesystem::file_size(dot_path)));
  const std::filesystem::path png_path = std::filesystem::path(out_dir) / "autodiff_tour.png";
  if (std::system("command -v dot >/dev/null 2>&1") == 0) {
    const std::string command = "dot -Tpng '" + dot_path.string() + "' -o '" + png_path.string() + "'";
    if (std::system(command.c_str()) == 0)
      std::printf("  wrote %s\n", png_path.string().c_str());
    else
      std::printf("  Graphviz failed to render: %s\n", command.c_str());
  } else {
    std::printf("  no PNG: Graphviz's `dot` is not installed. Install it (Debian/Ubuntu: apt-get install graphviz;\n"
                "  macOS: brew install graphviz), then: dot -Tpng %s -o %s\n",
                dot_path.string().c_str(), png_path.string().c_str());
  }

  std::printf("\n6. gradcheck: backward() against central differences (f(x+eps) - f(x-eps)) / 2eps, float64\n");
  const GradcheckResult r = gradcheck(neuron, make_leaves(x1, w1, x2, w2, b).list());
  std::printf("  %s\n", r.report.c_str());

  // Second derivatives. do/db = 1 - o^2 is itself a function of the leaves; with create_graph
  // the ops that compute it are recorded, so it can be differentiated again:
  //   d/dθ (do/db) = d/dn (1 - o^2) · dn/dθ = -2o(1 - o^2) · dn/dθ,  dn/dθ = (w1, x1, w2, x2, 1).
  std::printf("\n7. Second derivatives: backward recorded (create_graph), then differentiated again\n");
  const Leaves again = make_leaves(x1, w1, x2, w2, b);
  const Tensor o3 = neuron(again.list());
  const Tensor do_db = grad({o3}, {again.b}, {}, {.create_graph = true})[0];
  const std::size_t forward_nodes = backward_order(o3.grad_fn().get()).size();
  const std::size_t all_nodes = backward_order(do_db.grad_fn().get()).size();
  std::printf("  do/db = %s is the output of a graph: the forward's %zu nodes (#1-#%zu) and the %zu that\n"
              "  the backward recorded on top of them (e used three times, by sub, add and the backward's mul):\n%s",
              num(do_db.item()).c_str(), forward_nodes, forward_nodes, all_nodes - forward_nodes,
              graph_string(do_db).c_str());
  const TensorList second = grad({do_db}, again.list());
  const double o_second = -2 * o.item() * dn;  // d^2 o / dn^2
  const double dn_dleaf[] = {w1, x1, w2, x2, 1.0};
  bool second_agree = true;
  for (std::size_t i = 0; i < 5; ++i) {
    const double by_hand_2 = o_second * dn_dleaf[i];
    const bool ok = close(second[i].item(), by_hand_2, 1e-9);
    second_agree = second_agree && ok;
    std::printf("  d2o/db d%-2s  recorded backward %-10s by hand %-10s %s\n",
                names.leaves.at(leaves.list()[i].impl_ptr().get()).c_str(), num(second[i].item()).c_str(),
                num(by_hand_2).c_str(), ok ? "ok" : "MISMATCH");
  }
  const GradcheckResult r2 = gradgradcheck(neuron, make_leaves(x1, w1, x2, w2, b).list());
  std::printf("  gradgradcheck (finite differences of the first derivatives): %s\n", r2.report.c_str());

  bool traced_agree = true;
  if (trace) {
    // The engine reports its own pass: the same walk as step 3's, from inside backward().
    std::printf("\n8. The engine's own trace of backward() (BackwardTrace): each node as it visits it, the norm of\n"
                "   dL/dout coming in and of each gradient going out, and each contribution into a leaf's .grad()\n");
    const Leaves traced = make_leaves(x1, w1, x2, w2, b);
    BackwardTrace t;
    const char* leaf_names[] = {"x1", "w1", "x2", "w2", "b"};
    for (std::size_t i = 0; i < 5; ++i) t.name(traced.list()[i], leaf_names[i]);
    neuron(traced.list()).backward();
    std::printf("%s", t.text().c_str());
    for (const TraceStep& step : t.steps()) {  // a scalar's norm is its absolute value
      if (step.leaf < 0) continue;
      const double engine = traced.list()[static_cast<std::size_t>(step.leaf)].grad().item();
      traced_agree = traced_agree && close(step.grad_in, std::abs(engine), 1e-12);
    }
    std::printf(traced_agree ? "  every leaf's step == |its .grad()|\n" : "  the trace DIFFERS from .grad()\n");
    const std::filesystem::path page = std::filesystem::path(out_dir) / "autodiff_tour_trace.html";
    std::ofstream page_file(page);
    page_file << study::trace_page(t, "autodiff_tour: the backward pass of micrograd's neuron");
    if (!page_file.flush()) {
      std::fprintf(stderr, "error: --out-dir: cannot write %s\n", page.string().c_str());
      return 2;
    }
    std::printf("  wrote %s: open it in a browser and press Next (%zu steps)\n", page.string().c_str(), t.steps().size());
  }

  if (agree && r.ok && second_agree && r2.ok && traced_agree) {
    std::printf("\nautodiff_tour: all checks passed\n");
    return 0;
  }
  std::printf("\nautodiff_tour: checks FAILED\n");
  return check ? 1 : 0;
}
