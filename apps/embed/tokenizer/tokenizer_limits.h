// The bounds dlrt puts on what a model folder (tokenizer.json and the JSON
// configs beside it) can make the tokenizer do, in one place: docs/tokenizers.md
// lists them ("Limits"). Past a load-time bound the folder is refused
// (kInvalidModel / kUnsupported); past a per-request bound that request fails
// with kInvalidArgument (Tokenizer::encode_checked) and the server goes on.
//
// Thread-safety: constants only.
#pragma once

#include <cstddef>

namespace dlrt::embed {

// ---- loading (kInvalidModel)

// JSON nesting (objects and arrays) in tokenizer.json, tokenizer_config.json
// and the other JSON files of a folder. serde_json, which Hugging Face's
// tokenizers reads tokenizer.json with, stops at the same depth.
inline constexpr size_t kMaxJsonDepth = 128;

// Sequence nesting of normalizers, pre-tokenizers, post-processors and
// decoders (a Sequence inside a Sequence ...). Each level costs two JSON
// levels, so kMaxJsonDepth already keeps files under it; this bounds the
// builders' own recursion whatever the JSON.
inline constexpr size_t kMaxComponentDepth = 64;

// Instructions of one compiled Split / Replace regex (counted and nested
// repetitions expanded); larger patterns are kUnsupported.
inline constexpr size_t kMaxRegexProgram = 20000;

// WordPiece: the longest token a word can match (the longest vocabulary entry
// in code points, or max_input_chars_per_word plus the continuation prefix
// when that is less). Each token of a word tries at most that many lengths,
// so the work per input character is bounded by it.
inline constexpr size_t kMaxWordPieceMatchChars = 256;

// Unigram: bytes of one vocabulary piece. The lattice tries every piece that
// starts at each byte of a word, so the work per input byte is bounded by it.
inline constexpr size_t kMaxUnigramPieceBytes = 1024;

// ---- one request (kInvalidArgument)

// Steps of one regex search: kRegexBaseSteps + kRegexStepsPerChar per code
// point of the text searched.
inline constexpr size_t kRegexStepsPerChar = 64;
inline constexpr size_t kRegexBaseSteps = size_t{1} << 22;

// Memory of one regex search (the states it remembers and its lookahead
// results): kRegexMemoBaseBytes + kRegexMemoBytesPerChar per code point.
inline constexpr size_t kRegexMemoBytesPerChar = 256;
inline constexpr size_t kRegexMemoBaseBytes = size_t{32} << 20;

// The normalised text of one encode (all its pieces, in code points): at most
// kMaxNormalizedGrowth per input byte plus kNormalizedSlack. Unicode
// normalisation grows text at most 6 code points per input byte (U+FDFA: 3
// bytes, 18 code points); only Replace, Prepend and Precompiled maps with long
// replacements, or long chains of normalizers, go further.
inline constexpr size_t kMaxNormalizedGrowth = 16;
inline constexpr size_t kNormalizedSlack = 4096;

}  // namespace dlrt::embed
