#include "cocktail/plugin.hpp"
#include "cpu_backend.hpp"

COCKTAIL_BACKEND_PLUGIN("cpu", "0.1.0", "Reference CPU backend (SIMD, multithreaded)",
                        cocktail::cpu::CpuBackendProvider)
