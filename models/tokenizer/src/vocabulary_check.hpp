#pragma once

#include "cocktail/models/vocabulary.hpp"
#include "merge_table.hpp"
#include "token_index.hpp"

namespace cocktail::models::detail {

// What Vocabulary::validate() checks, keeping the tables it builds on the way. They point into
// `v`, which must outlive them and stay where it is.
struct CheckedVocabulary {
  TokenIndex index;
  MergeTable merges;
};

CheckedVocabulary check_vocabulary(const Vocabulary& v);

}  // namespace cocktail::models::detail
