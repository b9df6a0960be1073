//===- HostDevice.h - functions both CPU and CUDA code call -----*- C++ -*-===//
//
// DPC_HOST_DEVICE marks an inline function that the CUDA kernels call from
// device code and the CPU from host code: the ABI's window formulas and
// shape extents, and the kernels' per-element math (KernelMath.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_HOSTDEVICE_H
#define DPC_RUNTIME_ABI_HOSTDEVICE_H

#ifdef __CUDACC__
#define DPC_HOST_DEVICE __host__ __device__
#else
#define DPC_HOST_DEVICE
#endif

#endif // DPC_RUNTIME_ABI_HOSTDEVICE_H
