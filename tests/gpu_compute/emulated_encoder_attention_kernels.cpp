// backends/cuda/src/compute/encoder_attention_kernels.cu, compiled by the host compiler against
// tests/support/host_shim/.
#include "compute/encoder_attention_kernels.cu"
