//===- LastError.cpp - tfm.h: versions and the last error -----------------===//
#include "ApiHandles.h"

#include "tfm/common/Version.h"

namespace {

/// Per thread, as errno: one thread's failure never shows in another's.
thread_local std::string lastError;

} // namespace

int tfm::api::fail(std::string message) {
  lastError = std::move(message);
  return -1;
}

int tfm::api::fail(llvm::Error error) { return fail(llvm::toString(std::move(error))); }

int tfm::api::failNull(const char *function, const char *argument) {
  return fail(std::string(function) + ": " + argument + " is NULL");
}

extern "C" int tfm_api_version(void) { return TFM_API_VERSION; }

extern "C" const char *tfm_version(void) { return tfm::versionText(); }

extern "C" const char *tfm_last_error(void) { return lastError.c_str(); }
