#include "cocktail/eval/markdown_table.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cocktail/error.hpp"

namespace cocktail::eval {

namespace {

std::string cell_text(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string number(const std::optional<double>& value, int decimals) {
  if (!value || std::isnan(*value)) return "–";
  return fmt::format("{:.{}f}", *value, decimals);
}

}  // namespace

std::string render_markdown_table(const std::string& label_header,
                                  const std::vector<TableColumn>& columns,
                                  const std::vector<TableRow>& rows) {
  std::string table = "| " + cell_text(label_header) + " |";
  std::string rule = "| --- |";
  for (const TableColumn& column : columns) {
    table += " " + cell_text(column.header) + " |";
    rule += " ---: |";
  }
  table += "\n" + rule + "\n";
  for (const TableRow& row : rows) {
    if (row.values.size() != columns.size()) {
      throw Error(fmt::format("the report row \"{}\" has {} values for {} columns", row.label,
                              row.values.size(), columns.size()));
    }
    table += "| " + cell_text(row.label) + " |";
    for (std::size_t i = 0; i < columns.size(); ++i) {
      table += " " + number(row.values[i], columns[i].decimals) + " |";
    }
    table += "\n";
  }
  return table;
}

}  // namespace cocktail::eval
