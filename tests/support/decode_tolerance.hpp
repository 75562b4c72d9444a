#pragma once

#include "cocktail/kv_store.hpp"
#include "cocktail/plan.hpp"
#include "cocktail/precision.hpp"

namespace cocktail::testing {

// How far a backend's decode attention may be from a float64 reference over the store's own
// contents. Float kernels stay within `float_tolerance`. Over INT4 / INT2 tiles a kernel may
// take integer dot products of the codes with the query and the probabilities rounded to 16
// bits (the CPU backend below AVX-512 does): a rounding of 2^-16 of a head's largest weight,
// which the keys' outlier channel sets, seen up to 1e-3 in the conformance suite (INT2, GQA 8).
// A misread code, scale or tile is far more.
inline double decode_tolerance(const KvStore& store, double float_tolerance) {
  const Plan& plan = store.plan();
  const bool integer_codes = plan.tokens_at(Precision::int4) + plan.tokens_at(Precision::int2) > 0;
  return integer_codes && float_tolerance < 2e-3 ? 2e-3 : float_tolerance;
}

}  // namespace cocktail::testing
