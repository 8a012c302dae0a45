// Ahead-of-time compiled models: `dlrt compile` writes an ONNX model in which
// each partition a backend compiled is one node
//
//   com.dlrt.CompiledPartition(inputs of the partition) -> (its outputs)
//
// carrying the backend, its device, the compile options, what the blob is
// compatible with (backend runtime version, device, driver), the blob itself
// (a uint8 tensor attribute, or a side file next to the model) and the
// original subgraph (a graph attribute) to recompile from. See docs/compile.md
// for the attribute list.
//
// A Session runs such a node as an accelerator partition on the device it was
// compiled for when this run may use that device: with the blob when it is
// compatible, else by compiling the kept subgraph (the report says which, and
// why). When the run does not use that device the kept subgraph runs on the
// CPU. Session hook: CompiledPartitions (below), a few lines in session.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "dlrt/compile.h"
#include "dlrt/session.h"
#include "ir/graph.h"
#include "runtime/placement.h"

namespace dlrt {

inline constexpr const char* kCompiledDomain = "com.dlrt";
inline constexpr const char* kCompiledOp = "CompiledPartition";
inline constexpr int64_t kCompiledFormatVersion = 1;

// True for a com.dlrt.CompiledPartition node.
bool is_compiled_partition(const ir::Node& node);

// ---- writing (dlrt compile) ----

// CompileModelOptions, CompileModelResult and compile_model_file: dlrt/compile.h.

// ---- reading (Session) ----

class CompiledPartitionBackend;

// What a session needs to run a model's compiled partitions. Not thread-safe
// while planning; annotate() may be called from any thread afterwards.
class CompiledPartitions {
 public:
  // plan_partitions() for a graph that may hold CompiledPartition nodes: puts
  // one candidate per such node first in res.candidates, taking exactly that
  // node, on its own device when `res` has it (blob or recompile), else on the
  // CPU (the kept subgraph). Errors: a malformed CompiledPartition node.
  Result<PartitionPlan> plan(const ir::Graph& graph, const std::string& base_dir, Resolution& res,
                             const std::vector<Device>& hardware);

  // The kept subgraph to run for a partition that is one CompiledPartition
  // node (its inputs and outputs have the node's value names); else nullptr.
  static std::shared_ptr<ir::Graph> subgraph_of(const ir::Graph& graph, const PlannedPartition& part);

  // Remembers that report entry `report_index` runs `c` (ignored unless `c`
  // is a compiled partition's candidate).
  void track(int report_index, const Candidate& c);

  // Writes each tracked partition's note (compiled blob used, or why it was
  // recompiled / runs on the CPU) into the report entries that ran where the
  // note applies.
  void annotate(RunReport& report) const;

 private:
  std::vector<std::pair<int, std::shared_ptr<CompiledPartitionBackend>>> tracked_;
};

}  // namespace dlrt
