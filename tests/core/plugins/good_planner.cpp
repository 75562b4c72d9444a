// A well-formed planner plugin: the registry must accept it and hand out working planners. It
// is also built a second time under another file name, to show that a duplicate is refused.
#include <string>
#include <string_view>

#include "cocktail/plugin.hpp"

namespace {

// Plans the whole context as one chunk at the precision of its `precision` key, so a test can
// see both that a real plan comes back and that its config table reached the plugin.
class WholeContextPlanner : public cocktail::ChunkPlanner {
 public:
  explicit WholeContextPlanner(cocktail::Options& options) : precision_(read_precision(options)) {}

  std::string_view name() const override { return "test-good"; }

  cocktail::Plan plan(const cocktail::PlanInput& input) override {
    cocktail::Plan plan;
    plan.chunks.push_back({0, 0, static_cast<int>(input.token_texts.size()), 0.0, precision_});
    return plan;
  }

 private:
  static cocktail::Precision read_precision(cocktail::Options& options) {
    return *cocktail::parse_precision(
        options.get_choice("precision", "fp16", {"fp16", "int8", "int4", "int2"}));
  }

  cocktail::Precision precision_;
};

}  // namespace

COCKTAIL_PLANNER_PLUGIN("test-good", "1.2.3", "test planner: the whole context as one chunk",
                        WholeContextPlanner)
