//===- LibraryWriter.h - Program to lib<model>.so ---------------*- C++ -*-===//
//
// The last stage of tfmc: compiles every kernel of a Program with Halide,
// emits the driver (the call sequence of each entry point, with every buffer
// bound to its weight, arena offset or cache buffer, all as the IR planned
// them) as C, and links them with Halide's runtime into lib<name>.so, or
// with the runtime into a standalone executable. Also writes manifest.json
// and <name>.h. Reads nothing but the Program.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_LIBRARYWRITER_H
#define TFM_CODEGEN_LIBRARYWRITER_H

#include "tfm/Program/Program.h"
#include "tfm/common/Manifest.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tfm {

struct LibraryOptions {
  std::string outDir;
  bool verbose = false; // report each step on stderr
  /// Non-empty: a folder of kernel objects shared by every compile. A
  /// kernel found there (same IR, target and compiler) is reused, one
  /// compiled is added, so configs that share kernels compile them once.
  std::string kernelCacheDir;
  /// Identifies the compiler build in the kernel cache's keys.
  std::string compilerId;
  /// Non-empty: also link a standalone executable with this link line (the
  /// runtime's main and libraries, from the tool that composes the halves).
  std::vector<std::string> exeLinkLine;
  /// Only the kernels' objects (obj/<kernel>.o, with a GPU target's PTX or
  /// OpenCL C inside) and Halide's runtime: no driver, no library.
  bool kernelsOnly = false;
  /// Recorded in the manifest: the files a downloaded model came with.
  ModelFiles files;
};


/// contentHash of the lowered IR, the target and the ABI version: what the
/// library, its manifest and the compile cache call it.
std::string buildHash(const Program &program);

/// manifest.json; an error when the IR's config does not parse.
llvm::Expected<std::string> emitManifest(const Program &program, const ModelFiles &files);
std::string emitDriverSource(const Program &program, const std::string &manifest);
/// The name of the library's tfm_model_get under its model's own:
/// "tfm_model_get_<name>".
std::string modelGetName(const Program &program);
std::string emitModelHeader(const Program &program);

/// Does all of the above into options.outDir.
llvm::Error writeLibrary(const Program &program, const LibraryOptions &options);

} // namespace tfm

#endif // TFM_CODEGEN_LIBRARYWRITER_H
