#include "cocktail/models/wordpiece_tokenizer.hpp"

#include <fmt/format.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <fstream>

#include "cocktail/error.hpp"

namespace cocktail::models {
namespace {

constexpr std::size_t kMaxWordChars = 100;

bool is_control(UChar32 cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return (U_GET_GC_MASK(cp) & U_GC_C_MASK) != 0;
}

bool is_whitespace(UChar32 cp) {
  return u_isUWhiteSpace(cp) != 0;
}

// ASCII symbols count as punctuation too, as in BERT's original tokenizer.
bool is_punctuation(UChar32 cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  return (U_GET_GC_MASK(cp) & U_GC_P_MASK) != 0;
}

// The CJK Unified Ideographs blocks and their extensions and compatibility forms (not Hangul,
// kana or CJK punctuation), as BERT defines "Chinese characters".
bool is_cjk(UChar32 cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Steps 1 and 2: cleaned text with CJK ideographs spaced apart.
icu::UnicodeString clean(std::string_view text) {
  const icu::UnicodeString in =
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), std::int32_t(text.size())));
  icu::UnicodeString out;
  for (std::int32_t i = 0; i < in.length(); i = in.moveIndex32(i, 1)) {
    const UChar32 cp = in.char32At(i);
    if (cp == 0 || cp == 0xFFFD || is_control(cp)) continue;
    if (is_whitespace(cp)) {
      out.append(UChar32(' '));
    } else if (is_cjk(cp)) {
      out.append(UChar32(' ')).append(cp).append(UChar32(' '));
    } else {
      out.append(cp);
    }
  }
  return out;
}

icu::UnicodeString decompose(const icu::UnicodeString& text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  icu::UnicodeString out;
  if (U_SUCCESS(status)) out = nfd->normalize(text, status);
  if (U_FAILURE(status)) {
    throw Error(fmt::format("WordPiece: ICU cannot decompose text (NFD): {}", u_errorName(status)));
  }
  return out;
}

void append_utf8(std::string& out, UChar32 cp) {
  char bytes[U8_MAX_LENGTH];
  std::int32_t length = 0;
  U8_APPEND_UNSAFE(bytes, length, cp);
  out.append(bytes, std::size_t(length));
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> tokens, const std::string& source)
    : tokens_(std::move(tokens)) {
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    if (tokens_[id].empty()) {
      throw Error(fmt::format("{}: token {} (line {}) is empty", source, id, id + 1));
    }
    if (!ids_.emplace(tokens_[id], TokenId(id)).second) {
      throw Error(fmt::format("{}: token '{}' (line {}) repeats line {}", source, tokens_[id],
                              id + 1, ids_.at(tokens_[id]) + 1));
    }
  }
  unk_ = special("[UNK]", source);
  cls_ = special("[CLS]", source);
  sep_ = special("[SEP]", source);
  for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    if (const auto it = ids_.find(name); it != ids_.end()) specials_.push_back({name, it->second});
  }
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::filesystem::path& vocab_txt) {
  std::ifstream in(vocab_txt, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the vocabulary", vocab_txt.string()));
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) tokens.push_back(std::move(line));
  return WordPieceTokenizer(std::move(tokens), vocab_txt.string());
}

WordPieceTokenizer::TokenId WordPieceTokenizer::special(const char* name,
                                                        const std::string& source) const {
  const auto it = ids_.find(name);
  if (it == ids_.end()) throw Error(fmt::format("{}: the vocabulary lacks {}", source, name));
  return it->second;
}

std::vector<std::string> WordPieceTokenizer::words(std::string_view text) {
  const icu::UnicodeString decomposed = decompose(clean(text));
  std::vector<std::string> out;
  std::string word;
  const auto end_word = [&] {
    if (!word.empty()) out.push_back(std::move(word));
    word.clear();
  };
  for (std::int32_t i = 0; i < decomposed.length(); i = decomposed.moveIndex32(i, 1)) {
    const UChar32 cp = decomposed.char32At(i);
    if (u_charType(cp) == U_NON_SPACING_MARK) continue;
    if (is_whitespace(cp)) {
      end_word();
    } else if (is_punctuation(cp)) {
      end_word();
      append_utf8(word, cp);
      end_word();
    } else {
      append_utf8(word, u_tolower(cp));
    }
  }
  end_word();
  return out;
}

std::vector<WordPieceTokenizer::TokenId> WordPieceTokenizer::encode(std::string_view text,
                                                                    std::size_t max_tokens) const {
  if (max_tokens < 2) {
    throw Error(fmt::format("WordPiece: {} tokens leave no room for [CLS] and [SEP]", max_tokens));
  }
  std::vector<TokenId> ids = {cls_};
  const std::size_t full = max_tokens - 1;
  while (!text.empty() && ids.size() < full) {
    // The text up to the next special token is split into words; the special token is kept.
    std::size_t at = text.size();
    const Special* special = nullptr;
    for (const Special& s : specials_) {
      if (const std::size_t found = text.find(s.text); found < at) {
        at = found;
        special = &s;
      }
    }
    for (const std::string& word : words(text.substr(0, at))) {
      if (ids.size() >= full) break;
      append_pieces(word, ids);
    }
    if (special) ids.push_back(special->id);
    text.remove_prefix(special ? at + special->text.size() : at);
  }
  ids.resize(std::min(ids.size(), full));
  ids.push_back(sep_);
  return ids;
}

void WordPieceTokenizer::append_pieces(std::string_view word, std::vector<TokenId>& out) const {
  // Where each character starts, and the word's end.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (starts.size() > kMaxWordChars) {
    out.push_back(unk_);
    return;
  }
  starts.push_back(word.size());
  const std::size_t first_piece = out.size();
  for (std::size_t begin = 0; begin + 1 < starts.size();) {
    std::size_t end = starts.size() - 1;
    TokenId id = -1;
    for (; end > begin; --end) {
      id = find(word.substr(starts[begin], starts[end] - starts[begin]), begin > 0);
      if (id >= 0) break;
    }
    if (id < 0) {
      out.resize(first_piece);
      out.push_back(unk_);
      return;
    }
    out.push_back(id);
    begin = end;
  }
}

WordPieceTokenizer::TokenId WordPieceTokenizer::find(std::string_view piece,
                                                     bool continuation) const {
  const auto it = ids_.find(continuation ? "##" + std::string(piece) : std::string(piece));
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace cocktail::models
