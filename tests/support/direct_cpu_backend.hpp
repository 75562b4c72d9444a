#pragma once

#include <memory>

#include "cocktail/options.hpp"
#include "cpu_backend.hpp"

namespace cocktail::testing {

// The CPU backend with its default settings, made directly (no plugin registry), for tests
// that run a model on it.
inline std::shared_ptr<Backend> cpu_backend() {
  Options defaults;
  return std::make_shared<cpu::CpuBackend>(defaults);
}

}  // namespace cocktail::testing
