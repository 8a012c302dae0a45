// Request bodies as JSON (RFC 8259) for the server's routes, with the two
// cases nlohmann::json refuses although the RFC allows them decided here:
//   - a \uD800-\uDFFF escape without its pair (a lone surrogate) decodes as
//     U+FFFD, the replacement character, as invalid UTF-8 does elsewhere;
//   - a number beyond a double's range (1e999) is refused with a message that
//     names it: no field of a request takes a non-finite number.
// Anything else that does not parse is "the body is not valid JSON (UTF-8)"
// with where the parser stopped.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dlrt::embed {

// Parses `body` into `out`; "" when it parsed, else the message for a 400.
std::string parse_body_json(std::string_view body, nlohmann::json& out);

}  // namespace dlrt::embed
