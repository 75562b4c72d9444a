// A planner whose constructor throws: the plugin macro must turn the exception into an error
// status, so that it never crosses the library boundary.
#include <stdexcept>
#include <string_view>

#include "cocktail/plugin.hpp"

namespace {

class ThrowingPlanner : public cocktail::ChunkPlanner {
 public:
  explicit ThrowingPlanner(cocktail::Options&) { throw std::runtime_error("boom"); }

  std::string_view name() const override { return "test-throwing"; }
  cocktail::Plan plan(const cocktail::PlanInput&) override { return {}; }
};

}  // namespace

COCKTAIL_PLANNER_PLUGIN("test-throwing", "0.0.1", "test planner: its constructor throws",
                        ThrowingPlanner)
