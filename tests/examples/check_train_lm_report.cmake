# check_train_lm_report.cmake — fails unless HTML is a train_lm live report (live_report.hpp)
# whose charts cover steps 1 to LAST: its summary line, its five charts and their series.
# Usage: cmake -DHTML=a.html -DLAST=40 -DEVALS=3 -P check_train_lm_report.cmake
if(NOT EXISTS ${HTML})
  message(FATAL_ERROR "no live report ${HTML}: train_lm writes it at every evaluation (--report)")
endif()
file(READ ${HTML} page)
set(expected
  "The charts cover steps 1 to ${LAST}: the training loss at ${LAST} steps, the validation loss at ${EVALS} evaluations"
  ">Loss</text>" ">Learning rate</text>" ">Global gradient norm, before clipping</text>"
  ">Training tokens per second</text>" ">Gradient norm of each block, before clipping</text>"
  ">training</text>" ">training, smoothed</text>" ">validation</text>" ">block 0</text>"
  "stroke-opacity=\"0.35\"" "<td>steps</td><td>${LAST} of ")
foreach(text IN LISTS expected)
  string(FIND "${page}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${HTML} lacks '${text}'")
  endif()
endforeach()
string(REGEX MATCHALL "<svg " charts "${page}")
list(LENGTH charts n)
if(NOT n EQUAL 5)
  message(FATAL_ERROR "${HTML} has ${n} charts, not 5")
endif()
message(STATUS "live report: ${HTML} covers steps 1 to ${LAST} in 5 charts")
