// A scorer whose every method throws an exception type of its own library, but one, which
// throws a ConfigError.
#include "cocktail/plugin.hpp"
#include "throws_everywhere.hpp"

namespace {

using cocktail_test::throw_from;

class ThrowsEverywhereScorer : public cocktail::ChunkScorer {
 public:
  explicit ThrowsEverywhereScorer(cocktail::Options&) {}
  std::string_view name() const override { throw_from("name"); }
  std::vector<double> score(const cocktail::ScoringInput&) override { throw_from("score"); }
  void use_backend(std::shared_ptr<cocktail::Backend>) override { throw_from("use_backend"); }
  // A config mistake found late keeps its type across the boundary.
  std::vector<int> query_attention_layers(int) const override {
    throw cocktail::ConfigError("test.toml:7: thrown by query_attention_layers");
  }
};

}  // namespace

COCKTAIL_SCORER_PLUGIN("test-throws", "0.0.1", "test scorer: every method throws",
                       ThrowsEverywhereScorer)
