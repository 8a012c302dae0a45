// OpenAPI document of dlrt serve (openapi.h), its paths generated from the
// route table (routes.h). Schemas describe what the server accepts and
// answers, errors included, so that a generated client and a property-based
// test agree with it.
#include "embed/serve/openapi.h"

#include <nlohmann/json.hpp>

#include "embed/serve/routes.h"

namespace dlrt::embed {

namespace {

using json = nlohmann::json;

json schema_ref(const std::string& name) { return {{"$ref", "#/components/schemas/" + name}}; }

json json_body(const json& schema) { return {{"content", {{"application/json", {{"schema", schema}}}}}}; }

json answer(const std::string& description, const json& schema) {
  json a = json_body(schema);
  a["description"] = description;
  return a;
}

// The error answers every JSON route can give.
json errors(const std::string& error_schema, std::initializer_list<const char*> codes) {
  json out = json::object();
  for (const char* c : codes) out[c] = answer("error", schema_ref(error_schema));
  return out;
}

// Optional request fields also take null (= not given).
void nullable_optionals(json& schema) {
  const json required = schema.value("required", json::array());
  for (auto& [name, prop] : schema["properties"].items()) {
    bool is_required = false;
    for (const auto& r : required) is_required = is_required || r == name;
    if (is_required) continue;
    prop["nullable"] = true;
    if (prop.contains("enum")) prop["enum"].push_back(nullptr);  // OpenAPI 3.0: null must be listed too
  }
}

// The values the request schemas share, some bounded by the served model.
struct Common {
  json id, ids, dimensions, prompt_name, inputs, vector, sparse_vector;
};

Common common(const ModelLimits* limits) {
  json id = {{"type", "integer"}, {"minimum", 0}};
  if (limits && limits->vocab_size) id["maximum"] = limits->vocab_size - 1;
  const json ids = {{"type", "array"}, {"items", id}, {"minItems", 1}};
  json dimensions = {{"type", "integer"}, {"minimum", 1}};
  if (limits && limits->dimension) dimensions["maximum"] = limits->dimension;
  json prompt_name = {{"type", "string"}};
  if (limits) {
    prompt_name["enum"] = json::array();
    for (const auto& p : limits->prompt_names) prompt_name["enum"].push_back(p);
  }
  const json inputs = {{"oneOf",
                        {{{"type", "string"}},
                         {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}},
                         ids,
                         {{"type", "array"}, {"items", ids}, {"minItems", 1}}}}};
  const json vector = {{"type", "array"}, {"items", {{"type", "number"}}}};
  const json sparse_vector = {{"type", "object"},
                              {"required", {"indices", "values"}},
                              {"properties",
                               {{"indices", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}}},
                                {"values", {{"type", "array"}, {"items", {{"type", "number"}}}}}}}};
  return Common{id, ids, dimensions, prompt_name, inputs, vector, sparse_vector};
}

void error_schemas(json& s) {
  s["OpenAIError"] = {{"type", "object"},
                      {"required", {"error"}},
                      {"properties",
                       {{"error",
                         {{"type", "object"},
                          {"required", {"message", "type", "code"}},
                          {"properties",
                           {{"message", {{"type", "string"}}}, {"type", {{"type", "string"}}}, {"code", {{"type", "integer"}}}}}}}}}};
  s["TeiError"] = {{"type", "object"},
                   {"required", {"error", "error_type"}},
                   {"properties", {{"error", {{"type", "string"}}}, {"error_type", {{"type", "string"}}}}}};
  // A request httplib cannot parse (no route known yet) is answered in OpenAI's shape.
  s["TeiOrHttpError"] = {{"oneOf", {schema_ref("TeiError"), schema_ref("OpenAIError")}}};
}

// The dense embedding routes' inputs: text, ids, or images (handlers.h's image inputs; a CLIP model's).
json with_images(const json& inputs) {
  const json url = {{"type", "string"}, {"description", "a data URL (data:image/png;base64,...) or base64; "
                                                        "remote URLs are refused, never fetched"}};
  const json image = {{"oneOf",
                       {{{"type", "object"}, {"required", {"image"}}, {"properties", {{"image", url}}}},
                        {{"type", "object"},
                         {"required", {"type", "image_url"}},
                         {"properties",
                          {{"type", {{"type", "string"}, {"enum", {"image_url"}}}},
                           {"image_url", {{"type", "object"}, {"required", {"url"}}, {"properties", {{"url", url}}}}}}}}}}};
  json out = inputs;
  out["oneOf"].push_back(image);
  out["oneOf"].push_back({{"type", "array"}, {"items", image}, {"minItems", 1}});
  return out;
}

void embedding_schemas(json& s, const Common& c) {
  const json &dimensions = c.dimensions, &prompt_name = c.prompt_name, &vector = c.vector,
             &sparse_vector = c.sparse_vector;
  const json inputs = with_images(c.inputs);
  s["EmbeddingsRequest"] = {
      {"type", "object"},
      {"required", {"input"}},
      {"properties",
       {{"input", inputs},
        {"model", {{"type", "string"}}},
        {"encoding_format",
         {{"type", "string"}, {"enum", {"float", "base64", "sparse", "int8", "uint8", "binary", "ubinary"}}}},
        // Mistral's output type, and sentence-transformers' quantize_embeddings ranges (output_type.h).
        {"output_dtype", {{"type", "string"}, {"enum", {"float", "int8", "uint8", "binary", "ubinary"}}}},
        {"output_dimension", dimensions},
        {"ranges", {{"type", "array"}, {"minItems", 2}, {"maxItems", 2}, {"items", vector}}},
        {"calibration_embeddings", {{"type", "array"}, {"minItems", 1}, {"items", vector}}},
        {"top_k", {{"type", "integer"}, {"minimum", 1}}},
        {"dimensions", dimensions},
        {"user", {{"type", "string"}}},
        {"normalize", {{"type", "boolean"}}},
        {"truncate", {{"type", "boolean"}}},
        {"prompt_name", prompt_name},
        {"is_query", {{"type", "boolean"}}}}}};
  s["EmbeddingsResponse"] = {
      {"type", "object"},
      {"required", {"object", "data", "model", "usage"}},
      {"properties",
       {{"object", {{"type", "string"}, {"enum", {"list"}}}},
        {"data",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"required", {"object", "index", "embedding"}},
            {"properties",
             {{"object", {{"type", "string"}}},
              {"index", {{"type", "integer"}}},
              {"embedding", {{"oneOf", {vector, {{"type", "string"}, {"format", "byte"}}, sparse_vector}}}}}}}}}},
        {"model", {{"type", "string"}}},
        {"usage",
         {{"type", "object"},
          {"required", {"prompt_tokens", "total_tokens"}},
          {"properties", {{"prompt_tokens", {{"type", "integer"}}}, {"total_tokens", {{"type", "integer"}}}}}}}}}};
  s["EmbedRequest"] = {{"type", "object"},
                       {"required", {"inputs"}},
                       {"properties",
                        {{"inputs", inputs},
                         {"normalize", {{"type", "boolean"}}},
                         {"truncate", {{"type", "boolean"}}},
                         {"truncation_direction", {{"type", "string"}, {"enum", {"right", "Right"}}}},
                         {"prompt_name", prompt_name},
                         {"is_query", {{"type", "boolean"}}},
                         {"dimensions", dimensions}}}};
  s["EmbedResponse"] = {{"type", "array"}, {"items", vector}};
  s["EmbedSparseRequest"] = {{"type", "object"},
                             {"required", {"inputs"}},
                             {"properties",
                              {{"inputs", c.inputs},
                               {"truncate", {{"type", "boolean"}}},
                               {"truncation_direction", {{"type", "string"}, {"enum", {"right", "Right"}}}},
                               {"prompt_name", prompt_name},
                               {"is_query", {{"type", "boolean"}}},
                               {"top_k", {{"type", "integer"}, {"minimum", 1}}}}}};
  s["EmbedSparseResponse"] = {
      {"type", "array"},
      {"items",
       {{"type", "array"},
        {"items",
         {{"type", "object"},
          {"required", {"index", "value"}},
          {"properties", {{"index", {{"type", "integer"}, {"minimum", 0}}}, {"value", {{"type", "number"}}}}}}}}}};
  s["EmbedAllRequest"] = {{"type", "object"},
                          {"required", {"inputs"}},
                          {"properties",
                           {{"inputs", {{"oneOf", {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}}}}}},
                            {"truncate", {{"type", "boolean"}}},
                            {"prompt_name", prompt_name},
                            {"is_query", {{"type", "boolean"}}}}}};
  s["EmbedAllResponse"] = {{"type", "array"}, {"items", {{"type", "array"}, {"items", vector}}}};
}

// Similarity, tokens and token ids.
void text_schemas(json& s, const Common& c) {
  const json& prompt_name = c.prompt_name;
  // TEI's sentence similarity: one score per sentence, by the folder's similarity function.
  s["SimilarityRequest"] = {
      {"type", "object"},
      {"required", {"inputs"}},
      {"properties",
       {{"inputs",
         {{"type", "object"},
          {"required", {"source_sentence", "sentences"}},
          {"properties",
           {{"source_sentence", {{"type", "string"}}},
            {"sentences", {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}}}}}}},
        {"parameters",
         {{"type", "object"},
          {"properties",
           {{"truncate", {{"type", "boolean"}}},
            {"truncation_direction", {{"type", "string"}, {"enum", {"right", "Right"}}}},
            {"prompt_name", prompt_name}}}}}}}};
  s["SimilarityResponse"] = {{"type", "array"}, {"items", {{"type", "number"}}}};
  s["TokenizeRequest"] = {
      {"type", "object"},
      {"required", {"inputs"}},
      {"properties",
       {{"inputs", {{"oneOf", {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}}}}}},
        {"add_special_tokens", {{"type", "boolean"}}},
        {"prompt_name", prompt_name}}}};
  s["TokenizeResponse"] = {
      {"type", "array"},
      {"items",
       {{"type", "array"},
        {"items",
         {{"type", "object"},
          {"required", {"id", "text", "special"}},
          {"properties",
           {{"id", {{"type", "integer"}}},
            {"text", {{"type", "string"}}},
            {"special", {{"type", "boolean"}}},
            {"start", {{"type", "integer"}, {"nullable", true}}},
            {"stop", {{"type", "integer"}, {"nullable", true}}}}}}}}}};
  const json id_list = {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}};
  json ids_one = id_list, ids_many = {{"type", "array"}, {"items", id_list}};
  ids_one["minItems"] = 1;
  ids_many["minItems"] = 1;
  s["DecodeRequest"] = {{"type", "object"},
                        {"required", {"ids"}},
                        {"properties", {{"ids", {{"oneOf", {ids_one, ids_many}}}}, {"skip_special_tokens", {{"type", "boolean"}}}}}};
  s["DecodeResponse"] = {{"type", "array"}, {"items", {{"type", "string"}}}};
}

// Rerankers and classifiers.
void scoring_schemas(json& s) {
  s["RerankRequest"] = {{"type", "object"},
                        {"required", {"query", "texts"}},
                        {"properties",
                         {{"query", {{"type", "string"}}},
                          {"texts", {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}}},
                          {"raw_scores", {{"type", "boolean"}}},
                          {"return_text", {{"type", "boolean"}}},
                          {"truncate", {{"type", "boolean"}}},
                          {"instruction", {{"type", "string"}}}}}};
  s["RerankResponse"] = {{"type", "array"},
                         {"items",
                          {{"type", "object"},
                           {"required", {"index", "score"}},
                           {"properties",
                            {{"index", {{"type", "integer"}}}, {"score", {{"type", "number"}}}, {"text", {{"type", "string"}}}}}}}};
  const json document = {{"oneOf",
                          {{{"type", "string"}},
                           {{"type", "object"}, {"required", {"text"}}, {"properties", {{"text", {{"type", "string"}}}}}}}}};
  s["V1RerankRequest"] = {{"type", "object"},
                          {"required", {"query", "documents"}},
                          {"properties",
                           {{"query", {{"type", "string"}}},
                            {"documents", {{"type", "array"}, {"items", document}, {"minItems", 1}}},
                            {"top_n", {{"type", "integer"}, {"minimum", 1}}},
                            {"return_documents", {{"type", "boolean"}}},
                            {"model", {{"type", "string"}}},
                            {"truncate", {{"type", "boolean"}}},
                            {"instruction", {{"type", "string"}}}}}};
  s["V1RerankResponse"] = {
      {"type", "object"},
      {"required", {"model", "results", "usage"}},
      {"properties",
       {{"model", {{"type", "string"}}},
        {"results",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"required", {"index", "relevance_score"}},
            {"properties",
             {{"index", {{"type", "integer"}}},
              {"relevance_score", {{"type", "number"}}},
              {"document", {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}}}}}}}}},
        {"usage", {{"type", "object"}, {"properties", {{"total_tokens", {{"type", "integer"}}}}}}}}}};
  const json text_or_pair = {{"oneOf",
                              {{{"type", "string"}},
                               {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}, {"maxItems", 2}}}}};
  s["PredictRequest"] = {{"type", "object"},
                         {"required", {"inputs"}},
                         {"properties",
                          {{"inputs", {{"oneOf", {text_or_pair, {{"type", "array"}, {"items", text_or_pair}, {"minItems", 1}}}}}},
                           {"raw_scores", {{"type", "boolean"}}},
                           {"truncate", {{"type", "boolean"}}}}}};
  const json predictions = {{"type", "array"},
                            {"items",
                             {{"type", "object"},
                              {"required", {"score", "label"}},
                              {"properties", {{"score", {{"type", "number"}}}, {"label", {{"type", "string"}}}}}}}};
  s["PredictResponse"] = {{"oneOf", {predictions, {{"type", "array"}, {"items", predictions}}}}};
}

// Cohere's /v2/embed and /v1/embed (server_cohere_embed.cpp).
void cohere_schemas(json& s, const Common& c) {
  const json text = {{"type", "string"}};
  const json texts = {{"type", "array"}, {"items", text}, {"minItems", 1}};
  const json url = {{"type", "string"}, {"pattern", "^data:"}};  // remote URLs are refused
  const json text_item = {{"type", "object"},
                          {"required", {"type", "text"}},
                          {"properties", {{"type", {{"type", "string"}, {"enum", {"text"}}}}, {"text", text}}}};
  const json image_item = {
      {"type", "object"},
      {"required", {"type", "image_url"}},
      {"properties",
       {{"type", {{"type", "string"}, {"enum", {"image_url"}}}},
        {"image_url", {{"type", "object"}, {"required", {"url"}}, {"properties", {{"url", url}}}}}}}};
  // One item per input (a text or an image; several items are one vector in Cohere's API).
  const json input = {{"type", "object"},
                      {"required", {"content"}},
                      {"properties",
                       {{"content", {{"type", "array"}, {"minItems", 1}, {"maxItems", 1},
                                     {"items", {{"oneOf", {text_item, image_item}}}}}}}}};
  const json positive = {{"type", "integer"}, {"minimum", 1}};
  json request = {
      {"type", "object"},
      {"required", {"input_type"}},
      {"properties",
       {{"model", text},
        {"input_type",
         {{"type", "string"}, {"enum", {"search_document", "search_query", "classification", "clustering", "image"}}}},
        {"texts", texts},
        {"images", {{"type", "array"}, {"items", url}, {"minItems", 1}}},
        {"inputs", {{"type", "array"}, {"items", input}, {"minItems", 1}}},
        {"embedding_types",
         {{"type", "array"},
          {"minItems", 1},
          {"items", {{"type", "string"}, {"enum", {"float", "int8", "uint8", "binary", "ubinary", "base64"}}}}}},
        {"truncate", {{"type", "string"}, {"enum", {"NONE", "END"}}}},
        {"max_tokens", positive},
        {"output_dimension", c.dimensions},
        {"priority", {{"type", "integer"}}},
        // dlrt's: the int8 / uint8 ranges, as on /v1/embeddings.
        {"ranges", {{"type", "array"}, {"minItems", 2}, {"maxItems", 2}, {"items", c.vector}}},
        {"calibration_embeddings", {{"type", "array"}, {"minItems", 1}, {"items", c.vector}}}}}};
  s["CohereEmbedRequest"] = request;
  request.erase("required");
  s["CohereV1EmbedRequest"] = request;
  const json ints = {{"type", "array"}, {"items", {{"type", "array"}, {"items", {{"type", "integer"}}}}}};
  const json floats = {{"type", "array"}, {"items", c.vector}};
  const json meta = {{"type", "object"},
                     {"properties",
                      {{"api_version", {{"type", "object"}, {"properties", {{"version", text}}}}},
                       {"billed_units",
                        {{"type", "object"},
                         {"properties",
                          {{"input_tokens", {{"type", "integer"}}}, {"images", {{"type", "integer"}}}}}}}}}};
  auto response = [&](const json& embeddings, const char* type) {
    return json{{"type", "object"},
                {"required", {"id", "embeddings", "texts", "meta", "response_type"}},
                {"properties",
                 {{"id", text},
                  {"embeddings", embeddings},
                  {"texts", {{"type", "array"}, {"items", text}}},
                  {"meta", meta},
                  {"response_type", {{"type", "string"}, {"enum", {type}}}}}}};
  };
  s["CohereEmbedByTypeResponse"] = response({{"type", "object"},
                                             {"properties",
                                              {{"float", floats},
                                               {"int8", ints},
                                               {"uint8", ints},
                                               {"binary", ints},
                                               {"ubinary", ints},
                                               {"base64", {{"type", "array"}, {"items", text}}}}}},
                                            "embeddings_by_type");
  s["CohereEmbedResponse"] = {{"oneOf", {response(floats, "embeddings_floats"), s["CohereEmbedByTypeResponse"]}}};
}

// The server's own routes: models, info, health.
void server_schemas(json& s) {
  s["ModelList"] = {
      {"type", "object"},
      {"required", {"object", "data"}},
      {"properties",
       {{"object", {{"type", "string"}}},
        {"data",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"required", {"id", "object", "created", "owned_by"}},
            {"properties",
             {{"id", {{"type", "string"}}},
              {"object", {{"type", "string"}}},
              {"created", {{"type", "integer"}}},
              {"owned_by", {{"type", "string"}}}}}}}}}}}};
  s["Info"] = {{"type", "object"},
               {"required", {"model_id", "max_input_length", "version", "dimension"}},
               {"properties",
                {{"model_id", {{"type", "string"}}},
                 {"served_model_name", {{"type", "string"}}},
                 {"model_sha", {{"type", "string"}, {"nullable", true}}},
                 {"model_dtype", {{"type", "string"}}},
                 {"model_type", {{"type", "object"}}},
                 {"max_batch_requests", {{"type", "integer"}}},
                 {"auto_truncate", {{"type", "boolean"}}},
                 {"tokenization_workers", {{"type", "integer"}}},
                 {"sha", {{"type", "string"}, {"nullable", true}}},
                 {"docker_label", {{"type", "string"}, {"nullable", true}}},
                 {"max_input_length", {{"type", "integer"}}},
                 {"max_batch_tokens", {{"type", "integer"}}},
                 {"max_client_batch_size", {{"type", "integer"}}},
                 {"max_concurrent_requests", {{"type", "integer"}}},
                 {"version", {{"type", "string"}}},
                 {"dimension", {{"type", "integer"}}},
                 {"normalize", {{"type", "boolean"}}},
                 {"default_prompt_name", {{"type", "string"}, {"nullable", true}}},
                 {"truncate", {{"type", "boolean"}}},
                 {"backend", {{"type", "string"}}},
                 {"device", {{"type", "string"}}}}}};
  s["Health"] = {{"type", "object"},
                 {"required", {"status", "backend", "device", "degraded", "since", "reason"}},
                 {"properties",
                  {{"status", {{"type", "string"}, {"enum", {"loading", "ok", "warming", "degraded", "draining", "failed"}}}},
                   {"backend", {{"type", "string"}}},
                   {"device", {{"type", "string"}}},
                   {"degraded", {{"type", "boolean"}}},
                   {"since", {{"type", "string"}}},
                   {"reason", {{"type", "string"}}},
                   {"model", {{"type", "string"}}},
                   {"dimension", {{"type", "integer"}}},
                   {"max_tokens", {{"type", "integer"}}}}}};
}

json schemas(const ModelLimits* limits) {
  json s;
  const Common c = common(limits);
  error_schemas(s);
  embedding_schemas(s, c);
  text_schemas(s, c);
  scoring_schemas(s);
  cohere_schemas(s, c);
  server_schemas(s);
  // TEI's bodies name the model too when the server serves several (server.h).
  for (const char* r : {"EmbedRequest", "EmbedSparseRequest", "EmbedAllRequest", "SimilarityRequest", "TokenizeRequest",
                        "DecodeRequest", "RerankRequest", "PredictRequest"})
    s[r]["properties"]["model"] = {{"type", "string"}};
  s["Health"]["properties"]["models"] = {{"type", "array"}, {"items", {{"type", "object"}}}};
  // Every request body: the handlers read an optional field given as null as not given.
  for (auto& [name, schema] : s.items())
    if (name.ends_with("Request")) nullable_optionals(schema);
  nullable_optionals(s["SimilarityRequest"]["properties"]["parameters"]);
  return s;
}

json post(const std::string& summary, const std::string& request, const std::string& response, const std::string& error) {
  json responses = errors(error, {"401", "405", "413", "422", "429", "500", "501", "503", "504", "507"});
  responses["400"] = answer("error", schema_ref(error == "TeiError" ? "TeiOrHttpError" : error));
  responses["200"] = answer("OK", schema_ref(response));
  json body = json_body(schema_ref(request));
  body["required"] = true;
  return {{"post", {{"summary", summary}, {"requestBody", body}, {"responses", responses}}}};
}

json get(const std::string& summary, const json& schema, const std::string& content_type = "application/json") {
  json responses = errors("OpenAIError", {"401"});
  responses["200"] = {{"description", "OK"}, {"content", {{content_type, {{"schema", schema}}}}}};
  return {{"get", {{"summary", summary}, {"responses", responses}}}};
}

// A route's entry, from its row: a POST route's schemas and errors in its
// API's shape; a GET route's answer, without 401 for an open route, with its
// own 503 where it answers one.
json operation(const Route& r) {
  if (r.post) return post(r.doc.summary, r.doc.request, r.doc.response, r.api == Api::kTei ? "TeiError" : "OpenAIError");
  const std::string response = r.doc.response;  // a GET route's (a documented route has one method)
  const json schema = response.front() == '{' ? json::parse(response) : schema_ref(response);
  json op = get(r.doc.summary, schema, r.doc.content_type);
  if (r.open) op["get"]["responses"].erase("401");
  if (r.doc.unavailable) op["get"]["responses"]["503"] = answer(r.doc.unavailable, schema);
  return op;
}

}  // namespace

std::string openapi_document(const std::string& version, const ModelLimits* limits) {
  json paths;
  for (const Route& r : routes())
    if (r.documented) paths[r.path] = operation(r);
  json doc = {{"openapi", "3.0.3"},
              {"info", {{"title", "dlrt serve"}, {"version", version}, {"description", "Text embeddings (OpenAI and TEI compatible)"}}},
              {"paths", paths},
              {"components",
               {{"schemas", schemas(limits)},
                {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace dlrt::embed
