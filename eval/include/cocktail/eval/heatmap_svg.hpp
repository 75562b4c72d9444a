#pragma once

#include <string>

#include "cocktail/eval/results.hpp"

namespace cocktail::eval {

// One method's needle-in-a-haystack picture: a grid of needle depth (rows, start of the context
// on top) by context length (columns), each cell coloured from red (0) through yellow to green
// (1) by the mean `contains` score of the method's `kind` cases there, with the value printed.
// A grid point without a case is grey. Cells carry data-length, data-depth and data-score.
std::string render_heatmap_svg(const MethodResults& method, CaseKind kind = CaseKind::niah);

}  // namespace cocktail::eval
