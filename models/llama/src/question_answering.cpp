#include "cocktail/models/question_answering.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include "cocktail/error.hpp"
#include "cocktail/models/token_sampler.hpp"
#include "cocktail/models/utf8_stream.hpp"
#include "cocktail/stopwatch.hpp"

namespace cocktail::models {
namespace {

std::size_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return std::size_t(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

void append(std::vector<TokenId>& to, const std::vector<TokenId>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

QuestionAnswerer::QuestionAnswerer(const Engine& engine, const LlamaModel& model,
                                   const ModelSettings& settings)
    : engine_(engine),
      model_(model),
      settings_(settings),
      weights_(model, engine.backend().make_compute()) {}

QuestionPrompt build_prompt(const LlamaModel& model, const Question& q) {
  const BpeTokenizer& tokenizer = model.tokenizer();
  const std::int64_t limit = model.hparams().context_length;
  if (q.question.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw Error("the question is empty");
  }
  if (q.max_new_tokens < 1 || q.max_new_tokens >= limit) {
    throw Error(
        fmt::format("max new tokens = {} is out of range; allowed: 1 to {} (the model's "
                    "context length is {})",
                    q.max_new_tokens, limit - 1, limit));
  }
  // Render the turn around a marker to find where the context sits in the template's text.
  const std::string marker = "\x01context\x01";
  const std::vector<ChatMessage> turn = {{"user", marker}};
  const std::string text = model.chat_template().render(turn, true);
  const std::size_t at = text.find(marker);
  QuestionPrompt p;
  p.planned = tokenizer.encode(text.substr(0, at), true);
  p.header_tokens = std::int64_t(p.planned.size());
  std::vector<TokenId> context = tokenizer.encode(q.context, false);
  if (q.context_token_limit > 0 && std::int64_t(context.size()) > q.context_token_limit) {
    context.resize(std::size_t(q.context_token_limit));
  }
  p.rest = tokenizer.encode("\n\n" + q.question, false);
  append(p.rest, tokenizer.encode(text.substr(at + marker.size()), true));

  const std::int64_t room =
      limit - q.max_new_tokens - std::int64_t(p.planned.size() + p.rest.size());
  if (std::int64_t(context.size()) > room) {
    if (!q.truncate_context || room <= 0) {
      throw Error(
          fmt::format("the prompt needs {} tokens and the answer up to {}, more than the "
                      "model's context length of {}; shorten the context, lower "
                      "--max-tokens, or pass --truncate-context",
                      p.planned.size() + context.size() + p.rest.size(), q.max_new_tokens, limit));
    }
    context.resize(std::size_t(room));
    p.truncated = true;
  }
  append(p.planned, context);
  return p;
}

Answer QuestionAnswerer::answer(const Question& question, const Callbacks& callbacks) const {
  const QuestionPrompt prompt = build_prompt(model_, question);
  const BpeTokenizer& tokenizer = model_.tokenizer();
  const LlamaHyperparameters& h = model_.hparams();
  const KvShape shape = h.kv_shape();
  const auto prompt_tokens = std::int64_t(prompt.planned.size() + prompt.rest.size());
  Session session = engine_.new_session(shape, prompt_tokens + question.max_new_tokens);
  LlamaRunner runner(weights_, settings_.prefill_block);
  std::vector<float> logits(std::size_t(h.n_vocab));

  Answer answer;
  AnswerStats& stats = answer.stats;
  stats.prompt_tokens = prompt_tokens;
  stats.context_tokens = std::int64_t(prompt.planned.size());
  stats.context_truncated = prompt.truncated;

  std::vector<TokenId> all = prompt.planned;
  append(all, prompt.rest);
  const auto n_planned = std::int64_t(prompt.planned.size());
  const std::vector<int> attention_layers = engine_.scorer().query_attention_layers(h.n_layers);
  const bool collect_attention = !attention_layers.empty();
  if (collect_attention) runner.capture_queries(n_planned, attention_layers);
  Stopwatch watch;
  runner.prefill(session, all, logits, callbacks.prefill_progress);
  stats.prefill_s = watch.seconds();

  // Planning time includes reading the query's attention: it is the attention scorer's cost.
  watch.restart();
  std::vector<std::string> texts;
  texts.reserve(prompt.planned.size());
  for (const TokenId id : prompt.planned) texts.emplace_back(tokenizer.token_piece(id, true));
  const QueryAttention attention =
      collect_attention ? runner.query_attention(session, n_planned, attention_layers)
                        : QueryAttention{};
  answer.plan =
      session.plan_and_commit(texts, question.question, collect_attention ? &attention : nullptr);
  stats.plan_s = watch.seconds();

  TokenSampler sampler(settings_.temperature, settings_.top_p, settings_.seed);
  Utf8Stream stream;
  for (int i = 0; i < question.max_new_tokens; ++i) {
    const TokenId next = sampler.next(logits);
    const bool end_of_turn = tokenizer.vocabulary().types[std::size_t(next)] == TokenType::control;
    if (end_of_turn && question.stop_at_end_of_turn) break;
    answer.tokens.push_back(next);
    const std::string text = stream.push(tokenizer.token_piece(next, false));
    answer.text += text;
    if (callbacks.on_text && !text.empty()) callbacks.on_text(text);
    if (i + 1 == question.max_new_tokens) break;
    runner.step(session, next, logits);
  }
  const std::string rest = stream.finish();
  answer.text += rest;
  if (callbacks.on_text && !rest.empty()) callbacks.on_text(rest);

  stats.generated_tokens = std::int64_t(answer.tokens.size());
  stats.decode = runner.decode_times();
  for (const ChunkPlan& c : answer.plan.chunks) ++stats.chunks_per_precision[c.precision];
  stats.kv_bytes = session.store().bytes();
  const std::int64_t stored = session.store().n_tokens();
  stats.fp16_kv_bytes = shape.fp16_bytes(stored);
  stats.avg_bits = stored > 0 ? 16.0 * double(stats.kv_bytes) / double(stats.fp16_kv_bytes) : 0.0;
  stats.peak_rss_bytes = peak_rss_bytes();
  return answer;
}

}  // namespace cocktail::models
