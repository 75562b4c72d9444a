#include "cocktail/plugin_registry.hpp"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cocktail/error.hpp"
#include "cocktail/plugin_abi.h"
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
  EXPECT_THAT(refused,
              UnorderedElementsAre(plugin_file("test-abi-next"), plugin_file("test-no-entry"),
                                   plugin_file("test-small-descriptor"),
                                   plugin_file("not-a-plugin"), plugin_file("test-twin")));
  std::vector<std::string> accepted;
  for (const PluginInfo& info : registry_.plugins()) {
    if (info.file.parent_path() == kPluginDir) accepted.push_back(info.name);
  }
  EXPECT_THAT(accepted, UnorderedElementsAre("test-good", "test-throwing", "test-failing"));
}

TEST_F(PluginRegistryScanTest, RefusesANewerAbiMajorNamingBothVersions) {
  const fs::path file = plugin_file("test-abi-next");
  EXPECT_THAT(rejection_of(registry_, file),
              AllOf(HasSubstr(file.string()),
                    HasSubstr("plugin ABI " + std::to_string(kAbiMajor + 1) + ".0"),
                    HasSubstr("host speaks ABI " + std::to_string(kAbiMajor) + "." +
                              std::to_string(kAbiMinor))));
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
  {
    const PluginRegistry registry;
    const std::shared_ptr<Backend> backend = registry.make_backend("cpu");
    store = backend->make_kv_store({KvShape{1, 1, 32}, KvQuantLayout{}, 0});
  }
  const std::vector<float> kv(32, 0.5f);
  store->append(0, kv, kv, 1);
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

}  // namespace
}  // namespace cocktail
