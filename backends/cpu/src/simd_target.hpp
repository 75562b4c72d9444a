#pragma once

#include <string>
#include <vector>

namespace cocktail::cpu {

// The Highway targets (SIMD instruction sets) this build has kernels for and this CPU can run,
// best first, by Highway's names: "AVX3_DL", "AVX3", "AVX2", "SSE4", ..., "EMU128".
std::vector<std::string> runnable_simd_targets();

// Makes every CPU kernel run on the target `name` (one of runnable_simd_targets()), or on the
// best one for "auto". Highway dispatches all kernels of the process by one choice, so this is
// process-wide: the last CPU backend configured decides. An unknown name, a target this build
// has no kernels for or one this CPU cannot run is an Error saying which, naming the runnable
// targets. The target
// the kernels run on is simd_target_name() (attention/tile_kernels.hpp).
void select_simd_target(const std::string& name);

}  // namespace cocktail::cpu
