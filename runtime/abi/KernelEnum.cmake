# Writes Plan.fbs's `enum Kernel` from the one kernel list, Kernels.def:
# one enumerator per DPC_KERNEL row and two (NameForward, NameBackward) per
# DPC_INPUT_ACTIVATION row, in the list's order, numbered from 0.
# Plan.fbs includes the result, so the schema's enum and the list cannot
# disagree, and appending a row to Kernels.def appends a kernel to plans.
#
#   cmake -DKERNELS_DEF=.../Kernels.def -DOUTPUT=.../KernelEnum.fbs -P KernelEnum.cmake
cmake_minimum_required(VERSION 3.20)

file(STRINGS "${KERNELS_DEF}" rows
     REGEX "^(DPC_KERNEL|DPC_INPUT_ACTIVATION)\\(")
set(enumerators "")
foreach(row IN LISTS rows)
  set(names "")
  if(row MATCHES "^DPC_KERNEL\\(([A-Za-z0-9_]+),")
    set(names "${CMAKE_MATCH_1}")
  elseif(row MATCHES "^DPC_INPUT_ACTIVATION\\(([A-Za-z0-9_]+)\\)")
    set(names "${CMAKE_MATCH_1}Forward" "${CMAKE_MATCH_1}Backward")
  else()
    message(FATAL_ERROR "${KERNELS_DEF}: cannot read a kernel name in: ${row}")
  endif()
  foreach(name IN LISTS names)
    list(LENGTH enumerators value)
    string(APPEND body "  ${name} = ${value},\n")
    list(APPEND enumerators "${name}")
  endforeach()
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
