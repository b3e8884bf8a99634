//===- Version.h - Which tfmc this is ---------------------------*- C++ -*-===//
#ifndef TFM_COMMON_VERSION_H
#define TFM_COMMON_VERSION_H

namespace tfm {

/// "tfmc 0.1.0 (<commit>)": the project's version and the commit it was
/// built from, for every tool's --version and tfm_version().
const char *versionText();

} // namespace tfm

#endif // TFM_COMMON_VERSION_H
