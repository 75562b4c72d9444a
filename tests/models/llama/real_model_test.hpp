#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "cocktail/models/llama_model.hpp"
#include "cocktail/models/model_settings.hpp"

namespace cocktail::models {

// Tests on the real model (scripts/fetch-models), loaded once per test suite. They fail when the
// model is absent, and are skipped when COCKTAIL_SKIP_MODEL_TESTS=1.
class RealModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* skip = std::getenv("COCKTAIL_SKIP_MODEL_TESTS");
    if (skip && std::string(skip) == "1") return;
    model_ = std::make_unique<LlamaModel>(ModelSettings{}.resolved_path());
  }
  static void TearDownTestSuite() { model_.reset(); }

  void SetUp() override {
    if (!model_) GTEST_SKIP() << "COCKTAIL_SKIP_MODEL_TESTS=1";
  }

  static inline std::unique_ptr<LlamaModel> model_;
};

}  // namespace cocktail::models
