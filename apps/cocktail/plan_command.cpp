#include <fmt/format.h>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli_common.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "cocktail/models/question_answering.hpp"
#include "cocktail/tensor_allocation.hpp"
#include "cocktail/text_pieces.hpp"
#include "commands.hpp"
#include "memory_check.hpp"
#include "plan_svg.hpp"

namespace cocktail::cli {

namespace {

struct PlanArgs {
  ConfigArgs config;
  ContextArgs context;
  std::optional<std::string> query;
  std::string svg;
  bool json = false;
  // The model whose cache the bytes are counted for; SmolLM2-135M by default.
  KvShape shape{30, 3, 64};
  bool shape_given = false;  // any of --layers, --kv-heads, --head-dim
};

// A store of one layer x head, for the bytes of the plan alone, and the stream it works on.
struct AccountingStore {
  std::shared_ptr<KvStore> store;
  std::shared_ptr<Stream> stream;

  AccountingStore(Backend& backend, const EngineSettings& settings, const KvShape& shape)
      : store(backend.make_kv_store({{1, 1, shape.head_dim}, settings.layout, 0})),
        stream(backend.make_stream()) {}

  // Zeros, a block at a time, so that no buffer grows with the context.
  void append_zeros(Backend& backend, std::int64_t tokens) {
    constexpr std::int64_t kBlock = 4096;
    const auto width = std::int64_t(store->options().shape.token_floats());
    const std::vector<float> zeros(std::size_t(kBlock * width), 0.0f);
    const DeviceRows block = upload_rows(backend, *stream, zeros, kBlock, width, "zeros");
    for (std::int64_t done = 0; done < tokens; done += kBlock) {
      const Tensor rows = block.tensor.row_range(0, std::min(kBlock, tokens - done));
      store->append(*stream, 0, rows, rows);
    }
    stream->synchronize();
  }

  std::size_t commit(const Plan& plan) {
    store->commit(*stream, plan);
    stream->synchronize();
    return store->bytes();
  }
};

// What the accounting store of `plan` holds at its peak: every token at FP16 before the
// commit, then each chunk in whole tiles of a quant group at its precision (a tile's bytes are
// those of one full chunk committed alone). A chunk much shorter than a group pays a whole
// tile, which is what makes chunk_size = 1 on a long text need gigabytes.
std::size_t accounting_bytes(Backend& backend, const EngineSettings& settings, const KvShape& shape,
                             const Plan& plan, std::int64_t context_tokens) {
  const int group = settings.layout.group_size;
  std::map<Precision, std::size_t> tile_bytes;
  for (Precision p : kAllPrecisions) {
    AccountingStore probe(backend, settings, shape);
    probe.append_zeros(backend, group);
    tile_bytes[p] = probe.commit(fixed_size_chunks(group, group, p));
  }
  std::size_t bytes = KvShape{1, 1, shape.head_dim}.fp16_bytes(context_tokens);
  for (const ChunkPlan& c : plan.chunks) {
    bytes += std::size_t((c.n_tokens + group - 1) / group) * tile_bytes[c.precision];
  }
  return bytes;
}

// Exact bytes of the committed plan over `context_tokens` in this backend's store (the tokens
// after the plan stay in the FP16 tail): one layer × head holds the plan, and every layer and
// head is laid out alike.
std::size_t planned_kv_bytes(Backend& backend, const EngineSettings& settings, const KvShape& shape,
                             const Plan& plan, std::int64_t context_tokens) {
  require_memory(accounting_bytes(backend, settings, shape, plan, context_tokens),
                 fmt::format("counting the KV bytes of {} tokens in {} chunks", context_tokens,
                             plan.chunks.size()));
  AccountingStore store(backend, settings, shape);
  store.append_zeros(backend, context_tokens);
  return store.commit(plan) * std::size_t(shape.n_layers) * std::size_t(shape.n_kv_heads);
}

nlohmann::json summary_json(const Plan& plan, const OperatingPoint& point, const KvShape& shape) {
  const auto number_or_null = [](double x) {
    return std::isnan(x) ? nlohmann::json() : nlohmann::json(x);
  };
  nlohmann::json summary = {
      {"context_tokens", point.context_tokens},
      {"alpha", number_or_null(plan.alpha)},
      {"beta", number_or_null(plan.beta)},
      {"t_low", number_or_null(plan.t_low)},
      {"t_high", number_or_null(plan.t_high)},
      {"kv_shape",
       {{"layers", shape.n_layers}, {"kv_heads", shape.n_kv_heads}, {"head_dim", shape.head_dim}}}};
  summary.update(operating_point_json(point));
  return summary;
}

void print_text(const Plan& plan, const OperatingPoint& point) {
  std::cout << "chunk  first  tokens     score  precision\n";
  for (const ChunkPlan& c : plan.chunks) {
    std::cout << std::setw(5) << c.index << std::setw(7) << c.first_token << std::setw(8)
              << c.n_tokens << std::setw(10) << std::setprecision(4) << c.score << "  "
              << to_string(c.precision) << "\n";
  }
  std::cout << "\ncontext tokens: " << point.context_tokens << "\n";
  print_operating_point(std::cout, point);
}

// A plan and what it does to the cache.
struct PlannedContext {
  Plan plan;
  OperatingPoint point;
  KvShape shape;  // of the cache the bytes are counted for
};

// Text scorers plan the document's word pieces without a model; the bytes are counted for the
// KV shape of --layers, --kv-heads and --head-dim.
PlannedContext plan_without_model(const Engine& engine, const PlanArgs& args,
                                  const std::string& text, const std::string& query) {
  const std::vector<std::string> pieces = split_word_pieces(text);
  const PlanInput input{pieces,     std::int64_t(pieces.size()), query, &engine.scorer(), nullptr,
                        args.shape, engine.settings().layout};
  Plan plan = engine.planner().plan(input);
  plan.validate();
  const auto n = std::int64_t(pieces.size());
  const std::size_t kv =
      n > 0 ? planned_kv_bytes(*engine.backend(), engine.settings(), args.shape, plan, n) : 0;
  OperatingPoint point = operating_point(plan, n, kv, args.shape.fp16_bytes(n));
  return {std::move(plan), std::move(point), args.shape};
}

// A scorer that reads the question's attention (the `attention` scorer) needs the model's
// prefill: the plan is the one `cocktail run` commits, over the model's tokens, and the bytes
// are those of its store.
PlannedContext plan_with_model(const Config& config, const Engine& engine, const std::string& text,
                               const std::string& query) {
  const models::ModelSettings settings = models::ModelSettings::from_options(config.model);
  const models::LlamaModel model(settings.resolved_path());
  models::Question question{text, query};
  question.max_new_tokens = 1;
  require_kv_cache_memory(model, question, 1);
  const models::QuestionAnswerer answerer(engine, model, settings);
  models::QuestionAnswerer::Callbacks callbacks;
  callbacks.prefill_progress = prefill_progress_on_stderr();
  models::Answer prefilled = answerer.start(question, callbacks).finish();
  return {std::move(prefilled.plan), prefilled.stats.cache, model.hparams().kv_shape()};
}

void run(const PlanArgs& args) {
  const std::string text = args.context.load();
  const std::string query = question_or_sample(args.query, args.context, "--query");
  const Config config = args.config.load();
  const Engine engine(config);
  const bool reads_attention = !engine.scorer().query_attention_layers(args.shape.n_layers).empty();
  if (reads_attention && args.shape_given) {
    throw Error(fmt::format(
        "--layers, --kv-heads and --head-dim give the KV shape for text scorers; the {} scorer "
        "runs the model of [model] path and counts that model's cache",
        engine.scorer().name()));
  }
  const PlannedContext planned = reads_attention ? plan_with_model(config, engine, text, query)
                                                 : plan_without_model(engine, args, text, query);
  if (!args.svg.empty()) {
    std::ofstream out(args.svg);
    out << render_plan_svg(planned.plan,
                           "Cocktail plan: " + std::to_string(planned.plan.chunks.size()) +
                               " chunks, query \"" + query + "\"");
    if (!out) throw Error("cannot write " + args.svg);
  }
  if (args.json) {
    // Only here: as JSON a chunk costs hundreds of bytes, the text table prints it directly.
    nlohmann::json summary = summary_json(planned.plan, planned.point, planned.shape);
    summary["chunks"] = plan_chunks_json(planned.plan);
    print_json(summary);
  } else {
    print_text(planned.plan, planned.point);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* command = app.add_subcommand(
      "plan",
      "Score and plan the chunks of a context against a query (the model runs only for the "
      "attention scorer)");
  args->config.add_to(*command, false);
  args->context.add_to(*command);
  command->add_option("--query", args->query, "The user's question");
  command->add_flag("--json", args->json, "Print JSON");
  command->add_option("--svg", args->svg, "Write the chunk-score strip as SVG to this file");
  command->add_option("--layers", args->shape.n_layers, "Layers of the model whose KV is counted")
      ->check(CLI::Range(1, 1024));
  command->add_option("--kv-heads", args->shape.n_kv_heads, "KV heads per layer")
      ->check(CLI::Range(1, 1024));
  command->add_option("--head-dim", args->shape.head_dim, "Head dimension")
      ->check(CLI::Range(32, 1024));
  command->callback([args, command] {
    args->shape_given =
        command->count("--layers") + command->count("--kv-heads") + command->count("--head-dim") >
        0;
    run(*args);
  });
}

}  // namespace cocktail::cli
