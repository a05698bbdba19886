// custom_block_study.cpp — docs/custom-block.md's last snippet as a program: the depth study
// (examples/studies/depth_study/program.hpp) with the page's parallel block registered by a
// program outside the library. ctest examples.depth_study_custom_block trains it beside Pre-LN
// (an unregistered name would be refused: the test fails then).
#include <tapegrad/tapegrad.hpp>

#include "depth_study/program.hpp"

using namespace tapegrad;

namespace {
#include "../../docs/snippets/custom_block_formula.inc"
}  // namespace

#include "../../docs/snippets/custom_block_study.inc"
