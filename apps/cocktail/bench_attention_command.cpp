// `cocktail bench attention`: decode attention over a synthetic mixed-precision cache and over
// the FP16 cache of the same tokens, side by side, each against the memory read bandwidth
// measured in the same run on a buffer as large as that cache (and, for devices whose data
// sheet it knows, against the data sheet's peak).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <sstream>

#include "cli_common.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/error.hpp"
#include "cocktail/tensor_allocation.hpp"
#include "commands.hpp"
#include "datasheet.hpp"
#include "memory_check.hpp"

namespace cocktail::cli {

namespace {

struct BenchArgs {
  ConfigArgs config;
  SimdArgs simd;
  std::int64_t context_tokens = 32768;
  int kv_heads = 8;
  int head_dim = 128;
  int gqa = 1;
  std::vector<double> mix{0.1, 0.3, 0.6};
  int threads = 0;
  int repeat = 30;
  int flush_mib = 0;
  bool json = false;
};

// Fills every layer with pseudo-random K/V, a block at a time so memory stays bounded.
void fill_random(Backend& backend, Stream& stream, KvStore& store, std::int64_t tokens) {
  const KvShape& shape = store.options().shape;
  const auto width = std::int64_t(shape.token_floats());
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  constexpr std::int64_t kBlock = 2048;
  std::vector<float> k, v;
  for (std::int64_t done = 0; done < tokens; done += kBlock) {
    const std::int64_t n = std::min(kBlock, tokens - done);
    k.resize(std::size_t(n) * shape.token_floats());
    v.resize(k.size());
    for (float& x : k) x = dist(rng);
    for (float& x : v) x = dist(rng);
    const DeviceRows kd = upload_rows(backend, stream, k, n, width, "k");
    const DeviceRows vd = upload_rows(backend, stream, v, n, width, "v");
    for (int layer = 0; layer < shape.n_layers; ++layer)
      store.append(stream, layer, kd.tensor, vd.tensor);
    stream.synchronize();
  }
}

// Chunks at FP16 / INT4 / INT2 in the given fractions, scattered over the context (a seeded
// shuffle), as a scorer would leave them.
Plan mixed_plan(std::int64_t tokens, int chunk, const std::vector<double>& mix) {
  const std::int64_t n_chunks = tokens / chunk;
  std::vector<Precision> precisions;
  const Precision tiers[3] = {Precision::fp16, Precision::int4, Precision::int2};
  for (int t = 0; t < 3; ++t) {
    const auto n = std::int64_t(std::llround(mix[std::size_t(t)] * double(n_chunks)));
    for (std::int64_t i = 0; i < n && std::int64_t(precisions.size()) < n_chunks; ++i) {
      precisions.push_back(tiers[t]);
    }
  }
  while (std::int64_t(precisions.size()) < n_chunks) precisions.push_back(Precision::int2);
  std::shuffle(precisions.begin(), precisions.end(), std::mt19937(7));
  Plan plan = fixed_size_chunks(tokens, chunk, Precision::int2);
  for (std::int64_t c = 0; c < n_chunks; ++c) {
    plan.chunks[std::size_t(c)].precision = precisions[std::size_t(c)];
  }
  return plan;
}

struct Timing {
  double median_s = 0, min_s = 0;
};

// Writes `mib` MiB of device memory, so that the next run finds none of its cache in the
// device's last-level cache, as a model's step finds it after the other layers ran.
class CacheFlush {
 public:
  CacheFlush(Backend& backend, int mib) {
    if (mib == 0) return;
    const auto floats = std::int64_t(mib) << 18;
    memory_ = backend.allocate(std::size_t(floats) * 2 * sizeof(float));
    from_ = {memory_.get(), 0, ElementType::f32, floats, 1};
    to_ = {memory_.get(), std::size_t(floats) * sizeof(float), ElementType::f32, floats, 1};
  }
  void operator()(Stream& stream) const {
    if (memory_) stream.copy(from_, to_);
  }

 private:
  std::shared_ptr<Buffer> memory_;
  Tensor from_, to_;
};

// One cache's decode step, planned once as a model's step is; each timed run is one layer's,
// timed by events on the stream: on a GPU, a host clock would add the launch and the wait.
class TimedDecode {
 public:
  TimedDecode(Backend& backend, const EngineSettings& settings, const BenchArgs& a,
              const Plan& plan)
      : store_(backend.make_kv_store({{1, a.kv_heads, a.head_dim}, settings.layout, 0})),
        stream_(backend.make_stream()),
        attention_(backend.make_attention()),
        start_(stream_->make_event()),
        end_(stream_->make_event()) {
    fill_random(backend, *stream_, *store_, a.context_tokens);
    store_->commit(*stream_, plan);
    const int q_heads = a.kv_heads * a.gqa;
    std::vector<float> q(std::size_t(q_heads * a.head_dim));
    std::mt19937 rng(1);
    std::normal_distribution<float> dist;
    for (float& x : q) x = dist(rng);
    q_ = upload_rows(backend, *stream_, q, 1, q_heads * a.head_dim, "q");
    out_ = device_rows(backend, q.size(), 1, q_heads * a.head_dim, "out");
    plan_ = attention_->plan_decode(*store_, q_heads);
    scale_ = 1.0f / std::sqrt(float(a.head_dim));
  }

  double run(const CacheFlush& flush) {
    flush(*stream_);
    stream_->record(*start_);
    attention_->decode(*stream_, *plan_, *store_, 0, q_.tensor, scale_, out_.tensor);
    stream_->record(*end_);
    stream_->synchronize();
    return stream_->seconds_between(*start_, *end_);
  }

  const KvStore& store() const { return *store_; }

 private:
  std::shared_ptr<KvStore> store_;
  std::shared_ptr<Stream> stream_;
  std::shared_ptr<AttentionExecutor> attention_;
  std::shared_ptr<Event> start_, end_;
  DeviceRows q_, out_;
  std::unique_ptr<DecodePlan> plan_;
  float scale_ = 1.0f;
};

// The caches' timed runs alternate, so that a slow spell of the machine (another process, the
// memory's state) falls on each alike and their ratio holds: timed one after the other, two
// caches of the same all-FP16 plan came out far apart.
std::vector<Timing> time_alternating(std::span<TimedDecode* const> caches, const CacheFlush& flush,
                                     int repeat) {
  for (int i = 0; i < 3; ++i) {  // warm up
    for (TimedDecode* cache : caches) cache->run(flush);
  }
  std::vector<std::vector<double>> seconds(caches.size());
  for (int i = 0; i < repeat; ++i) {
    for (std::size_t c = 0; c < caches.size(); ++c) seconds[c].push_back(caches[c]->run(flush));
  }
  std::vector<Timing> timings;
  for (std::vector<double>& s : seconds) {
    std::sort(s.begin(), s.end());
    timings.push_back({s[s.size() / 2], s.front()});
  }
  return timings;
}

nlohmann::json cache_json(Backend& backend, const KvStore& store, const Timing& t,
                          const BenchArgs& a) {
  const std::size_t bytes = store.bytes();
  const double bandwidth = backend.measure_read_bandwidth(bytes);
  const double achieved = double(bytes) / t.median_s;
  const std::int64_t elements = 2 * a.context_tokens * a.kv_heads * a.head_dim;
  return {{"bytes", bytes},
          {"avg_bits", double(bytes) * 8.0 / double(elements)},
          {"time_s", t.median_s},
          {"time_min_s", t.min_s},
          {"achieved_gbps", achieved / 1e9},
          {"bandwidth_gbps", bandwidth / 1e9},
          {"bandwidth_fraction", achieved / bandwidth}};
}

void check_mix(const std::vector<double>& mix) {
  const bool fractions = mix.size() == 3 && std::all_of(mix.begin(), mix.end(), [](double f) {
                           return std::isfinite(f) && f >= 0.0;
                         });
  if (!fractions || std::abs(mix[0] + mix[1] + mix[2] - 1.0) > 1e-6) {
    throw Error(fmt::format("--mix {} is not three fractions FP16,INT4,INT2 that sum to 1",
                            fmt::join(mix, ",")));
  }
}

// Both caches are held at once, each filled at FP16 before its plan is committed, and the
// bandwidth is read from a buffer as large as a cache: three FP16 caches at the peak.
void require_bench_memory(const BenchArgs& args) {
  const KvShape shape{1, args.kv_heads, args.head_dim};
  require_memory(3 * shape.fp16_bytes(args.context_tokens),
                 fmt::format("bench attention over {} tokens x {} KV heads x {} (the FP16 cache, "
                             "the mixed one and a bandwidth buffer as large)",
                             args.context_tokens, args.kv_heads, args.head_dim));
}

void run(const BenchArgs& args) {
  check_mix(args.mix);
  require_bench_memory(args);
  std::vector<std::string> overrides = args.config.overrides;
  if (args.threads > 0) overrides.push_back("backend.cpu.threads=" + std::to_string(args.threads));
  ConfigArgs config = args.config;
  config.overrides = overrides;
  args.simd.apply(config);
  const Engine engine(config.load());
  Backend& backend = *engine.backend();
  args.simd.check_backend(backend);
  const int chunk = engine.settings().layout.group_size;

  const Plan mixed = mixed_plan(args.context_tokens, chunk, args.mix);
  const Plan fp16 = mixed_plan(args.context_tokens, chunk, {1.0, 0.0, 0.0});
  if (!args.json) std::cerr << "filling the mixed and the FP16 cache...\n";
  TimedDecode mixed_cache(backend, engine.settings(), args, mixed);
  TimedDecode fp16_cache(backend, engine.settings(), args, fp16);
  if (!args.json) std::cerr << "timing them in turn...\n";
  const CacheFlush flush(backend, args.flush_mib);
  TimedDecode* const caches[] = {&mixed_cache, &fp16_cache};
  const std::vector<Timing> t = time_alternating(caches, flush, args.repeat);
  const nlohmann::json m = cache_json(backend, mixed_cache.store(), t[0], args);
  const nlohmann::json f = cache_json(backend, fp16_cache.store(), t[1], args);

  const double speedup = f["time_s"].get<double>() / m["time_s"].get<double>();
  const double byte_ratio =
      double(f["bytes"].get<std::size_t>()) / double(m["bytes"].get<std::size_t>());
  nlohmann::json result = {
      {"backend", std::string(backend.name())},
      {"backend_detail", backend.device().availability.reason},
      {"device", backend.device().name},
      {"context_tokens", args.context_tokens},
      {"kv_heads", args.kv_heads},
      {"head_dim", args.head_dim},
      {"gqa", args.gqa},
      {"threads", args.threads},
      {"flush_mib", args.flush_mib},
      {"mix", {{"fp16", args.mix[0]}, {"int4", args.mix[1]}, {"int2", args.mix[2]}}},
      {"mixed", m},
      {"fp16", f},
      {"bandwidth_fraction", m["bandwidth_fraction"]},
      {"speedup_vs_fp16", speedup},
      {"byte_ratio_vs_fp16", byte_ratio},
      {"speedup_over_byte_ratio", speedup / byte_ratio}};
  if (const std::optional<double> peak = datasheet_read_bandwidth(backend.device().name)) {
    result["datasheet_gbps"] = *peak / 1e9;
    for (const char* cache : {"mixed", "fp16"}) {
      result[cache]["datasheet_fraction"] =
          result[cache]["achieved_gbps"].get<double>() * 1e9 / *peak;
    }
  }
  if (args.json) {
    print_json(result);
    return;
  }
  std::cout << "decode attention, " << args.context_tokens << " tokens, " << args.kv_heads
            << " KV heads x " << args.head_dim << ", GQA " << args.gqa << ", backend "
            << backend.name() << " on " << backend.device().name << " ("
            << backend.device().availability.reason << ")\n";
  for (const auto& [name, r] : {std::pair{"mixed", m}, std::pair{"fp16", f}}) {
    std::cout << "  " << name << ": " << r["time_s"].get<double>() * 1e3 << " ms, "
              << human_bytes(r["bytes"].get<std::size_t>()) << ", "
              << r["achieved_gbps"].get<double>() << " GB/s of "
              << r["bandwidth_gbps"].get<double>() << " GB/s ("
              << 100.0 * r["bandwidth_fraction"].get<double>() << "%)\n";
  }
  std::cout << "  speedup vs FP16: " << speedup << "x, byte ratio " << byte_ratio << "x\n";
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks with JSON output");
  bench->require_subcommand(0, 1);
  bench->final_callback([bench] {
    if (bench->get_subcommands().empty()) throw CLI::RequiredError("A bench subcommand");
  });
  auto args = std::make_shared<BenchArgs>();
  CLI::App* attention = bench->add_subcommand(
      "attention", "Decode attention over a synthetic mixed cache against the FP16 cache");
  args->config.add_to(*attention, false);
  attention->add_option("--context-tokens", args->context_tokens, "Tokens in the cache")
      ->check(CLI::Range(std::int64_t(32), std::int64_t(1) << 24));
  attention->add_option("--kv-heads", args->kv_heads, "KV heads")->check(CLI::Range(1, 256));
  attention->add_option("--head-dim", args->head_dim, "Head dimension (multiple of 32)")
      ->check(CLI::Range(32, 1024));
  attention->add_option("--gqa", args->gqa, "Query heads per KV head")->check(CLI::Range(1, 64));
  attention->add_option("--mix", args->mix, "Fractions of chunks at FP16,INT4,INT2")
      ->delimiter(',')
      ->expected(3);
  attention->add_option("--threads", args->threads, "Threads (0 = the backend's default)")
      ->check(CLI::Range(0, 1024));
  attention->add_option("--repeat", args->repeat, "Timed runs (the median is reported)")
      ->check(CLI::Range(1, 100000));
  attention
      ->add_option("--flush-mib", args->flush_mib,
                   "MiB of device memory copied before each timed run, to empty the device's "
                   "last-level cache (0: none; GPUs: more than twice the L2)")
      ->check(CLI::Range(0, 1 << 16));
  args->simd.add_to(*attention);
  attention->add_flag("--json", args->json, "Print JSON");
  attention->callback([args] { run(*args); });
  add_bench_decode_command(*bench);
}

}  // namespace cocktail::cli
