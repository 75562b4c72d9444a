#pragma once

#include <map>
#include <string>
#include <vector>

namespace cocktail::testing {

// The name='value' attributes of one start tag's inside.
inline std::map<std::string, std::string> attributes_of(const std::string& inside) {
  std::map<std::string, std::string> attributes;
  std::size_t at = 0;
  while ((at = inside.find("='", at)) != std::string::npos) {
    const std::size_t name_begin = inside.rfind(' ', at) + 1;
    const std::size_t value_end = inside.find('\'', at + 2);
    if (value_end == std::string::npos) break;
    attributes[inside.substr(name_begin, at - name_begin)] =
        inside.substr(at + 2, value_end - at - 2);
    at = value_end + 1;
  }
  return attributes;
}

// The attributes of every element `<tag ... class='klass' ...>` in an SVG, in document order,
// with the element's text content under "#text". (Plain string scanning: the SVG writer puts
// attribute values in single quotes and escapes '<', '>' and quotes inside them.)
inline std::vector<std::map<std::string, std::string>> elements(const std::string& svg,
                                                                const std::string& tag,
                                                                const std::string& klass) {
  std::vector<std::map<std::string, std::string>> found;
  const std::string open = "<" + tag;
  for (std::size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    const std::size_t after = at + open.size();
    if (after >= svg.size() || (svg[after] != ' ' && svg[after] != '>' && svg[after] != '/')) {
      continue;
    }
    const std::size_t close = svg.find('>', after);
    if (close == std::string::npos) break;
    std::map<std::string, std::string> attributes = attributes_of(svg.substr(after, close - after));
    if (attributes["class"] != klass) continue;
    const std::size_t text_end = svg.find('<', close + 1);
    attributes["#text"] = svg.substr(close + 1, text_end - close - 1);
    found.push_back(attributes);
  }
  return found;
}

// The text contents of the elements `elements()` finds.
inline std::vector<std::string> texts(const std::string& svg, const std::string& klass) {
  std::vector<std::string> out;
  for (auto& e : elements(svg, "text", klass)) out.push_back(e["#text"]);
  return out;
}

}  // namespace cocktail::testing
