// depth_study/main.cpp — the depth study (program.hpp; docs/depth-study.md).
#include "program.hpp"

int main(int argc, char** argv) { return depth_study::run_program(argc, argv); }
