#include "cocktail/plugin_registry.hpp"

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/logging.hpp"
#include "cocktail/plugin_abi.h"
#include "plugin_descriptor.hpp"
#include "plugin_guards.hpp"

namespace cocktail {

namespace fs = std::filesystem;

// A plugin library kept open for as long as the registry or any object it created lives.
class LoadedLibrary {
 public:
  LoadedLibrary(boost::dll::shared_library library, const cocktail_plugin_descriptor& descriptor)
      : library_(std::move(library)), descriptor_(descriptor) {}
  const cocktail_plugin_descriptor& descriptor() const { return descriptor_; }

 private:
  boost::dll::shared_library library_;
  const cocktail_plugin_descriptor& descriptor_;
};

struct PluginRegistry::Entry {
  PluginInfo info;
  std::shared_ptr<const LoadedLibrary> library;
};

std::string_view to_string(PluginKind kind) {
  switch (kind) {
    case PluginKind::backend:
      return "backend";
    case PluginKind::planner:
      return "planner";
    case PluginKind::scorer:
      return "scorer";
  }
  return "?";
}

namespace {

bool is_plugin_file_name(const fs::path& file) {
  const std::string name = file.filename().string();
  return name.starts_with("cocktail-") && file.extension() == ".so";
}

std::vector<fs::path> split_path_list(const char* list) {
  std::vector<fs::path> paths;
  if (!list) return paths;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ':')) {
    if (!item.empty()) paths.emplace_back(item);
  }
  return paths;
}

}  // namespace

PluginRegistry::PluginRegistry(const std::vector<fs::path>& extra_paths) {
  // The folder beside the core library: build/lib/cocktail in the build tree,
  // <prefix>/lib/cocktail once installed.
  search_path_.push_back(boost::dll::this_line_location().parent_path().string() + "/cocktail");
  for (const fs::path& p : split_path_list(std::getenv("COCKTAIL_PLUGIN_PATH"))) {
    search_path_.push_back(p);
  }
  for (const fs::path& p : extra_paths) search_path_.push_back(p);
  for (const fs::path& p : search_path_) scan(p);
}

PluginRegistry::~PluginRegistry() = default;
PluginRegistry::PluginRegistry(PluginRegistry&&) noexcept = default;
PluginRegistry& PluginRegistry::operator=(PluginRegistry&&) noexcept = default;

void PluginRegistry::scan(const fs::path& path_or_dir) {
  std::error_code ec;
  if (fs::is_regular_file(path_or_dir, ec)) {
    try_load(path_or_dir);
    return;
  }
  if (!fs::is_directory(path_or_dir, ec)) {
    log().debug("plugin search path {} does not exist", path_or_dir.string());
    return;
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(path_or_dir, ec)) {
    if (e.is_regular_file(ec) && is_plugin_file_name(e.path())) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) try_load(f);
}

void PluginRegistry::try_load(const fs::path& file) {
  try {
    load(file);
  } catch (const PluginError& e) {
    rejections_.push_back({file, e.what()});
    log().warn("{}", e.what());
  }
}

void PluginRegistry::load(const fs::path& file) {
  const auto refuse = [&file](const std::string& reason) {
    throw PluginError("plugin " + file.string() + " refused: " + reason);
  };
  boost::dll::shared_library library;
  try {
    library.load(boost::dll::fs::path(file.string()),
                 boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    refuse(std::string("cannot be loaded as a shared library: ") + e.what());
  }
  if (!library.has(COCKTAIL_PLUGIN_ENTRY_SYMBOL)) {
    refuse("it does not export " COCKTAIL_PLUGIN_ENTRY_SYMBOL " (not a Cocktail plugin)");
  }
  const auto entry = library.get<const cocktail_plugin_descriptor*()>(COCKTAIL_PLUGIN_ENTRY_SYMBOL);
  const cocktail_plugin_descriptor* descriptor = nullptr;
  try {
    descriptor = entry();
  } catch (...) {
    refuse("its " COCKTAIL_PLUGIN_ENTRY_SYMBOL " threw, which a C entry must not");
  }
  if (std::string problem = descriptor_problem(descriptor); !problem.empty()) refuse(problem);

  PluginInfo info{PluginKind(descriptor->kind), descriptor->name,
                  descriptor->version ? descriptor->version : "",
                  descriptor->description ? descriptor->description : "", file};
  for (const Entry& e : entries_) {
    if (e.info.kind == info.kind && e.info.name == info.name) {
      refuse(std::string(to_string(info.kind)) + " '" + info.name + "' is already provided by " +
             e.info.file.string());
    }
  }
  log().debug("loaded {} plugin '{}' {} from {}", to_string(info.kind), info.name, info.version,
              file.string());
  infos_.push_back(info);
  entries_.push_back(
      {std::move(info), std::make_shared<const LoadedLibrary>(std::move(library), *descriptor)});
}

std::vector<PluginInfo> PluginRegistry::plugins_of(PluginKind kind) const {
  std::vector<PluginInfo> out;
  for (const PluginInfo& info : infos_) {
    if (info.kind == kind) out.push_back(info);
  }
  return out;
}

const PluginRegistry::Entry& PluginRegistry::find(PluginKind kind, const std::string& name) const {
  std::string known;
  for (const Entry& e : entries_) {
    if (e.info.kind != kind) continue;
    if (e.info.name == name) return e;
    known += (known.empty() ? "" : ", ") + e.info.name;
  }
  std::string message = "no " + std::string(to_string(kind)) + " plugin named '" + name +
                        "'; found: " + (known.empty() ? "none" : known) + "; searched:";
  for (const fs::path& p : search_path_) message += " " + p.string();
  for (const PluginRejection& r : rejections_) message += "\n  " + r.reason;
  throw PluginError(message);
}

std::shared_ptr<void> PluginRegistry::create(PluginKind kind, const std::string& name,
                                             Options* options) const {
  const Entry& entry = find(kind, name);
  const cocktail_plugin_descriptor& d = entry.library->descriptor();
  char error[1024] = {};
  void* object = nullptr;
  int status = COCKTAIL_CREATE_FAILED;
  try {
    status = d.create(options, &object, error, sizeof error);
  } catch (...) {
    // A hand-written entry that breaks the C contract: report it before anything else.
    throw PluginError(std::string(to_string(kind)) + " '" + name + "' from " +
                      entry.info.file.string() +
                      " threw out of its C factory, which must not throw");
  }
  // A config mistake stays a ConfigError: its message already names file, line and key.
  if (status == COCKTAIL_CREATE_BAD_CONFIG) throw ConfigError(error);
  if (status != 0 || !object) {
    throw PluginError(std::string(to_string(kind)) + " '" + name + "' from " +
                      entry.info.file.string() +
                      " failed to start: " + (*error ? error : "its factory returned no object"));
  }
  // The deleter holds the library, so the library is unloaded only after the object is gone.
  return std::shared_ptr<void>(
      object, [library = entry.library, label = label(kind, name)](void* p) noexcept {
        try {
          library->descriptor().destroy(p);
        } catch (...) {
          log().error("{}: its destroy function threw, which it must not", label.text);
        }
      });
}

PluginLabel PluginRegistry::label(PluginKind kind, const std::string& name) const {
  return {std::string(to_string(kind)) + " '" + name + "' (" +
          find(kind, name).info.file.filename().string() + ")"};
}

std::shared_ptr<BackendProvider> PluginRegistry::make_backend_provider(const std::string& name,
                                                                       Options* options) const {
  auto provider =
      std::static_pointer_cast<BackendProvider>(create(PluginKind::backend, name, options));
  return guard_backend_provider(std::move(provider), label(PluginKind::backend, name));
}

std::shared_ptr<ChunkPlanner> PluginRegistry::make_planner(const std::string& name,
                                                           Options* options) const {
  auto planner = std::static_pointer_cast<ChunkPlanner>(create(PluginKind::planner, name, options));
  return guard_planner(std::move(planner), label(PluginKind::planner, name));
}

std::shared_ptr<ChunkScorer> PluginRegistry::make_scorer(const std::string& name,
                                                         Options* options) const {
  auto scorer = std::static_pointer_cast<ChunkScorer>(create(PluginKind::scorer, name, options));
  return guard_scorer(std::move(scorer), label(PluginKind::scorer, name));
}

}  // namespace cocktail
