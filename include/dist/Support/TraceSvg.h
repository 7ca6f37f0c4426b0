//===- TraceSvg.h - reading and drawing a run trace ------------*- C++ -*-===//
//
// The one C++ reader and the one drawer of dist's traces: what `dist-run
// --trace` measured and what
// `--dist-overlap-report` estimated are written in one format (defined in
// python/dist/run/trace.py) and drawn by this one function, for
// `--dist-overlap-report=svg-file=...`, the C API and `dist.run.timeline`.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_TRACESVG_H
#define DIST_SUPPORT_TRACESVG_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir {
namespace dist {

/// One timed interval ("ph": "X") of a trace, in microseconds.
struct TraceInterval {
  std::string name, category;
  int64_t rank, thread;
  double begin, end;
};

/// The intervals of `trace`, checked as every reader checks them: an object
/// with a 'traceEvents' array, of this dist's format version, each interval
/// with a name, category, time, duration (finite, not negative), process
/// and thread. An error that says what is wrong otherwise.
llvm::Expected<std::vector<TraceInterval>>
readTraceIntervals(const llvm::json::Value &trace);

/// Draws `trace` as an SVG picture on `os`: per process (`pid`) a group
/// headed by its name (and its `summary`, where its process_name metadata
/// has one), a lane per thread (`tid`) with a bar per interval, coloured by
/// what the compute stream does (compute blue, blocking communication and
/// waits red, issues orange) or green on a stream's lane; a function call is
/// a thin bracket above its lane. One time scale and axis for all. An error
/// (nothing written) when `trace` is not a trace of that format.
llvm::Error renderTraceSvg(const llvm::json::Value &trace,
                           llvm::raw_ostream &os);

} // namespace dist
} // namespace mlir

#endif // DIST_SUPPORT_TRACESVG_H
