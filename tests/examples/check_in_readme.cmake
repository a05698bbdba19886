# check_in_readme.cmake — fails unless README contains the file EXAMPLE word for word.
# Usage: cmake -DREADME=README.md -DEXAMPLE=examples/quickstart.cpp -P check_in_readme.cmake
file(READ ${README} readme)
file(READ ${EXAMPLE} example)
string(FIND "${readme}" "${example}" position)
if(position EQUAL -1)
  message(FATAL_ERROR "${README} does not show ${EXAMPLE} as it is; copy the file into it again")
endif()
