//===- Version.cpp - Which tfmc this is -----------------------------------===//
#include "tfm/common/Version.h"

#include "Version.inc" // written at build time by cmake/WriteVersion.cmake

const char *tfm::versionText() { return TFM_VERSION_TEXT; }
