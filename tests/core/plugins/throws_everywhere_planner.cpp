// A planner whose every method throws an exception type of its own library.
#include "cocktail/plugin.hpp"
#include "throws_everywhere.hpp"

namespace {

using cocktail_test::throw_from;

class ThrowsEverywherePlanner : public cocktail::ChunkPlanner {
 public:
  explicit ThrowsEverywherePlanner(cocktail::Options&) {}
  std::string_view name() const override { throw_from("name"); }
  cocktail::Plan plan(const cocktail::PlanInput&) override { throw_from("plan"); }
  bool replans_during_decode() const override { throw_from("replans_during_decode"); }
};

}  // namespace

COCKTAIL_PLANNER_PLUGIN("test-throws", "0.0.1", "test planner: every method throws",
                        ThrowsEverywherePlanner)
