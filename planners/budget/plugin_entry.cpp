#include "budget_planner.hpp"
#include "cocktail/plugin.hpp"

COCKTAIL_PLANNER_PLUGIN("budget", "0.1.0",
                        "Precisions by score rank to meet a target of average bits or KV bytes",
                        cocktail::planners::BudgetPlanner)
