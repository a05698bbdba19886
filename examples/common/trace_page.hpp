// trace_page.hpp — a BackwardTrace (autograd/backward_trace.hpp) replayed on the graph's
// picture: one self-contained HTML page (inline SVG and a short script, nothing fetched), with
// step buttons and a slider, that a browser opens offline.
//
//   BackwardTrace trace;
//   trace.name(w, "w");
//   loss.backward();
//   std::ofstream("trace.html") << trace_page(trace, "the backward pass of my model");
//
// The picture is drawn here, without Graphviz: the forward pass runs left to right, each node
// in the column of its longest path to the output (the output at the right, the leaves at the
// left). Step k marks the node or the leaf that the engine visits at step k, greys the ones
// it has visited, writes on each edge into the node the norm of the gradient it sent back
// down that edge, and prints the step's line of trace.text() under the picture.
// The address's #step=K opens it at step K, and #next=K presses Next K times (the Chromium test
// of autodiff_tour does); the body element's data-step and data-current attributes say which
// step and which element ("n2": node #3, "l1": leaf 2; counted from 0) are shown.
#pragma once

#include <string>

#include <tapegrad/tapegrad.hpp>

namespace study {

std::string trace_page(const tapegrad::BackwardTrace& trace, const std::string& title);

}  // namespace study
