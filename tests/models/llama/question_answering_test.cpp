// QuestionAnswerer on the real model (scripts/fetch-models): an answer decoded token by token is
// the whole answer, also while another answer with another cache decodes between its tokens on
// the same weights (as `cocktail bench decode` runs them).

#include "cocktail/models/question_answering.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/models/llama_model.hpp"
#include "cocktail/models/model_settings.hpp"
#include "real_model_test.hpp"

namespace cocktail::models {
namespace {

Engine engine_with(const std::string& planner_section) {
  return Engine(parse_config("[engine]\nbackend = \"cpu\"\nscorer = \"bm25\"\n" + planner_section,
                             "question_answering_test.toml"));
}

Question long_question() {
  Question q;
  for (int i = 0; i < 12; ++i) {
    q.context += "The ferry to the island leaves at " + std::to_string(6 + i) +
                 " o'clock from the north pier, and the crossing takes forty minutes. ";
  }
  q.context += "The lighthouse keeper's cat is called Marmalade. ";
  q.question = "What is the lighthouse keeper's cat called?";
  q.max_new_tokens = 8;
  q.stop_at_end_of_turn = false;
  return q;
}

using QuestionAnsweringTest = RealModelTest<>;

TEST_F(QuestionAnsweringTest, TokenByTokenIsTheWholeAnswerEvenInterleavedWithAnother) {
  const Engine cocktail = engine_with("planner = \"cocktail\"\n");
  const Engine fp16 =
      engine_with("planner = \"uniform\"\n[planner.uniform]\nprecision = \"fp16\"\n");
  const QuestionAnswerer mixed(cocktail, *model_, ModelSettings{});
  const QuestionAnswerer full(fp16, mixed.weights(), ModelSettings{});
  const Question question = long_question();
  const Answer mixed_whole = mixed.answer(question);
  const Answer full_whole = full.answer(question);
  ASSERT_EQ(mixed_whole.tokens.size(), 8u);
  ASSERT_GT(mixed_whole.plan.chunks.size(), 1u);

  AnswerInProgress a = mixed.start(question);
  AnswerInProgress b = full.start(question);
  int steps = 0;
  while (a.next_token()) {
    ++steps;
    EXPECT_TRUE(b.next_token());
  }
  EXPECT_EQ(steps, 8);
  EXPECT_TRUE(a.done());
  EXPECT_FALSE(b.next_token());
  const Answer mixed_steps = std::move(a).finish();
  const Answer full_steps = std::move(b).finish();
  EXPECT_EQ(mixed_steps.tokens, mixed_whole.tokens);
  EXPECT_EQ(mixed_steps.text, mixed_whole.text);
  EXPECT_EQ(full_steps.tokens, full_whole.tokens);
  EXPECT_EQ(mixed_steps.stats.cache.kv_bytes, mixed_whole.stats.cache.kv_bytes);
  EXPECT_LT(mixed_steps.stats.cache.kv_bytes, full_steps.stats.cache.kv_bytes);
  EXPECT_EQ(mixed_steps.stats.decode.steps, 7);  // the last token is not fed back
}

}  // namespace
}  // namespace cocktail::models
