#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cocktail::cpu {

// Makes every CPU kernel run on the Highway target (SIMD instruction set) `name` ("AVX3_DL",
// "AVX2", "SSE4", ...: one this build has kernels for and this CPU runs), or on the best one for
// "auto". Highway dispatches all kernels of the process by one choice, so this is process-wide:
// the last CPU backend configured decides. An unknown name, a target this build has no kernels
// for or one this CPU cannot run is an Error saying which, naming the runnable targets. The
// target the kernels run on is simd_target_name() (attention/tile_kernels.hpp).
void select_simd_target(const std::string& name);

// Highway's bits of the targets this build has kernels for and this CPU runs, best first.
const std::vector<std::int64_t>& runnable_simd_targets();

}  // namespace cocktail::cpu
