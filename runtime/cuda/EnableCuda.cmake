# Decides whether the CUDA backend is built (DPC_ENABLE_CUDA, ON by default
# when nvcc is found) and, if so, enables the CUDA language. Included from the
# top directory common to every target that links the backend (the project
# root, or runtime/ when it is built on its own): enable_language must be
# called there.
include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
   AND EXISTS /usr/local/cuda/bin/nvcc)
  # The toolkit's usual place, when nvcc is not on PATH.
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
set(DPC_CUDA_DEFAULT OFF)
if(CMAKE_CUDA_COMPILER)
  set(DPC_CUDA_DEFAULT ON)
endif()
option(DPC_ENABLE_CUDA "Build the CUDA backend (cuda:K devices)"
       ${DPC_CUDA_DEFAULT})

if(DPC_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "DPC_ENABLE_CUDA is ON but no CUDA compiler was found")
  endif()
  # Ampere and Hopper; `native` fails to configure on a machine without GPU.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  # Shared cudart: binaries start without a driver and report no GPU.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  find_program(DPC_CCACHE ccache)
  if(DPC_CCACHE)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${DPC_CCACHE})
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "dpc: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "dpc: CUDA backend OFF")
endif()
