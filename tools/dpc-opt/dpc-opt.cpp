//===- dpc-opt.cpp - mlir-opt with dpc's dialects and passes --------------===//

#include "tools/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dpc::registerAllDialects(registry);
  dpc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dpc optimizer driver\n", registry));
}
