// RunOptions checked and turned into the limits the executor and kernels
// read (core/run_limits.h).
#pragma once

#include "core/run_limits.h"
#include "dlrt/session.h"

namespace dlrt {

// The limits of a run with `options` on `session`: kInvalidArgument for a
// negative timeout or item length; kUnsupported for item_lengths on a
// session with a partition off the CPU (only the CPU kernels quantize per
// item). The result points into `options`, which must outlive it.
Result<RunLimits> run_limits_of(const RunOptions& options, const Session& session);

}  // namespace dlrt
