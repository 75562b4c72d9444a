#pragma once

#include <memory>

#include "cpu_backend.hpp"

namespace cocktail::testing {

// The CPU backend with its default settings, made directly (no plugin registry), for tests
// that run a model on it.
inline std::shared_ptr<Backend> cpu_backend() {
  return std::make_shared<cpu::CpuBackend>();
}

}  // namespace cocktail::testing
