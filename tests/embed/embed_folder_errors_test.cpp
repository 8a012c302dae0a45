// What a user gets for a model folder that is not quite one: a clone made
// without git-lfs (pointer files), a Hugging Face hub id given for a folder,
// the model file given for the folder, a generic folder name, a missing
// --file. Each is a clear one-line error or the behaviour the user meant.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using dlrt::testing::quote;
using dlrt::testing::run_command;

const std::string kTiny = std::string(DLRT_EMBED_TEST_DATA) + "/tiny_bert";
const char kPointer[] =
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452\n"
    "size 90405214\n";

std::string bin() { return quote(dlrt::testing::dlrt_binary()); }

fs::path fresh_copy(const std::string& name) {
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test" / "folder_errors" / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  fs::copy(kTiny, dir, fs::copy_options::recursive);
  return dir;
}

nlohmann::json embed_json(const std::string& model_arg, const std::string& text) {
  auto r = run_command(bin() + " embed --device cpu --json --model " + model_arg + " " + quote(text) + " 2>/dev/null");
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  return r.exit_code == 0 && !j.is_discarded() ? j : nlohmann::json();
}

TEST(EmbedFolderErrors, LfsPointerInsteadOfTheModelSaysSoEverywhere) {
  fs::path dir = fresh_copy("lfs_pointer");
  std::ofstream(dir / "model.onnx", std::ios::trunc) << kPointer;
  auto r = run_command(bin() + " embed --device cpu --model " + quote(dir.string()) + " hello");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("Git LFS pointer file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("git lfs pull"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("nested"), std::string::npos) << r.output;
  // The same through the runtime itself (dlrt run: Session::create, as Python and the C API).
  auto run = run_command(bin() + " run --device cpu " + quote((dir / "model.onnx").string()));
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("Git LFS pointer file"), std::string::npos) << run.output;
  // A pointer in place of tokenizer.json too.
  fs::path tok = fresh_copy("lfs_tokenizer");
  fs::remove(tok / "vocab.txt");
  std::ofstream(tok / "tokenizer.json") << kPointer;
  auto t = run_command(bin() + " embed --device cpu --model " + quote(tok.string()) + " hello");
  EXPECT_EQ(t.exit_code, 3) << t.output;
  EXPECT_NE(t.output.find("Git LFS pointer file"), std::string::npos) << t.output;
}

TEST(EmbedFolderErrors, HubIdSaysDlrtDoesNotDownload) {
  fs::path cwd = fs::path(DLRT_BINARY_DIR) / "embed_test" / "folder_errors" / "empty_cwd";
  fs::create_directories(cwd);
  for (const std::string id : {"sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"}) {
    SCOPED_TRACE(id);
    auto r = run_command("cd " + quote(cwd.string()) + " && " + bin() + " embed --model " + id + " hello");
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("Hugging Face hub id"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("does not download"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("https://huggingface.co/"), std::string::npos) << r.output;
  }
  // A path that does not look like one keeps the plain message.
  auto plain = run_command(bin() + " embed --model /nonexistent/folder hello");
  EXPECT_EQ(plain.exit_code, 3) << plain.output;
  EXPECT_EQ(plain.output.find("hub id"), std::string::npos) << plain.output;
}

TEST(EmbedFolderErrors, ModelFileGivenForTheFolderUsesItsFolder) {
  nlohmann::json folder = embed_json(quote(kTiny), "hello world");
  ASSERT_TRUE(folder.is_object());
  nlohmann::json file = embed_json(quote(kTiny + "/model.onnx"), "hello world");
  ASSERT_TRUE(file.is_object()) << "dlrt embed --model DIR/model.onnx failed";
  EXPECT_EQ(file["model"], "tiny_bert");
  EXPECT_EQ(file["data"][0]["embedding"], folder["data"][0]["embedding"]);
  // DIR/onnx/model.onnx (an Optimum export's layout): the folder above onnx/.
  fs::path dir = fresh_copy("onnx_layout");
  fs::create_directories(dir / "onnx");
  fs::rename(dir / "model.onnx", dir / "onnx" / "model.onnx");
  nlohmann::json nested = embed_json(quote((dir / "onnx" / "model.onnx").string()), "hello world");
  ASSERT_TRUE(nested.is_object()) << "dlrt embed --model DIR/onnx/model.onnx failed";
  EXPECT_EQ(nested["data"][0]["embedding"], folder["data"][0]["embedding"]);
  EXPECT_EQ(nested["model"], "onnx_layout");
}

TEST(EmbedFolderErrors, GenericFolderNameGivesWayToTheFolderAbove) {
  fs::path parent = fs::path(DLRT_BINARY_DIR) / "embed_test" / "folder_errors" / "my-minilm";
  fs::remove_all(parent);
  fs::create_directories(parent);
  fs::copy(kTiny, parent / "model", fs::copy_options::recursive);
  nlohmann::json j = embed_json(quote((parent / "model").string()), "hi");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["model"], "my-minilm");
}

TEST(EmbedFolderErrors, MissingFileNamesItAndTheReason) {
  auto r = run_command(bin() + " embed --device cpu --model " + quote(kTiny) + " --file /nonexistent/missing.txt");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/missing.txt"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No such file or directory"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dlrt::embed
