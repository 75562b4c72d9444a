// backends/cuda/src/compute/norm_kernels.cu, compiled by the host compiler against
// tests/support/host_shim/.
#include "compute/norm_kernels.cu"
