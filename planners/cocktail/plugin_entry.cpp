#include "cocktail/plugin.hpp"
#include "cocktail_planner.hpp"

COCKTAIL_PLANNER_PLUGIN("cocktail", "0.1.0", "Cocktail chunk-adaptive planner (Eq. 2-3)",
                        cocktail::planners::CocktailPlanner)
