// The `cocktail` command line: run, plan, bench, backends. Each subcommand lives in its own file.

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cocktail/version.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Cocktail: chunk-adaptive mixed-precision KV cache for long-context inference"};
  app.set_version_flag("--version", std::string(cocktail::kVersion));
  // 0..1 rather than exactly 1, so an unknown subcommand is named instead of "required".
  app.require_subcommand(0, 1);
  app.final_callback([&app] {
    if (app.get_subcommands().empty()) throw CLI::RequiredError("A subcommand");
  });
  cocktail::cli::add_run_command(app);
  cocktail::cli::add_eval_command(app);
  cocktail::cli::add_backends_command(app);
  cocktail::cli::add_plan_command(app);
  cocktail::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "cocktail: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
