// Swagger UI's files as the build embedded them (cmake/deps/swagger_ui.cmake generates
// swagger_ui()'s definition from the dist folder scripts/fetch_swagger_ui.sh fetches), for
// dlrt serve's GET /docs (docs_page.cpp). Empty, with `missing` saying why, when the
// build found no Swagger UI; /docs is then dlrt's own page.
#pragma once

#include <string_view>

namespace dlrt::embed {

struct SwaggerUi {
  std::string_view version;  // "" when the build embedded none
  std::string_view bundle_js, bundle_md5;  // each file and its MD5 (hex), the ETag it is served with
  std::string_view css, css_md5;
  std::string_view license, license_md5;  // the dist's LICENSE (Apache-2.0)
  std::string_view missing;               // why none was embedded
};

const SwaggerUi& swagger_ui();

}  // namespace dlrt::embed
