# The smoke tests of the studies (examples/studies/), include()d from
# tests/examples/CMakeLists.txt with TAPEGRAD_BUILD_TESTS on and the study targets defined.
# Each writes its outputs under build/examples/, as the studies' docs show them.

# depth_study. Tiny sizes, a few steps: --check reads the outputs back (files present, expected
# CSV columns, finite numbers outside diverged runs, Pre-LN's loss fell) and prints the last
# line only when all of it holds.
add_test(NAME examples.depth_study_smoke
  COMMAND depth_study --smoke --check --out ${CMAKE_BINARY_DIR}/examples/depth_study_test)
set_tests_properties(examples.depth_study_smoke PROPERTIES
  PASS_REGULAR_EXPRESSION "plan: 2 seed\\(s\\); profile 4 x 2 depths at init; grid 5 placements x 2 depths x 1 lrs \\(\\+1 x depths 6\\).*depth_study: all checks passed \\([0-9]+ files"
  FIXTURES_SETUP depth_study_smoke_out)
# Its report.html in headless Chromium: every chart drawn, nothing on the console, nothing
# fetched, a screenshot beside it (render_html.sh says how). Skipped without Chromium
# (bash scripts/deps.sh --tests installs it).
add_test(NAME examples.report_html_render
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/render_html.sh ${CMAKE_BINARY_DIR}/examples/depth_study_test/report.html
          ${CMAKE_BINARY_DIR}/examples/depth_study_test/report_html.png)
set_tests_properties(examples.report_html_render PROPERTIES
  FIXTURES_REQUIRED depth_study_smoke_out SKIP_RETURN_CODE 77 TIMEOUT 180)
# A malformed --setups entry is refused, naming the part that is wrong.
add_test(NAME examples.depth_study_rejects_setup COMMAND depth_study --smoke --setups tied:gpt2:15,tide:xavier:0)
set_tests_properties(examples.depth_study_rejects_setup PROPERTIES
  PASS_REGULAR_EXPRESSION "setup 'tide:xavier:0': the head is tied or untied, not 'tide'")
# The sums the verdicts rest on (best lr, deepest trainable depth, droppable blocks, ...).
add_executable(depth_study_summary_test ${CMAKE_CURRENT_LIST_DIR}/depth_study_summary_test.cpp)
target_link_libraries(depth_study_summary_test PRIVATE tapegrad_depth_study Catch2::Catch2)
add_test(NAME examples.depth_study_summary COMMAND depth_study_summary_test)
# An unknown placement is refused, naming it.
add_test(NAME examples.depth_study_rejects_placement COMMAND depth_study --placements pre,postln --smoke)
set_tests_properties(examples.depth_study_rejects_placement PROPERTIES PASS_REGULAR_EXPRESSION "--placements: postln not in")

# translate. Two tiny depths, 30 steps: the report files must exist, the values be finite and
# the validation loss fall for every run that did not diverge; the last line only prints then.
add_test(NAME examples.translate_smoke
  COMMAND translate --smoke --check --threads 1 --out ${CMAKE_BINARY_DIR}/examples/translate_test)
set_tests_properties(examples.translate_smoke PROPERTIES
  PASS_REGULAR_EXPRESSION "\\| post \\| 1 \\|.*\\| b2t \\| 2 \\|.*translate: check passed")

# adaln_conditional. One tiny layer, 30 steps per variant: the report files must exist, the
# values be finite and the validation loss fall for both variants; the last line only prints then.
add_test(NAME examples.adaln_conditional_smoke
  COMMAND adaln_conditional --smoke --check --threads 1 --out ${CMAKE_BINARY_DIR}/examples/adaln_conditional_test)
set_tests_properties(examples.adaln_conditional_smoke PROPERTIES
  PASS_REGULAR_EXPRESSION "\\| adaln_zero \\| sort \\|.*\\| task_token \\| all \\|.*adaln_conditional: check passed")

# study::Document (report.md and report.html) and the LineChart options of the reports: a Catch2
# program of its own, as it links tapegrad_study (tests/examples/document_test.cpp).
add_executable(study_tests ${PROJECT_SOURCE_DIR}/tests/main.cpp ${CMAKE_CURRENT_LIST_DIR}/document_test.cpp)
target_link_libraries(study_tests PRIVATE tapegrad_study Catch2::Catch2)
catch_discover_tests(study_tests TEST_PREFIX "examples.study.")
