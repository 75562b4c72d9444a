#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cocktail::models {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// A ChatML chat template, the form of SmolLM2-Instruct's tokenizer.chat_template:
//
//   <|im_start|>system\n{default system prompt}<|im_end|>\n   (when the first message is not
//                                                               a system message)
//   <|im_start|>{role}\n{content}<|im_end|>\n                  (each message)
//   <|im_start|>assistant\n                                    (the generation prompt)
//
// The rendered text holds the markers as text: encode it with parse_special so they become
// their control tokens.
class ChatTemplate {
 public:
  // Plain ChatML, with the system prompt to use when the conversation has none.
  explicit ChatTemplate(std::optional<std::string> default_system = std::nullopt);

  // Recognises a tokenizer.chat_template text by its ChatML markers (<|im_start|> and
  // <|im_end|>) and reads its default system prompt: a constant
  // '<|im_start|>system\n...<|im_end|>' string in the template, if it has one. Other Jinja
  // logic is not interpreted. Throws cocktail::Error for a template without the markers,
  // naming what it lacks and that only ChatML is supported.
  static ChatTemplate from_jinja(std::string_view template_text);

  const std::optional<std::string>& default_system() const { return default_system_; }

  // The conversation as the template renders it; add_generation_prompt opens the assistant's
  // turn. As in the Jinja template, the default system prompt goes before a first message
  // that is not a system message, and an empty conversation gets none. Throws for a role
  // other than system, user or assistant, naming the message.
  std::string render(std::span<const ChatMessage> messages, bool add_generation_prompt) const;

 private:
  std::optional<std::string> default_system_;
};

}  // namespace cocktail::models
