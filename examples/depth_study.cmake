# depth_study: gradients, activations, layer collapse and training by norm placement and depth.
tapegrad_example(depth_study)
target_sources(depth_study PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/depth_study/variants.cpp
  ${CMAKE_CURRENT_LIST_DIR}/depth_study/runs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/depth_study/outputs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/depth_study/report_md.cpp
  ${CMAKE_CURRENT_LIST_DIR}/depth_study/check.cpp)
target_link_libraries(depth_study PRIVATE tapegrad_study)

if(TAPEGRAD_BUILD_TESTS)
  # Tiny sizes, a few steps: --check reads the outputs back (files present, expected CSV
  # columns, finite numbers outside diverged runs, Pre-LN's loss fell) and prints the last
  # line only when all of it holds.
  add_test(NAME examples.depth_study_smoke
    COMMAND depth_study --smoke --check --out ${CMAKE_CURRENT_BINARY_DIR}/depth_study_test)
  set_tests_properties(examples.depth_study_smoke PROPERTIES
    PASS_REGULAR_EXPRESSION "plan: 8 trained runs of 40 steps, 16 measured at initialization only, 8 sweep runs.*depth_study: all checks passed \\([0-9]+ files")
  # An unknown placement is refused, naming it.
  add_test(NAME examples.depth_study_rejects_placement COMMAND depth_study --placements pre,postln --smoke)
  set_tests_properties(examples.depth_study_rejects_placement PROPERTIES PASS_REGULAR_EXPRESSION "--placements: postln not in")
endif()
