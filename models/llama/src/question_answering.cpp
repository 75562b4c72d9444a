#include "cocktail/models/question_answering.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include "cocktail/error.hpp"
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

// A session the prompt and the longest answer fit in.
Session session_for(const Engine& engine, const LlamaModel& model, const QuestionPrompt& prompt,
                    const Question& question) {
  return engine.new_session(model.hparams().kv_shape(), prompt.tokens() + question.max_new_tokens);
}

}  // namespace

QuestionAnswerer::QuestionAnswerer(const Engine& engine, const LlamaModel& model,
                                   const ModelSettings& settings)
    : QuestionAnswerer(engine, std::make_shared<const LlamaWeights>(model, engine.backend()),
                       settings) {}

QuestionAnswerer::QuestionAnswerer(const Engine& engine,
                                   std::shared_ptr<const LlamaWeights> weights,
                                   const ModelSettings& settings)
    : engine_(engine), weights_(std::move(weights)), settings_(settings) {
  const std::string_view backend = engine.backend()->name();
  if (weights_->backend().name() != backend) {
    throw Error(fmt::format("the model's weights were uploaded to the {} backend, not {}",
                            weights_->backend().name(), backend));
  }
}

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
  AnswerInProgress answer = start(question, callbacks);
  while (answer.next_token()) {
  }
  return std::move(answer).finish();
}

AnswerInProgress QuestionAnswerer::start(const Question& question, Callbacks callbacks) const {
  return AnswerInProgress(*this, question, std::move(callbacks), build_prompt(model(), question));
}

AnswerInProgress::AnswerInProgress(const QuestionAnswerer& answerer, const Question& question,
                                   AnswerCallbacks callbacks, const QuestionPrompt& prompt)
    : answerer_(answerer),
      max_new_tokens_(question.max_new_tokens),
      stop_at_end_of_turn_(question.stop_at_end_of_turn),
      callbacks_(std::move(callbacks)),
      session_(session_for(answerer.engine_, answerer.model(), prompt, question)),
      runner_(*answerer.weights_, answerer.settings_.prefill_block),
      logits_(std::size_t(answerer.model().hparams().n_vocab)),
      sampler_(answerer.settings_.temperature, answerer.settings_.top_p, answerer.settings_.seed) {
  const LlamaModel& model = answerer.model();
  AnswerStats& stats = answer_.stats;
  stats.prompt_tokens = prompt.tokens();
  stats.context_tokens = std::int64_t(prompt.planned.size());
  stats.context_truncated = prompt.truncated;

  std::vector<TokenId> all = prompt.planned;
  append(all, prompt.rest);
  const auto n_planned = std::int64_t(prompt.planned.size());
  const std::vector<int> attention_layers =
      answerer.engine_.scorer().query_attention_layers(model.hparams().n_layers);
  const bool collect_attention = !attention_layers.empty();
  if (collect_attention) runner_.capture_queries(n_planned, attention_layers);
  Stopwatch watch;
  runner_.prefill(session_, all, logits_, callbacks_.prefill_progress);
  stats.prefill_s = watch.seconds();

  // Planning time includes reading the query's attention: it is the attention scorer's cost.
  watch.restart();
  std::vector<std::string> texts;
  texts.reserve(prompt.planned.size());
  for (const TokenId id : prompt.planned)
    texts.emplace_back(model.tokenizer().token_piece(id, true));
  const QueryAttention attention =
      collect_attention ? runner_.query_attention(session_, n_planned, attention_layers)
                        : QueryAttention{};
  answer_.plan =
      session_.plan_and_commit(texts, question.question, collect_attention ? &attention : nullptr);
  stats.plan_s = watch.seconds();
}

bool AnswerInProgress::next_token() {
  if (done_) return false;
  const BpeTokenizer& tokenizer = answerer_.model().tokenizer();
  const TokenId next = sampler_.next(logits_);
  const bool end_of_turn = tokenizer.vocabulary().types[std::size_t(next)] == TokenType::control;
  if (end_of_turn && stop_at_end_of_turn_) {
    done_ = true;
    return false;
  }
  answer_.tokens.push_back(next);
  const std::string text = text_.push(tokenizer.token_piece(next, false));
  answer_.text += text;
  if (callbacks_.on_text && !text.empty()) callbacks_.on_text(text);
  // The last token is never fed back: its logits would go unused.
  if (std::int64_t(answer_.tokens.size()) == max_new_tokens_) {
    done_ = true;
  } else {
    runner_.step(session_, next, logits_);
  }
  return true;
}

GreedyAnswer AnswerInProgress::reference_answer() && {
  return greedy_answer(answerer_.model(), runner_, session_, logits_, max_new_tokens_, true);
}

Agreement AnswerInProgress::teacher_force(const GreedyAnswer& reference) && {
  return models::teacher_force(runner_, session_, reference);
}

Answer AnswerInProgress::finish() && {
  const std::string rest = text_.finish();
  answer_.text += rest;
  if (callbacks_.on_text && !rest.empty()) callbacks_.on_text(rest);

  AnswerStats& stats = answer_.stats;
  stats.generated_tokens = std::int64_t(answer_.tokens.size());
  stats.decode = runner_.decode_times();
  const KvStore& store = session_.store();
  stats.cache =
      operating_point(answer_.plan, stats.context_tokens, store.bytes(),
                      answerer_.model().hparams().kv_shape().fp16_bytes(store.n_tokens()));
  stats.peak_rss_bytes = peak_rss_bytes();
  return std::move(answer_);
}

}  // namespace cocktail::models
