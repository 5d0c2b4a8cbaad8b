# Finds braid's dependencies. Required ones fail the configure step with the Debian package to
# install; optional ones (Z3, Graphviz, libtorch, Gloo, CUDA, NCCL, jemalloc) default to "on if
# found" and are reported at the end of configuration, so a reader knows what was left out and why.
include(CMakeDependentOption)
find_package(PkgConfig)

# nlohmann-json: header-only, required (JSON dumps, machine files, timelines).
find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  find_path(BRAID_NLOHMANN_INCLUDE nlohmann/json.hpp PATHS ${CMAKE_SOURCE_DIR}/.carry/include)
  if(NOT BRAID_NLOHMANN_INCLUDE)
    message(FATAL_ERROR "nlohmann-json not found: apt-get install nlohmann-json3-dev "
                        "(or put its headers under .carry/include)")
  endif()
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${BRAID_NLOHMANN_INCLUDE})
endif()

# CLI11: header-only, required for the `braid` command.
find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  find_path(BRAID_CLI11_INCLUDE CLI/CLI.hpp PATHS ${CMAKE_SOURCE_DIR}/.carry/include)
  if(NOT BRAID_CLI11_INCLUDE)
    message(FATAL_ERROR "CLI11 not found: apt-get install libcli11-dev (or put its headers under .carry/include)")
  endif()
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${BRAID_CLI11_INCLUDE})
endif()

# Z3 (verify's SMT back end).
find_package(Z3 QUIET CONFIG)
if(NOT Z3_FOUND)
  find_path(BRAID_Z3_INCLUDE z3++.h)
  find_library(BRAID_Z3_LIB z3)
  if(BRAID_Z3_INCLUDE AND BRAID_Z3_LIB)
    set(Z3_FOUND TRUE)
  endif()
endif()
option(BRAID_WITH_Z3 "Build the Z3-based verifier" ${Z3_FOUND})
if(BRAID_WITH_Z3 AND NOT TARGET z3::libz3)
  if(NOT BRAID_Z3_LIB)
    message(FATAL_ERROR "BRAID_WITH_Z3=ON but Z3 was not found: apt-get install libz3-dev")
  endif()
  add_library(z3::libz3 UNKNOWN IMPORTED)
  set_target_properties(z3::libz3 PROPERTIES IMPORTED_LOCATION ${BRAID_Z3_LIB}
                                             INTERFACE_INCLUDE_DIRECTORIES ${BRAID_Z3_INCLUDE})
endif()

# jemalloc: the allocator of braid's programs (the `braid` command, the benchmarks). Lowering and
# verifying make and free many small objects: with glibc's malloc, lowering a 10,000-op fusion
# spends about a third of its time allocating, and jemalloc halves the whole (docs/PERFORMANCE.md).
# Off under the sanitizers, which bring their own allocator.
find_library(BRAID_JEMALLOC_LIB jemalloc PATHS ${CMAKE_SOURCE_DIR}/.carry/lib)
set(BRAID_JEMALLOC_DEFAULT OFF)
if(BRAID_JEMALLOC_LIB AND NOT BRAID_SANITIZE AND NOT BRAID_FUZZ)
  set(BRAID_JEMALLOC_DEFAULT ON)
endif()
option(BRAID_WITH_JEMALLOC "Link the braid command and the benchmarks with jemalloc" ${BRAID_JEMALLOC_DEFAULT})
if(BRAID_WITH_JEMALLOC AND NOT BRAID_JEMALLOC_LIB)
  message(FATAL_ERROR "BRAID_WITH_JEMALLOC=ON but jemalloc was not found: apt-get install libjemalloc-dev")
endif()
if(BRAID_WITH_JEMALLOC AND (BRAID_SANITIZE OR BRAID_FUZZ))
  message(FATAL_ERROR "BRAID_WITH_JEMALLOC=ON with the sanitizers: ASan needs its own allocator")
endif()

# braid_use_allocator(TARGET): link an executable with jemalloc where BRAID_WITH_JEMALLOC is on.
# A static jemalloc (.carry/lib on the GPU machines, scripts/fill-carry.sh) needs threads and dl.
function(braid_use_allocator target)
  if(BRAID_WITH_JEMALLOC)
    find_package(Threads REQUIRED)
    target_link_libraries(${target} PRIVATE ${BRAID_JEMALLOC_LIB} Threads::Threads ${CMAKE_DL_LIBS})
  endif()
endfunction()

# Graphviz (viz's layout).
set(BRAID_GRAPHVIZ_FOUND FALSE)
if(PkgConfig_FOUND)
  pkg_check_modules(GVC IMPORTED_TARGET libgvc)
  if(GVC_FOUND)
    set(BRAID_GRAPHVIZ_FOUND TRUE)
  endif()
endif()
option(BRAID_WITH_GRAPHVIZ "Render timelines with Graphviz" ${BRAID_GRAPHVIZ_FOUND})
if(BRAID_WITH_GRAPHVIZ AND NOT BRAID_GRAPHVIZ_FOUND)
  message(FATAL_ERROR "BRAID_WITH_GRAPHVIZ=ON but libgvc was not found: apt-get install libgraphviz-dev")
endif()

# libtorch (exec's evaluator). On Debian: libtorch-dev; on GPU machines: the installed PyTorch.
find_package(Torch QUIET)
option(BRAID_WITH_TORCH "Build exec's libtorch evaluator" ${Torch_FOUND})
if(BRAID_WITH_TORCH AND NOT Torch_FOUND)
  message(FATAL_ERROR "BRAID_WITH_TORCH=ON but libtorch was not found: apt-get install libtorch-dev, "
                      "or pass -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')")
endif()

# Gloo, for c10d's ProcessGroupGloo (exec's CPU collectives). ProcessGroupGloo itself lives in
# libtorch_cpu; braid needs its header (whose contents are guarded by USE_C10D_GLOO) and Gloo's
# headers. Debian ships them as libtorch-dev + libgloo-dev (libgloo.so is linked too); a PyTorch
# wheel may carry both header sets under its include directory and link Gloo statically.
set(BRAID_GLOO_FOUND FALSE)
if(Torch_FOUND)
  find_path(BRAID_C10D_GLOO_INCLUDE torch/csrc/distributed/c10d/ProcessGroupGloo.hpp
            HINTS ${TORCH_INCLUDE_DIRS})
  find_path(BRAID_GLOO_INCLUDE gloo/config.h HINTS ${TORCH_INCLUDE_DIRS})
  find_library(BRAID_GLOO_LIB gloo)
  if(BRAID_C10D_GLOO_INCLUDE AND BRAID_GLOO_INCLUDE)
    set(BRAID_GLOO_FOUND TRUE)
  endif()
endif()
cmake_dependent_option(BRAID_WITH_GLOO "Gloo collectives for exec's CPU backend" ON
                       "BRAID_WITH_TORCH;BRAID_GLOO_FOUND" OFF)

# c10d's store (TCPStore / FileStore), through which ranks exchange NCCL ids; part of libtorch,
# its headers ship with Debian's libtorch-dev and with PyTorch wheels.
set(BRAID_C10D_STORE_FOUND FALSE)
if(Torch_FOUND)
  find_path(BRAID_C10D_STORE_INCLUDE torch/csrc/distributed/c10d/TCPStore.hpp HINTS ${TORCH_INCLUDE_DIRS})
  if(BRAID_C10D_STORE_INCLUDE)
    set(BRAID_C10D_STORE_FOUND TRUE)
  endif()
endif()

# CUDA + NCCL (exec's GPU backend), only when libtorch itself has CUDA (its libc10_cuda): Debian's
# libtorch is CPU-only, so a machine with the CUDA toolkit but that libtorch builds no CUDA code.
# Only the CUDA runtime's headers and library are needed (braid compiles no kernels of its own).
set(BRAID_CUDA_FOUND FALSE)
if(Torch_FOUND)
  find_library(BRAID_C10_CUDA_LIB c10_cuda HINTS ${TORCH_INSTALL_PREFIX}/lib NO_DEFAULT_PATH)
  if(BRAID_C10_CUDA_LIB)
    find_package(CUDAToolkit QUIET)
    find_path(BRAID_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(BRAID_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(CUDAToolkit_FOUND AND BRAID_NCCL_INCLUDE AND BRAID_NCCL_LIB)
      set(BRAID_CUDA_FOUND TRUE)
    endif()
  endif()
endif()
cmake_dependent_option(BRAID_WITH_CUDA "exec's CUDA streams + NCCL backend" ON
                       "BRAID_WITH_TORCH;BRAID_CUDA_FOUND" OFF)

# Test and benchmark frameworks.
if(BRAID_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    message(FATAL_ERROR "GoogleTest not found: apt-get install libgtest-dev libgmock-dev "
                        "(or configure with -DBRAID_BUILD_TESTS=OFF)")
  endif()
  find_package(rapidcheck QUIET)
  if(NOT rapidcheck_FOUND)
    # GPU machines have no rapidcheck package: its headers and static library may be carried in
    # .carry/ (git-ignored), as nlohmann-json and CLI11 are.
    find_library(BRAID_RAPIDCHECK_LIB rapidcheck PATHS ${CMAKE_SOURCE_DIR}/.carry/lib)
    find_path(BRAID_RAPIDCHECK_INCLUDE rapidcheck.h PATHS ${CMAKE_SOURCE_DIR}/.carry/include)
    if(BRAID_RAPIDCHECK_LIB AND BRAID_RAPIDCHECK_INCLUDE)
      add_library(rapidcheck UNKNOWN IMPORTED)
      set_target_properties(rapidcheck PROPERTIES IMPORTED_LOCATION ${BRAID_RAPIDCHECK_LIB}
                                                  INTERFACE_INCLUDE_DIRECTORIES ${BRAID_RAPIDCHECK_INCLUDE})
      set(rapidcheck_FOUND TRUE)
    endif()
  endif()
  if(NOT rapidcheck_FOUND)
    message(FATAL_ERROR "rapidcheck not found: apt-get install librapidcheck-dev")
  endif()
endif()
if(BRAID_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Google Benchmark not found: bench/ is skipped (apt-get install libbenchmark-dev)")
    set(BRAID_BUILD_BENCH OFF)
  endif()
endif()

function(braid_report_features)
  message(STATUS "braid features:")
  foreach(f Z3 GRAPHVIZ TORCH GLOO CUDA JEMALLOC)
    if(BRAID_WITH_${f})
      message(STATUS "  ${f}: on")
    else()
      message(STATUS "  ${f}: OFF (disabled or not found; see cmake/BraidDependencies.cmake)")
    endif()
  endforeach()
  if(BRAID_FUZZ)
    message(STATUS "  instrumentation: ASan + UBSan + libFuzzer coverage (BRAID_FUZZ)")
  elseif(BRAID_SANITIZE)
    message(STATUS "  instrumentation: ASan + UBSan (BRAID_SANITIZE)")
  endif()
  if(BRAID_UNOPTIMIZED_TESTS)
    message(STATUS "  tests and the braid command: -O0 (BRAID_UNOPTIMIZED_TESTS)")
  endif()
endfunction()

# braid_library(NAME SOURCES... DEPS ...): one static library per folder, installed and exported.
function(braid_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(braid_${name} STATIC ${ARG_SOURCES})
  add_library(braid::${name} ALIAS braid_${name})
  set_target_properties(braid_${name} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(braid_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/braid>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(braid_${name} PRIVATE -Wall -Wextra)
  target_link_libraries(braid_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  install(TARGETS braid_${name} EXPORT braidTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/braid/${name}
          FILES_MATCHING PATTERN "*.h")
endfunction()
