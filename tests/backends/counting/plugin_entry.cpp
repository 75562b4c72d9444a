#include "cocktail/plugin.hpp"
#include "counting_backend.hpp"

COCKTAIL_BACKEND_PLUGIN("test-counting", "0.1.0",
                        "Test backend: the CPU's kernels behind counted host-device copies",
                        cocktail::testing::CountingBackendProvider)
