//===- PrivateFiles.cpp - Folders and files only this user can change -----===//
#include "tfm/common/Failure.h"
#include "tfm/common/PrivateFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using tfm::failure;

namespace {

llvm::Error refuse(llvm::StringRef path, llvm::StringRef what, const std::string &why) {
  return failure(
      (path + ": refusing the " + what + ": " + why +
       "; a cache another user can change could run their code in this process (remove it, "
       "or name a folder of your own with --cache-dir / --kernel-cache)")
          .str());
}

/// The ownership and mode of one inode, as checkPrivate wants them.
llvm::Error checkStatus(llvm::StringRef path, llvm::StringRef what, const struct stat &s,
                        llvm::StringRef kind) {
  if (s.st_uid != ::geteuid())
    return refuse(path, what,
                  (kind + " is owned by uid " + llvm::Twine(s.st_uid) + ", expected this user (uid " +
                   llvm::Twine(::geteuid()) + ")")
                      .str());
  if (s.st_mode & (S_IWGRP | S_IWOTH)) {
    std::string mode;
    llvm::raw_string_ostream(mode) << llvm::format("%04o", s.st_mode & 07777);
    return refuse(path, what,
                  (kind + " has mode " + mode + ", writable by its " +
                   ((s.st_mode & S_IWOTH) ? "group or others" : "group") +
                   "; expected no write permission but the owner's")
                      .str());
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error tfm::checkPrivate(llvm::StringRef path, llvm::StringRef what) {
  std::string name = path.str();
  struct stat s;
  if (::lstat(name.c_str(), &s) != 0)
    return failure((path + ": cannot check the " + what + ": " +
                                    std::strerror(errno))
                                       .str());
  if (S_ISLNK(s.st_mode)) {
    // A link's own mode is always 0777 and means nothing: its owner does.
    s.st_mode &= ~static_cast<mode_t>(S_IWGRP | S_IWOTH);
    if (llvm::Error e = checkStatus(path, what, s, "the link"))
      return e;
    if (::stat(name.c_str(), &s) != 0)
      return failure((path + ": cannot check what the " + what + " links to: " +
                                      std::strerror(errno))
                                         .str());
    return checkStatus(path, what, s, "what it links to");
  }
  return checkStatus(path, what, s, "it");
}

llvm::Error tfm::makePrivateDir(llvm::StringRef dir, llvm::StringRef what) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir, /*IgnoreExisting=*/true,
                                                             llvm::sys::fs::owner_all))
    return failure((dir + ": cannot create the " + what + ": " + ec.message())
                                       .str());
  return checkPrivate(dir, what);
}
