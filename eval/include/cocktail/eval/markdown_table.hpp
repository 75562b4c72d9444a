#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cocktail::eval {

// A numeric column of a report table and how many decimals it shows.
struct TableColumn {
  std::string header;
  int decimals = 2;
};

// One row: its label (the method) and one value per column; nullopt prints as "–".
struct TableRow {
  std::string label;
  std::vector<std::optional<double>> values;
};

// A GitHub markdown table: the label column left-aligned, numbers right-aligned, '|' in text
// escaped. Throws Error naming the row whose value count differs from the columns'.
std::string render_markdown_table(const std::string& label_header,
                                  const std::vector<TableColumn>& columns,
                                  const std::vector<TableRow>& rows);

}  // namespace cocktail::eval
