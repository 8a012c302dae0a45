// Tokenizer::encode_checked / encode_pair_checked: encode() with the regex
// step budget of tokenizer_regex.h turned into an error.
#include <string>

#include "embed/tokenizer.h"
#include "embed/tokenizer_regex.h"

namespace dlrt::embed {

namespace {
Result<Encoding> checked(Encoding e, size_t chars) {
  if (!tok::take_budget_exceeded()) return e;
  return InvalidArgument("tokenization ran past its budget: a regex of the tokenizer took more than " +
                         std::to_string(tok::Regex::kStepsPerChar) + " steps per character on this input (" +
                         std::to_string(chars) + " bytes)");
}
}  // namespace

Result<Encoding> Tokenizer::encode_checked(std::string_view text, size_t max_length) const {
  tok::take_budget_exceeded();
  return checked(encode_impl(text, nullptr, max_length, nullptr), text.size());
}

Result<Encoding> Tokenizer::encode_pair_checked(std::string_view first, std::string_view second, size_t max_length) const {
  tok::take_budget_exceeded();
  return checked(encode_impl(first, &second, max_length, nullptr), first.size() + second.size());
}

}  // namespace dlrt::embed
