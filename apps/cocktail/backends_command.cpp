#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "cocktail/error.hpp"
#include "cocktail/plugin_registry.hpp"
#include "commands.hpp"

namespace cocktail::cli {

namespace {

struct BackendsArgs {
  ConfigArgs config;
  bool json = false;
};

nlohmann::json describe(const PluginRegistry& registry, const Config& config,
                        const PluginInfo& info) {
  nlohmann::json entry = {{"name", info.name},
                          {"version", info.version},
                          {"file", info.file.string()},
                          {"available", false},
                          {"score", 0},
                          {"reason", ""},
                          {"devices", nlohmann::json::array()}};
  try {
    Options options = config.plugin_options("backend", info.name);
    const auto provider = registry.make_backend_provider(info.name, &options);
    const Availability a = provider->availability();
    entry["available"] = a.score > 0;
    entry["score"] = a.score;
    entry["reason"] = a.reason;
    const std::vector<DeviceInfo> devices = provider->devices();
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const DeviceInfo& d = devices[i];
      entry["devices"].push_back({{"index", i},
                                  {"name", d.name},
                                  {"memory_bytes", d.memory_bytes},
                                  {"available", d.availability.score > 0},
                                  {"score", d.availability.score},
                                  {"reason", d.availability.reason}});
    }
  } catch (const Error& e) {
    entry["reason"] = e.what();
  }
  return entry;
}

void run(const BackendsArgs& args) {
  const Config config = args.config.load();
  const PluginRegistry registry(config.engine.plugin_paths);
  nlohmann::json list = nlohmann::json::array();
  for (const PluginInfo& info : registry.plugins_of(PluginKind::backend)) {
    list.push_back(describe(registry, config, info));
  }
  if (args.json) {
    print_json(list);
    return;
  }
  if (list.empty()) std::cout << "no backend plugins found\n";
  for (const auto& b : list) {
    std::cout << b["name"].get<std::string>() << "  "
              << (b["available"].get<bool>() ? "available" : "unavailable") << "  score "
              << b["score"].get<int>() << "  " << b["reason"].get<std::string>() << "\n";
    for (const auto& d : b["devices"]) {
      std::cout << "    device " << d["index"].get<std::size_t>() << ": "
                << d["name"].get<std::string>() << ", "
                << human_bytes(d["memory_bytes"].get<std::size_t>()) << ", "
                << (d["available"].get<bool>() ? "can run" : "cannot run") << ": "
                << d["reason"].get<std::string>() << "\n";
    }
  }
  for (const PluginRejection& r : registry.rejections())
    std::cout << "refused: " << r.reason << "\n";
}

}  // namespace

void add_backends_command(CLI::App& app) {
  auto args = std::make_shared<BackendsArgs>();
  CLI::App* command =
      app.add_subcommand("backends", "List backends, whether each can run here, and why");
  args->config.add_to(*command, false);
  command->add_flag("--json", args->json, "Print JSON");
  command->callback([args] { run(*args); });
}

}  // namespace cocktail::cli
