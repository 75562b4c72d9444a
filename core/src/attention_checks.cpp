#include "cocktail/attention_checks.hpp"

#include <string>

#include "cocktail/error.hpp"

namespace cocktail {

void check_query_heads(const char* op, const KvShape& shape, int n_q_heads) {
  if (n_q_heads < shape.n_kv_heads || n_q_heads % shape.n_kv_heads != 0) {
    throw Error(std::string(op) + ": " + std::to_string(n_q_heads) +
                " query heads is not a multiple of the " + std::to_string(shape.n_kv_heads) +
                " KV heads");
  }
}

void check_prefill_tokens(const char* op, int layer, std::int64_t n_new, std::int64_t uncommitted) {
  if (n_new > uncommitted) {
    throw Error(std::string(op) + ": prefill of " + std::to_string(n_new) + " tokens but only " +
                std::to_string(uncommitted) + " are uncommitted in layer " + std::to_string(layer));
  }
}

void check_attention_mass(const char* op, std::int64_t n_committed, std::int64_t n_query,
                          std::int64_t layer_tokens) {
  if (n_committed > 0) {
    throw Error(std::string(op) +
                ": attention_mass reads the prefill at full precision, so it runs before the "
                "plan is committed");
  }
  if (n_query < 1 || n_query > layer_tokens) {
    throw Error(std::string(op) + ": attention_mass of " + std::to_string(n_query) +
                " query tokens over " + std::to_string(layer_tokens) + " stored tokens");
  }
}

void check_decode_plan_fits(const char* op, bool same_store, bool store_changed,
                            std::int64_t planned_tokens, int layer, std::int64_t held) {
  if (same_store && !store_changed && held == planned_tokens) return;
  throw Error(std::string(op) + ": the decode plan was made for " + std::to_string(planned_tokens) +
              " tokens of " + (same_store ? "this store" : "another store") + "; layer " +
              std::to_string(layer) + " now holds " + std::to_string(held) +
              (same_store && store_changed
                   ? " and the store has changed since (an append or a commit)"
                   : "") +
              ": plan the step again");
}

}  // namespace cocktail
