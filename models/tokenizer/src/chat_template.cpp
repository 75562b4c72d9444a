#include "cocktail/models/chat_template.hpp"

#include <string>

#include "cocktail/error.hpp"
#include "quoted.hpp"

namespace cocktail::models {

namespace {

using detail::quoted;

constexpr std::string_view kStart = "<|im_start|>";
constexpr std::string_view kEnd = "<|im_end|>";

void append_turn(std::string& out, std::string_view role, std::string_view content) {
  out += kStart;
  out += role;
  out += '\n';
  out += content;
  out += kEnd;
  out += '\n';
}

// The text of a constant '<|im_start|>system\n...<|im_end|>' in the template: after
// "<|im_start|>system" and a newline (a real one or the two characters \n of a Jinja
// escape), up to <|im_end|>, holding no quote, brace or backslash (else it is built from
// expressions, not a constant).
std::optional<std::string> constant_system_prompt(std::string_view text) {
  const std::string marker = std::string(kStart) + "system";
  for (std::size_t at = text.find(marker); at != std::string_view::npos;
       at = text.find(marker, at + 1)) {
    std::string_view rest = text.substr(at + marker.size());
    if (rest.starts_with('\n')) {
      rest.remove_prefix(1);
    } else if (rest.starts_with("\\n")) {
      rest.remove_prefix(2);
    } else {
      continue;
    }
    const std::size_t end = rest.find(kEnd);
    if (end == std::string_view::npos) continue;
    const std::string_view prompt = rest.substr(0, end);
    if (prompt.find_first_of("'\"{}\\") == std::string_view::npos) return std::string(prompt);
  }
  return std::nullopt;
}

}  // namespace

ChatTemplate::ChatTemplate(std::optional<std::string> default_system)
    : default_system_(std::move(default_system)) {}

ChatTemplate ChatTemplate::from_jinja(std::string_view template_text) {
  for (const std::string_view marker : {kStart, kEnd}) {
    if (template_text.find(marker) == std::string_view::npos) {
      throw Error("chat template " + quoted(template_text) + " has no " + std::string(marker) +
                  ": only ChatML templates (<|im_start|>role\\n...<|im_end|>) are supported");
    }
  }
  return ChatTemplate(constant_system_prompt(template_text));
}

std::string ChatTemplate::render(std::span<const ChatMessage> messages,
                                 bool add_generation_prompt) const {
  std::string out;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role != "system" && m.role != "user" && m.role != "assistant") {
      throw Error("chat message " + std::to_string(i) + " has role " + quoted(m.role) +
                  "; ChatML roles are system, user and assistant");
    }
    if (i == 0 && m.role != "system" && default_system_)
      append_turn(out, "system", *default_system_);
    append_turn(out, m.role, m.content);
  }
  if (add_generation_prompt) {
    out += kStart;
    out += "assistant\n";
  }
  return out;
}

}  // namespace cocktail::models
