#pragma once

// The rules every KvStore enforces before it touches its memory, whatever its device: the
// options it can be made with, the layer and sizes of an append, and which plans a commit
// accepts. Each throws a cocktail::Error in the words of "KV store: ...".

#include <cstddef>
#include <cstdint>
#include <span>

#include "cocktail/kv_store.hpp"
#include "cocktail/plan.hpp"
#include "cocktail/precision.hpp"

namespace cocktail {

// Positive layers, KV heads and head_dim; head_dim a multiple of 32 and group_size a positive
// multiple of 32 (the tiles of every backend's store are walked in blocks of 32 codes along
// both axes).
void check_kv_store_options(const KvStoreOptions& options);

// `layer` is one of the shape's layers.
void check_kv_layer(const KvShape& shape, int layer);

// `kv_head` of `layer` is one of the shape's.
void check_kv_head(const KvShape& shape, int layer, int kv_head);

// An append of n_tokens tokens to `layer` of a store whose layers hold `layer_tokens`: the
// layer exists, k and v have n_tokens · token_floats() floats each, and the layer stays within
// max_tokens.
void check_kv_append(const KvStoreOptions& options, std::span<const std::int64_t> layer_tokens,
                     int layer, std::int64_t n_tokens, std::size_t k_floats, std::size_t v_floats);

// Whether a committed token may go from `from` to `to`: it keeps its precision, or goes down
// (later in the enum) from FP16 or INT8, the forms good enough to requantize from.
bool can_requantize(Precision from, Precision to);

// A commit of `plan` to a store whose last plan is `committed` and whose layers hold
// `layer_tokens`: the plan validates, every layer holds the same tokens, the plan covers no more
// than they, and every committed chunk keeps its span and may take its new precision.
void check_commit(const Plan& plan, const Plan& committed,
                  std::span<const std::int64_t> layer_tokens);

}  // namespace cocktail
