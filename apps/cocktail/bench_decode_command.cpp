#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "cocktail/eval/progress.hpp"
#include "cocktail/models/question_answering.hpp"
#include "cocktail/models/synthetic_llama.hpp"
#include "cocktail/stopwatch.hpp"
#include "commands.hpp"
#include "memory_check.hpp"

namespace cocktail::cli {
namespace {

struct DecodeBenchArgs {
  ConfigArgs config;
  SimdArgs simd;
  std::optional<std::string> synthetic;  // a shape's name
  std::string context_file;
  std::int64_t context_tokens = 4096;
  int gen_tokens = 32;
  int repeat = 1;
  bool json = false;
};

// At least `tokens` tokens of text: the document repeated as often as needed.
std::string context_of(const models::BpeTokenizer& tokenizer, const std::string& document,
                       std::int64_t tokens) {
  const auto per_copy = std::int64_t(tokenizer.encode(document, false).size());
  if (per_copy == 0) throw Error("the context document has no tokens");
  std::string text;
  for (std::int64_t n = 0; n < tokens; n += per_copy) text += document + "\n\n";
  return text;
}

// Refused before a context of that length is built and tokenized, and before a synthetic model
// is written.
void require_fits_window(std::int64_t window, const DecodeBenchArgs& args,
                         std::string_view choices = {}) {
  if (args.context_tokens + args.gen_tokens <= window) return;
  throw Error(fmt::format(
      "--context-tokens {} and --gen-tokens {} do not fit the {}model's "
      "context length of {}{}",
      args.context_tokens, args.gen_tokens,
      args.synthetic ? fmt::format("synthetic {} ", *args.synthetic) : "", window, choices));
}

// The synthetic model of the shape `args` name, from the model cache, written there first
// when it is not there yet (or was written by another version of the recipe).
std::filesystem::path synthetic_model(const DecodeBenchArgs& args) {
  const models::SyntheticLlamaShape& shape = models::synthetic_llama_shape(*args.synthetic);
  require_fits_window(shape.context_length, args,
                      "; the shapes: " + models::synthetic_llama_shape_list());
  const models::SyntheticLlama model(shape);
  const std::filesystem::path file = model.cached_file();
  if (model.matches(file)) return file;
  std::cerr << "writing the synthetic " << shape.name << " model ("
            << human_bytes(model.file_size()) << ") to " << file.string() << "\n";
  const Stopwatch watch;
  eval::Progress progress =
      eval::Progress::on_stderr("writing", std::int64_t(model.file_size() >> 20), "MiB");
  model.write(file, [&](std::uint64_t written, std::uint64_t) {
    progress.update(std::int64_t(written >> 20));
  });
  progress.finish();
  std::cerr << "written in " << fmt::format("{:.1f}", watch.seconds()) << " s\n";
  return file;
}

// One cache's stats. Both caches live in the process at once, so its peak RSS says nothing of
// either (`cocktail run` reports it).
nlohmann::json cache_json(const Engine& engine, models::AnswerInProgress&& answer) {
  nlohmann::json stats = answer_stats_json(std::move(answer).finish().stats);
  stats.erase("peak_rss_bytes");
  stats["planner"] = engine.settings().planner;
  return stats;
}

void print_text(const nlohmann::json& r) {
  std::cout << std::fixed << std::setprecision(2) << "context tokens: " << r["context_tokens"]
            << ", generated per run: " << r["gen_tokens"] << "\n";
  if (r["runs"].size() > 1) {
    std::cout << "TPOT ratio of each round:";
    for (const nlohmann::json& run : r["runs"])
      std::cout << " " << std::setprecision(3) << run["tpot_ratio"].get<double>();
    std::cout << std::setprecision(2) << "\nthe round with the median ratio:\n";
  }
  for (const char* cache : {"fp16", "configured"}) {
    const nlohmann::json& c = r[cache];
    std::cout << std::setw(11) << cache << ": TPOT " << c["tpot_s"].get<double>() * 1e3
              << " ms, prefill " << c["prefill_s"].get<double>() << " s, plan "
              << c["plan_s"].get<double>() * 1e3 << " ms, KV "
              << human_bytes(c["kv_bytes"].get<std::size_t>()) << " ("
              << c["avg_bits"].get<double>() << " bits)\n";
    const nlohmann::json& parts = c["tpot_parts_s"];
    std::cout << std::setw(11) << ""
              << "  a token: matmuls " << parts["matmul"].get<double>() * 1e3 << " ms, attention "
              << parts["attention"].get<double>() * 1e3 << " ms, logits "
              << parts["logits"].get<double>() * 1e3 << " ms, other "
              << parts["other"].get<double>() * 1e3 << " ms\n";
  }
  std::cout << "configured / fp16: TPOT " << std::setprecision(3) << r["tpot_ratio"].get<double>()
            << ", KV bytes " << r["kv_bytes_ratio"].get<double>() << "\n";
}

void run(const DecodeBenchArgs& args) {
  ConfigArgs config_args = args.config;
  args.simd.apply(config_args);
  const Config config = config_args.load();
  models::ModelSettings settings = models::ModelSettings::from_options(config.model);
  if (args.synthetic) settings.path = synthetic_model(args);
  const models::LlamaModel model(settings.resolved_path());
  require_fits_window(model.hparams().context_length, args);
  const std::string document = args.context_file.empty() ? std::string(kSampleContext)
                                                         : read_context_file(args.context_file);

  models::Question question;
  question.context = context_of(model.tokenizer(), document, args.context_tokens);
  question.question = kSampleQuery;
  question.max_new_tokens = args.gen_tokens;
  question.context_token_limit = args.context_tokens;
  question.stop_at_end_of_turn = false;
  require_kv_cache_memory(model, question, 2);

  // The FP16 cache: the same config with every chunk kept at FP16.
  ConfigArgs fp16_args = config_args;
  fp16_args.overrides.push_back("engine.planner=uniform");
  fp16_args.overrides.push_back("planner.uniform.precision=fp16");
  const Config fp16_config = fp16_args.load();
  const Engine fp16_engine(fp16_config);
  const Engine engine(config);
  args.simd.check_backend(*engine.backend());
  const models::QuestionAnswerer answerer(engine, model, settings);
  const models::QuestionAnswerer fp16_answerer(fp16_engine, answerer.weights(), settings);
  // Each round fills both caches, then decodes with them in turn, a token each (which goes
  // first swaps every token), so the two TPOTs of a round come from the same seconds of a
  // machine whose speed drifts. One copy of the weights serves both, as it would serve
  // consecutive steps of one cache.
  nlohmann::json runs = nlohmann::json::array();
  for (int r = 0; r < args.repeat; ++r) {
    if (args.repeat > 1 && !args.json)
      std::cerr << "round " << r + 1 << " of " << args.repeat << "\n";
    models::AnswerInProgress fp16 = fp16_answerer.start(question);
    models::AnswerInProgress configured = answerer.start(question);
    for (int token = 0; !fp16.done() || !configured.done(); ++token) {
      models::AnswerInProgress& first = token % 2 == 0 ? fp16 : configured;
      models::AnswerInProgress& second = token % 2 == 0 ? configured : fp16;
      first.next_token();
      second.next_token();
    }
    nlohmann::json run = {{"fp16", cache_json(fp16_engine, std::move(fp16))},
                          {"configured", cache_json(engine, std::move(configured))}};
    const auto ratio = [&](const char* key) {
      return run["configured"][key].get<double>() / run["fp16"][key].get<double>();
    };
    run["tpot_ratio"] = ratio("tpot_s");
    run["kv_bytes_ratio"] = ratio("kv_bytes");
    runs.push_back(std::move(run));
  }
  // The round with the median TPOT ratio (the upper one of an even count) speaks for all.
  std::vector<std::size_t> order(runs.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return runs[a]["tpot_ratio"].get<double>() < runs[b]["tpot_ratio"].get<double>();
  });
  const nlohmann::json& median = runs[order[order.size() / 2]];
  const Backend& backend = *engine.backend();
  nlohmann::json result = {{"model", settings.resolved_path().filename().string()},
                           {"backend", std::string(backend.name())},
                           {"backend_detail", backend.device().availability.reason},
                           {"context_tokens", args.context_tokens},
                           {"gen_tokens", args.gen_tokens},
                           {"fp16", median["fp16"]},
                           {"configured", median["configured"]},
                           {"tpot_ratio", median["tpot_ratio"]},
                           {"kv_bytes_ratio", median["kv_bytes_ratio"]},
                           {"runs", runs}};
  if (args.synthetic) result["synthetic"] = *args.synthetic;
  if (args.json) {
    print_json(result);
  } else {
    print_text(result);
  }
}

}  // namespace

void add_bench_decode_command(CLI::App& bench) {
  auto args = std::make_shared<DecodeBenchArgs>();
  CLI::App* decode = bench.add_subcommand(
      "decode", "Prefill, TPOT and KV bytes of the model on the configured cache and on FP16");
  args->config.add_to(*decode, false);
  decode
      ->add_option("--synthetic", args->synthetic,
                   "Instead of [model] path, a model of random weights of this shape: " +
                       models::synthetic_llama_shape_list() +
                       "; written to the model cache on first use")
      ->type_name("SHAPE");
  decode->add_option("--context-file", args->context_file,
                     "Document to repeat up to the length (default: the built-in sample)");
  decode->add_option("--context-tokens", args->context_tokens, "Context tokens")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 20));
  decode->add_option("--gen-tokens", args->gen_tokens, "Tokens generated per run")
      ->check(CLI::Range(2, 4096));
  decode
      ->add_option("--repeat", args->repeat,
                   "Rounds of both caches decoding in turn; the median round is reported")
      ->check(CLI::Range(1, 100));
  args->simd.add_to(*decode);
  decode->add_flag("--json", args->json, "Print JSON");
  decode->callback([args] { run(*args); });
}

}  // namespace cocktail::cli
