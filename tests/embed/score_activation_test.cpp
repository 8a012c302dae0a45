// read_score_activation (embed/models/score_activation.h): where each
// sentence-transformers version names a CrossEncoder's activation, the
// library's defaults, and the refusal of one dlrt cannot apply.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "embed/models/score_activation.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;

struct Folder {
  fs::path dir = fs::temp_directory_path() / ("dlrt_score_activation_" + std::to_string(::getpid()));
  Folder() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
};

std::vector<float> applied(const ScoreActivation& a, std::vector<float> row) {
  a.apply(row.data(), row.size());
  return row;
}

TEST(ScoreActivation, LibraryDefaults) {
  Folder f;
  auto one = read_score_activation(f.dir, 1);
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->name, "Sigmoid");
  EXPECT_TRUE(one->source.empty());
  EXPECT_NEAR(applied(*one, {0.5f})[0], 1 / (1 + std::exp(-0.5)), 1e-7);
  auto three = read_score_activation(f.dir, 3);
  ASSERT_TRUE(three.ok());
  EXPECT_TRUE(three->is_identity());
  EXPECT_EQ(applied(*three, {-2.0f, 0.5f, 3.0f}), (std::vector<float>{-2.0f, 0.5f, 3.0f}));
}

TEST(ScoreActivation, NewerFileComesFirst) {
  Folder f;
  f.write("config.json", R"({"sentence_transformers": {"activation_fn": "torch.nn.modules.activation.Sigmoid"}})");
  f.write("config_sentence_transformers.json", R"({"activation_fn": "torch.nn.modules.activation.Tanh"})");
  auto a = read_score_activation(f.dir, 1);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->name, "Tanh");
  EXPECT_NE(a->source.find("config_sentence_transformers.json"), std::string::npos);
  EXPECT_NEAR(applied(*a, {0.5f})[0], std::tanh(0.5), 1e-7);
}

TEST(ScoreActivation, ConfigJsonAndTheKeyBefore4) {
  Folder f;
  f.write("config.json", R"({"sentence_transformers": {"activation_fn": "torch.nn.modules.linear.Identity"},
                             "sbert_ce_default_activation_function": "torch.nn.modules.activation.Sigmoid"})");
  auto a = read_score_activation(f.dir, 1);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_TRUE(a->is_identity());
  f.write("config.json", R"({"sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity"})");
  a = read_score_activation(f.dir, 1);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_TRUE(a->is_identity());
  f.write("config.json", R"({"sentence_transformers": {"activation_fn": null},
                             "sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity"})");
  a = read_score_activation(f.dir, 1);  // the library takes a null here as its default
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->name, "Sigmoid");
}

TEST(ScoreActivation, SoftmaxOverTheRow) {
  Folder f;
  f.write("config_sentence_transformers.json", R"({"activation_fn": "torch.nn.modules.activation.Softmax"})");
  auto a = read_score_activation(f.dir, 2);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  const std::vector<float> p = applied(*a, {1.0f, 3.0f});
  EXPECT_NEAR(p[0], 1 / (1 + std::exp(2.0)), 1e-7);
  EXPECT_NEAR(p[0] + p[1], 1.0, 1e-7);
}

TEST(ScoreActivation, RefusesWhatItCannotApplyByName) {
  Folder f;
  f.write("config_sentence_transformers.json", R"({"activation_fn": "torch.nn.modules.activation.PReLU"})");
  auto a = read_score_activation(f.dir, 1);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(a.status().message().find("torch.nn.modules.activation.PReLU"), std::string::npos) << a.status().message();
  f.write("config_sentence_transformers.json", R"({"activation_fn": "my_package.ScaledSigmoid"})");
  a = read_score_activation(f.dir, 1);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(a.status().message().find("trust_remote_code"), std::string::npos) << a.status().message();
  f.write("config_sentence_transformers.json", R"({"activation_fn": 3})");
  a = read_score_activation(f.dir, 1);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace dlrt::embed
