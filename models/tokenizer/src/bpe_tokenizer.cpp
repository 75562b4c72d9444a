#include "cocktail/models/bpe_tokenizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "byte_level.hpp"
#include "cocktail/error.hpp"
#include "cocktail/logging.hpp"
#include "pre_tokenizer.hpp"
#include "quoted.hpp"
#include "utf8.hpp"
#include "vocabulary_check.hpp"

namespace cocktail::models {

namespace {

using detail::quoted;

constexpr TokenId kNoToken = -1;     // a byte whose character is not in the vocabulary
constexpr TokenId kMergedAway = -2;  // a symbol merged into the one on its left

// Bytes that could not be encoded, for the warning.
struct DroppedBytes {
  std::size_t count = 0;
  unsigned char first = 0;
};

// Byte-level BPE over one word, as llama.cpp's llm_tokenizer_bpe_session does it: a symbol per
// byte, a heap of adjacent pairs that have a merge, lowest rank (then leftmost) merged first.
// The buffers are kept from word to word.
class WordMerger {
 public:
  WordMerger(const std::array<TokenId, 256>& byte_tokens, const detail::MergeTable& merges)
      : byte_tokens_(byte_tokens), merges_(merges) {}

  void encode(std::string_view bytes, std::vector<TokenId>& out, DroppedBytes& dropped) {
    if (bytes.empty()) return;
    symbols_.clear();
    heap_.clear();
    const int n = int(bytes.size());
    for (int i = 0; i < n; ++i) {
      const auto byte = static_cast<unsigned char>(bytes[std::size_t(i)]);
      symbols_.push_back({byte_tokens_[byte], i - 1, i + 1 < n ? i + 1 : -1, byte});
    }
    for (int i = 1; i < n; ++i) consider(i - 1, i);
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), LaterFirst{});
      const Candidate c = heap_.back();
      heap_.pop_back();
      Symbol& left = symbols_[std::size_t(c.left)];
      Symbol& right = symbols_[std::size_t(c.right)];
      // Queued before one of the two merged with another neighbour: no longer this pair.
      if (left.id != c.left_id || right.id != c.right_id || left.next != c.right) continue;
      left.id = c.result;
      left.next = right.next;
      if (right.next >= 0) symbols_[std::size_t(right.next)].prev = c.left;
      right.id = kMergedAway;
      consider(left.prev, c.left);
      consider(c.left, left.next);
    }
    // Symbol 0 never merges away: merges keep the left symbol.
    for (int i = 0; i >= 0; i = symbols_[std::size_t(i)].next) {
      const Symbol& s = symbols_[std::size_t(i)];
      if (s.id >= 0) {
        out.push_back(s.id);
      } else if (dropped.count++ == 0) {
        dropped.first = s.byte;
      }
    }
  }

 private:
  struct Symbol {
    TokenId id;
    int prev;
    int next;
    unsigned char byte;  // the byte it started as, to report one that has no token
  };
  struct Candidate {
    std::int32_t rank;
    int left;
    int right;
    TokenId left_id;
    TokenId right_id;
    TokenId result;
  };
  // Heap order: the top is the lowest rank, then the leftmost pair.
  struct LaterFirst {
    bool operator()(const Candidate& a, const Candidate& b) const {
      return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
  };

  void consider(int left, int right) {
    if (left < 0 || right < 0) return;
    const TokenId l = symbols_[std::size_t(left)].id;
    const TokenId r = symbols_[std::size_t(right)].id;
    if (l < 0 || r < 0) return;
    const detail::Merge* merge = merges_.find(l, r);
    if (merge == nullptr) return;
    heap_.push_back({merge->rank, left, right, l, r, merge->result});
    std::push_heap(heap_.begin(), heap_.end(), LaterFirst{});
  }

  const std::array<TokenId, 256>& byte_tokens_;
  const detail::MergeTable& merges_;
  std::vector<Symbol> symbols_;
  std::vector<Candidate> heap_;
};

// A run of text still to be tokenized, or a special token found in the text.
struct Fragment {
  std::size_t begin;
  std::size_t size;
  TokenId token;  // kNoToken for text
};

std::string token_where(TokenId id, const std::string& text) {
  return "vocabulary token " + std::to_string(id) + " " + quoted(text);
}

// A normal token's text through the byte-level alphabet, back to bytes.
std::string normal_piece(TokenId id, const std::string& text) {
  std::string bytes;
  for (const char32_t c : detail::decode_utf8_lenient(text)) {
    const std::optional<unsigned char> byte = detail::char_to_byte(c);
    if (!byte) {
      throw Error(token_where(id, text) + " is normal but has the character U+" +
                  fmt::format("{:04X}", std::uint32_t(c)) +
                  ", which is not in GPT-2's byte-level alphabet");
    }
    bytes += char(*byte);
  }
  return bytes;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A byte token "<0xAB>" as its byte.
std::string byte_piece(TokenId id, const std::string& text) {
  const bool framed = text.size() == 6 && text.starts_with("<0x") && text.ends_with('>');
  const int high = framed ? hex_digit(text[3]) : -1;
  const int low = framed ? hex_digit(text[4]) : -1;
  if (high < 0 || low < 0) throw Error(token_where(id, text) + " is a byte token but not <0xAB>");
  return std::string(1, char(high * 16 + low));
}

}  // namespace

std::string byte_level_token(unsigned char byte) {
  std::string text;
  detail::append_utf8(text, detail::byte_to_char(byte));
  return text;
}

struct BpeTokenizer::Tables {
  explicit Tables(Vocabulary v);

  std::vector<Fragment> partition(std::string_view text, bool parse_special) const;
  void encode_text(std::string_view text, WordMerger& merger, std::vector<TokenId>& out,
                   DroppedBytes& dropped) const;

  Vocabulary vocabulary;
  detail::CheckedVocabulary checked;  // the token index and merges, pointing into vocabulary
  detail::PreTokenizer pre_tokenizer;
  std::array<TokenId, 256> byte_tokens{};  // kNoToken where the vocabulary has none
  std::vector<TokenId> specials;           // control, unknown and user-defined: longest text first
  std::vector<std::string> pieces;
  std::vector<bool> hidden;  // control and unknown: shown only with render_special
};

BpeTokenizer::Tables::Tables(Vocabulary v)
    : vocabulary(std::move(v)),
      checked(detail::check_vocabulary(vocabulary)),
      pre_tokenizer(detail::pre_tokenizer_named(vocabulary.pre_tokenizer)) {
  const std::vector<std::string>& tokens = vocabulary.tokens;
  for (int b = 0; b < 256; ++b) {
    byte_tokens[std::size_t(b)] =
        checked.index.find(byte_level_token(static_cast<unsigned char>(b))).value_or(kNoToken);
  }

  pieces.resize(tokens.size());
  hidden.resize(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto id = TokenId(i);
    switch (vocabulary.types[i]) {
      case TokenType::normal:
        pieces[i] = normal_piece(id, tokens[i]);
        break;
      case TokenType::byte:
        pieces[i] = byte_piece(id, tokens[i]);
        break;
      case TokenType::control:
      case TokenType::unknown:
        pieces[i] = tokens[i];
        hidden[i] = true;
        specials.push_back(id);
        break;
      case TokenType::user_defined:
        pieces[i] = tokens[i];
        specials.push_back(id);
        break;
      case TokenType::unused:
        break;
    }
  }
  std::stable_sort(specials.begin(), specials.end(), [&](TokenId a, TokenId b) {
    return tokens[std::size_t(a)].size() > tokens[std::size_t(b)].size();
  });
}

// llama.cpp's tokenizer_st_partition: each special token in turn, longest first, cuts every
// text fragment at its occurrences, left to right.
std::vector<Fragment> BpeTokenizer::Tables::partition(std::string_view text,
                                                      bool parse_special) const {
  std::vector<Fragment> fragments;
  if (!text.empty()) fragments.push_back({0, text.size(), kNoToken});
  std::vector<Fragment> cut;
  for (const TokenId id : specials) {
    if (!parse_special && vocabulary.types[std::size_t(id)] != TokenType::user_defined) continue;
    const std::string_view special = vocabulary.tokens[std::size_t(id)];
    cut.clear();
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken) {
        cut.push_back(f);
        continue;
      }
      const std::size_t end = f.begin + f.size;
      std::size_t pos = f.begin;
      while (pos < end) {
        const std::size_t found = text.substr(0, end).find(special, pos);
        const std::size_t text_end = found == std::string_view::npos ? end : found;
        if (text_end > pos) cut.push_back({pos, text_end - pos, kNoToken});
        if (found == std::string_view::npos) break;
        cut.push_back({found, special.size(), id});
        pos = found + special.size();
      }
    }
    fragments.swap(cut);
  }
  return fragments;
}

void BpeTokenizer::Tables::encode_text(std::string_view text, WordMerger& merger,
                                       std::vector<TokenId>& out, DroppedBytes& dropped) const {
  const std::u32string codepoints = detail::decode_utf8_lenient(text);
  std::string word;
  std::size_t begin = 0;
  for (const std::size_t end : detail::split_words(pre_tokenizer, codepoints)) {
    word.clear();
    for (std::size_t i = begin; i < end; ++i) detail::append_utf8(word, codepoints[i]);
    merger.encode(word, out, dropped);
    begin = end;
  }
}

BpeTokenizer::BpeTokenizer(Vocabulary vocabulary)
    : tables_(std::make_shared<const Tables>(std::move(vocabulary))) {}

const Vocabulary& BpeTokenizer::vocabulary() const {
  return tables_->vocabulary;
}

std::size_t BpeTokenizer::size() const {
  return tables_->vocabulary.tokens.size();
}

std::optional<TokenId> BpeTokenizer::find(std::string_view text) const {
  return tables_->checked.index.find(text);
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool parse_special,
                                          bool add_special) const {
  const Tables& t = *tables_;
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 2);
  if (add_special && t.vocabulary.add_bos) out.push_back(*t.vocabulary.bos);
  WordMerger merger(t.byte_tokens, t.checked.merges);
  DroppedBytes dropped;
  for (const Fragment& f : t.partition(text, parse_special)) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
    } else {
      t.encode_text(text.substr(f.begin, f.size), merger, out, dropped);
    }
  }
  if (dropped.count > 0) {
    log().warn(
        "tokenizer: dropped {} byte(s) whose byte-level character is not in the "
        "vocabulary (the first is 0x{:02X}), as llama.cpp does",
        dropped.count, unsigned(dropped.first));
  }
  return out;
}

std::string_view BpeTokenizer::token_piece(TokenId id, bool render_special) const {
  const Tables& t = *tables_;
  if (id < 0 || std::size_t(id) >= t.pieces.size()) {
    throw Error("token id " + std::to_string(id) + " is out of range (vocabulary of " +
                std::to_string(t.pieces.size()) + " tokens)");
  }
  if (t.hidden[std::size_t(id)] && !render_special) return {};
  return t.pieces[std::size_t(id)];
}

std::string BpeTokenizer::decode(std::span<const TokenId> ids, bool render_special) const {
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const TokenId id = ids[i];
    if (id < 0 || std::size_t(id) >= size()) {
      throw Error("decode: token id " + std::to_string(id) + " at position " + std::to_string(i) +
                  " is out of range (vocabulary of " + std::to_string(size()) + " tokens)");
    }
    text += token_piece(id, render_special);
  }
  return text;
}

}  // namespace cocktail::models
