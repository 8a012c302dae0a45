// GET /docs (docs_page.h): Swagger UI's page when the build embedded it, else a plain one.
#include "embed/serve/docs_page.h"

#include "embed/serve/call.h"
#include "embed/serve/handlers.h"
#include "embed/serve/swagger_ui.h"

namespace dlrt::embed {

namespace {

// Self-contained: the script reads openapi.json from this server (no other downloads)
// and lists each route with its schemas.
constexpr const char* kPlainPage = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>dlrt serve API</title>
<style>
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em; }
h2 { border-bottom: 1px solid #ccc; }
.method { font-weight: bold; text-transform: uppercase; margin-right: 0.5em; }
pre { background: #f4f4f4; padding: 0.5em; overflow-x: auto; font-size: 85%; }
summary { cursor: pointer; }
</style>
</head>
<body>
<h1 id="title">dlrt serve API</h1>
<p>The OpenAPI document of this server: <a href="openapi.json">openapi.json</a>. This dlrt was built without
Swagger UI (<code>dlrt serve --help</code> says why), so nothing can be tried from this page.</p>
<div id="routes">Loading openapi.json ...</div>
<script>
"use strict";
function resolve(doc, schema) {
  if (schema && schema["$ref"]) return resolve(doc, doc.components.schemas[schema["$ref"].split("/").pop()]);
  return schema;
}
function block(title, value) {
  const d = document.createElement("details");
  const s = document.createElement("summary");
  s.textContent = title;
  const pre = document.createElement("pre");
  pre.textContent = JSON.stringify(value, null, 2);
  d.append(s, pre);
  return d;
}
fetch("openapi.json").then(r => r.json()).then(doc => {
  document.getElementById("title").textContent = doc.info.title + " " + doc.info.version;
  const routes = document.getElementById("routes");
  routes.textContent = "";
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const h = document.createElement("h2");
      const m = document.createElement("span");
      m.className = "method";
      m.textContent = method;
      h.append(m, document.createTextNode(path));
      const p = document.createElement("p");
      p.textContent = op.summary || "";
      routes.append(h, p);
      const body = op.requestBody && op.requestBody.content["application/json"];
      if (body) routes.append(block("request", resolve(doc, body.schema)));
      for (const [code, answer] of Object.entries(op.responses || {})) {
        const content = answer.content && Object.values(answer.content)[0];
        if (code === "200" && content) routes.append(block("answer " + code, resolve(doc, content.schema)));
      }
    }
  }
}).catch(e => { document.getElementById("routes").textContent = "cannot read openapi.json: " + e; });
</script>
</body>
</html>
)html";

// Swagger UI over openapi.json. The document has no "servers" (which would mean the host's
// root), so the page gives it its own folder: tried routes then work behind a path prefix.
// validatorUrl null: Swagger UI's default shows a badge fetched from swagger.io.
std::string swagger_page(const SwaggerUi& ui) {
  std::string page = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>dlrt serve API</title>
<link rel="stylesheet" href="docs/swagger-ui.css?v=CSS_MD5">
<style>.dlrt-note { font-family: sans-serif; font-size: 90%; margin: 1em 20px 0; }</style>
</head>
<body>
<p class="dlrt-note">The OpenAPI document of this server: <a href="openapi.json">openapi.json</a>.
Swagger UI VERSION (<a href="docs/LICENSE">its license</a>).</p>
<div id="swagger-ui">Loading openapi.json ...</div>
<script src="docs/swagger-ui-bundle.js?v=BUNDLE_MD5"></script>
<script>
"use strict";
const base = new URL(".", document.baseURI).href.replace(/\/$/, "");
fetch("openapi.json").then(r => {
  if (!r.ok) throw new Error("HTTP " + r.status);
  return r.json();
}).then(spec => {
  spec.servers = [{url: base}];
  window.ui = SwaggerUIBundle({spec: spec, dom_id: "#swagger-ui", presets: [SwaggerUIBundle.presets.apis],
                               layout: "BaseLayout", deepLinking: true, validatorUrl: null});
}).catch(e => { document.getElementById("swagger-ui").textContent = "cannot read openapi.json: " + e.message; });
</script>
</body>
</html>
)html";
  auto put = [&page](std::string_view key, std::string_view value) {
    page.replace(page.find(key), key.size(), value);
  };
  put("CSS_MD5", ui.css_md5);
  put("BUNDLE_MD5", ui.bundle_md5);
  put("VERSION", ui.version);
  return page;
}

// One of Swagger UI's files: its bytes, revalidated by ETag; the page names it with its MD5
// in the query, so a week's caching never serves a stale one after an upgrade.
Reply asset(std::string_view body, std::string_view md5, const char* content_type) {
  if (swagger_ui().version.empty()) {
    return error_reply(Api::kOpenAI, 404, "not_found",
                       "this dlrt was built without Swagger UI: " + std::string(swagger_ui().missing));
  }
  Reply r;
  r.body = std::string(body);
  r.content_type = content_type;
  r.etag = "\"" + std::string(md5) + "\"";
  r.cache_control = "public, max-age=604800";
  return r;
}

}  // namespace

Reply handle_docs(Call&) {
  Reply r;
  r.body = docs_page();
  r.content_type = "text/html; charset=utf-8";
  r.cache_control = "no-cache";  // small; names the current files
  return r;
}

Reply handle_docs_bundle(Call&) {
  return asset(swagger_ui().bundle_js, swagger_ui().bundle_md5, "text/javascript; charset=utf-8");
}

Reply handle_docs_css(Call&) { return asset(swagger_ui().css, swagger_ui().css_md5, "text/css; charset=utf-8"); }

Reply handle_docs_license(Call&) {
  return asset(swagger_ui().license, swagger_ui().license_md5, "text/plain; charset=utf-8");
}

std::string docs_page() {
  const SwaggerUi& ui = swagger_ui();
  return ui.version.empty() ? std::string(kPlainPage) : swagger_page(ui);
}

std::string docs_page_summary() {
  const SwaggerUi& ui = swagger_ui();
  if (!ui.version.empty()) return "Swagger UI " + std::string(ui.version) + " over it (try any route)";
  return "a plain page listing it (built without Swagger UI: " + std::string(ui.missing) + ")";
}

}  // namespace dlrt::embed
