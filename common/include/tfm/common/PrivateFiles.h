//===- PrivateFiles.h - Folders and files only this user can change -*- C++ -*-===//
//
// tfmc's caches hold code that runs: compiled libraries that tfm-run loads,
// kernel objects that tfmc links into libraries. A cache folder or entry
// another user can write is a way to run code in every process of the
// user who trusts it. So cache folders are created 0700, and every cache
// folder and entry is checked before use, as ssh checks a key file: owned
// by this user, writable by no one else.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_PRIVATEFILES_H
#define TFM_COMMON_PRIVATEFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace tfm {

/// Refuses `path` unless this user owns it and neither its group nor
/// others may write it; a symbolic link is judged by what it names, and
/// must be this user's too. The message names `what` ("model cache
/// entry"), the owner or mode found and what was expected.
llvm::Error checkPrivate(llvm::StringRef path, llvm::StringRef what);

/// Creates the folder `dir` and its missing parents, each with mode 0700,
/// then checks it (checkPrivate).
llvm::Error makePrivateDir(llvm::StringRef dir, llvm::StringRef what);

} // namespace tfm

#endif // TFM_COMMON_PRIVATEFILES_H
