//===- dist-lsp-server.cpp - MLIR language server that knows dist --------===//
//
// Upstream's mlir-lsp-server with everything dist-opt registers, run in this
// process behind a thin proxy that adds what only dist knows:
//
//  * the distribution check (--dist-verify-distributions: upstream ops'
//    rules, incomplete gradient syncs, collectives under divergent
//    control) joins the parse and verifier diagnostics the server
//    publishes: the product's promise shows where people write IR; a
//    function marked {dist.complete} is checked after --dist-complete;
//  * hover on a `#dist.tensor` or `#dist.mesh` (or an alias of one) inside
//    a type says what the distribution means, with local and global shape;
//  * the server calls itself dist-lsp-server with dist's version;
//  * a document that would crash the server (nested deeper than dist's
//    tools accept, or input MLIR's own parser crashes on) is not shown to
//    it: the server sees an empty document, and the proxy publishes the
//    error dist-opt gives at its place. The server is sent each change as
//    the whole text, so that what it sees never depends on what it missed.
//
// The server reads and writes pipes; the proxy reads the client's messages
// (keeping each document's text), forwards them, and edits the server's
// replies on their way out. Everything else (definitions, references,
// completion, the verifier's own diagnostics) is upstream's, unchanged.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/MeshUtils.h"
#include "dist/InitAllDist.h"
#include "dist/Support/InputLimits.h"
#include "dist/Support/ParserCrashGuard.h"
#include "dist/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/LSP/Transport.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace mlir;
namespace json = llvm::json;

namespace {
//===----------------------------------------------------------------------===//
// Documents as the client sent them
//===----------------------------------------------------------------------===//

/// The byte offset of LSP position (line, UTF-16 character) in `text`.
size_t offsetOf(StringRef text, int64_t line, int64_t character) {
  size_t offset = 0;
  for (int64_t l = 0; l < line && offset < text.size(); ++l) {
    size_t nl = text.find('\n', offset);
    if (nl == StringRef::npos)
      return text.size();
    offset = nl + 1;
  }
  // UTF-16 units: a 4-byte UTF-8 sequence is two of them.
  for (int64_t units = 0;
       units < character && offset < text.size() && text[offset] != '\n';) {
    unsigned char c = text[offset];
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    units += len == 4 ? 2 : 1;
    offset = std::min(text.size(), offset + len);
  }
  return offset;
}

/// The LSP position of byte `offset` of `text`.
json::Object positionOf(StringRef text, size_t offset) {
  int64_t line = 0, character = 0;
  for (size_t i = 0; i < offset && i < text.size();) {
    unsigned char c = text[i];
    if (c == '\n') {
      ++line;
      character = 0;
      ++i;
      continue;
    }
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    character += len == 4 ? 2 : 1;
    i += len;
  }
  return json::Object{{"line", line}, {"character", character}};
}

/// Every version of each open document the server may still report on.
class Documents {
public:
  void open(const std::string &uri, int64_t version, std::string text) {
    std::lock_guard<std::mutex> lock(mutex);
    auto &versions = docs[uri];
    versions[version] = std::move(text);
    // A few versions back is enough: the server reports on each change.
    while (versions.size() > 8)
      versions.erase(versions.begin());
  }

  /// Applies an LSP change (a full text, or a range edit) on top of the
  /// newest version.
  void change(const std::string &uri, int64_t version,
              const json::Array &changes) {
    std::string text;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = docs.find(uri);
      if (it == docs.end() || it->second.empty())
        return;
      text = it->second.rbegin()->second;
    }
    for (const json::Value &c : changes) {
      const json::Object *change = c.getAsObject();
      if (!change)
        continue;
      std::optional<StringRef> newText = change->getString("text");
      if (!newText)
        continue;
      const json::Object *range = change->getObject("range");
      if (!range) {
        text = newText->str();
        continue;
      }
      auto offset = [&](StringRef key) -> std::optional<size_t> {
        const json::Object *p = range->getObject(key);
        if (!p || !p->getInteger("line") || !p->getInteger("character"))
          return std::nullopt;
        return offsetOf(text, *p->getInteger("line"),
                        *p->getInteger("character"));
      };
      std::optional<size_t> start = offset("start"), end = offset("end");
      if (!start || !end || *start > *end)
        continue;
      text.replace(*start, *end - *start, newText->str());
    }
    open(uri, version, std::move(text));
  }

  /// The newest version of `uri` kept.
  std::optional<int64_t> newest(const std::string &uri) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = docs.find(uri);
    if (it == docs.end() || it->second.empty())
      return std::nullopt;
    return it->second.rbegin()->first;
  }

  void close(const std::string &uri) {
    std::lock_guard<std::mutex> lock(mutex);
    docs.erase(uri);
  }

  /// The text of `version` (or the newest when it is absent).
  std::optional<std::string> get(const std::string &uri,
                                 std::optional<int64_t> version) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = docs.find(uri);
    if (it == docs.end() || it->second.empty())
      return std::nullopt;
    if (version) {
      auto v = it->second.find(*version);
      if (v != it->second.end())
        return v->second;
    }
    return it->second.rbegin()->second;
  }

private:
  std::mutex mutex;
  std::map<std::string, std::map<int64_t, std::string>> docs;
};

//===----------------------------------------------------------------------===//
// The distribution check as diagnostics
//===----------------------------------------------------------------------===//

/// The range of the token at (1-based) `line`:`col` of `text`, as the
/// server gives its own diagnostics: from the position to the end of the
/// identifier, number or symbol there.
json::Object rangeAt(StringRef text, unsigned line, unsigned col) {
  size_t start = offsetOf(text, line ? line - 1 : 0, col ? col - 1 : 0);
  size_t end = start;
  auto isIdent = [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$' || c == '-';
  };
  if (end < text.size() && (text[end] == '%' || text[end] == '@' ||
                            text[end] == '#' || text[end] == '^'))
    ++end;
  while (end < text.size() && isIdent(text[end]))
    ++end;
  if (end == start && end < text.size())
    ++end;
  return json::Object{{"start", positionOf(text, start)},
                      {"end", positionOf(text, end)}};
}

json::Value toLsp(const Diagnostic &diag, StringRef text, StringRef uri,
                  StringRef file) {
  unsigned line = 0, col = 0;
  auto position = [&](Location loc) {
    if (auto fl = loc->findInstanceOf<FileLineColLoc>())
      if (fl.getFilename() == file) {
        line = fl.getLine();
        col = fl.getColumn();
        return true;
      }
    return false;
  };
  position(diag.getLocation());
  int severity = 1;
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    severity = 1;
    break;
  case DiagnosticSeverity::Warning:
    severity = 2;
    break;
  case DiagnosticSeverity::Note:
  case DiagnosticSeverity::Remark:
    severity = 3;
    break;
  }
  json::Array related;
  for (const Diagnostic &note : diag.getNotes()) {
    unsigned noteLine = line, noteCol = col;
    std::swap(noteLine, line);
    std::swap(noteCol, col);
    position(note.getLocation());
    std::swap(noteLine, line);
    std::swap(noteCol, col);
    related.push_back(json::Object{
        {"location", json::Object{{"uri", uri},
                                  {"range", rangeAt(text, noteLine, noteCol)}}},
        {"message", note.str()}});
  }
  json::Object out{{"category", "Distribution Check"},
                   {"source", "dist-verify-distributions"},
                   {"message", diag.str()},
                   {"range", rangeAt(text, line, col)},
                   {"severity", severity}};
  if (!related.empty())
    out["relatedInformation"] = std::move(related);
  return out;
}

/// What --dist-verify-distributions says about `text`; nothing when it
/// does not parse or verify (the server reports that itself).
json::Array distributionDiagnostics(const DialectRegistry &registry,
                                    StringRef text, StringRef uri) {
  json::Array out;
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // The op is in the editor already: no "see current operation" notes.
  context.printOpOnDiagnostic(false);
  std::string file = "dist-lsp-document";
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, file),
                               llvm::SMLoc());
  bool parseFailed = false;
  std::vector<Diagnostic> found;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &) {
      parseFailed = true;
      return success();
    });
    if (dist::checkNestingDepth(text))
      return out;
    // Guarded, and refusing what upstream's verifiers crash on, whatever
    // the proxy decided about this text before.
    OwningOpRef<ModuleOp> module = dist::parseInput(sourceMgr, &context);
    if (!module || parseFailed)
      return out;
    ScopedDiagnosticHandler collect(&context, [&](Diagnostic &d) {
      found.push_back(std::move(d));
      return success();
    });
    PassManager pm(&context);
    pm.enableVerifier(false);
    // A function written for completion ({dist.complete}) is checked as
    // completion makes it, and completion's own errors (a conflict it
    // cannot reshard) are reported at the ops; the remarks on the
    // reshards it places are not problems.
    dist::DistCompleteOptions complete;
    complete.remarks = false;
    pm.addPass(dist::createDistComplete(complete));
    pm.addPass(dist::createDistVerifyDistributions());
    (void)pm.run(*module);
  }
  for (const Diagnostic &d : found)
    out.push_back(toLsp(d, text, uri, file));
  return out;
}

//===----------------------------------------------------------------------===//
// Hover on distributions
//===----------------------------------------------------------------------===//

/// The end of the bracketed text that starts with '<' at `open`.
size_t matchAngle(StringRef text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '>') {
      ++i;
      continue;
    }
    if (c == '<')
      ++depth;
    else if (c == '>' && --depth == 0)
      return i + 1;
    else if (c == '\n' && depth == 0)
      break;
  }
  return StringRef::npos;
}

bool isIdentChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
}

/// `#name = value` definitions at the start of lines.
std::map<std::string, std::string> aliasesOf(StringRef text) {
  std::map<std::string, std::string> aliases;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines) {
    if (!line.consume_front("#"))
      continue;
    size_t end = 0;
    while (end < line.size() && isIdentChar(line[end]))
      ++end;
    StringRef name = line.take_front(end);
    StringRef rest = line.drop_front(end).ltrim();
    if (name.empty() || !rest.consume_front("="))
      continue;
    aliases[name.str()] = rest.trim().str();
  }
  return aliases;
}

/// `text` with every alias reference replaced by its definition.
std::string expandAliases(StringRef text,
                          const std::map<std::string, std::string> &aliases) {
  std::string out = text.str();
  for (int round = 0; round < 4; ++round) {
    std::string next;
    bool changed = false;
    for (size_t i = 0; i < out.size();) {
      if (out[i] == '#' && i + 1 < out.size() && isIdentChar(out[i + 1])) {
        size_t end = i + 1;
        while (end < out.size() && isIdentChar(out[end]))
          ++end;
        auto it = aliases.find(out.substr(i + 1, end - i - 1));
        if (it != aliases.end() && (end >= out.size() || out[end] != '<')) {
          next += it->second;
          changed = true;
          i = end;
          continue;
        }
      }
      next += out[i++];
    }
    out = std::move(next);
    if (!changed)
      break;
  }
  return out;
}

std::string describeMesh(dist::MeshAttr mesh) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "**`#dist.mesh`**: " << mesh.getNumProcesses() << " processes in a [";
  llvm::interleaveComma(mesh.getShape(), os);
  os << "] grid\n";
  for (int64_t a = 0; a < mesh.getRank(); ++a) {
    os << "- axis " << a;
    if (a < static_cast<int64_t>(mesh.getNames().size()))
      os << " (" << mesh.getNames()[a].getValue() << ")";
    os << ": size " << mesh.getAxisSize(a) << "\n";
  }
  os << "\nA process's coordinate is the row-major unravel of its position "
        "in the process-id list";
  return s;
}

std::string axisLabel(dist::MeshAttr mesh, int64_t axis) {
  std::string s = "axis " + std::to_string(axis);
  if (axis < static_cast<int64_t>(mesh.getNames().size()))
    s += " (" + mesh.getNames()[axis].getValue().str() + ")";
  return s;
}

std::string describeDist(dist::TensorDistAttr dist, RankedTensorType type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  dist::MeshAttr mesh = dist.getMesh();
  os << "**`#dist.tensor`**: a distribution over the [";
  llvm::interleaveComma(mesh.getShape(), os);
  os << "] mesh (" << mesh.getNumProcesses() << " processes)\n";
  for (auto [dim, axis] : llvm::enumerate(dist.getDimsMapping())) {
    os << "- dim " << dim << ": ";
    if (axis < 0)
      os << "replicated";
    else
      os << "split over " << axisLabel(mesh, axis) << " into "
         << mesh.getAxisSize(axis) << " blocks";
    os << "\n";
  }
  for (auto [axis, kind] : dist.getPartials())
    os << "- partial over " << axisLabel(mesh, axis) << ": each process holds "
       << "a term of a pending " << dist::stringifyReductionKind(kind)
       << " (`dist.allreduce ... axes = [" << axis
       << "] reduce = " << dist::stringifyReductionKind(kind)
       << "` completes it)\n";
  if (dist.getDimsMapping().empty() && !dist.isPartial())
    os << "- a replicated scalar\n";
  if (type) {
    auto shape = [&](ArrayRef<int64_t> dims) {
      std::string t;
      llvm::raw_string_ostream ts(t);
      llvm::interleave(
          dims, ts,
          [&](int64_t d) {
            if (ShapedType::isDynamic(d))
              ts << "?";
            else
              ts << d;
          },
          "x");
      return t;
    };
    os << "\nLocal (per-process) shape " << shape(type.getShape())
       << ", global shape "
       << shape(dist::mesh::globalShape(type.getShape(), dist)) << ".";
  }
  return s;
}

/// The hover text for the distribution at byte `offset` of `text`, if any.
std::optional<std::string> hoverText(const DialectRegistry &registry,
                                     StringRef text, size_t offset) {
  auto aliases = aliasesOf(text);
  // An alias reference (or definition) under the cursor: what it stands
  // for, even inside a #dist.tensor<...> (a `#mesh` there is the mesh).
  size_t best = StringRef::npos, bestEnd = 0;
  std::string attrText;
  {
    size_t start = offset, end = offset;
    while (start > 0 && isIdentChar(text[start - 1]))
      --start;
    while (end < text.size() && isIdentChar(text[end]))
      ++end;
    if (start > 0 && text[start - 1] == '#' && start != end) {
      auto it = aliases.find(text.slice(start, end).str());
      if (it != aliases.end()) {
        attrText = it->second;
        best = start - 1;
      }
    }
  }
  // Else the innermost #dist.tensor<...> / #dist.mesh<...> around it.
  for (StringRef prefix : {"#dist.tensor<", "#dist.mesh<"}) {
    if (!attrText.empty())
      break;
    for (size_t at = text.find(prefix); at != StringRef::npos;
         at = text.find(prefix, at + 1)) {
      if (at > offset)
        break;
      size_t end = matchAngle(text, at + prefix.size() - 1);
      if (end == StringRef::npos || end <= offset)
        continue;
      if (best == StringRef::npos || at > best) {
        best = at;
        bestEnd = end;
      }
    }
  }
  if (attrText.empty()) {
    if (best == StringRef::npos)
      return std::nullopt;
    attrText = text.slice(best, bestEnd).str();
  }

  // Only what a distribution and its tensor type need: loading every
  // registered dialect made a hover 30 times slower than the server's own.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.getOrLoadDialect<dist::DistDialect>();
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  Attribute attr = parseAttribute(expandAliases(attrText, aliases), &context);
  if (auto mesh = dyn_cast_or_null<dist::MeshAttr>(attr))
    return describeMesh(mesh);
  auto dist = dyn_cast_or_null<dist::TensorDistAttr>(attr);
  if (!dist)
    return std::nullopt;
  // The tensor type the encoding belongs to, for its shapes.
  RankedTensorType type;
  for (size_t limit = best; limit > 0;) {
    size_t at = text.take_front(limit).rfind("tensor<");
    if (at == StringRef::npos || best - at > 4096)
      break;
    size_t end = matchAngle(text, at + 6);
    if (end != StringRef::npos && end > best) {
      type = dyn_cast_or_null<RankedTensorType>(
          parseType(expandAliases(text.slice(at, end), aliases), &context));
      break;
    }
    limit = at;
  }
  return describeDist(dist, type);
}

//===----------------------------------------------------------------------===//
// Documents the server must not see
//===----------------------------------------------------------------------===//

/// Why the server must not parse `text` (it would crash), and where.
struct Refusal {
  size_t offset;
  std::string message;
};

/// What the proxy found out about one version of a document before the
/// server saw it.
struct DocumentCheck {
  /// Set when the server was shown an empty document instead.
  std::optional<Refusal> refusal;
  /// Whether the text parses (unverified) without an error: the errors the
  /// server then reports are the verifier's.
  bool parses = false;
};

DocumentCheck checkDocument(const DialectRegistry &registry, StringRef text) {
  size_t offset = 0;
  if (std::optional<std::string> tooDeep =
          dist::checkNestingDepth(text, dist::kMaxInputNesting, &offset))
    return {Refusal{offset, *tooDeep}, false};
  // The parser is tried under the crash guard; only when it crashes does
  // the search for where run.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  bool parseErrors = false;
  context.getDiagEngine().registerHandler([&](Diagnostic &d) {
    parseErrors |= d.getSeverity() == DiagnosticSeverity::Error;
  });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "dist-lsp-document"),
      llvm::SMLoc());
  auto block = std::make_unique<Block>();
  if (dist::runParserGuarded([&] {
        (void)parseSourceFile(sourceMgr, block.get(),
                              ParserConfig(&context, false));
      })) {
    // Parsed (or failed with an error the server reports itself): what
    // upstream's verifiers would crash on is refused at its op.
    std::optional<Refusal> refusal;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (refusal)
        return success();
      size_t offset = 0;
      if (auto loc = dyn_cast<FileLineColLoc>(d.getLocation()))
        offset = offsetOf(text, loc.getLine() - 1, loc.getColumn() - 1);
      refusal = Refusal{offset, d.str()};
      return success();
    });
    bool parses = !parseErrors;
    for (Operation &op : *block)
      if (failed(dist::checkUpstreamVerifierCrashes(&op)))
        break;
    return {refusal, parses};
  }
  // What the crashed parse built is left as it is (ParserCrashGuard.h).
  dist::abandonAfterCrash(block.release());
  dist::ParserCrashReport crash = dist::reportParserCrash(text, registry);
  return {Refusal{crash.offset.value_or(0), std::move(crash.message)}, false};
}

//===----------------------------------------------------------------------===//
// The proxy
//===----------------------------------------------------------------------===//

class Proxy {
public:
  Proxy(DialectRegistry &registry, bool pretty, int clientOut, int serverIn)
      : registry(registry), pretty(pretty), clientOut(clientOut),
        serverIn(serverIn) {}

  /// Client to server: remember documents and requests, forward.
  void fromClient(std::FILE *in, llvm::lsp::JSONStreamStyle style) {
    llvm::lsp::JSONTransportInputOverFile input(in, style);
    forEachMessage(input, [&](const std::string &text) {
      if (text.empty())
        return;
      std::string forwarded = text;
      if (llvm::Expected<json::Value> message = json::parse(text)) {
        observe(*message);
        if (showDocument(*message))
          forwarded = serialize(*message);
      } else {
        llvm::consumeError(message.takeError());
      }
      writeFramed(serverIn, forwarded);
    });
  }

  /// Server to client: edit what dist knows better, forward.
  void fromServer(std::FILE *in) {
    llvm::lsp::JSONTransportInputOverFile input(in);
    forEachMessage(input, [&](const std::string &text) {
      llvm::Expected<json::Value> message = json::parse(text);
      if (!message) {
        llvm::consumeError(message.takeError());
        writeFramed(clientOut, text);
        return;
      }
      edit(*message);
      writeFramed(clientOut, serialize(*message));
    });
  }

private:
  /// Calls `handle` with each message read from `input` until it ends or
  /// fails; a message that cannot be read is skipped.
  static void
  forEachMessage(llvm::lsp::JSONTransportInputOverFile &input,
                 llvm::function_ref<void(const std::string &)> handle) {
    while (!input.isEndOfInput() && !input.hasError()) {
      std::string text;
      if (succeeded(input.readMessage(text)))
        handle(text);
    }
  }

  static void writeFramed(int fd, StringRef body) {
    std::string framed =
        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    framed += body.str();
    for (size_t done = 0; done < framed.size();) {
      ssize_t n = ::write(fd, framed.data() + done, framed.size() - done);
      if (n <= 0)
        return;
      done += n;
    }
  }

  std::string serialize(const json::Value &message) const {
    std::string out;
    llvm::raw_string_ostream os(out);
    if (pretty)
      os << llvm::formatv("{0:2}", message);
    else
      os << message;
    return out;
  }

  /// Rewrites a didOpen or didChange into what the server is to see: the
  /// whole text, or an empty document when the text would crash it.
  /// Returns whether it rewrote `message`.
  bool showDocument(json::Value &message) {
    json::Object *object = message.getAsObject();
    std::optional<StringRef> method =
        object ? object->getString("method") : std::nullopt;
    if (!method || (*method != "textDocument/didOpen" &&
                    *method != "textDocument/didChange"))
      return false;
    json::Object *params = object->getObject("params");
    json::Object *doc = params ? params->getObject("textDocument") : nullptr;
    std::optional<StringRef> uri = doc ? doc->getString("uri") : std::nullopt;
    if (!uri)
      return false;
    std::optional<int64_t> version = doc->getInteger("version");
    std::optional<std::string> text = documents.get(uri->str(), version);
    if (!text)
      return false;
    DocumentCheck check = checkDocument(registry, *text);
    bool refuse = check.refusal.has_value();
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto &versions = checked[uri->str()];
      versions[version.value_or(0)] = std::move(check);
      // As many versions back as Documents keeps.
      while (versions.size() > 8)
        versions.erase(versions.begin());
    }
    std::string shown = refuse ? std::string() : std::move(*text);
    if (*method == "textDocument/didOpen")
      (*doc)["text"] = std::move(shown);
    else
      (*params)["contentChanges"] =
          json::Array{json::Object{{"text", std::move(shown)}}};
    return true;
  }

  void observe(const json::Value &message) {
    const json::Object *object = message.getAsObject();
    if (!object)
      return;
    std::optional<StringRef> method = object->getString("method");
    const json::Object *params = object->getObject("params");
    if (!method || !params)
      return;
    const json::Object *doc = params->getObject("textDocument");
    std::optional<StringRef> uri = doc ? doc->getString("uri") : std::nullopt;
    if (*method == "initialize") {
      if (const json::Value *id = object->get("id")) {
        std::lock_guard<std::mutex> lock(mutex);
        initializeId = *id;
      }
    } else if (*method == "textDocument/didOpen" && uri) {
      if (std::optional<StringRef> body = doc->getString("text"))
        documents.open(uri->str(), doc->getInteger("version").value_or(0),
                       body->str());
    } else if (*method == "textDocument/didChange" && uri) {
      if (const json::Array *changes = params->getArray("contentChanges"))
        documents.change(uri->str(), doc->getInteger("version").value_or(0),
                         *changes);
    } else if (*method == "textDocument/didClose" && uri) {
      documents.close(uri->str());
      std::lock_guard<std::mutex> lock(mutex);
      checked.erase(uri->str());
    } else if (*method == "textDocument/hover" && uri) {
      const json::Value *id = object->get("id");
      const json::Object *position = params->getObject("position");
      if (id && position) {
        std::lock_guard<std::mutex> lock(mutex);
        hovers.push_back({*id, uri->str(),
                          position->getInteger("line").value_or(0),
                          position->getInteger("character").value_or(0)});
      }
    }
  }

  void edit(json::Value &message) {
    json::Object *object = message.getAsObject();
    if (!object)
      return;
    if (std::optional<StringRef> method = object->getString("method")) {
      if (*method == "textDocument/publishDiagnostics")
        addDistributionDiagnostics(*object);
      return;
    }
    const json::Value *id = object->get("id");
    if (!id)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    if (initializeId && *id == *initializeId) {
      if (json::Object *result = object->getObject("result"))
        (*result)["serverInfo"] = json::Object{
            {"name", "dist-lsp-server"},
            {"version", DIST_VERSION_STRING " (MLIR " LLVM_VERSION_STRING ")"}};
      initializeId.reset();
      return;
    }
    for (auto it = hovers.begin(); it != hovers.end(); ++it) {
      if (it->id != *id)
        continue;
      Hover hover = *it;
      hovers.erase(it);
      answerHover(*object, hover);
      return;
    }
  }

  struct Hover {
    json::Value id;
    std::string uri;
    int64_t line, character;
  };

  /// What was found out about version `version` of `uri` (the newest when
  /// not given) before the server saw it. A version is looked up, not the
  /// document's state now: the server's answers about one version may
  /// arrive after the next was refused or mended. Called with `mutex` held.
  DocumentCheck checkOfVersion(const std::string &uri,
                               std::optional<int64_t> version) {
    auto it = checked.find(uri);
    if (it == checked.end())
      return {};
    std::optional<int64_t> at = version ? version : documents.newest(uri);
    auto check = at ? it->second.find(*at) : it->second.end();
    if (check == it->second.end())
      return {};
    return check->second;
  }

  /// Says what a distribution under the cursor means: the whole answer
  /// where the server has none (null), after the server's own otherwise (on
  /// an alias it shows only the aliased text). Called with `mutex` held.
  void answerHover(json::Object &reply, const Hover &hover) {
    json::Value *result = reply.get("result");
    if (!result)
      return;
    json::Object *contents = nullptr;
    if (result->kind() != json::Value::Null) {
      json::Object *object = result->getAsObject();
      contents = object ? object->getObject("contents") : nullptr;
      if (!contents || !contents->getString("value"))
        return;
    }
    // A refused document's fragments may be what crashes the parser.
    if (checkOfVersion(hover.uri, std::nullopt).refusal)
      return;
    std::optional<std::string> text = documents.get(hover.uri, std::nullopt);
    if (!text)
      return;
    size_t offset = offsetOf(*text, hover.line, hover.character);
    std::optional<std::string> meaning = hoverText(registry, *text, offset);
    if (!meaning)
      return;
    if (contents) {
      std::string value = contents->getString("value")->str();
      (*contents)["value"] = value + "\n\n" + *meaning;
      return;
    }
    reply["result"] = json::Object{
        {"contents", json::Object{{"kind", "markdown"}, {"value", *meaning}}}};
  }

  void addDistributionDiagnostics(json::Object &notification) {
    json::Object *params = notification.getObject("params");
    if (!params)
      return;
    std::optional<StringRef> uri = params->getString("uri");
    json::Array *diagnostics = params->getArray("diagnostics");
    if (!uri || !diagnostics)
      return;
    DocumentCheck check;
    {
      std::lock_guard<std::mutex> lock(mutex);
      check = checkOfVersion(uri->str(), params->getInteger("version"));
    }
    // MLIR's server files everything it finds while parsing, the
    // verifier's errors included, as "Parse Error"; a text that parsed is
    // wrong only by the verifier.
    if (check.parses)
      for (json::Value &d : *diagnostics)
        if (json::Object *object = d.getAsObject())
          if (object->getString("category") == StringRef("Parse Error"))
            (*object)["category"] = "Verification Error";
    // Errors the server found (parse, verifier) come first: the check needs
    // valid IR.
    if (!diagnostics->empty())
      return;
    std::optional<std::string> text =
        documents.get(uri->str(), params->getInteger("version"));
    if (!text)
      return;
    if (const std::optional<Refusal> &refusal = check.refusal) {
      auto [line, column] = dist::lineAndColumn(*text, refusal->offset);
      diagnostics->push_back(
          json::Object{{"category", "Input Refused"},
                       {"source", "dist"},
                       {"message", refusal->message},
                       {"range", rangeAt(*text, line, column)},
                       {"severity", 1}});
      return;
    }
    for (json::Value &d : distributionDiagnostics(registry, *text, *uri))
      diagnostics->push_back(std::move(d));
  }

  DialectRegistry &registry;
  bool pretty;
  int clientOut, serverIn;
  Documents documents;
  std::mutex mutex;
  std::optional<json::Value> initializeId;
  std::vector<Hover> hovers;
  /// What the proxy found out about each kept version of each document.
  std::map<std::string, std::map<int64_t, DocumentCheck>> checked;
};
} // namespace

int main(int argc, char **argv) {
  DialectRegistry registry;
  dist::registerAllDistDialects(registry);
  registerAllDialects(registry);
  registerAllExtensions(registry);

  // The server's own options, but for the input style: the proxy reads the
  // client (delimited in lit tests) and speaks standard LSP to the server.
  bool litTest = false;
  std::optional<llvm::lsp::JSONStreamStyle> style;
  std::vector<char *> serverArgs;
  for (int i = 0; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "-lit-test" || arg == "--lit-test") {
      litTest = true;
      continue;
    }
    if (arg.consume_front("--input-style=") ||
        arg.consume_front("-input-style=")) {
      style = arg == "delimited" ? llvm::lsp::JSONStreamStyle::Delimited
                                 : llvm::lsp::JSONStreamStyle::Standard;
      continue;
    }
    serverArgs.push_back(argv[i]);
  }
  if (litTest)
    serverArgs.push_back(const_cast<char *>("--log=error"));
  serverArgs.push_back(nullptr);
  if (!style)
    style = litTest ? llvm::lsp::JSONStreamStyle::Delimited
                    : llvm::lsp::JSONStreamStyle::Standard;

  // The server gets pipes as its stdin and stdout; the proxy keeps the real
  // ones.
  int clientIn = ::dup(STDIN_FILENO), clientOut = ::dup(STDOUT_FILENO);
  int toServer[2], fromServer[2];
  if (clientIn < 0 || clientOut < 0 || ::pipe(toServer) || ::pipe(fromServer)) {
    std::perror("dist-lsp-server: cannot set up the server's pipes");
    return EXIT_FAILURE;
  }
  ::dup2(toServer[0], STDIN_FILENO);
  ::dup2(fromServer[1], STDOUT_FILENO);
  ::close(toServer[0]);
  ::close(fromServer[1]);

  Proxy proxy(registry, litTest, clientOut, toServer[1]);
  std::FILE *clientStream = ::fdopen(clientIn, "r");
  std::FILE *serverStream = ::fdopen(fromServer[0], "r");
  std::thread down([&] { proxy.fromServer(serverStream); });
  std::thread up([&] {
    proxy.fromClient(clientStream, *style);
    // The client is gone: so is the server's input.
    ::close(toServer[1]);
  });
  up.detach();

  int serverArgc = static_cast<int>(serverArgs.size()) - 1;
  LogicalResult result =
      MlirLspServerMain(serverArgc, serverArgs.data(), registry);
  // The server has answered its last message: end its output so that the
  // proxy forwards what is left and stops.
  llvm::outs().flush();
  std::fflush(stdout);
  int devNull = ::open("/dev/null", O_WRONLY);
  ::dup2(devNull, STDOUT_FILENO);
  down.join();
  return failed(result) ? EXIT_FAILURE : EXIT_SUCCESS;
}
