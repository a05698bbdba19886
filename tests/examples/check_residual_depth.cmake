# check_residual_depth.cmake — runs examples/residual_depth with tiny settings and checks the
# shape of what it prints: for every depth of DEPTHS a table with one row per block, each row
# a first -> last gradient norm for Post-LN, Pre-LN and B2T; then one loss line per placement
# and depth; every number finite.
#   cmake -DPROGRAM=residual_depth -DDEPTHS=1,3 "-DARGS=--steps 3 --d-model 16" -P check_residual_depth.cmake
cmake_minimum_required(VERSION 3.25)  # policy CMP0007: the list keeps the output's empty lines
set(placements Post-LN Pre-LN B2T)
string(REPLACE "," ";" depths "${DEPTHS}")
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${args} --layers ${DEPTHS} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "residual_depth exited with ${rc}")
endif()
# printf writes a non-finite double as nan, -nan, inf or -inf.
if(out MATCHES "(^|[ \n-])(nan|inf)([ \n]|$)")
  message(FATAL_ERROR "a number is not finite: '${CMAKE_MATCH_0}'")
endif()

set(number "[0-9][0-9.e+-]*")
string(REPLACE "\n" ";" lines "${out}")
# Fails unless line `index` of the output matches `regex`; `what` names the line.
function(expect_line index regex what)
  list(GET lines ${index} line)
  if(NOT line MATCHES "${regex}")
    message(FATAL_ERROR "${what}: '${line}'")
  endif()
endfunction()

foreach(depth ${depths})
  # The table's title, its header, rows 0 .. depth-1, then an empty line.
  list(FIND lines "${depth} layers: gradient norm of each block's parameters, first step -> last step" title)
  if(title EQUAL -1)
    message(FATAL_ERROR "no table for ${depth} layers")
  endif()
  math(EXPR at "${title} + 1")
  expect_line(${at} "^block +Post-LN +Pre-LN +B2T$" "${depth} layers: the header")
  math(EXPR last "${depth} - 1")
  foreach(block RANGE ${last})
    math(EXPR at "${title} + 2 + ${block}")
    set(cell "  +${number} -> +${number}")  # first -> last; CMake's regex has no {3}
    expect_line(${at} "^ *${block}${cell}${cell}${cell}$" "${depth} layers, block ${block}")
  endforeach()
  math(EXPR at "${title} + 2 + ${depth}")
  expect_line(${at} "^$" "${depth} layers: a row after the last block")
  foreach(placement ${placements})
    if(NOT out MATCHES "\n${placement} +${depth} +${number} +${number} +${number}\n")
      message(FATAL_ERROR "no loss line for ${placement} at ${depth} layers")
    endif()
  endforeach()
endforeach()
