//===- ApiHandles.h - What tfm.h's opaque handles hold ----------*- C++ -*-===//
//
// The C API (include/tfm.h) is a thin layer over the runtime's C++ classes:
// each handle owns the objects tfm-run uses for the same job, and each
// entry point turns an llvm::Error (or a C++ exception) into -1 and the
// thread's last error.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_API_APIHANDLES_H
#define TFM_RUNTIME_API_APIHANDLES_H

#include "tfm.h"

#include "tfm/runtime/LoadedModel.h"
#include "tfm/runtime/Sampler.h"

#include "llvm/Support/Error.h"

#include <exception>
#include <memory>
#include <string>

struct tfm_lm {
  std::unique_ptr<tfm::rt::LoadedModel> model; // as tfm-run holds it
  std::string manifestJson;
};

struct tfm_seq {
  tfm_lm *lm;
  std::unique_ptr<tfm::rt::Session> session;
};

struct tfm_sampler {
  tfm::rt::Sampler sampler;
};

namespace tfm::api {

/// Records `message` as this thread's last error; returns -1.
int fail(std::string message);
/// Records `error` as this thread's last error; returns -1.
int fail(llvm::Error error);
/// Fails naming `function` and the argument that is NULL.
int failNull(const char *function, const char *argument);

/// Runs `body`, which returns 0 or -1, turning an exception into -1 and the
/// last error: no C++ exception crosses the C interface.
template <typename Body> auto guarded(const char *function, Body body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(std::string(function) + ": out of memory");
  } catch (const std::exception &e) {
    return fail(std::string(function) + ": " + e.what());
  }
}

} // namespace tfm::api

#endif // TFM_RUNTIME_API_APIHANDLES_H
