#include "cocktail/plugin.hpp"
#include "recency_planner.hpp"

COCKTAIL_PLANNER_PLUGIN("recency", "0.1.0",
                        "Attention sinks and recent tokens FP16, older tokens INT8 then INT4",
                        cocktail::planners::RecencyPlanner)
