#pragma once

#include <CLI/CLI.hpp>

namespace cocktail::cli {

// Each adds one subcommand whose callback does the work (errors are thrown as exceptions).
void add_backends_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_bench_command(CLI::App& app);  // bench attention, and bench decode:
void add_bench_decode_command(CLI::App& bench);
void add_run_command(CLI::App& app);
void add_eval_command(CLI::App& app);

}  // namespace cocktail::cli
