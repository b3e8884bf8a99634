//===- RooflineCache.cpp - This machine's roofline, measured once ---------===//
#include "RooflineCache.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Hash.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/PrivateFiles.h"
#include "tfm/runtime/ModelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>

#include <unistd.h>

namespace json = llvm::json;
using namespace tfm::bench;

namespace {

/// The first "model name" line of /proc/cpuinfo, or "".
std::string cpuModel() {
  auto info = tfm::readBoundedFile("/proc/cpuinfo", 16 << 20, "CPU description");
  if (!info) {
    llvm::consumeError(info.takeError());
    return "";
  }
  llvm::SmallVector<llvm::StringRef> lines;
  (*info)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.starts_with("model name"))
      return line.split(':').second.trim().str();
  return "";
}

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

} // namespace

llvm::Expected<std::string> tfm::bench::rooflineCachePath(int threads) {
  llvm::Expected<std::string> cacheDir = tfm::rt::defaultCacheDir();
  if (!cacheDir)
    return cacheDir.takeError();
  std::string machine = hostName() + "\n" + cpuModel() + "\n" +
                        std::to_string(std::thread::hardware_concurrency());
  llvm::SmallString<256> path(*cacheDir);
  llvm::sys::path::append(path, "roofline",
                          tfm::contentHash(machine).substr(0, 16) + "-threads" +
                              std::to_string(threads) + ".json");
  return std::string(path);
}

std::optional<Roofline> tfm::bench::readCachedRoofline(const std::string &path) {
  if (!llvm::sys::fs::exists(path))
    return std::nullopt;
  auto text = tfm::readBoundedFile(path, 1 << 20, "roofline");
  if (!text) {
    llvm::consumeError(text.takeError());
    return std::nullopt;
  }
  llvm::Expected<json::Value> value = json::parse((*text)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  const json::Object *o = value->getAsObject();
  const json::Array *reads = o ? o->getArray("reads") : nullptr;
  if (!o || !reads || reads->empty())
    return std::nullopt;
  Roofline roof;
  auto number = [&](const char *key) { return o->getNumber(key).value_or(0); };
  roof.threads = int(o->getInteger("threads").value_or(0));
  roof.fmaGflops = number("fma_gflops");
  roof.int8DotGops = number("int8_dot_gops");
  roof.bf16DotGflops = number("bf16_dot_gflops");
  roof.amxInt8Gops = number("amx_int8_gops");
  roof.amxBf16Gflops = number("amx_bf16_gflops");
  roof.vectorIsa = o->getString("vector_isa").value_or("").str();
  roof.cacheBytes = size_t(o->getInteger("cache_bytes").value_or(0));
  for (const json::Value &read : *reads) {
    const json::Object *r = read.getAsObject();
    if (!r || !r->getInteger("bytes") || !r->getNumber("gbs"))
      return std::nullopt;
    roof.reads.push_back({size_t(*r->getInteger("bytes")), *r->getNumber("gbs")});
  }
  if (roof.fmaGflops <= 0 || roof.threads < 1)
    return std::nullopt;
  return roof;
}

llvm::Error tfm::bench::writeCachedRoofline(const std::string &path, const Roofline &roof) {
  std::string dir = llvm::sys::path::parent_path(path).str();
  if (std::error_code ec =
          llvm::sys::fs::create_directories(dir, /*IgnoreExisting=*/true, llvm::sys::fs::owner_all))
    return tfm::failure(dir + ": cannot create: " + ec.message());
  if (llvm::Error e = tfm::checkPrivate(dir, "roofline cache"))
    return e;
  json::Array reads;
  for (const ReadRate &r : roof.reads)
    reads.push_back(json::Object{{"bytes", int64_t(r.bytes)}, {"gbs", r.gbs}});
  json::Object o{{"threads", roof.threads},
                 {"fma_gflops", roof.fmaGflops},
                 {"int8_dot_gops", roof.int8DotGops},
                 {"bf16_dot_gflops", roof.bf16DotGflops},
                 {"amx_int8_gops", roof.amxInt8Gops},
                 {"amx_bf16_gflops", roof.amxBf16Gflops},
                 {"vector_isa", roof.vectorIsa},
                 {"cache_bytes", int64_t(roof.cacheBytes)},
                 {"reads", std::move(reads)}};
  return tfm::writeTextFile(path, llvm::formatv("{0:2}", json::Value(std::move(o))).str() + "\n");
}

llvm::Expected<Roofline> MachineRoofline::before() {
  if (known)
    return *known;
  llvm::Expected<std::string> path = rooflineCachePath(threads);
  if (!path)
    return path.takeError();
  cachePath = *path;
  known = remeasure ? std::nullopt : readCachedRoofline(cachePath);
  if (known) {
    llvm::outs() << "roofline of this machine, measured before (" << cachePath
                 << "; --remeasure measures it again):\n";
  } else {
    llvm::errs() << "tfm-bench: measuring this machine's roofline (" << threads
                 << " threads; once, then kept in " << cachePath << ")\n";
    known = measureRoofline(threads);
    measured = true;
  }
  printRoofline(*known);
  return *known;
}

llvm::Expected<Roofline> MachineRoofline::after() {
  llvm::Expected<Roofline> first = before();
  if (!first || !measured)
    return first;
  known = higherOf(*first, measureRoofline(threads));
  measured = false; // once
  llvm::outs() << llvm::formatv("roofline after the runs: memory {0:f1} GB/s, cache {1:f1} GB/s, "
                                "FMA {2:f1} GFLOP/s (the higher of before and after, kept in {3})\n",
                                known->memoryGBs(), known->cacheGBs(), known->fmaGflops,
                                cachePath);
  if (llvm::Error e = writeCachedRoofline(cachePath, *known))
    return std::move(e);
  return *known;
}

void tfm::bench::printRoofline(const Roofline &roof) {
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("roofline, {0} threads, measured with {1} vectors:\n", roof.threads,
                      roof.vectorIsa);
  os << llvm::formatv("  f32 FMA peak      {0,8:f1} GFLOP/s\n", roof.fmaGflops);
  // The narrower dot products, where this CPU has them: prefill with
  // rounded inputs (tfmc --activations) is held against them.
  for (auto [name, gops] : {std::pair{"int8 vpdpbusd peak", roof.int8DotGops},
                            std::pair{"bf16 vdpbf16ps peak", roof.bf16DotGflops},
                            std::pair{"int8 AMX tile peak", roof.amxInt8Gops},
                            std::pair{"bf16 AMX tile peak", roof.amxBf16Gflops}})
    if (gops > 0)
      os << llvm::formatv("  {0,-19}{1,8:f1} GOP/s\n", name, gops);
  os << "  read bandwidth by working set (GB/s):";
  for (const ReadRate &rate : roof.reads)
    os << llvm::formatv(" {0}M {1:f1}", rate.bytes >> 20, rate.gbs);
  os << llvm::formatv("\n  read from cache   {0,8:f1} GB/s      (working sets up to {1} MiB)\n",
                      roof.cacheGBs(), roof.cacheBytes >> 20);
  os << llvm::formatv("  read from memory  {0,8:f1} GB/s      ({1} MiB)\n", roof.memoryGBs(),
                      roof.reads.back().bytes >> 20);
}
