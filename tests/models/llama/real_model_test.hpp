#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "cocktail/models/llama_model.hpp"
#include "cocktail/models/model_cache.hpp"
#include "cocktail/models/model_settings.hpp"

namespace cocktail::models {

// The default model, SmolLM2-135M-Instruct: absent, its tests fail (CI fetches it).
struct DefaultModel {
  static std::filesystem::path path() { return ModelSettings{}.resolved_path(); }
  static constexpr bool skip_when_absent = false;
};

// Qwen2.5-Coder-1.5B-Instruct (Q4_K_M): its tests run whenever the model cache holds it.
struct QwenCoderModel {
  static std::filesystem::path path() {
    return model_cache_dir() / "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf";
  }
  static constexpr bool skip_when_absent = true;
};

// Tests on a real model of the model cache (scripts/fetch-models), loaded once per test suite.
// They are skipped when COCKTAIL_SKIP_MODEL_TESTS=1, and when the model is absent if
// Model::skip_when_absent (else they fail, saying how to fetch it).
template <class Model = DefaultModel>
class RealModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* skip = std::getenv("COCKTAIL_SKIP_MODEL_TESTS");
    if (skip && std::string(skip) == "1") {
      skipped_ = "COCKTAIL_SKIP_MODEL_TESTS=1";
      return;
    }
    if (Model::skip_when_absent && !std::filesystem::exists(Model::path())) {
      skipped_ = Model::path().string() + " is absent (scripts/fetch-models downloads it)";
      return;
    }
    model_ = std::make_unique<LlamaModel>(Model::path());
  }
  static void TearDownTestSuite() { model_.reset(); }

  void SetUp() override {
    if (!model_) GTEST_SKIP() << skipped_;
  }

  static inline std::unique_ptr<LlamaModel> model_;
  static inline std::string skipped_;
};

}  // namespace cocktail::models
