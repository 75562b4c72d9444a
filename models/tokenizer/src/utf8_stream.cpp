#include "cocktail/models/utf8_stream.hpp"

#include "utf8.hpp"

namespace cocktail::models {

namespace {

// Where an unfinished character starts at the end of `bytes`, or bytes.size() when the end
// is complete: a lead byte among the last three whose sequence runs past the end and whose
// bytes so far are all continuation bytes.
std::size_t unfinished_tail(std::string_view bytes) {
  const std::size_t n = bytes.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(bytes[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: its lead is further back
    const int length = detail::utf8_sequence_length(c);
    return std::size_t(length) > back ? n - back : n;
  }
  return n;
}

}  // namespace

std::string Utf8Stream::push(std::string_view bytes) {
  pending_ += bytes;
  const std::size_t keep_from = unfinished_tail(pending_);
  std::string ready = pending_.substr(0, keep_from);
  pending_.erase(0, keep_from);
  return ready;
}

std::string Utf8Stream::finish() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

}  // namespace cocktail::models
