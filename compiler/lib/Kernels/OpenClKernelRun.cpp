//===- OpenClKernelRun.cpp - A GPU kernel run on OpenCL, out of process ---===//
#include "OpenClKernelRun.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

extern char **environ;

using namespace tfm::kernels;

namespace {

/// A temporary folder, removed with its files when it goes.
struct ScratchFolder {
  std::filesystem::path path;
  ScratchFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tfm-opencl-kernel-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a folder like " + pattern);
    path = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

/// Runs `args` (no shell), its output and errors into `log`; throws with
/// the log's start when it fails.
void runProgram(const std::vector<std::string> &args, const std::filesystem::path &log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
      WEXITSTATUS(status) == 0)
    return;
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  throw std::runtime_error(args[0] + (spawned ? " could not start" : " failed") + ": " +
                           text.substr(0, 2000));
}

template <typename T> void writeRaw(std::ofstream &out, T value) {
  out.write(reinterpret_cast<const char *>(&value), sizeof value);
}

/// The call file OpenClKernelRunner.c reads (its header says the layout).
void writeCall(const std::filesystem::path &file, const std::vector<KernelArgument> &arguments) {
  std::ofstream call(file, std::ios::binary);
  writeRaw<int32_t>(call, int32_t(arguments.size()));
  for (const KernelArgument &a : arguments) {
    writeRaw<uint8_t>(call, a.type.code());
    writeRaw<uint8_t>(call, a.type.bits());
    writeRaw<uint8_t>(call, a.isOutput ? 1 : 0);
    writeRaw<int32_t>(call, a.view->dimensions);
    for (int d = 0; d < a.view->dimensions; ++d) {
      writeRaw<int32_t>(call, a.view->dim[d].min);
      writeRaw<int32_t>(call, a.view->dim[d].extent);
      writeRaw<int32_t>(call, a.view->dim[d].stride);
    }
    writeRaw<int64_t>(call, int64_t(a.backingSize));
    writeRaw<int64_t>(call, int64_t(a.view->host - a.backing));
    call.write(reinterpret_cast<const char *>(a.backing), std::streamsize(a.backingSize));
  }
  if (!call)
    throw std::runtime_error("cannot write " + file.string());
}

} // namespace

bool tfm::kernels::openClLoaderPresent() {
  static const bool present = [] {
    void *loader = dlopen("libOpenCL.so", RTLD_LAZY | RTLD_LOCAL);
    if (loader)
      dlclose(loader);
    return loader != nullptr;
  }();
  return present;
}

void tfm::kernels::runOnOpenCl(Halide::Pipeline pipeline,
                               const std::vector<Halide::Argument> &inputs,
                               const Halide::Target &target,
                               const std::vector<KernelArgument> &arguments) {
  ScratchFolder dir;
  std::filesystem::path library = dir.path / "kernel.a", runner = dir.path / "runner";
  pipeline.compile_to_static_library((dir.path / "kernel").string(), inputs, "kernel", target);
  runProgram({"cc", "-O1", "-I" TFM_HALIDE_INCLUDE_DIR, TFM_OPENCL_KERNEL_RUNNER,
              library.string(), "-o", runner.string(), "-ldl", "-lpthread"},
             dir.path / "link.log");
  writeCall(dir.path / "call", arguments);
  runProgram({runner.string(), (dir.path / "call").string(), (dir.path / "out").string()},
             dir.path / "run.log");
  std::ifstream out(dir.path / "out", std::ios::binary);
  for (const KernelArgument &a : arguments)
    if (a.isOutput && !out.read(reinterpret_cast<char *>(a.backing), std::streamsize(a.backingSize)))
      throw std::runtime_error("the runner wrote too little for an output");
}
