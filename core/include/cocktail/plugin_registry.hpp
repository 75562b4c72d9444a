#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cocktail/backend_provider.hpp"
#include "cocktail/chunk_planner.hpp"
#include "cocktail/chunk_scorer.hpp"
#include "cocktail/options.hpp"

namespace cocktail {

enum class PluginKind { backend = 1, planner = 2, scorer = 3 };

std::string_view to_string(PluginKind kind);

// A plugin found on the search path and accepted (ABI checked).
struct PluginInfo {
  PluginKind kind = PluginKind::backend;
  std::string name;
  std::string version;
  std::string description;
  std::filesystem::path file;
};

// A library that was refused, and why. The host goes on without it.
struct PluginRejection {
  std::filesystem::path file;
  std::string reason;
};

class LoadedLibrary;
struct PluginLabel;

// Finds plugin libraries (files named `cocktail-*.so`), checks their ABI and creates their
// objects. Search order, first name wins: the `cocktail/` folder beside the core library (the
// build tree and the install prefix's lib/cocktail both have this shape),
// COCKTAIL_PLUGIN_PATH (':'-separated folders or files), then `extra_paths` (the config's
// plugin_paths). Created objects keep their library loaded while they live.
class PluginRegistry {
 public:
  explicit PluginRegistry(const std::vector<std::filesystem::path>& extra_paths = {});
  ~PluginRegistry();
  PluginRegistry(PluginRegistry&&) noexcept;
  PluginRegistry& operator=(PluginRegistry&&) noexcept;

  // Loads one library from an explicit path; throws PluginError naming the file and reason.
  void load(const std::filesystem::path& file);

  const std::vector<PluginInfo>& plugins() const { return infos_; }
  const std::vector<PluginRejection>& rejections() const { return rejections_; }
  std::vector<PluginInfo> plugins_of(PluginKind kind) const;

  // Throw PluginError when no plugin of that kind and name exists or its factory fails. The
  // objects they return, and every object those make, rethrow what the plugin's code throws as
  // an error of this library naming the plugin, so no exception outlives the plugin's library.
  // A planner's and a scorer's calls are serialised: sessions on other threads may share them.
  std::shared_ptr<BackendProvider> make_backend_provider(const std::string& name,
                                                         Options* options = nullptr) const;
  std::shared_ptr<ChunkPlanner> make_planner(const std::string& name,
                                             Options* options = nullptr) const;
  std::shared_ptr<ChunkScorer> make_scorer(const std::string& name,
                                           Options* options = nullptr) const;

  // The directories searched, in order.
  const std::vector<std::filesystem::path>& search_path() const { return search_path_; }

 private:
  struct Entry;
  void scan(const std::filesystem::path& path_or_dir);
  void try_load(const std::filesystem::path& file);
  const Entry& find(PluginKind kind, const std::string& name) const;
  std::shared_ptr<void> create(PluginKind kind, const std::string& name, Options* options) const;
  PluginLabel label(PluginKind kind, const std::string& name) const;

  std::vector<std::filesystem::path> search_path_;
  std::vector<Entry> entries_;
  std::vector<PluginInfo> infos_;
  std::vector<PluginRejection> rejections_;
};

}  // namespace cocktail
