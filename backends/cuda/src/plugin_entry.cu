#include "cocktail/plugin.hpp"
#include "gpu_backend.hpp"
#include "gpu_targets.hpp"

#if defined(COCKTAIL_GPU_HIP)
COCKTAIL_BACKEND_PLUGIN("hip", "0.1.0", "AMD GPUs through HIP (code for " COCKTAIL_GPU_TARGETS ")",
                        cocktail::gpu::GpuBackendProvider)
#else
COCKTAIL_BACKEND_PLUGIN("cuda", "0.1.0",
                        "NVIDIA GPUs through CUDA (code for " COCKTAIL_GPU_TARGETS ")",
                        cocktail::gpu::GpuBackendProvider)
#endif
