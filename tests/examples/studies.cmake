# The smoke tests of the studies (examples/studies/), include()d from
# tests/examples/CMakeLists.txt with TAPEGRAD_BUILD_TESTS on and the study targets defined.
# Each writes its outputs under build/examples/, as the studies' docs show them.

# depth_study. Tiny sizes, a few steps: --check reads the outputs back (files present, expected
# CSV columns, finite numbers outside diverged runs, Pre-LN's loss fell) and prints the last
# line only when all of it holds. (The plan line's ';' are matched by '.': a ';' would split the
# expression into three, and any one of them matching, the plan line alone, would pass the test.)
# --restart: a study resumes from the records in --out (records.hpp), and a test must run it.
tapegrad_add_test(NAME examples.depth_study_smoke
  COMMAND depth_study --smoke --restart --check --out ${CMAKE_BINARY_DIR}/examples/depth_study_test)
set_tests_properties(examples.depth_study_smoke PROPERTIES
  PASS_REGULAR_EXPRESSION "plan: 2 seed\\(s\\). profile 4 x 2 depths at init. grid 5 placements x 2 depths x 1 lrs \\(\\+1 x depths 6\\).*depth_study: all checks passed \\([0-9]+ files"
  FIXTURES_SETUP depth_study_smoke_out)
# nGPT in the study: its blocks are built as LLaMA's (nn/placement/ngpt.cpp refuses the study's
# GELU blocks) and its matrices renormalized after every step; the smoke run with it profiled and
# trained passes the same checks.
tapegrad_add_test(NAME examples.depth_study_ngpt
  COMMAND depth_study --smoke --restart --check --placements ngpt,pre --profile-placements ngpt,pre
          --out ${CMAKE_BINARY_DIR}/examples/depth_study_ngpt_test)
set_tests_properties(examples.depth_study_ngpt PROPERTIES
  PASS_REGULAR_EXPRESSION "grid 2 placements x 2 depths.*depth_study: all checks passed \\([0-9]+ files")
# A placement registered by a program outside the library joins the study: docs/custom-block.md's
# parallel block, trained in the grid and profiled beside Pre-LN, and named in the report.
add_executable(custom_block_study ${PROJECT_SOURCE_DIR}/tests/docs/custom_block_study.cpp)
target_link_libraries(custom_block_study PRIVATE tapegrad_depth_study)
tapegrad_add_test(NAME examples.depth_study_custom_block
  COMMAND custom_block_study --smoke --restart --check --placements parallel,pre --profile-placements parallel,pre
          --out ${CMAKE_BINARY_DIR}/examples/depth_study_custom_block_test)
set_tests_properties(examples.depth_study_custom_block PROPERTIES
  PASS_REGULAR_EXPRESSION "grid 2 placements x 2 depths.*grid parallel L=2.*depth_study: all checks passed \\([0-9]+ files")
# Its report.html in headless Chromium: every chart drawn, nothing on the console, nothing
# fetched, a screenshot beside it (render_html.sh says how). Skipped without Chromium
# (bash scripts/deps.sh --tests installs it).
add_test(NAME examples.report_html_render
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/render_html.sh ${CMAKE_BINARY_DIR}/examples/depth_study_test/report.html
          ${CMAKE_BINARY_DIR}/examples/depth_study_test/report_html.png)
set_tests_properties(examples.report_html_render PROPERTIES
  FIXTURES_REQUIRED depth_study_smoke_out SKIP_RETURN_CODE 77 TIMEOUT 180)
# The report as a reader opens it (check_depth_study_report.py): every verdict at the top links to
# its claim's section in report.md and report.html, every chart has a caption, and the
# deepest-trainable-depth chart draws every placement.
tapegrad_add_test(NAME examples.depth_study_report_reads
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_depth_study_report.py ${CMAKE_BINARY_DIR}/examples/depth_study_test)
set_tests_properties(examples.depth_study_report_reads PROPERTIES
  FIXTURES_REQUIRED depth_study_smoke_out PASS_REGULAR_EXPRESSION "verdicts linked to their sections")
# Three steps: nothing trains, so every placement of the deepest-trainable-depth chart must be
# drawn on its "none" row (a log depth axis would leave them all out).
tapegrad_add_test(NAME examples.depth_study_untrained_drawn
  COMMAND bash -c "\"$0\" --smoke --steps 3 --warmup 1 --out \"$1\" > /dev/null &&
    python3 \"$2\" \"$1\" --all-untrained"
    $<TARGET_FILE:depth_study> ${CMAKE_BINARY_DIR}/examples/depth_study_untrained_test
    ${CMAKE_CURRENT_SOURCE_DIR}/check_depth_study_report.py)
set_tests_properties(examples.depth_study_untrained_drawn PROPERTIES PASS_REGULAR_EXPRESSION "placements drawn on the none row")
# --jobs 2: the same smoke plan in two worker processes gives the same records, in the same
# order, as the one-process run above (only the columns of seconds differ).
set(same_records ${CMAKE_CURRENT_LIST_DIR}/depth_study_same_records.sh)
tapegrad_add_test(NAME examples.depth_study_jobs_match
  COMMAND bash -c "\"$0\" --smoke --restart --jobs 2 --out \"$1/depth_study_jobs_test\" > /dev/null &&
    bash \"$2\" \"$1/depth_study_test\" \"$1/depth_study_jobs_test\" && echo 'depth_study --jobs 2: same records as one process'"
    $<TARGET_FILE:depth_study> ${CMAKE_BINARY_DIR}/examples ${same_records})
set_tests_properties(examples.depth_study_jobs_match PROPERTIES
  FIXTURES_REQUIRED depth_study_smoke_out PASS_REGULAR_EXPRESSION "same records as one process")
# Stopped part-way (kill -9, --stop-after) or with records lost, the same command resumes and ends with the
# records of the straight run.
tapegrad_add_test(NAME examples.depth_study_resume
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/depth_study_resume.sh $<TARGET_FILE:depth_study>
          ${CMAKE_BINARY_DIR}/examples/depth_study_resume_test ${CMAKE_BINARY_DIR}/examples/depth_study_test)
set_tests_properties(examples.depth_study_resume PROPERTIES
  FIXTURES_REQUIRED depth_study_smoke_out PASS_REGULAR_EXPRESSION "same records as the straight run" TIMEOUT 300)
# Under mpirun, 2 ranks (each with 2 worker processes) give the records of one process.
if(TARGET tapegrad_distributed AND MPIEXEC_EXECUTABLE)
  tapegrad_mpirun(mpirun_2 2)
  string(JOIN " " mpirun_2_text ${mpirun_2})
  tapegrad_add_test(NAME examples.depth_study_mpi_match
    COMMAND bash -c "${mpirun_2_text} \"$0\" --smoke --restart --jobs 2 --out \"$1/depth_study_mpi_test\" > /dev/null &&
      bash \"$2\" \"$1/depth_study_test\" \"$1/depth_study_mpi_test\" && echo 'depth_study on 2 ranks: same records as one process'"
      $<TARGET_FILE:depth_study> ${CMAKE_BINARY_DIR}/examples ${same_records})
  set_tests_properties(examples.depth_study_mpi_match PROPERTIES
    FIXTURES_REQUIRED depth_study_smoke_out PASS_REGULAR_EXPRESSION "same records as one process"
    FAIL_REGULAR_EXPRESSION "${TAPEGRAD_MPI_FAILURE_REGEX}")
  tapegrad_mpi_tests(examples.depth_study_mpi_match)
endif()

tapegrad_add_test(NAME examples.depth_study_rejects_setup REFUSAL COMMAND depth_study --smoke --setups tied:gpt2:15,tide:xavier:0)
set_tests_properties(examples.depth_study_rejects_setup PROPERTIES
  PASS_REGULAR_EXPRESSION "setup 'tide:xavier:0': the head is tied or untied, not 'tide'")
# The sums the verdicts rest on, the records files (read back, and refused when broken), which
# runs --stop-after starts, and the studies' optimizer (depth-scaled under Depth-muP and CompleteP).
add_executable(depth_study_summary_test ${CMAKE_CURRENT_LIST_DIR}/depth_study_summary_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/depth_study_records_test.cpp ${CMAKE_CURRENT_LIST_DIR}/depth_study_plan_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/study_optimizer_test.cpp)
target_link_libraries(depth_study_summary_test PRIVATE tapegrad_catch_main tapegrad_depth_study Catch2::Catch2)
target_compile_definitions(depth_study_summary_test PRIVATE TAPEGRAD_SOURCE_DIR="${PROJECT_SOURCE_DIR}")  # a version-4 record
add_test(NAME examples.depth_study_summary COMMAND depth_study_summary_test)
# An unknown placement is refused, naming it.
tapegrad_add_test(NAME examples.depth_study_rejects_placement REFUSAL COMMAND depth_study --placements pre,postln --smoke)
set_tests_properties(examples.depth_study_rejects_placement PROPERTIES PASS_REGULAR_EXPRESSION "--placements: postln not in")

# translate. Two tiny depths, 30 steps: the report files must exist, the values be finite and
# the validation loss fall for every run that did not diverge; the last line only prints then.
tapegrad_add_test(NAME examples.translate_smoke
  COMMAND translate --smoke --check --threads 1 --out ${CMAKE_BINARY_DIR}/examples/translate_test)
set_tests_properties(examples.translate_smoke PROPERTIES
  PASS_REGULAR_EXPRESSION "\\| post \\| 1 \\|.*\\| b2t \\| 2 \\|.*translate: check passed")

# adaln_conditional. One tiny layer, 30 steps per variant: the report files must exist, the
# values be finite and the validation loss fall for both variants; the last line only prints then.
tapegrad_add_test(NAME examples.adaln_conditional_smoke
  COMMAND adaln_conditional --smoke --check --threads 1 --out ${CMAKE_BINARY_DIR}/examples/adaln_conditional_test)
set_tests_properties(examples.adaln_conditional_smoke PROPERTIES
  PASS_REGULAR_EXPRESSION "\\| adaln_zero \\| sort \\|.*\\| task_token \\| all \\|.*adaln_conditional: check passed")

# study::Document (report.md and report.html) and the LineChart options of the reports: a Catch2
# program of its own, as it links tapegrad_report (examples/common/; tests/examples/document_test.cpp).
add_executable(study_tests ${CMAKE_CURRENT_LIST_DIR}/document_test.cpp)
target_link_libraries(study_tests PRIVATE tapegrad_catch_main tapegrad_report Catch2::Catch2)
catch_discover_tests(study_tests TEST_PREFIX "examples.study.")

# depth_study's PyTorch twin (depth_study/torch_twin.hpp and depth_study_torch.py): a tiny export,
# every placement at depth 2 trained by tapegrad and by the script with Debian's python3-torch.
# Seed 1 starts both from tapegrad's weights, so every step's loss must agree within 1e-4; seed 2
# lets torch draw its own, and its runs must be sane. Skipped (77) without torch.
add_executable(depth_study_torch_twin ${CMAKE_CURRENT_LIST_DIR}/depth_study_torch_twin.cpp)
target_link_libraries(depth_study_torch_twin PRIVATE tapegrad_depth_study)
# run_torch looks for the script beside the executable.
configure_file(${PROJECT_SOURCE_DIR}/examples/studies/depth_study/depth_study_torch.py
  ${CMAKE_CURRENT_BINARY_DIR}/depth_study_torch.py COPYONLY)
add_test(NAME examples.depth_study_torch_twin
  COMMAND depth_study_torch_twin --python /usr/bin/python3 --seeds 1,2 --shared-seeds 1 --tolerance 1e-4
          --dir ${CMAKE_CURRENT_BINARY_DIR}/depth_study_torch_twin_test)
set_tests_properties(examples.depth_study_torch_twin PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "TAPEGRAD_NUM_THREADS=1")
# The script runs torch on one thread by default, its BLAS and OpenMP too, and refuses a torch that
# keeps another count: checked against a stand-in torch, so it runs without PyTorch.
tapegrad_add_test(NAME examples.depth_study_torch_threads
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/depth_study_torch_threads.py
          ${PROJECT_SOURCE_DIR}/examples/studies/depth_study/depth_study_torch.py)
set_tests_properties(examples.depth_study_torch_threads PROPERTIES PASS_REGULAR_EXPRESSION "torch on 1 thread by default")
# The twin's place in the report, without PyTorch: fake_torch_python.py stands in for the python
# with torch (it refuses any thread count but 1, and takes a second); the report's setup and twin
# sections must give its wall time and its one thread.
tapegrad_add_test(NAME examples.depth_study_torch_time_reported
  COMMAND bash -c "\"$0\" --smoke --torch on --python \"$1\" --out \"$2\" > /dev/null &&
    grep -o 'of which the PyTorch twin took [0-9:]* ([0-9.]* s, 1 thread)' \"$2/report.md\" &&
    grep -o 'Its [0-9]* runs, one after another, took [0-9:]* ([0-9.]* s, 1 thread)' \"$2/report.md\""
    $<TARGET_FILE:depth_study> ${CMAKE_CURRENT_SOURCE_DIR}/fake_torch_python.py ${CMAKE_BINARY_DIR}/examples/depth_study_fake_torch)
set_tests_properties(examples.depth_study_torch_time_reported PROPERTIES
  PASS_REGULAR_EXPRESSION "twin took [0-9]+:[0-9]+ \\([1-9][0-9.]* s, 1 thread\\).*one after another, took [0-9]+:[0-9]+ \\([1-9][0-9.]* s, 1 thread\\)")
# The same with the study's default setup: an untied head and GPT-2's init without the
# residual-projection scaling.
add_test(NAME examples.depth_study_torch_twin_untied
  COMMAND depth_study_torch_twin --python /usr/bin/python3 --seeds 1 --shared-seeds 1 --tolerance 1e-4
          --init gpt2-unscaled --head untied --dir ${CMAKE_CURRENT_BINARY_DIR}/depth_study_torch_twin_untied)
set_tests_properties(examples.depth_study_torch_twin_untied PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "TAPEGRAD_NUM_THREADS=1")
