#include "cocktail/eval/svg_writer.hpp"

#include <fmt/format.h>

namespace cocktail::eval {

namespace {

// Coordinates to a tenth of a pixel keep the files small and diffs stable.
std::string px(double v) {
  return fmt::format("{:.1f}", v);
}

std::string with_space(std::string_view attributes) {
  return attributes.empty() ? std::string() : " " + std::string(attributes);
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SvgWriter::SvgWriter(double width, double height) {
  out_ << "<svg xmlns='http://www.w3.org/2000/svg' width='" << px(width) << "' height='"
       << px(height) << "' font-family='sans-serif' font-size='12'>\n"
       << "<rect width='100%' height='100%' fill='white'/>\n";
}

void SvgWriter::rect(double x, double y, double w, double h, std::string_view fill,
                     std::string_view attributes) {
  out_ << "<rect x='" << px(x) << "' y='" << px(y) << "' width='" << px(w) << "' height='" << px(h)
       << "' fill='" << fill << "'" << with_space(attributes) << "/>\n";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view attributes) {
  out_ << "<line x1='" << px(x1) << "' y1='" << px(y1) << "' x2='" << px(x2) << "' y2='" << px(y2)
       << "' stroke='black'" << with_space(attributes) << "/>\n";
}

void SvgWriter::circle(double cx, double cy, double r, std::string_view fill,
                       std::string_view attributes) {
  out_ << "<circle cx='" << px(cx) << "' cy='" << px(cy) << "' r='" << px(r) << "' fill='" << fill
       << "'" << with_space(attributes) << "/>\n";
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view attributes) {
  out_ << "<text x='" << px(x) << "' y='" << px(y) << "'" << with_space(attributes) << ">"
       << xml_escape(content) << "</text>\n";
}

std::string SvgWriter::finish() {
  out_ << "</svg>\n";
  return out_.str();
}

}  // namespace cocktail::eval
