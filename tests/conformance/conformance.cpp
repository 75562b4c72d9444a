#include "conformance.hpp"

#include <hwy/targets.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "cocktail/backend_provider.hpp"
#include "cocktail/error.hpp"
#include "cocktail/options.hpp"
#include "cocktail/stream.hpp"
#include "support/random_kv.hpp"

namespace cocktail::conformance {

std::shared_ptr<BackendProvider> make_provider(const std::string& name) {
  const std::size_t at = name.find('@');
  if (at == std::string::npos) return registry().make_backend_provider(name);
  Options options("backend.cpu", {"conformance test", 0});
  options.set("simd", name.substr(at + 1), {"conformance test", 0});
  return registry().make_backend_provider(name.substr(0, at), &options);
}

namespace {

BackendUnderTest make_backend_under_test(const std::string& name) {
  try {
    const std::shared_ptr<BackendProvider> provider = make_provider(name);
    const Availability availability = provider->availability();
    if (availability.score <= 0) {
      return {nullptr, "backend '" + name + "' cannot run here: " + availability.reason};
    }
    const int device = pick_device(provider->devices(), "", name);
    return {provider->make_backend(device), {}};
  } catch (const Error& e) {
    return {nullptr, e.what()};
  }
}

}  // namespace

std::vector<std::filesystem::path> extra_plugins() {
  std::vector<std::filesystem::path> paths;
  std::string_view list = COCKTAIL_CONFORMANCE_EXTRA_PLUGINS;
  while (!list.empty()) {
    const std::size_t end = std::min(list.find(';'), list.size());
    if (end > 0) paths.emplace_back(list.substr(0, end));
    list.remove_prefix(std::min(end + 1, list.size()));
  }
  return paths;
}

const PluginRegistry& registry() {
  static const PluginRegistry plugins(extra_plugins());
  return plugins;
}

std::vector<std::string> cpu_simd_targets() {
  std::vector<std::string> accepted;
  for (int bit = 0; bit < 63; ++bit) {
    const std::string name = hwy::TargetName(std::int64_t(1) << bit);
    if (name == "Unknown") continue;
    try {
      make_provider("cpu@" + name);
      accepted.push_back(name);
    } catch (const Error&) {
      // Not a target this CPU runs, or one the backend was not built for.
    }
  }
  make_provider("cpu");  // back to the best target
  return accepted;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const PluginInfo& info : registry().plugins_of(PluginKind::backend)) {
    names.push_back(info.name);
    if (info.name != "cpu") continue;
    // The CPU backend once more on each SIMD target it runs here but the one "cpu" runs.
    const std::string best = make_provider("cpu")->availability().reason;
    for (const std::string& target : cpu_simd_targets()) {
      if (!best.ends_with(" " + target)) names.push_back("cpu@" + target);
    }
  }
  return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  return name;
}

const BackendUnderTest& backend_under_test(const std::string& name) {
  static std::map<std::string, BackendUnderTest> made;
  auto it = made.find(name);
  if (it == made.end()) it = made.emplace(name, make_backend_under_test(name)).first;
  return it->second;
}

void BackendTest::SetUp() {
  const BackendUnderTest& under_test = backend_under_test(GetParam());
  if (!under_test.backend) GTEST_SKIP() << under_test.unavailable;
  // The SIMD target is chosen process-wide as a CPU provider is made: make this test's again.
  if (GetParam().starts_with("cpu")) make_provider(GetParam());
  backend_ = under_test.backend;
  stream_ = backend_->make_stream();
}

DeviceRows BackendTest::to_device(std::span<const float> host, std::int64_t rows,
                                  std::int64_t cols) const {
  DeviceRows rows_on_device = upload_rows(*backend_, *stream_, host, rows, cols, "test input");
  stream_->synchronize();
  return rows_on_device;
}

DeviceRows BackendTest::ints_to_device(std::span<const std::int32_t> host) const {
  DeviceRows ints;
  const TensorRequest request{&ints.tensor, ElementType::i32, std::int64_t(host.size()), 1};
  ints.memory = allocate_tensors(*backend_, std::span(&request, 1));
  upload(*stream_, host, ints.tensor);
  stream_->synchronize();
  return ints;
}

DeviceRows BackendTest::device_floats(std::int64_t rows, std::int64_t cols) const {
  return device_rows(*backend_, std::size_t(rows * cols), rows, cols, "test output");
}

std::vector<float> BackendTest::read_back(const Tensor& t) const {
  std::vector<float> host(std::size_t(t.elements()));
  download(*stream_, t, std::span<float>(host));
  stream_->synchronize();
  return host;
}

std::vector<KvRows> BackendTest::append_random(KvStore& store, std::int64_t n_tokens,
                                               std::mt19937& rng) const {
  const KvShape& shape = store.options().shape;
  std::vector<KvRows> layers;
  for (int layer = 0; layer < shape.n_layers; ++layer) {
    KvRows rows = random_kv_rows(n_tokens, shape.token_floats(), shape.head_dim, rng);
    const auto width = std::int64_t(shape.token_floats());
    const DeviceRows k = to_device(rows.k, n_tokens, width);
    const DeviceRows v = to_device(rows.v, n_tokens, width);
    store.append(*stream_, layer, k.tensor, v.tensor);
    stream_->synchronize();  // before k and v go
    layers.push_back(std::move(rows));
  }
  return layers;
}

void BackendTest::commit(KvStore& store, const Plan& plan) const {
  store.commit(*stream_, plan);
  stream_->synchronize();
}

Plan scattered_plan(std::int64_t n_tokens, std::span<const int> lengths,
                    std::span<const Precision> precisions) {
  Plan plan;
  for (std::int64_t first = 0; first < n_tokens;) {
    const std::size_t i = plan.chunks.size();
    const int length = lengths[i % lengths.size()];
    const auto n = int(std::min<std::int64_t>(length, n_tokens - first));
    const Precision p = n < length ? Precision::fp16 : precisions[i % precisions.size()];
    plan.chunks.push_back({int(i), first, n, 0.0, p});
    first += n;
  }
  return plan;
}

std::vector<Precision> precision_by_position(const Plan& plan, std::int64_t n_tokens) {
  std::vector<Precision> out(std::size_t(n_tokens), Precision::fp16);
  for (const ChunkPlan& c : plan.chunks) {
    std::fill_n(out.begin() + c.first_token, c.n_tokens, c.precision);
  }
  return out;
}

KvRows random_kv_rows(std::int64_t n_tokens, std::size_t token_floats, int head_dim,
                      std::mt19937& rng) {
  KvRows rows{testing::random_floats(std::size_t(n_tokens) * token_floats, rng),
              testing::random_floats(std::size_t(n_tokens) * token_floats, rng, 0.5f)};
  for (std::size_t i = 3; i < rows.k.size(); i += std::size_t(head_dim)) rows.k[i] *= 8.0f;
  return rows;
}

}  // namespace cocktail::conformance
