#pragma once

// The backend conformance suite's common ground: which backends to test, the fixture that hands
// each test its backend (or skips it with the reason it cannot run here), and device copies.
// Everything goes through the public interfaces, so any backend plugin can be tested.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cocktail/backend.hpp"
#include "cocktail/backend_provider.hpp"
#include "cocktail/kv_store.hpp"
#include "cocktail/plan.hpp"
#include "cocktail/plugin_registry.hpp"
#include "cocktail/precision.hpp"
#include "cocktail/tensor_allocation.hpp"
#include "support/failures.hpp"

namespace cocktail::conformance {

using testing::Failures;

// Random K and V rows [n_tokens][n_kv_heads · head_dim] for one layer; the keys carry an outlier
// channel per head, as real keys do, so that per-channel and per-token groups differ.
struct KvRows {
  std::vector<float> k, v;
};
KvRows random_kv_rows(std::int64_t n_tokens, std::size_t token_floats, int head_dim,
                      std::mt19937& rng);

// The plugin files the build names in COCKTAIL_CONFORMANCE_EXTRA_PLUGINS (';'-separated):
// test-only backends, which no search path holds.
std::vector<std::filesystem::path> extra_plugins();
// The registry every test makes its plugins from: the default search path and the extra
// plugins.
const PluginRegistry& registry();

// The provider of a backend plugin, by a name of backend_names(): "cpu@AVX2" is the CPU
// backend's with [backend.cpu] simd = "AVX2", which makes every CPU kernel of the process run
// on AVX2 from then on.
std::shared_ptr<BackendProvider> make_provider(const std::string& name);
// The SIMD targets the CPU backend accepts for [backend.cpu] simd on this machine, best first,
// by Highway's names: those it has kernels for and this CPU runs.
std::vector<std::string> cpu_simd_targets();
// The names of every backend plugin the registry found, in its order, and after "cpu" the CPU
// backend on each of its other SIMD targets: "cpu@AVX2" is the CPU backend made with
// [backend.cpu] simd = "AVX2".
std::vector<std::string> backend_names();

// The parameter as a test name: the backend's name with anything but letters and digits as '_'.
std::string test_name(const ::testing::TestParamInfo<std::string>& info);

// A backend plugin on this machine: the backend on its first device that can run, or why there
// is none. Made once per name and kept for the whole run.
struct BackendUnderTest {
  std::shared_ptr<Backend> backend;
  std::string unavailable;  // set when backend is null
};
const BackendUnderTest& backend_under_test(const std::string& name);

// The fixture of every conformance test: the parameter names the backend. A backend that cannot
// run here (availability score <= 0, or an Error while making it) skips with its reason.
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;

  Backend& backend() const { return *backend_; }
  const std::shared_ptr<Backend>& shared_backend() const { return backend_; }
  Stream& stream() const { return *stream_; }

  // An f32 device copy of host rows; waits for the copy, so `host` may go at once.
  DeviceRows to_device(std::span<const float> host, std::int64_t rows, std::int64_t cols) const;
  // An i32 column [n][1] on the device (token ids, positions); waits for the copy too.
  DeviceRows ints_to_device(std::span<const std::int32_t> host) const;
  // rows x cols f32 of uninitialised device memory.
  DeviceRows device_floats(std::int64_t rows, std::int64_t cols) const;
  // Waits for the stream's work, then copies `t` to the host.
  std::vector<float> read_back(const Tensor& t) const;

  // Appends n_tokens random K and V rows to every layer of `store` (random_kv_rows) and
  // returns each layer's rows.
  std::vector<KvRows> append_random(KvStore& store, std::int64_t n_tokens, std::mt19937& rng) const;
  // Commits `plan` and waits for it.
  void commit(KvStore& store, const Plan& plan) const;

 private:
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<Stream> stream_;
};

#define COCKTAIL_CONFORMANCE_SUITE(suite)                                                 \
  INSTANTIATE_TEST_SUITE_P(Backends, suite,                                               \
                           ::testing::ValuesIn(::cocktail::conformance::backend_names()), \
                           ::cocktail::conformance::test_name)

// Chunks over tokens [0, n_tokens) whose lengths cycle through `lengths` and precisions through
// `precisions`, so that precisions are scattered over the context and chunks end inside tiles.
// A last chunk cut short by n_tokens is FP16, as planners leave a remainder.
Plan scattered_plan(std::int64_t n_tokens, std::span<const int> lengths,
                    std::span<const Precision> precisions);

// The precision the plan gives each of n_tokens positions; FP16 past the plan (the tail).
std::vector<Precision> precision_by_position(const Plan& plan, std::int64_t n_tokens);

}  // namespace cocktail::conformance
