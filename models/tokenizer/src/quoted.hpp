#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cocktail::models::detail {

// `text` in single quotes for an error message: control bytes escaped (\n, \t, \xNN) and cut
// after `max_bytes` bytes with "..." so a long text does not flood the message.
std::string quoted(std::string_view text, std::size_t max_bytes = 48);

}  // namespace cocktail::models::detail
