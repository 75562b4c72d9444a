#pragma once

// The rules every AttentionExecutor enforces before it touches its memory, whatever its device:
// how query heads map onto KV heads, which tokens a prefill may attend for, and when the
// attention mass can be read. Each throws a cocktail::Error that starts with `op`.

#include <cstdint>

#include "cocktail/kv_shape.hpp"

namespace cocktail {

// n_q_heads is a positive multiple of the shape's KV heads (query head h reads KV head
// h / (n_q_heads / n_kv_heads)).
void check_query_heads(const char* op, const KvShape& shape, int n_q_heads);

// A prefill of n_new tokens of `layer`, whose tail holds `uncommitted` tokens: the new tokens
// are the last of them.
void check_prefill_tokens(const char* op, int layer, std::int64_t n_new, std::int64_t uncommitted);

// The attention mass of the last n_query of a layer's layer_tokens tokens: it reads the prefill
// at full precision, so nothing may be committed yet, and 1 <= n_query <= layer_tokens.
void check_attention_mass(const char* op, std::int64_t n_committed, std::int64_t n_query,
                          std::int64_t layer_tokens);

// A decode plan is made for one store as it is: used on another store, on that store once it
// has changed (`store_changed`: an append or a commit since), or when `layer` holds `held`
// tokens where the plan counted `planned_tokens`, it no longer fits.
void check_decode_plan_fits(const char* op, bool same_store, bool store_changed,
                            std::int64_t planned_tokens, int layer, std::int64_t held);

}  // namespace cocktail
