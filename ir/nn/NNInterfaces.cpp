//===- NNInterfaces.cpp - nn op interfaces --------------------------------===//

#include "ir/nn/NNInterfaces.h"

#include "ir/nn/NNInterfaces.cpp.inc"
