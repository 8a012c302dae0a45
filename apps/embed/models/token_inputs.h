// What the Embedder and the Classifier share about a text model folder: its
// model file and session, encoding an input within the length limit, the
// model's token inputs (input_ids, attention_mask, token_type_ids,
// position_ids; int64 or int32; and a decoder's past_key_values.*, fed empty:
// a whole text is one step), and a padded batch of encodings as the
// tensors to feed them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/session.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "embed/models/embedder.h"

namespace dlrt::embed {

// A model folder's model file (model.onnx, else onnx/model.onnx) and the name
// to report: the folder's, or when that is generic ("model", "onnx", "export",
// ...) the nearest folder above it with a telling name. `model_dir` may also
// be the model file itself (DIR/model.onnx, DIR/onnx/model.onnx): its folder
// is the model folder (model_folder_of). kNotFound without the folder or the
// file, saying so when the text looks like a Hugging Face hub id.
struct ModelFile {
  std::filesystem::path dir, path;
  std::string name;
};
Result<ModelFile> find_model_file(const std::string& model_dir);
// find_model_file without the model file (`path` empty): for folders whose
// weights are the model (static_embedding.h).
Result<ModelFile> find_model_folder(const std::string& model_dir);
// The model folder `model` names: itself, or for a model file its folder (the
// one above onnx/ for DIR/onnx/model.onnx).
std::filesystem::path model_folder_of(const std::string& model);

class Tokenizer;

// The session of a folder's model with the options' device, strict mode,
// threads, warm start, CPU precision and backend options; errors name the
// file. With cpu_precision "auto" (the option's, else DLRT_CPU_PRECISION's)
// and a `tokenizer`, "auto" measures on the warm-up texts tokenized by it
// (at most `max_length` tokens each). `outputs`: the outputs the session
// computes (SessionOptions::outputs; empty: all).
Result<std::unique_ptr<Session>> open_model_session(const std::filesystem::path& path, const EmbedderOptions& options,
                                                    const Tokenizer* tokenizer = nullptr, size_t max_length = 0,
                                                    const std::vector<std::string>& outputs = {});

// The encoding of one input at most `max_length` ids long (0: no limit), by
// `encode(limit, untruncated)` (a Tokenizer's encode_checked or
// encode_pair_checked with that limit, giving the ids before the cut): the
// input is tokenized once, whatever its length. *truncated, when given, says
// whether it was longer; *tokens, its ids before the cut. The server rejects
// or truncates by that.
// The bytes one padded token adds to a run's outputs: the widest per-token
// row among `session`'s outputs of rank 3 or more ([batch, sequence, ...]:
// the hidden size, or the vocabulary of an MLM or LM head), 0 when no output
// has fixed per-token dims. The server's memory budget per run divides by it.
size_t token_row_bytes(const Session& session);

Result<Encoding> encode_within(size_t max_length, bool* truncated,
                               const std::function<Result<Encoding>(size_t limit, size_t* untruncated)>& encode,
                               size_t* tokens = nullptr);

class TokenInputs {
 public:
  // The session's inputs, each one of the four above or a past key/value
  // cache "past_key_values.*" ([batch, heads, past, head_size] with heads and
  // head_size fixed; kInvalidModel otherwise, or without input_ids); `what`
  // names the model in messages.
  static Result<TokenInputs> from_session(const Session& session, const std::string& what);
  // The same over the inputs as the model declares them (before a session).
  static Result<TokenInputs> from_inputs(const std::vector<TensorInfo>& inputs, const std::string& what);

  // A batch padded to its longest encoding with `pad_id` (right side). Its
  // tensors view the batch's own buffers: keep it alive while running.
  struct Batch {
    std::map<std::string, Tensor> feeds;
    std::vector<int64_t> mask;  // [batch, length], 1 for real tokens
    size_t length = 0;
    size_t tokens = 0;  // real (unpadded) tokens
   private:
    friend class TokenInputs;
    std::vector<int64_t> ids, types, positions;
    std::vector<std::vector<int32_t>> narrow;  // int32 copies for int32 inputs
  };
  // Checks each encoding (ids present, lengths agree, at most max_length ids,
  // ids below vocab_size) and builds the feeds. kInvalidArgument otherwise.
  Status make_batch(const std::vector<Encoding>& batch, int64_t pad_id, size_t vocab_size, size_t max_length,
                    Batch& out) const;

 private:
  enum class Kind { kIds, kMask, kTypes, kPositions, kPast };
  struct Input {
    std::string name;
    Kind kind;
    DType dtype;
    std::vector<int64_t> shape;  // kPast: [batch, heads, past, head_size]
  };
  std::vector<Input> inputs_;
};

}  // namespace dlrt::embed
