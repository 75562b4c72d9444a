#pragma once

#include <cstdint>

namespace cocktail {

// The plugin ABI: a plugin built against another major version is refused; a newer minor
// only adds fields at the end of the descriptor (checked through its struct_size).
inline constexpr std::uint32_t kAbiMajor = 8;
inline constexpr std::uint32_t kAbiMinor = 0;

inline constexpr const char* kVersion = "0.1.0";

}  // namespace cocktail
