// Sum and max over the workgroup in shared memory, for any subgroup size (8 on lavapipe, 32 on
// NVIDIA, 64 on AMD). Every invocation of the workgroup must call them, in uniform control
// flow: they hold barriers. Include workgroup.glsl first.
shared float reduce_scratch[WG];

float workgroup_sum(float value) {
  const uint i = gl_LocalInvocationIndex;
  reduce_scratch[i] = value;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (i < s) reduce_scratch[i] += reduce_scratch[i + s];
    barrier();
  }
  const float total = reduce_scratch[0];
  barrier();  // every invocation has read it before the next call writes
  return total;
}

float workgroup_max(float value) {
  const uint i = gl_LocalInvocationIndex;
  reduce_scratch[i] = value;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (i < s) reduce_scratch[i] = max(reduce_scratch[i], reduce_scratch[i + s]);
    barrier();
  }
  const float highest = reduce_scratch[0];
  barrier();
  return highest;
}
