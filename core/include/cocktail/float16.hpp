#pragma once

// The compiler's IEEE binary16 type, for exact scalar conversions (round to nearest even):
// _Float16 where GCC has it in C++ (x86-64), and on Arm the ABI's __fp16, whose conversions are
// IEEE there (GCC 12 has no _Float16 in C++ for Arm).

namespace cocktail {

#if defined(__aarch64__) || defined(__arm__)
using Float16 = __fp16;
#else
using Float16 = _Float16;
#endif

}  // namespace cocktail
