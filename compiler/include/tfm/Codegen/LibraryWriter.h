//===- LibraryWriter.h - Program to lib<model>.so ---------------*- C++ -*-===//
//
// The last stage of tfmc: compiles every kernel of a Program with Halide,
// emits the driver (the call sequence of each entry point, with every buffer
// bound to its weight, arena offset or cache window) as C, and links them
// with Halide's runtime into lib<name>.so, or with the runtime into a
// standalone executable. Also writes manifest.json and <name>.h.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_LIBRARYWRITER_H
#define TFM_CODEGEN_LIBRARYWRITER_H

#include "tfm/Codegen/Program.h"

#include <string>

namespace tfm {

struct LibraryOptions {
  std::string outDir;
  std::string targetName = "host"; // a name from knownTargets()
  std::string schedule = "fast";
  bool emitExe = false;            // also link a standalone executable
  bool verbose = false;            // report each step on stderr
};

/// What the generated library says about itself (and manifest.json).
struct LibraryIdentity {
  std::string halideTarget;
  std::string configHash; // of the config, target and schedule
};

LibraryIdentity identify(const Program &program, const LibraryOptions &options);

/// Marks the kernel parameters bound to key caches (Program.h, isKeyCache).
void assignCacheLayouts(Program &program);

std::string emitManifest(const Program &program, const LibraryOptions &options,
                         const LibraryIdentity &id);
std::string emitDriverSource(const Program &program, const LibraryOptions &options,
                             const LibraryIdentity &id, const std::string &manifest);
std::string emitModelHeader(const Program &program);

/// Does all of the above into options.outDir.
bool writeLibrary(Program &program, const LibraryOptions &options, std::string &error);

} // namespace tfm

#endif // TFM_CODEGEN_LIBRARYWRITER_H
