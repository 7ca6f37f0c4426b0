//===- PipelineCheck.cpp - transfers between stages cannot deadlock -------===//

#include "dist/Analysis/PipelineCheck.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <tuple>

using namespace mlir;
using namespace mlir::dist;

namespace {

/// What a stage's program does with respect to the others, in order.
struct Event {
  enum Kind { Send, Recv, Post, Wait } kind;
  /// The dist.send, or the dist.recv (also for a wait: the receive it
  /// completes).
  Operation *transfer;
  /// Where the stage blocks: the transfer, or the dist.wait.
  Operation *at;
};

/// One message: from stage, to stage, tag.
using MessageKey = std::tuple<int64_t, int64_t, int64_t>;

int64_t peerOf(Operation *op) {
  if (auto send = dyn_cast<SendOp>(op))
    return send.getPeer();
  return cast<RecvOp>(op).getPeer();
}

int64_t tagOf(Operation *op) {
  if (auto send = dyn_cast<SendOp>(op))
    return send.getTag();
  return cast<RecvOp>(op).getTag();
}

RankedTensorType typeOf(Operation *op) {
  if (auto send = dyn_cast<SendOp>(op))
    return send.getTensorType();
  return cast<RecvOp>(op).getTensorType();
}

/// The switch whose case `op` is directly in, if it switches on the
/// coordinate of `op`'s own mesh axis.
scf::IndexSwitchOp stageSwitchOf(Operation *op, MeshAttr mesh, int64_t axis) {
  auto sw = dyn_cast_or_null<scf::IndexSwitchOp>(op->getParentOp());
  if (!sw)
    return {};
  auto coord = sw.getArg().getDefiningOp<ProcessCoordOp>();
  if (!coord || coord.getMesh() != mesh ||
      static_cast<int64_t>(coord.getAxis()) != axis)
    return {};
  return sw;
}

/// The transfers of one switch: a program per coordinate of its axis.
class SwitchCheck {
public:
  SwitchCheck(scf::IndexSwitchOp sw, int64_t stages)
      : sw(sw), programs(stages) {}

  LogicalResult run() {
    if (failed(collect()) || failed(pair()))
      return failure();
    return replay();
  }

private:
  Region &regionOf(int64_t stage) {
    for (auto [value, region] :
         llvm::zip_equal(sw.getCases(), sw.getCaseRegions()))
      if (value == stage)
        return region;
    return sw.getDefaultRegion();
  }

  LogicalResult collect() {
    for (int64_t stage = 0, e = programs.size(); stage < e; ++stage) {
      for (Operation &op : regionOf(stage).front()) {
        Event::Kind kind;
        Operation *transfer = &op;
        if (isa<SendOp>(op)) {
          kind = Event::Send;
        } else if (auto recv = dyn_cast<RecvOp>(op)) {
          kind = recv.isAsync() ? Event::Post : Event::Recv;
        } else if (auto wait = dyn_cast<WaitOp>(op)) {
          transfer = wait.getFuture().getDefiningOp<RecvOp>();
          if (!transfer)
            continue;
          kind = Event::Wait;
        } else {
          continue;
        }
        if (peerOf(transfer) == stage)
          return transfer->emitOpError("in stage ")
                 << stage << " names its own stage as the peer";
        programs[stage].push_back({kind, transfer, &op});
      }
    }
    return success();
  }

  /// Every message has one send and one receive, of one type.
  LogicalResult pair() {
    llvm::MapVector<MessageKey, std::pair<Operation *, int64_t>> sends, recvs;
    for (int64_t stage = 0, e = programs.size(); stage < e; ++stage) {
      for (const Event &event : programs[stage]) {
        if (event.kind == Event::Wait)
          continue;
        bool isSend = event.kind == Event::Send;
        int64_t peer = peerOf(event.transfer), tag = tagOf(event.transfer);
        MessageKey key = isSend ? MessageKey{stage, peer, tag}
                                : MessageKey{peer, stage, tag};
        auto &table = isSend ? sends : recvs;
        auto [it, inserted] = table.insert({key, {event.transfer, stage}});
        if (!inserted) {
          InFlightDiagnostic diag = event.transfer->emitOpError("in stage ")
                                    << stage << " reuses tag " << tag
                                    << " between stages " << std::get<0>(key)
                                    << " and " << std::get<1>(key)
                                    << "; a tag names one message";
          diag.attachNote(it->second.first->getLoc()) << "first used here";
          return diag;
        }
      }
    }
    for (auto &[key, send] : sends) {
      auto [from, to, tag] = key;
      auto it = recvs.find(key);
      if (it == recvs.end())
        return send.first->emitOpError("in stage ")
               << from << " is never received: stage " << to
               << " has no dist.recv from stage " << from << " with tag "
               << tag;
      Operation *recv = it->second.first;
      if (typeOf(recv) != typeOf(send.first)) {
        InFlightDiagnostic diag = recv->emitOpError("in stage ")
                                  << to << " receives " << typeOf(recv)
                                  << " but stage " << from << " sends "
                                  << typeOf(send.first) << " with tag " << tag;
        diag.attachNote(send.first->getLoc()) << "the send";
        return diag;
      }
    }
    for (auto &[key, recv] : recvs) {
      auto [from, to, tag] = key;
      if (!sends.count(key))
        return recv.first->emitOpError("in stage ")
               << to << " is never sent: stage " << from
               << " has no dist.send to stage " << to << " with tag " << tag;
    }
    for (auto &[key, send] : sends)
      partnerOf[send.first] = recvs.lookup(key).first;
    return success();
  }

  /// Advances `stage` by one event if it can.
  bool step(int64_t stage) {
    const Event &event = programs[stage][next[stage]];
    switch (event.kind) {
    case Event::Post:
      posted.insert(event.transfer);
      break;
    case Event::Recv:
      posted.insert(event.transfer);
      if (!matched.contains(event.transfer))
        return false;
      break;
    case Event::Wait:
      if (!matched.contains(event.transfer))
        return false;
      break;
    case Event::Send: {
      Operation *recv = partnerOf.lookup(event.transfer);
      if (!posted.contains(recv))
        return false;
      matched.insert(recv);
      break;
    }
    }
    ++next[stage];
    return true;
  }

  LogicalResult replay() {
    int64_t stages = programs.size();
    next.assign(stages, 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int64_t stage = 0; stage < stages; ++stage)
        while (next[stage] < programs[stage].size() && step(stage))
          progress = true;
    }
    SmallVector<int64_t> blocked;
    for (int64_t stage = 0; stage < stages; ++stage)
      if (next[stage] < programs[stage].size())
        blocked.push_back(stage);
    if (blocked.empty())
      return success();
    auto describe = [&](int64_t stage) {
      const Event &event = programs[stage][next[stage]];
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "stage " << stage << " blocks here "
         << (event.kind == Event::Send   ? "sending tag "
             : event.kind == Event::Wait ? "waiting for tag "
                                         : "receiving tag ")
         << tagOf(event.transfer)
         << (event.kind == Event::Send ? " to" : " from") << " stage "
         << peerOf(event.transfer);
      return std::make_pair(event.at, text);
    };
    auto [at, text] = describe(blocked.front());
    InFlightDiagnostic diag =
        at->emitOpError("deadlocks: ")
        << text
        << ", and no order of the stages' transfers lets it go on (a send "
           "returns only once its receive is posted)";
    for (int64_t stage : llvm::drop_begin(blocked)) {
      auto [otherAt, otherText] = describe(stage);
      diag.attachNote(otherAt->getLoc()) << otherText;
    }
    return diag;
  }

  scf::IndexSwitchOp sw;
  SmallVector<SmallVector<Event>> programs;
  DenseMap<Operation *, Operation *> partnerOf;
  DenseSet<Operation *> posted, matched;
  SmallVector<size_t> next;
};

} // namespace

LogicalResult mlir::dist::verifyPipelineTransfers(Operation *root) {
  llvm::MapVector<Operation *, int64_t> switches;
  WalkResult walk = root->walk([&](Operation *op) {
    if (!isa<SendOp, RecvOp>(op))
      return WalkResult::advance();
    MeshAttr mesh;
    int64_t axis;
    if (auto send = dyn_cast<SendOp>(op)) {
      mesh = send.getMesh();
      axis = send.getAxis();
    } else {
      auto recv = cast<RecvOp>(op);
      mesh = recv.getMesh();
      axis = recv.getAxis();
    }
    scf::IndexSwitchOp sw = stageSwitchOf(op, mesh, axis);
    if (!sw) {
      op->emitOpError("is not in a stage's program: a transfer must be "
                      "directly in a case of an scf.index_switch on "
                      "dist.process_coord axis = ")
          << axis << " of its mesh";
      return WalkResult::interrupt();
    }
    switches.insert({sw, mesh.getAxisSize(axis)});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (auto [op, stages] : switches)
    if (failed(SwitchCheck(cast<scf::IndexSwitchOp>(op), stages).run()))
      return failure();
  return success();
}
