//===- main.cpp - dpc-run: `dpc run` without the compiler -----------------===//

#include "runtime/train/RunCommand.h"

int main(int argc, char **argv) { return dpc::runtime::runCommand(argc, argv); }
