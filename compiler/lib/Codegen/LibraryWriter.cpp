//===- LibraryWriter.cpp - Program to lib<model>.so -----------------------===//
#include "tfm/Codegen/LibraryWriter.h"

#include "tfm/Codegen/KernelObject.h"
#include "tfm/Kernels/KernelCompiler.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Hash.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/PrivateFiles.h"
#include "tfm/common/Targets.h"
#include "tfm/common/model_abi.h"

#include "ModelLibSources.inc" // runtime/model-lib/: kModelLibFiles

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

using namespace tfm;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

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
  if (verbose) // one write: the other thread reports too
    llvm::errs() << ("tfmc: " + command + "\n");
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*program, argv, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    error = "'" + command + "' failed" + (message.empty() ? "" : ": " + message) + " (exit " +
            std::to_string(rc) + ")";
    return false;
  }
  return true;
}

/// Links with `driver` and `args` into `output`, written under a temporary
/// name beside it and renamed over it: a failed or killed link leaves the
/// library that was there, never half of one.
bool linkInPlace(const std::string &driver, std::vector<std::string> args,
                 const std::string &output, bool verbose, std::string &error) {
  std::string temporary = output + ".tmp-" + std::to_string(llvm::sys::Process::getProcessId());
  args.insert(args.begin(), {"-o", temporary});
  llvm::sys::RemoveFileOnSignal(temporary);
  bool linked = runTool(driver, args, verbose, error);
  if (linked)
    if (std::error_code ec = fs::rename(temporary, output)) {
      error = output + ": cannot move the link's output into place: " + ec.message();
      linked = false;
    }
  if (!linked)
    fs::remove(temporary);
  llvm::sys::DontRemoveFileOnSignal(temporary);
  return linked;
}

/// One object file of the library and the work that writes it.
struct ObjectJob {
  std::string object;
  std::function<bool(std::string &error)> build;
  std::string cached; // non-empty: the object's copy in the kernel cache
};

/// Copies `object` into the kernel cache as `cached`, through a temporary
/// name, so that a compile running beside this one never reads half a file.
/// A cache that cannot be written costs time, not correctness: no error.
void storeInCache(const std::string &object, const std::string &cached, bool verbose) {
  std::string temporary = cached + ".part" + std::to_string(llvm::sys::Process::getProcessId());
  std::error_code ec = fs::copy_file(object, temporary);
  if (!ec)
    ec = fs::rename(temporary, cached);
  if (ec) {
    fs::remove(temporary);
    if (verbose)
      llvm::errs() << ("tfmc: cannot store " + cached + ": " + ec.message() + "\n");
  }
}

/// Takes the job's object from the kernel cache, or builds it and stores it
/// there. A cached object that is not this user's alone is refused: it
/// would be linked into the library.
bool runJob(const ObjectJob &job, bool verbose, std::string &error) {
  if (!job.cached.empty() && fs::exists(job.cached)) {
    if (llvm::Error e = checkPrivate(job.cached, "cached kernel object")) {
      error = llvm::toString(std::move(e));
      return false;
    }
    if (!fs::copy_file(job.cached, job.object)) {
      if (verbose) // one write: the other thread reports too
        llvm::errs() << ("tfmc: " + path::filename(job.object).str() + " reused from " +
                         job.cached + "\n");
      return true;
    }
  }
  if (!job.build(error))
    return false;
  if (!job.cached.empty())
    storeInCache(job.object, job.cached, verbose);
  return true;
}

/// Runs the jobs on up to two threads, in order: they are independent (the
/// kernels are separate Halide pipelines, the driver and Halide's runtime
/// need no kernel), so the slowest should start first.
bool runJobs(const std::vector<ObjectJob> &jobs, bool verbose, std::string &error) {
  std::vector<std::string> errors(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();)
      runJob(jobs[i], verbose, errors[i]);
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

/// A kernel over many token rows (prefill, score) takes Halide several times
/// longer to compile than a single-row one.
bool isMultiRow(const Kernel &k) {
  for (const KernelParam &param : k.params)
    if (param.tokenRows && !param.shape.empty() && param.shape[0] == kDynamicRows)
      return true;
  return false;
}

/// The kernel cache's name for an object that depends on `key` (with the
/// target and the compiler build): empty when there is no cache.
std::string cachePath(const LibraryOptions &options, const std::string &stem,
                      const std::string &key, const std::string &target) {
  if (options.kernelCacheDir.empty())
    return "";
  return join(options.kernelCacheDir,
              stem + "-" + contentHash(key + "|" + target + "|" + options.compilerId) + ".o");
}

ObjectJob kernelJob(const Kernel &kernel, const Program &program, const std::string &objDir,
                    const LibraryOptions &options) {
  std::string object = join(objDir, kernel.name + ".o");
  bool verbose = options.verbose;
  const std::string &target = program.target;
  // The calls it serves, which its reaches are checked against.
  CallRange range{program.contextLength, program.prefillChunk};
  return {object,
          [&kernel, target, range, object, verbose](std::string &error) {
            auto start = std::chrono::steady_clock::now();
            std::string bitcode = object.substr(0, object.size() - 2) + ".bc";
            bool ok = compileKernel(kernel, target, range, bitcode, error);
            if (ok)
              if (llvm::Error e = compileKernelBitcode(bitcode, target, object)) {
                error = "kernel " + kernel.name + ": " + llvm::toString(std::move(e));
                ok = false;
              }
            fs::remove(bitcode);
            if (verbose) // one write: the other thread reports too
              llvm::errs() << llvm::formatv("tfmc: kernel {0} ({1}) in {2:f2} s\n", kernel.name,
                                            kernel.schedule,
                                            std::chrono::duration<double>(
                                                std::chrono::steady_clock::now() - start)
                                                .count())
                                  .str();
            return ok;
          },
          cachePath(options, kernel.name,
                    kernel.irHash + "|" + std::to_string(range.context) + "x" +
                        std::to_string(range.maxRows),
                    target)};
}

/// Halide's runtime for the target (with its GPU back end's, for a GPU).
ObjectJob runtimeJob(const Program &program, const std::string &objDir,
                     const LibraryOptions &options) {
  std::string object = join(objDir, "halide_runtime.o");
  std::string target = program.target;
  return {object,
          [target, object](std::string &e) { return compileKernelRuntime(target, object, e); },
          cachePath(options, "halide_runtime", "", target)};
}

/// A GPU library's multiply-add probe (tfm/Kernels/KernelCompiler.h).
ObjectJob fmaProbeJob(const Program &program, const std::string &objDir,
                      const LibraryOptions &options) {
  std::string object = join(objDir, std::string(DeviceFmaProbe::kName) + ".o");
  std::string target = program.target;
  return {object,
          [target, object](std::string &error) {
            std::string bitcode = object.substr(0, object.size() - 2) + ".bc";
            bool ok = compileDeviceFmaProbe(target, bitcode, error);
            if (ok)
              if (llvm::Error e = compileKernelBitcode(bitcode, target, object)) {
                error = DeviceFmaProbe::kName + (": " + llvm::toString(std::move(e)));
                ok = false;
              }
            fs::remove(bitcode);
            return ok;
          },
          cachePath(options, DeviceFmaProbe::kName, "", target)};
}

/// Halide's runtime, and on a GPU the multiply-add probe: what a library
/// holds besides its kernels.
void pushLibraryJobs(std::vector<ObjectJob> &jobs, const Program &program,
                     const std::string &objDir, const LibraryOptions &options) {
  if (targetDevice(program.target) != TargetDevice::Cpu)
    jobs.push_back(fmaProbeJob(program, objDir, options));
  jobs.push_back(runtimeJob(program, objDir, options));
}

} // namespace

std::string tfm::buildHash(const Program &program) {
  return contentHash(program.irHash + "|" + program.target + "|abi" +
                     std::to_string(TFM_ABI_VERSION));
}

llvm::Error tfm::writeLibrary(const Program &program, const LibraryOptions &requested) {
  if (targetArchitecture(program.target) != hostArchitecture())
    return failure(
        "target " + program.target + ": its architecture is " +
        targetArchitecture(program.target).str() + ", this machine's is " + hostArchitecture() +
        "; tfmc links a library with this machine's C compiler, so it builds for " +
        hostArchitecture() + " targets only (write the IR with --emit mlir and compile it on a " +
        "machine of the target's architecture)");
  std::string error;
  auto failed = [&] { return failure(error); };
  const std::string &name = program.name;
  // A kernel cache that cannot be created costs time, not correctness; one
  // that is not this user's alone is refused: its objects would be linked in.
  LibraryOptions options = requested;
  if (!options.kernelCacheDir.empty()) {
    if (std::error_code ec = fs::create_directories(options.kernelCacheDir,
                                                    /*IgnoreExisting=*/true, fs::owner_all)) {
      if (options.verbose)
        llvm::errs() << ("tfmc: no kernel cache: " + options.kernelCacheDir + ": " +
                         ec.message() + "\n");
      options.kernelCacheDir.clear();
    } else if (llvm::Error e = checkPrivate(options.kernelCacheDir, "kernel cache")) {
      return e;
    }
  }
  std::string objDir = join(options.outDir, "obj");
  if (std::error_code ec = fs::create_directories(objDir))
    return failure(objDir + ": cannot create: " + ec.message());

  if (options.kernelsOnly) {
    std::vector<ObjectJob> jobs;
    for (const Kernel &k : program.kernels)
      jobs.push_back(kernelJob(k, program, objDir, options));
    pushLibraryJobs(jobs, program, objDir, options);
    return runJobs(jobs, options.verbose, error) ? llvm::Error::success() : failed();
  }
  llvm::Expected<std::string> emitted = emitManifest(program, options.files);
  if (!emitted)
    return emitted.takeError();
  const std::string &manifest = *emitted;
  std::string driver = join(objDir, "driver.c");
  std::string exports = join(objDir, "exports.map");
  const std::pair<std::string, std::string> files[] = {
      {join(options.outDir, "manifest.json"), manifest},
      {join(options.outDir, name + ".h"), emitModelHeader(program)},
      {driver, emitDriverSource(program, manifest)},
      {exports, "{ global: tfm_model_get; " + modelGetName(program) + "; local: *; };\n"}};
  for (const auto &[file, text] : files)
    if (llvm::Error e = writeTextFile(file, text))
      return e;
  // runtime/model-lib/: the parallel loops' workers, and a GPU library's
  // memory on its device.
  std::vector<std::string> modelLibSources;
  for (const ModelLibFile &f : kModelLibFiles) {
    if (f.gpuOnly && targetDevice(program.target) == TargetDevice::Cpu)
      continue;
    std::string path = join(objDir, f.name);
    if (llvm::Error e = writeTextFile(path, f.text))
      return e;
    if (llvm::StringRef(f.name).ends_with(".c"))
      modelLibSources.push_back(path);
  }

  // Slowest first: the driver (a C compile of every launch), the multi-row
  // kernels, the single-row ones, then the parallel loops' workers
  // (runtime/model-lib/parallel_for.c) and Halide's runtime. The driver is glue
  // (buffer descriptors and calls): -O1 compiles GPT-2 Small's in 0.7 s
  // where -O2 takes 2 s, and decode does not tell them apart.
  std::vector<ObjectJob> jobs;
  std::string driverObject = join(objDir, "driver.o");
  jobs.push_back({driverObject, [&](std::string &e) {
                    return runTool("cc",
                                   {"-c", "-O1", "-fPIC", "-fvisibility=hidden",
                                    "-I" TFM_HALIDE_INCLUDE_DIR, "-iquote", options.outDir,
                                    "-iquote", objDir, driver, "-o", driverObject},
                                   options.verbose, e);
                  }});
  for (bool multiRow : {true, false})
    for (const Kernel &k : program.kernels)
      if (isMultiRow(k) == multiRow)
        jobs.push_back(kernelJob(k, program, objDir, options));
  for (const std::string &source : modelLibSources) {
    std::string object = source.substr(0, source.size() - 2) + ".o";
    jobs.push_back({object, [&, source, object](std::string &e) {
                      return runTool("cc",
                                     {"-c", "-O2", "-fPIC", "-fvisibility=hidden",
                                      "-I" TFM_HALIDE_INCLUDE_DIR, source, "-o", object},
                                     options.verbose, e);
                    }});
  }
  pushLibraryJobs(jobs, program, objDir, options);
  if (!runJobs(jobs, options.verbose, error))
    return failed();
  std::vector<std::string> objects;
  for (const ObjectJob &job : jobs)
    objects.push_back(job.object);

  // -Xlinker, not -Wl: -Wl splits its argument at commas, and a comma in
  // the output folder's path (tfmc -o "model-a=plain,b=plain") then
  // reached the linker as two arguments.
  std::vector<std::string> link{"-shared", "-Xlinker", "--version-script=" + exports};
  link.insert(link.end(), objects.begin(), objects.end());
  for (const char *lib : {"-lpthread", "-ldl", "-lm"})
    link.push_back(lib);
  if (!linkInPlace("cc", link, join(options.outDir, "lib" + name + ".so"), options.verbose,
                   error))
    return failed();

  if (!options.exeLinkLine.empty()) {
    // The runtime's main with this one model linked in.
    std::vector<std::string> exe(objects);
    exe.insert(exe.end(), options.exeLinkLine.begin(), options.exeLinkLine.end());
    for (const char *lib : {"-lpthread", "-ldl", "-lm"})
      exe.push_back(lib);
    if (!linkInPlace("c++", exe, join(options.outDir, name), options.verbose, error))
      return failed();
  }
  return llvm::Error::success();
}
