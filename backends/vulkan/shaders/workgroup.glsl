// The workgroup every kernel runs in: 128 invocations, the most every Vulkan device allows
// (maxComputeWorkGroupInvocations >= 128), and a whole number of subgroups of any size.
#define WG 128u
layout(local_size_x = 128) in;

// The invocations of all workgroups together, the step of a loop that strides over a range.
uint grid_stride() {
  return gl_NumWorkGroups.x * WG;
}
