# check_file_lines.cmake — fails unless FILE has, for each of LINE1, LINE2, ... (up to LINE9),
# a line that matches that regular expression.
#   cmake -DFILE=run.csv "-DLINE1=^step,loss" "-DLINE2=^15,.*,loss$" -P check_file_lines.cmake
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} does not exist")
endif()
foreach(i RANGE 1 9)
  if(NOT DEFINED LINE${i})
    continue()
  endif()
  file(STRINGS "${FILE}" matching REGEX "${LINE${i}}")
  if(NOT matching)
    message(FATAL_ERROR "${FILE} has no line matching '${LINE${i}}'")
  endif()
endforeach()
