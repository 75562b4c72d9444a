#pragma once

// The CUDA names the backend uses, mapped to HIP's (HIP 5.2, Debian's libamdhip64), so that one
// kernel source builds both plugins. Included by vendor/gpu_runtime.hpp when COCKTAIL_GPU_HIP is
// defined; never directly. A name the code needs and this header lacks: one line in its section.
// Where HIP's signature differs from CUDA's, a small inline function takes CUDA's and calls HIP's.

#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

// ---- errors ----
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorInsufficientDriver hipErrorInsufficientDriver
#define cudaErrorInvalidDeviceFunction hipErrorInvalidDeviceFunction
#define cudaErrorInvalidValue hipErrorInvalidValue
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorNoDevice hipErrorNoDevice
#define cudaErrorNoKernelImageForDevice hipErrorNoBinaryForGpu
#define cudaErrorNotReady hipErrorNotReady
#define cudaErrorStreamCaptureUnsupported hipErrorStreamCaptureUnsupported
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaPeekAtLastError hipPeekAtLastError

// ---- devices ----
#define cudaDeviceProp hipDeviceProp_t
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaMemGetInfo hipMemGetInfo
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaSetDevice hipSetDevice

// ---- memory ----
#define cudaFree hipFree
#define cudaMalloc hipMalloc
#define cudaMemcpy hipMemcpy
#define cudaMemcpy2DAsync hipMemcpy2DAsync
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyDefault hipMemcpyDefault
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyKind hipMemcpyKind
#define cudaMemoryTypeDevice hipMemoryTypeDevice
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync

// HIP 5.2 names the memory type `memoryType` where CUDA says `type`, and fails on memory it does
// not know where CUDA reports it unregistered.
struct cudaPointerAttributes {
  hipMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};
inline hipError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* pointer) {
  hipPointerAttribute_t hip{};
  const hipError_t status = hipPointerGetAttributes(&hip, pointer);
  *attributes = {hip.memoryType, hip.device, hip.devicePointer, hip.hostPointer};
  return status;
}

// ---- streams and events ----
#define cudaEventCreate hipEventCreate
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDefault hipEventDefault
#define cudaEventDestroy hipEventDestroy
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventQuery hipEventQuery
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEvent_t hipEvent_t
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamGetFlags hipStreamGetFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamQuery hipStreamQuery
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaStream_t hipStream_t

// ---- kernels ----
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define cudaFuncAttributes hipFuncAttributes
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define __grid_constant__

// HIP 5.2 takes the kernel as `const void*` where CUDA has templates taking the kernel itself.
template <class Kernel>
inline hipError_t cudaFuncGetAttributes(hipFuncAttributes* attributes, Kernel* kernel) {
  return hipFuncGetAttributes(attributes, reinterpret_cast<const void*>(kernel));
}
template <class Kernel>
inline hipError_t cudaFuncSetAttribute(Kernel* kernel, hipFuncAttribute attribute, int value) {
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), attribute, value);
}

// ---- graphs ----
#define cudaGraphDestroy hipGraphDestroy
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphExecUpdateSuccess hipGraphExecUpdateSuccess
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraph_t hipGraph_t
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamCaptureModeGlobal hipStreamCaptureModeGlobal
#define cudaStreamCaptureModeRelaxed hipStreamCaptureModeRelaxed
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaStreamCaptureStatus hipStreamCaptureStatus
#define cudaStreamCaptureStatusActive hipStreamCaptureStatusActive
#define cudaStreamCaptureStatusNone hipStreamCaptureStatusNone
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamIsCapturing hipStreamIsCapturing

// CUDA 12's forms of the calls whose signatures HIP 5.2 keeps from CUDA 11: instantiation takes
// flags (HIP has none, so only 0), and an update reports into one struct.
inline hipError_t cudaGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph,
                                       unsigned long long flags = 0) {
  if (flags != 0) return hipErrorInvalidValue;
  return hipGraphInstantiate(exec, graph, nullptr, nullptr, 0);
}
struct cudaGraphExecUpdateResultInfo {
  hipGraphExecUpdateResult result;
  hipGraphNode_t errorNode;
  hipGraphNode_t errorFromNode;
};
inline hipError_t cudaGraphExecUpdate(hipGraphExec_t exec, hipGraph_t graph,
                                      cudaGraphExecUpdateResultInfo* info) {
  info->errorFromNode = nullptr;
  return hipGraphExecUpdate(exec, graph, &info->errorNode, &info->result);
}

// ---- warp functions ----
// HIP 5.2 has no *_sync forms; its lanes of a wavefront run in lockstep, so the mask has nothing
// to say. The width is required: HIP's default is the wavefront (64 lanes on CDNA), CUDA's the
// 32-lane warp, and the kernels reduce over groups of kLanes = 32.
template <class T>
__device__ inline T __shfl_sync(unsigned /*mask*/, T var, int src_lane, int width) {
  return __shfl(var, src_lane, width);
}
template <class T>
__device__ inline T __shfl_xor_sync(unsigned /*mask*/, T var, int lane_mask, int width) {
  return __shfl_xor(var, lane_mask, width);
}
template <class T>
__device__ inline T __shfl_down_sync(unsigned /*mask*/, T var, unsigned delta, int width) {
  return __shfl_down(var, delta, width);
}
template <class T>
__device__ inline T __shfl_up_sync(unsigned /*mask*/, T var, unsigned delta, int width) {
  return __shfl_up(var, delta, width);
}
#define __all_sync(mask, predicate) __all(predicate)
#define __any_sync(mask, predicate) __any(predicate)
// Lanes of a wavefront do not drift apart, but their shared-memory writes must still be made
// visible to each other before the next read.
__device__ inline void __syncwarp(unsigned /*mask*/ = 0xffffffffu) {
  __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "wavefront");
  __builtin_amdgcn_wave_barrier();
}

// ---- half precision ----
// hip_fp16.h defines CUDA's names: __half, __half2, __float2half, __half2float, __float2half_rn,
// __halves2half2, __half22float2, __float22half2_rn, __low2float, __high2float, __hadd, __hmul,
// __hfma, ..., and the short names half and half2.
