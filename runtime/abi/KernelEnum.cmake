# Writes Plan.fbs's `enum Kernel` from the one kernel list, Kernels.def:
# one enumerator per DPC_KERNEL row, in the list's order, numbered from 0.
# Plan.fbs includes the result, so the schema's enum and the list cannot
# disagree, and appending a row to Kernels.def appends a kernel to plans.
#
#   cmake -DKERNELS_DEF=.../Kernels.def -DOUTPUT=.../KernelEnum.fbs -P KernelEnum.cmake
cmake_minimum_required(VERSION 3.20)

file(STRINGS "${KERNELS_DEF}" rows REGEX "^DPC_KERNEL\\(")
set(enumerators "")
foreach(row IN LISTS rows)
  string(REGEX MATCH "^DPC_KERNEL\\(([A-Za-z0-9_]+)," _ "${row}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "${KERNELS_DEF}: cannot read a kernel name in: ${row}")
  endif()
  list(LENGTH enumerators value)
  string(APPEND body "  ${CMAKE_MATCH_1} = ${value},\n")
  list(APPEND enumerators "${CMAKE_MATCH_1}")
endforeach()
list(LENGTH enumerators count)
if(count EQUAL 0)
  message(FATAL_ERROR "${KERNELS_DEF}: no DPC_KERNEL rows")
endif()

set(text "// Generated from runtime/abi/Kernels.def by runtime/abi/KernelEnum.cmake.
// Do not edit: add a row to Kernels.def.

namespace dpc.plan;

// The kernels the runtime implements, in Kernels.def's order (the values
// plans hold).
enum Kernel : short {
${body}}
")
# Rewritten only when it changes, so that flatc and its dependents rerun
# only then.
file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT "${text}" @ONLY)
