// backends/cuda/src/compute/matmul_kernels.cu, compiled by the host compiler against
// tests/support/host_shim/.
#include "compute/matmul_kernels.cu"
