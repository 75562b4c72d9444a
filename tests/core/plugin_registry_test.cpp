#include "cocktail/plugin_registry.hpp"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/plugin_abi.h"
#include "cocktail/tensor_allocation.hpp"
#include "cocktail/version.hpp"
#include "support/error_of.hpp"

namespace cocktail {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// Where tests/core/plugins writes the test plugins (never the real lib/cocktail folder).
const fs::path kPluginDir = TEST_PLUGIN_DIR;

fs::path plugin_file(const std::string& name) {
  return kPluginDir / ("cocktail-" + name + ".so");
}

template <class Action>
std::string plugin_error(Action&& action) {
  return testing::error_of<PluginError>(action);
}

// Why `file` was refused, or "" when it was not.
std::string rejection_of(const PluginRegistry& registry, const fs::path& file) {
  for (const PluginRejection& r : registry.rejections()) {
    if (r.file == file) return r.reason;
  }
  return {};
}

std::optional<PluginInfo> find_plugin(const PluginRegistry& registry, PluginKind kind,
                                      const std::string& name) {
  for (const PluginInfo& info : registry.plugins_of(kind)) {
    if (info.name == name) return info;
  }
  return std::nullopt;
}

// True while the dynamic loader holds `file`; RTLD_NOLOAD never loads it, only looks.
bool is_loaded(const fs::path& file) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return false;
  dlclose(handle);  // NOLOAD still took a reference
  return true;
}

// A plan from the test-good planner over `n` context tokens.
Plan plan_with(ChunkPlanner& planner, std::size_t n) {
  const std::vector<std::string> texts(n, " word");
  return planner.plan({texts, static_cast<std::int64_t>(n), "query", nullptr});
}

// A registry over the test plugin folder, rebuilt for each test.
class PluginRegistryScanTest : public ::testing::Test {
 protected:
  PluginRegistry registry_{{kPluginDir}};
};

TEST_F(PluginRegistryScanTest, AcceptsTheGoodPlugin) {
  const std::optional<PluginInfo> good = find_plugin(registry_, PluginKind::planner, "test-good");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->file, plugin_file("test-good"));
  EXPECT_EQ(good->version, "1.2.3");
  EXPECT_EQ(good->description, "test planner: the whole context as one chunk");
}

TEST_F(PluginRegistryScanTest, RefusesExactlyTheBadFiles) {
  std::vector<fs::path> refused;
  for (const PluginRejection& r : registry_.rejections()) {
    if (r.file.parent_path() == kPluginDir) refused.push_back(r.file);
  }
  EXPECT_THAT(refused, UnorderedElementsAre(
                           plugin_file("test-abi-next"), plugin_file("test-abi-previous"),
                           plugin_file("test-no-entry"), plugin_file("test-small-descriptor"),
                           plugin_file("not-a-plugin"), plugin_file("test-twin")));
  std::vector<std::string> accepted;
  for (const PluginInfo& info : registry_.plugins()) {
    if (info.file.parent_path() == kPluginDir) accepted.push_back(info.name);
  }
  EXPECT_THAT(accepted, UnorderedElementsAre("test-good", "test-throwing", "test-failing",
                                             "test-throws", "test-throws", "test-throws"));
}

TEST_F(PluginRegistryScanTest, RefusesANewerAbiMajorNamingBothVersions) {
  const fs::path file = plugin_file("test-abi-next");
  EXPECT_THAT(rejection_of(registry_, file),
              AllOf(HasSubstr(file.string()),
                    HasSubstr("plugin ABI " + std::to_string(kAbiMajor + 1) + ".0"),
                    HasSubstr("host speaks ABI " + std::to_string(kAbiMajor) + "." +
                              std::to_string(kAbiMinor))));
}

// A backend built before Compute::rope took a RopeStyle (ABI 7) has another Compute vtable.
TEST_F(PluginRegistryScanTest, RefusesAnOlderAbiMajorNamingBothVersions) {
  const fs::path file = plugin_file("test-abi-previous");
  EXPECT_THAT(rejection_of(registry_, file),
              AllOf(HasSubstr(file.string()),
                    HasSubstr("plugin ABI " + std::to_string(kAbiMajor - 1) + ".0"),
                    HasSubstr("host speaks ABI " + std::to_string(kAbiMajor) + "." +
                              std::to_string(kAbiMinor)),
                    HasSubstr("rebuild the plugin against this Cocktail")));
}

TEST_F(PluginRegistryScanTest, RefusesALibraryWithoutTheEntrySymbol) {
  const fs::path file = plugin_file("test-no-entry");
  EXPECT_THAT(
      rejection_of(registry_, file),
      AllOf(HasSubstr(file.string()), HasSubstr("does not export " COCKTAIL_PLUGIN_ENTRY_SYMBOL)));
}

TEST_F(PluginRegistryScanTest, RefusesADescriptorSmallerThanTheAbiNeeds) {
  const fs::path file = plugin_file("test-small-descriptor");
  const std::size_t claimed = offsetof(cocktail_plugin_descriptor, create);
  const std::size_t needed =
      offsetof(cocktail_plugin_descriptor, destroy) + sizeof(cocktail_destroy_fn);
  EXPECT_THAT(rejection_of(registry_, file),
              AllOf(HasSubstr(file.string()),
                    HasSubstr("descriptor is " + std::to_string(claimed) + " bytes"),
                    HasSubstr("at least " + std::to_string(needed))));
}

TEST_F(PluginRegistryScanTest, RefusesAFileThatIsNotASharedLibrary) {
  const fs::path file = plugin_file("not-a-plugin");
  EXPECT_THAT(rejection_of(registry_, file),
              AllOf(HasSubstr(file.string()), HasSubstr("cannot be loaded as a shared library")));
}

TEST_F(PluginRegistryScanTest, RefusesASecondPluginOfTheSameKindAndNameNamingTheFirst) {
  const fs::path file = plugin_file("test-twin");
  EXPECT_THAT(
      rejection_of(registry_, file),
      AllOf(HasSubstr(file.string()), HasSubstr("planner 'test-good' is already provided by " +
                                                plugin_file("test-good").string())));
}

TEST_F(PluginRegistryScanTest, GoodPluginWorksAfterTheRefusals) {
  const std::shared_ptr<ChunkPlanner> planner = registry_.make_planner("test-good");
  EXPECT_EQ(planner->name(), "test-good");
  const Plan plan = plan_with(*planner, 40);
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(plan.chunks[0].n_tokens, 40);
  EXPECT_EQ(plan.chunks[0].precision, Precision::fp16);
}

TEST_F(PluginRegistryScanTest, ConfigTableReachesThePlugin) {
  Options options("planner.test-good", {"test.toml", 1});
  options.set("precision", std::string("int4"), {"test.toml", 2});
  const std::shared_ptr<ChunkPlanner> planner = registry_.make_planner("test-good", &options);
  EXPECT_EQ(plan_with(*planner, 8).chunks[0].precision, Precision::int4);
}

TEST_F(PluginRegistryScanTest, UnknownKeyInTheConfigTableIsReported) {
  Options options("planner.test-good", {"test.toml", 1});
  options.set("precisoin", std::string("int4"), {"test.toml", 2});
  // A config mistake stays a ConfigError across the plugin boundary.
  EXPECT_THAT(
      testing::error_of<ConfigError>([&] { registry_.make_planner("test-good", &options); }),
      AllOf(HasSubstr("test.toml:2"), HasSubstr("precisoin")));
}

TEST_F(PluginRegistryScanTest, ThrowingConstructorBecomesAPluginError) {
  EXPECT_THAT(plugin_error([&] { registry_.make_planner("test-throwing"); }),
              AllOf(HasSubstr(plugin_file("test-throwing").string()), HasSubstr("boom")));
}

TEST_F(PluginRegistryScanTest, FactoryErrorMessageIsCarriedThrough) {
  EXPECT_THAT(plugin_error([&] { registry_.make_planner("test-failing"); }),
              AllOf(HasSubstr(plugin_file("test-failing").string()),
                    HasSubstr("test-failing: the license server is unreachable")));
}

TEST_F(PluginRegistryScanTest, UnknownNameListsWhatWasFound) {
  EXPECT_THAT(plugin_error([&] { registry_.make_planner("no-such-planner"); }),
              AllOf(HasSubstr("'no-such-planner'"), HasSubstr("test-good"),
                    HasSubstr("test-throwing"), HasSubstr(kPluginDir.string())));
}

TEST_F(PluginRegistryScanTest, KindIsPartOfTheName) {
  EXPECT_THAT(plugin_error([&] { registry_.make_scorer("test-good"); }),
              HasSubstr("no scorer plugin named 'test-good'"));
}

TEST(PluginRegistryTest, ObjectsKeepTheirLibraryLoadedAfterTheRegistryIsGone) {
  std::shared_ptr<ChunkPlanner> planner;
  {
    const PluginRegistry registry({plugin_file("test-good")});
    planner = registry.make_planner("test-good");
  }
  EXPECT_TRUE(is_loaded(plugin_file("test-good")));
  // Runs the plugin's code (virtual calls, its plan's allocations) and, when the planner goes,
  // its destroy(); under ASan a library unloaded too early shows here.
  EXPECT_EQ(planner->name(), "test-good");
  EXPECT_EQ(plan_with(*planner, 5).n_tokens(), 5);
}

TEST(PluginRegistryTest, BackendObjectsKeepTheBackendAlive) {
  std::shared_ptr<KvStore> store;
  std::shared_ptr<Stream> stream;
  std::shared_ptr<Buffer> memory;
  Tensor kv;
  {
    const PluginRegistry registry;
    const std::shared_ptr<Backend> backend = registry.make_backend_provider("cpu")->make_backend(0);
    store = backend->make_kv_store({KvShape{1, 1, 32}, KvQuantLayout{}, 0});
    stream = backend->make_stream();
    const TensorRequest request{&kv, ElementType::f32, 1, 32};
    memory = allocate_tensors(*backend, std::span(&request, 1));
  }
  const std::vector<float> host(32, 0.5f);
  upload(*stream, std::span(host), kv);
  store->append(*stream, 0, kv, kv);
  stream->synchronize();
  EXPECT_EQ(store->n_tokens(), 1);
}

TEST(PluginRegistryTest, LoadOfABadFileThrowsNamingIt) {
  PluginRegistry registry({kPluginDir});
  const std::size_t rejections = registry.rejections().size();
  for (const char* name : {"not-a-plugin", "test-no-entry", "test-abi-next"}) {
    EXPECT_THAT(plugin_error([&] { registry.load(plugin_file(name)); }),
                HasSubstr(plugin_file(name).string()));
  }
  EXPECT_THAT(plugin_error([&] { registry.load(plugin_file("test-twin")); }),
              HasSubstr("already provided by " + plugin_file("test-good").string()));
  // An explicit load reports to its caller; it does not add to the scan's rejections.
  EXPECT_EQ(registry.rejections().size(), rejections);
}

TEST(PluginRegistryTest, LoadOfAGoodFileAddsItsPlugin) {
  PluginRegistry registry;
  ASSERT_FALSE(find_plugin(registry, PluginKind::planner, "test-good"));
  registry.load(plugin_file("test-good"));
  EXPECT_EQ(registry.make_planner("test-good")->name(), "test-good");
}

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh folder, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() / ("cocktail-registry-test-" + std::to_string(getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(PluginRegistryTest, HonoursEveryEntryOfCocktailPluginPath) {
  const TempDir folder;
  const fs::path copy = folder.path() / "cocktail-test-good.so";
  fs::copy_file(plugin_file("test-good"), copy);
  const fs::path missing = folder.path() / "missing";
  const fs::path throwing = plugin_file("test-throwing");
  // A folder, an empty entry (skipped), a missing folder and a single file.
  const ScopedEnv env("COCKTAIL_PLUGIN_PATH",
                      folder.path().string() + "::" + missing.string() + ":" + throwing.string());
  const PluginRegistry registry;

  const std::vector<fs::path>& path = registry.search_path();
  ASSERT_EQ(path.size(), 4u);
  EXPECT_EQ(std::vector<fs::path>(path.begin() + 1, path.end()),
            (std::vector<fs::path>{folder.path(), missing, throwing}));
  const std::optional<PluginInfo> good = find_plugin(registry, PluginKind::planner, "test-good");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->file, copy);
  EXPECT_TRUE(find_plugin(registry, PluginKind::planner, "test-throwing"));
}

TEST(PluginRegistryTest, CocktailPluginPathComesBeforeTheConfigPaths) {
  const TempDir folder;
  const fs::path copy = folder.path() / "cocktail-test-good.so";
  fs::copy_file(plugin_file("test-good"), copy);
  const ScopedEnv env("COCKTAIL_PLUGIN_PATH", folder.path().string());
  const PluginRegistry registry({kPluginDir});

  const std::optional<PluginInfo> good = find_plugin(registry, PluginKind::planner, "test-good");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->file, copy);
  EXPECT_THAT(rejection_of(registry, plugin_file("test-good")),
              HasSubstr("already provided by " + copy.string()));
}

TEST(PluginRegistryTest, FindsTheInTreePluginsBesideTheCoreLibrary) {
  const PluginRegistry registry;
  const fs::path beside_core = registry.search_path().front();
  EXPECT_EQ(beside_core.filename(), "cocktail");
  const auto expect_found = [&](PluginKind kind, const std::string& name) {
    const std::optional<PluginInfo> info = find_plugin(registry, kind, name);
    ASSERT_TRUE(info) << to_string(kind) << " '" << name << "' not found";
    EXPECT_EQ(info->file.parent_path(), beside_core) << name;
  };
  expect_found(PluginKind::backend, "cpu");
  expect_found(PluginKind::planner, "cocktail");
  expect_found(PluginKind::planner, "uniform");
  expect_found(PluginKind::planner, "recency");
  expect_found(PluginKind::scorer, "bm25");
  EXPECT_FALSE(find_plugin(registry, PluginKind::planner, "test-good"))
      << "test plugins must stay out of the default search path";
}

// One call into a test-throws plugin: the plugin's kind, what the error must say after the
// plugin's label, and the call, made on objects of a registry that is gone by the time the
// error is caught.
struct ThrowingCall {
  std::string kind;
  std::string says;
  std::function<void(const PluginRegistry&)> call;
};

std::string label_of(const std::string& kind) {
  return kind + " 'test-throws' (cocktail-test-throws-" + kind + ".so): ";
}

// Stand-ins for what a caller passes: the test-throws plugin fails before it reads them.
class NoWeights final : public Weights {
 public:
  NoWeights() : Weights(0, 0) {}
};
class NoEvent final : public Event {};
class NoDecodePlan final : public DecodePlan {};

std::vector<ThrowingCall> calls_into_every_entry_point() {
  const auto provider = [](const PluginRegistry& r) {
    return r.make_backend_provider("test-throws");
  };
  const auto backend = [=](const PluginRegistry& r) { return provider(r)->make_backend(0); };
  const auto quantizer = [=](const PluginRegistry& r) {
    return backend(r)->make_quantizer(QuantSpec{});
  };
  const auto store = [=](const PluginRegistry& r) { return backend(r)->make_kv_store({}); };
  const auto attention = [=](const PluginRegistry& r) { return backend(r)->make_attention(); };
  const auto compute = [=](const PluginRegistry& r) { return backend(r)->make_compute(); };
  const auto stream = [=](const PluginRegistry& r) { return backend(r)->make_stream(); };
  const auto planner = [](const PluginRegistry& r) { return r.make_planner("test-throws"); };
  const auto scorer = [](const PluginRegistry& r) { return r.make_scorer("test-throws"); };
  const auto thrown_by = [](const std::string& method) { return "thrown by " + method; };
  const BlockShape shape{32, 32, CodeOrder::token_major};
  const WeightView file{};
  const auto weights = std::make_shared<const NoWeights>();
  const Tensor t{};
  return {
      {"backend", thrown_by("BackendProvider::name"), [=](auto& r) { provider(r)->name(); }},
      {"backend", thrown_by("BackendProvider::availability"),
       [=](auto& r) { provider(r)->availability(); }},
      {"backend", "threw something that is not a std::exception",
       [=](auto& r) { provider(r)->devices(); }},
      {"backend", thrown_by("Backend::name"), [=](auto& r) { backend(r)->name(); }},
      {"backend", thrown_by("Backend::device"), [=](auto& r) { backend(r)->device(); }},
      {"backend", "out of memory", [=](auto& r) { backend(r)->measure_read_bandwidth(1); }},
      {"backend", thrown_by("Backend::allocate"), [=](auto& r) { backend(r)->allocate(64); }},
      {"backend", thrown_by("Backend::wrap_memory"),
       [=](auto& r) { backend(r)->wrap_memory(nullptr, 0); }},
      {"backend", thrown_by("Backend::wrap_stream"),
       [=](auto& r) { backend(r)->wrap_stream(nullptr); }},
      {"backend", thrown_by("Stream::upload"), [=](auto& r) { stream(r)->upload({}, t); }},
      {"backend", thrown_by("Stream::download"), [=](auto& r) { stream(r)->download(t, {}); }},
      {"backend", thrown_by("Stream::copy"), [=](auto& r) { stream(r)->copy(t, t); }},
      {"backend", thrown_by("Stream::synchronize"), [=](auto& r) { stream(r)->synchronize(); }},
      {"backend", thrown_by("Stream::make_event"), [=](auto& r) { stream(r)->make_event(); }},
      {"backend", thrown_by("Stream::record"),
       [=](auto& r) {
         NoEvent event;
         stream(r)->record(event);
       }},
      {"backend", thrown_by("Stream::seconds_between"),
       [=](auto& r) { stream(r)->seconds_between(NoEvent(), NoEvent()); }},
      {"backend", thrown_by("Quantizer::spec"), [=](auto& r) { quantizer(r)->spec(); }},
      {"backend", thrown_by("Quantizer::packed_bytes"),
       [=](auto& r) { quantizer(r)->packed_bytes(shape); }},
      {"backend", thrown_by("Quantizer::pack"),
       [=](auto& r) { quantizer(r)->pack({}, shape, {}); }},
      {"backend", thrown_by("Quantizer::unpack"),
       [=](auto& r) { quantizer(r)->unpack({}, shape, {}); }},
      {"backend", thrown_by("KvStore::options"), [=](auto& r) { store(r)->options(); }},
      {"backend", thrown_by("KvStore::append"),
       [=](auto& r) { store(r)->append(*stream(r), 0, t, t); }},
      {"backend", thrown_by("KvStore::commit"),
       [=](auto& r) { store(r)->commit(*stream(r), Plan{}); }},
      {"backend", thrown_by("KvStore::n_tokens"), [=](auto& r) { store(r)->n_tokens(); }},
      {"backend", thrown_by("KvStore::n_committed"), [=](auto& r) { store(r)->n_committed(); }},
      {"backend", thrown_by("KvStore::plan"), [=](auto& r) { store(r)->plan(); }},
      {"backend", thrown_by("KvStore::bytes"), [=](auto& r) { store(r)->bytes(); }},
      {"backend", thrown_by("KvStore::segments"), [=](auto& r) { store(r)->segments(); }},
      {"backend", thrown_by("KvStore::snapshot"), [=](auto& r) { store(r)->snapshot(0, 0); }},
      {"backend", thrown_by("KvStore::clone"), [=](auto& r) { store(r)->clone({}); }},
      {"backend", thrown_by("AttentionExecutor::plan_decode"),
       [=](auto& r) { attention(r)->plan_decode(*store(r), 1); }},
      {"backend", thrown_by("AttentionExecutor::decode"),
       [=](auto& r) {
         NoDecodePlan plan;
         attention(r)->decode(*stream(r), plan, *store(r), 0, t, 1.0f, t);
       }},
      {"backend", thrown_by("AttentionExecutor::prefill"),
       [=](auto& r) { attention(r)->prefill(*stream(r), *store(r), 0, t, 1, 1.0f, t); }},
      {"backend", thrown_by("AttentionExecutor::attention_mass"),
       [=](auto& r) { attention(r)->attention_mass(*stream(r), *store(r), 0, t, 1, 1.0f, t); }},
      {"backend", thrown_by("Compute::name"), [=](auto& r) { compute(r)->name(); }},
      {"backend", thrown_by("Compute::upload"), [=](auto& r) { compute(r)->upload(file); }},
      {"backend", thrown_by("Compute::matmul"),
       [=](auto& r) { compute(r)->matmul(*stream(r), *weights, t, t); }},
      {"backend", thrown_by("Compute::matmul_shared_input"),
       [=](auto& r) { compute(r)->matmul_shared_input(*stream(r), t, {}); }},
      {"backend", thrown_by("Compute::embedding"),
       [=](auto& r) { compute(r)->embedding(*stream(r), *weights, t, t); }},
      {"backend", thrown_by("Compute::rms_norm"),
       [=](auto& r) { compute(r)->rms_norm(*stream(r), t, t, 1e-5f, t); }},
      {"backend", thrown_by("Compute::rope"),
       [=](auto& r) { compute(r)->rope(*stream(r), t, t, 1, 32, 1e4f, RopeStyle::halves); }},
      {"backend", thrown_by("Compute::silu_mul"),
       [=](auto& r) { compute(r)->silu_mul(*stream(r), t, t); }},
      {"backend", thrown_by("Compute::add"), [=](auto& r) { compute(r)->add(*stream(r), t, t); }},
      {"backend", thrown_by("Compute::layer_norm"),
       [=](auto& r) { compute(r)->layer_norm(*stream(r), t, t, t, 1e-5f, t); }},
      {"backend", thrown_by("Compute::gelu"), [=](auto& r) { compute(r)->gelu(*stream(r), t); }},
      {"backend", thrown_by("Compute::add_bias"),
       [=](auto& r) { compute(r)->add_bias(*stream(r), t, t); }},
      {"backend", thrown_by("Compute::encoder_attention"),
       [=](auto& r) { compute(r)->encoder_attention(*stream(r), t, t, t, {}, 1, 32, 1.0f, t); }},
      {"planner", thrown_by("name"), [=](auto& r) { planner(r)->name(); }},
      {"planner", thrown_by("plan"), [=](auto& r) { planner(r)->plan(PlanInput{}); }},
      {"planner", thrown_by("replans_during_decode"),
       [=](auto& r) { planner(r)->replans_during_decode(); }},
      {"scorer", thrown_by("name"), [=](auto& r) { scorer(r)->name(); }},
      {"scorer", thrown_by("score"), [=](auto& r) { scorer(r)->score(ScoringInput{}); }},
      {"scorer", thrown_by("use_backend"), [=](auto& r) { scorer(r)->use_backend(nullptr); }},
  };
}

// The message of what `call` throws, read after its registry, its objects and so the plugin
// libraries are gone: the error a host catches must not live in a plugin's library.
std::string error_after_unload(const ThrowingCall& c) {
  const fs::path file = plugin_file("test-throws-" + c.kind);
  try {
    const PluginRegistry registry({file});
    c.call(registry);
  } catch (const Error& e) {
    EXPECT_FALSE(is_loaded(file)) << "the test needs the library unloaded by now";
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(PluginBoundaryTest, EveryEntryPointThrowsAHostErrorNamingThePlugin) {
  for (const ThrowingCall& c : calls_into_every_entry_point()) {
    SCOPED_TRACE(c.kind + ": " + c.says);
    EXPECT_EQ(error_after_unload(c), label_of(c.kind) + c.says);
  }
}

TEST(PluginBoundaryTest, AConfigErrorFromAPluginMethodKeepsItsTypeAndMessage) {
  // Its message already names file, line and key: no label is put before it.
  std::string message;
  try {
    const PluginRegistry registry({plugin_file("test-throws-scorer")});
    registry.make_scorer("test-throws")->query_attention_layers(30);
  } catch (const ConfigError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "test.toml:7: thrown by query_attention_layers");
}

}  // namespace
}  // namespace cocktail
