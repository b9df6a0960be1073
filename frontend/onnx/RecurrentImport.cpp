//===- RecurrentImport.cpp - ONNX LSTM, GRU and RNN, unrolled -------------===//
//
// One matmul of the whole input by a direction's input weights (and their
// bias), then per time step the recurrent linear layer of the hidden state
// and the cell's gates, in PyTorch's order of operations:
//   LSTM (gates i, o, f, c): c' = f c + i g, h' = o tanh(c');
//   GRU (gates z, r, n; PyTorch exports linear_before_reset=1):
//     n = tanh(x_n + r (h R_n + Rb_n)), h' = n + z (h - n);
//   RNN: h' = tanh or relu(x + h R + Rb).
// A missing or zero initial state leaves the first step's recurrent terms
// out (only GRU's and RNN's recurrent bias stays).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/LstmImport.h"

#include "frontend/onnx/FoldOps.h"

#include "ir/nn/NNOps.h"

#include "llvm/ADT/StringExtras.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace dpc;
using frontend::dimsToString;
using frontend::hasInput;
using frontend::LstmImport;
using frontend::folding::findAttr;

namespace {

enum class Cell { Lstm, Gru, Rnn };

/// A recurrent node's attributes, as far as dpc reads them.
struct RecurrentAttributes {
  Cell cell = Cell::Lstm;
  int64_t gates = 4; // per direction, in W's rows: gates x hidden
  int64_t hidden = 0;
  std::string direction = "forward";
  int64_t numDirections = 1;
  int64_t layout = 0;
  bool reluRnn = false;           // RNN's activation: Relu, not Tanh
  bool linearBeforeReset = false; // GRU: r multiplies h R_n + Rb_n
};

/// What a recurrent node asks for, from its attributes; fails on what dpc
/// does not support (also the inputs sequence_lens and P).
RecurrentAttributes readAttributes(const onnx::NodeProto &node,
                                   frontend::ImportContext &context) {
  auto intAttr = [&](StringRef name, int64_t dflt) {
    const onnx::AttributeProto *a = findAttr(node, name.str());
    return a ? a->i() : dflt;
  };
  RecurrentAttributes rnn;
  const std::string &op = node.op_type();
  rnn.cell = op == "LSTM" ? Cell::Lstm : op == "GRU" ? Cell::Gru : Cell::Rnn;
  rnn.gates = rnn.cell == Cell::Lstm ? 4 : rnn.cell == Cell::Gru ? 3 : 1;
  const onnx::AttributeProto *hiddenAttr = findAttr(node, "hidden_size");
  if (!hiddenAttr || hiddenAttr->i() < 1)
    context.error("hidden_size must be given and positive");
  rnn.hidden = hiddenAttr->i();
  if (const onnx::AttributeProto *a = findAttr(node, "direction"))
    rnn.direction = a->s();
  if (rnn.direction != "forward" && rnn.direction != "reverse" &&
      rnn.direction != "bidirectional")
    context.error("direction '" + rnn.direction +
                  "' is not one of forward, reverse, bidirectional");
  rnn.numDirections = rnn.direction == "bidirectional" ? 2 : 1;
  if (findAttr(node, "clip"))
    context.error("clip is not supported");
  if (intAttr("input_forget", 0) != 0)
    context.error("input_forget=1 is not supported");
  rnn.linearBeforeReset = intAttr("linear_before_reset", 0) != 0;
  // Per direction, the activations the cell takes, PyTorch's only.
  std::vector<std::string> expected =
      rnn.cell == Cell::Lstm
          ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : rnn.cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                              : std::vector<std::string>{"Tanh"};
  if (const onnx::AttributeProto *a = findAttr(node, "activations")) {
    for (int i = 0; i < a->strings_size(); ++i) {
      const std::string &name = a->strings(i);
      if (rnn.cell == Cell::Rnn && name == "Relu" && (i == 0 || rnn.reluRnn)) {
        rnn.reluRnn = true;
        continue;
      }
      if (name != expected[i % expected.size()])
        context.error("activation '" + name + "' is not supported here (" +
                      node.op_type() +
                      " takes PyTorch's: " + llvm::join(expected, ", ") +
                      (rnn.cell == Cell::Rnn ? " or Relu" : "") + ")");
    }
  }
  if (hasInput(node, 4))
    context.error("sequence_lens is not supported (every sequence is whole)");
  if (rnn.cell == Cell::Lstm && hasInput(node, 7))
    context.error("peepholes (input P) are not supported");
  rnn.layout = intAttr("layout", 0);
  if (rnn.layout != 0 && rnn.layout != 1)
    context.error("layout must be 0 or 1");
  return rnn;
}

/// W [D, G H, I], R [D, G H, H] and B [D, 2 G H] for D directions.
void checkWeightShapes(frontend::ImportContext &context,
                       const RecurrentAttributes &rnn, int64_t width, Value w,
                       Value r, Value bias) {
  auto expect = [&](Value v, ArrayRef<int64_t> shape, StringRef what) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getShape() != shape)
      context.error(what.str() + " must be " + dimsToString(shape) + ", got " +
                    dimsToString(type.getShape()));
  };
  int64_t rows = rnn.gates * rnn.hidden;
  expect(w, {rnn.numDirections, rows, width}, "W");
  expect(r, {rnn.numDirections, rows, rnn.hidden}, "R");
  if (bias)
    expect(bias, {rnn.numDirections, 2 * rows}, "B");
}

} // namespace

/// One time step's operands and state.
struct LstmImport::Step {
  Value xg;            // the input's part, [N, G H]
  Value hg;            // h R^T + Rb [N, G H], Rb [G H] with no state, or null
  Value rd;            // the recurrent weight [G H, H]
  Value recurrentBias; // Rb [G H] (GRU, RNN), or null
  Value h, c;          // the state; null is zero
  bool reluRnn, linearBeforeReset;
};

void LstmImport::lstmStep(Step &step) {
  auto mul = [&](Value lhs, Value rhs) {
    return context.create<nn::MulOp>({lhs, rhs});
  };
  Value gates =
      step.h ? context.create<nn::AddOp>({step.xg, step.hg}) : step.xg;
  SmallVector<Value> g = split(gates, 1, 4);
  Value in = context.create<nn::SigmoidOp>(g[0]);
  Value out = context.create<nn::SigmoidOp>(g[1]);
  Value cell = context.create<nn::TanhOp>(g[3]);
  Value update = mul(in, cell);
  if (step.c) {
    Value forget = context.create<nn::SigmoidOp>(g[2]);
    update = context.create<nn::AddOp>({mul(forget, step.c), update});
  }
  step.c = update;
  step.h = mul(out, context.create<nn::TanhOp>(step.c));
}

void LstmImport::gruStep(Step &step) {
  auto add = [&](Value lhs, Value rhs) {
    return context.create<nn::AddOp>({lhs, rhs});
  };
  auto mul = [&](Value lhs, Value rhs) {
    return context.create<nn::MulOp>({lhs, rhs});
  };
  Value hg = step.hg, h = step.h;
  SmallVector<Value> xs = split(step.xg, 1, 3);
  SmallVector<Value> hs =
      hg ? split(hg, cast<RankedTensorType>(hg.getType()).getRank() - 1, 3)
         : SmallVector<Value>();
  Value z = context.create<nn::SigmoidOp>(hg ? add(xs[0], hs[0]) : xs[0]);
  Value reset = context.create<nn::SigmoidOp>(hg ? add(xs[1], hs[1]) : xs[1]);
  Value candidate = xs[2];
  if (step.linearBeforeReset) {
    if (hg)
      candidate = add(candidate, mul(reset, hs[2]));
  } else {
    // (r h) R_n^T + Rb_n: the last third of R and of Rb.
    if (h)
      candidate = add(candidate, context.create<nn::LinearOp>(
                                     {mul(reset, h), split(step.rd, 0, 3)[2]}));
    if (step.recurrentBias)
      candidate = add(candidate, split(step.recurrentBias, 0, 3)[2]);
  }
  Value n = context.create<nn::TanhOp>(candidate);
  // h' = n + z (h - n); with no state, n - z n.
  OpBuilder &b = context.opBuilder();
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value minusOne = context.create<nn::ConstantOp>(
      {}, {b.getNamedAttr("value", DenseElementsAttr::get(scalar, -1.f))});
  Value negated = mul(n, minusOne);
  step.h = add(n, mul(z, h ? add(h, negated) : negated));
}

void LstmImport::rnnStep(Step &step) {
  Value pre = step.hg ? context.create<nn::AddOp>({step.xg, step.hg}) : step.xg;
  step.h = step.reluRnn ? context.create<nn::ReluOp>(pre)
                        : context.create<nn::TanhOp>(pre);
}

void LstmImport::importRecurrent(const onnx::NodeProto &node) {
  OpBuilder &b = context.opBuilder();
  RecurrentAttributes rnn = readAttributes(node, context);
  int64_t hidden = rnn.hidden, numDirections = rnn.numDirections,
          layout = rnn.layout, gates = rnn.gates;
  // Sequence first ([T, N, I], the default) has the batch in dim 1.
  int64_t batchDim = layout == 0 ? 1 : 0;

  Value x = batchFirstInput(node, 0, batchDim);
  if (!x)
    context.error("missing input X");
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() != 3 || xType.isDynamicDim(1) || xType.isDynamicDim(2))
    context.error("X must be a rank-3 sequence of static length and width");
  int64_t steps = xType.getDimSize(1), width = xType.getDimSize(2);
  Value w = context.valueOf(node.input(1)), r = context.valueOf(node.input(2));
  Value bias = hasInput(node, 3) ? context.valueOf(node.input(3)) : Value();
  checkWeightShapes(context, rnn, width, w, r, bias);
  // Initial states, batch first: [N, directions, H], or null for zeros.
  Value h0 = batchFirstInput(node, 5, batchDim);
  Value c0 =
      rnn.cell == Cell::Lstm ? batchFirstInput(node, 6, batchDim) : Value();

  auto named = [&](StringRef name, Attribute value) {
    return b.getNamedAttr(name, value);
  };
  auto add = [&](Value lhs, Value rhs) {
    return context.create<nn::AddOp>({lhs, rhs});
  };
  SmallVector<Value> ws = split(w, 0, numDirections);
  SmallVector<Value> rs = split(r, 0, numDirections);
  SmallVector<Value> bs =
      bias ? split(bias, 0, numDirections) : SmallVector<Value>();
  SmallVector<Value> h0s =
      h0 ? split(h0, 1, numDirections) : SmallVector<Value>();
  SmallVector<Value> c0s =
      c0 ? split(c0, 1, numDirections) : SmallVector<Value>();
  SmallVector<Value> outputs, lastH, lastC;
  for (int64_t d = 0; d < numDirections; ++d) {
    // This direction's weights [G H, I] and [G H, H], gates in ONNX's order.
    Value wd = reshape(ws[d], {gates * hidden, width});
    Value rd = reshape(rs[d], {gates * hidden, hidden});
    // The input's part of every step at once: [N, T, G H].
    Value wt = context.create<nn::TransposeOp>(
        wd, {named("permutation", b.getDenseI64ArrayAttr({1, 0}))});
    Value projected = context.create<nn::MatmulOp>({x, wt});
    // The recurrent bias [G H]: LSTM adds it to the input's, once; GRU and
    // RNN add it to each step's recurrent product, as PyTorch does.
    Value recurrentBias;
    if (bias) {
      SmallVector<Value> halves =
          split(reshape(bs[d], {1, 2 * gates * hidden}), 1, 2);
      Value inputBias = reshape(halves[0], {gates * hidden});
      recurrentBias = reshape(halves[1], {gates * hidden});
      if (rnn.cell == Cell::Lstm) {
        inputBias = add(halves[0], halves[1]);
        inputBias = reshape(inputBias, {gates * hidden});
        recurrentBias = Value();
      }
      projected = add(projected, inputBias);
    }
    Value h = h0 ? reshape(h0s[d], {0, hidden}) : Value();
    Value c = c0 ? reshape(c0s[d], {0, hidden}) : Value();
    SmallVector<Value> inputs = split(projected, 1, steps);
    SmallVector<Value> ys(steps);
    Step step{Value(), Value(), rd,          recurrentBias,
              h,       c,       rnn.reluRnn, rnn.linearBeforeReset};
    for (int64_t k = 0; k < steps; ++k) {
      int64_t t = d == 1 || rnn.direction == "reverse" ? steps - 1 - k : k;
      step.xg = reshape(inputs[t], {0, gates * hidden});
      // h R^T (+ Rb): [N, G H]; with no state, Rb alone ([G H]) or nothing.
      step.hg =
          step.h
              ? (recurrentBias
                     ? context.create<nn::LinearOp>({step.h, rd, recurrentBias})
                     : context.create<nn::LinearOp>({step.h, rd}))
              : recurrentBias;
      if (rnn.cell == Cell::Lstm)
        lstmStep(step);
      else if (rnn.cell == Cell::Gru)
        gruStep(step);
      else
        rnnStep(step);
      h = step.h;
      c = step.c;
      ys[t] = reshape(h, {0, 1, 1, hidden});
    }
    outputs.push_back(concat(ys, 1));
    lastH.push_back(reshape(h, {0, 1, hidden}));
    if (c)
      lastC.push_back(reshape(c, {0, 1, hidden}));
  }
  // Y is [T, directions, N, H] sequence first, [N, T, directions, H] batch
  // first; Y_h and Y_c are [directions, N, H] and [N, directions, H].
  define(node, 0, concat(outputs, 2), layout == 0 ? 2 : 0);
  define(node, 1, concat(lastH, 1), batchDim);
  if (!lastC.empty())
    define(node, 2, concat(lastC, 1), batchDim);
}
