// The attributes of RNN, GRU and LSTM (ops/rnn.cpp), parsed once when the
// session is prepared (rnn_attrs.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/kernel.h"

namespace dlrt::cpu::rnn {

enum class Cell { kRnn, kGru, kLstm };

enum class RnnActKind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                     kSoftsign, kSoftplus };

struct RnnActivation {
  RnnActKind kind = RnnActKind::kTanh;
  float alpha = 0;
  float beta = 0;
};

// The node's attributes, parsed once when the session is prepared.
struct RnnAttrs {
  Cell cell = Cell::kRnn;
  int64_t D = 1, G = 1;
  bool reverse = false;  // only meaningful when D == 1
  int64_t layout = 0;
  bool has_clip = false;
  float clip = 0;
  bool linear_before_reset = false;
  bool input_forget = false;
  int64_t hidden_size = -1;      // -1 when the attribute is absent
  std::vector<RnnActivation> acts;  // D * acts_per_dir
};

// A run's sizes, from the inputs' shapes.
struct Dims {
  int64_t S = 0, B = 0, I = 0, H = 0;
};

// The attributes of node `n`, a `cell` layer; the node's error when one is invalid.
Result<RnnAttrs> parse_attrs(const ir::Node& n, Cell cell);

}  // namespace dlrt::cpu::rnn
