#include "cocktail/models/chat_template.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "support/error_of.hpp"

namespace cocktail::models {
namespace {

using ::cocktail::testing::error_of;
using ::testing::AllOf;
using ::testing::HasSubstr;

// tokenizer.chat_template of SmolLM2-135M-Instruct, as the GGUF holds it (real newlines inside
// the Jinja strings).
const std::string kSmolLm2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}";

const std::string kDefaultSystem =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

TEST(ChatTemplateTest, ReadsSmolLm2sDefaultSystemPrompt) {
  EXPECT_EQ(ChatTemplate::from_jinja(kSmolLm2Template).default_system(), kDefaultSystem);
}

TEST(ChatTemplateTest, RendersOneUserMessageWithTheDefaultSystemPrompt) {
  const ChatTemplate chat = ChatTemplate::from_jinja(kSmolLm2Template);
  const std::vector<ChatMessage> messages = {{"user", "What is 2+2?"}};
  EXPECT_EQ(chat.render(messages, true),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
            "Hugging Face<|im_end|>\n"
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, AGivenSystemPromptReplacesTheDefault) {
  const ChatTemplate chat = ChatTemplate::from_jinja(kSmolLm2Template);
  const std::vector<ChatMessage> messages = {
      {"system", "Answer in French."}, {"user", "Hi"}, {"assistant", "Salut !"}, {"user", "Bye"}};
  EXPECT_EQ(chat.render(messages, false),
            "<|im_start|>system\nAnswer in French.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nSalut !<|im_end|>\n"
            "<|im_start|>user\nBye<|im_end|>\n");
}

TEST(ChatTemplateTest, AnEmptyConversationGetsOnlyTheGenerationPrompt) {
  const ChatTemplate chat = ChatTemplate::from_jinja(kSmolLm2Template);
  EXPECT_EQ(chat.render({}, true), "<|im_start|>assistant\n");
  EXPECT_EQ(chat.render({}, false), "");
}

TEST(ChatTemplateTest, PlainChatMlHasNoDefaultSystemPrompt) {
  const std::string plain =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
      "{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const ChatTemplate chat = ChatTemplate::from_jinja(plain);
  EXPECT_EQ(chat.default_system(), std::nullopt);
  const std::vector<ChatMessage> messages = {{"user", "Hi"}};
  EXPECT_EQ(chat.render(messages, true), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, ReadsADefaultSystemPromptWrittenWithJinjaEscapes) {
  const std::string escaped =
      "{% if messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nBe brief.<|im_end|>\\n' "
      "}}{% endif %}{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>\\n'}}{% endfor %}";
  EXPECT_EQ(ChatTemplate::from_jinja(escaped).default_system(), "Be brief.");
}

TEST(ChatTemplateTest, ASystemTurnBuiltFromExpressionsIsNotADefault) {
  const std::string built =
      "{{ '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}";
  EXPECT_EQ(ChatTemplate::from_jinja(built).default_system(), std::nullopt);
}

TEST(ChatTemplateTest, NonChatMlTemplatesAreRejected) {
  const std::string llama3 =
      "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
      "'<|end_header_id|>\\n\\n' + message['content'] + '<|eot_id|>' }}{% endfor %}";
  EXPECT_THAT(error_of<Error>([&] { ChatTemplate::from_jinja(llama3); }),
              AllOf(HasSubstr("no <|im_start|>"), HasSubstr("only ChatML")));
  EXPECT_THAT(error_of<Error>([&] { ChatTemplate::from_jinja("<|im_start|>{{ x }}"); }),
              HasSubstr("no <|im_end|>"));
}

TEST(ChatTemplateTest, UnknownRolesAreErrors) {
  const ChatTemplate chat;
  const std::vector<ChatMessage> messages = {{"user", "Hi"}, {"bot", "Hello"}};
  EXPECT_THAT(error_of<Error>([&] { chat.render(messages, true); }),
              AllOf(HasSubstr("message 1"), HasSubstr("'bot'")));
}

TEST(ChatTemplateTest, ConstructedWithADefaultSystemPrompt) {
  const ChatTemplate chat(std::string("Be kind."));
  const std::vector<ChatMessage> messages = {{"user", "Hi"}};
  EXPECT_EQ(chat.render(messages, true),
            "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
}

}  // namespace
}  // namespace cocktail::models
