#pragma once

#include <string>
#include <string_view>

namespace cocktail::models {

// Joins token pieces for printing as they come: push() gives back only whole UTF-8
// characters and keeps an unfinished one until the bytes that finish it arrive. Bytes that
// can never start or finish a character (a stray continuation byte, 0xFF) pass straight
// through, so nothing waits forever. The concatenation of everything push() and finish()
// return is exactly the concatenation of what was pushed.
class Utf8Stream {
 public:
  // The complete characters now available, in order.
  std::string push(std::string_view bytes);
  // The held-back bytes of a character that was never finished, as they are; the stream is
  // empty afterwards.
  std::string finish();

 private:
  std::string pending_;
};

}  // namespace cocktail::models
