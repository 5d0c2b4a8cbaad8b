# Installs braid from BUILD_DIR into a scratch prefix, then configures, builds and runs a consumer
# project that uses find_package(braid). Run by ctest (tests/CMakeLists.txt).
set(work ${BUILD_DIR}/package-test)
file(REMOVE_RECURSE ${work})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${work}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
# The package finds libtorch again (braid::exec links it): point it where this build found it.
set(torch_hint "")
if(TORCH_DIR)
  set(torch_hint -DTorch_DIR=${TORCH_DIR})
endif()
# A sanitized build (BRAID_SANITIZE or BRAID_FUZZ) installs instrumented libraries: the consumer
# links the sanitizer runtimes too, with the compiler that built them (clang's and gcc's runtimes
# differ).
set(sanitize_flags "")
if(SANITIZE)
  set(sanitize_flags -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined
                     -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/consumer -B ${work}/build -G Ninja
                        -DCMAKE_PREFIX_PATH=${work}/prefix ${torch_hint} ${sanitize_flags}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${work}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "building the consumer failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${work}/build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(rc)
  message(FATAL_ERROR "the consumer failed (${rc}):\n${out}")
endif()
