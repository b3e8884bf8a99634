//===- LibraryWriter.cpp - Program to lib<model>.so -----------------------===//
#include "tfm/Codegen/LibraryWriter.h"

#include "tfm/Kernels/KernelCompiler.h"
#include "tfm/runtime/model_abi.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <thread>

using namespace tfm;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

bool writeFile(const std::string &file, const std::string &text, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  if (ec) {
    error = file + ": cannot write: " + ec.message();
    return false;
  }
  os << text;
  return true;
}

std::string join(const std::string &a, const std::string &b) {
  llvm::SmallString<256> p(a);
  path::append(p, b);
  return std::string(p);
}

/// Runs a tool (the C compiler) and reports its failure with the command.
bool runTool(const std::string &name, std::vector<std::string> args, bool verbose,
             std::string &error) {
  auto program = llvm::sys::findProgramByName(name);
  if (!program) {
    error = "cannot find '" + name + "' on PATH (a C compiler links the generated library)";
    return false;
  }
  std::vector<llvm::StringRef> argv{*program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::string command;
  for (llvm::StringRef a : argv)
    command += a.str() + " ";
  if (verbose)
    llvm::errs() << "tfmc: " << command << "\n";
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*program, argv, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    error = "'" + command + "' failed" + (message.empty() ? "" : ": " + message) +
            " (exit " + std::to_string(rc) + ")";
    return false;
  }
  return true;
}

/// Compiles every kernel on up to two threads: kernels are independent
/// pipelines and Halide compiles them separately.
bool compileKernels(const Program &p, const std::string &target, const std::string &objDir,
                    std::vector<std::string> &objects, bool verbose, std::string &error) {
  objects.clear();
  for (const Kernel &k : p.kernels)
    objects.push_back(join(objDir, k.name + ".o"));
  std::vector<std::string> errors(p.kernels.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < p.kernels.size();) {
      auto start = std::chrono::steady_clock::now();
      compileKernel(p.kernels[i], target, objects[i], errors[i]);
      if (verbose)
        llvm::errs() << llvm::formatv(
            "tfmc: kernel {0} ({1}) in {2:f2} s\n", p.kernels[i].name, p.kernels[i].schedule,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  };
  unsigned threads = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
  for (const std::string &e : errors)
    if (!e.empty()) {
      error = e;
      return false;
    }
  return true;
}

} // namespace

void tfm::assignCacheLayouts(Program &program) {
  for (const EntryPoint *entry : {&program.prefill, &program.decode, &program.score})
    for (const Launch &l : entry->launches)
      for (size_t i = 0; i < l.bindings.size(); ++i)
        if (l.bindings[i].storage == Storage::KCache)
          program.kernels[l.kernel].params[i].isKeyCache = true;
}

LibraryIdentity tfm::identify(const Program &program, const LibraryOptions &options) {
  LibraryIdentity id;
  id.halideTarget = resolveTarget(options.targetName);
  id.configHash = stableHash(program.spec.canonicalJson() + "|" + id.halideTarget + "|" +
                             options.schedule + "|abi" + std::to_string(TFM_ABI_VERSION));
  return id;
}

bool tfm::writeLibrary(Program &program, const LibraryOptions &options, std::string &error) {
  assignCacheLayouts(program);
  LibraryIdentity id = identify(program, options);
  if (id.halideTarget.empty()) {
    error = "unknown target '" + options.targetName + "'";
    return false;
  }
  const std::string &name = program.spec.name;
  std::string objDir = join(options.outDir, "obj");
  if (std::error_code ec = fs::create_directories(objDir)) {
    error = objDir + ": cannot create: " + ec.message();
    return false;
  }

  std::string manifest = emitManifest(program, options, id);
  std::string driver = join(objDir, "driver.c");
  std::string exports = join(objDir, "exports.map");
  if (!writeFile(join(options.outDir, "manifest.json"), manifest, error) ||
      !writeFile(join(options.outDir, name + ".h"), emitModelHeader(program), error) ||
      !writeFile(driver, emitDriverSource(program, options, id, manifest), error) ||
      !writeFile(exports, "{ global: tfm_model_get; local: *; };\n", error))
    return false;

  std::vector<std::string> objects;
  if (!compileKernels(program, id.halideTarget, objDir, objects, options.verbose, error))
    return false;
  std::string runtimeObject = join(objDir, "halide_runtime.o");
  if (!compileKernelRuntime(id.halideTarget, runtimeObject, error))
    return false;
  objects.push_back(runtimeObject);

  std::string driverObject = join(objDir, "driver.o");
  if (!runTool("cc", {"-c", "-O2", "-fPIC", "-fvisibility=hidden", "-I" TFM_HALIDE_INCLUDE_DIR,
                      "-I" + options.outDir, driver, "-o", driverObject},
               options.verbose, error))
    return false;
  objects.insert(objects.begin(), driverObject);

  std::vector<std::string> link{"-shared", "-o", join(options.outDir, "lib" + name + ".so"),
                                "-Wl,--version-script=" + exports};
  link.insert(link.end(), objects.begin(), objects.end());
  for (const char *lib : {"-lpthread", "-ldl", "-lm"})
    link.push_back(lib);
  if (!runTool("cc", link, options.verbose, error))
    return false;

  if (options.emitExe) {
    // The runtime's main with this one model linked in; the link line of the
    // runtime comes from the build (see compiler/lib/Codegen/CMakeLists.txt).
    std::vector<std::string> exe{"-o", join(options.outDir, name)};
    exe.insert(exe.end(), objects.begin(), objects.end());
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(TFM_EXE_LINK_LINE).split(parts, '|', -1, false);
    for (llvm::StringRef part : parts)
      exe.push_back(part.str());
    for (const char *lib : {"-lpthread", "-ldl", "-lm"})
      exe.push_back(lib);
    if (!runTool("c++", exe, options.verbose, error))
      return false;
  }
  return true;
}
