#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace cocktail::eval {

// Text made safe for SVG content and attribute values.
std::string xml_escape(std::string_view text);

// Builds one SVG document element by element. `attributes` is extra raw markup such as
// "class='cell'"; every text and label passed in as content is escaped here.
class SvgWriter {
 public:
  SvgWriter(double width, double height);

  void rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view attributes = {});
  void line(double x1, double y1, double x2, double y2, std::string_view attributes = {});
  void circle(double cx, double cy, double r, std::string_view fill,
              std::string_view attributes = {});
  void text(double x, double y, std::string_view content, std::string_view attributes = {});
  // Closes the document and returns it.
  std::string finish();

 private:
  std::ostringstream out_;
};

}  // namespace cocktail::eval
