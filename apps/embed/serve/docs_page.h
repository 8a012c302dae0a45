// GET /docs: Swagger UI over this server's /openapi.json when the build embedded it
// (swagger_ui.h), so a route can be tried from a browser; else a plain page of dlrt's own
// that lists the routes. Both read the document by a relative URL (they work behind a path
// prefix) and load nothing from elsewhere.
#pragma once

#include <string>

namespace dlrt::embed {

// The page's HTML.
std::string docs_page();

// One line for `dlrt serve --help`: what /docs serves in this build.
std::string docs_page_summary();

}  // namespace dlrt::embed
