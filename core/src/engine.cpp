#include "cocktail/engine.hpp"

#include <algorithm>
#include <utility>

#include "cocktail/error.hpp"
#include "cocktail/logging.hpp"

namespace cocktail {

namespace {

PluginKind kind_of_table(const std::string& kind) {
  if (kind == "backend") return PluginKind::backend;
  if (kind == "planner") return PluginKind::planner;
  return PluginKind::scorer;
}

// Creates the plugin of every [kind.name] table once, so an unknown key or a bad value in any
// table is reported now, even for plugins this run does not use.
void validate_plugin_tables(const PluginRegistry& registry, const Config& config) {
  for (const auto& [kind, tables] : config.plugins) {
    for (const auto& [name, table] : tables) {
      Options options = table;
      const PluginKind plugin_kind = kind_of_table(kind);
      const std::vector<PluginInfo> plugins = registry.plugins_of(plugin_kind);
      if (std::none_of(plugins.begin(), plugins.end(),
                       [&](const PluginInfo& info) { return info.name == name; })) {
        std::string known;
        for (const PluginInfo& info : plugins) known += " " + info.name;
        options.fail_table("configures a " + kind + " plugin that was not found; found:" +
                           (known.empty() ? " none" : known));
      }
      switch (plugin_kind) {
        case PluginKind::backend:
          registry.make_backend_provider(name, &options);
          break;
        case PluginKind::planner:
          registry.make_planner(name, &options);
          break;
        case PluginKind::scorer:
          registry.make_scorer(name, &options);
          break;
      }
    }
  }
}

std::shared_ptr<BackendProvider> make_configured_provider(const PluginRegistry& registry,
                                                          const Config& config,
                                                          const std::string& name) {
  Options options = config.plugin_options("backend", name);
  return registry.make_backend_provider(name, &options);
}

// The provider `auto` picks: the available one with the highest score.
std::shared_ptr<BackendProvider> best_provider(const PluginRegistry& registry,
                                               const Config& config) {
  std::shared_ptr<BackendProvider> best;
  int best_score = 0;
  std::string why_not;
  for (const PluginInfo& info : registry.plugins_of(PluginKind::backend)) {
    try {
      auto provider = make_configured_provider(registry, config, info.name);
      const Availability a = provider->availability();
      if (a.score > best_score) {
        best = std::move(provider);
        best_score = a.score;
      } else if (a.score <= 0) {
        why_not += "\n  " + info.name + ": " + a.reason;
      }
    } catch (const Error& e) {
      why_not += "\n  " + info.name + ": " + e.what();
    }
  }
  if (!best) throw PluginError("no backend can run on this machine:" + why_not);
  log().debug("backend auto: chose '{}' (score {})", best->name(), best_score);
  return best;
}

}  // namespace

std::shared_ptr<Backend> choose_backend(const PluginRegistry& registry, const Config& config) {
  const std::string& name = config.engine.backend;
  std::shared_ptr<BackendProvider> provider;
  if (name == "auto") {
    provider = best_provider(registry, config);
  } else {
    provider = make_configured_provider(registry, config, name);
    if (const Availability a = provider->availability(); a.score <= 0) {
      throw PluginError("backend '" + name + "' cannot run here: " + a.reason);
    }
  }
  const std::vector<DeviceInfo> devices = provider->devices();
  const int device = pick_device(devices, config.engine.device, provider->name());
  log().debug("backend '{}' on device {}: {}", provider->name(), device,
              devices[std::size_t(device)].name);
  return provider->make_backend(device);
}

Engine::Engine(const Config& config)
    : settings_(config.engine), registry_(config.engine.plugin_paths) {
  set_log_level(settings_.log_level);
  validate_plugin_tables(registry_, config);

  backend_ = choose_backend(registry_, config);
  Options planner_options = config.plugin_options("planner", settings_.planner);
  planner_ = registry_.make_planner(settings_.planner, &planner_options);
  Options scorer_options = config.plugin_options("scorer", settings_.scorer);
  scorer_ = registry_.make_scorer(settings_.scorer, &scorer_options);
  scorer_->use_backend(backend_);
}

Session Engine::new_session(const KvShape& shape, std::int64_t max_tokens) const {
  KvStoreOptions options{shape, settings_.layout, max_tokens};
  return Session(backend_, backend_->make_kv_store(options), backend_->make_attention(), planner_,
                 scorer_);
}

Session Engine::session_from(const Session& prefilled) const {
  return Session(backend_, prefilled.store().clone(settings_.layout), backend_->make_attention(),
                 planner_, scorer_);
}

}  // namespace cocktail
