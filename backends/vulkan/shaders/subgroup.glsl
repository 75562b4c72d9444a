// Work split by subgroups, whatever their size (8 on lavapipe, 32 on NVIDIA, 32 or 64 on AMD,
// 8 to 32 on Intel): each subgroup takes one item (a row) at a time, its invocations stride
// over the item's elements and gather them with subgroup arithmetic. No barrier: on CPU
// drivers (lavapipe) a workgroup barrier switches between all the workgroup's invocations,
// which made the shared-memory reductions of these kernels tens of times slower.
// Include workgroup.glsl first.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require

// This subgroup's index among all subgroups of the dispatch, and their number: the start and
// step of a loop over items.
uint first_item() {
  return gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
}
uint item_stride() {
  return gl_NumWorkGroups.x * gl_NumSubgroups;
}

// The subgroup's invocations that run, and this one's rank among them: the step and start of
// a loop over an item's elements. Counted rather than taken from gl_SubgroupSize, since a
// device that does not promise full subgroups may run some partial. Call in uniform control
// flow, before any branch.
uint subgroup_lanes() {
  return subgroupBallotBitCount(subgroupBallot(true));
}
uint subgroup_lane() {
  return subgroupBallotExclusiveBitCount(subgroupBallot(true));
}
