# autodiff_tour: the tape of a tiny neuron, its backward pass step by step, DOT export.
tapegrad_example(autodiff_tour)

if(TAPEGRAD_BUILD_TESTS)
  set(tour_dir ${CMAKE_CURRENT_BINARY_DIR}/autodiff_tour_test)
  # --check: the step-by-step gradients must equal backward()'s and the hand-derived ones, and
  # gradcheck must pass. The regex also pins the fan-out line and the DOT file's name; the last
  # line is printed only when every check passed (a matching regex makes ctest ignore the exit code).
  add_test(NAME examples.autodiff_tour COMMAND autodiff_tour --check --out-dir ${tour_dir})
  string(CONCAT tour_output
    "#9 div \\[\\] <- #7 sub, #8 add\n.*"
    "node #6 exp +receives dL/dout = [-0-9.e]+ \\+ [-0-9.e]+ = [-0-9.e]+  \\(2 contributions: fan-out\\).*"
    "d o/d x1 +step by step -1\\.5 +backward\\(\\) -1\\.5 .*"
    "step by step == backward\\(\\) == by hand\n.*"
    "wrote [^\n]*autodiff_tour\\.dot \\([0-9]+ bytes\\).*"
    "gradcheck passed.*"
    "autodiff_tour: all checks passed")
  set_tests_properties(examples.autodiff_tour PROPERTIES
    PASS_REGULAR_EXPRESSION "${tour_output}" FIXTURES_SETUP autodiff_tour_dot)
  # The DOT file is on disk and is a Graphviz graph whose leaves show data and grad.
  add_test(NAME examples.autodiff_tour_dot COMMAND ${CMAKE_COMMAND} -E cat ${tour_dir}/autodiff_tour.dot)
  set_tests_properties(examples.autodiff_tour_dot PROPERTIES FIXTURES_REQUIRED autodiff_tour_dot
    PASS_REGULAR_EXPRESSION "^digraph tapegrad \\{.*data \\[2\\] \\| grad \\[-1\\.5\\].*label=\"div\\\\n\\[\\]\"")
endif()
