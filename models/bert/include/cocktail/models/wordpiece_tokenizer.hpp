#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cocktail::models {

// BERT's uncased WordPiece tokenizer, as Hugging Face's BertTokenizer (and its fast twin) runs
// it with do_lower_case and tokenize_chinese_chars:
//   1. clean: drop NUL, U+FFFD and control/format/unassigned characters (categories C*, but
//      not \t \n \r); every whitespace character becomes a space;
//   2. put spaces around CJK ideographs, so each is a word;
//   3. strip accents (NFD, then drop non-spacing marks) and lower-case;
//   4. split on whitespace, and make every punctuation character (categories P*, and ASCII
//      symbols such as $ + < = > ^ ` | ~) a word of its own;
//   5. each word greedily into the longest vocabulary pieces from its start, later pieces
//      spelled "##piece"; a word with a part no piece matches, or over 100 characters, is
//      [UNK].
// Special tokens written in the text ([PAD], [UNK], [CLS], [SEP], [MASK], case and all) are
// taken as those tokens, as Hugging Face's tokenizers do.
class WordPieceTokenizer {
 public:
  using TokenId = std::int32_t;

  // One token per entry, the id is the index. Throws cocktail::Error for a repeated or empty
  // token, or when [UNK], [CLS] or [SEP] is missing; `source` names the vocabulary in errors.
  WordPieceTokenizer(std::vector<std::string> tokens, const std::string& source);
  // A vocab.txt: one token per line.
  static WordPieceTokenizer from_file(const std::filesystem::path& vocab_txt);

  // [CLS], the text's pieces, [SEP]: at most `max_tokens` ids (at least 2), cutting the
  // pieces at the end as Hugging Face's truncation does.
  std::vector<TokenId> encode(std::string_view text, std::size_t max_tokens) const;
  // Steps 1 to 4: the words of `text`, in order.
  static std::vector<std::string> words(std::string_view text);

  std::size_t size() const { return tokens_.size(); }
  const std::string& token(TokenId id) const { return tokens_.at(std::size_t(id)); }

 private:
  // Appends the pieces of one word.
  void append_pieces(std::string_view word, std::vector<TokenId>& out) const;
  // The id of `piece`, with "##" before it when `continuation`; -1 when absent.
  TokenId find(std::string_view piece, bool continuation) const;
  TokenId special(const char* name, const std::string& source) const;

  struct Special {
    std::string_view text;
    TokenId id;
  };

  std::vector<std::string> tokens_;
  std::vector<Special> specials_;  // those of the vocabulary
  std::unordered_map<std::string, TokenId> ids_;
  TokenId unk_ = 0;
  TokenId cls_ = 0;
  TokenId sep_ = 0;
};

}  // namespace cocktail::models
