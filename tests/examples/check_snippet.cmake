# check_snippet.cmake — fails unless DOC shows, word for word, every region of SOURCE marked
#   // snippet: NAME
#   ...
#   // end snippet
# so that the code a page shows is code that compiles and runs in a test.
# Usage: cmake -DDOC=docs/distributed.md -DSOURCE=tests/distributed/ddp_test.cpp -P check_snippet.cmake
file(READ ${DOC} doc)
file(READ ${SOURCE} source)
string(REGEX MATCHALL "// snippet: [^\n]*\n" markers "${source}")
list(LENGTH markers count)
if(count EQUAL 0)
  message(FATAL_ERROR "${SOURCE} marks no '// snippet: NAME' region")
endif()
set(rest "${source}")
foreach(marker IN LISTS markers)
  string(FIND "${rest}" "${marker}" begin)
  string(LENGTH "${marker}" marker_length)
  math(EXPR begin "${begin} + ${marker_length}")
  string(SUBSTRING "${rest}" ${begin} -1 rest)
  string(FIND "${rest}" "// end snippet" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "${SOURCE}: ${marker} has no '// end snippet'")
  endif()
  string(SUBSTRING "${rest}" 0 ${end} snippet)
  string(FIND "${doc}" "${snippet}" position)
  if(position EQUAL -1)
    string(STRIP "${marker}" name)
    message(FATAL_ERROR "${DOC} does not show the region '${name}' of ${SOURCE} as it is; copy it into the page again")
  endif()
endforeach()
message(STATUS "snippets: ${count} region(s) of ${SOURCE} shown in ${DOC}")
