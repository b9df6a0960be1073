//===- Help.h - dpc's --help and --version ----------------------*- C++ -*-===//
//
// dpc prints its own help: the commands, and each command's options grouped
// with a one-line description, without LLVM's internal options. The help
// of the commands parsed with llvm::cl (compile, calibrate) is made from
// their registered options and categories, so it cannot drift from them;
// the other commands keep their usage next to their parser. The README's
// command reference is this output, verbatim (a lit test compares them).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_HELP_H
#define DPC_TOOLS_DPC_HELP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace dpc {

/// `dpc --help`: the commands.
void printCommandsHelp(llvm::raw_ostream &os);

/// `dpc --version`: dpc's version and the plan format version.
void printVersion(llvm::raw_ostream &os);

/// `dpc COMMAND --help` for a command parsed with llvm::cl: `usage` and
/// `summary` lines, then, per category of `groups`, the options of `command`
/// in it, sorted by name. An option of `command` in none of the groups is
/// listed under "Other" (so that one cannot go missing).
void printSubCommandHelp(llvm::raw_ostream &os, llvm::cl::SubCommand &command,
                         llvm::StringRef usage, llvm::StringRef summary,
                         llvm::ArrayRef<llvm::cl::OptionCategory *> groups);

} // namespace dpc

#endif // DPC_TOOLS_DPC_HELP_H
