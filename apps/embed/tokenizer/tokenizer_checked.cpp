// Tokenizer::encode_checked / encode_pair_checked: encode() with the
// per-request bounds of tokenizer_limits.h (the regex step and memory budget
// of tokenizer_regex.h, the normalised length of tokenizer_parts.h) turned
// into errors.
#include <string>

#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_limits.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/tokenizer_regex.h"

namespace dlrt::embed {

namespace {
void clear_flags() {
  tok::take_budget_exceeded();
  tok::take_normalized_overflow();
  tok::take_deadline_passed();
}

Result<Encoding> checked(Encoding e, size_t bytes) {
  if (tok::take_deadline_passed())
    return Status(StatusCode::kCancelled, "the request's deadline passed while tokenizing its input (" +
                                              std::to_string(bytes) + " bytes)");
  if (tok::take_normalized_overflow())
    return InvalidArgument("tokenization stopped: the normalized text grew past " + std::to_string(kMaxNormalizedGrowth) +
                           "x the input (" + std::to_string(bytes) + " bytes) + " + std::to_string(kNormalizedSlack) +
                           " characters (the tokenizer's normalizer amplifies this input)");
  if (!tok::take_budget_exceeded()) return e;
  return InvalidArgument("tokenization ran past its budget: a regex of the tokenizer took more than " +
                         std::to_string(kRegexStepsPerChar) + " steps or " + std::to_string(kRegexMemoBytesPerChar) +
                         " bytes of memory per character on this input (" + std::to_string(bytes) + " bytes)");
}
}  // namespace

Result<Encoding> Tokenizer::encode_checked(std::string_view text, size_t max_length, Offsets* offsets,
                                           size_t* untruncated) const {
  clear_flags();
  return checked(encode_impl(text, nullptr, max_length, offsets, untruncated), text.size());
}

Result<Encoding> Tokenizer::encode_pair_checked(std::string_view first, std::string_view second, size_t max_length,
                                                size_t* untruncated) const {
  clear_flags();
  return checked(encode_impl(first, &second, max_length, nullptr, untruncated), first.size() + second.size());
}

Result<Tokenizer::First> Tokenizer::encode_first_checked(std::string_view text) const {
  clear_flags();
  First f = encode_first(text);
  DLRT_RETURN_IF_ERROR(checked(Encoding{}, text.size()).status());
  return f;
}

Result<Encoding> Tokenizer::encode_pair_checked(const First& first, std::string_view second, size_t max_length,
                                                size_t* untruncated) const {
  clear_flags();
  return checked(encode_pair_first(first, second, max_length, untruncated), second.size());
}

}  // namespace dlrt::embed
