// backends/cuda/src/compute/elementwise_kernels.cu, compiled by the host compiler against
// tests/support/host_shim/.
#include "compute/elementwise_kernels.cu"
