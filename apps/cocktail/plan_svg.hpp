#pragma once

#include <string>

#include "cocktail/plan.hpp"

namespace cocktail::cli {

// The chunk-score strip coloured by precision, in token order (with the T_low / T_high
// thresholds) above the same chunks in storage order after reordering: the paper's Fig. 1
// and Fig. 3 as one picture.
std::string render_plan_svg(const Plan& plan, const std::string& title);

}  // namespace cocktail::cli
