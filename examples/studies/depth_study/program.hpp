// program.hpp — the depth study as a program: its command line, its stages and its report.
// main.cpp is this call alone. A program that registers a placement or a stream scheme of its
// own (nn::register_placement, nn::register_stream) and then calls it gets the study with its
// design among the study's (--placements, --profile-placements, ...): the worker processes the
// study starts are that same program (/proc/self/exe), so they register it too.
//
//   int main(int argc, char** argv) {
//     register_parallel_block();  // docs/custom-block.md
//     return depth_study::run_program(argc, argv);
//   }
#pragma once

namespace depth_study {

// Parses argc/argv as depth_study's command line (--help lists every option), runs the study
// and writes its report; returns the exit status (0, or non-zero after printing why).
int run_program(int argc, char** argv);

}  // namespace depth_study
