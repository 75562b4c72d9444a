#pragma once

// What the real-model fixture tests share: reading the fixtures scripts/make-fixtures.py
// records with llama.cpp (tests/fixtures/<model>/), and our logits at their positions.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cocktail/engine.hpp"
#include "cocktail/models/bpe_tokenizer.hpp"
#include "cocktail/models/llama_model.hpp"

namespace cocktail::models {

// The CPU backend with an FP16 cache, which the fixtures are compared on, its kernels on the
// given SIMD target ([backend.cpu] simd: "auto" for the best this CPU runs; process-wide).
Engine fp16_cpu_engine(const std::string& simd = "auto");

// tests/fixtures/<model>/<name>, parsed.
nlohmann::json read_fixture(const std::string& model, const std::string& name);

// Expects our token ids of every tokens.json case, with and without parsing special tokens.
void expect_token_ids_match(const BpeTokenizer& tokenizer, const nlohmann::json& tokens);

// Our logits (FP16 cache) at every recorded position of a logits.json prompt, prefilled in blocks
// that end there; then greedy decoding through the cache, as many tokens as llama.cpp's
// continuation, into `greedy`. Expects the prompt's token ids to be llama.cpp's.
std::vector<std::vector<float>> logits_at_positions(const LlamaWeights& weights,
                                                    const Engine& engine,
                                                    const nlohmann::json& prompt,
                                                    std::vector<TokenId>& greedy);

int arg_max(const std::vector<float>& row);

// The largest |ours - theirs| over a reference position's top ids.
double worst_difference(const std::vector<float>& ours, const nlohmann::json& position);

}  // namespace cocktail::models
