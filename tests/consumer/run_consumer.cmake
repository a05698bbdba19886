# run_consumer.cmake — the install test, run by ctest as `cmake -P`:
#   1. cmake --install <tapegrad build> --prefix <WORK_DIR>/prefix
#   2. configure and build tests/consumer against that prefix only (CMAKE_PREFIX_PATH)
#   3. run the consumer, which checks a gradient and exits non-zero if it is wrong;
#      with EXPECT_DISTRIBUTED (tapegrad built with MPI), also the tapegrad::distributed one.
# Inputs (-D): TAPEGRAD_BUILD_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, CMAKE_CXX_COMPILER, EXPECT_DISTRIBUTED.
cmake_minimum_required(VERSION 3.25)

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})

execute_process(COMMAND ${CMAKE_COMMAND} --install ${TAPEGRAD_BUILD_DIR} --prefix ${prefix}
                OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${build}
                  -DCMAKE_BUILD_TYPE=Release
                  -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
                  -DCMAKE_PREFIX_PATH=${prefix}
                  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
                  -DEXPECT_DISTRIBUTED=${EXPECT_DISTRIBUTED}
                COMMAND_ERROR_IS_FATAL ANY)

# The package must come from the scratch prefix, not from the build tree or the system.
file(STRINGS ${build}/CMakeCache.txt found_dir REGEX "^tapegrad_DIR:")
if(NOT found_dir MATCHES "=${prefix}/")
  message(FATAL_ERROR "find_package(tapegrad) did not use the installed copy: ${found_dir}")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${build}/tapegrad_consumer COMMAND_ERROR_IS_FATAL ANY)
if(EXPECT_DISTRIBUTED)
  # No leak check: Open MPI keeps what MPI_Init allocates (see tapegrad_mpi_tests).
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LSAN_OPTIONS=detect_leaks=0 ${build}/tapegrad_consumer_distributed
                  COMMAND_ERROR_IS_FATAL ANY)
endif()
