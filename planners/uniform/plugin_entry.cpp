#include "cocktail/plugin.hpp"
#include "uniform_planner.hpp"

COCKTAIL_PLANNER_PLUGIN("uniform", "0.1.0",
                        "Every full context chunk at one precision (a baseline, no scoring)",
                        cocktail::planners::UniformPlanner)
