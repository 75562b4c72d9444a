#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "cli_common.hpp"
#include "cocktail/error.hpp"
#include "cocktail/eval/generate.hpp"
#include "cocktail/eval/heatmap_svg.hpp"
#include "cocktail/eval/markdown_table.hpp"
#include "cocktail/eval/progress.hpp"
#include "cocktail/eval/scatter_svg.hpp"
#include "cocktail/eval/suite.hpp"
#include "commands.hpp"
#include "eval_runner.hpp"

namespace cocktail::cli {
namespace {

struct EvalArgs {
  ConfigArgs config;
  std::string suite = "builtin";
  std::string haystack;
  std::string methods = kDefaultEvalMethods;
  std::string json_out;
  std::string report_dir;
  int max_tokens = 32;
  bool resume = false;  // keep the cases --json already holds and run the rest
};

// Everything one method did over the cases, for the report.
struct MethodTotals {
  eval::MethodResults results;
  std::vector<MethodCaseOutcome> outcomes;
  std::vector<double> prefill_s;  // the case's shared prefill, beside each outcome

  void add(MethodCaseOutcome outcome, double case_prefill_s) {
    results.cases.push_back(outcome.result);
    outcomes.push_back(std::move(outcome));
    prefill_s.push_back(case_prefill_s);
    results.avg_bits = mean([](const MethodCaseOutcome& o) { return o.cache.avg_bits(); });
  }

  template <class Value>
  double mean(Value value_of) const {
    double sum = 0.0;
    for (const auto& o : outcomes) sum += value_of(o);
    return outcomes.empty() ? eval::kNoValue : sum / double(outcomes.size());
  }
  double mean_code_bits() const {
    return mean([](const MethodCaseOutcome& o) { return o.cache.avg_code_bits(); });
  }
  double mean_kv_bytes_ratio() const {
    return mean([](const MethodCaseOutcome& o) { return o.cache.kv_bytes_ratio(); });
  }
  // The share of the context's tokens at `p`, over every case.
  double mean_token_share(Precision p) const {
    return mean([p](const MethodCaseOutcome& o) {
      const auto share = o.cache.token_share.find(p);
      return share == o.cache.token_share.end() ? 0.0 : share->second;
    });
  }
  std::optional<double> needle_top5_rate() const {
    int asked = 0, hits = 0;
    for (const auto& o : outcomes) {
      if (!o.needle_in_top5) continue;
      ++asked;
      hits += *o.needle_in_top5 ? 1 : 0;
    }
    if (asked == 0) return std::nullopt;
    return double(hits) / asked;
  }
  // Planning (scorer + planner + commit) time over the prefill time, at the longest length.
  std::optional<double> plan_over_prefill(std::int64_t length) const {
    double plan = 0.0, prefill = 0.0;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      if (outcomes[i].result.length != length) continue;
      plan += outcomes[i].plan_s;
      prefill += prefill_s[i];
    }
    if (prefill == 0.0) return std::nullopt;
    return plan / prefill;
  }
};

nlohmann::json optional_json(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::optional<double> mean_of(const MethodTotals& m, eval::Metric metric,
                              const eval::CaseFilter& filter = {}) {
  return eval::mean_metric(m.results.cases, metric, filter);
}

std::int64_t longest_length(const std::vector<MethodTotals>& methods) {
  std::int64_t longest = 0;
  for (const auto& c : methods.front().results.cases) longest = std::max(longest, c.length);
  return longest;
}

// The mean share of each precision any case used, over every case.
nlohmann::json token_shares_json(const MethodTotals& t) {
  nlohmann::json shares = nlohmann::json::object();
  for (Precision p : kAllPrecisions) {
    const double share = t.mean_token_share(p);
    if (share > 0.0) shares[std::string(to_string(p))] = share;
  }
  return shares;
}

// The kinds among the cases, in declaration order: one score column each when there are several.
std::vector<eval::CaseKind> kinds_run(const std::vector<MethodTotals>& methods) {
  std::vector<eval::CaseKind> kinds;
  for (eval::CaseKind kind : eval::kAllCaseKinds) {
    const auto& cases = methods.front().results.cases;
    const bool any = std::any_of(cases.begin(), cases.end(),
                                 [kind](const eval::CaseResult& c) { return c.kind == kind; });
    if (any) kinds.push_back(kind);
  }
  return kinds;
}

// The mean answer-found score of each kind run.
nlohmann::json contains_by_kind_json(const MethodTotals& t,
                                     const std::vector<eval::CaseKind>& kinds) {
  nlohmann::json scores = nlohmann::json::object();
  for (eval::CaseKind kind : kinds) {
    scores[std::string(eval::to_string(kind))] =
        optional_json(mean_of(t, eval::Metric::contains, {kind, {}, {}}));
  }
  return scores;
}

// The precisions some method put some token at, for the report's share columns.
std::vector<Precision> precisions_used(const std::vector<MethodTotals>& methods) {
  std::vector<Precision> used;
  for (Precision p : kAllPrecisions) {
    const bool any = std::any_of(methods.begin(), methods.end(), [p](const MethodTotals& t) {
      return t.mean_token_share(p) > 0.0;
    });
    if (any) used.push_back(p);
  }
  return used;
}

nlohmann::json results_json(const std::vector<MethodTotals>& methods,
                            const std::vector<EvalMethod>& specs, const eval::Suite& suite) {
  nlohmann::json out = {{"suite", suite.source}, {"methods", nlohmann::json::array()}};
  const std::int64_t longest = longest_length(methods);
  const std::vector<eval::CaseKind> kinds = kinds_run(methods);
  for (std::size_t m = 0; m < methods.size(); ++m) {
    const MethodTotals& t = methods[m];
    nlohmann::json cases = nlohmann::json::array();
    for (std::size_t i = 0; i < t.outcomes.size(); ++i) {
      const MethodCaseOutcome& o = t.outcomes[i];
      cases.push_back({{"id", o.result.case_id},
                       {"kind", std::string(eval::to_string(o.result.kind))},
                       {"length", o.result.length},
                       {"depth", number_or_null(o.result.depth)},
                       {"contains", number_or_null(o.result.contains)},
                       {"f1", number_or_null(o.result.f1)},
                       {"kld", number_or_null(o.result.kld)},
                       {"top1", number_or_null(o.result.top1)},
                       {"operating_point", operating_point_json(o.cache)},
                       {"plan_s", o.plan_s},
                       {"prefill_s", t.prefill_s[i]},
                       {"needle_in_top5", o.needle_in_top5 ? nlohmann::json(*o.needle_in_top5)
                                                           : nlohmann::json(nullptr)},
                       {"answer", o.answer}});
    }
    out["methods"].push_back(
        {{"name", t.results.method},
         {"overrides", specs[m].overrides},
         {"avg_code_bits", number_or_null(t.mean_code_bits())},
         {"avg_bits", number_or_null(t.results.avg_bits)},
         {"kv_bytes_ratio", number_or_null(t.mean_kv_bytes_ratio())},
         {"token_share", token_shares_json(t)},
         {"contains", optional_json(mean_of(t, eval::Metric::contains))},
         {"niah_contains",
          optional_json(mean_of(t, eval::Metric::contains, {eval::CaseKind::niah, {}, {}}))},
         {"contains_by_kind", contains_by_kind_json(t, kinds)},
         {"f1", optional_json(mean_of(t, eval::Metric::f1))},
         {"kld", optional_json(mean_of(t, eval::Metric::kld))},
         {"top1", optional_json(mean_of(t, eval::Metric::top1))},
         {"needle_top5_rate", optional_json(t.needle_top5_rate())},
         {"plan_s", number_or_null(t.mean([](const MethodCaseOutcome& o) { return o.plan_s; }))},
         {"plan_over_prefill_at_longest", optional_json(t.plan_over_prefill(longest))},
         {"cases", cases}});
  }
  return out;
}

std::string markdown_report(const std::vector<MethodTotals>& methods,
                            const std::vector<std::int64_t>& lengths) {
  const std::int64_t longest = longest_length(methods);
  const std::vector<Precision> precisions = precisions_used(methods);
  std::vector<eval::CaseKind> kinds = kinds_run(methods);
  if (kinds.size() < 2) kinds.clear();  // the answer-found column says it all
  std::vector<eval::TableColumn> columns = {
      {"code bits", 2}, {"bits / element", 2}, {"KV / FP16", 3}};
  for (Precision p : precisions) columns.push_back({fmt::format("{} share", to_string(p)), 3});
  columns.insert(columns.end(), {{"answer found", 3},
                                 {"F1", 3},
                                 {"KLD", 4},
                                 {"top-1", 3},
                                 {"needle top 5%", 2},
                                 {"plan / prefill", 3}});
  for (std::int64_t length : lengths) columns.push_back({fmt::format("NIAH {}", length), 2});
  for (eval::CaseKind kind : kinds) columns.push_back({std::string(eval::to_string(kind)), 2});
  std::vector<eval::TableRow> rows;
  for (const MethodTotals& t : methods) {
    eval::TableRow row{t.results.method,
                       {t.mean_code_bits(), t.results.avg_bits, t.mean_kv_bytes_ratio()}};
    for (Precision p : precisions) row.values.push_back(t.mean_token_share(p));
    row.values.insert(row.values.end(),
                      {mean_of(t, eval::Metric::contains), mean_of(t, eval::Metric::f1),
                       mean_of(t, eval::Metric::kld), mean_of(t, eval::Metric::top1),
                       t.needle_top5_rate(), t.plan_over_prefill(longest)});
    for (std::int64_t length : lengths) {
      row.values.push_back(mean_of(t, eval::Metric::contains, {eval::CaseKind::niah, length, {}}));
    }
    for (eval::CaseKind kind : kinds) {
      row.values.push_back(mean_of(t, eval::Metric::contains, {kind, {}, {}}));
    }
    rows.push_back(std::move(row));
  }
  return eval::render_markdown_table("method", columns, rows);
}

// Written beside the file and renamed over it, so that a run killed mid-write leaves the last
// complete file for --resume, not a truncated one.
void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial);
    out << text;
    out.close();
    if (!out) throw Error("cannot write " + partial.string());
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) throw Error(fmt::format("cannot replace {}: {}", path.string(), error.message()));
}

void write_report(const std::filesystem::path& dir, const std::vector<MethodTotals>& methods,
                  const std::string& table, const nlohmann::json& json) {
  write_file(dir / "results.md", table);
  write_file(dir / "results.json", json.dump(2) + "\n");
  std::vector<eval::MethodResults> results;
  const std::vector<eval::CaseKind> kinds = kinds_run(methods);
  for (const MethodTotals& t : methods) {
    results.push_back(t.results);
    for (eval::CaseKind kind : kinds) {
      if (!eval::placed_by_depth(kind)) continue;
      const std::string name = fmt::format("{}-{}.svg", eval::to_string(kind), t.results.method);
      write_file(dir / name, eval::render_heatmap_svg(t.results, kind));
    }
  }
  write_file(dir / "accuracy-vs-bits.svg",
             eval::render_scatter_svg(eval::metric_vs_bits(results, eval::Metric::contains, {},
                                                           "Answer found against average code bits",
                                                           "answer found (mean over cases)")));
  write_file(dir / "kld-vs-bits.svg",
             eval::render_scatter_svg(eval::metric_vs_bits(
                 results, eval::Metric::kld, {}, "KL divergence from the FP16 cache",
                 "mean KLD over answer tokens (log scale)")));
}

double number_or_nan(const nlohmann::json& j) {
  return j.is_null() ? eval::kNoValue : j.get<double>();
}

Precision precision_named(const std::string& name) {
  const std::optional<Precision> p = parse_precision(name);
  if (!p) throw Error(fmt::format("unknown precision \"{}\"", name));
  return *p;
}

OperatingPoint operating_point_from_json(const nlohmann::json& j) {
  OperatingPoint point;
  point.context_tokens = j.at("context_tokens").get<std::int64_t>();
  for (const auto& [name, n] : j.at("chunks_per_precision").items()) {
    point.chunks[precision_named(name)] = n.get<int>();
  }
  for (const auto& [name, share] : j.at("token_share").items()) {
    point.token_share[precision_named(name)] = share.get<double>();
  }
  point.kv_bytes = j.at("kv_bytes").get<std::size_t>();
  point.fp16_kv_bytes = j.at("fp16_kv_bytes").get<std::size_t>();
  return point;
}

// One case of one method as results_json wrote it.
MethodCaseOutcome outcome_from_json(const nlohmann::json& j) {
  MethodCaseOutcome o;
  o.result.case_id = j.at("id").get<std::string>();
  const std::string kind = j.at("kind").get<std::string>();
  const std::optional<eval::CaseKind> parsed = eval::parse_case_kind(kind);
  if (!parsed) throw Error(fmt::format("unknown case kind \"{}\"", kind));
  o.result.kind = *parsed;
  o.result.length = j.at("length").get<std::int64_t>();
  o.result.depth = number_or_nan(j.at("depth"));
  o.result.contains = number_or_nan(j.at("contains"));
  o.result.f1 = number_or_nan(j.at("f1"));
  o.result.kld = number_or_nan(j.at("kld"));
  o.result.top1 = number_or_nan(j.at("top1"));
  o.cache = operating_point_from_json(j.at("operating_point"));
  o.plan_s = j.at("plan_s").get<double>();
  if (!j.at("needle_in_top5").is_null()) o.needle_in_top5 = j.at("needle_in_top5").get<bool>();
  o.answer = j.at("answer").get<std::string>();
  return o;
}

// Reads the cases an earlier run of the same suite and methods wrote to `file` (--json rewrites
// it after every case) into `totals`, so that a long evaluation cut short goes on where it
// stopped. A missing or empty file is a fresh start; anything else that does not match is an
// error naming what differs.
void resume_from(const std::string& file, const std::vector<EvalMethod>& methods,
                 const eval::Suite& suite, const std::vector<eval::EvalCase>& cases,
                 std::vector<MethodTotals>& totals) {
  std::error_code error;
  if (!std::filesystem::exists(file, error) || std::filesystem::file_size(file, error) == 0) return;
  const auto fail = [&](const std::string& why) {
    return Error(fmt::format("--resume: {} {}", file, why));
  };
  try {
    const nlohmann::json saved = nlohmann::json::parse(read_text_file(file));
    if (saved.at("suite") != suite.source) {
      throw fail(
          fmt::format("holds suite {}, this run is of {}", saved.at("suite").dump(), suite.source));
    }
    const nlohmann::json& saved_methods = saved.at("methods");
    if (saved_methods.size() != methods.size()) {
      throw fail(fmt::format("holds {} methods, this run asks for {}", saved_methods.size(),
                             methods.size()));
    }
    for (std::size_t m = 0; m < methods.size(); ++m) {
      const nlohmann::json& saved_method = saved_methods[m];
      if (saved_method.at("name") != methods[m].name ||
          saved_method.at("overrides") != nlohmann::json(methods[m].overrides)) {
        throw fail(fmt::format("has method {} ({}) where this run has {} ({})",
                               saved_method.at("name").dump(), saved_method.at("overrides").dump(),
                               methods[m].name, nlohmann::json(methods[m].overrides).dump()));
      }
      const nlohmann::json& saved_cases = saved_method.at("cases");
      if (saved_cases.size() > cases.size() ||
          (m > 0 && saved_cases.size() != totals[0].outcomes.size())) {
        throw fail(fmt::format("holds {} cases of method {}; the suite has {}, the first method {}",
                               saved_cases.size(), methods[m].name, cases.size(),
                               totals[0].outcomes.size()));
      }
      for (std::size_t i = 0; i < saved_cases.size(); ++i) {
        MethodCaseOutcome outcome = outcome_from_json(saved_cases[i]);
        if (outcome.result.case_id != cases[i].id) {
          throw fail(fmt::format("has case {} at position {}, where the suite has {}",
                                 outcome.result.case_id, i + 1, cases[i].id));
        }
        totals[m].add(std::move(outcome), saved_cases[i].at("prefill_s").get<double>());
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw fail(fmt::format("is not the JSON of a cocktail eval run: {}", e.what()));
  }
}

// The outputs are checked before the cases run, so that a typo in a path does not cost the
// evaluation: the JSON file can be written (it is rewritten after every case), and the report
// folder exists or is made.
void prepare_outputs(const EvalArgs& args) {
  if (!args.json_out.empty() && !std::ofstream(args.json_out, std::ios::app)) {
    throw Error(fmt::format("cannot write {}: {}", args.json_out, std::strerror(errno)));
  }
  std::error_code error;
  if (!args.report_dir.empty() && !std::filesystem::create_directories(args.report_dir, error) &&
      !std::filesystem::is_directory(args.report_dir)) {
    throw Error(fmt::format("cannot make the report folder {}: {}", args.report_dir,
                            error ? error.message() : "a file of that name is in the way"));
  }
}

void run(const EvalArgs& args) {
  prepare_outputs(args);
  const Config base = args.config.load();
  const models::ModelSettings settings = models::ModelSettings::from_options(base.model);
  const models::LlamaModel model(settings.resolved_path());
  const std::vector<EvalMethod> methods = parse_eval_methods(args.methods);
  const EvalRunner runner(methods, args.config.file, args.config.overrides, model, settings,
                          args.max_tokens);

  const eval::Suite suite =
      args.suite == "builtin" ? eval::builtin_suite() : eval::load_suite(args.suite);
  const std::optional<std::filesystem::path> haystack =
      args.haystack.empty() ? std::nullopt : std::optional<std::filesystem::path>(args.haystack);
  const std::vector<eval::EvalCase> cases = eval::load_suite_cases(
      suite, haystack, [&](std::string_view text) { return runner.count_tokens(text); });

  std::vector<MethodTotals> totals;
  for (const EvalMethod& m : methods) totals.push_back({{m.name, eval::kNoValue, {}}, {}, {}});
  if (args.resume) resume_from(args.json_out, methods, suite, cases, totals);
  const std::size_t resumed = totals.front().outcomes.size();
  if (resumed > 0) {
    std::cerr << fmt::format("resuming: {} of {} cases read from {}\n", resumed, cases.size(),
                             args.json_out);
  }
  std::int64_t work = 0;
  for (std::size_t i = resumed; i < cases.size(); ++i) {
    work += std::max<std::int64_t>(cases[i].target_tokens, 1);
  }
  eval::Progress progress = eval::Progress::on_stderr("eval", work, "tokens");
  for (std::size_t i = resumed; i < cases.size(); ++i) {
    const eval::EvalCase& c = cases[i];
    progress.set_detail(c.id);
    const CaseRun run = runner.run(c, [&](std::int64_t done, std::int64_t total) {
      progress.set_detail(fmt::format("{}, prefill {}/{} tokens", c.id, done, total));
    });
    progress.advance(std::max<std::int64_t>(c.target_tokens, 1));
    for (std::size_t m = 0; m < methods.size(); ++m) totals[m].add(run.methods[m], run.prefill_s);
    if (!args.json_out.empty()) {
      write_file(args.json_out, results_json(totals, methods, suite).dump(2) + "\n");
    }
  }
  progress.finish();
  std::set<std::int64_t> lengths;
  for (const eval::EvalCase& c : cases) {
    if (c.kind == eval::CaseKind::niah) lengths.insert(c.target_tokens);
  }
  const std::string table = markdown_report(totals, {lengths.begin(), lengths.end()});
  std::cout << table;
  if (!args.report_dir.empty()) {
    write_report(args.report_dir, totals, table, results_json(totals, methods, suite));
  }
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* command = app.add_subcommand(
      "eval", "Long-context evaluation: every method on the same cases, against the FP16 cache");
  args->config.add_to(*command, false);
  command->add_option("--suite", args->suite, "Suite file (TOML), or builtin (docs/eval.md)")
      ->capture_default_str();
  command->add_option("--haystack", args->haystack,
                      "Folder of .txt files the needles hide in (overrides the suite's)");
  command->add_option("--methods", args->methods, "Comma-separated methods (docs/eval.md)")
      ->capture_default_str();
  CLI::Option* json =
      command->add_option("--json", args->json_out, "Write the results as JSON to this file");
  command->add_option("--report", args->report_dir,
                      "Write results.md, results.json and the SVG plots into this folder");
  command
      ->add_flag("--resume", args->resume,
                 "Keep the cases the --json file holds from an earlier run of the same suite "
                 "and methods, and run the rest")
      ->needs(json);
  command->add_option("--max-tokens", args->max_tokens, "Most answer tokens per case and method")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  command->callback([args] { run(*args); });
}

}  // namespace cocktail::cli
