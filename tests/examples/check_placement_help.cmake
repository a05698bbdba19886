# check_placement_help.cmake — fails unless the --help of every program in PROGRAMS shows every
# placement line of `tapegrad-inspect --placements` (one per registered placement: its name
# and its formula), so a placement added to the registry reaches every command line.
# Usage: cmake -DINSPECT=tapegrad-inspect "-DPROGRAMS=a;b" -P check_placement_help.cmake
execute_process(COMMAND ${INSPECT} --placements OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${INSPECT} --placements failed (${rc})")
endif()
string(FIND "${listing}" "\nNorms:" end)
string(SUBSTRING "${listing}" 0 ${end} placements)
# The formulas hold ';', CMake's list separator: hide it while splitting into lines.
string(REPLACE ";" "<semicolon>" placements "${placements}")
string(REPLACE "\n" ";" lines "${placements}")
list(POP_FRONT lines)  # the header line
list(LENGTH lines n)
if(n LESS 1)
  message(FATAL_ERROR "tapegrad-inspect --placements listed no placement:\n${listing}")
endif()
list(LENGTH PROGRAMS n_programs)
foreach(program IN LISTS PROGRAMS)
  execute_process(COMMAND ${program} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  foreach(line IN LISTS lines)
    string(REPLACE "<semicolon>" ";" line "${line}")
    string(FIND "${help}" "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${program} --help does not show the placement line\n${line}\nIt printed:\n${help}")
    endif()
  endforeach()
endforeach()
message("placement help: ${n} placements in ${n_programs} programs")
