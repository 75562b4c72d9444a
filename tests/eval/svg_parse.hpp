#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

namespace cocktail::testing {

// The attributes of every element `<tag ... class='klass' ...>` in an SVG, in document order,
// with the element's text content under "#text".
inline std::vector<std::map<std::string, std::string>> elements(const std::string& svg,
                                                                const std::string& tag,
                                                                const std::string& klass) {
  std::vector<std::map<std::string, std::string>> found;
  const std::regex element("<" + tag + "((?: [a-z-]+='[^']*')*)\\s*/?>([^<]*)");
  const std::regex attribute(" ([a-z-]+)='([^']*)'");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it) {
    std::map<std::string, std::string> attributes;
    const std::string list = (*it)[1];
    for (auto a = std::sregex_iterator(list.begin(), list.end(), attribute);
         a != std::sregex_iterator(); ++a) {
      attributes[(*a)[1]] = (*a)[2];
    }
    if (attributes["class"] != klass) continue;
    attributes["#text"] = (*it)[2];
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
