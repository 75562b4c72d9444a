#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>

#include "cli_common.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/models/question_answering.hpp"
#include "commands.hpp"
#include "memory_check.hpp"

namespace cocktail::cli {
namespace {

struct RunArgs {
  ConfigArgs config;
  ContextArgs context;
  std::optional<std::string> question;
  int max_tokens = 64;
  bool truncate_context = false;
  bool json = false;
};

void print_stats(const models::AnswerStats& s) {
  std::cerr << "\ncontext tokens: " << s.context_tokens << " (prompt " << s.prompt_tokens
            << (s.context_truncated ? ", context truncated" : "") << ")\n";
  print_operating_point(std::cerr, s.cache);
  std::cerr << std::fixed << std::setprecision(2) << "prefill: " << s.prefill_s
            << " s, plan: " << s.plan_s * 1e3 << " ms, TPOT: " << s.tpot_s() * 1e3 << " ms ("
            << s.generated_tokens << " tokens), peak RSS: " << human_bytes(s.peak_rss_bytes)
            << "\n";
}

void run(const RunArgs& args) {
  models::Question question;
  question.context = args.context.load();
  question.question = question_or_sample(args.question, args.context, "--question");
  question.max_new_tokens = args.max_tokens;
  question.truncate_context = args.truncate_context;

  const Config config = args.config.load();
  const models::ModelSettings settings = models::ModelSettings::from_options(config.model);
  const Engine engine(config);
  const models::LlamaModel model(settings.resolved_path());
  require_kv_cache_memory(model, question, 1);
  const models::QuestionAnswerer answerer(engine, model, settings);

  models::QuestionAnswerer::Callbacks callbacks;
  // A prefill progress line on stderr, and the answer on stdout as it comes.
  if (!args.json) {
    callbacks.prefill_progress = prefill_progress_on_stderr();
    callbacks.on_text = [](std::string_view text) { std::cout << text << std::flush; };
  }
  const models::Answer answer = answerer.answer(question, callbacks);
  if (args.json) {
    print_json({{"answer", answer.text},
                {"question", question.question},
                {"stats", answer_stats_json(answer.stats)}});
  } else {
    std::cout << "\n";
    print_stats(answer.stats);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* command = app.add_subcommand(
      "run", "Answer a question about a long context with the model, on the Cocktail cache");
  args->config.add_to(*command, false);
  args->context.add_to(*command);
  command->add_option("--question", args->question,
                      "The question (required with your own context)");
  command->add_option("--max-tokens", args->max_tokens, "Most tokens to generate")
      ->check(CLI::Range(1, 1 << 20));
  command->add_flag("--truncate-context", args->truncate_context,
                    "Cut the end of a context too long for the model instead of failing");
  command->add_flag("--json", args->json, "Print the answer and the stats as JSON");
  command->callback([args] { run(*args); });
}

}  // namespace cocktail::cli
