// Decoding ids back to text (Tokenizer::decode): tokenizer.json's "decoder"
// as Hugging Face's tokenizers applies it. Each decoder maps the list of
// token strings to a new list; the result is their concatenation. Without a
// decoder the tokens are joined with spaces.
#include "embed/tokenizer/tokenizer_decode.h"

#include <string>
#include <utility>
#include <vector>

#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"

namespace dlrt::embed::tok {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// tokenizers' clean_up_tokenization: spaces before punctuation and English contractions.
void cleanup(std::string& s) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"},
      {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(s, from, to);
}

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool clean) : prefix_(std::move(prefix)), cleanup_(clean) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (t.compare(0, prefix_.size(), prefix_) == 0) t.erase(0, prefix_.size());
        else t.insert(0, " ");
      }
      if (cleanup_) cleanup(t);
    }
    return Status::Ok();
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first) : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      replace_all(tokens[i], replacement_, " ");
      if (i == 0 && strip_first_ && !tokens[i].empty() && tokens[i][0] == ' ') tokens[i].erase(0, 1);
    }
    return Status::Ok();
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

// The byte-level alphabet back to bytes; the bytes read as UTF-8 (invalid
// sequences become U+FFFD).
class ByteLevelDecoder final : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& t : tokens)
      for (char32_t c : utf8_to_u32(t)) {
        const int b = char_to_byte(c);
        if (b >= 0) bytes.push_back(static_cast<char>(b));
        else append_utf8(static_cast<uint32_t>(c), bytes);  // not of the alphabet: kept as is
      }
    tokens.assign(1, to_utf8(utf8_to_u32(bytes)));
    return Status::Ok();
  }
};

class BpeSuffixDecoder final : public Decoder {
 public:
  explicit BpeSuffixDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
    return Status::Ok();
  }

 private:
  std::string suffix_;
};

// "<0x41>" tokens, in runs, become the text of their bytes (U+FFFD per byte
// when a run is not UTF-8).
class ByteFallbackDecoder final : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string run;
    size_t run_tokens = 0;
    auto flush = [&] {
      if (run_tokens == 0) return;
      const std::u32string cps = utf8_to_u32(run);
      bool valid = true;
      for (char32_t c : cps) valid = valid && c != 0xFFFD;
      if (valid) out.push_back(run);
      else
        for (size_t i = 0; i < run_tokens; ++i) out.push_back("\xEF\xBF\xBD");
      run.clear();
      run_tokens = 0;
    };
    for (const std::string& t : tokens) {
      int value = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
        try {
          value = std::stoi(t.substr(3, 2), nullptr, 16);
        } catch (...) {
          value = -1;
        }
      }
      if (value >= 0) {
        run.push_back(static_cast<char>(value));
        ++run_tokens;
      } else {
        flush();
        out.push_back(t);
      }
    }
    flush();
    tokens = std::move(out);
    return Status::Ok();
  }
};

class FuseDecoder final : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, all);
    return Status::Ok();
  }
};

// Up to `start` leading and `stop` trailing copies of one character, per token.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      for (size_t i = 0; i < start_ && !content_.empty() && t.compare(0, content_.size(), content_) == 0; ++i)
        t.erase(0, content_.size());
      for (size_t i = 0; i < stop_ && !content_.empty() && t.size() >= content_.size() &&
                         t.compare(t.size() - content_.size(), content_.size(), content_) == 0;
           ++i)
        t.erase(t.size() - content_.size());
    }
    return Status::Ok();
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) replace_all(t, from_, to_);
    return Status::Ok();
  }

 private:
  std::string from_, to_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts) : parts_(std::move(parts)) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& p : parts_) DLRT_RETURN_IF_ERROR(p->decode_chain(tokens));
    return Status::Ok();
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

}  // namespace

std::unique_ptr<Decoder> make_wordpiece_decoder(const std::string& prefix, bool cleanup_spaces) {
  return std::make_unique<WordPieceDecoder>(prefix, cleanup_spaces);
}

Result<std::unique_ptr<Decoder>> make_decoder(const json& j, size_t depth) {
  DLRT_RETURN_IF_ERROR(check_component_depth("decoder", depth));
  const std::string type = jsonu::get_string(j, "type", "");
  if (type == "WordPiece")
    return make_wordpiece_decoder(jsonu::get_string(j, "prefix", "##"), jsonu::get_bool(j, "cleanup", true));
  if (type == "Metaspace") {
    // prepend_scheme "never" (or the older add_prefix_space false) keeps the first space.
    const std::string scheme = jsonu::get_string(j, "prepend_scheme", "always");
    const bool strip_first = scheme != "never" && jsonu::get_bool(j, "add_prefix_space", true);
    return std::unique_ptr<Decoder>(new MetaspaceDecoder(jsonu::get_string(j, "replacement", "\xE2\x96\x81"), strip_first));
  }
  if (type == "ByteLevel") return std::unique_ptr<Decoder>(new ByteLevelDecoder());
  if (type == "BPEDecoder") return std::unique_ptr<Decoder>(new BpeSuffixDecoder(jsonu::get_string(j, "suffix", "</w>")));
  if (type == "ByteFallback") return std::unique_ptr<Decoder>(new ByteFallbackDecoder());
  if (type == "Fuse") return std::unique_ptr<Decoder>(new FuseDecoder());
  if (type == "Strip") {
    const int64_t start = jsonu::get_int(j, "start", 0), stop = jsonu::get_int(j, "stop", 0);
    if (start < 0 || stop < 0) return InvalidModel("decoder Strip: start and stop must not be negative");
    return std::unique_ptr<Decoder>(
        new StripDecoder(jsonu::get_string(j, "content", " "), static_cast<size_t>(start), static_cast<size_t>(stop)));
  }
  if (type == "Replace") {
    const json* pattern = jsonu::member(j, "pattern");
    if (!pattern || !jsonu::member(*pattern, "String"))
      return Unsupported("decoder Replace with a regex pattern is not supported (only {\"String\": ...})");
    return std::unique_ptr<Decoder>(
        new ReplaceDecoder(jsonu::get_string(*pattern, "String", ""), jsonu::get_string(j, "content", "")));
  }
  if (type == "Sequence") {
    const json* list = jsonu::member(j, "decoders");
    if (!list || !list->is_array()) return InvalidModel("decoder Sequence has no \"decoders\" list");
    std::vector<std::unique_ptr<Decoder>> parts;
    for (const json& d : *list) {
      DLRT_ASSIGN_OR_RETURN(auto part, make_decoder(d, depth + 1));
      parts.push_back(std::move(part));
    }
    return std::unique_ptr<Decoder>(new SequenceDecoder(std::move(parts)));
  }
  return Unsupported("decoder \"" + type + "\" is not supported");
}

}  // namespace dlrt::embed::tok
