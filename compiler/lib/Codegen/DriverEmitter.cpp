//===- DriverEmitter.cpp - The call sequence of each entry point, as C ---===//
//
// What is left of a model once its kernels are outlined is a straight list of
// kernel launches. This emits it as C: for every launch, one Halide buffer
// per parameter, pointing into the weights, the arena (at the offset the
// memory plan chose) or a cache buffer (at its planned offset, in its
// layout, the window of positions the call reads or writes). No model math
// and no decision is made here: only addresses and extents from the IR.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/LibraryWriter.h"

#include "tfm/Kernels/KernelCompiler.h"
#include "tfm/Program/CallWindow.h"
#include "tfm/common/Targets.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace tfm;

namespace {

/// `text` as a C string literal. Every byte that is not printable ASCII is
/// an octal escape of three digits (a digit after it cannot extend it), and
/// '?' is escaped against trigraphs: whatever a name or the manifest holds,
/// the literal ends where it should. Lines break after each newline, for
/// the manifest's sake.
std::string cString(const std::string &text) {
  std::string out = "\"";
  char octal[5];
  for (unsigned char c : text) {
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n\"\n    \"";
    } else if (c < 0x20 || c >= 0x7f) {
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// The host memory a binding's storage starts at, as C: the weight's
/// pointer, the call's tokens or logits, the arena or the KV block.
std::string storageHost(const Binding &b) {
  switch (b.storage) {
  case Storage::Weight:
    return "(const uint8_t *)w[" + std::to_string(b.index) + "]";
  case Storage::Tokens:
    return "(const uint8_t *)tokens";
  case Storage::Logits:
    return "(uint8_t *)logits";
  case Storage::Arena:
    return "arena";
  case Storage::Cache:
    return "kv";
  }
  return "arena";
}

/// A window bound (tfm/Program/CallWindow.h) as C over the call's `pos`
/// and `T`: "0", "pos", "T", "pos + T - 1", ...
std::string cBound(const CallAffine &a) {
  std::string text;
  auto term = [&](int64_t factor, const char *name) {
    if (factor == 0)
      return;
    if (!text.empty())
      text += " + ";
    text += (factor == 1 ? "" : std::to_string(factor) + " * ") + name;
  };
  term(a.perPosition, "pos");
  term(a.perRow, "T");
  if (text.empty())
    return std::to_string(a.constant);
  if (a.constant != 0)
    text += (a.constant < 0 ? " - " : " + ") + std::to_string(std::abs(a.constant));
  return text;
}

/// The bytes between one position's row of a cache parameter and the
/// next's: a row's, or an element's in a transposed cache.
int64_t cachePositionBytes(const KernelParam &param) {
  int64_t elementBytes = dtypeBytes(param.type.plain);
  if (param.cacheLayout == CacheLayout::Transposed)
    return elementBytes;
  return elementBytes * param.type.storedRowLength(param.shape.back());
}

/// The position of a cache's first row, as C: 0, or a sliding cache's,
/// which the KV block holds at its base (slide_caches keeps it).
std::string cacheFirstRow(const CacheBuffer &cache) {
  return cache.window > 0 ? "first_row(kv, " + std::to_string(cache.baseOffset) + ")" : "0";
}

/// Where a binding's buffer starts in its storage, in bytes, as C over the
/// call's `pos`: the arena offset the memory plan chose, a cache's offset in
/// the KV block (and, for the window a call writes, its first position's),
/// nothing for a weight, the tokens or the logits.
std::string storageOffset(const Program &p, const KernelParam &param, const Binding &b) {
  switch (b.storage) {
  case Storage::Weight:
  case Storage::Tokens:
  case Storage::Logits: // the caller's buffer holds the call's rows from its start
    return "0";
  case Storage::Arena:
    return std::to_string(b.offset);
  case Storage::Cache: {
    const CacheBuffer &cache = p.caches[b.index];
    std::string offset = std::to_string(cache.offset);
    if (!param.isOutput) // a read window starts at the cache's first row
      return offset;
    std::string first = cacheFirstRow(cache);
    return offset + " + " + std::to_string(cachePositionBytes(param)) + " * ((int64_t)pos" +
           (first == "0" ? ")" : " - " + first + ")");
  }
  }
  return "0";
}

/// The device region a binding's storage lives in, on a GPU target
/// (runtime/model-lib/device_memory.h), as C over the call's sequence `s`.
std::string deviceRegion(const Binding &b) {
  switch (b.storage) {
  case Storage::Weight:
    return "tfm_device_weight(" + std::to_string(b.index) + ")";
  case Storage::Tokens:
    return "&s->tokens.buffer";
  case Storage::Logits:
    return "&s->logits.buffer";
  case Storage::Arena:
    return "&s->arena.buffer";
  case Storage::Cache:
    return "&s->kv.buffer";
  }
  return "&s->arena.buffer";
}

/// The C expression for one launch argument: a buffer over the storage the
/// binding names, shaped as the kernel parameter expects, over the rows
/// the call binds (rowWindow), its host pointer at storageOffset. `T` and
/// `pos` are the rows and first position of the call.
std::string bufferFor(const Program &p, const KernelParam &param, const Binding &b, int slot) {
  std::ostringstream e;
  int64_t cols = param.type.storedRowLength(param.shape.back());
  // As tfm::kernels::storedElementType: q8_0's blocks are signed bytes, and
  // GPU kernels hold f16 and bf16 as their bits (SixteenBitFloats).
  bool sixteenAsBits = targetDevice(p.target) != TargetDevice::Cpu;
  std::string type = param.type.block ? (*param.type.block == BlockFormat::Q8_0 ? "I8" : "U8")
                     : param.type.plain == DType::I32                         ? "I32"
                     : sixteenAsBits && (param.type.plain == DType::F16 ||
                                         param.type.plain == DType::BF16)     ? "U16"
                     : param.type.plain == DType::F16                         ? "F16"
                     : param.type.plain == DType::BF16                        ? "BF16"
                                                                              : "F32";
  RowWindow window = rowWindow(param);
  std::string min = cBound(window.min), extent = cBound(window.extent);
  if (b.storage == Storage::Cache && !param.isOutput && p.caches[b.index].source) {
    // The encoded source's rows, which encode recorded.
    min = "0";
    extent = "source_rows(kv, " + std::to_string(p.caches[b.index].baseOffset) + ")";
  } else if (b.storage == Storage::Cache && !param.isOutput && p.caches[b.index].window > 0) {
    // A sliding cache's rows from its first to the call's last: they begin
    // at or before the window rowWindow gives, which its readers keep to.
    min = cacheFirstRow(p.caches[b.index]);
    extent = "pos + T - " + min;
  }
  std::string host = storageHost(b) + " + " + storageOffset(p, param, b);
  if (param.shape.size() == 1) {
    e << "view1(&b[" << slot << "], d[" << slot << "], " << host << ", " << type << ", " << min
      << ", " << extent << ")";
    return e.str();
  }
  // A transposed cache holds a column's positions contiguously.
  bool transposed = b.storage == Storage::Cache && param.cacheLayout == CacheLayout::Transposed;
  int64_t stride0 = transposed ? p.caches[b.index].rows : 1, stride1 = transposed ? 1 : cols;
  e << "view2(&b[" << slot << "], d[" << slot << "], " << host << ", " << type << ", " << cols
    << ", " << stride0 << ", " << min << ", " << extent << ", " << stride1 << ")";
  return e.str();
}

/// The most launches one C function of the driver holds. The C compiler's
/// time grows faster than a function's size (2000 launches in one took 27 s
/// at -O1, against 3 s in parts): an entry of more launches runs them from
/// functions of this many each, so that the driver compiles in time linear
/// in the launches.
constexpr size_t kLaunchesPerFunction = 64;

/// The parameters of the functions running an entry's launches: the
/// entry's, and the sequence's device memory on a GPU target (null on a CPU).
constexpr const char kLaunchParams[] =
    "(const void *const *w, uint8_t *kv, uint8_t *arena, const int32_t *tokens,\n"
    "    int32_t T, int32_t pos, float *logits, struct tfm_device_sequence *s)";

/// One launch on the CPU: the kernel called on its buffers.
void emitCpuLaunch(std::ostringstream &c, const Program &p, const Launch &l) {
  const Kernel &k = p.kernels[l.kernel];
  c << "  rc = " << k.name << "(";
  int slot = 0;
  bool first = true;
  // Halide's calling convention: inputs in order, then outputs in order.
  for (bool outputs : {false, true})
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (k.params[i].isOutput != outputs)
        continue;
      c << (first ? "\n      " : ",\n      ") << bufferFor(p, k.params[i], l.bindings[i], slot++);
      first = false;
    }
  c << ");\n  if (rc) return rc;\n";
}

/// Whether a kernel parameter bound to `b` is cache rows the kernel writes.
bool writesCache(const KernelParam &param, const Binding &b) {
  return param.isOutput && b.storage == Storage::Cache;
}

/// One launch on a GPU: each buffer given its region's device memory (the
/// cache rows it writes through tfm_device_cache_write_view, each kernel's
/// in a staging slot of their own where they cannot be in place), the
/// kernel called, staged rows copied into the cache, the logits it writes
/// brought back to the caller, the device views released.
void emitGpuLaunch(std::ostringstream &c, const Program &p, const Launch &l) {
  const Kernel &k = p.kernels[l.kernel];
  std::vector<int> logitsSlots;
  std::vector<std::pair<int, std::string>> cacheWrites; // slot, offset
  int slot = 0;
  for (bool outputs : {false, true})
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam &param = k.params[i];
      if (param.isOutput != outputs)
        continue;
      const Binding &b = l.bindings[i];
      std::string offset = storageOffset(p, param, b);
      if (writesCache(param, b)) {
        c << "  rc = tfm_device_cache_write_view(&device_model, s, "
          << bufferFor(p, param, b, slot) << ",\n      " << offset << ", "
          << cacheWrites.size() << ");\n";
        cacheWrites.emplace_back(slot, offset);
      } else {
        c << "  rc = tfm_device_view(" << bufferFor(p, param, b, slot) << ",\n      "
          << deviceRegion(b) << ", " << offset << ");\n";
      }
      c << "  if (rc) { tfm_device_release_views(b, " << slot << "); return rc; }\n";
      if (b.storage == Storage::Logits)
        logitsSlots.push_back(slot);
      ++slot;
    }
  c << "  rc = " << k.name << "(";
  for (int i = 0; i < slot; ++i)
    c << (i ? ", " : "") << "&b[" << i << "]";
  c << ");\n";
  for (const auto &[written, offset] : cacheWrites)
    c << "  if (!rc) rc = tfm_device_cache_write_done(&device_model, s, &b[" << written << "], "
      << offset << ");\n";
  for (int logits : logitsSlots)
    c << "  if (!rc) rc = halide_copy_to_host(NULL, &b[" << logits << "]);\n";
  c << "  tfm_device_release_views(b, " << slot << ");\n  if (rc) return rc;\n";
}

/// One C function running `launches` in order: `name`, with kLaunchParams.
void emitLaunches(std::ostringstream &c, const Program &p, const std::string &name,
                  llvm::ArrayRef<Launch> launches) {
  size_t maxParams = 1;
  for (const Launch &l : launches)
    maxParams = std::max(maxParams, l.bindings.size());
  c << "static int " << name << kLaunchParams << " {\n"
    << "  halide_buffer_t b[" << maxParams << "];\n"
    << "  halide_dimension_t d[" << maxParams << "][2];\n"
    << "  int rc;\n";
  bool gpu = targetDevice(p.target) != TargetDevice::Cpu;
  if (!gpu)
    c << "  (void)s;\n";
  for (const Launch &l : launches) {
    if (gpu)
      emitGpuLaunch(c, p, l);
    else
      emitCpuLaunch(c, p, l);
  }
  c << "  return 0;\n}\n\n";
}

/// Whether the program has an encode entry (an encoder, an
/// encoder-decoder), and a decoder's prefill, decode and score.
bool hasEncode(const Program &p) { return p.architecture != Architecture::Decoder; }
bool hasDecoder(const Program &p) { return p.architecture != Architecture::Encoder; }

/// An encoder-decoder's first source cache, or none.
const CacheBuffer *sourceCache(const Program &p) {
  for (const CacheBuffer &cache : p.caches)
    if (cache.source)
      return &cache;
  return nullptr;
}

/// How the driver reads and records a source cache's rows: an int64 in the
/// KV block, at the cache's base (zeroed with the block: none yet).
void emitSourceRows(std::ostringstream &c) {
  c << R"C(static int64_t source_rows(const uint8_t *kv, int64_t base) {
  int64_t rows;
  memcpy(&rows, kv + base, sizeof rows);
  return rows;
}

static void set_source_rows(uint8_t *kv, int64_t base, int64_t rows) {
  memcpy(kv + base, &rows, sizeof rows);
}

static void record_error(void *user_context, const char *message);

)C";
}

bool hasSlidingCaches(const Program &p) {
  return std::any_of(p.caches.begin(), p.caches.end(),
                     [](const CacheBuffer &cache) { return cache.window > 0; });
}

/// slide_caches, which runs before each call's launches when a cache
/// slides (tfm.cache_decl's window; only on a CPU target): it keeps each
/// sliding cache's first row at or before the window of the call's first
/// row, and the call's rows inside the buffer, moving the rows still needed
/// to the front when the call would pass its end. A sliding cache's rows
/// are `lanes` runs (one, or a transposed cache's columns) of
/// `position_bytes` per position.
void emitSlidingCaches(std::ostringstream &c, const Program &p) {
  c << "struct sliding_cache {\n"
    << "  int64_t offset, base, rows, window, position_bytes, lanes, lane_bytes;\n};\n\n"
    << "static const struct sliding_cache sliding_caches[] = {\n";
  for (const CacheBuffer &cache : p.caches) {
    if (cache.window == 0)
      continue;
    int64_t elementBytes = dtypeBytes(cache.type);
    bool transposed = cache.layout == CacheLayout::Transposed;
    c << "    {" << cache.offset << ", " << cache.baseOffset << ", " << cache.rows << ", "
      << cache.window << ", " << (transposed ? elementBytes : elementBytes * cache.cols) << ", "
      << (transposed ? cache.cols : 1) << ", " << (transposed ? elementBytes * cache.rows : 0)
      << "},\n";
  }
  c << R"C(};

static int32_t first_row(const uint8_t *kv, int64_t base) {
  int64_t first;
  memcpy(&first, kv + base, sizeof first);
  return (int32_t)first;
}

static void record_error(void *user_context, const char *message);

static int slide_caches(uint8_t *kv, int32_t T, int32_t pos) {
  for (size_t i = 0; i < sizeof sliding_caches / sizeof sliding_caches[0]; ++i) {
    const struct sliding_cache *c = &sliding_caches[i];
    /* Position 0 starts a sequence; the block starts zeroed. */
    int64_t first = pos == 0 ? 0 : first_row(kv, c->base);
    int64_t needed = pos - c->window + 1 > 0 ? pos - c->window + 1 : 0;
    if (needed < first) {
      char message[256];
      snprintf(message, sizeof message,
               "a call at position %d needs cache rows from position %lld, but the sliding "
               "window caches hold positions from %lld on: a sequence goes back no further "
               "than its window (or starts again at position 0)",
               (int)pos, (long long)needed, (long long)first);
      record_error(NULL, message);
      return TFM_ERR_CONTEXT;
    }
    if (pos + T > first + c->rows) {
      /* The rows held that a window still needs: from `needed` to the
       * call's position, or to the buffer's end after a jump past it. */
      int64_t held = pos < first + c->rows ? pos : first + c->rows;
      for (int64_t lane = 0; held > needed && lane < c->lanes; ++lane) {
        uint8_t *rows = kv + c->offset + lane * c->lane_bytes;
        memmove(rows, rows + (needed - first) * c->position_bytes,
                (size_t)((held - needed) * c->position_bytes));
      }
      first = needed;
    }
    memcpy(kv + c->base, &first, sizeof first);
  }
  return 0;
}

)C";
}

/// run_<entry>: the entry's launches, in parts of kLaunchesPerFunction, on
/// a GPU after the call's memory is on the device, after slide_caches where
/// caches slide.
void emitEntry(std::ostringstream &c, const Program &p, const EntryPoint &entry) {
  std::string name = std::string("run_") + entryName(entry.kind);
  llvm::ArrayRef<Launch> launches = entry.launches;
  std::vector<std::string> parts;
  for (size_t first = 0; first < launches.size(); first += kLaunchesPerFunction) {
    parts.push_back(name + "_" + std::to_string(parts.size()));
    emitLaunches(c, p, parts.back(),
                 launches.slice(first, std::min(kLaunchesPerFunction, launches.size() - first)));
  }
  c << "static int " << name
    << "(const void *const *w, uint8_t *kv, uint8_t *arena, const int32_t *tokens,\n"
    << "    int32_t T, int32_t pos, float *logits) {\n"
    << "  struct tfm_device_sequence *s = NULL;\n"
    << "  int rc;\n";
  if (targetDevice(p.target) != TargetDevice::Cpu)
    c << "  rc = tfm_device_enter(&device_model, w, kv, tokens, T, &s);\n  if (rc) return rc;\n";
  if (hasSlidingCaches(p))
    c << "  rc = slide_caches(kv, T, pos);\n  if (rc) return rc;\n";
  const CacheBuffer *source = sourceCache(p);
  // The rows encode recorded lie in the caller's KV block: read as untrusted,
  // none (no encode yet) and more than the buffer holds are refused.
  if (source && entry.kind != EntryKind::Encode)
    c << "  if (source_rows(kv, " << source->baseOffset << ") <= 0 || source_rows(kv, "
      << source->baseOffset << ") > " << source->rows << ") {\n"
      << "    record_error(NULL, \"no source is encoded (or the KV block's record of it is "
         "not one encode wrote): call encode first\");\n"
      << "    return TFM_ERR_CONTEXT;\n  }\n";
  for (const std::string &part : parts)
    c << "  rc = " << part << "(w, kv, arena, tokens, T, pos, logits, s);\n  if (rc) return rc;\n";
  if (source && entry.kind == EntryKind::Encode)
    for (const CacheBuffer &cache : p.caches)
      if (cache.source)
        c << "  set_source_rows(kv, " << cache.baseOffset << ", T);\n";
  c << "  return 0;\n}\n\n";
}

/// The C of a decoder's entries: prefill and score in chunks, decode.
constexpr const char kDecoderEntries[] = R"C(
/* Runs the tokens through `run` in chunks of at most CHUNK. Each chunk's
 * logits go `logits_per_token` floats per token further into the caller's
 * buffer: 0 when only the last token's logits are wanted (the last chunk's
 * overwrite the others), VOCAB when every token's are. A chunk of one token
 * runs the decode kernels: the same computation, where the multi-row
 * kernels would fill whole tiles of rows for it. */
static int chunked(run_fn run, const void *const *w, void *kv, void *arena,
                   const int32_t *tokens, int32_t n, int32_t pos, float *logits,
                   int64_t logits_per_token) {
  if (n <= 0 || pos < 0 || pos > CONTEXT - n)
    return TFM_ERR_CONTEXT;
  if (enter_call())
    return TFM_ERR_CPU;
  fp_mode caller = flush_subnormals();
  int rc = 0;
  for (int32_t done = 0; done < n && !rc; done += CHUNK) {
    int32_t T = n - done < CHUNK ? n - done : CHUNK;
    rc = (T == 1 ? run_decode : run)(w, (uint8_t *)kv, (uint8_t *)arena, tokens + done, T,
                                     pos + done, logits + done * logits_per_token);
  }
  restore_fp_mode(caller);
  return rc;
}

static int prefill(const void *const *w, void *kv, void *arena, const int32_t *tokens,
                   int32_t n, int32_t pos, float *logits) {
  return chunked(run_prefill, w, kv, arena, tokens, n, pos, logits, 0);
}

static int score(const void *const *w, void *kv, void *arena, const int32_t *tokens,
                 int32_t n, int32_t pos, float *logits) {
  return chunked(run_score, w, kv, arena, tokens, n, pos, logits, VOCAB);
}

static int decode(const void *const *w, void *kv, void *arena, int32_t token, int32_t pos,
                  float *logits) {
  if (pos < 0 || pos >= CONTEXT)
    return TFM_ERR_CONTEXT;
  if (enter_call())
    return TFM_ERR_CPU;
  fp_mode caller = flush_subnormals();
  int rc = run_decode(w, (uint8_t *)kv, (uint8_t *)arena, &token, 1, pos, logits);
  restore_fp_mode(caller);
  return rc;
}

)C";

/// The C of an encoder's entry.
constexpr const char kEncoderEntries[] = R"C(
/* The whole text in one call, from position 0: every token attends to every
 * other, so no chunk could run before the last one's keys are stored. */
static int encode(const void *const *w, void *kv, void *arena, const int32_t *tokens,
                  int32_t n, float *hidden) {
  if (n <= 0 || n > CHUNK)
    return TFM_ERR_CONTEXT;
  if (enter_call())
    return TFM_ERR_CPU;
  fp_mode caller = flush_subnormals();
  int rc = run_encode(w, (uint8_t *)kv, (uint8_t *)arena, tokens, n, 0, hidden);
  restore_fp_mode(caller);
  return rc;
}

)C";

/// The bytes of the caller's output buffer of one call: the most rows an
/// entry returns, each of its output's width.
int64_t outputBytes(const Program &p) {
  int64_t bytes = 0;
  for (EntryKind kind : entryKindsOf(p.architecture))
    bytes = std::max(bytes, std::max(p.prefillChunk, int64_t(1)) * p.outputWidth(kind) * 4);
  return bytes;
}

/// The staging slots of a GPU library (device_memory.h): as many as a
/// kernel writes caches, each the rows of a call in the widest cache.
struct CacheStaging {
  int64_t slotBytes = 0;
  int slots = 0;
};

CacheStaging cacheStaging(const Program &p, int64_t viewAlignment) {
  CacheStaging staging;
  for (const Kernel &k : p.kernels) {
    int writes = 0;
    for (const KernelParam &param : k.params)
      if (param.isOutput && param.isCache) {
        ++writes;
        staging.slotBytes = std::max(
            staging.slotBytes, std::max(p.prefillChunk, int64_t(1)) * cachePositionBytes(param));
      }
    staging.slots = std::max(staging.slots, writes);
  }
  staging.slotBytes = (staging.slotBytes + viewAlignment - 1) / viewAlignment * viewAlignment;
  return staging;
}

/// A GPU target's device (runtime/model-lib/device_memory.h): its runtime's
/// header and the sizes of the memory the model keeps there.
void emitDeviceModel(std::ostringstream &c, const Program &p, int64_t arenaBytes) {
  TargetDevice device = targetDevice(p.target);
  bool cuda = device == TargetDevice::Cuda;
  int64_t viewAlignment = cuda ? 1 : kOpenClSubBufferAlignment;
  CacheStaging staging = cacheStaging(p, viewAlignment);
  c << "#include \"device_memory.h\"\n"
    << (cuda ? "#include \"HalideRuntimeCuda.h\"\n" : "#include \"HalideRuntimeOpenCL.h\"\n")
    << "\nstatic const uint64_t weight_bytes[] = {";
  for (size_t i = 0; i < p.weights.size(); ++i) {
    const WeightInfo &w = p.weights[i];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < w.shape.size(); ++d)
      rows *= w.shape[d];
    c << (i % 8 ? " " : "\n    ") << rows * w.type.bytes(w.shape.back()) << "ull,";
  }
  c << "\n    0};\n\n"
    << "static const tfm_device_model device_model = {\n"
    << "    " << (cuda ? "halide_cuda_device_interface" : "halide_opencl_device_interface")
    << ", " << p.weights.size() << ", weight_bytes, " << p.kvCacheBytes << "ull, " << arenaBytes
    << "ull,\n    " << p.prefillChunk * 4 << "ull, " << outputBytes(p) << "ull, " << viewAlignment
    << "ull, " << staging.slotBytes << "ull, " << staging.slots << "};\n\n";
}

/// What the library checks this CPU for before its first call
/// (runtime/model-lib/cpu_check.h): its target's features in Halide's bits,
/// and whether its kernels use AMX tiles.
void emitCpuTarget(std::ostringstream &c, const Program &p) {
  std::vector<uint64_t> words = targetFeatureWords(p.target);
  c << "static const uint64_t target_features[] = {";
  for (size_t i = 0; i < words.size(); ++i)
    c << (i ? ", " : "") << words[i] << "ull";
  bool amx = targetHasFeature(p.target, "amx_int8") || targetHasFeature(p.target, "amx_bf16");
  c << "};\nstatic const tfm_cpu_target cpu_target = {" << cString(p.target) << ", "
    << words.size() << ", target_features, " << amx << "};\n\n";
}

} // namespace

std::string tfm::modelGetName(const Program &program) {
  return "tfm_model_get_" + program.name;
}

std::string tfm::emitDriverSource(const Program &p, const std::string &manifest) {
  std::ostringstream c;
  c << "/* Generated by tfmc for " << p.name << " (target " << p.target
    << "). The call sequence of each entry point; do not edit. */\n"
    << "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n#include \"HalideRuntime.h\"\n"
    << "#include \"parallel_for.h\"\n#include \"cpu_check.h\"\n"
    << "#include \"" << p.name << ".h\"\n\n"
    << "/* A sequence's memory on a GPU (device_memory.h); none on a CPU. */\n"
    << "struct tfm_device_sequence;\n\n";

  for (const Kernel &k : p.kernels) {
    c << "/* schedule " << k.schedule << " */\n";
    c << "int " << k.name << "(";
    for (size_t i = 0; i < k.params.size(); ++i)
      c << (i ? ", " : "") << "halide_buffer_t *";
    c << ");\n";
  }
  c << R"C(
static const struct halide_type_t F32 = {halide_type_float, 32, 1};
static const struct halide_type_t I32 = {halide_type_int, 32, 1};
static const struct halide_type_t F16 = {halide_type_float, 16, 1};
static const struct halide_type_t BF16 = {halide_type_bfloat, 16, 1};
static const struct halide_type_t U16 = {halide_type_uint, 16, 1};
static const struct halide_type_t U8 = {halide_type_uint, 8, 1};
static const struct halide_type_t I8 = {halide_type_int, 8, 1};

static halide_buffer_t *view1(halide_buffer_t *b, halide_dimension_t *d, const void *host,
                              struct halide_type_t t, int32_t min0, int32_t ext0) {
  memset(b, 0, sizeof *b);
  memset(d, 0, sizeof *d);
  d[0].min = min0; d[0].extent = ext0; d[0].stride = 1;
  b->host = (uint8_t *)host; b->type = t; b->dimensions = 1; b->dim = d;
  return b;
}

static halide_buffer_t *view2(halide_buffer_t *b, halide_dimension_t *d, const void *host,
                              struct halide_type_t t, int32_t cols, int32_t stride0,
                              int32_t min1, int32_t ext1, int32_t stride1) {
  memset(b, 0, sizeof *b);
  memset(d, 0, 2 * sizeof *d);
  d[0].min = 0; d[0].extent = cols; d[0].stride = stride0;
  d[1].min = min1; d[1].extent = ext1; d[1].stride = stride1;
  b->host = (uint8_t *)host; b->type = t; b->dimensions = 2; b->dim = d;
  return b;
}

)C";
  // Halide's profiler (tfmc --profile) prints its report at exit through
  // halide_print, to stdout unless told otherwise: keep it apart from the
  // generated text.
  bool profiled = targetHasFeature(p.target, "profile");
  std::vector<EntryKind> entries = entryKindsOf(p.architecture);
  int64_t arena = 0;
  for (EntryKind kind : entries)
    arena = std::max(arena, p.entry(kind).arenaBytes);
  bool gpu = targetDevice(p.target) != TargetDevice::Cpu;
  if (gpu)
    emitDeviceModel(c, p, arena);
  if (hasSlidingCaches(p))
    emitSlidingCaches(c, p);
  if (sourceCache(p))
    emitSourceRows(c);
  if (profiled)
    c << "#include <unistd.h>\n"
      << "static void print_to_stderr(void *user_context, const char *text) {\n"
      << "  (void)user_context;\n  ssize_t ignored = write(2, text, strlen(text));\n"
      << "  (void)ignored;\n}\n\n";
  for (EntryKind kind : entries)
    emitEntry(c, p, p.entry(kind));

  emitCpuTarget(c, p);
  c << "#define CONTEXT " << p.contextLength << "\n#define CHUNK " << p.prefillChunk
    << "\n#define VOCAB " << p.vocabSize << "\n#define HIDDEN " << p.hiddenSize << "\n\n"
    << R"C(typedef int (*run_fn)(const void *const *, uint8_t *, uint8_t *, const int32_t *, int32_t,
                      int32_t, float *);

/* The kernels run with subnormal floats flushed to zero, and the caller's
 * mode is restored on return. On x86 an instruction with a subnormal operand
 * or result takes a microcode assist of a hundred cycles or more: Llama 2 7B
 * q8_0 with random weights took 18 s over a 4-token prefill with them and
 * 2.8 s without. Halide's worker threads start inside the first call and
 * keep the mode they start with. */
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
typedef unsigned int fp_mode;
static fp_mode flush_subnormals(void) {
  fp_mode caller = _mm_getcsr();
  _mm_setcsr(caller | 0x8040); /* FTZ, DAZ */
  return caller;
}
static void restore_fp_mode(fp_mode caller) { _mm_setcsr(caller); }
#elif defined(__aarch64__)
typedef uint64_t fp_mode;
static fp_mode flush_subnormals(void) {
  fp_mode caller;
  __asm__ volatile("mrs %0, fpcr" : "=r"(caller));
  __asm__ volatile("msr fpcr, %0" : : "r"(caller | (1ull << 24))); /* FZ */
  return caller;
}
static void restore_fp_mode(fp_mode caller) { __asm__ volatile("msr fpcr, %0" : : "r"(caller)); }
#else
typedef int fp_mode;
static fp_mode flush_subnormals(void) { return 0; }
static void restore_fp_mode(fp_mode caller) { (void)caller; }
#endif

/* The message of the first Halide runtime error on this thread since the
 * last call began, for tfm_model.last_error: the cause, where the errors
 * after it follow from it ("CL: Failed to get device: 3", then "null
 * context"). */
static __thread char last_error_text[1024];
static void record_error(void *user_context, const char *message) {
  (void)user_context;
  if (last_error_text[0])
    return;
  size_t n = strlen(message);
  if (n >= sizeof last_error_text)
    n = sizeof last_error_text - 1;
  memcpy(last_error_text, message, n);
  last_error_text[n] = 0;
}

/* 0 when this CPU runs the library (cpu_check.h); else TFM_ERR_CPU, the
 * reason in last_error. */
static int cpu_ready(void) {
  const char *why = tfm_cpu_unready(&cpu_target);
  if (!why)
    return 0;
  record_error(NULL, why);
  return TFM_ERR_CPU;
}

/* Sets up a call: no error yet, this CPU checked (cpu_ready). */
static int enter_call(void) {
  last_error_text[0] = 0;
  return cpu_ready() ? TFM_ERR_CPU : 0;
}

)C" << (hasEncode(p) ? kEncoderEntries : "") << (hasDecoder(p) ? kDecoderEntries : "")
    << R"C(
static void set_num_threads(int n) { tfm_parallel_for_threads(n); }

static const char *last_error(void) { return last_error_text; }

)C";
  if (gpu)
    c << "static void release_sequence(void *kv_cache) { tfm_device_release_sequence(kv_cache); }\n\n"
      << "static int set_device(int device) { return tfm_device_select(device); }\n\n"
      << "static int measure_device_copy(uint64_t bytes, int repeats, double *gbs) {\n"
      << "  last_error_text[0] = 0;\n"
      << "  return tfm_device_copy_rate(&device_model, bytes, repeats, gbs);\n}\n\n"
      << "int " << DeviceFmaProbe::kName << "(halide_buffer_t *out);\n\n"
      << "static int measure_device_fma(int repeats, double *gflops) {\n"
      << "  last_error_text[0] = 0;\n"
      << "  return tfm_device_fma_rate(&device_model, " << DeviceFmaProbe::kName << ", "
      << DeviceFmaProbe::kThreads << ", " << std::to_string(DeviceFmaProbe::kFlopsPerCall)
      << ", repeats, gflops);\n}\n\n";
  else
    c << "static void release_sequence(void *kv_cache) { (void)kv_cache; }\n\n"
      << "static int set_device(int device) { (void)device; return TFM_ERR_NOT_GPU; }\n\n"
      << "static int measure_device_copy(uint64_t bytes, int repeats, double *gbs) {\n"
      << "  (void)bytes; (void)repeats; (void)gbs;\n  return TFM_ERR_NOT_GPU;\n}\n\n"
      << "static int measure_device_fma(int repeats, double *gflops) {\n"
      << "  (void)repeats; (void)gflops;\n  return TFM_ERR_NOT_GPU;\n}\n\n";
  c << "static const tfm_model model = {\n"
    << "  TFM_ABI_VERSION,\n"
    << "  " << cString(p.name) << ",\n"
    << "  " << cString(buildHash(p)) << ",\n"
    << "  " << cString(p.target) << ",\n"
    << "  " << cString(manifest) << ",\n"
    << "  " << p.weights.size() << ", " << p.vocabSize << ", " << p.contextLength << ", "
    << p.prefillChunk << ",\n"
    << "  " << p.kvCacheBytes << "ull, " << arena << "ull,\n"
    << (hasDecoder(p) ? "  prefill, decode, score," : "  NULL, NULL, NULL,")
    << " set_num_threads, last_error, release_sequence,\n"
    << "  set_device, measure_device_copy, measure_device_fma,\n"
    << "  " << p.hiddenSize << ", "
    << (hasEncode(p) ? "encode" : "NULL") << ",\n};\n\n"
    << "__attribute__((visibility(\"default\"))) const tfm_model *" << modelGetName(p)
    << "(void) {\n"
    << (profiled ? "  halide_set_custom_print(print_to_stderr);\n" : "")
    << "  // Halide's runtime errors (a missing GPU driver, ...) reach the caller\n"
    << "  // through last_error, instead of aborting the process.\n"
    << "  halide_set_error_handler(record_error);\n"
    << "  // Parallel loops on workers that spin between kernels\n"
    << "  // (runtime/model-lib/parallel_for.c says why), through Halide's hook.\n"
    << "  halide_set_custom_do_par_for(tfm_parallel_for);\n"
    << (gpu ? "  // A kernel's own intermediates on the device (decode attention's tile\n"
              "  // summaries) are allocated per call: from Halide's cache of freed\n"
              "  // allocations after the first, not from the driver each time.\n"
              "  halide_reuse_device_allocations(NULL, 1);\n"
            : "")
    << "  return &model;\n}\n\n"
    << "__attribute__((visibility(\"default\"))) const tfm_model *tfm_model_get(void) {\n"
    << "  return " << modelGetName(p) << "();\n}\n";
  return c.str();
}
