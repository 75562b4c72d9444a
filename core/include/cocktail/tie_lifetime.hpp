#pragma once

#include <memory>
#include <utility>

namespace cocktail {

// Ties `object`'s lifetime to `owner`: the owner (a library, a backend) is released only after
// the object is destroyed, so a plugin's code outlives everything it made.
template <class T>
std::shared_ptr<T> tie_lifetime(std::shared_ptr<T> object, std::shared_ptr<const void> owner) {
  auto both = std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<T>>>(
      std::move(owner), std::move(object));
  T* raw = both->second.get();
  return std::shared_ptr<T>(std::move(both), raw);
}

}  // namespace cocktail
